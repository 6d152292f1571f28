package conformance

import (
	"errors"
	"testing"

	"github.com/ternion/ternion/internal/le"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/vendorapi"
)

// anyDevice is passed to checkError when the failing call names no single
// device, so Error.Device is not checked.
const anyDevice = -2

// outcome is what one named call returned, for the tables of calls whose
// errors (or success) a test checks alike.
type outcome struct {
	name string
	err  error
}

// checkError checks that err, returned by call, is a vendor failure: non-nil,
// an *vendorapi.Error (possibly wrapped) whose Vendor is the driver's and whose
// Call and CodeName are filled, on device dev (unless anyDevice), and, when
// kinds are given, matching one of them with errors.Is.
func (s *suite) checkError(t *testing.T, call string, err error, dev int, kinds ...error) {
	t.Helper()
	require.Error(t, err, "%s must fail", call)
	var ve *vendorapi.Error
	if !errors.As(err, &ve) {
		t.Errorf("%s: error %q (%T) is not a *vendorapi.Error", call, err, err)
	} else {
		assert.Equal(t, s.d.Vendor(), ve.Vendor, "%s: Error.Vendor", call)
		assert.NotEmpty(t, ve.Call, "%s: Error.Call", call)
		assert.NotEmpty(t, ve.CodeName, "%s: Error.CodeName", call)
		if dev != anyDevice {
			assert.Equal(t, dev, ve.Device, "%s: Error.Device", call)
		}
	}
	if len(kinds) == 0 {
		return
	}
	for _, k := range kinds {
		if errors.Is(err, k) {
			return
		}
	}
	t.Errorf("%s: error %q matches none of %q", call, err, kinds)
}

// healthy checks that dev still works: an allocation, a copy round trip, a
// kernel on a fresh stream and a device synchronize.
func (s *suite) healthy(t *testing.T, dev int) {
	t.Helper()
	r := newRand(t)
	const n = 100
	want := randF32(r, n)
	p, err := s.d.Malloc(dev, 4*n)
	require.NoError(t, err, "device %d no longer allocates", dev)
	defer func() { assert.NoError(t, s.d.Free(dev, p), "Free") }()
	require.NoError(t, s.d.CopyHtoD(dev, p, le.FromF32(want)), "device %d no longer copies", dev)
	st, err := s.d.StreamCreate(dev)
	require.NoError(t, err, "device %d no longer creates streams", dev)
	defer func() { assert.NoError(t, s.d.StreamDestroy(st), "StreamDestroy") }()
	f, err := s.d.Kernel(dev, "scale_f32")
	require.NoError(t, err, "Kernel")
	require.NoError(t, s.d.Launch(f, smallGrid, smallBlock, 0, st, args().Ptr(p).Ptr(p).F32(2).F32(0).I64(n)),
		"device %d no longer launches", dev)
	require.NoError(t, s.d.StreamSynchronize(st), "StreamSynchronize")
	require.NoError(t, s.d.DeviceSynchronize(dev), "DeviceSynchronize")
	got := make([]byte, 4*n)
	require.NoError(t, s.d.CopyDtoH(dev, got, p), "CopyDtoH")
	for i := range want {
		want[i] *= 2 // exact
	}
	checkBytes(t, "device still works: scale by 2", got, le.FromF32(want))
}
