//go:build unix

package conformance

import (
	"syscall"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/vendorapi"
)

// hostRegister page-locks an anonymous mapping (non-Go memory, as an mmap'd
// model file is), copies through it and unregisters it.
func (s *suite) hostRegister(t *testing.T, dev int) {
	r := newRand(t)
	size := 3 * syscall.Getpagesize()
	m := hostMapping(t, size)
	ptr := uintptr(unsafe.Pointer(&m[0]))

	require.NoError(t, s.d.HostRegister(ptr, uint64(size)), "HostRegister")
	data := randBytes(r, size)
	copy(m, data)
	p := s.upload(t, dev, m)
	clear(m)
	require.NoError(t, s.d.CopyDtoH(dev, m, p), "CopyDtoH into registered memory")
	checkBytes(t, "copies through registered memory", m, data)

	// Asynchronous copies accept only pinned memory: registering made m so.
	hb := vendorapi.HostBuffer{Ptr: ptr, Size: uint64(size)}
	st := s.stream(t, dev)
	q := s.malloc(t, dev, uint64(size))
	require.NoError(t, s.d.CopyHtoDAsync(st, q, hb), "CopyHtoDAsync from registered memory")
	s.sync(t, st)
	checkBytes(t, "CopyHtoDAsync from registered memory", s.download(t, dev, q, size), data)
	data2 := randBytes(r, size)
	require.NoError(t, s.d.CopyHtoD(dev, q, data2), "CopyHtoD")
	require.NoError(t, s.d.CopyDtoHAsync(st, hb, q), "CopyDtoHAsync into registered memory")
	s.sync(t, st)
	checkBytes(t, "CopyDtoHAsync into registered memory", m, data2)
	require.NoError(t, s.d.HostUnregister(ptr), "HostUnregister")
	s.checkError(t, "HostUnregister of memory no longer registered", s.d.HostUnregister(ptr), anyDevice)
}

// hostMapping maps size bytes of anonymous memory (not Go's), unmapped when t ends.
func hostMapping(t *testing.T, size int) []byte {
	t.Helper()
	m, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	require.NoError(t, err, "mmap")
	t.Cleanup(func() { _ = syscall.Munmap(m) })
	return m
}
