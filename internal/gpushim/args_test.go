package gpushim

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/kernels"
	"github.com/ternion/ternion/vendorapi"
)

func TestPackArgs(t *testing.T) {
	k, err := kernels.Lookup("scale_f32")
	require.NoError(t, err)
	var s argSlots
	args := []vendorapi.Arg{vendorapi.PtrArg(0x7f0000001000), vendorapi.PtrArg(0x7f0000002000), vendorapi.F32Arg(-1.5),
		vendorapi.F32Arg(2), vendorapi.I64Arg(-3)}
	n, err := s.pack(k.Name, k.Kinds(), args)
	require.NoError(t, err)
	assert.Equal(t, 5, n)
	assert.Equal(t, uint64(0x7f0000001000), s[0])
	assert.Equal(t, uint64(0x7f0000002000), s[1])
	assert.Equal(t, uint64(math.Float32bits(-1.5)), s[2], "a float sits in the low 4 bytes")
	assert.Equal(t, uint64(math.Float32bits(2)), s[3])
	assert.Equal(t, uint64(math.MaxUint64-2), s[4], "int64 -3 keeps all 8 bytes")

	// A 4-byte kind with high garbage bits is masked.
	f, err := kernels.Lookup("fill_u32")
	require.NoError(t, err)
	n, err = s.pack(f.Name, f.Kinds(), []vendorapi.Arg{vendorapi.PtrArg(8), {Kind: vendorapi.ParamU32, Bits: 0xffff_0000_0000_0007}, vendorapi.I64Arg(1)})
	require.NoError(t, err)
	assert.Equal(t, 3, n)
	assert.Equal(t, uint64(7), s[1])
}

func TestPackArgsRefusals(t *testing.T) {
	k, err := kernels.Lookup("add_f32")
	require.NoError(t, err)
	var s argSlots
	p := vendorapi.PtrArg(16)
	for name, args := range map[string][]vendorapi.Arg{
		"none":       nil,
		"short":      {p, p, p},
		"long":       {p, p, p, vendorapi.I64Arg(1), vendorapi.I64Arg(1)},
		"wrong kind": {p, p, p, vendorapi.I32Arg(1)},
		"zero kind":  {p, p, {Bits: 16}, vendorapi.I64Arg(1)},
	} {
		_, err := s.pack(k.Name, k.Kinds(), args)
		assert.ErrorIs(t, err, vendorapi.ErrInvalidValue, name)
	}
	many := make([]vendorapi.ParamKind, maxArgs+1)
	manyArgs := make([]vendorapi.Arg, maxArgs+1)
	for i := range many {
		many[i], manyArgs[i] = vendorapi.ParamI32, vendorapi.I32Arg(int32(i))
	}
	_, err = s.pack("huge", many, manyArgs)
	require.ErrorIs(t, err, vendorapi.ErrInvalidValue)
	assert.True(t, strings.Contains(err.Error(), "at most"), err.Error())
}

func TestDims(t *testing.T) {
	assert.Equal(t, [6]uint32{2, 1, 1, 32, 1, 1}, dims(vendorapi.Dim3{X: 2}, vendorapi.Dim3{X: 32}))
	assert.Equal(t, [6]uint32{1, 1, 1, 1, 1, 1}, dims(vendorapi.Dim3{}, vendorapi.Dim3{}))
	assert.Equal(t, [6]uint32{3, 4, 5, 6, 7, 8}, dims(vendorapi.Dim3{X: 3, Y: 4, Z: 5}, vendorapi.Dim3{X: 6, Y: 7, Z: 8}))
}
