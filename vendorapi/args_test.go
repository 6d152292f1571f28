package vendorapi

import (
	"math"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestArgsRoundTrip(t *testing.T) {
	td := TensorDesc{Data: 0x7f00_0000_1000, Ne: [4]int64{4096, 32, 7, 1}, Nb: [4]int64{2, 8192, 262144, 1835008}}
	fd := NewFastDiv(12)
	var a Args
	a.I32(-7).Ptr(0x1000).U32(0xdeadbeef).F32(-2.5).I64(-1 << 40).Tensor(td).U32(3).FastDiv(fd).F32(1)
	require.Equal(t, 9, a.Len())
	assert.Equal(t, int32(-7), a.I32At(0))
	assert.Equal(t, DevicePtr(0x1000), a.PtrAt(1))
	assert.Equal(t, uint32(0xdeadbeef), a.U32At(2))
	assert.Equal(t, float32(-2.5), a.F32At(3))
	assert.Equal(t, int64(-1<<40), a.I64At(4))
	assert.Equal(t, td, a.TensorAt(5))
	assert.Equal(t, uint32(3), a.U32At(6))
	assert.Equal(t, fd, a.FastDivAt(7))
	assert.Equal(t, float32(1), a.F32At(8))

	// C's layout of the same parameter list: int at 0, pointer aligned to 8,
	// and so on; Layout computes it from the kinds alone.
	offs, size := Layout(a.Kinds())
	assert.Equal(t, []uint32{0, 8, 16, 20, 24, 32, 104, 108, 120}, offs)
	assert.Equal(t, offs, a.Offsets())
	assert.Equal(t, 124, size)
	assert.Len(t, a.Bytes(), size)
	assert.Equal(t, []byte{0, 0, 0, 0}, a.Bytes()[4:8], "padding is zero")

	// Reset keeps the memory: a second build allocates nothing.
	allocs := testing.AllocsPerRun(100, func() {
		a.Reset().Ptr(1).Ptr(2).F32(3).F32(4).I64(5).Tensor(td)
	})
	assert.Zero(t, allocs, "rebuilding reset Args allocates")

	c := a.Clone()
	a.Reset().I32(1)
	assert.Equal(t, 6, c.Len(), "a clone keeps its arguments")
	assert.Equal(t, td, c.TensorAt(5))
}

func TestArgsLayoutMatchesGo(t *testing.T) {
	// The Go structs are the definition the packers write; their layout is
	// what kernels/abi.h asserts for C (TestABIHeader in kernels checks both).
	assert.EqualValues(t, TensorDescSize, unsafe.Sizeof(TensorDesc{}))
	assert.EqualValues(t, 8, unsafe.Offsetof(TensorDesc{}.Ne))
	assert.EqualValues(t, 40, unsafe.Offsetof(TensorDesc{}.Nb))
	assert.EqualValues(t, FastDivSize, unsafe.Sizeof(FastDiv{}))
	for _, k := range ParamKinds() {
		assert.NotZero(t, k.Size(), k.String())
		assert.NotZero(t, k.Align(), k.String())
		assert.Zero(t, k.Size()%k.Align(), "%s: size is a multiple of the alignment", k)
		assert.NotEmpty(t, k.CType(), k.String())
	}
	assert.Zero(t, ParamKind(0).Size())
	assert.Equal(t, "ParamKind(0)", ParamKind(0).String())
	assert.Equal(t, "ParamKind(99)", ParamKind(99).String())
}

func TestFastDiv(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	divisors := []uint32{1, 2, 3, 7, 12, 64, 100, 4095, 4096, 4097, 1 << 20, 1<<31 - 1}
	for range 50 {
		divisors = append(divisors, 1+r.Uint32N(1<<24))
	}
	for _, d := range divisors {
		f := NewFastDiv(d)
		require.Equal(t, d, f.D)
		nums := []uint32{0, 1, d - 1, d, d + 1, 2*d - 1, math.MaxInt32, math.MaxInt32 - 1}
		for range 200 {
			nums = append(nums, r.Uint32N(math.MaxInt32))
		}
		for _, n := range nums {
			if n > math.MaxInt32 {
				continue
			}
			if f.Div(n) != n/d || f.Mod(n) != n%d {
				t.Fatalf("fastdiv(%d, %d) = %d rem %d, want %d rem %d (%+v)", n, d, f.Div(n), f.Mod(n), n/d, n%d, f)
			}
		}
	}
}

// TestFastDivShift checks NewFastDiv's shift, bits.Len32(d-1), against the
// loop that defines it (the least l with 2^l >= d) at every power of two,
// its neighbours and the largest divisor.
func TestFastDivShift(t *testing.T) {
	divisors := []uint32{1, math.MaxUint32 - 1, math.MaxUint32}
	for k := 1; k < 32; k++ {
		p := uint32(1) << k
		divisors = append(divisors, p-1, p, p+1)
	}
	for _, d := range divisors {
		l := uint32(0)
		for l < 32 && uint64(1)<<l < uint64(d) {
			l++
		}
		assert.Equal(t, l, NewFastDiv(d).L, "shift of divisor %d", d)
	}
}

func TestCheckArgs(t *testing.T) {
	params := []ParamKind{ParamPtr, ParamF32, ParamI64}
	big := NewArgs()
	for range MaxArgBytes/TensorDescSize + 1 {
		big.Tensor(TensorDesc{})
	}
	bigParams := append([]ParamKind(nil), big.Kinds()...)
	cases := []struct {
		name   string
		params []ParamKind
		args   *Args
		ok     bool
	}{
		{"match", params, NewArgs().Ptr(8).F32(1).I64(3), true},
		{"nil args for no parameters", nil, nil, true},
		{"nil args for parameters", params, nil, false},
		{"too few", params, NewArgs().Ptr(8).F32(1), false},
		{"too many", params, NewArgs().Ptr(8).F32(1).I64(3).I32(1), false},
		{"int32 for int64", params, NewArgs().Ptr(8).F32(1).I32(3), false},
		{"tensor for pointer", params, NewArgs().Tensor(TensorDesc{Data: 8}).F32(1).I64(3), false},
		{"over the size limit", bigParams, big, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := CheckArgs("fill_f32", c.params, c.args)
			if c.ok {
				assert.NoError(t, err)
				return
			}
			assert.ErrorIs(t, err, ErrInvalidValue)
			assert.Contains(t, err.Error(), "fill_f32")
		})
	}
}

func BenchmarkArgsPack(b *testing.B) {
	td := TensorDesc{Data: 0x1000, Ne: [4]int64{4096, 32, 1, 1}, Nb: [4]int64{4, 16384, 524288, 524288}}
	var a Args
	b.Run("3 scalars", func(b *testing.B) {
		for b.Loop() {
			a.Reset().Ptr(0x1000).F32(1).I64(4096)
		}
	})
	b.Run("3 tensors + 4 scalars", func(b *testing.B) {
		for b.Loop() {
			a.Reset().Tensor(td).Tensor(td).Tensor(td).F32(1).F32(2).I32(3).FastDiv(FastDiv{1, 2, 3})
		}
	})
}
