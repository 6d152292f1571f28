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

// HIPArchs is the gfx list `go generate ./kernels` builds AMD code objects
// for with hipcc --genco, one code object per gfx. A gfx the local hipcc
// rejects is left out with a message: Debian 12's clang 15 (HIP 5.2) builds
// gfx900, gfx906, gfx908, gfx90a, gfx940 and gfx1030, rejects gfx942 and
// gfx12xx ("invalid target ID") and has no device libraries for gfx11xx; a
// ROCm 6 install builds them all. A device whose gfx is not here (gfx1031,
// gfx1103, ...) compiles the embedded sources with hipRTC at run time, or
// runs the code of another gfx under HSA_OVERRIDE_GFX_VERSION.
// TERNION_HIP_ARCHS (e.g. "gfx90a,gfx1100") overrides the list for one
// generate run.
var HIPArchs = []arch.CC{
	arch.Vega,   // gfx900: Vega 56/64
	arch.Vega20, // gfx906: MI50, Radeon VII
	arch.CDNA1,  // gfx908: MI100
	arch.CDNA2,  // gfx90a: MI210/MI250
	gfx(0x940),  // gfx940: MI300 (early)
	arch.CDNA3,  // gfx942: MI300X/MI300A/MI325X
	arch.CDNA4,  // gfx950: MI350/MI355
	arch.RDNA2,  // gfx1030: RX 6800/6900, W6800
	arch.RDNA3,  // gfx1100: RX 7900
	gfx(0x1101), // gfx1101: RX 7800/7700
	gfx(0x1102), // gfx1102: RX 7600
	gfx(0x1151), // gfx1151: Ryzen AI Max (Strix Halo)
	arch.RDNA4,  // gfx1200: RX 9060
	gfx(0x1201), // gfx1201: RX 9070
}

// MUSAArchs is the mp list `go generate ./kernels` builds Moore Threads code
// objects for with mcc (skipped, with a message, where no mcc is installed).
// TERNION_MUSA_ARCHS (e.g. "mp_22") overrides the list for one generate run.
var MUSAArchs = []arch.CC{
	arch.QY1, // mp_21: MTT S80, S3000
	arch.QY2, // mp_22: MTT S4000
	arch.PH1, // mp_31: MTT S5000
}

// gfx is the AMD cc of gfx digits read as hex (gfx(0x1101) is gfx1101).
func gfx(digits int) arch.CC { return arch.OffsetAMD + arch.CC(digits) }
