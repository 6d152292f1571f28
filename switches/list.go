package switches

import (
	"math"
	"strconv"

	"github.com/ternion/ternion/arch"
)

// Vendors are the GPU vendors TERNION_GEN_VENDORS may name. (Declared
// before the switches: a switch whose initializer waits for a later variable
// would be registered out of order.)
var Vendors = []string{"cuda", "hip", "musa"}

// all is every switch, in the order they are declared below: the order of
// All, `ternion devices --features` and README.md's table.
var all []*Switch

// define registers s with its parser and the value that applies when it is
// unset; a switch exists only through define, so All lists every one, in
// the order of the declarations below as long as no initializer waits for a
// package variable declared later (Go would then run it later): TestREADME
// checks the order.
func define[T any](s Switch, kind Kind, parse func(string) (T, error), def T) Of[T] {
	s.Kind = kind
	s.check = func(v string) error { _, err := parse(v); return err }
	all = append(all, &s)
	return Of[T]{Switch: &s, parse: parse, def: def}
}

// boolSwitch defines an on/off switch that is off by default.
func boolSwitch(s Switch) Of[bool] {
	s.Default = "off"
	return define(s, KindBool, parseBool, false)
}

// intSwitch defines an integer switch from lo to hi with default def.
func intSwitch(s Switch, def, lo, hi int) Of[int] {
	s.Default = strconv.Itoa(def)
	return define(s, KindInt, intParser(lo, hi), def)
}

// archSwitch defines an arch list for one vendor's compiler.
func archSwitch(s Switch, prefix string, parse func(string) (arch.CC, error)) Of[[]arch.CC] {
	return define(s, KindArchs, archParser(prefix, parse), nil)
}

// textSwitch defines a switch that takes any text.
func textSwitch(s Switch) Of[string] { return define(s, KindText, parseText, "") }

