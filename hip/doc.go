// Package hip registers ternion's AMD vendor, "hip", when built with
// -tags hip: import it for its side effect (cmd/ternion does) and open it with
// vendorapi.Open("hip").
//
// The driver is internal/gpushim, the shim shared with cuda and musa: its C
// side is written against CUDA names and this package holds the HIP
// name-mapping header, vendor_hip.h (plus rocblas_api.h, the few rocBLAS
// declarations the shim needs, since Debian ships no rocBLAS headers).
//
// Libraries, all opened at run time (nothing of ROCm is linked):
//   - libamdhip64 (runtime and module API in one library): dlopened by Open,
//     which resolves every function the shim calls. Without it Open returns
//     an error matching vendorapi.ErrNoDriver whose message starts with
//     "libamdhip64.so"; with it and no GPU, Open succeeds with 0 devices.
//   - rocBLAS (librocblas.so, .so.5/.4/.3/.0): dlopened on the first BLAS
//     call. Without it BLASCreate and BLASVersion fail with ErrNoDriver
//     naming librocblas; everything else works. Before rocBLAS 4 the shim
//     calls rocblas_initialize first, the seed's workaround for a rocBLAS bug
//     with several GPUs.
//   - hipRTC (libhiprtc.so, or libamdhip64 itself up to ROCm 5.2): dlopened
//     when a kernel must be compiled at run time.
//
// Device init follows the seed: the arch comes from gcnArchName
// ("gfx90a:sramecc+:xnack-", reported as Props.ArchName) through
// arch.ResolveGfx, falling back to major.minor with a warning; an
// HSA_OVERRIDE_GFX_VERSION or HSA_OVERRIDE_GFX_VERSION_<n> in effect is
// reported in Props.ArchOverride and the log (ROCm applies it: gcnArchName
// already names the overridden target; <n> is ROCm's GPU index, which
// HIP_VISIBLE_DEVICES can make differ from the HIP device index); the wave
// size is the device's (64 on GCN and CDNA, 32 on RDNA); there is no opt-in
// shared memory (Props.SharedMemPerBlockOptin = SharedMemPerBlock).
//
// Differences from CUDA the shim keeps: VMM is off unless TERNION_HIP_VMM=1
// (as ggml builds HIP without VMM), and then each mapping is unmapped with its
// own call (ROCm/ROCR-Runtime#285); HIP before 5.4 cannot report VMM support
// and reports none. MallocManaged allocates coarse-grained managed memory
// (hipMemAdviseSetCoarseGrain) and falls back to device memory, with one
// warning, where managed memory is not supported. There is no 3D peer copy
// (vendorapi has only 1D peer copies and same-device 2D copies, which HIP
// has). The graph API has CUDA 11's signatures.
//
// Kernels come from the code object `go generate ./kernels` builds with
// hipcc --genco for kernels.HIPArchs (one bundle, one code object per gfx
// the local hipcc accepts); a device whose gfx it does not hold compiles the
// embedded sources with hipRTC (--offload-arch=<gfx>) at first use, cached
// under os.UserCacheDir()/ternion/kernels. TERNION_FORCE_RTC=1 forces that
// path.
package hip
