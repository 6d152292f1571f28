package ops

import (
	"fmt"
	"math"
	"slices"

	"github.com/ternion/ternion/arch"
	"github.com/ternion/ternion/core/graph"
	"github.com/ternion/ternion/core/tensor"
	"github.com/ternion/ternion/switches"
	"github.com/ternion/ternion/vendorapi"
)

// fattn.go plans FLASH_ATTN_EXT (kernels/fattn.cu): the decode kernels (+
// fattn_dec_combine) for one query, on the tensor cores where it can, the
// flash-decoding vector kernel (+ fattn_combine) for other small batches,
// the mma.sync kernel for prefill.

func init() {
	register(graph.OpFlashAttnExt, impl{supports: fattnSupports, runEarly: fattnRun})
}

// fattnPath is the kernel path of a FLASH_ATTN_EXT node.
type fattnPath int

const (
	fattnVec  fattnPath = iota // fattn_vec_*: flash-decoding, any vendor
	fattnMMA                   // fattn_mma_*: mma.sync m16n8k16, NVIDIA with arch >= 8.0 compiled
	fattnDec                   // fattn_dec_*: one query, gqa <= fattnDecMaxGQA, any vendor
	fattnDect                  // fattn_dect_*: one query on the tensor cores, NVIDIA with arch >= 8.0 compiled
)

// fattnDectMaxGQA is the largest GQA ratio fattn_dect is built for, by head
// size (its r axis: 16 rows up to 128, 8 at 256).
var fattnDectMaxGQA = map[int64]int64{64: 16, 128: 16, 256: 8}

// fattnDectShared is fattn_dect's dynamic shared memory for head size dim
// and K/V type kv on a device of compute capability cc: 4 warps × 3 stages
// × a 16-row K and V tile; for q8_0 or q4_0 K and V, 3 stages of raw 16-row
// tiles (dim/32 blocks a row) and one f16 K and V tile a warp; then 3
// mbarriers (8 bytes) a warp. Code for sm_90 and later keeps f16 rows
// dim·2 + 16 bytes apart (16 bytes of padding keep ldmatrix free of bank
// conflicts where the bulk copy engine, which cannot swizzle, fills them);
// older code swizzles rows of dim·2 bytes (so head size 128 still fits
// sm_86's 99 KiB). A device of cc >= 9.0 runs code of that arch or newer,
// or PTX of an older arch that needs less than counted here.
func fattnDectShared(dim int64, kv tensor.Type, cc arch.CC) int {
	const warps, stages = 4, 3
	row := int(dim) * 2
	if cc == 0 || cc.IsNVIDIA() && cc >= arch.Hopper {
		row += 16
	}
	bars := warps * stages * 8
	if kv.IsQuantized() {
		return warps*(stages*2*16*int(dim/32*kv.BlockBytes())+2*16*row) + bars
	}
	return warps*stages*2*16*row + bars
}

// fattnDectQuant reports whether the tensor-core decode kernel reads K and
// V (of types kt, vt) of call c as stored (fattn_dect_d128_*_{q8_0,q4_0}):
// both q8_0 or both q4_0, head size 128, data and strides multiples of 8
// bytes (its 8-byte copies). Other K/V types are converted to f16 first.
func fattnDectQuant(c fattnCall, kt, vt tensor.Type) bool {
	if kt != vt || kt != tensor.Q8_0 && kt != tensor.Q4_0 || c.k.Ne[0] != 128 || c.k.Data%8 != 0 || c.v.Data%8 != 0 {
		return false
	}
	for i := 1; i < 4; i++ {
		if c.k.Nb[i]%8 != 0 || c.v.Nb[i]%8 != 0 {
			return false
		}
	}
	return true
}

// fattnDecMaxGQA is the largest GQA ratio fattn_dec is built for (its r axis).
const fattnDecMaxGQA = 8

// fattnDecMaxChunks is the most KV chunks the decode geometry splits a
// sequence into (more only adds combine work).
const fattnDecMaxChunks = 256

