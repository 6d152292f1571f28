// noop.cu - an empty kernel: the smallest launch, for measuring launch and
// graph-replay overhead.
#include "vendor.h"

// Does nothing.
extern "C" __global__ void noop() {
    TERNION_KERNEL_ENTRY();
}
