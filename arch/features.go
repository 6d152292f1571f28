package arch

// The feature predicates below follow ggml-cuda's common.cuh (fp16_available,
// fast_fp16_available, fast_fp16_hardware_available,
// fp16_mma_hardware_available, bf16_mma_hardware_available,
// turing_mma_available, ampere_mma_available, amd_mfma_available,
// amd_wmma_available) and the seed's graph rule, in the form REFERENCE.md
// tabulates them. Predicates named …Available take the compiled arch list
// because on NVIDIA they depend on hc, the highest arch the kernels were
// built for that the device can run ([HighestCompiled]); the …Hardware ones
// choose features of vendor libraries (cuBLAS, hipBLAS) and look at the
// device alone.

// HighestCompiled is ggml's ggml_cuda_highest_compiled_arch: for an NVIDIA cc
// the highest entry of compiled that is <= cc, or 0 when none is (the seed
// aborts there; every hc predicate is then false). AMD and Moore Threads
// devices, and an empty list, give cc itself: HIP and MUSA code objects are
// built per exact arch.
func HighestCompiled(cc CC, compiled []CC) CC {
	if !cc.IsNVIDIA() || len(compiled) == 0 {
		return cc
	}
	var hc CC
	for _, a := range compiled {
		if a <= cc && a > hc {
			hc = a
		}
	}
	return hc
}

// Features is every feature predicate evaluated for one device and arch list.
type Features struct {
	FP16             bool `json:"fp16"`
	FastFP16         bool `json:"fast_fp16"`
	FastFP16Hardware bool `json:"fast_fp16_hardware"`
	FP16MMAHardware  bool `json:"fp16_mma_hardware"`
	BF16MMAHardware  bool `json:"bf16_mma_hardware"`
	TuringMMA        bool `json:"turing_mma"`
	AmpereMMA        bool `json:"ampere_mma"`
	MFMA             bool `json:"mfma"`
	WMMA             bool `json:"wmma"`
	DP4A             bool `json:"dp4a"`
	Graphs           bool `json:"graphs"`
}

// FeaturesOf evaluates every predicate for cc and the compiled arch list.
func FeaturesOf(cc CC, compiled []CC) Features {
	return Features{
		FP16:             FP16Available(cc, compiled),
		FastFP16:         FastFP16Available(cc, compiled),
		FastFP16Hardware: FastFP16Hardware(cc),
		FP16MMAHardware:  FP16MMAHardware(cc),
		BF16MMAHardware:  BF16MMAHardware(cc),
		TuringMMA:        TuringMMAAvailable(cc, compiled),
		AmpereMMA:        AmpereMMAAvailable(cc, compiled),
		MFMA:             MFMAAvailable(cc),
		WMMA:             WMMAAvailable(cc),
		DP4A:             DP4AAvailable(cc, compiled),
		Graphs:           GraphsAllowed(cc),
	}
}

// FP16Available reports whether ggml's half-precision code paths run: NVIDIA
// with hc >= Pascal, every AMD device (HIP builds always define
// FP16_AVAILABLE, and ggml's hc >= 600 test holds for every AMD value), and
// Moore Threads from PH1.
func FP16Available(cc CC, compiled []CC) bool {
	switch cc.Vendor() {
	case VendorNVIDIA:
		return HighestCompiled(cc, compiled) >= Pascal
	case VendorAMD:
		return true
	}
	return cc >= PH1
}

// FastFP16Available reports whether half-precision arithmetic is fast in
// ggml's own kernels: every AMD device; NVIDIA with fp16 and hc != 610 (sm_61
// runs fp16 at a fraction of fp32 speed); Moore Threads with fp16.
func FastFP16Available(cc CC, compiled []CC) bool {
	switch cc.Vendor() {
	case VendorNVIDIA:
		return FP16Available(cc, compiled) && HighestCompiled(cc, compiled) != DP4A
	case VendorAMD:
		return true
	}
	return FP16Available(cc, compiled)
}

// FastFP16Hardware reports whether the device computes fp16 fast, which
// chooses the BLAS compute type: NVIDIA >= Pascal except 610, every AMD
// device, Moore Threads from QY2.
func FastFP16Hardware(cc CC) bool {
	switch cc.Vendor() {
	case VendorNVIDIA:
		return cc >= Pascal && cc != DP4A
	case VendorAMD:
		return true
	}
	return cc >= QY2
}