// ggml's backend switches, read at run time under the TERNION_ prefix.
var (
	// DisableGraphs never captures GPU graphs: every node launches eagerly.
	DisableGraphs = boolSwitch(Switch{Name: "TERNION_DISABLE_GRAPHS",
		Meaning: "never capture GPU graphs; launch eagerly",
		GGML:    "GGML_CUDA_DISABLE_GRAPHS", ReadBy: LayerCore | LayerGPU})
	// EnableUnifiedMemory allocates device buffers as managed memory.
	EnableUnifiedMemory = boolSwitch(Switch{Name: "TERNION_ENABLE_UNIFIED_MEMORY",
		Meaning: "allocate device buffers as managed (unified) memory, which may spill to system RAM",
		GGML:    "GGML_CUDA_ENABLE_UNIFIED_MEMORY", ReadBy: LayerCore, NoEffectYet: true})
	// NoPinned makes host buffers pageable.
	NoPinned = boolSwitch(Switch{Name: "TERNION_NO_PINNED",
		Meaning: "host buffers are pageable instead of pinned: inputs are uploaded synchronously",
		GGML:    "GGML_CUDA_NO_PINNED", ReadBy: LayerCore})
	// RegisterHost page-locks host buffers such as mmap'd model files.
	RegisterHost = boolSwitch(Switch{Name: "TERNION_REGISTER_HOST",
		Meaning: "page-lock (register) host buffers such as mmap'd model files for faster copies",
		GGML:    "GGML_CUDA_REGISTER_HOST", ReadBy: LayerCore, NoEffectYet: true})
	// ForceMMQ sends quantized mul_mat to the mmq kernels, never to BLAS.
	ForceMMQ = boolSwitch(Switch{Name: "TERNION_FORCE_MMQ",
		Meaning: "quantized mul_mat always uses the mmq kernels, never BLAS (ternion has no mmq kernels yet: such a MUL_MAT is refused)",
		GGML:    "GGML_CUDA_FORCE_MMQ", ReadBy: LayerCore | LayerGPU})
	// ForceBLAS sends mul_mat to BLAS wherever it can (ggml's FORCE_CUBLAS;
	// BLAS is cuBLAS, rocBLAS or muBLAS).
	ForceBLAS = boolSwitch(Switch{Name: "TERNION_FORCE_BLAS",
		Meaning: "mul_mat uses BLAS wherever it can",
		GGML:    "GGML_CUDA_FORCE_CUBLAS", ReadBy: LayerCore | LayerGPU})
	// NoMMVQ8T keeps quantized mul_mat of several columns on the integer
	// dot-product kernels where the tensor-core ones would run.
	NoMMVQ8T = boolSwitch(Switch{Name: "TERNION_NO_MMVQ8T",
		Meaning: "quantized mul_mat of 4..8 columns uses the integer dot-product kernels (mmvq8, the path of devices without mma.sync) instead of the tensor-core ones (mmvq8t)",
		ReadBy:  LayerCore})
	// NoMMVQ8W keeps quantized mul_mat of up to 8 columns on mmvq8 and
	// mmvq8t where the whole-word kernels (mmvq8w, mmvq8wt) would run.
	NoMMVQ8W = boolSwitch(Switch{Name: "TERNION_NO_MMVQ8W",
		Meaning: "quantized mul_mat of 1..8 columns of q4_0, q8_0, q4_K (one column also q5_K, q6_K) uses mmvq8 or mmvq8t instead of the kernels that decode whole words (mmvq8w: one column, a warp a row; mmvq8wt: 2..8 columns on the tensor cores)",
		ReadBy:  LayerCore})
	// NoGemm90 keeps quantized mul_mat of more than 8 columns on
	// dequantize + BLAS where gemm90 (Hopper's wgmma, the weights expanded
	// inside the gemm) would run.
	NoGemm90 = boolSwitch(Switch{Name: "TERNION_NO_GEMM90",
		Meaning: "quantized mul_mat of more than 8 columns of q4_0, q4_1, q5_0, q5_1, q8_0, iq4_nl, q4_K, q5_K (and with TERNION_GEMM90_MORE q6_K) dequantizes src0 to f16 and calls the vendor BLAS instead of running gemm90 (compute capability 9.0: the weights expanded to f16 inside a wgmma gemm, no temporary)",
		ReadBy:  LayerCore})
	// Gemm90More lets gemm90 take the formats whose kernels have not yet
	// been timed faster than dequantize + BLAS on a GPU (the host device
	// runs them always).
	Gemm90More = boolSwitch(Switch{Name: "TERNION_GEMM90_MORE",
		Meaning: "gemm90 also multiplies q6_K src0 on a GPU (the host device always does); off until its kernel is timed faster than dequantize + BLAS on a GPU (on an H100 it was not: 196 against 185 µs at m=4096 k=14336 n=512)",
		ReadBy:  LayerCore})
	// EarlyProducts lets the one-column float products (mmvv) and the
	// quantized products after q8y (mmvq8w, mmvq8wt) start while the kernel
	// before them ends; opt-in until measured on a GPU.
	EarlyProducts = boolSwitch(Switch{Name: "TERNION_EARLY_PRODUCTS",
		Meaning: "where core's early-read rule allows (not with TERNION_NO_EARLY_READS), f32/f16/bf16 mul_mat of one column (mmvv) requests its first weights before the kernels before it are done, and q8y lets the quantized product of 1..8 columns after it (mmvq8w, mmvq8wt) launch before it waits (q8ye); off until measured on a GPU",
		ReadBy:  LayerCore})
	// MMVQ8WF quantizes src1 inside mmvq8w's blocks (mmvq8wf) instead of
	// launching q8y first; opt-in until measured on a GPU.
	MMVQ8WF = boolSwitch(Switch{Name: "TERNION_MMVQ8WF",
		Meaning: "one-column quantized mul_mat and MUL_MAT_ID on the whole-word kernels quantize packed f32 src1 inside the product's blocks (mmvq8wf, mmvq8wf_id) instead of launching q8y first; off until measured on a GPU",
		ReadBy:  LayerCore})
	// NoArgmaxPipeline runs long-row ARGMAX on argmaxb_f32 instead of the
	// pipelined argmaxbp_f32.
	NoArgmaxPipeline = boolSwitch(Switch{Name: "TERNION_NO_ARGMAX_PIPELINE",
		Meaning: "ARGMAX of rows of 4096 or more f32 runs on argmaxb_f32 (eight 16-byte vectors a thread requested, compared, then the next eight) instead of argmaxbp_f32 (the next four requested before the four held are compared; 2.4 % faster on an H100)",
		ReadBy:  LayerCore})
	// DequantSlice bounds the f16 slices of a quantized src0 that the
	// dequantize + BLAS mul_mat makes at a time.
	DequantSlice = define(Switch{Name: "TERNION_DEQUANT_SLICE",
		Meaning: "quantized mul_mat of more than 8 columns (dequantize + BLAS) dequantizes one matrix in slices of k of at most this many bytes as f16, each multiplied in turn: a bound on the temporary's memory, at a price (16MiB, 2MB or plain bytes; 0, the default: the whole matrix at once, which the H200 ran fastest: 162.6 µs against 193.5 with 16 MiB slices at m=4096 k=14336 n=512)",
		Default: "0", ReadBy: LayerCore},
		KindSize, parseSizeOrZero, 0)
	// NoMMVT keeps f16/bf16 mul_mat of several columns off the tensor-core
	// vector kernel.
	NoMMVT = boolSwitch(Switch{Name: "TERNION_NO_MMVT",
		Meaning: "f16/bf16 mul_mat of 2..8 columns uses the vector kernel (mmvn, up to 2 columns) or BLAS, the path of devices without mma.sync, instead of the tensor-core vector kernel (mmvt)",
		ReadBy:  LayerCore})
	// NoMMVT2 runs f16/bf16 mul_mat of 2..8 columns with one row tile a
	// block (mmvt) instead of two (mmvt2).
	NoMMVT2 = boolSwitch(Switch{Name: "TERNION_NO_MMVT2",
		Meaning: "f16/bf16 mul_mat of 2..8 columns on the tensor cores takes 16 rows a block (mmvt) instead of 32 (mmvt2: each src1 fragment loaded once for two row tiles, half the src1 reads from L2; 4 % faster on the H100 at m=4096 k=14336)",
		ReadBy:  LayerCore})
	// NoEarlyReads keeps kernels from requesting inputs before the
	// kernels before them are done.
	NoEarlyReads = boolSwitch(Switch{Name: "TERNION_NO_EARLY_READS",
		Meaning: "kernels that can request inputs before the kernels before them are done (mmvt: the weights of f16/bf16 mul_mat of 2..8 columns; fattn_dect: K and V of one-query FLASH_ATTN_EXT on the tensor cores; with TERNION_EARLY_PRODUCTS mmvv's weights and q8ye), where no kernel that may still run writes them, wait for those kernels first",
		ReadBy:  LayerCore})
	// NoFattnTC keeps one-query FLASH_ATTN_EXT off the tensor-core decode
	// kernel.
	NoFattnTC = boolSwitch(Switch{Name: "TERNION_NO_FATTN_TC",
		Meaning: "one-query FLASH_ATTN_EXT uses the SIMT decode kernel (fattn_dec, the path of devices without mma.sync) or the vector kernel instead of the tensor-core decode kernel (fattn_dect)",
		ReadBy:  LayerCore})
	// FattnDecWaves sets how many waves of blocks the tensor-core decode
	// kernel's KV chunks make.
	FattnDecWaves = intSwitch(Switch{Name: "TERNION_FATTN_DEC_WAVES",
		Meaning: "one-query FLASH_ATTN_EXT on the tensor cores (fattn_dect) splits the KV sequence into chunks for this many waves of blocks: 1 (the default) fills every multiprocessor once; more makes shorter chunks, a multiprocessor taking the next block as one ends (more partials to merge)",
		ReadBy:  LayerCore}, 1, 1, 8)
	// FattnDecBlocks caps the tensor-core decode kernel's blocks a
	// multiprocessor that its KV chunks are planned for.
	FattnDecBlocks = intSwitch(Switch{Name: "TERNION_FATTN_DEC_BLOCKS",
		Meaning: "one-query FLASH_ATTN_EXT on the tensor cores (fattn_dect) plans its KV chunks for at most this many blocks a multiprocessor (fewer, longer chunks: fewer partials to merge); 0 (the default) plans for one with f16 K/V and for as many as registers let a multiprocessor hold (2) with q8_0/q4_0 K/V",
		ReadBy:  LayerCore}, 0, 0, 4)
	// NoSoftmaxCluster keeps long SOFT_MAX rows off thread-block clusters.
	NoSoftmaxCluster = boolSwitch(Switch{Name: "TERNION_NO_SOFTMAX_CLUSTER",
		Meaning: "long SOFT_MAX rows go to the split over two launches (partials, then normalised) instead of thread-block clusters (softmax_cl: one launch, 8 blocks a row holding it in registers and agreeing on its max and sum through distributed shared memory; NVIDIA arch 9.0 and later with such code built, rows read as 16-byte vectors of up to 32768 elements, or 65536 from 4 rows up; 14-24 % faster than the split on an H100)",
		ReadBy:  LayerCore})
	// NoFattnFold merges split one-query FLASH_ATTN_EXT in the separate
	// combine kernel instead of in the last block of each kv head.
	NoFattnFold = boolSwitch(Switch{Name: "TERNION_NO_FATTN_FOLD",
		Meaning: "one-query FLASH_ATTN_EXT split over KV chunks merges the chunks in a separate kernel (fattn_dec_combine) instead of in the last block of each kv head to finish (which counts on a zeroed device word a kv head, then reads the head's partials in one round trip; one launch fewer: 2-13 % faster on an H100 in most one-query cases, head size 64 at kv 16384 within ±5 % either way)",
		ReadBy:  LayerCore})
	// FattnMMA8 runs head-256 FLASH_ATTN_EXT prefill on the 8-warp mma
	// kernel; opt-in until measured on a GPU.
	FattnMMA8 = boolSwitch(Switch{Name: "TERNION_FATTN_MMA8",
		Meaning: "FLASH_ATTN_EXT prefill of head size 256 on the tensor cores uses 8 warps and 128 queries a block (fattn_mma_w8: each K/V tile shared by twice the queries, one block a multiprocessor) instead of 4 warps and 64 queries (two blocks a multiprocessor); off until measured on a GPU",
		ReadBy:  LayerCore})
	// NoFattn90 keeps FLASH_ATTN_EXT prefill on the mma.sync kernel where
	// fattn90 (Hopper's wgmma) would run.
	NoFattn90 = boolSwitch(Switch{Name: "TERNION_NO_FATTN90",
		Meaning: "FLASH_ATTN_EXT prefill (more than 8 queries) of head size 128 or 256 runs the mma.sync kernel (fattn_mma) instead of fattn90 (compute capability 9.0: wgmma, 128 queries a block; on an H100 373 against 727 µs at head size 256, 196 against 331 at 128)",
		ReadBy:  LayerCore})
	// NoPDL launches every kernel plainly, without programmatic dependent
	// launch.
	NoPDL = boolSwitch(Switch{Name: "TERNION_NO_PDL",
		Meaning: "launch every kernel plainly: no programmatic dependent launch (on NVIDIA arch 9.0 and later, kernels of at most one block a multiprocessor otherwise start while the kernel before them ends, and wait for it)",
		ReadBy:  LayerGPU})
	// Carveout sets the preferred shared-memory carveout of every kernel as
	// it is loaded (CUDA).
	Carveout = intSwitch(Switch{Name: "TERNION_CARVEOUT",
		Meaning: "CUDA: the share of each multiprocessor's on-chip memory (in percent) every kernel prefers as shared memory, set as it is loaded: 100 keeps kernels of no and of ~150 KB shared memory on one configuration, so that the multiprocessor need not be reconfigured between them; -1 (the default) leaves it to the driver; not applied on HIP and MUSA (said in the log)",
		ReadBy:  LayerGPU}, -1, -1, 100)
	// NoVMM uses the legacy pool instead of the VMM pool; the GPU vendors
	// already report VMM off in the device properties.
	NoVMM = boolSwitch(Switch{Name: "TERNION_NO_VMM",
		Meaning: "use the legacy best-fit pool instead of the VMM pool (the GPU vendors already report VMM off)",
		GGML:    "GGML_CUDA_NO_VMM", ReadBy: LayerCore | LayerGPU})
	// NoPeerCopy copies between devices through the host.
	NoPeerCopy = boolSwitch(Switch{Name: "TERNION_NO_PEER_COPY",
		Meaning: "the row-split MUL_MAT copies between devices through pinned host memory instead of peer copies",
		GGML:    "GGML_CUDA_NO_PEER_COPY", ReadBy: LayerCore | LayerGPU})
	// PeerMaxBatchSize enables peer access only for batches of at most this
	// many rows.
	PeerMaxBatchSize = intSwitch(Switch{Name: "TERNION_PEER_MAX_BATCH_SIZE",
		Meaning: "enable peer access only for batches of at most N rows",
		GGML:    "GGML_CUDA_PEER_MAX_BATCH_SIZE", ReadBy: LayerCore | LayerGPU},
		128, 0, math.MaxInt32)
	// F16 uses half-precision intermediates in dequantize and mul_mat_vec.
	F16 = boolSwitch(Switch{Name: "TERNION_F16",
		Meaning: "half-precision intermediates in the dequantize and mul_mat_vec kernels",
		GGML:    "GGML_CUDA_F16", ReadBy: LayerCore | LayerGPU, NoEffectYet: true})
	// TensorSplit is each device's proportion of a split tensor's rows.
	TensorSplit = define(Switch{Name: "TERNION_TENSOR_SPLIT",
		Meaning: "each device's proportion of a split tensor's rows, e.g. 0.7,0.3 or 3/1",
		Default: "by total memory", GGML: "--tensor-split", ReadBy: LayerCore},
		KindProportions, parseProportions, nil)
)

