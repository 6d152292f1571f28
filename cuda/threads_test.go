//go:build cuda

package cuda

import (
	"encoding/binary"
	"fmt"
	"math"
	"runtime"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ternion/ternion/vendorapi"
)

// TestFreshThreads runs the whole life of a buffer, a stream and a launch on
// many goroutines, each locked to its own (new) OS thread, where no device
// and no context is current yet: every entry point must set its own.
func TestFreshThreads(t *testing.T) {
	d := openOrSkip(t)
	f, err := d.Kernel(0, "scale_f32")
	if err != nil {
		t.Fatal(err)
	}
	const workers, n = 16, 4096
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread() // a thread of its own; never unlocked, so Go discards it afterwards
			assert.NoError(t, work(d, f, float32(w+1), n), "worker %d", w)
		}()
	}
	wg.Wait()
}

// work scales a buffer of ones by v on a new stream and checks the result.
func work(d vendorapi.Driver, f vendorapi.Function, v float32, n int) error {
	s, err := d.StreamCreate(0)
	if err != nil {
		return err
	}
	defer d.StreamDestroy(s)
	p, err := d.Malloc(0, uint64(4*n))
	if err != nil {
		return err
	}
	defer d.Free(0, p)
	in := make([]byte, 4*n)
	for i := range n {
		binary.LittleEndian.PutUint32(in[4*i:], math.Float32bits(1))
	}
	if err := d.CopyHtoD(0, p, in); err != nil {
		return err
	}
	args := []vendorapi.Arg{vendorapi.PtrArg(p), vendorapi.PtrArg(p), vendorapi.F32Arg(v), vendorapi.F32Arg(0), vendorapi.I64Arg(int64(n))}
	if err := d.Launch(f, vendorapi.Dim3{X: 4}, vendorapi.Dim3{X: 128}, 0, s, args); err != nil {
		return err
	}
	if err := d.StreamSynchronize(s); err != nil {
		return err
	}
	out := make([]byte, 4*n)
	if err := d.CopyDtoH(0, out, p); err != nil {
		return err
	}
	for i := range n {
		if got := math.Float32frombits(binary.LittleEndian.Uint32(out[4*i:])); got != v {
			return &mismatch{i, got, v}
		}
	}
	return nil
}

type mismatch struct {
	i         int
	got, want float32
}

func (m *mismatch) Error() string {
	return fmt.Sprintf("element %d is %v, want %v", m.i, m.got, m.want)
}
