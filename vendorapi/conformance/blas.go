package conformance

import (
	"fmt"
	"testing"

	"github.com/ternion/ternion/internal/le"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/vendorapi"
)

// Gemm alpha and beta: not 1 and 0, and exact in every element type, so a
// Compute16F gemm (which converts them to half) has the same reference.
const (
	gemmAlpha = 1.25
	gemmBeta  = -0.5
)

// gemmTypes are the type combinations every vendor runs, with the NMSE
// (Σ(got−ref)²/Σref², ref in float64 on the same rounded inputs) each must
// stay under. With inputs in ±[1/16, 1] and k = 33:
//   - f32 output, f32 accumulation: the error is a few f32 roundings per
//     element, NMSE ~1e-14; 1e-8 leaves room for any summation order or
//     split-k but rejects TF32 or half accumulation (~1e-7 and worse).
//   - f16 output: rounding an f32 result to half is a relative error of at
//     most 2⁻¹¹ per element, so NMSE ≤ 2⁻²² ≈ 2.4e-7 (typically ~4e-8); 4e-7
//     rejects accumulating in half instead of f32 (≳4e-7 here, ~1e-6 typical).
//   - bf16 output: likewise NMSE ≤ 2⁻¹⁶ ≈ 1.5e-5 (typically ~2.5e-6); 2.5e-5
//     rejects accumulating in bfloat16 (≳3e-5 here).
//   - compute_16f: accumulating in half costs ~1e-6 at this k; 1e-3, as
//     loose as ggml allows half accumulation to be.
//
// A wrong transpose, leading dimension or stride gives NMSE of order 1.
var gemmTypes = []struct {
	a, c    vendorapi.DataType
	compute vendorapi.ComputeType
	maxNMSE float64
}{
	{vendorapi.F32, vendorapi.F32, vendorapi.Compute32F, 1e-8},
	{vendorapi.F16, vendorapi.F32, vendorapi.Compute32F, 1e-8},
	{vendorapi.F16, vendorapi.F16, vendorapi.Compute32F, 4e-7},
	{vendorapi.F16, vendorapi.F16, vendorapi.Compute16F, 1e-3},
	{vendorapi.BF16, vendorapi.F32, vendorapi.Compute32F, 1e-8},
	{vendorapi.BF16, vendorapi.BF16, vendorapi.Compute32F, 2.5e-5},
}

// gemmMode is which gemm entry point a case runs.
type gemmMode int

const (
	gemmSingle  gemmMode = iota // Gemm
	gemmStrided                 // GemmStridedBatched
	gemmPtrs                    // GemmBatched with device pointer arrays
)

// gemmCase is one gemm to run and check.
type gemmCase struct {
	m, n, k        int
	transA, transB bool
	a, c           vendorapi.DataType
	compute        vendorapi.ComputeType
	maxNMSE        float64
	mode           gemmMode
	batch          int
}

func (c gemmCase) String() string {
	op := func(tr bool) string {
		if tr {
			return "T"
		}
		return "N"
	}
	s := fmt.Sprintf("%v in %v out %v %s%s m=%d n=%d k=%d", c.a, c.c, c.compute, op(c.transA), op(c.transB), c.m, c.n, c.k)
	if c.mode != gemmSingle {
		s += fmt.Sprintf(" batch=%d", c.batch)
	}
	return s
}

