package host

import (
	"encoding/binary"
	"fmt"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"

	"github.com/ternion/ternion/internal/half"
	"github.com/ternion/ternion/vendorapi"
)

type spanFunc func(what string, dev int, p vendorapi.DevicePtr, size, align uint64) ([]byte, *vendorapi.Error)

// operand is one gemm matrix as stored: bytes from its first element to its
// last, elements of es bytes, matrices of a strided batch stride elements apart.
type operand struct {
	name   string
	ptr    vendorapi.DevicePtr
	es     uint64 // element size
	bytes  uint64
	stride int64
}

// operands returns A, B and C of g, which passed Validate.
func operands(g *vendorapi.Gemm) [3]operand {
	a, b, c := g.Extents(1)
	return [3]operand{
		{"A", g.A, uint64(g.AType.Size()), a, g.StrideA},
		{"B", g.B, uint64(g.BType.Size()), b, g.StrideB},
		{"C", g.C, uint64(g.CType.Size()), c, g.StrideC},
	}
}

// gemmScalars returns alpha and beta as the gemm uses them: rounded to half
// for Compute16F.
func gemmScalars(g *vendorapi.Gemm) (alpha, beta float32) {
	if g.Compute == vendorapi.Compute16F {
		return half.F16ToF32(half.F16FromF32(g.Alpha)), half.F16ToF32(half.F16FromF32(g.Beta))
	}
	return g.Alpha, g.Beta
}

// prepareGemm resolves a gemm node's matrices, or a batched gemm's pointer
// arrays: all of them, read or not, as the GPU shim checks them (A and B are
// read only when K > 0 and alpha ≠ 0). Pointer arrays are read only when
// exec is set, and then only those of matrices that are read. The caller
// holds memMu.
func (d *Driver) prepareGemm(n *node, exec bool, dspan spanFunc) (func() error, *vendorapi.Error) {
	g := n.gemm
	batches := 1
	if n.kind != nodeGemm {
		batches = g.BatchCount
	}
	if g.M == 0 || g.N == 0 || batches == 0 {
		return nil, nil
	}
	alpha, beta := gemmScalars(&g)
	readAB := g.K > 0 && alpha != 0
	ops := operands(&g)
	used := func(i int) bool { return i == 2 || readAB }
	var mem [3][]byte
	var err *vendorapi.Error
	switch n.kind {
	case nodeGemm:
		for i, o := range ops {
			if mem[i], err = dspan(o.name, n.dev, o.ptr, o.bytes, o.es); err != nil {
				return nil, err
			}
		}
		return func() error { gemmOne(&g, alpha, beta, mem[0], mem[1], mem[2]); return nil }, nil
	case nodeGemmStrided:
		a, b, c := g.Extents(batches) // Validate refused negative strides and overflowing extents
		for i, total := range [3]uint64{a, b, c} {
			if mem[i], err = dspan(ops[i].name, n.dev, ops[i].ptr, total, ops[i].es); err != nil {
				return nil, err
			}
		}
		return func() error {
			var m [3][]byte
			for b := range uint64(batches) {
				for i, o := range ops {
					if used(i) {
						off := b * uint64(o.stride) * o.es
						m[i] = mem[i][off : off+o.bytes]
					}
				}
				gemmOne(&g, alpha, beta, m[0], m[1], m[2])
			}
			return nil
		}, nil
	}
	// nodeGemmBatched: A, B and C are arrays of batches device pointers.
	for i, o := range ops {
		if mem[i], err = dspan(o.name+" pointer array", n.dev, o.ptr, uint64(batches)*8, 8); err != nil {
			return nil, err
		}
	}
	if !exec {
		return nil, nil
	}
	mats := make([][3][]byte, batches)
	for b := range mats {
		for i, o := range ops {
			if !used(i) {
				continue
			}
			p := vendorapi.DevicePtr(binary.LittleEndian.Uint64(mem[i][8*b:]))
			what := fmt.Sprintf("%s[%d]", o.name, b)
			if mats[b][i], err = dspan(what, n.dev, p, o.bytes, o.es); err != nil {
				return nil, err
			}
		}
	}
	return func() error {
		for _, m := range mats {
			gemmOne(&g, alpha, beta, m[0], m[1], m[2])
		}
		return nil
	}, nil
}

// gemmOne runs one column-major gemm on resolved matrices (a and b nil when
// not read). gonum is row-major: a column-major M×N C is a row-major N×M Cᵀ,
// so it computes Cᵀ = alpha*op(B)ᵀ*op(A)ᵀ + beta*Cᵀ.
func gemmOne(g *vendorapi.Gemm, alpha, beta float32, a, b, c []byte) {
	m, n, k := g.M, g.N, g.K
	cf, ldc := f32s(c), g.LDC
	ce := blasElem(g.CType)
	ci := func(i, j int) []byte { return c[int(ce.size)*(j*g.LDC+i):] } // element (i, j) of C
	if g.CType != vendorapi.F32 {
		// A dense float32 copy of C, column-major with ld = M.
		cf, ldc = make([]float32, m*n), m
		if beta != 0 {
			for j := range n {
				for i := range m {
					cf[j*m+i] = ce.load(ci(i, j))
				}
			}
		}
	}
	if k == 0 || alpha == 0 {
		for j := range n {
			col := cf[j*ldc : j*ldc+m]
			for i := range col {
				if beta == 0 {
					col[i] = 0
				} else {
					col[i] *= beta
				}
			}
		}
	} else {
		gonum.Implementation{}.Sgemm(transpose(g.TransB), transpose(g.TransA), n, m, k,
			alpha, toF32(b, g.BType), g.LDB, toF32(a, g.AType), g.LDA, beta, cf, ldc)
	}
	if g.CType != vendorapi.F32 {
		for j := range n {
			for i := range m {
				ce.store(ci(i, j), cf[j*m+i])
			}
		}
	}
}

func transpose(t bool) blas.Transpose {
	if t {
		return blas.Trans
	}
	return blas.NoTrans
}

// blasElem is the storage type of BLAS type t (which passed Validate).
func blasElem(t vendorapi.DataType) elemType { return elemTypes[t.String()] }

// toF32 returns b's elements of type t as float32s (a view for F32).
func toF32(b []byte, t vendorapi.DataType) []float32 {
	if t == vendorapi.F32 {
		return f32s(b)
	}
	e := blasElem(t)
	out := make([]float32, len(b)/int(e.size))
	for i := range out {
		out[i] = e.load(b[i*int(e.size):])
	}
	return out
}
