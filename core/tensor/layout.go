package tensor

import (
	"fmt"
	"math/bits"
)

// MaxDims is the number of dimensions of every tensor (ggml's GGML_MAX_DIMS).
const MaxDims = 4

// Layout is where a tensor's elements are, as ggml says it: the element type,
// Ne (elements along each of the four dimensions, innermost first) and Nb
// (bytes between neighbours along each dimension; for a quantized type Nb[0]
// is the block size in bytes and Nb[1] steps over whole rows of blocks).
type Layout struct {
	Type Type
	Ne   [MaxDims]int64
	Nb   [MaxDims]int64
}

// Contiguous returns the row-major layout of a tensor of type t and shape ne
// (1 to 4 dimensions; missing ones are 1), as ggml_new_tensor lays it out.
func Contiguous(t Type, ne ...int64) (Layout, error) {
	if !t.Valid() {
		return Layout{}, fmt.Errorf("tensor: unknown type %d", uint32(t))
	}
	if len(ne) == 0 || len(ne) > MaxDims {
		return Layout{}, fmt.Errorf("tensor: %d dimensions, want 1 to %d", len(ne), MaxDims)
	}
	l := Layout{Type: t, Ne: [MaxDims]int64{1, 1, 1, 1}}
	for i, n := range ne {
		if n < 0 {
			return Layout{}, fmt.Errorf("tensor: dimension %d is %d, negative", i, n)
		}
		l.Ne[i] = n
	}
	if l.Ne[0]%t.BlockSize() != 0 {
		return Layout{}, fmt.Errorf("tensor: ne[0] = %d is not a multiple of %s's block size %d", l.Ne[0], t, t.BlockSize())
	}
	// Every byte size must fit in an int64: check the product once.
	total, overflow := uint64(t.RowSize(l.Ne[0])), false
	for i := 1; i < MaxDims; i++ {
		hi, lo := bits.Mul64(total, uint64(l.Ne[i]))
		total, overflow = lo, overflow || hi != 0
	}
	if overflow || total > 1<<62 {
		return Layout{}, fmt.Errorf("tensor: %s %v is too large", t, l.Ne)
	}
	l.Nb = RowMajorStrides(t, l.Ne)
	return l, nil
}

// RowMajorStrides returns the byte strides of a contiguous tensor of type t
// and shape ne.
func RowMajorStrides(t Type, ne [MaxDims]int64) [MaxDims]int64 {
	var nb [MaxDims]int64
	nb[0] = t.BlockBytes()
	nb[1] = nb[0] * (ne[0] / t.BlockSize())
	for i := 2; i < MaxDims; i++ {
		nb[i] = nb[i-1] * ne[i-1]
	}
	return nb
}

// Elements is the number of elements (ggml_nelements).
func (l Layout) Elements() int64 { return l.Ne[0] * l.Ne[1] * l.Ne[2] * l.Ne[3] }

// Rows is the number of rows, the elements of dimensions 1 to 3 (ggml_nrows).
func (l Layout) Rows() int64 { return l.Ne[1] * l.Ne[2] * l.Ne[3] }

// RowSize is the number of bytes of one row of Ne[0] elements.
func (l Layout) RowSize() int64 { return l.Type.RowSize(l.Ne[0]) }

// Bytes is the extent of the tensor in memory, from its first byte to the
// end of its last element (ggml_nbytes); 0 for an empty tensor.
func (l Layout) Bytes() int64 {
	if l.Empty() {
		return 0
	}
	bs := l.Type.BlockSize()
	var n int64
	if bs == 1 {
		n = l.Type.BlockBytes()
		for i := range MaxDims {
			n += (l.Ne[i] - 1) * l.Nb[i]
		}
		return n
	}
	n = l.Ne[0] * l.Nb[0] / bs
	for i := 1; i < MaxDims; i++ {
		n += (l.Ne[i] - 1) * l.Nb[i]
	}
	return n
}

// Empty reports whether any dimension is 0 (ggml_is_empty).
func (l Layout) Empty() bool { return l.Ne[0] == 0 || l.Ne[1] == 0 || l.Ne[2] == 0 || l.Ne[3] == 0 }

// IsContiguous reports whether the elements are packed in row-major order
// (ggml_is_contiguous).
func (l Layout) IsContiguous() bool { return l.IsContiguousN(0) }