// The graph-capture policy's switches beyond the seed (core/capture): ggml
// has no such variables; the seed's behaviour is warm-up 0, one graph,
// never evicted, never retried.
var (
	// GraphWarmup is how many runs with identical properties a graph makes
	// eagerly before it is captured.
	GraphWarmup = intSwitch(Switch{Name: "TERNION_GRAPH_WARMUP",
		Meaning: "runs of a graph with identical properties made eagerly before it is captured (the seed: 0)",
		ReadBy:  LayerCore}, 1, 0, 1000)
	// GraphCache is how many executable graphs a backend keeps, one per
	// graph shape, least recently used evicted first.
	GraphCache = intSwitch(Switch{Name: "TERNION_GRAPH_CACHE",
		Meaning: "executable graphs a backend keeps, one per graph shape, least recently used evicted first (the seed: 1)",
		ReadBy:  LayerCore}, 8, 1, 1024)
	// GraphIdleSeconds evicts an executable graph unused this many seconds.
	GraphIdleSeconds = intSwitch(Switch{Name: "TERNION_GRAPH_IDLE_S",
		Meaning: "evict an executable graph unused for this many seconds; 0 never (the seed: 0)",
		ReadBy:  LayerCore}, 10, 0, math.MaxInt32)
	// GraphRetry is how many calls a graph runs eagerly after falling back
	// (it kept changing, or its capture failed) before it is tried again.
	GraphRetry = intSwitch(Switch{Name: "TERNION_GRAPH_RETRY",
		Meaning: "calls a graph runs eagerly after falling back (it kept changing, or capture failed) before graphs are tried again; -1 never (the seed)",
		ReadBy:  LayerCore}, 32, -1, math.MaxInt32)
	// GraphNoCopyIndirection compares CPY destinations like any pointer
	// instead of passing them through the backend's CPY pointer array.
	GraphNoCopyIndirection = boolSwitch(Switch{Name: "TERNION_GRAPH_NO_CPY_INDIRECTION",
		Meaning: "CPY destinations are not passed through the backend's pointer array but compared like any pointer: a KV-cache write that moves each token updates the graph (the seed always uses the array)",
		ReadBy:  LayerCore})
)

