//go:build cuda || hip || musa

// shim.h - the C API of ternion's GPU shim, as Go sees it.
//
// The shim is written once against CUDA names (shim_*.c) and compiled per
// vendor through a name-mapping header (cuda/vendor_cuda.h,
// hip/vendor_hip.h, musa/vendor_musa.h). This header is vendor-neutral: it
// uses only fixed-width C types, so the cgo preambles never see a vendor SDK
// header.
//
// Every function sets the device it is given inside the same call and returns
// a tn_status by value; outputs go through pointer parameters. No function
// keeps a pointer it was given after it returns.
#pragma once

#include <stddef.h>
#include <stdint.h>

// Where a status came from (tn_status.src).
enum {
    TN_OK = 0,          // success
    TN_SRC_RUNTIME = 1, // runtime API (cudaError_t, hipError_t, musaError_t)
    TN_SRC_DRIVER = 2,  // driver API (CUresult; hipError_t on HIP, MUresult)
    TN_SRC_BLAS = 3,    // BLAS library (cublasStatus_t, rocblas_status, mublasStatus_t); name filled in by Go
    TN_SRC_RTC = 4,     // run-time compiler (nvrtcResult, hiprtcResult)
    TN_SRC_SHIM = 5,    // the shim's own check
};

// Classification the C side knows better than the status code (tn_status.hint).
enum {
    TN_HINT_NONE = 0,
    TN_HINT_NO_DRIVER = 1,    // the driver library could not be loaded
    TN_HINT_GRAPH_UPDATE = 2, // graph exec update failed; aux holds the result code
    TN_HINT_NOT_SUPPORTED = 3,  // the vendor, driver or build lacks the operation
    TN_HINT_INVALID_VALUE = 4,  // the shim rejected an argument
};

// tn_status is the outcome of one shim call. The strings are static (or, for
// the driver-load message, owned by the shim until the next tn_open).
typedef struct {
    int32_t src;      // TN_SRC_*; TN_OK on success
    int32_t code;     // vendor status code
    int32_t aux;      // extra code (the graph exec update result)
    int32_t hint;     // TN_HINT_*
    const char *call; // vendor function that failed
    const char *name; // status name, NULL when the vendor has no name function
    const char *msg;  // status description, may be NULL
} tn_status;

// Memcpy directions.
enum { TN_H2D = 1, TN_D2H = 2, TN_D2D = 3 };

// Element types and compute types: the numbers of vendorapi.DataType and
// vendorapi.ComputeType.
enum { TN_F32 = 1, TN_F16 = 2, TN_BF16 = 3 };
enum { TN_COMPUTE_32F = 1, TN_COMPUTE_16F = 2 };
enum { TN_GEMM_ONE = 0, TN_GEMM_STRIDED = 1, TN_GEMM_BATCHED = 2 };

// The most devices the shim tracks.
#define TN_MAX_DEVICES 64
// The most kernel arguments one launch passes: vendorapi.MaxArgBytes (4096)
// of 4-byte arguments.
#define TN_MAX_ARGS 1024

// tn_props is one device's properties.
typedef struct {
    char name[256];
    char arch_name[256]; // the vendor's own arch name where it reports one (HIP: gcnArchName), else empty
    char pci_bus_id[32];
    int32_t major, minor, sms, warp_size, integrated;
    int32_t vmm; // driver reports virtual memory management support
    uint64_t smem_per_block, smem_per_block_optin, total_mem;
    uint64_t vmm_granularity, vmm_min_granularity; // recommended and minimum mapping granularity
} tn_props;

// tn_gemm is one (batched) gemm, column-major, as cublasGemmEx takes it.
typedef struct {
    int32_t transa, transb, m, n, k;
    int32_t atype, btype, ctype, compute;
    int32_t lda, ldb, ldc, batch;
    uint32_t alpha_bits, beta_bits; // float bits, or half bits in the low 16 when compute is 16F
    uint64_t a, b, c;               // device pointers (arrays of pointers for TN_GEMM_BATCHED)
    int64_t stride_a, stride_b, stride_c;
} tn_gemm;

