package host

import (
	"fmt"
	"sync"
	"time"

	"github.com/ternion/ternion/vendorapi"
)

// asyncErr is a failure of queued work, reported once: by the next
// StreamSynchronize of its stream, EventSynchronize of a later event recorded
// there, or DeviceSynchronize. It is guarded by its stream's mu.
type asyncErr struct {
	err   error
	taken bool
}

// record is one EventRecord: it completes when its stream's queue reaches it.
type record struct {
	s    *stream
	done chan struct{}
	at   time.Time // set before done is closed
	err  *asyncErr // the stream's unreported error when it completed
}

// take returns the unreported error of the record's stream at completion, once.
func (r *record) take() error {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	if r.err == nil || r.err.taken {
		return nil
	}
	r.err.taken = true
	if r.s.sticky == r.err {
		r.s.sticky = nil
	}
	return r.err.err
}

// item is one entry of a stream's queue: work, an event record or an event wait.
type item struct {
	n    *node
	rec  *record
	wait *record
}

// stream is an in-order queue run by one goroutine.
type stream struct {
	id  uintptr
	dev int
	d   *Driver

	mu      sync.Mutex
	cond    sync.Cond // signalled when items arrive, on closing, and when the queue drains
	queue   []item
	pending int // queued or running items
	closing bool
	sticky  *asyncErr // first unreported error
	exited  chan struct{}

	capture *capture // guarded by Driver.mu
}

func newStream(d *Driver, id uintptr, dev int) *stream {
	s := &stream{id: id, dev: dev, d: d, exited: make(chan struct{})}
	s.cond.L = &s.mu
	go s.loop()
	return s
}

// loop runs queued items until the stream is closing and drained.
func (s *stream) loop() {
	defer close(s.exited)
	for {
		s.mu.Lock()
		for len(s.queue) == 0 && !s.closing {
			s.cond.Wait()
		}
		if len(s.queue) == 0 {
			s.mu.Unlock()
			return
		}
		it := s.queue[0]
		s.queue[0] = item{}
		s.queue = s.queue[1:]
		s.mu.Unlock()

		err := s.run(it)

		s.mu.Lock()
		if err != nil && s.sticky == nil {
			s.sticky = &asyncErr{err: err}
		}
		s.pending--
		if s.pending == 0 {
			s.cond.Broadcast()
		}
		s.mu.Unlock()
	}
}

// run executes one item; a panic becomes an error instead of killing the process.
func (s *stream) run(it item) (err error) {
	defer func() {
		if p := recover(); p != nil {
			call := "hostStreamExecute"
			if it.n != nil {
				call = it.n.call
			}
			err = newErr(errLaunchFailure, call, s.dev, "internal error: %v", p)
		}
	}()
	switch {
	case it.wait != nil:
		<-it.wait.done
	case it.rec != nil:
		s.mu.Lock()
		it.rec.err = s.sticky
		s.mu.Unlock()
		it.rec.at = time.Now()
		close(it.rec.done)
	default:
		return s.d.execNode(it.n)
	}
	return nil
}

// push appends items to the queue.
func (s *stream) push(items []item) {
	if len(items) == 0 {
		return
	}
	s.mu.Lock()
	s.queue = append(s.queue, items...)
	s.pending += len(items)
	s.cond.Broadcast()
	s.mu.Unlock()
}

// wait blocks until the queue is drained; with take it returns (and clears)
// the stream's unreported error.
func (s *stream) wait(take bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for s.pending > 0 {
		s.cond.Wait()
	}
	if !take || s.sticky == nil {
		return nil
	}
	e := s.sticky
	e.taken = true
	s.sticky = nil
	return e.err
}

// stop drains the queue and ends the goroutine.
func (s *stream) stop() {
	s.mu.Lock()
	s.closing = true
	s.cond.Broadcast()
	s.mu.Unlock()
	<-s.exited
}

// lookupStream finds a live stream; the caller holds d.mu.
func (d *Driver) lookupStream(call string, s vendorapi.Stream) (*stream, error) {
	st := d.streams[s.Handle]
	if st == nil || st.dev != s.Device {
		return nil, newErr(errInvalidHandle, call, s.Device, "unknown or destroyed stream %d", s.Handle)
	}
	return st, nil
}

// StreamCreate starts a stream (a goroutine with an in-order queue) on dev.
func (d *Driver) StreamCreate(dev int) (vendorapi.Stream, error) {
	if err := d.checkDev("hostStreamCreate", dev); err != nil {
		return vendorapi.Stream{}, err
	}
	id := d.id()
	st := newStream(d, id, dev)
	d.mu.Lock()
	d.streams[id] = st
	d.mu.Unlock()
	return vendorapi.Stream{Device: dev, Handle: id}, nil
}