// blas checks the BLAS handle, every gemm type combination and transpose,
// both batched forms, SetStream and the refusal of invalid gemms.
func (s *suite) blas(t *testing.T) {
	v, err := s.d.BLASVersion()
	require.NoError(t, err, "BLASVersion")
	require.NotEmpty(t, v, "BLASVersion")
	t.Logf("%s BLAS %s", s.d.Vendor(), v)

	s.eachDevice(t, func(t *testing.T, dev int) {
		st := s.stream(t, dev)
		h := s.blasHandle(t, st)
		assert.Equal(t, dev, h.Device, "BLASHandle.Device")

		t.Run("gemm", func(t *testing.T) {
			for _, ty := range gemmTypes {
				for _, tr := range [][2]bool{{false, false}, {true, false}, {false, true}, {true, true}} {
					c := gemmCase{m: 13, n: 7, k: 33, transA: tr[0], transB: tr[1], a: ty.a, c: ty.c,
						compute: ty.compute, maxNMSE: ty.maxNMSE, mode: gemmSingle, batch: 1}
					t.Run(c.String(), func(t *testing.T) { s.runGemm(t, h, st, c) })
				}
			}
			for _, sh := range [][3]int{{1, 5, 17}, {9, 1, 4}, {3, 4, 1}} {
				c := gemmCase{m: sh[0], n: sh[1], k: sh[2], transA: true, a: vendorapi.F32, c: vendorapi.F32,
					compute: vendorapi.Compute32F, maxNMSE: 1e-8, mode: gemmSingle, batch: 1}
				t.Run(c.String(), func(t *testing.T) { s.runGemm(t, h, st, c) })
			}
		})
		t.Run("strided batched gemm", func(t *testing.T) {
			for i, ty := range gemmTypes {
				c := gemmCase{m: 13, n: 7, k: 33, transA: i%2 == 1, transB: i%3 == 1, a: ty.a, c: ty.c,
					compute: ty.compute, maxNMSE: ty.maxNMSE, mode: gemmStrided, batch: 3}
				t.Run(c.String(), func(t *testing.T) { s.runGemm(t, h, st, c) })
			}
		})
		t.Run("batched gemm with device pointer arrays", func(t *testing.T) {
			for i, ty := range gemmTypes {
				c := gemmCase{m: 13, n: 7, k: 33, transA: i%2 == 0, transB: i%3 == 2, a: ty.a, c: ty.c,
					compute: ty.compute, maxNMSE: ty.maxNMSE, mode: gemmPtrs, batch: 3}
				t.Run(c.String(), func(t *testing.T) { s.runGemm(t, h, st, c) })
			}
		})
		t.Run("set stream moves the handle", func(t *testing.T) {
			st2 := s.stream(t, dev)
			require.NoError(t, s.d.BLASSetStream(h, st2), "BLASSetStream")
			c := gemmCase{m: 13, n: 7, k: 33, transB: true, a: vendorapi.F16, c: vendorapi.F32,
				compute: vendorapi.Compute32F, maxNMSE: 1e-8, mode: gemmSingle, batch: 1}
			s.runGemm(t, h, st2, c) // synchronizes st2 only
			require.NoError(t, s.d.BLASSetStream(h, st), "BLASSetStream back")
		})
		t.Run("invalid gemms are refused", func(t *testing.T) { s.invalidGemm(t, h, st) })
	})
}

// gemmLayout is where one case's matrices live: leading dimensions, batch
// strides and element counts, with pre elements of sentinel before C.
type gemmLayout struct {
	lda, ldb, ldc          int
	sizeA, sizeB, sizeC    int // one matrix, elements
	strideA, strideB, strC int // between batches, elements
	totalA, totalB, totalC int
	pre                    int
}

func layout(c gemmCase) gemmLayout {
	rowsA, colsA := c.m, c.k
	if c.transA {
		rowsA, colsA = c.k, c.m
	}
	rowsB, colsB := c.k, c.n
	if c.transB {
		rowsB, colsB = c.n, c.k
	}
	l := gemmLayout{lda: rowsA + 3, ldb: rowsB + 2, ldc: c.m + 1, pre: 8}
	l.sizeA, l.sizeB, l.sizeC = l.lda*colsA, l.ldb*colsB, l.ldc*c.n
	l.strideA, l.strideB, l.strC = l.sizeA+5, l.sizeB+3, l.sizeC+7
	l.totalA = l.strideA*(c.batch-1) + l.sizeA
	l.totalB = l.strideB*(c.batch-1) + l.sizeB
	l.totalC = l.pre + l.strC*(c.batch-1) + l.sizeC + 8
	return l
}