// FP16MMAHardware reports fp16 matrix units: NVIDIA >= Volta, CDNA, RDNA3
// (including RDNA 3.5), RDNA4, Moore Threads from QY2.
func FP16MMAHardware(cc CC) bool {
	switch cc.Vendor() {
	case VendorNVIDIA:
		return cc >= Volta
	case VendorAMD:
		return cc.IsCDNA() || cc.IsRDNA3() || cc.IsRDNA4()
	}
	return cc >= QY2
}

// BF16MMAHardware reports bf16 matrix units: NVIDIA >= Ampere, CDNA, AMD >=
// RDNA3, Moore Threads from PH1.
func BF16MMAHardware(cc CC) bool {
	switch cc.Vendor() {
	case VendorNVIDIA:
		return cc >= Ampere
	case VendorAMD:
		return cc.IsCDNA() || cc >= RDNA3
	}
	return cc >= PH1
}

// TuringMMAAvailable reports whether ggml's mma.sync kernels (the seed's
// new_mma_available) run: NVIDIA with hc >= Turing. Volta's tensor cores work
// too differently to count.
func TuringMMAAvailable(cc CC, compiled []CC) bool {
	return cc.IsNVIDIA() && HighestCompiled(cc, compiled) >= Turing
}

// AmpereMMAAvailable reports the Ampere MMA shapes and cp.async: NVIDIA with
// hc >= Ampere.
func AmpereMMAAvailable(cc CC, compiled []CC) bool {
	return cc.IsNVIDIA() && HighestCompiled(cc, compiled) >= Ampere
}

// ClusterAvailable reports thread-block clusters and distributed shared
// memory: NVIDIA with hc >= Hopper.
func ClusterAvailable(cc CC, compiled []CC) bool {
	return cc.IsNVIDIA() && HighestCompiled(cc, compiled) >= Hopper
}

// CPAsyncAvailable reports asynchronous global-to-shared copies (cp.async);
// the same condition as AmpereMMAAvailable.
func CPAsyncAvailable(cc CC, compiled []CC) bool { return AmpereMMAAvailable(cc, compiled) }

// MFMAAvailable reports AMD matrix fused multiply-add (MFMA): CDNA.
func MFMAAvailable(cc CC) bool { return cc.IsCDNA() }

// WMMAAvailable reports AMD wave matrix multiply-accumulate (WMMA): RDNA3
// (including RDNA 3.5) and RDNA4.
func WMMAAvailable(cc CC) bool { return cc.IsRDNA3() || cc.IsRDNA4() }

// DP4AAvailable reports a native 4×int8 dot-product instruction, which the
// quantized kernels (mmvq, mmq) are built on. The rule is ggml's
// ggml_cuda_dp4a in common.cuh:
//   - NVIDIA: __dp4a when __CUDA_ARCH__ >= GGML_CUDA_CC_DP4A, i.e. hc >= 610.
//   - AMD: __builtin_amdgcn_sdot4 on CDNA, RDNA2 and gfx906 (Vega20, "minimum
//     for dp4a" in ggml's table), __builtin_amdgcn_sudot4 on RDNA3 and RDNA4.
//     gfx900 and RDNA1 only get a multi-instruction emulation (v_mul_i32_i24 +
//     v_add3_u32), older GCN a scalar loop: both count as unavailable.
//   - Moore Threads: __dp4a on every MUSA arch (GGML_USE_MUSA).
func DP4AAvailable(cc CC, compiled []CC) bool {
	switch cc.Vendor() {
	case VendorNVIDIA:
		return HighestCompiled(cc, compiled) >= DP4A
	case VendorAMD:
		return (cc >= Vega20 && cc < CDNA1) || cc.IsCDNA() || cc.IsRDNA2() || cc.IsRDNA3() || cc.IsRDNA4()
	}
	return true
}

// GraphsAllowed is the seed's architecture test for CUDA graph capture:
// cc >= Ampere (later ggml lowered it to Volta). The comparison is on the raw
// encoding, so every AMD and Moore Threads value passes it; whether those
// runtimes capture at all is the backend's decision, not the arch's.
func GraphsAllowed(cc CC) bool { return cc >= Ampere }
