package host

import (
	"encoding/binary"
	"math"
	"testing"

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

// f32Bytes encodes v little-endian.
func f32Bytes(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

// bytesF32 decodes little-endian float32s.
func bytesF32(b []byte) []float32 {
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

// upload allocates device memory holding v's bytes.
func upload(t *testing.T, d *Driver, dev int, v []float32) vendorapi.DevicePtr {
	t.Helper()
	p, err := d.Malloc(dev, uint64(4*len(v)))
	require.NoError(t, err)
	require.NoError(t, d.CopyHtoD(dev, p, f32Bytes(v)))
	return p
}

// download reads n float32s from p.
func download(t *testing.T, d *Driver, dev int, p vendorapi.DevicePtr, n int) []float32 {
	t.Helper()
	b := make([]byte, 4*n)
	require.NoError(t, d.CopyDtoH(dev, b, p))
	return bytesF32(b)
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
