//go:build cuda || hip || musa

package gpushim

/*
#include "shim_impl.h"

// tn_test_status reports a failure of source src with code as the shim's C
// side does (names from the vendor's name functions; none for BLAS).
static tn_status tn_test_status(int32_t src, int32_t code) {
    switch (src) {
    case TN_SRC_RUNTIME: return tn_rt("statusTest", (cudaError_t)code);
    case TN_SRC_DRIVER: return tn_drv("statusTest", (CUresult)code);
    default: return tn_blas_status("statusTest", (cublasStatus_t)code);
    }
}
*/
import "C"

// statusCase is a vendor status, by its C constant, and the sentinel the
// contract maps it to; each status_<vendor>.go lists the statuses the
// classification tables must know.
type statusCase struct {
	src  int
	code int
	kind error
}

// cStatus builds a status the way the C side reports a failure of src with code.
func cStatus(src, code int) status {
	st := C.tn_test_status(C.int32_t(src), C.int32_t(code))
	return status{src: int(st.src), code: int(st.code), aux: int(st.aux), hint: int(st.hint),
		call: C.GoString(st.call), name: C.GoString(st.name), msg: C.GoString(st.msg)}
}
