// Package musa registers ternion's Moore Threads vendor, "musa", when built
// with -tags musa: import it for its side effect (cmd/ternion does) and open
// it with vendorapi.Open("musa").
//
// Status: compiled against the documented MUSA API; not yet built or run
// here. No MUSA SDK or Moore Threads GPU is reachable from this project's
// machines: the only compile so far was `go vet -tags musa` against CUDA
// 11.8's headers renamed cuda->musa, cu->mu, cublas->mublas (a check that the
// mapping table names every symbol the shim uses, nothing more). CI's musa
// cell builds it for real in the mthreads/musa container and reports SKIP
// where no SDK is installed.
//
// The driver is internal/gpushim, the shim shared with cuda and hip. MUSA
// mirrors CUDA (runtime musa*, driver mu*, muBLAS mublas*), so the MUSA path
// differs from the tested CUDA path only by its name-mapping header,
// vendor_musa.h, and a few values in internal/gpushim/vendors.go:
//   - libmusart and libmublas are linked; the driver, libmusa.so, is
//     dlopened by Open (a binary starts without it: Open reports
//     vendorapi.ErrNoDriver naming libmusa.so);
//   - the cc is arch.MThreads(major, minor) (0x100000 + major*0x100 +
//     minor*0x10), named mp_XY; the warp size is 32 whatever the device
//     reports, as the seed does ("FIXME: ensure compatibility with varying
//     warp sizes across MUSA archs");
//   - there is no run-time compiler ternion uses: kernels come only from the
//     code objects `go generate ./kernels` builds with mcc for
//     kernels.MUSAArchs (mp_21, mp_22, mp_31); a device they do not cover
//     gets vendorapi.ErrNoKernel saying so;
//   - BLASVersion reports the muBLAS headers' version (MUBLAS_VERSION_*);
//     muBLAS status names are assumed to number like cuBLAS's
//     (internal/gpushim/status_musa.go checks it where an SDK is installed).
//
// For core (not written yet): the seed's supports_op exceptions for MUSA, to
// be kept as data next to the other supports_op conditions. When
// b.ne[2]*b.ne[3] > 1 (batched) and neither a nor b is transposed:
//   - QY1 (mp_21): MUL_MAT with a and b both F16 is not supported;
//   - QY2 (mp_22): MUL_MAT_ID with a Q2_K and b F32 is not supported.
//
// The seed also registers host buffers with cudaHostRegisterReadOnly on MUSA
// regardless of the runtime version, and has no 3D peer copy on MUSA (a 2D
// copy instead), like HIP.
package musa