// fattnVecMaxQ is the most query columns the seed sends to its vector kernel.
const fattnVecMaxQ = 8

// fattnChoose picks the path for nq query columns, GQA ratio gqa and head
// sizes dim (K) and dimV on a device of props p (cc 0 is the host device,
// which runs every path): 576/512 takes the vector kernel, its only one;
// one query takes the tensor-core decode kernel where its
// mma.sync code is compiled, it is built for the head size and GQA ratio,
// its shared memory fits and TERNION_NO_FATTN_TC is unset, else the SIMT
// decode kernel (every vendor) up to GQA 8; otherwise the seed's choice: the
// vector kernel for nq <= 8, the tensor-core kernel for larger batches where
// its mma.sync code is compiled. Without the tensor-core kernel the vector
// kernel takes every batch (correct, slower).
func fattnChoose(nq, gqa, dim, dimV int64, p vendorapi.Props) fattnPath {
	if fattnMLA(dim, dimV) {
		return fattnVec
	}
	mma := p.CC == 0 || arch.AmpereMMAAvailable(p.CC, p.CompiledArchs)
	if nq == 1 && mma && gqa <= fattnDectMaxGQA[dim] && fattnDectShared(dim, tensor.F16, p.CC) <= p.SharedMemPerBlockOptin &&
		!switches.On(nil, switches.NoFattnTC) {
		return fattnDect
	}
	if nq == 1 && gqa <= fattnDecMaxGQA {
		return fattnDec
	}
	if nq <= fattnVecMaxQ {
		return fattnVec
	}
	if mma && fattnMMAFits(dim, p) {
		return fattnMMA
	}
	return fattnVec
}

// fattnMLA reports whether K and V head sizes hsk, hsv are the seed's one
// pair of different sizes (576/512, DeepSeek's multi-head latent
// attention), which only the vector kernel takes (fattn_vec_d576v512_r4).
func fattnMLA(hsk, hsv int64) bool { return hsk == 576 && hsv == 512 }

// fattnHeadSizes are the head sizes the kernels are built for (hsk = hsv).
var fattnHeadSizes = map[int64]bool{64: true, 80: true, 96: true, 112: true, 128: true, 256: true}

// fattnConvertedKV are the K/V types besides f16 that FLASH_ATTN_EXT takes:
// f32 and the formats of ggml's vector kernel. The kernels read f16, so such
// a K or V is first converted into a packed f16 copy (pool scratch), as the
// seed does for its non-vector kernels.
var fattnConvertedKV = map[tensor.Type]bool{tensor.F32: true, tensor.Q4_0: true, tensor.Q4_1: true, tensor.Q5_0: true,
	tensor.Q5_1: true, tensor.Q8_0: true}

