package ops

import (
	"fmt"
	"math"

	"github.com/ternion/ternion/arch"
	"github.com/ternion/ternion/core/graph"
	"github.com/ternion/ternion/core/tensor"
	"github.com/ternion/ternion/switches"
	"github.com/ternion/ternion/vendorapi"
)

// softmax.go plans SOFT_MAX and DIAG_MASK_INF (kernels/softmax.cu).

func init() {
	register(graph.OpSoftMax, impl{supports: softmaxSupports, run: softmaxRun})
	register(graph.OpDiagMaskInf, impl{supports: softmaxSupportsDiag, run: softmaxRunDiag})
}

// SOFT_MAX's plan: rows of up to softmaxRegVecs vectors a thread step run
// in registers (softmax_rows) unless they are long (over softmaxLongRow
// elements) and too few to fill the device (under softmaxRowsPerSM rows a
// multiprocessor) but not tiny (over softmaxTiny elements in all: below,
// the split's second launch costs more than one block a row takes, e.g.
// [8192,1]); those, and longer rows, are split into chunks of a
// multiple of softmaxChunkUnit elements over softmaxSplitThreads-thread
// blocks, about softmaxBlocksPerSM blocks a multiprocessor (on an H200,
// [131072,16] gets chunks of 4096, the fastest measured); rows no more
// than the multiprocessors whose chunks at one block a multiprocessor fit
// at most softmaxSplitMaxThreads threads of softmaxSplitMinVecs to
// softmaxSplitMaxVecs vectors get that instead, so that both launches go
// with programmatic dependent launch (an H100, bench/README.md sessions 35
// and 36: [131072,4] -10 %, [262144,1] and [524288,1] -12 %, [262144,4] at
// 4 vectors a thread -7 %; where that took 1024-thread blocks, e.g.
// [131072,16], it lost 4-10 %, and 512 threads of 8 vectors gained 0-2 %,
// of 16 lost 17-31 %). Vectorised rows
// of over 8 warp-widths and up to softmaxWideThreads*softmaxWideK vectors
// run one a block in the streaming kernel (softmax_wide), 256 to 512
// threads holding 1 or 2 vectors each (an H200 ran [4096,4096,5] at 3849
// GiB/s so, 3047 with 128x2-thread blocks of 8 vectors a thread).
const (
	softmaxRegVecs         = 8 * 1024
	softmaxLongRow         = 4096
	softmaxRowsPerSM       = 4
	softmaxSplitThreads    = 256
	softmaxSplitMinVecs    = 2
	softmaxSplitMaxVecs    = 4
	softmaxSplitMaxThreads = 512
	softmaxChunkUnit       = 1024
	softmaxBlocksPerSM     = 4
	softmaxMaxGridY        = 65535
	softmaxWideThreads     = 512
	softmaxWideK           = 2
	softmaxTiny            = 32 * 1024
	// softmax_cl (kernels/softmax.cu's SOFTMAX_CL_BLOCKS and
	// SOFTMAX_CL_THREADS; its k axis from softmaxClusterMinK to
	// softmaxClusterMaxK).
	softmaxClusterBlocks   = 8
	softmaxClusterThreads  = 256
	softmaxClusterMinK     = 2
	softmaxClusterMaxK     = 8
	softmaxClusterAnyRowsK = 4
	softmaxClusterRows8    = 4
)

func softmaxSupports(n *graph.Tensor, _ vendorapi.Props) string {
	a := n.Src(0)
	switch {
	case a.Type() != tensor.F32 || n.Type() != tensor.F32:
		return "SOFT_MAX runs on f32 (as ggml-cuda's)"
	case !fits32(a.Layout()):
		return "more than 2^31 elements"
	}
	if m := n.Src(1); m != nil && m.Type() != tensor.F32 && m.Type() != tensor.F16 {
		return "the mask must be f16 or f32"
	}
	if s := n.Src(2); s != nil && s.Type() != tensor.F32 {
		return "the sinks must be f32"
	}
	return ""
}

func softmaxSupportsDiag(n *graph.Tensor, _ vendorapi.Props) string {
	switch {
	case n.Src(0).Type() != tensor.F32 || n.Type() != tensor.F32:
		return "DIAG_MASK_INF runs on f32 (as ggml-cuda's)"
	case !fits32(n.Src(0).Layout()):
		return "more than 2^31 elements"
	}
	return ""
}

// softmaxALiBi returns ggml's ALiBi constants for n_head heads and
// max_bias: n_head_log2, the largest power of two ≤ n_head, and the bases
// m0 = 2^(-max_bias/n_head_log2), m1 = 2^(-max_bias/2/n_head_log2), in
// float32 as ggml computes them.
func softmaxALiBi(nHead int64, maxBias float32) (nHeadLog2 int32, m0, m1 float32) {
	nHeadLog2 = int32(1) << uint(math.Floor(math.Log2(float64(max(nHead, 1)))))
	m0 = float32(math.Pow(2, float64(-maxBias/float32(nHeadLog2))))
	m1 = float32(math.Pow(2, float64(-(maxBias/2)/float32(nHeadLog2))))
	return nHeadLog2, m0, m1
}

