package backend_test

import (
	"fmt"

	"github.com/ternion/ternion/core/backend"
	"github.com/ternion/ternion/core/graph"
	"github.com/ternion/ternion/core/tensor"
	_ "github.com/ternion/ternion/host" // the pure-Go device
)

// Example builds y = W·x + b on the host device and reads the result.
func Example() {
	be, err := backend.Open("host", 0, backend.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer be.Close()

	weights := graph.NewContext()
	w := weights.FromFloatsAs(tensor.F16, []float32{1, 2, 3, 4, 5, 6}, 3, 2) // 2 rows of 3
	if _, err := be.AllocTensors(w); err != nil {
		fmt.Println(err)
		return
	}

	// A forward pass: inputs and ops in a context of their own.
	ctx := graph.NewContext()
	x := ctx.FromFloats([]float32{1, 0, -1}, 3)
	bias := ctx.FromFloats([]float32{0.5, -0.5}, 2)
	y := w.MulMat(x).Add(bias).Scale(2)
	g, err := ctx.Build(y)
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := be.Compute(g); err != nil {
		fmt.Println(err)
		return
	}
	out, err := y.Floats()
	fmt.Println(out, err)
	// Output: [-3 -5] <nil>
}
