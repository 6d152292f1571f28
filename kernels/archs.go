package kernels

import "github.com/ternion/ternion/arch"

// CUDAArchs is the arch list `go generate ./kernels` builds the CUDA fatbin
// for: machine code (SASS) for each, plus PTX of the newest so that newer
// devices run it through the driver's JIT. Archs the local nvcc rejects (CUDA
// 13 dropped sm_70 and older) are left out with a message. Devices that no
// entry covers compile the embedded sources with NVRTC at run time.
// TERNION_CUDA_ARCHS (e.g. "80,90") overrides the list for one generate run.
var CUDAArchs = []arch.CC{
	arch.Turing,       // sm_75
	arch.Ampere,       // sm_80
	arch.NVIDIA(8, 6), // sm_86
	arch.AdaLovelace,  // sm_89
	arch.Hopper,       // sm_90
}