// The GPU vendors' own switches, and ROCm's override they report.
var (
	// ForceRTC compiles the kernels at run time even where an embedded code
	// object would run.
	ForceRTC = boolSwitch(Switch{Name: "TERNION_FORCE_RTC",
		Meaning: "compile the kernels at run time (NVRTC, hipRTC) even when an embedded code object would run",
		ReadBy:  LayerGPU})
	// HIPVMM turns VMM on for AMD devices that support it.
	HIPVMM = boolSwitch(Switch{Name: "TERNION_HIP_VMM",
		Meaning: "use VMM on AMD devices that support it (ggml builds HIP without VMM)",
		ReadBy:  LayerGPU})
	// HSAOverride is ROCm's HSA_OVERRIDE_GFX_VERSION (and _<n> for device
	// n): ROCm loads code for that gfx; the hip vendor reports it. Read it
	// with arch.HSAOverrideFor, which applies the per-device rule.
	HSAOverride = define(Switch{Name: arch.HSAOverrideEnv,
		Meaning: "treat every AMD device as this gfx version (10.3.0 → gfx1030); " + arch.HSAOverrideEnv + "_<n> for device n only",
		Owner:   "ROCm", ReadBy: LayerGPU, PerDevice: true},
		KindGfxVersion, parseGfxVersion, 0)
)

