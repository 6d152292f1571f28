package backend

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/ternion/ternion/core/graph"
	"github.com/ternion/ternion/core/ops"
	"github.com/ternion/ternion/vendorapi"
)

// errflag.go is the backend's device error word (ops.ErrorFlags): 4 bytes
// of device memory, zeroed when made, whose bits kernels set when they find
// a bad input that the host could only check after a sync (an expert index
// out of range in MUL_MAT_ID's ids computed on the device). It is made
// before the first call whose graph has such a node, outside any capture,
// and keeps its address for the backend's life, so recorded launches and
// executable graphs read the same word. Nothing is read on the hot path:
// Synchronize, which waits for the stream anyway, copies the word back
// once a call has queued a node that may set it, reports the bits set as
// an error matching ErrBadIndex and zeroes the word again.

// ErrBadIndex is matched (errors.Is) by the error of a graph with an index
// input out of range: Compute's, for ids known on the host before launch,
// and Synchronize's, for ids computed on the device (the kernel sets the
// device error word). It is ops.ErrBadIndex; such errors also match
// vendorapi.ErrInvalidValue.
var ErrBadIndex = ops.ErrBadIndex

// errFlag is a backend's device error word.
type errFlag struct {
	mu    sync.Mutex          // guards armed and the reads of the word (Synchronize runs outside the Compute lock)
	word  vendorapi.DevicePtr // 0 until a graph needs it; set under the Compute lock
	armed bool                // a call queued a node that may set the word since it was last read
	buf   [4]byte
}

// ErrorFlag returns the address of the backend's device error word, or 0
// before a graph needed it (ops.ErrorFlags). Ops call it under the Compute
// lock.
func (b *Backend) ErrorFlag() vendorapi.DevicePtr { return b.flag.word }

// armErrorFlag makes the device error word when nodes have a node that
// sets it and the backend has none yet, and marks it to be read by the next
// Synchronize. Call it before the call's first launch and outside any
// capture.
func (b *Backend) armErrorFlag(nodes []*graph.Tensor) error {
	f := &b.flag
	if !slices.ContainsFunc(nodes, ops.UsesErrorFlag) {
		return nil
	}
	if f.word == 0 {
		p, err := b.drv.Malloc(b.dev, 4)
		if err != nil {
			return fmt.Errorf("ternion: backend %s: the device error word: %w", b.name, err)
		}
		if err := b.drv.MemsetAsync(b.stream, p, 0, 4); err != nil {
			_ = b.drv.Free(b.dev, p)
			return fmt.Errorf("ternion: backend %s: zeroing the device error word: %w", b.name, err)
		}
		f.mu.Lock()
		f.word = p
		f.mu.Unlock()
	}
	f.mu.Lock()
	f.armed = true
	f.mu.Unlock()
	return nil
}

// checkErrorFlag reads the device error word after the stream has been
// waited for, when a call since the last read queued a node that may set
// it, and returns the error its bits report (nil when it is zero), zeroing
// it again. Work queued by a concurrent Compute after the wait may set the
// word meanwhile: its report then comes with this Synchronize or the next.
func (b *Backend) checkErrorFlag() error {
	f := &b.flag
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.armed || f.word == 0 {
		return nil
	}
	if err := b.drv.CopyDtoH(b.dev, f.buf[:], f.word); err != nil {
		return fmt.Errorf("ternion: backend %s: reading the device error word: %w", b.name, err)
	}
	f.armed = false
	w := binary.LittleEndian.Uint32(f.buf[:])
	if w == 0 {
		return nil
	}
	var zero error
	if err := b.drv.Memset(b.dev, f.word, 0, 4); err != nil {
		zero = fmt.Errorf("ternion: backend %s: zeroing the device error word: %w", b.name, err)
	}
	return errors.Join(fmt.Errorf("ternion: backend %s: a kernel found a bad input: %s: %w (%w)", b.name,
		strings.Join(ops.DescribeErrorFlags(w), "; "), ErrBadIndex, vendorapi.ErrInvalidValue), zero)
}

// closeErrorFlag frees the device error word (Close, after the stream is
// idle).
func (b *Backend) closeErrorFlag() error {
	f := &b.flag
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.word == 0 {
		return nil
	}
	err := b.drv.Free(b.dev, f.word)
	f.word, f.armed = 0, false
	return err
}