// IsContiguousN reports whether the tensor is contiguous apart from
// dimensions 1..n, which may have gaps (ggml_is_contiguous_1, _2 for n = 1,
// 2; n = 0 is IsContiguous).
func (l Layout) IsContiguousN(n int) bool {
	next := l.Type.BlockBytes()
	if l.Ne[0] != l.Type.BlockSize() && l.Nb[0] != next {
		return false
	}
	next *= l.Ne[0] / l.Type.BlockSize()
	for i := 1; i < MaxDims; i++ {
		if l.Ne[i] == 1 {
			continue
		}
		if i > n {
			if l.Nb[i] != next {
				return false
			}
			next *= l.Ne[i]
		} else {
			next = l.Ne[i] * l.Nb[i]
		}
	}
	return true
}

// IsContiguousRows reports whether each row's elements are packed
// (ggml_is_contiguous_rows).
func (l Layout) IsContiguousRows() bool {
	return l.Ne[0] == l.Type.BlockSize() || l.Nb[0] == l.Type.BlockBytes()
}

// IsContiguouslyAllocated reports whether the tensor spans exactly its
// elements' bytes, in any order (ggml_is_contiguously_allocated).
func (l Layout) IsContiguouslyAllocated() bool {
	return l.Bytes() == l.Elements()*l.Type.BlockBytes()/l.Type.BlockSize()
}

// IsTransposed reports whether dimension 0 steps further than dimension 1
// (ggml_is_transposed).
func (l Layout) IsTransposed() bool { return l.Nb[0] > l.Nb[1] }

// IsPermuted reports whether the strides are not increasing (ggml_is_permuted).
func (l Layout) IsPermuted() bool { return l.Nb[0] > l.Nb[1] || l.Nb[1] > l.Nb[2] || l.Nb[2] > l.Nb[3] }

// SameShape reports whether l and m have the same Ne (ggml_are_same_shape).
func (l Layout) SameShape(m Layout) bool { return l.Ne == m.Ne }

// SameStrides reports whether l and m have the same Nb (ggml_are_same_stride).
func (l Layout) SameStrides(m Layout) bool { return l.Nb == m.Nb }

// CanRepeatInto reports whether l tiles into m: every dimension of m is a
// multiple of l's (ggml_can_repeat(l, m)); an empty l only into an empty m.
func (l Layout) CanRepeatInto(m Layout) bool {
	if l.Empty() {
		return m.Empty()
	}
	for i := range MaxDims {
		if m.Ne[i]%l.Ne[i] != 0 {
			return false
		}
	}
	return true
}

// Permute returns l with source dimension i moved to dimension axes[i]
// (ggml_permute); axes must be a permutation of 0..3.
func (l Layout) Permute(axes [MaxDims]int) (Layout, error) {
	var seen [MaxDims]bool
	for _, a := range axes {
		if a < 0 || a >= MaxDims || seen[a] {
			return Layout{}, fmt.Errorf("tensor: permutation %v is not one of 0..3", axes)
		}
		seen[a] = true
	}
	out := l
	for i, a := range axes {
		out.Ne[a], out.Nb[a] = l.Ne[i], l.Nb[i]
	}
	return out, nil
}

// Transpose swaps dimensions 0 and 1 (ggml_transpose).
func (l Layout) Transpose() Layout {
	l.Ne[0], l.Ne[1] = l.Ne[1], l.Ne[0]
	l.Nb[0], l.Nb[1] = l.Nb[1], l.Nb[0]
	return l
}

// Reshape returns the contiguous layout of the same elements with shape ne
// (ggml_reshape): l must be contiguous and ne hold as many elements.
func (l Layout) Reshape(ne ...int64) (Layout, error) {
	if !l.IsContiguous() {
		return Layout{}, fmt.Errorf("tensor: reshape of a non-contiguous %s %v (strides %v)", l.Type, l.Ne, l.Nb)
	}
	m, err := Contiguous(l.Type, ne...)
	if err != nil {
		return Layout{}, err
	}
	if m.Elements() != l.Elements() {
		return Layout{}, fmt.Errorf("tensor: reshape of %v (%d elements) to %v (%d elements)", l.Ne, l.Elements(), m.Ne, m.Elements())
	}
	return m, nil
}

// String formats l as "f32 [4096,32,1,1] nb=[4,16384,524288,524288]".
func (l Layout) String() string {
	return fmt.Sprintf("%s [%d,%d,%d,%d] nb=[%d,%d,%d,%d]", l.Type, l.Ne[0], l.Ne[1], l.Ne[2], l.Ne[3], l.Nb[0], l.Nb[1], l.Nb[2], l.Nb[3])
}

// Shape formats l.Ne as "[4096,32,1,1]".
func (l Layout) Shape() string {
	return fmt.Sprintf("[%d,%d,%d,%d]", l.Ne[0], l.Ne[1], l.Ne[2], l.Ne[3])
}