// StreamDestroy runs s's queued work, then ends its goroutine. A capture in
// progress on s is discarded.
func (d *Driver) StreamDestroy(s vendorapi.Stream) error {
	d.mu.Lock()
	st, err := d.lookupStream("hostStreamDestroy", s)
	if err != nil {
		d.mu.Unlock()
		return err
	}
	delete(d.streams, s.Handle)
	if st.capture != nil {
		st.capture.end()
		st.capture = nil
	}
	d.mu.Unlock()
	st.stop()
	return nil
}

// capturing returns an error, invalidating the capture, when st is capturing.
// The caller holds d.mu.
func (st *stream) capturing(call string) error {
	if st.capture == nil {
		return nil
	}
	st.capture.invalidate(call + " on the capturing stream")
	return newErr(errCaptureUnsupported, call, st.dev,
		"stream %d is capturing; %s is not allowed during capture and invalidated it", st.id, call)
}

// StreamSynchronize waits for s's queued work and returns the first error of
// that work not yet reported. It fails, invalidating the capture, while s is capturing.
func (d *Driver) StreamSynchronize(s vendorapi.Stream) error {
	const call = "hostStreamSynchronize"
	st, err := d.idleStream(call, s)
	if err != nil {
		return err
	}
	return st.wait(true)
}

// StreamQuery returns nil when s is idle and an error matching ErrNotReady
// otherwise. It fails, invalidating the capture, while s is capturing.
func (d *Driver) StreamQuery(s vendorapi.Stream) error {
	const call = "hostStreamQuery"
	st, err := d.idleStream(call, s)
	if err != nil {
		return err
	}
	st.mu.Lock()
	busy := st.pending
	st.mu.Unlock()
	if busy > 0 {
		return newErr(errNotReady, call, s.Device, "%d items queued", busy)
	}
	return nil
}

// StreamWaitEvent makes work queued on s after this call wait until the most
// recent EventRecord of e (as of this call) completes; an unrecorded e is no wait.
func (d *Driver) StreamWaitEvent(s vendorapi.Stream, e vendorapi.Event) error {
	const call = "hostStreamWaitEvent"
	return d.submit(call, s, &node{kind: nodeWait, call: call, dev: s.Device, event: e})
}

// submit validates nodes for stream s and queues them, or appends them to s's
// capture. Nothing is queued when any node is invalid.
func (d *Driver) submit(call string, s vendorapi.Stream, nodes ...*node) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	st, err := d.lookupStream(call, s)
	if err != nil {
		return err
	}
	if err := d.validate(call, st, nodes); err != nil {
		return err
	}
	if st.capture != nil {
		return st.capture.add(d, call, nodes)
	}
	items := make([]item, 0, len(nodes))
	for _, n := range nodes {
		switch n.kind {
		case nodeRecord:
			ev := d.events[n.event.Handle]
			r := &record{s: st, done: make(chan struct{})}
			ev.last, ev.captured = r, nil
			items = append(items, item{rec: r})
		case nodeWait:
			if r := d.events[n.event.Handle].last; r != nil {
				items = append(items, item{wait: r})
			}
		default:
			items = append(items, item{n: n})
		}
	}
	st.push(items)
	return nil
}

// validate checks every node against the current handles and memory tables.
// The caller holds d.mu.
func (d *Driver) validate(call string, st *stream, nodes []*node) error {
	d.memMu.RLock()
	defer d.memMu.RUnlock()
	var recorded map[uintptr]bool
	for i, n := range nodes {
		err := d.check(st, n, recorded)
		if err != nil {
			if len(nodes) > 1 || call != n.call {
				err.Message = fmt.Sprintf("node %d (%s): %s", i, n.call, err.Message)
				err.Call = call
			}
			return err
		}
		if n.kind == nodeRecord {
			if recorded == nil {
				recorded = map[uintptr]bool{}
			}
			recorded[n.event.Handle] = true
		}
	}
	return nil
}

// idleStream returns s's stream, or an error when s is unknown or capturing
// (which invalidates the capture, as CUDA does for synchronizing calls).
func (d *Driver) idleStream(call string, s vendorapi.Stream) (*stream, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	st, err := d.lookupStream(call, s)
	if err != nil {
		return nil, err
	}
	return st, st.capturing(call)
}