// The host vendor's switches.
var (
	// HostDevices is the number of simulated host devices.
	HostDevices = intSwitch(Switch{Name: "TERNION_HOST_DEVICES",
		Meaning: "number of simulated host devices; multi-device split and peer copies are tested this way",
		ReadBy:  LayerHost}, 1, 1, 16)
	// HostMemory is each host device's memory limit.
	HostMemory = define(Switch{Name: "TERNION_HOST_MEMORY",
		Meaning: "memory limit of each host device (512MiB, 2GB or plain bytes), to exercise out-of-memory paths",
		Default: "the smaller of 8 GiB and a quarter of RAM", ReadBy: LayerHost},
		KindSize, parseSize, 0)
)

// The kernel generator's switches (go generate ./kernels).
var (
	// RequireNVCC makes a missing nvcc an error instead of a skip.
	RequireNVCC = boolSwitch(Switch{Name: "TERNION_REQUIRE_NVCC",
		Meaning: "go generate ./kernels fails instead of skipping when nvcc is missing", ReadBy: LayerGenerator})
	// RequireHIPCC makes a missing hipcc an error instead of a skip.
	RequireHIPCC = boolSwitch(Switch{Name: "TERNION_REQUIRE_HIPCC",
		Meaning: "go generate ./kernels fails instead of skipping when hipcc is missing", ReadBy: LayerGenerator})
	// RequireMCC makes a missing mcc an error instead of a skip.
	RequireMCC = boolSwitch(Switch{Name: "TERNION_REQUIRE_MCC",
		Meaning: "go generate ./kernels fails instead of skipping when mcc is missing", ReadBy: LayerGenerator})
	// CUDAArchs replaces kernels.CUDAArchs for one generate run.
	CUDAArchs = archSwitch(Switch{Name: "TERNION_CUDA_ARCHS",
		Meaning: "go generate ./kernels: the arch list for nvcc (75,80,90 or sm_75 sm_90)",
		Default: "kernels.CUDAArchs", GGML: "CMAKE_CUDA_ARCHITECTURES", ReadBy: LayerGenerator},
		"sm_", arch.ParseSM)
	// HIPArchs replaces kernels.HIPArchs for one generate run.
	HIPArchs = archSwitch(Switch{Name: "TERNION_HIP_ARCHS",
		Meaning: "go generate ./kernels: the gfx list for hipcc (gfx90a,gfx1100)",
		Default: "kernels.HIPArchs", GGML: "GPU_TARGETS", ReadBy: LayerGenerator},
		"gfx", parseGfxCC)
	// MUSAArchs replaces kernels.MUSAArchs for one generate run.
	MUSAArchs = archSwitch(Switch{Name: "TERNION_MUSA_ARCHS",
		Meaning: "go generate ./kernels: the arch list for mcc (mp_22 or 22)",
		Default: "kernels.MUSAArchs", GGML: "MUSA_ARCHITECTURES", ReadBy: LayerGenerator},
		"mp_", arch.ParseMP)
	// GenVendors limits the vendors go generate ./kernels builds.
	GenVendors = define(Switch{Name: "TERNION_GEN_VENDORS",
		Meaning: "go generate ./kernels builds only these vendors (hip, or cuda,hip)",
		Default: "every vendor whose compiler is installed", ReadBy: LayerGenerator},
		KindList, listParser(Vendors), nil)
	// NVCC is the nvcc the generator runs.
	NVCC = textSwitch(Switch{Name: "NVCC",
		Meaning: "go generate ./kernels: the nvcc to run",
		Default: "nvcc on PATH, then /usr/local/cuda/bin/nvcc", ReadBy: LayerGenerator})
	// HIPCC is the hipcc the generator runs.
	HIPCC = textSwitch(Switch{Name: "HIPCC",
		Meaning: "go generate ./kernels: the hipcc to run",
		Default: "hipcc on PATH, then /opt/rocm/bin/hipcc", ReadBy: LayerGenerator})
	// MCC is the mcc the generator runs.
	MCC = textSwitch(Switch{Name: "MCC",
		Meaning: "go generate ./kernels: the mcc to run",
		Default: "mcc on PATH, then /usr/local/musa/bin/mcc", ReadBy: LayerGenerator})
	// HIPPlatform is hipcc's platform; the generator sets amd when it is
	// unset and refuses any other.
	HIPPlatform = textSwitch(Switch{Name: "HIP_PLATFORM",
		Meaning: "hipcc's target platform; go generate ./kernels sets amd when unset and refuses nvidia",
		Owner:   "HIP", ReadBy: LayerGenerator})
)

