package optest

import "github.com/ternion/ternion/core/tensor"

// cases_split.go: MUL_MAT cases with enough rows to spread over several
// devices when src0 is split (`ternion ops test --split`: the host device
// rounds split boundaries to 64 rows, a GPU to its mmq tile height), src1
// batches of 1, 7, 128 and 300 columns (quantized weights: 1, 7, 300) crossing the row split's 128-column
// chunks and the peer-access batch limit. Unsplit they are ordinary cases.

func init() { register(splitTests, nil) }

func splitTests() []Case {
	var out []Case
	for _, ta := range floatTypes {
		for _, n := range []int64{1, 7, 128, 300} {
			out = append(out, mulMatCase(ta, tensor.F32, 320, n, 64, [2]int64{1, 1}, [2]int64{1, 1}, [4]int{0, 1, 2, 3}))
		}
	}
	// Quantized weights: the mmvq row step (n ≤ 8) and dequantize + BLAS.
	for _, ta := range []tensor.Type{tensor.Q4_0, tensor.Q8_0, tensor.Q4_K} {
		for _, n := range []int64{1, 7, 300} {
			out = append(out, mulMatCase(ta, tensor.F32, 320, n, 256, [2]int64{1, 1}, [2]int64{1, 1}, [4]int{0, 1, 2, 3}))
		}
	}
	return out
}
