package conformance

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/internal/le"
	"github.com/ternion/ternion/vendorapi"
)

// managed runs where the driver allocates managed memory
// (vendorapi.ManagedAllocator): it is non-zero device memory that copies and
// kernels use like Malloc's, and Free releases it. The host side of managed
// memory is not touched: HIP falls back to device memory where it has none.
func (s *suite) managed(t *testing.T) {
	ma, ok := s.d.(vendorapi.ManagedAllocator)
	if !ok {
		t.Skipf("%s has no managed memory (no vendorapi.ManagedAllocator)", s.d.Vendor())
	}
	s.eachDevice(t, func(t *testing.T, dev int) {
		r := newRand(t)
		const n = 1000
		p, err := ma.MallocManaged(dev, 4*n)
		require.NoError(t, err, "MallocManaged")
		require.NotZero(t, p, "MallocManaged")
		data := randBytes(r, 4*n)
		require.NoError(t, s.d.CopyHtoD(dev, p, data), "CopyHtoD into managed memory")
		checkBytes(t, "managed memory round trip", s.download(t, dev, p, 4*n), data)
		v := randValue(r)
		st := s.stream(t, dev)
		s.launch(t, st, "fill_f32", args().Ptr(p).F32(v).I64(n))
		s.sync(t, st)
		checkBytes(t, "fill_f32 of managed memory", s.download(t, dev, p, 4*n), le.FromF32(fill32(v, n)))
		require.NoError(t, s.d.Free(dev, p), "Free of managed memory")
		s.checkError(t, "Free of managed memory twice", s.d.Free(dev, p), dev, vendorapi.ErrInvalidValue)
	})
}