// Loader and devices (shim_load.c).
tn_status tn_open(int32_t *count, int32_t *driver_version, int32_t *runtime_version);
tn_status tn_props_get(int32_t dev, tn_props *out);
tn_status tn_mem_info(int32_t dev, uint64_t *free_bytes, uint64_t *total_bytes);
tn_status tn_can_access_peer(int32_t dev, int32_t peer, int32_t *out);
tn_status tn_peer_enable(int32_t dev, int32_t peer);
tn_status tn_peer_disable(int32_t dev, int32_t peer);
tn_status tn_device_sync(int32_t dev);

// Memory (shim_mem.c). Synchronous copies complete before they return.
tn_status tn_malloc(int32_t dev, uint64_t size, uint64_t *out);
// tn_malloc_managed sets *fallback when the vendor has no managed memory and
// plain device memory was allocated instead (HIP, as the seed does).
tn_status tn_malloc_managed(int32_t dev, uint64_t size, uint64_t *out, int32_t *fallback);
tn_status tn_free(int32_t dev, uint64_t p);
tn_status tn_host_alloc(uint64_t size, uintptr_t *out);
tn_status tn_host_free(uintptr_t p);
tn_status tn_host_register(uintptr_t p, uint64_t size);
tn_status tn_host_unregister(uintptr_t p);
// Stream 0 in tn_memset, tn_copy_async and tn_copy_peer means: queue on the
// device's legacy stream and wait for it, i.e. the synchronous form.
tn_status tn_memset(int32_t dev, uint64_t stream, uint64_t p, int32_t value, uint64_t size);
tn_status tn_copy_htod(int32_t dev, uint64_t dst, const void *src, uint64_t size);
tn_status tn_copy_dtoh(int32_t dev, void *dst, uint64_t src, uint64_t size);
tn_status tn_copy_async(int32_t dev, uint64_t stream, uint64_t dst, uint64_t src, uint64_t size, int32_t dir);
tn_status tn_copy_peer(uint64_t stream, int32_t sdev, int32_t dst_dev, uint64_t dst, int32_t src_dev, uint64_t src,
                       uint64_t size);
tn_status tn_copy_2d_async(int32_t dev, uint64_t stream, uint64_t dst, uint64_t dpitch, uint64_t src,
                           uint64_t spitch, uint64_t width, uint64_t height);
tn_status tn_copy_2d_peer(uint64_t stream, int32_t sdev, int32_t dst_dev, uint64_t dst, uint64_t dpitch, int32_t src_dev,
                          uint64_t src, uint64_t spitch, uint64_t width, uint64_t height);

// Virtual memory (shim_mem.c).
tn_status tn_vmm_reserve(int32_t dev, uint64_t size, uint64_t alignment, uint64_t *out);
tn_status tn_vmm_free(int32_t dev, uint64_t base, uint64_t size);
tn_status tn_vmm_create(int32_t dev, uint64_t size, uint64_t *out);
tn_status tn_vmm_release(int32_t dev, uint64_t handle);
tn_status tn_vmm_map(int32_t dev, uint64_t p, uint64_t size, uint64_t handle);
tn_status tn_vmm_set_access(int32_t dev, uint64_t p, uint64_t size);
tn_status tn_vmm_unmap(int32_t dev, uint64_t p, uint64_t size);