func fattnSupports(n *graph.Tensor, _ vendorapi.Props) string {
	q, k, v, mask, sinks := n.Src(0), n.Src(1), n.Src(2), n.Src(3), n.Src(4)
	kt, vt := k.Type(), v.Type()
	hsk, hsv := k.Dim(0), v.Dim(0)
	switch {
	case kt == tensor.BF16 || vt == tensor.BF16:
		return fmt.Sprintf("K/V of types %s/%s: the seed rejects bf16 K/V", kt, vt)
	case kt != tensor.F16 && !fattnConvertedKV[kt] || vt != tensor.F16 && !fattnConvertedKV[vt]:
		return fmt.Sprintf("K/V of types %s/%s: FLASH_ATTN_EXT takes f16, f32, q4_0, q4_1, q5_0, q5_1 and q8_0", kt, vt)
	case hsk == 64 && kt != tensor.F16:
		return fmt.Sprintf("%s K at head size 64: the seed takes only f16 K there", kt)
	case hsk != 64 && hsk != 128 && !fattnMLA(hsk, hsv) && (kt != tensor.F16 || vt != tensor.F16):
		return fmt.Sprintf("K/V of types %s/%s at head size %d: the seed takes other types than f16 only at 128 (V at 64) and 576/512",
			kt, vt, hsk)
	case q.Type() != tensor.F32 || n.Type() != tensor.F32:
		return "q and dst must be f32"
	}
	switch {
	case fattnMLA(hsk, hsv):
	case hsk != hsv:
		return fmt.Sprintf("hsk %d ≠ hsv %d: the seed accepts different K and V head sizes only for 576/512", hsk, hsv)
	case !fattnHeadSizes[hsk]:
		return fmt.Sprintf("head size %d: the kernels are built for 64, 80, 96, 112, 128 and 256", hsk)
	case q.Nb()[0] != 4 || k.Nb()[0] != kt.BlockBytes() || v.Nb()[0] != vt.BlockBytes():
		return "q, k and v rows must be packed"
	case mask != nil && mask.Nb()[0] != 2:
		return "mask rows must be packed"
	case sinks != nil && sinks.Nb()[0] != 4:
		return "sinks must be packed f32"
	}
	for i := 1; i < 4; i++ {
		if kt == tensor.F16 && k.Nb()[i]%16 != 0 || vt == tensor.F16 && v.Nb()[i]%16 != 0 {
			return "f16 k and v strides must be multiples of 16 bytes (16-byte row loads)"
		}
	}
	qn, kn := q.Ne(), k.Ne()
	if qn[1]*qn[2]*qn[3] >= math.MaxInt32 || kn[1] >= math.MaxInt32 || qn[2] > 65535 || qn[3] > 65535 ||
		kn[2]*qn[3] > 65535 || qn[1]*(qn[2]/kn[2]) > 65535*4 {
		return "a dimension exceeds the kernels' grid"
	}
	return ""
}

// fattnCall is the argument list of one FLASH_ATTN_EXT node.
type fattnCall struct {
	dst, q, k, v, mask   vendorapi.TensorDesc
	sinks                vendorapi.DevicePtr
	scale, softcap, bias float32
	m0, m1               float32
	nHeadLog2, gqa, r3   uint32
	early                func(t *graph.Tensor) bool // readEarly of the node's graph (nil: read nothing early)
	kv                   [2]*graph.Tensor           // K and V as the graph has them (nil where a temporary replaced them)
	dect                 bool                       // the kernel is fattn_dect: its early argument follows counters
}

// earlyBits is fattn_dect's early argument: bit 0 where K, bit 1 where V
// (still the graph's own tensors) may be read before the kernel waits for
// the kernels before it.
func (c fattnCall) earlyBits() int32 {
	bits := int32(0)
	for i, t := range c.kv {
		if t != nil && c.early != nil && c.early(t) {
			bits |= 1 << i
		}
	}
	return bits
}

// fattnArgs reads node n's descriptors and parameters; the softcap divides
// the scale as ggml does (s = softcap·tanh(s·scale/softcap)).
func fattnArgs(n *graph.Tensor) (fattnCall, error) {
	ds, err := descs(n, n.Src(0), n.Src(1), n.Src(2))
	if err != nil {
		return fattnCall{}, err
	}
	c := fattnCall{dst: ds[0], q: ds[1], k: ds[2], v: ds[3], scale: n.ParamF32(0), bias: n.ParamF32(1),
		softcap: n.ParamF32(2)}
	if m := n.Src(3); m != nil {
		if c.mask, err = desc(m); err != nil {
			return fattnCall{}, err
		}
	}
	if s := n.Src(4); s != nil {
		d, err := desc(s)
		if err != nil {
			return fattnCall{}, err
		}
		c.sinks = d.Data
	}
	if c.softcap != 0 {
		c.scale /= c.softcap
	}
	nHead := uint32(c.q.Ne[2])
	c.nHeadLog2 = 1 << uint32(math.Floor(math.Log2(float64(nHead))))
	c.m0 = float32(math.Pow(2, -float64(c.bias)/float64(c.nHeadLog2)))
	c.m1 = float32(math.Pow(2, -float64(c.bias)/2/float64(c.nHeadLog2)))
	c.gqa = uint32(c.q.Ne[2] / c.k.Ne[2])
	c.r3 = uint32(c.q.Ne[3] / c.k.Ne[3])
	return c, nil
}

