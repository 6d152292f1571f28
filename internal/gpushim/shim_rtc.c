//go:build cuda || hip || musa

// shim_rtc.c - the run-time compiler (NVRTC names; hipRTC through the HIP
// mapping), loaded with dlopen on first use so that a missing compiler only
// matters when a kernel needs it.
#include <stdlib.h>

#include "shim_impl.h"

#if defined(TN_RTC_NONE)
// The vendor has no run-time compiler the shim can use (TN_RTC_NONE says
// why): every entry point fails with that reason.
static tn_status no_rtc(const char *call) { return tn_shim(call, "TERNION_NO_RTC", TN_RTC_NONE, TN_HINT_NOT_SUPPORTED); }

tn_status tn_rtc_open(int32_t *major, int32_t *minor, const char **lib) {
    *major = *minor = 0;
    *lib = NULL;
    return no_rtc("tn_rtc_open");
}

tn_status tn_rtc_supports(int32_t arch, int32_t *yes, int32_t *newest) {
    (void)arch;
    *yes = *newest = 0;
    return no_rtc("tn_rtc_supports");
}

tn_status tn_rtc_compile(const char *src, int32_t nheaders, const char *const *headers, const char *const *names,
                         int32_t nopts, const char *const *opts, int32_t cubin, void **out, uint64_t *out_size,
                         char **log) {
    (void)src, (void)nheaders, (void)headers, (void)names, (void)nopts, (void)opts, (void)cubin;
    *out = NULL;
    *out_size = 0;
    *log = NULL;
    return no_rtc("tn_rtc_compile");
}
#else

#define TN_RTC_FUNCS(X)                                                                                        \
    X(nvrtcVersion) X(nvrtcGetErrorString) X(nvrtcCreateProgram) X(nvrtcCompileProgram) X(nvrtcDestroyProgram) \
    X(nvrtcGetProgramLogSize) X(nvrtcGetProgramLog) X(nvrtcGetPTXSize) X(nvrtcGetPTX)
// Optional: cubin output (NVRTC 11.1+) and the supported-arch list (11.2+).
// hipRTC has neither: its one output, which the mapping header maps the PTX
// getters to, is already the device's code object (TN_RTC_CODE_ONLY).
#if defined(TN_RTC_CODE_ONLY)
#define TN_RTC_OPT_FUNCS(X)
#else
#define TN_RTC_OPT_FUNCS(X)                                                                                    \
    X(nvrtcGetCUBINSize) X(nvrtcGetCUBIN) X(nvrtcGetNumSupportedArchs) X(nvrtcGetSupportedArchs)
#endif

#define TN_RTC_DEFINE_PTR(f) static __typeof__(&f) TN_PTR(f);
TN_RTC_FUNCS(TN_RTC_DEFINE_PTR)
TN_RTC_OPT_FUNCS(TN_RTC_DEFINE_PTR)

static void *g_rtc;
static const char *g_rtc_lib;
static char g_rtc_msg[1024]; // why no run-time compiler could be loaded

static tn_status rtc_status(const char *call, nvrtcResult r) {
    tn_status s = {TN_SRC_RTC, (int32_t)r, 0, TN_HINT_NONE, call, NULL, NULL};
    if (TN_PTR(nvrtcGetErrorString)) s.name = TN_PTR(nvrtcGetErrorString)(r);
    return s;
}

#define TN_RTC(fn, args)                                                                                       \
    do {                                                                                                       \
        nvrtcResult r_ = TN_PTR(fn) args;                                                                      \
        if (r_ != NVRTC_SUCCESS) return rtc_status(TN_STR(fn), r_);                                            \
    } while (0)

tn_status tn_rtc_open(int32_t *major, int32_t *minor, const char **lib) {
    *major = 0;
    *minor = 0;
    *lib = NULL;
    if (g_rtc == NULL) {
        static const char *const libs[] = {TN_RTC_LIBS};
        static const tn_sym req[] = {TN_RTC_FUNCS(TN_SYM)};
        static const tn_sym opt[] = {TN_RTC_OPT_FUNCS(TN_SYM){NULL, NULL, 0}}; // a last entry: never empty
        int all_opt = 0;
        g_rtc = tn_load_lib(libs, TN_LEN(libs), req, TN_LEN(req), opt, TN_LEN(opt) - 1, &all_opt, &g_rtc_lib,
                            g_rtc_msg, sizeof g_rtc_msg);
        if (g_rtc == NULL) return tn_shim("dlopen", "TERNION_NO_RTC", g_rtc_msg, TN_HINT_NOT_SUPPORTED);
    }
    int ma = 0, mi = 0;
    TN_RTC(nvrtcVersion, (&ma, &mi));
    *major = ma;
    *minor = mi;
    *lib = g_rtc_lib;
    return tn_ok();
}

