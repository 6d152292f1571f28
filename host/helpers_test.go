package host

import (
	"testing"
	"time"

	"github.com/ternion/ternion/internal/le"

	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/vendorapi"
)

// newDriver returns a driver closed when t ends.
func newDriver(t *testing.T, o Options) *Driver {
	t.Helper()
	d, err := New(o)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, d.Close()) })
	return d
}

// mkStream returns a stream destroyed when t ends.
func mkStream(t *testing.T, d *Driver, dev int) vendorapi.Stream {
	t.Helper()
	s, err := d.StreamCreate(dev)
	require.NoError(t, err)
	t.Cleanup(func() { _ = d.StreamDestroy(s) })
	return s
}

// upload allocates device memory holding v's bytes.
func upload(t *testing.T, d *Driver, dev int, v []float32) vendorapi.DevicePtr {
	t.Helper()
	p, err := d.Malloc(dev, uint64(4*len(v)))
	require.NoError(t, err)
	require.NoError(t, d.CopyHtoD(dev, p, le.FromF32(v)))
	return p
}

// download reads n float32s from p.
func download(t *testing.T, d *Driver, dev int, p vendorapi.DevicePtr, n int) []float32 {
	t.Helper()
	b := make([]byte, 4*n)
	require.NoError(t, d.CopyDtoH(dev, b, p))
	return le.ToF32(b)
}

// requireHostErr checks err is a host *vendorapi.Error of kind.
func requireHostErr(t *testing.T, err error, kind error, msgAndArgs ...any) *vendorapi.Error {
	t.Helper()
	require.Error(t, err, msgAndArgs...)
	require.ErrorIs(t, err, kind, msgAndArgs...)
	ve, ok := err.(*vendorapi.Error)
	require.True(t, ok, "%T is not a *vendorapi.Error", err)
	require.Equal(t, Vendor, ve.Vendor)
	require.NotEmpty(t, ve.Call)
	require.NotEmpty(t, ve.CodeName)
	return ve
}

// patience bounds every wait for something that must happen: past it the
// test fails instead of hanging the package. It is not a timing assertion;
// it only has to be far longer than any run needs, under -race on two cores.
const patience = 2 * time.Minute

// async runs f on a goroutine; its result arrives on the returned channel.
func async(f func() error) <-chan error {
	ch := make(chan error, 1)
	go func() { ch <- f() }()
	return ch
}

// await returns the result f sent on ch (see async), failing t when none
// arrives within patience.
func await(t *testing.T, ch <-chan error, what string) error {
	t.Helper()
	select {
	case err := <-ch:
		return err
	case <-time.After(patience):
		t.Fatalf("%s did not return within %v", what, patience)
		return nil
	}
}

// stillWaiting fails t when a result arrives on ch within a short while: the
// call must be waiting for something the test has not released yet. (A slow
// machine can only make this pass wrongly, never fail wrongly.)
func stillWaiting(t *testing.T, ch <-chan error, what string) {
	t.Helper()
	select {
	case err := <-ch:
		t.Fatalf("%s returned (%v) before the work it waits for could run", what, err)
	case <-time.After(50 * time.Millisecond):
	}
}
