package conformance

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/internal/le"
	"github.com/ternion/ternion/vendorapi"
)

// gemmRules checks the memory rules of the gemms (matrices inside live
// memory of the handle's device, aligned to their element size, checked
// whether or not they are read) and the
// empty cases: M or N zero writes nothing, K zero scales C by beta, a batch
// count of zero runs nothing.
func (s *suite) gemmRules(t *testing.T) {
	if _, err := s.d.BLASVersion(); err != nil {
		t.Skipf("no BLAS: %v", err)
	}
	s.eachDevice(t, func(t *testing.T, dev int) {
		r := newRand(t)
		st := s.stream(t, dev)
		h := s.blasHandle(t, st)
		const m, n, k = 8, 4, 16
		av, bv, cv := randF32(r, m*k), randF32(r, k*n), randF32(r, m*n)
		pa, pb := s.upload(t, dev, le.FromF32(av)), s.upload(t, dev, le.FromF32(bv))
		cBefore := le.FromF32(cv)
		pc := s.upload(t, dev, cBefore)
		big := s.upload(t, dev, randBytes(r, 4*(m*k+1)))
		good := f32Gemm(m, n, k, pa, pb, pc)
		ptrs := func(p ...vendorapi.DevicePtr) vendorapi.DevicePtr {
			v := make([]uint64, len(p))
			for i := range p {
				v[i] = uint64(p[i])
			}
			return s.upload(t, dev, le.FromU64(v))
		}
		short := s.upload(t, dev, make([]byte, 8)) // a pointer array of one entry
		inval := vendorapi.ErrInvalidValue
		for _, c := range []struct {
			name string
			run  func(g vendorapi.Gemm) error
			edit func(g *vendorapi.Gemm)
		}{
			{"Gemm with C one element too short", s.gemmOne(h), func(g *vendorapi.Gemm) { g.C = pc.Add(4) }},
			{"Gemm with A one element too short", s.gemmOne(h), func(g *vendorapi.Gemm) { g.A = pa.Add(4) }},
			{"Gemm with a misaligned A", s.gemmOne(h), func(g *vendorapi.Gemm) { g.A = big.Add(2) }},
			{"Gemm with a misaligned C", s.gemmOne(h), func(g *vendorapi.Gemm) { g.C, g.M, g.LDC, g.N = pc.Add(2), m-1, m-1, 1 }},
			{"Gemm with a freed B", s.gemmOne(h), func(g *vendorapi.Gemm) { g.B = s.freedPtr(t, dev, 4*k*n) }},
			{"GemmStridedBatched reaching past C", s.gemmStrided(h), func(g *vendorapi.Gemm) { g.BatchCount, g.StrideC = 2, 1 }},
			{"GemmBatched with a pointer array too short", s.gemmPtrs(h), func(g *vendorapi.Gemm) {
				g.A, g.B, g.C, g.BatchCount = ptrs(pa, pa), ptrs(pb, pb), short, 2
			}},
			// A and B are checked even when alpha zero means they are not read.
			{"Gemm with alpha zero and a freed A", s.gemmOne(h), func(g *vendorapi.Gemm) { g.Alpha, g.A = 0, s.freedPtr(t, dev, 4*m*k) }},
			{"GemmStridedBatched with alpha zero and B one element too short", s.gemmStrided(h), func(g *vendorapi.Gemm) { g.Alpha, g.B = 0, pb.Add(4) }},
			{"GemmBatched with alpha zero and A's pointer array too short", s.gemmPtrs(h), func(g *vendorapi.Gemm) {
				g.Alpha, g.A, g.B, g.C, g.BatchCount = 0, short, ptrs(pb, pb), ptrs(pc, pc), 2
			}},
		} {
			g := good
			c.edit(&g)
			s.checkError(t, c.name, c.run(g), dev, inval)
		}
		s.sync(t, st)
		checkBytes(t, "refused gemms wrote nothing", s.download(t, dev, pc, 4*m*n), cBefore)

		for _, c := range []struct {
			name string
			run  func(g vendorapi.Gemm) error
			edit func(g *vendorapi.Gemm)
		}{
			{"Gemm with M zero", s.gemmOne(h), func(g *vendorapi.Gemm) { g.M = 0 }},
			{"Gemm with N zero", s.gemmOne(h), func(g *vendorapi.Gemm) { g.N = 0 }},
			{"GemmStridedBatched of zero batches", s.gemmStrided(h), func(g *vendorapi.Gemm) { g.BatchCount = 0 }},
			{"GemmBatched of zero batches", s.gemmPtrs(h), func(g *vendorapi.Gemm) { g.A, g.B, g.C, g.BatchCount = short, short, short, 0 }},
		} {
			g := good
			c.edit(&g)
			require.NoError(t, c.run(g), c.name)
		}
		s.sync(t, st)
		checkBytes(t, "empty gemms wrote nothing", s.download(t, dev, pc, 4*m*n), cBefore)

		g := good
		g.K = 0
		require.NoError(t, s.d.Gemm(h, g), "Gemm with K zero")
		s.sync(t, st)
		want := make([]float32, m*n)
		for i := range want {
			want[i] = gemmBeta * cv[i] // exact: beta is -1/2
		}
		checkBytes(t, "Gemm with K zero scales C by beta", s.download(t, dev, pc, 4*m*n), le.FromF32(want))
	})
}

// gemmOne, gemmStrided and gemmPtrs run one gemm entry point on h.
func (s *suite) gemmOne(h vendorapi.BLASHandle) func(vendorapi.Gemm) error {
	return func(g vendorapi.Gemm) error { return s.d.Gemm(h, g) }
}

func (s *suite) gemmStrided(h vendorapi.BLASHandle) func(vendorapi.Gemm) error {
	return func(g vendorapi.Gemm) error { return s.d.GemmStridedBatched(h, g) }
}

func (s *suite) gemmPtrs(h vendorapi.BLASHandle) func(vendorapi.Gemm) error {
	return func(g vendorapi.Gemm) error { return s.d.GemmBatched(h, g) }
}