// The conformance suite's switches.
var (
	// ConformanceSeed fixes the random seed of every conformance test.
	ConformanceSeed = define(Switch{Name: "TERNION_CONFORMANCE_SEED",
		Meaning: "the random seed of every conformance test (decimal), to replay a failure",
		Default: "random, printed when a test fails", ReadBy: LayerConformance},
		KindUint64, parseUint64, 0)
)

// Go's own variables ternion reads.
var (
	// GoDebug is the Go runtime's GODEBUG; HostRegister's Go-memory check
	// reads whether sbrk or efence is on (they put memory outside heap arenas).
	GoDebug = textSwitch(Switch{Name: "GODEBUG",
		Meaning: "the Go runtime's debug settings; under sbrk or efence HostRegister cannot recognize Go heap memory by its arenas",
		Owner:   "Go", ReadBy: LayerHost | LayerGPU})
)

// All returns every switch, in the order listings print them.
func All() []*Switch { return append([]*Switch(nil), all...) }

// Find returns the switch named name, or nil. A per-device variant
// (HSA_OVERRIDE_GFX_VERSION_1) finds its switch.
func Find(name string) *Switch {
	for _, s := range all {
		if s.Name == name {
			return s
		}
	}
	for _, s := range all {
		if _, ok := deviceOf(s, name); ok {
			return s
		}
	}
	return nil
}