// args appends the call's arguments (the vector kernel's part after sinks
// and chunk at the end when vec).
func (c fattnCall) args(d Device, vec bool, part vendorapi.DevicePtr, chunk uint32) *vendorapi.Args {
	a := d.Args().Tensor(c.dst).Tensor(c.q).Tensor(c.k).Tensor(c.v).Tensor(c.mask).Ptr(c.sinks)
	if vec {
		a = a.Ptr(part)
	}
	a = a.F32(c.scale).F32(c.softcap).F32(c.bias).F32(c.m0).F32(c.m1).U32(c.nHeadLog2).U32(c.gqa).U32(c.r3)
	if vec {
		a = a.U32(chunk)
	}
	return a
}

// fattnRun launches the path fattnChoose picks; early, when not nil,
// reports whether an input may be read before the kernel waits for the
// kernels before it (readEarly; asked only by a kernel that can:
// fattn_dect's, of K and V).
func fattnRun(d Device, n *graph.Tensor, early func(t *graph.Tensor) bool) error {
	c, err := fattnArgs(n)
	if err != nil {
		return err
	}
	c.early, c.kv = early, [2]*graph.Tensor{n.Src(1), n.Src(2)}
	p := d.Props()
	path := fattnChoose(c.q.Ne[1], int64(c.gqa), c.k.Ne[0], c.v.Ne[0], p)
	kt, vt := n.Src(1).Type(), n.Src(2).Type()
	if path == fattnDect && fattnDectQuant(c, kt, vt) {
		return fattnRunDect(d, c, p, kt)
	}
	for _, kv := range []struct {
		desc *vendorapi.TensorDesc
		t    tensor.Type
	}{{&c.k, kt}, {&c.v, vt}} {
		if kv.t == tensor.F16 {
			continue
		}
		tmp, buf, err := contiguousTemp(d, tensor.F16, kv.desc.Ne)
		if err != nil {
			return err
		}
		defer buf.Free()
		if kv.t.IsQuantized() {
			err = dequantize(d, tmp, "f16", *kv.desc, kv.t, 0)
		} else {
			err = copyTensor(d, tmp, tensor.F16, *kv.desc, kv.t)
		}
		if err != nil {
			return err
		}
		*kv.desc = tmp
		c.kv[0], c.kv[1] = nil, nil // a converted input is a temporary: after a conversion nothing is read early
	}
	if c.k.Data%16 != 0 || c.v.Data%16 != 0 {
		return fmt.Errorf("k and v data must be 16-byte aligned")
	}
	switch path {
	case fattnMMA:
		if useFattn90(c, p) {
			return fattnRun90(d, c)
		}
		return fattnRunMMA(d, c)
	case fattnDect:
		return fattnRunDect(d, c, p, tensor.F16)
	case fattnDec:
		return fattnRunDec(d, c, p.SMs)
	}
	return fattnRunVec(d, c, p.SMs)
}

// fattnVecGeometry is the vector kernel's launch for a head size, nq query
// columns, the GQA ratio, nhkv kv heads, ne3 batches, nkv positions, sms
// multiprocessors and the most rows a block the kernel is built for
// (maxRows, 4 or 8): rows per block (4, or 8 for more than 4 rows when
// maxRows allows), the grid (KV chunks, row groups,
// kv heads × batches) and the chunk length (a multiple of the 64-position
// tile). Chunks split the KV sequence so that about 4 blocks run per
// multiprocessor even for one query (flash-decoding).
func fattnVecGeometry(nq, gqa, nhkv, ne3, nkv int64, sms int, maxRows int64) (rows int64, grid vendorapi.Dim3, chunk int64) {
	const tile = 64
	rows = 4
	if gqa*nq > 4 && maxRows >= 8 {
		rows = 8
	}
	groups := (gqa*nq + rows - 1) / rows
	nchunks, chunk := fattnChunks(nkv, groups*nhkv*ne3, int64(4*max(sms, 1)), math.MaxInt64)
	return rows, vendorapi.Dim3{X: uint32(nchunks), Y: uint32(groups), Z: uint32(nhkv * ne3)}, chunk
}

