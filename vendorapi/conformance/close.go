package conformance

import (
	"fmt"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/vendorapi"
)

// What free device memory may lack after Close, per device.
const (
	// closeRoundSlack bounds the difference between two rounds of the same
	// work, each ended by Close: whatever the first round made the vendor
	// keep, the second finds there, so a round may only differ by the
	// rounding of a few allocator pools (CUDA's are 2 MiB pages).
	closeRoundSlack = 4 << 20
	// closeOnceSlack bounds what free memory may lack after the first Close
	// compared with the start of Run: what a vendor keeps for the rest of the
	// process once the work has run, and cannot release short of destroying
	// the context (CUDA: BLAS library kernels loaded lazily, the context's
	// local memory sized for the largest kernel so far).
	closeOnceSlack = 256 << 20
)

// leftovers is what one round of work left live on a device, for Close to release.
type leftovers struct {
	dev       int
	p         vendorapi.DevicePtr
	st, capSt vendorapi.Stream // capSt is capturing
	e         vendorapi.Event
	g         vendorapi.Graph
	x         vendorapi.GraphExec
	h         vendorapi.BLASHandle // zero without BLAS
	f         vendorapi.Function
	hb        vendorapi.HostBuffer
	reg       uintptr // registered host memory; 0 where the suite maps none
	vr        vendorapi.VirtualRange
	c         vendorapi.PhysicalChunk // zero without VMM
}

// maxCloseRounds bounds the rounds closing runs when one round's free memory
// differs from the previous one's by more than closeRoundSlack: MemInfo is
// the device's, so another process allocating or freeing meanwhile (test
// binaries of other packages run in parallel) can move one round; a leak
// moves every round.
const maxCloseRounds = 4

// closing runs rounds of work that leave everything live, each ended by
// Close: free memory comes back (to where Run started, within
// closeOnceSlack; a round to where the one before left it, within
// closeRoundSlack, in at least one of up to maxCloseRounds-1 round pairs),
// every handle and pointer from before is invalid, peer access is disabled,
// and the driver works afterwards.
func (s *suite) closing(t *testing.T) {
	var after [][]uint64
	settled := false
	for round := 0; round < maxCloseRounds && !settled; round++ {
		var left []leftovers
		for dev := range s.n {
			left = append(left, s.leaveLive(t, dev))
		}
		peered := s.leavePeerAccess(t)
		require.NoError(t, s.d.Close(), "Close (round %d)", round+1)
		free := make([]uint64, s.n)
		for dev := range s.n {
			f, _, err := s.d.MemInfo(dev)
			require.NoError(t, err, "MemInfo after Close")
			free[dev] = f
		}
		after = append(after, free)
		for _, l := range left {
			s.checkReleased(t, l)
		}
		if peered {
			s.checkPeerDisabled(t)
		}
		require.NoError(t, s.d.Close(), "Close of a closed driver")
		if round > 0 {
			settled = true
			for dev := range s.n {
				settled = settled && free[dev]+closeRoundSlack >= after[round-1][dev]
			}
		}
	}
	for dev := range s.n {
		start, first := s.startFree[dev], after[0][dev]
		line := fmt.Sprintf("device %d: free memory at the start %d, after Close %d (%+d)", dev, start, first, int64(first)-int64(start))
		for r := 1; r < len(after); r++ {
			line += fmt.Sprintf(", then %d (%+d)", after[r][dev], int64(after[r][dev])-int64(after[r-1][dev]))
		}
		t.Log(line)
		assert.GreaterOrEqual(t, first+closeOnceSlack, start, "device %d: Close leaves free memory where Run started, within %d bytes", dev, closeOnceSlack)
		s.healthy(t, dev)
	}
	assert.True(t, settled, "in %d rounds of the same work, each closed, no round left free memory within %d bytes of the round before: Close leaks", len(after), closeRoundSlack)
}