// Streams, events and graphs (shim_exec.c).
tn_status tn_stream_create(int32_t dev, uint64_t *out);
tn_status tn_stream_destroy(int32_t dev, uint64_t s);
tn_status tn_stream_sync(int32_t dev, uint64_t s);
tn_status tn_stream_query(int32_t dev, uint64_t s);
tn_status tn_stream_wait_event(int32_t dev, uint64_t s, uint64_t e);
tn_status tn_event_create(int32_t dev, int32_t timing, uint64_t *out);
tn_status tn_event_destroy(int32_t dev, uint64_t e);
tn_status tn_event_record(int32_t dev, uint64_t e, uint64_t s);
tn_status tn_event_sync(int32_t dev, uint64_t e);
tn_status tn_event_query(int32_t dev, uint64_t e);
tn_status tn_event_elapsed(int32_t dev, uint64_t start, uint64_t end, float *ms);
tn_status tn_capture_begin(int32_t dev, uint64_t s);
tn_status tn_capture_end(int32_t dev, uint64_t s, uint64_t *graph);
tn_status tn_capture_status(int32_t dev, uint64_t s, int32_t *status);
tn_status tn_graph_instantiate(int32_t dev, uint64_t graph, uint64_t *exec);
tn_status tn_graph_exec_update(int32_t dev, uint64_t exec, uint64_t graph);
tn_status tn_graph_launch(int32_t dev, uint64_t exec, uint64_t s);
tn_status tn_graph_destroy(int32_t dev, uint64_t graph);
tn_status tn_graph_exec_destroy(int32_t dev, uint64_t exec);

// Kernels (shim_kernel.c).
tn_status tn_module_load(int32_t dev, const void *image, uint64_t *out);
tn_status tn_module_unload(int32_t dev, uint64_t mod);
tn_status tn_module_function(int32_t dev, uint64_t mod, const char *name, uint64_t *out);
tn_status tn_func_set_max_dyn_smem(int32_t dev, uint64_t f, int32_t bytes);
tn_status tn_func_set_carveout(int32_t dev, uint64_t f, int32_t percent);
tn_status tn_launch(int32_t dev, uint64_t f, const uint32_t *dims, uint32_t smem, uint64_t s, const uint8_t *args,
                    const uint32_t *offsets, int32_t nargs, int32_t pdl);
// tn_pdl_available says whether tn_launch can honour pdl (1) or launches
// plainly (0): CUDA 12 headers and a driver with cuLaunchKernelEx.
int32_t tn_pdl_available(void);
// Benchmarks only (shim_bench.c, built with the ternion_bench tag): the
// floor of a launch, and making dev and its driver context current.
tn_status tn_launch_raw(uint64_t f, uint64_t s, const uint8_t *args, const uint32_t *offsets, int32_t nargs);
tn_status tn_bind_device(int32_t dev);

// BLAS (shim_blas.c). tn_blas_open loads the BLAS library where it is opened
// at run time (rocBLAS) and reports its version; *lib names the library file
// (NULL when linked) and *initialized is set when the shim called the
// library's initialization workaround (rocblas_initialize). Call it before the
// other tn_blas_ functions.
tn_status tn_blas_open(int32_t *major, int32_t *minor, int32_t *patch, int32_t *initialized, const char **lib);
tn_status tn_blas_create(int32_t dev, uint64_t s, uint64_t *out);
tn_status tn_blas_destroy(int32_t dev, uint64_t h);
tn_status tn_blas_set_stream(int32_t dev, uint64_t h, uint64_t s);
tn_status tn_blas_set_workspace(int32_t dev, uint64_t h, uint64_t p, uint64_t size);
tn_status tn_gemm_run(int32_t dev, uint64_t h, const tn_gemm *g, int32_t mode);

// Run-time compiler (shim_rtc.c). tn_rtc_compile allocates *out and *log with
// malloc; the caller frees both with tn_free_host_copy. cubin asks for NVRTC's
// machine code; 0 gives the compiler's default output (PTX for NVRTC, the code
// object for hipRTC, whose only output it is). A vendor without a run-time
// compiler (MUSA) fails tn_rtc_open with TN_HINT_NOT_SUPPORTED and says why.
tn_status tn_rtc_open(int32_t *major, int32_t *minor, const char **lib);
tn_status tn_rtc_supports(int32_t arch, int32_t *yes, int32_t *newest);
tn_status tn_rtc_compile(const char *src, int32_t nheaders, const char *const *headers, const char *const *names,
                         int32_t nopts, const char *const *opts, int32_t cubin, void **out, uint64_t *out_size,
                         char **log);
void tn_free_host_copy(void *p);