// fattnChunks splits nkv positions into chunks of whole 64-position tiles
// so that, with base blocks a chunk, about target blocks run, at most
// maxChunks chunks: their count (none empty) and length.
func fattnChunks(nkv, base, target, maxChunks int64) (nchunks, chunk int64) {
	const tile = 64
	tiles := max((nkv+tile-1)/tile, 1)
	nchunks = min(max((target+base-1)/base, 1), tiles, maxChunks)
	chunk = (tiles + nchunks - 1) / nchunks * tile
	return max((nkv+chunk-1)/chunk, 1), chunk
}

func fattnRunVec(d Device, c fattnCall, sms int) error {
	dim := c.k.Ne[0]
	// The 576/512 kernel is built for 4 rows a block only (8 would spill:
	// 576-wide queries and 512-wide accumulators in registers).
	mla := fattnMLA(dim, c.v.Ne[0])
	maxRows := int64(8)
	if mla {
		maxRows = 4
	}
	rows, grid, chunk := fattnVecGeometry(c.q.Ne[1], int64(c.gqa), c.k.Ne[2], c.q.Ne[3], c.k.Ne[1], sms, maxRows)
	name := fmt.Sprintf("fattn_vec_d%d_r%d", dim, rows)
	if mla {
		name = fmt.Sprintf("fattn_vec_d%dv%d_r%d", dim, c.v.Ne[0], rows)
	}
	nrows := c.q.Ne[1] * c.q.Ne[2] * c.q.Ne[3]
	return fattnRunSplit(d, c, name, grid, chunk, 0, nrows, "fattn_combine", vendorapi.Dim3{X: uint32(nrows)}, false)
}

// fattnRunSplit launches the split kernel name of 128-thread blocks with
// shared bytes of dynamic shared memory on grid, KV chunks of chunk
// positions along x: with one chunk it writes dst;
// with several, partials [max, sum, acc[D]] of nrows output rows go to pool
// scratch and the 128-thread kernel combine merges them on combineGrid.
// A one-query kernel (dec) takes the device's tile counters after its
// arguments, a word a tile of grid y × z (kv heads × batches): with them
// the last block of each tile merges the tile's chunks itself and combine
// is not launched; with 0 (one chunk, or no counters) it does not merge.
func fattnRunSplit(d Device, c fattnCall, name string, grid vendorapi.Dim3, chunk int64, shared uint32, nrows int64,
	combine string, combineGrid vendorapi.Dim3, dec bool) error {
	block := vendorapi.Dim3{X: 128}
	var counters vendorapi.DevicePtr
	if dec && grid.X > 1 {
		counters = tileCounters(d, int64(grid.Y)*int64(grid.Z))
	}
	args := func(part vendorapi.DevicePtr) *vendorapi.Args {
		a := c.args(d, true, part, uint32(chunk))
		if dec {
			a = a.Ptr(counters)
		}
		if c.dect {
			a = a.I32(c.earlyBits())
		}
		return a
	}
	if grid.X == 1 {
		return launchShared(d, name, grid, block, shared, args(0))
	}
	part, err := d.Pool().Alloc(uint64(int64(grid.X) * nrows * (c.v.Ne[0] + 2) * 4))
	if err != nil {
		return err
	}
	defer part.Free()
	if err := launchShared(d, name, grid, block, shared, args(part.Ptr)); err != nil {
		return err
	}
	if counters != 0 {
		return nil
	}
	a := d.Args().Tensor(c.dst).Ptr(part.Ptr).Ptr(c.sinks).U32(grid.X).U32(uint32(nrows))
	return launch(d, combine, combineGrid, block, 0, a)
}