// softmaxPlan is how a SOFT_MAX runs: the vector width, and either the
// register kernel's vectors a thread (k; wide: the streaming one-row-a-block
// form), or the split kernels' chunk; the launch's block and grid.
type softmaxPlan struct {
	vec     int64
	split   bool
	cluster bool // softmax_cl: k vectors a thread, 8 blocks of 256 threads a row
	wide    bool
	k       int64
	block   vendorapi.Dim3
	grid    vendorapi.Dim3
	chunk   int64
	nchunks int64
}

// softmaxPlanFor plans a SOFT_MAX of nrows rows of ne0 elements on a
// device of sms multiprocessors and warp threads a warp, reading vec
// elements a step; cluster: the device runs softmax_cl (unless
// TERNION_NO_SOFTMAX_CLUSTER), which then takes the rows the split would
// that its registers hold (vectors of 4, k of them a thread for at most
// softmaxClusterBlocks·softmaxClusterThreads·k a row), with k up to
// softmaxClusterAnyRowsK, or 8 from softmaxClusterRows8 rows up. On an H100 (bench/README.md, session
// 22) clusters beat the split by 14-24 % up to 4 vectors a thread and 8
// from 4 rows; one row of 8 a thread lost 4 %, 16 a thread 13-39 %.
func softmaxPlanFor(ne0, nrows, vec int64, sms, warp int, cluster bool) softmaxPlan {
	p := softmaxPlan{vec: vec}
	per := (ne0 + vec - 1) / vec
	few := ne0 > softmaxLongRow && nrows < softmaxRowsPerSM*int64(max(sms, 1)) && ne0*nrows > softmaxTiny
	if (per > softmaxRegVecs || few) && cluster && vec == 4 && nrows*softmaxClusterBlocks <= math.MaxInt32 {
		for k := int64(softmaxClusterMinK); k <= softmaxClusterMaxK; k *= 2 {
			if per <= softmaxClusterBlocks*softmaxClusterThreads*k && (k <= softmaxClusterAnyRowsK || nrows >= softmaxClusterRows8) {
				p.cluster, p.k = true, k
				p.block = vendorapi.Dim3{X: softmaxClusterThreads}
				p.grid = vendorapi.Dim3{X: uint32(nrows * softmaxClusterBlocks)}
				return p
			}
		}
	}
	if per > softmaxRegVecs || few {
		p.split = true
		p.block = vendorapi.Dim3{X: softmaxSplitThreads}
		p.chunk, p.nchunks = softmaxSplitChunks(ne0, (softmaxBlocksPerSM*int64(max(sms, 1))+nrows-1)/nrows)
		if nrows <= int64(sms) {
			// At most one block a multiprocessor, so that both launches
			// go with programmatic dependent launch, where that takes
			// at most softmaxSplitMaxThreads threads a block of
			// softmaxSplitMinVecs to softmaxSplitMaxVecs vectors each.
			chunk, nchunks := softmaxSplitChunks(ne0, int64(sms)/nrows)
			vecs := chunk / vec
			threads := max(int64(warp), ((vecs+softmaxSplitMinVecs-1)/softmaxSplitMinVecs+int64(warp)-1)/int64(warp)*int64(warp))
			if threads > softmaxSplitMaxThreads && vecs <= softmaxSplitMaxThreads*softmaxSplitMaxVecs {
				threads = softmaxSplitMaxThreads
			}
			if threads <= softmaxSplitMaxThreads {
				p.block = vendorapi.Dim3{X: uint32(threads)}
				p.chunk, p.nchunks = chunk, nchunks
			}
		}
		p.grid = vendorapi.Dim3{X: uint32(p.nchunks), Y: uint32(min(nrows, softmaxMaxGridY))}
		return p
	}
	if vec == 4 && per > 8*int64(warp) && per <= softmaxWideThreads*softmaxWideK {
		// The fewest vectors a thread that cover the row with at most
		// softmaxWideThreads threads, the threads a whole number of warps.
		p.wide = true
		p.k = (per + softmaxWideThreads - 1) / softmaxWideThreads
		bx := ((per+p.k-1)/p.k + int64(warp) - 1) / int64(warp) * int64(warp)
		p.block = vendorapi.Dim3{X: uint32(bx), Y: 1}
		p.grid = vendorapi.Dim3{X: uint32(max(min(nrows, maxBlocks), 1))}
		return p
	}
	// A row of up to 8 warp-widths of vectors takes one warp (its
	// reductions are shuffles only) with the fewest vectors a thread that
	// cover it; a longer row the fewest vectors a thread that keep it to
	// 128 threads, else 8 a thread and up to 1024 threads.
	bx := int64(warp)
	p.k = 8
	for _, k := range []int64{1, 2, 4} {
		if per <= 8*bx && k*bx >= per || per > 8*bx && (per+k-1)/k <= 128 {
			p.k = k
			break
		}
	}
	for bx*p.k < per {
		bx *= 2
	}
	by := max(256/bx, 1)
	blocks := min((nrows+by-1)/by, maxBlocks)
	p.block = vendorapi.Dim3{X: uint32(bx), Y: uint32(by)}
	p.grid = vendorapi.Dim3{X: uint32(max(blocks, 1))}
	return p
}

