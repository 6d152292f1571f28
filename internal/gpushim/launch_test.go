package gpushim

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/kernels"
	"github.com/ternion/ternion/vendorapi"
)

// launchTable is a handle table holding one function (kernel name) and one
// stream of device 0, as Kernel and StreamCreate record them.
func launchTable(t testing.TB, name string) (*handles, vendorapi.Function, vendorapi.Stream) {
	k, err := kernels.Lookup(name)
	require.NoError(t, err)
	var h handles
	kinds := k.Kinds()
	offs, _ := vendorapi.Layout(kinds)
	f := vendorapi.Function{Name: name, Handle: h.add(handle{kind: kindFunction, raw: 1, params: kinds, offsets: offs})}
	s := vendorapi.Stream{Handle: h.add(handle{kind: kindStream, raw: 2})}
	return &h, f, s
}

func TestCheckLaunch(t *testing.T) {
	h, f, s := launchTable(t, "scale_f32")
	good := vendorapi.NewArgs().Ptr(0x1000).Ptr(0x2000).F32(2).F32(1).I64(64)
	one := vendorapi.Dim3{X: 1}
	hf, hs, dm, err := checkLaunch(h, "cuda", f, vendorapi.Dim3{X: 3}, vendorapi.Dim3{X: 64}, s, good)
	require.NoError(t, err)
	assert.Equal(t, uint64(1), hf.raw)
	assert.Equal(t, uint64(2), hs.raw)
	assert.Equal(t, [6]uint32{3, 1, 1, 64, 1, 1}, dm)
	for name, c := range map[string]struct {
		f     vendorapi.Function
		s     vendorapi.Stream
		args  *vendorapi.Args
		block vendorapi.Dim3
	}{
		"dead function":         {vendorapi.Function{Name: f.Name, Handle: 99}, s, good, one},
		"a stream as function":  {vendorapi.Function{Name: f.Name, Handle: s.Handle}, s, good, one},
		"dead stream":           {f, vendorapi.Stream{Handle: 98}, good, one},
		"devices differ":        {f, vendorapi.Stream{Device: 1, Handle: s.Handle}, good, one},
		"wrong arguments":       {f, s, vendorapi.NewArgs().Ptr(1), one},
		"block over the limits": {f, s, good, vendorapi.Dim3{X: 2048}},
	} {
		_, _, _, err := checkLaunch(h, "cuda", c.f, one, c.block, c.s, c.args)
		assert.ErrorIs(t, err, vendorapi.ErrInvalidValue, name)
	}
}

// BenchmarkCheckLaunch is the Go side of a CUDA launch (everything Launch
// does before its cgo call) for 3 and for 9 arguments: the part of the
// per-launch cost ternion adds (keep it under 100 ns).
func BenchmarkCheckLaunch(b *testing.B) {
	td := vendorapi.TensorDesc{Data: 0x1000, Ne: [4]int64{4096, 32, 1, 1}, Nb: [4]int64{4, 16384, 524288, 524288}}
	fd := vendorapi.NewFastDiv(32)
	for _, c := range []struct {
		name string
		args func(a *vendorapi.Args)
	}{
		{"fill_f32", func(a *vendorapi.Args) { a.Ptr(0x1000).F32(1).I64(1) }},
		{"bin_add_f32_f32", func(a *vendorapi.Args) {
			a.Tensor(td).Tensor(td).Tensor(td).FastDiv(fd).FastDiv(fd).FastDiv(fd).FastDiv(fd).FastDiv(fd).FastDiv(fd).I64(32)
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			h, f, s := launchTable(b, c.name)
			var a vendorapi.Args
			grid, block := vendorapi.Dim3{X: 1}, vendorapi.Dim3{X: 1}
			for b.Loop() {
				a.Reset()
				c.args(&a)
				if _, _, _, err := checkLaunch(h, "cuda", f, grid, block, s, &a); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