// fattnDecGeometry is the decode kernel's launch for GQA ratio gqa, nhkv kv
// heads, ne3 batches, nkv positions and sms multiprocessors: its r (1, 4 or
// 8 q heads a block), the grid (KV chunks, kv heads, batches) and the chunk
// length (a multiple of 64). Chunks split the KV sequence so that one wave
// of 128-thread blocks fills every multiprocessor at the kernel's
// occupancy (sm_90 registers: r1 75, r4 152, r8 255 a thread, so 4, 3 and
// 2 blocks; the H200 experiment's register-prefetch kernel ran best with
// one full wave), at most fattnDecMaxChunks of them.
func fattnDecGeometry(gqa, nhkv, ne3, nkv int64, sms int) (r int64, grid vendorapi.Dim3, chunk int64) {
	var occ int64
	switch {
	case gqa == 1:
		r, occ = 1, 4
	case gqa <= 4:
		r, occ = 4, 3
	default:
		r, occ = 8, 2
	}
	nchunks, chunk := fattnChunks(nkv, nhkv*ne3, occ*int64(max(sms, 1)), fattnDecMaxChunks)
	return r, vendorapi.Dim3{X: uint32(nchunks), Y: uint32(nhkv), Z: uint32(ne3)}, chunk
}

func fattnRunDec(d Device, c fattnCall, sms int) error {
	r, grid, chunk := fattnDecGeometry(int64(c.gqa), c.k.Ne[2], c.q.Ne[3], c.k.Ne[1], sms)
	return fattnRunDecode(d, c, fmt.Sprintf("fattn_dec_d%d_r%d", c.k.Ne[0], r), grid, chunk, 0)
}

// fattnRunDecode launches the one-query kernel name (fattn_dec or
// fattn_dect) with shared bytes of dynamic shared memory on grid; its
// chunks merged by the last block of each tile (kv head, batch) where the
// device has tile counters, else by fattn_dec_combine.
func fattnRunDecode(d Device, c fattnCall, name string, grid vendorapi.Dim3, chunk int64, shared int) error {
	nrows := c.q.Ne[2] * c.q.Ne[3]
	return fattnRunSplit(d, c, name, grid, chunk, uint32(shared), nrows, "fattn_dec_combine",
		vendorapi.Dim3{X: uint32(nrows), Y: uint32((c.k.Ne[0] + 31) / 32)}, true)
}

// fattnDectGeometry is the tensor-core decode kernel's launch for GQA ratio
// gqa, nhkv kv heads, ne3 batches, nkv positions, sms multiprocessors,
// optin bytes of shared memory a block may opt in to, shared bytes a
// block uses and the most blocks a multiprocessor is planned for (maxOcc,
// fattnDectBlocks: at most what its registers hold):
// its r (8 or 16 rows), the grid (KV chunks, kv heads, batches) and the
// chunk length (a multiple of 64). Chunks split the sequence so that one
// wave of blocks fills every multiprocessor at the occupancy its shared
// memory allows (a multiprocessor has about optin + 1 KiB, 1 KiB of it
// reserved a block; at most maxOcc blocks), or waves such waves
// (TERNION_FATTN_DEC_WAVES: shorter chunks, a multiprocessor taking the
// next block as one ends), at most fattnDecMaxChunks of them.
func fattnDectGeometry(gqa, nhkv, ne3, nkv int64, sms, optin, shared, maxOcc, waves int) (r int64, grid vendorapi.Dim3, chunk int64) {
	r = 8
	if gqa > 8 {
		r = 16
	}
	occ := int64(min(max((optin+1024)/(shared+1024), 1), maxOcc))
	nchunks, chunk := fattnChunks(nkv, nhkv*ne3, occ*int64(max(sms, 1))*int64(max(waves, 1)), fattnDecMaxChunks)
	return r, vendorapi.Dim3{X: uint32(nchunks), Y: uint32(nhkv), Z: uint32(ne3)}, chunk
}

// fattnDectMaxOcc is the most fattn_dect blocks of K/V type kv a
// multiprocessor's registers hold (sm_90, 128 threads a block: f16 uses
// 110 (d64) to 254 (d256) registers a thread, so shared memory is the
// bound; q8_0/q4_0 195-236 at d128, so 2 blocks).
func fattnDectMaxOcc(kv tensor.Type) int {
	if kv.IsQuantized() {
		return 2
	}
	return 4
}