// leaveLive does work of every kind on dev and leaves all of it live: memory,
// streams (one with work queued, one capturing), an event, a graph and its
// exec, a BLAS handle, kernels of several families, pinned and registered
// host memory and VMM memory.
func (s *suite) leaveLive(t *testing.T, dev int) leftovers {
	r := newRand(t)
	d := s.d
	_, total, err := d.MemInfo(dev)
	require.NoError(t, err, "MemInfo")
	size := min(uint64(16<<20), total/16) &^ 4095
	l := leftovers{dev: dev}
	l.p, err = d.Malloc(dev, size)
	require.NoError(t, err, "Malloc")
	q, err := d.Malloc(dev, size/2)
	require.NoError(t, err, "Malloc")
	require.NoError(t, d.CopyHtoD(dev, q, randBytes(r, 4096)), "CopyHtoD")
	l.st, err = d.StreamCreate(dev)
	require.NoError(t, err, "StreamCreate")
	l.e, err = d.EventCreate(dev, true)
	require.NoError(t, err, "EventCreate")
	for _, name := range []string{"noop", "add_f32", "scale_f32", "cpy_b32", "abi_echo", "fill_f32"} {
		l.f, err = d.Kernel(dev, name)
		require.NoError(t, err, "Kernel(%s)", name)
	}
	one := vendorapi.Dim3{X: 1}
	require.NoError(t, d.EventRecord(l.e, l.st), "EventRecord")
	require.NoError(t, d.BeginCapture(l.st), "BeginCapture")
	require.NoError(t, d.Launch(l.f, smallGrid, smallBlock, 0, l.st, args().Ptr(q).F32(1).I64(1024)), "Launch during capture")
	l.g, err = d.EndCapture(l.st)
	require.NoError(t, err, "EndCapture")
	l.x, err = d.GraphInstantiate(l.g)
	require.NoError(t, err, "GraphInstantiate")
	require.NoError(t, d.GraphLaunch(l.x, l.st), "GraphLaunch")
	if _, err := d.BLASVersion(); err == nil {
		l.h, err = d.BLASCreate(l.st)
		require.NoError(t, err, "BLASCreate")
		require.NoError(t, d.Gemm(l.h, vendorapi.Gemm{M: 16, N: 16, K: 16, Alpha: 1, A: q, AType: vendorapi.F32, LDA: 16,
			B: q, BType: vendorapi.F32, LDB: 16, C: q.Add(4096), CType: vendorapi.F32, LDC: 16, Compute: vendorapi.Compute32F}), "Gemm")
	}
	l.hb, err = d.HostAlloc(1 << 20)
	require.NoError(t, err, "HostAlloc")
	require.NoError(t, d.CopyDtoHAsync(l.st, vendorapi.HostBuffer{Ptr: l.hb.Ptr, Size: 4096}, q), "CopyDtoHAsync")
	if m := hostMapping(t, 1<<16); m != nil {
		l.reg = uintptr(unsafe.Pointer(&m[0]))
		require.NoError(t, d.HostRegister(l.reg, uint64(len(m))), "HostRegister")
	}
	if p, err := d.Props(dev); err == nil && p.VMM {
		chunk := max(size/2/p.VMMGranularity, 1) * p.VMMGranularity
		l.vr, err = d.VMMReserve(dev, 2*chunk)
		require.NoError(t, err, "VMMReserve")
		l.c, err = d.VMMCreate(dev, chunk)
		require.NoError(t, err, "VMMCreate")
		require.NoError(t, d.VMMMap(l.vr.Base, l.c), "VMMMap")
		require.NoError(t, d.VMMSetAccess(dev, l.vr.Base, chunk), "VMMSetAccess")
		require.NoError(t, d.MemsetAsync(l.st, l.vr.Base, 1, chunk), "MemsetAsync into the mapping")
	}
	// Work still queued at Close: one thread filling the whole allocation.
	require.NoError(t, d.Launch(l.f, one, one, 0, l.st, args().Ptr(l.p).F32(1).I64(int64(size/4))), "Launch fill_f32")
	l.capSt, err = d.StreamCreate(dev)
	require.NoError(t, err, "StreamCreate")
	require.NoError(t, d.BeginCapture(l.capSt), "BeginCapture left in progress")
	return l
}

// leavePeerAccess enables device 1's access to device 0's memory where it
// can, and reports whether it did.
func (s *suite) leavePeerAccess(t *testing.T) bool {
	if s.n < 2 {
		return false
	}
	can, err := s.d.CanAccessPeer(1, 0)
	require.NoError(t, err, "CanAccessPeer")
	if can {
		require.NoError(t, s.d.EnablePeerAccess(1, 0), "EnablePeerAccess")
	}
	return can
}

// checkReleased checks that everything l holds is invalid after Close.
func (s *suite) checkReleased(t *testing.T, l leftovers) {
	inval, dev := vendorapi.ErrInvalidValue, l.dev
	calls := []outcome{
		{"StreamSynchronize", s.d.StreamSynchronize(l.st)},
		{"CaptureStatus of the stream left capturing", func() error { _, err := s.d.CaptureStatus(l.capSt); return err }()},
		{"EventQuery", s.d.EventQuery(l.e)},
		{"GraphInstantiate", func() error { _, err := s.d.GraphInstantiate(l.g); return err }()},
		{"GraphExecDestroy", s.d.GraphExecDestroy(l.x)},
		{"SetMaxDynamicSharedMemory of a kernel loaded before", s.d.SetMaxDynamicSharedMemory(l.f, 0)},
		{"CopyHtoD to an allocation", s.d.CopyHtoD(dev, l.p, []byte{1})},
		{"Free", s.d.Free(dev, l.p)},
		{"HostFree", s.d.HostFree(l.hb)},
	}
	if l.h != (vendorapi.BLASHandle{}) {
		calls = append(calls, outcome{"BLASDestroy", s.d.BLASDestroy(l.h)})
	}
	if l.c != (vendorapi.PhysicalChunk{}) {
		calls = append(calls, []outcome{{"VMMRelease", s.d.VMMRelease(l.c)}, {"VMMFree", s.d.VMMFree(l.vr)},
			{"CopyHtoD into the VMM mapping", s.d.CopyHtoD(dev, l.vr.Base, []byte{1})}}...)
	}
	for _, c := range calls {
		s.checkError(t, c.name+" after Close", c.err, anyDevice, inval)
	}
	if l.reg != 0 {
		s.checkError(t, "HostUnregister after Close", s.d.HostUnregister(l.reg), anyDevice)
	}
}

// checkPeerDisabled checks that Close disabled device 1's access to device 0's memory.
func (s *suite) checkPeerDisabled(t *testing.T) {
	pa, err := s.d.Malloc(0, 256)
	require.NoError(t, err, "Malloc")
	pb, err := s.d.Malloc(1, 256)
	require.NoError(t, err, "Malloc")
	s.checkError(t, "CopyDtoD from a peer's memory after Close", s.d.CopyDtoD(1, pb, pa, 256), 1, vendorapi.ErrInvalidValue)
	require.NoError(t, s.d.Free(0, pa), "Free")
	require.NoError(t, s.d.Free(1, pb), "Free")
}
