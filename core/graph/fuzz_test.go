package graph

import (
	"errors"
	"testing"

	"github.com/ternion/ternion/core/tensor"
)

// FuzzBuild drives the op constructors with arbitrary shapes, types and
// operands: nothing panics, a failure is an ErrInvalidOp error from Build,
// and every graph that builds has a valid allocation plan.
func FuzzBuild(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})
	f.Add([]byte{200, 3, 3, 1, 7, 9, 2, 0, 0, 0, 250, 17, 4, 4, 4})
	f.Fuzz(func(t *testing.T, prog []byte) {
		ctx := NewContext()
		next := func() int {
			if len(prog) == 0 {
				return 0
			}
			b := prog[0]
			prog = prog[1:]
			return int(b)
		}
		types := tensor.Types()
		dim := func() int64 { return int64(next()%9) - 1 } // -1..7: negative and zero sizes too
		pool := []*Tensor{ctx.Empty(tensor.F32, 4, 4)}
		pick := func() *Tensor {
			if next()%17 == 0 {
				return nil
			}
			return pool[next()%len(pool)]
		}
		for len(prog) > 0 && len(pool) < 64 {
			var n *Tensor
			switch next() % 14 {
			case 0:
				n = ctx.Empty(types[next()%len(types)], dim(), dim(), dim())
			case 1:
				n = pick().Add(pick())
			case 2:
				n = pick().Mul(pick())
			case 3:
				n = pick().MulMat(pick())
			case 4:
				n = pick().Scale(float32(next()))
			case 5:
				n = pick().Cpy(pick())
			case 6:
				n = pick().Cont()
			case 7:
				n = pick().Reshape(dim(), dim())
			case 8:
				n = pick().Permute(next()%5, next()%5, next()%5, next()%5)
			case 9:
				n = pick().Transpose()
			case 10:
				n = pick().View(int64(next()), []int64{dim(), dim()}, []int64{int64(next())})
			case 11:
				n = pick().Cast(types[next()%len(types)])
			case 12:
				n = pick().ContShape(dim(), dim())
			default:
				n = ctx.FromFloats(make([]float32, 16), 4, 4)
			}
			pool = append(pool, n)
		}
		g, err := ctx.Build(pool[len(pool)-1])
		if err != nil {
			if !errors.Is(err, ErrInvalidOp) {
				t.Fatalf("Build: %v does not match ErrInvalidOp", err)
			}
			return
		}
		p, err := g.Plan(AllocOptions{})
		if err != nil {
			t.Fatalf("Plan of a graph that built: %v", err)
		}
		checkPlan(t, g, p)
	})
}