tn_status tn_rtc_supports(int32_t arch, int32_t *yes, int32_t *newest) {
    *yes = 1; // without the arch list, assume so and let compilation report otherwise
    *newest = 0;
    if (g_rtc == NULL) return tn_shim("nvrtcGetSupportedArchs", "TERNION_NO_RTC", "run-time compiler not loaded", TN_HINT_NOT_SUPPORTED);
#if defined(TN_RTC_CODE_ONLY)
    (void)arch;
#else
    if (!TN_PTR(nvrtcGetNumSupportedArchs) || !TN_PTR(nvrtcGetSupportedArchs)) return tn_ok();
    int n = 0;
    TN_RTC(nvrtcGetNumSupportedArchs, (&n));
    if (n <= 0 || n > 256) return tn_ok();
    int archs[256];
    TN_RTC(nvrtcGetSupportedArchs, (archs));
    *yes = 0;
    for (int i = 0; i < n; i++) {
        if (archs[i] == arch) *yes = 1;
        if (archs[i] > *newest) *newest = archs[i];
    }
#endif
    return tn_ok();
}

// program_log copies the compile log into malloc'd memory (NULL when empty).
static char *program_log(nvrtcProgram prog) {
    size_t n = 0;
    if (TN_PTR(nvrtcGetProgramLogSize)(prog, &n) != NVRTC_SUCCESS || n <= 1) return NULL;
    char *log = malloc(n);
    if (log != NULL && TN_PTR(nvrtcGetProgramLog)(prog, log) != NVRTC_SUCCESS) {
        free(log);
        log = NULL;
    }
    return log;
}

// program_code copies the compiled cubin or PTX (hipRTC: the code object)
// into malloc'd memory.
static tn_status program_code(nvrtcProgram prog, int32_t cubin, void **out, uint64_t *out_size) {
    size_t n = 0;
    nvrtcResult r;
#if defined(TN_RTC_CODE_ONLY)
    (void)cubin; // tn_rtc_compile refused it
#else
    if (cubin) {
        TN_RTC(nvrtcGetCUBINSize, (prog, &n));
    } else
#endif
    {
        TN_RTC(nvrtcGetPTXSize, (prog, &n));
    }
    char *code = malloc(n > 0 ? n : 1);
    if (code == NULL) return tn_shim("malloc", "TERNION_OUT_OF_MEMORY", "no host memory for the compiled code", TN_HINT_NONE);
#if !defined(TN_RTC_CODE_ONLY)
    if (cubin) {
        r = TN_PTR(nvrtcGetCUBIN)(prog, code);
    } else
#endif
    {
        r = TN_PTR(nvrtcGetPTX)(prog, code);
    }
    if (r != NVRTC_SUCCESS) {
        free(code);
        return rtc_status(cubin ? TN_STR(nvrtcGetCUBIN) : TN_STR(nvrtcGetPTX), r);
    }
    *out = code;
    *out_size = n;
    return tn_ok();
}

tn_status tn_rtc_compile(const char *src, int32_t nheaders, const char *const *headers, const char *const *names,
                         int32_t nopts, const char *const *opts, int32_t cubin, void **out, uint64_t *out_size,
                         char **log) {
    *out = NULL;
    *out_size = 0;
    *log = NULL;
    if (g_rtc == NULL) return tn_shim("nvrtcCreateProgram", "TERNION_NO_RTC", "run-time compiler not loaded", TN_HINT_NOT_SUPPORTED);
#if defined(TN_RTC_CODE_ONLY)
    if (cubin) {
#else
    if (cubin && (!TN_PTR(nvrtcGetCUBINSize) || !TN_PTR(nvrtcGetCUBIN))) {
#endif
        return tn_shim("nvrtcGetCUBIN", "TERNION_NOT_LOADED", "this run-time compiler cannot emit cubin", TN_HINT_NOT_SUPPORTED);
    }
    nvrtcProgram prog = NULL;
    // (hipRTC declares these arrays without the inner const; neither library writes to them.)
    TN_RTC(nvrtcCreateProgram, (&prog, src, "ternion_kernels.cu", nheaders, (const char **)headers, (const char **)names));
    nvrtcResult r = TN_PTR(nvrtcCompileProgram)(prog, nopts, (const char **)opts);
    *log = program_log(prog);
    tn_status st = r == NVRTC_SUCCESS ? program_code(prog, cubin, out, out_size) : rtc_status("nvrtcCompileProgram", r);
    nvrtcResult d = TN_PTR(nvrtcDestroyProgram)(&prog);
    if (st.src == TN_OK && d != NVRTC_SUCCESS) {
        free(*out);
        *out = NULL;
        *out_size = 0;
        return rtc_status("nvrtcDestroyProgram", d);
    }
    return st;
}

#endif // TN_RTC_NONE

void tn_free_host_copy(void *p) { free(p); }