// softmaxSplitChunks cuts a row of ne0 elements into at most want chunks
// (at least one) of a multiple of softmaxChunkUnit elements: the chunk and
// how many there are.
func softmaxSplitChunks(ne0, want int64) (chunk, nchunks int64) {
	units := (ne0 + softmaxChunkUnit - 1) / softmaxChunkUnit
	chunks := max(1, min(want, units))
	chunk = (ne0 + chunks - 1) / chunks
	chunk = (chunk + softmaxChunkUnit - 1) / softmaxChunkUnit * softmaxChunkUnit
	return chunk, (ne0 + chunk - 1) / chunk
}

// softmaxRun runs SOFT_MAX: the row kernel, or the two split launches with
// the partials in a pool temporary.
func softmaxRun(d Device, n *graph.Tensor) error {
	ds, err := descs(n, n.Src(0))
	if err != nil {
		return err
	}
	dst, src := ds[0], ds[1]
	var mask vendorapi.TensorDesc
	mt, mne2, mne3 := "none", int64(1), int64(1)
	if m := n.Src(1); m != nil {
		if mask, err = desc(m); err != nil {
			return err
		}
		mt, mne2, mne3 = m.Type().String(), mask.Ne[2], mask.Ne[3]
	}
	var sinks vendorapi.DevicePtr
	if s := n.Src(2); s != nil {
		sd, err := desc(s)
		if err != nil {
			return err
		}
		sinks = sd.Data
	}
	ne0, nrows := src.Ne[0], src.Ne[1]*src.Ne[2]*src.Ne[3]
	vec := int64(1)
	if softmaxVec4(dst, src, mask, mt) {
		vec = 4
	}
	props := d.Props()
	cluster := !switches.On(nil, switches.NoSoftmaxCluster) && (props.CC == 0 || arch.ClusterAvailable(props.CC, props.CompiledArchs))
	p := softmaxPlanFor(ne0, nrows, vec, props.SMs, props.WarpSize, cluster)
	scale, maxBias := n.ParamF32(0), n.ParamF32(1)
	nHeadLog2, m0, m1 := softmaxALiBi(src.Ne[2], maxBias)
	args := func() *vendorapi.Args {
		return d.Args().Tensor(dst).Tensor(src).Tensor(mask).Ptr(sinks).FastDiv(fd(src.Ne[1])).FastDiv(fd(src.Ne[2])).
			FastDiv(fd(mne2)).FastDiv(fd(mne3)).I64(nrows).F32(scale).F32(maxBias).F32(m0).F32(m1).I32(nHeadLog2)
	}
	if p.wide {
		return launch(d, fmt.Sprintf("softmax_wide_%s_k%d", mt, p.k), p.grid, p.block, 0, args())
	}
	if p.cluster {
		return launch(d, fmt.Sprintf("softmax_cl_%s_k%d", mt, p.k), p.grid, p.block, 0, args())
	}
	if !p.split {
		name := fmt.Sprintf("softmax_%s_v%d_k%d", mt, vec, p.k)
		return launch(d, name, p.grid, p.block, 0, args())
	}
	partial, err := d.Pool().Alloc(uint64(8 * nrows * p.nchunks))
	if err != nil {
		return err
	}
	defer partial.Free()
	for _, stage := range []string{"part", "norm"} {
		name := fmt.Sprintf("softmax_%s_%s_v%d", stage, mt, vec)
		a := args().Ptr(partial.Ptr).I64(p.chunk).I32(int32(p.nchunks))
		if err := launch(d, name, p.grid, p.block, 0, a); err != nil {
			return err
		}
	}
	return nil
}

// softmaxVec4 reports whether SOFT_MAX's rows (and mask rows of type mt)
// can be read as vectors of four: ne0 % 4 == 0, f32 rows 16-byte aligned,
// f16 mask rows 8-byte aligned.
func softmaxVec4(dst, src, mask vendorapi.TensorDesc, mt string) bool {
	if src.Ne[0]%4 != 0 || src.Nb[0] != 4 || dst.Nb[0] != 4 || !aligned(src, 16) || !aligned(dst, 16) {
		return false
	}
	switch mt {
	case "f32":
		return mask.Nb[0] == 4 && aligned(mask, 16)
	case "f16":
		return mask.Nb[0] == 2 && aligned(mask, 8)
	}
	return true
}

// softmaxRunDiag runs DIAG_MASK_INF over every element.
func softmaxRunDiag(d Device, n *graph.Tensor) error {
	ds, err := descs(n, n.Src(0))
	if err != nil {
		return err
	}
	dst, src := ds[0], ds[1]
	count := n.Layout().Elements()
	grid, block := flatGeometry(count)
	args := d.Args().Tensor(dst).Tensor(src).FastDiv(fd(src.Ne[0])).FastDiv(fd(src.Ne[1])).FastDiv(fd(src.Ne[2])).
		I32(n.ParamI32(0)).I64(count)
	return launch(d, "diag_mask_inf_f32", grid, block, 0, args)
}
