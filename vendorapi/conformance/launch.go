package conformance

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/internal/le"
	"github.com/ternion/ternion/vendorapi"
)

// launchLimits checks that Launch refuses a block, grid or dynamic shared
// memory beyond the vendor's limits with ErrInvalidValue, before anything
// runs, and that the device keeps working.
func (s *suite) launchLimits(t *testing.T) {
	s.eachDevice(t, func(t *testing.T, dev int) {
		p, err := s.d.Props(dev)
		require.NoError(t, err, "Props")
		st := s.stream(t, dev)
		noop := s.kernel(t, dev, "noop")
		for _, c := range []struct {
			name        string
			grid, block vendorapi.Dim3
		}{
			{"block of 1025 threads", vendorapi.Dim3{X: 1}, vendorapi.Dim3{X: 1025}},
			{"block of 1024×2 threads", vendorapi.Dim3{X: 1}, vendorapi.Dim3{X: 1024, Y: 2}},
			{"block z of 65", vendorapi.Dim3{X: 1}, vendorapi.Dim3{X: 1, Y: 1, Z: 65}},
			{"grid y of 65536", vendorapi.Dim3{X: 1, Y: 65536}, vendorapi.Dim3{X: 32}},
			{"grid z of 65536", vendorapi.Dim3{X: 1, Y: 1, Z: 65536}, vendorapi.Dim3{X: 32}},
		} {
			s.checkError(t, "Launch with a "+c.name, s.d.Launch(noop, c.grid, c.block, 0, st, nil), dev, vendorapi.ErrInvalidValue)
		}
		require.NoError(t, s.d.Launch(noop, vendorapi.Dim3{X: 2, Y: 65535}, vendorapi.Dim3{X: 1024}, 0, st, nil),
			"Launch at the limits (grid y 65535, block 1024)")

		require.NoError(t, s.d.SetMaxDynamicSharedMemory(noop, p.SharedMemPerBlock), "SetMaxDynamicSharedMemory")
		s.checkError(t, "Launch with more dynamic shared memory than the function's limit",
			s.d.Launch(noop, smallGrid, smallBlock, uint32(p.SharedMemPerBlock+1), st, nil), dev, vendorapi.ErrInvalidValue)
		require.NoError(t, s.d.Launch(noop, smallGrid, smallBlock, uint32(p.SharedMemPerBlock), st, nil),
			"Launch with the function's limit of dynamic shared memory")
		require.NoError(t, s.d.SetMaxDynamicSharedMemory(noop, p.SharedMemPerBlockOptin), "SetMaxDynamicSharedMemory(optin)")
		s.checkError(t, "Launch with more dynamic shared memory than the opt-in maximum",
			s.d.Launch(noop, smallGrid, smallBlock, uint32(p.SharedMemPerBlockOptin+1), st, nil), dev, vendorapi.ErrInvalidValue)
		s.sync(t, st)
		s.healthy(t, dev)
	})
}

// launchChecks runs where the driver checks kernel memory at launch
// (vendorapi.LaunchChecker): buffers past the end, misaligned, freed, of
// another device without peer access, or in a VMM mapping without access
// are refused by CheckLaunch and Launch alike, and nothing runs.
func (s *suite) launchChecks(t *testing.T) {
	lc, ok := s.d.(vendorapi.LaunchChecker)
	if !ok {
		t.Skipf("%s does not check kernel memory at launch (no vendorapi.LaunchChecker)", s.d.Vendor())
	}
	s.eachDevice(t, func(t *testing.T, dev int) {
		r := newRand(t)
		const n = 1000
		st := s.stream(t, dev)
		before := randBytes(r, 4*n)
		x := s.upload(t, dev, before)
		freed := s.freedPtr(t, dev, 4*n)
		fill, add := s.kernel(t, dev, "fill_f32"), s.kernel(t, dev, "add_f32")
		type launch struct {
			name string
			f    vendorapi.Function
			a    *vendorapi.Args
		}
		bad := []launch{
			{"fill_f32 one element past the buffer", fill, args().Ptr(x).F32(1).I64(n + 1)},
			{"fill_f32 at a misaligned pointer", fill, args().Ptr(x.Add(2)).F32(1).I64(n - 1)},
			{"fill_f32 of freed memory", fill, args().Ptr(freed).F32(1).I64(n)},
			{"fill_f32 at the zero pointer", fill, args().Ptr(0).F32(1).I64(1)},
			{"add_f32 reading one element past an input", add, args().Ptr(x).Ptr(x.Add(4)).Ptr(x).I64(n)},
		}
		if s.n > 1 {
			other := s.upload(t, (dev+1)%s.n, randBytes(r, 4*n))
			bad = append(bad, launch{"fill_f32 of another device's memory without peer access", fill, args().Ptr(other).F32(1).I64(n)})
		}
		if p, err := s.d.Props(dev); err == nil && p.VMM {
			vr, err := s.d.VMMReserve(dev, p.VMMGranularity)
			require.NoError(t, err, "VMMReserve")
			c, err := s.d.VMMCreate(dev, p.VMMGranularity)
			require.NoError(t, err, "VMMCreate")
			require.NoError(t, s.d.VMMMap(vr.Base, c), "VMMMap")
			t.Cleanup(func() {
				require.NoError(t, s.d.VMMUnmap(dev, vr.Base, p.VMMGranularity), "VMMUnmap")
				require.NoError(t, s.d.VMMRelease(c), "VMMRelease")
				require.NoError(t, s.d.VMMFree(vr), "VMMFree")
			})
			bad = append(bad, launch{"fill_f32 of a VMM mapping without access", fill, args().Ptr(vr.Base).F32(1).I64(n)})
		}
		for _, c := range bad {
			s.checkError(t, "CheckLaunch of "+c.name, lc.CheckLaunch(c.f, smallGrid, smallBlock, 0, st, c.a), dev, vendorapi.ErrInvalidValue)
			s.checkError(t, "Launch of "+c.name, s.d.Launch(c.f, smallGrid, smallBlock, 0, st, c.a), dev, vendorapi.ErrInvalidValue)
		}
		good := args().Ptr(x).F32(2).I64(n)
		require.NoError(t, lc.CheckLaunch(fill, smallGrid, smallBlock, 0, st, good), "CheckLaunch of a valid launch")
		s.sync(t, st)
		checkBytes(t, "refused launches and CheckLaunch ran nothing", s.download(t, dev, x, 4*n), before)
		require.NoError(t, s.d.Launch(fill, smallGrid, smallBlock, 0, st, good), "Launch")
		s.sync(t, st)
		checkBytes(t, "the valid launch", s.download(t, dev, x, 4*n), le.FromF32(fill32(2, n)))
		s.healthy(t, dev)
	})
}