// fattnDectBlocks is the most fattn_dect blocks of K/V type kv a
// multiprocessor its chunks are planned for: blocks
// (TERNION_FATTN_DEC_BLOCKS) where that is set (> 0), else one for f16 K/V
// and what registers hold (fattnDectMaxOcc) for quantized K/V; never more
// than fattnDectMaxOcc. On the H200 (bench/README.md, session 23) one block
// a multiprocessor ran 14 of the 15 f16 one-query cases 1-26 % faster than
// the 2-4 that fit (fewer, longer chunks: DRAM streams as fast once
// started, fewer partials to merge; the decode goal 24.07 against 25.06
// µs), hsk 64 MHA at kv 16384 7 % slower; q8_0/q4_0 K/V, whose expansion
// needs the warps, 19-30 % slower.
func fattnDectBlocks(kv tensor.Type, blocks int) int {
	switch {
	case blocks > 0:
		return min(blocks, fattnDectMaxOcc(kv))
	case kv.IsQuantized():
		return fattnDectMaxOcc(kv)
	}
	return 1
}

// fattnRunDect launches fattn_dect for K/V of type kv (f16, or read as
// stored: q8_0, q4_0), its chunks merged as fattnRunDecode says.
func fattnRunDect(d Device, c fattnCall, p vendorapi.Props, kv tensor.Type) error {
	dim := c.k.Ne[0]
	shared := fattnDectShared(dim, kv, p.CC)
	waves, _, err := switches.Get(nil, switches.FattnDecWaves)
	if err != nil {
		return err
	}
	blocks, _, err := switches.Get(nil, switches.FattnDecBlocks)
	if err != nil {
		return err
	}
	r, grid, chunk := fattnDectGeometry(int64(c.gqa), c.k.Ne[2], c.q.Ne[3], c.k.Ne[1], p.SMs, p.SharedMemPerBlockOptin, shared,
		fattnDectBlocks(kv, blocks), waves)
	name := fmt.Sprintf("fattn_dect_d%d_r%d", dim, r)
	if kv.IsQuantized() {
		name += "_" + kv.String()
	}
	c.dect = true
	return fattnRunDecode(d, c, name, grid, chunk, shared)
}

// fattnMMABytes is the shared memory of the mma kernel with warps warps (16
// queries each) for head size dim: its tiles (Q, a row of dim+8 halves a
// query; one K and one V tile of 64 such rows) and its mask tile (a row of
// 72 halves a query).
func fattnMMABytes(dim, warps int64) (tiles, mask int64) {
	bq := 16 * warps
	return (bq + 2*64) * (dim + 8) * 2, bq * 72 * 2
}

// fattnMMAShared is the dynamic shared memory the mma kernel with warps
// warps is launched with for head size dim on a device of optin bytes a
// block: its tiles and the mask tile, which above head size 128 only where
// it fits (the kernel reads the mask from global memory without it: at 256,
// 4 warps, on the 99 KiB of sm_86 and sm_89; up to 128 the kernel always has
// it, 61 KiB in all).
func fattnMMAShared(dim, warps int64, optin int) uint32 {
	tiles, mask := fattnMMABytes(dim, warps)
	if dim <= 128 || tiles+mask <= int64(optin) {
		return uint32(tiles + mask)
	}
	return uint32(tiles)
}

// fattnMMAFits reports whether the 4-warp mma kernel's tiles fit a block's
// opt-in shared memory on a device of props p (every arch with mma.sync has
// room for head sizes up to 256).
func fattnMMAFits(dim int64, p vendorapi.Props) bool {
	return int(fattnMMAShared(dim, 4, p.SharedMemPerBlockOptin)) <= p.SharedMemPerBlockOptin
}

