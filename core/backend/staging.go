package backend

import (
	"errors"
	"fmt"

	"github.com/ternion/ternion/vendorapi"
)

// staging is the pinned host memory inputs are uploaded through, so that the
// copies are asynchronous and C never keeps Go memory past a call. Without
// pinned memory (TERNION_NO_PINNED, or HostAlloc failing) uploads are
// synchronous copies from Go memory, after the stream is idle; the backend
// says so once.
type staging struct {
	be      *Backend
	pinned  bool // pinned memory wanted
	buf     vendorapi.HostBuffer
	done    vendorapi.Event // recorded after the last uploads from buf
	pending bool            // done was recorded and not yet waited for
	warned  bool
}

// upload copies each src to its device address, in order on the backend's
// stream.
func (s *staging) upload(dsts []vendorapi.DevicePtr, srcs [][]byte) error {
	var total uint64
	for _, b := range srcs {
		total += uint64(len(b))
	}
	if total == 0 {
		return nil
	}
	if s.pinned {
		err := s.reserve(total)
		if err == nil {
			return s.async(dsts, srcs)
		}
		if !s.warned {
			s.be.log.Warn(fmt.Sprintf("ternion: backend %s: no pinned staging memory (%v); inputs are copied synchronously from pageable memory", s.be.name, err))
			s.warned = true
		}
	}
	if err := s.be.sync(); err != nil {
		return err
	}
	for i, b := range srcs {
		if err := s.be.drv.CopyHtoD(s.be.dev, dsts[i], b); err != nil {
			return err
		}
	}
	return nil
}

// reserve makes buf at least n bytes, after the uploads still reading it.
func (s *staging) reserve(n uint64) error {
	if err := s.wait(); err != nil {
		return err
	}
	if s.buf.Size >= n {
		return nil
	}
	if s.buf.Ptr != 0 {
		if err := s.be.drv.HostFree(s.buf); err != nil {
			return err
		}
		s.buf = vendorapi.HostBuffer{}
	}
	size := max(n, 1<<20)
	hb, err := s.be.drv.HostAlloc(size)
	if err != nil {
		return err
	}
	s.buf = hb
	if s.done.Handle == 0 {
		if s.done, err = s.be.drv.EventCreate(s.be.dev, false); err != nil {
			return err
		}
	}
	return nil
}

// wait blocks until the uploads from buf have completed.
func (s *staging) wait() error {
	if !s.pending {
		return nil
	}
	s.pending = false
	return s.be.drv.EventSynchronize(s.done)
}

// async copies srcs into buf and queues the copies to the device.
func (s *staging) async(dsts []vendorapi.DevicePtr, srcs [][]byte) error {
	host := s.buf.Bytes()
	var off uint64
	for i, b := range srcs {
		n := uint64(len(b))
		copy(host[off:off+n], b)
		part := vendorapi.HostBuffer{Ptr: s.buf.Ptr + uintptr(off), Size: n}
		if err := s.be.drv.CopyHtoDAsync(s.be.stream, dsts[i], part); err != nil {
			return err
		}
		off += n
	}
	if err := s.be.drv.EventRecord(s.done, s.be.stream); err != nil {
		return err
	}
	s.pending = true
	return nil
}

// close frees the staging memory after its uploads.
func (s *staging) close() error {
	errs := []error{s.wait()}
	if s.buf.Ptr != 0 {
		errs = append(errs, s.be.drv.HostFree(s.buf))
		s.buf = vendorapi.HostBuffer{}
	}
	if s.done.Handle != 0 {
		errs = append(errs, s.be.drv.EventDestroy(s.done))
		s.done = vendorapi.Event{}
	}
	return errors.Join(errs...)
}