// runGemm runs c on h (bound to st), synchronizes st and checks C against a
// float64 reference and every element outside the results against its
// value before the call.
func (s *suite) runGemm(t *testing.T, h vendorapi.BLASHandle, st vendorapi.Stream, c gemmCase) {
	r := newRand(t)
	dev := st.Device
	l := layout(c)
	aBytes := encode(c.a, randF32(r, l.totalA))
	bBytes := encode(c.a, randF32(r, l.totalB))
	cBefore := encode(c.c, randF32(r, l.totalC))
	A, B, C := decode(c.a, aBytes), decode(c.a, bBytes), decode(c.c, cBefore)
	pa, pb, pc := s.upload(t, dev, aBytes), s.upload(t, dev, bBytes), s.upload(t, dev, cBefore)
	esA, esC := uint64(c.a.Size()), uint64(c.c.Size())

	g := vendorapi.Gemm{
		TransA: c.transA, TransB: c.transB, M: c.m, N: c.n, K: c.k, Alpha: gemmAlpha, Beta: gemmBeta,
		A: pa, AType: c.a, LDA: l.lda, B: pb, BType: c.a, LDB: l.ldb,
		C: pc.Add(uint64(l.pre) * esC), CType: c.c, LDC: l.ldc, Compute: c.compute,
	}
	var err error
	switch c.mode {
	case gemmSingle:
		err = s.d.Gemm(h, g)
	case gemmStrided:
		g.StrideA, g.StrideB, g.StrideC, g.BatchCount = int64(l.strideA), int64(l.strideB), int64(l.strC), c.batch
		err = s.d.GemmStridedBatched(h, g)
	case gemmPtrs:
		var as, bs, cs []uint64
		for i := range c.batch {
			as = append(as, uint64(g.A.Add(uint64(i*l.strideA)*esA)))
			bs = append(bs, uint64(g.B.Add(uint64(i*l.strideB)*esA)))
			cs = append(cs, uint64(g.C.Add(uint64(i*l.strC)*esC)))
		}
		g.A, g.B, g.C = s.upload(t, dev, le.FromU64(as)), s.upload(t, dev, le.FromU64(bs)), s.upload(t, dev, le.FromU64(cs))
		g.BatchCount = c.batch
		err = s.d.GemmBatched(h, g)
	}
	require.NoError(t, err, "gemm %v", c)
	s.sync(t, st)
	gotBytes := s.download(t, dev, pc, len(cBefore))
	got := decode(c.c, gotBytes)

	// Untouched elements must keep their bytes: build the expected buffer
	// from before with the result elements taken from got.
	want := append([]byte(nil), cBefore...)
	var gotRes, ref []float64
	for bi := range c.batch {
		offA, offB, offC := bi*l.strideA, bi*l.strideB, l.pre+bi*l.strC
		for j := range c.n {
			for i := range c.m {
				var sum float64
				for p := range c.k {
					ia, ib := offA+i+p*l.lda, offB+p+j*l.ldb
					if c.transA {
						ia = offA + p + i*l.lda
					}
					if c.transB {
						ib = offB + j + p*l.ldb
					}
					sum += A[ia] * B[ib]
				}
				idx := offC + i + j*l.ldc
				ref = append(ref, gemmAlpha*sum+gemmBeta*C[idx])
				gotRes = append(gotRes, got[idx])
				copy(want[idx*int(esC):(idx+1)*int(esC)], gotBytes[idx*int(esC):])
			}
		}
	}
	checkBytes(t, "C outside the results (ldc padding, batch gaps, sentinels)", gotBytes, want)
	checkBytes(t, "A is only read", s.download(t, dev, pa, len(aBytes)), aBytes)
	checkBytes(t, "B is only read", s.download(t, dev, pb, len(bBytes)), bBytes)
	e := NMSE(gotRes, ref)
	if e > c.maxNMSE {
		t.Errorf("gemm %v: NMSE %.3g > %.3g (C[0] = %v, reference %v)", c, e, c.maxNMSE, gotRes[0], ref[0])
	}
}

