package ref

import (
	"fmt"
	"math"

	"github.com/ternion/ternion/core/graph"
	"github.com/ternion/ternion/core/tensor"
)

// unary.go: references of UNARY, SQR, SQRT, SIN, COS, LOG, CLAMP,
// LEAKY_RELU, GLU, ADD1 and ACC, from ggml's definitions in float64.

// unarySigmoid is σ(x) = 1/(1 + e^-x).
func unarySigmoid(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

// unaryGELUTanh is GELU with ggml's tanh approximation.
func unaryGELUTanh(x float64) float64 {
	return 0.5 * x * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(x+0.044715*x*x*x)))
}

// unaryGELUErf is the exact GELU, x·Φ(x).
func unaryGELUErf(x float64) float64 { return 0.5 * x * math.Erfc(-x/math.Sqrt2) }

func unaryHardSigmoid(x float64) float64 { return math.Max(0, math.Min(1, (x+3)/6)) }

// unaryRefs are the unary ops by ggml number.
var unaryRefs = map[graph.UnaryOp]func(x float64) float64{
	graph.UnaryAbs: math.Abs,
	graph.UnarySgn: func(x float64) float64 {
		if x == 0 {
			return 0
		}
		return math.Copysign(1, x)
	},
	graph.UnaryNeg: func(x float64) float64 { return -x },
	graph.UnaryStep: func(x float64) float64 {
		if x > 0 {
			return 1
		}
		return 0
	},
	graph.UnaryTanh: math.Tanh,
	graph.UnaryELU: func(x float64) float64 {
		if x > 0 {
			return x
		}
		return math.Exp(x) - 1
	},
	graph.UnaryRELU:        func(x float64) float64 { return math.Max(x, 0) },
	graph.UnarySigmoid:     unarySigmoid,
	graph.UnaryGELU:        unaryGELUTanh,
	graph.UnaryGELUQuick:   func(x float64) float64 { return x * unarySigmoid(1.702*x) },
	graph.UnarySILU:        func(x float64) float64 { return x * unarySigmoid(x) },
	graph.UnaryHardSwish:   func(x float64) float64 { return x * unaryHardSigmoid(x) },
	graph.UnaryHardSigmoid: unaryHardSigmoid,
	graph.UnaryExp:         math.Exp,
	graph.UnaryExpm1:       math.Expm1,
	graph.UnarySoftplus: func(x float64) float64 {
		if x > 20 {
			return x
		}
		return math.Log(1 + math.Exp(x))
	},
	graph.UnaryGELUErf: unaryGELUErf,
	graph.UnaryFloor:   math.Floor,
	graph.UnaryCeil:    math.Ceil,
	graph.UnaryRound:   math.Round,
	graph.UnaryTrunc:   math.Trunc,
}

// unaryGLURefs are the activations of the GLU ops.
var unaryGLURefs = map[graph.GLUOp]func(x float64) float64{
	graph.GLUReGLU:      unaryRefs[graph.UnaryRELU],
	graph.GLUGeGLU:      unaryGELUTanh,
	graph.GLUSwiGLU:     unaryRefs[graph.UnarySILU],
	graph.GLUGeGLUErf:   unaryGELUErf,
	graph.GLUGeGLUQuick: unaryRefs[graph.UnaryGELUQuick],
}

// unaryFunc is the element function of a one-operand node.
func unaryFunc(n *graph.Tensor) (func(x float64) float64, error) {
	p0, p1 := float64(n.ParamF32(0)), float64(n.ParamF32(1))
	switch n.Op() {
	case graph.OpUnary:
		if f := unaryRefs[n.UnaryOp()]; f != nil {
			return f, nil
		}
		return nil, fmt.Errorf("no reference for unary op %s", n.UnaryOp())
	case graph.OpSqr:
		return func(x float64) float64 { return x * x }, nil
	case graph.OpSqrt:
		return math.Sqrt, nil
	case graph.OpSin:
		return math.Sin, nil
	case graph.OpCos:
		return math.Cos, nil
	case graph.OpLog:
		return math.Log, nil
	case graph.OpClamp:
		return func(x float64) float64 { return math.Min(math.Max(x, p0), p1) }, nil
	case graph.OpLeakyRelu:
		return func(x float64) float64 {
			if x > 0 {
				return x
			}
			return x * p0
		}, nil
	}
	return nil, fmt.Errorf("%s is not a unary op", n.Op())
}

func init() {
	register(func(n *graph.Tensor, dst view, src func(int) (view, error)) error {
		a, err := src(0)
		if err != nil {
			return err
		}
		f, err := unaryFunc(n)
		if err != nil {
			return err
		}
		tensor.Each(dst.l.Ne, func(i [4]int64) { dst.set(i, f(a.get(i))) })
		return nil
	}, graph.OpUnary, graph.OpSqr, graph.OpSqrt, graph.OpSin, graph.OpCos, graph.OpLog, graph.OpClamp, graph.OpLeakyRelu)
	register(func(n *graph.Tensor, dst view, src func(int) (view, error)) error {
		a, err := src(0)
		if err != nil {
			return err
		}
		act := unaryGLURefs[n.GLUOp()]
		if act == nil {
			return fmt.Errorf("no reference for GLU op %s", n.GLUOp())
		}
		nc := dst.l.Ne[0]
		x, g := a, a
		var xo, gro int64 = 0, nc // element offsets of x and g along ne0
		if n.Src(1) != nil {
			if g, err = src(1); err != nil {
				return err
			}
			gro = 0
		} else if n.GLUSwapped() {
			xo, gro = nc, 0
		}
		tensor.Each(dst.l.Ne, func(i [4]int64) {
			ix, ig := i, i
			ix[0] += xo
			ig[0] += gro
			dst.set(i, act(x.get(ix))*g.get(ig))
		})
		return nil
	}, graph.OpGLU)
	register(func(n *graph.Tensor, dst view, src func(int) (view, error)) error {
		s, err := srcViews(src, 2)
		if err != nil {
			return err
		}
		b := s[1].get([4]int64{})
		tensor.Each(dst.l.Ne, func(i [4]int64) { dst.set(i, s[0].get(i)+b) })
		return nil
	}, graph.OpAdd1)
	register(func(n *graph.Tensor, dst view, src func(int) (view, error)) error {
		s, err := srcViews(src, 2)
		if err != nil {
			return err
		}
		a, b := s[0], s[1]
		tensor.Each(dst.l.Ne, func(i [4]int64) { dst.set(i, a.get(i)) })
		nb := [4]int64{4, int64(n.ParamI32(0)), int64(n.ParamI32(1)), int64(n.ParamI32(2))}
		off := int64(n.ParamI32(3))
		tensor.Each(b.l.Ne, func(j [4]int64) {
			pos := off + j[0]*nb[0] + j[1]*nb[1] + j[2]*nb[2] + j[3]*nb[3]
			k := unflat(pos/4, dst.l.Ne) // dst is contiguous f32
			dst.set(k, dst.get(k)+b.get(j))
		})
		return nil
	}, graph.OpAcc)
}