// fattnMMAWarps is the mma kernel's warps a block for head size dim: 8
// (fattn_mma_w8, built for 256) under TERNION_FATTN_MMA8 when the device's
// opt-in shared memory holds its tiles with the mask tile, else 4.
func fattnMMAWarps(dim int64, p vendorapi.Props, env switches.Lookup) int64 {
	tiles, mask := fattnMMABytes(dim, 8)
	if dim == 256 && switches.On(env, switches.FattnMMA8) && tiles+mask <= int64(p.SharedMemPerBlockOptin) {
		return 8
	}
	return 4
}

func fattnRunMMA(d Device, c fattnCall) error {
	dim := c.k.Ne[0]
	warps := fattnMMAWarps(dim, d.Props(), nil)
	bq := 16 * warps
	name := fmt.Sprintf("fattn_mma_d%d", dim)
	if warps != 4 {
		name = fmt.Sprintf("fattn_mma_w%d_d%d", warps, dim)
	}
	grid := vendorapi.Dim3{X: uint32((c.q.Ne[1] + bq - 1) / bq), Y: uint32(c.q.Ne[2]), Z: uint32(c.q.Ne[3])}
	return launchShared(d, name, grid, vendorapi.Dim3{X: uint32(32 * warps)}, fattnMMAShared(dim, warps, d.Props().SharedMemPerBlockOptin),
		c.args(d, false, 0, 0))
}

// fattn90Queries and fattn90Threads are kernels.Fattn90Queries and
// Fattn90Threads (core may not import kernels; a test keeps them equal).
const (
	fattn90Queries = 128
	fattn90Threads = 256
)

// fattn90Shared is fattn90_d{dim}'s dynamic shared memory
// (kernels.Fattn90Shared).
func fattn90Shared(dim int64) int64 { return 256*dim + 4*128*dim + 2*fattn90Queries*128 + 1024 }

// packedAligned reports whether t's elements (elem bytes) are packed along
// dim 0 and its data and strides aligned to n bytes (aligned).
func packedAligned(t vendorapi.TensorDesc, elem, n int64) bool {
	return t.Nb[0] == elem && aligned(t, n)
}

// useFattn90 reports whether the prefill of call c (which fattnChoose
// sent to the mma kernel; K and V f16 by now) runs fattn90 on a device of
// props p: head size 128 or 256 for both K and V; Q rows (f32), K and V
// rows and mask rows (f16) starting 16-byte aligned and dst rows 8-byte
// aligned (the kernel's 16-byte copies and loads, 8-byte stores); its shared
// memory within the device's opt-in limit; a device that builds sm_90a code
// (Props.ArchSpecific: compute capability 9.0 and NVRTC 12 or later; cc 0 is
// the host device, which runs every kernel); unless TERNION_NO_FATTN90.
func useFattn90(c fattnCall, p vendorapi.Props) bool {
	dim := c.k.Ne[0]
	return (dim == 128 || dim == 256) && c.v.Ne[0] == dim && packedAligned(c.q, 4, 16) && packedAligned(c.k, 2, 16) &&
		packedAligned(c.v, 2, 16) && (c.mask.Data == 0 || packedAligned(c.mask, 2, 16)) && packedAligned(c.dst, 4, 8) &&
		fattn90Shared(dim) <= int64(p.SharedMemPerBlockOptin) && !switches.On(nil, switches.NoFattn90) &&
		(p.CC == 0 || slices.Contains(p.ArchSpecific, sm90a))
}

// fattnRun90 launches fattn90_d{dim} as useFattn90 allows: one block a
// fattn90Queries queries of a q head and batch.
func fattnRun90(d Device, c fattnCall) error {
	dim := c.k.Ne[0]
	grid := vendorapi.Dim3{X: uint32((c.q.Ne[1] + fattn90Queries - 1) / fattn90Queries), Y: uint32(c.q.Ne[2]), Z: uint32(c.q.Ne[3])}
	return launchShared(d, fmt.Sprintf("fattn90_d%d", dim), grid, vendorapi.Dim3{X: fattn90Threads}, uint32(fattn90Shared(dim)),
		c.args(d, false, 0, 0))
}
