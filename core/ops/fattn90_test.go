package ops

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ternion/ternion/arch"
	"github.com/ternion/ternion/kernels"
	"github.com/ternion/ternion/switches"
	"github.com/ternion/ternion/vendorapi"
)

// TestFlashAttnUse90 is the choice of fattn90 for a prefill the mma kernel
// would take: head sizes, alignment of every operand, shared memory, the
// device's arch-specific code, the switch; and core's mirror of the
// kernel's geometry.
func TestFlashAttnUse90(t *testing.T) {
	desc := func(data vendorapi.DevicePtr, elem int64, ne [4]int64) vendorapi.TensorDesc {
		d := vendorapi.TensorDesc{Data: data, Ne: ne}
		d.Nb[0] = elem
		for i := 1; i < 4; i++ {
			d.Nb[i] = d.Nb[i-1] * ne[i-1]
		}
		return d
	}
	call := func(dim, nkv int64, mask bool) fattnCall {
		c := fattnCall{q: desc(1<<20, 4, [4]int64{dim, 512, 32, 1}), k: desc(1<<24, 2, [4]int64{dim, nkv, 2, 1}),
			v: desc(1<<25, 2, [4]int64{dim, nkv, 2, 1}), dst: desc(1<<26, 4, [4]int64{dim, 32, 512, 1})}
		if mask {
			c.mask = desc(1<<27, 2, [4]int64{nkv, 512, 1, 1})
		}
		return c
	}
	h100 := vendorapi.Props{CC: arch.Hopper, ArchSpecific: []string{"sm_90a"}, SharedMemPerBlockOptin: 232448}
	noRTC := h100
	noRTC.ArchSpecific = nil
	host := vendorapi.Props{SharedMemPerBlockOptin: 232448}
	sm89 := vendorapi.Props{CC: 890, SharedMemPerBlockOptin: 101376}
	with := func(c fattnCall, f func(c *fattnCall)) fattnCall { f(&c); return c }
	for _, c := range []struct {
		name string
		c    fattnCall
		p    vendorapi.Props
		want bool
	}{
		{"the issue-9 prefill, head 256", call(256, 10000, true), h100, true},
		{"head 128", call(128, 8192, true), h100, true},
		{"no mask", call(256, 113, false), h100, true},
		{"the host device runs every kernel", call(256, 10000, true), host, true},
		{"no sm_90a code (NVRTC before 12)", call(256, 10000, true), noRTC, false},
		{"not Hopper", call(128, 8192, true), sm89, false},
		{"head 64: not built", call(64, 8192, true), h100, false},
		{"hsv differs", with(call(256, 1000, true), func(c *fattnCall) { c.v.Ne[0] = 128 }), h100, false},
		{"mask rows of 113 halves: not 16-byte aligned", call(128, 113, true), h100, false},
		{"mask rows of 1000 halves", call(128, 1000, true), h100, true},
		{"q rows not 16-byte aligned", with(call(128, 1000, true), func(c *fattnCall) { c.q.Data += 8 }), h100, false},
		{"q a view with a row stride of 4 mod 16", with(call(128, 1000, true), func(c *fattnCall) { c.q.Nb[1] += 4 }), h100, false},
		{"k not packed (f32)", with(call(128, 1000, true), func(c *fattnCall) { c.k.Nb[0] = 4 }), h100, false},
		{"v rows 8-byte aligned only", with(call(128, 1000, true), func(c *fattnCall) { c.v.Nb[2] += 8 }), h100, false},
		{"dst rows 4-byte aligned", with(call(128, 1000, true), func(c *fattnCall) { c.dst.Nb[2] += 4 }), h100, false},
		{"99 KiB a block", call(128, 1000, true), vendorapi.Props{CC: arch.Hopper, ArchSpecific: []string{"sm_90a"}, SharedMemPerBlockOptin: 101376}, false},
	} {
		assert.Equal(t, c.want, useFattn90(c.c, c.p), c.name)
	}
	t.Setenv(switches.NoFattn90.Name, "1")
	assert.False(t, useFattn90(call(256, 10000, true), h100), "TERNION_NO_FATTN90")

	assert.Equal(t, kernels.Fattn90Queries, fattn90Queries)
	assert.Equal(t, kernels.Fattn90Threads, fattn90Threads)
	for _, d := range []int64{128, 256} {
		assert.Equal(t, int64(kernels.Fattn90Shared(int(d))), fattn90Shared(d))
	}
}