// f32Gemm is a valid f32 Gemm of one batch, C = gemmAlpha*A*B + gemmBeta*C,
// with A (m×k), B (k×n) and C (m×n) at pa, pb and pc, each packed
// column-major.
func f32Gemm(m, n, k int, pa, pb, pc vendorapi.DevicePtr) vendorapi.Gemm {
	return vendorapi.Gemm{M: m, N: n, K: k, Alpha: gemmAlpha, Beta: gemmBeta,
		A: pa, AType: vendorapi.F32, LDA: m, B: pb, BType: vendorapi.F32, LDB: k,
		C: pc, CType: vendorapi.F32, LDC: m, Compute: vendorapi.Compute32F, BatchCount: 1}
}

// invalidGemm checks that bad gemms return ErrInvalidValue and write nothing.
func (s *suite) invalidGemm(t *testing.T, h vendorapi.BLASHandle, st vendorapi.Stream) {
	r := newRand(t)
	dev := st.Device
	const m, n, k = 13, 7, 33
	pa := s.upload(t, dev, le.FromF32(randF32(r, m*k)))
	pb := s.upload(t, dev, le.FromF32(randF32(r, k*n)))
	before := le.FromF32(randF32(r, m*n))
	pc := s.upload(t, dev, before)
	good := f32Gemm(m, n, k, pa, pb, pc)
	// GemmBatched gets real one-element pointer arrays, so that nothing but
	// the edit is wrong.
	pas, pbs, pcs := s.upload(t, dev, le.FromU64([]uint64{uint64(pa)})), s.upload(t, dev, le.FromU64([]uint64{uint64(pb)})), s.upload(t, dev, le.FromU64([]uint64{uint64(pc)}))
	for _, c := range []struct {
		name string
		edit func(g *vendorapi.Gemm)
	}{
		{"lda smaller than m", func(g *vendorapi.Gemm) { g.LDA = m - 1 }},
		{"lda smaller than k with A transposed", func(g *vendorapi.Gemm) { g.TransA = true; g.LDA = m }},
		{"ldb smaller than k", func(g *vendorapi.Gemm) { g.LDB = k - 1 }},
		{"ldc smaller than m", func(g *vendorapi.Gemm) { g.LDC = m - 1 }},
		{"negative size", func(g *vendorapi.Gemm) { g.N = -1 }},
		{"A and B of different types", func(g *vendorapi.Gemm) { g.BType = vendorapi.F16 }},
		{"compute_16f on f32", func(g *vendorapi.Gemm) { g.Compute = vendorapi.Compute16F }},
		{"f32 inputs with f16 output", func(g *vendorapi.Gemm) { g.CType = vendorapi.F16 }},
		{"unknown data type", func(g *vendorapi.Gemm) { g.AType, g.BType = 0, 0 }},
		{"unknown compute type", func(g *vendorapi.Gemm) { g.Compute = 0 }},
	} {
		g := good
		c.edit(&g)
		s.checkError(t, "Gemm with "+c.name, s.d.Gemm(h, g), dev, vendorapi.ErrInvalidValue)
		s.checkError(t, "GemmStridedBatched with "+c.name, s.d.GemmStridedBatched(h, g), dev, vendorapi.ErrInvalidValue)
		g.A, g.B, g.C = pas, pbs, pcs
		s.checkError(t, "GemmBatched with "+c.name, s.d.GemmBatched(h, g), dev, vendorapi.ErrInvalidValue)
	}
	g := good
	g.BatchCount = -1
	s.checkError(t, "GemmStridedBatched with a negative batch count", s.d.GemmStridedBatched(h, g), dev, vendorapi.ErrInvalidValue)
	g.A, g.B, g.C = pas, pbs, pcs
	s.checkError(t, "GemmBatched with a negative batch count", s.d.GemmBatched(h, g), dev, vendorapi.ErrInvalidValue)
	s.sync(t, st)
	checkBytes(t, "refused gemms wrote nothing", s.download(t, dev, pc, len(before)), before)

	// The handle still works.
	require.NoError(t, s.d.Gemm(h, good), "valid Gemm after the refused ones")
	s.sync(t, st)
}
