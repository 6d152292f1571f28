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
//
// Items are numbered as they are queued (tickets 1, 2, …) and complete in
// that order, so "everything queued before this call" is a ticket: a
// synchronizing call takes the latest ticket and waits until done reaches
// it, never for work queued after it started.
type stream struct {
	id  uintptr
	dev int
	d   *Driver

	mu      sync.Mutex
	cond    sync.Cond // signalled when items arrive, on closing, and, while someone waits, when an item completes
	queue   []item
	queued  uint64 // items ever queued: the ticket of the latest
	done    uint64 // items completed
	waiters int    // goroutines waiting for done to reach a ticket
	closing bool
	sticky  *asyncErr // first unreported error
	exited  chan struct{}
	// foreign[x] is the ticket of the latest item using the memory of device
	// x ≠ dev without peer access: a copy between devices.
	foreign [MaxDevices]uint64

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
		s.done++
		if s.waiters > 0 {
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
	for _, it := range items {
		s.queued++
		if n := it.n; n != nil {
			if n.dev != s.dev {
				s.foreign[n.dev] = s.queued
			}
			if (n.kind == nodePeer || n.kind == node2D) && n.srcDev != s.dev {
				s.foreign[n.srcDev] = s.queued
			}
		}
	}
	s.cond.Broadcast()
	s.mu.Unlock()
}

// waitFor blocks until the item with ticket t (and so every earlier one) has
// completed; with take it then returns (and clears) the stream's unreported
// error. The caller holds s.mu.
func (s *stream) waitFor(t uint64, take bool) error {
	if s.done < t {
		s.waiters++
		for s.done < t {
			s.cond.Wait()
		}
		s.waiters--
	}
	if !take || s.sticky == nil {
		return nil
	}
	e := s.sticky
	e.taken = true
	s.sticky = nil
	return e.err
}

// sync waits for the work queued on s so far (not for work queued while it
// waits) and returns the stream's unreported error, taking it.
func (s *stream) sync() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.waitFor(s.queued, true)
}

// ticket is a stream and the ticket of one of its items.
type ticket struct {
	s *stream
	t uint64
}

// tickets returns, for every stream that pick selects, the ticket pick
// returns for it; pick is called with the stream's mu held. The caller holds
// d.mu.
func (d *Driver) tickets(pick func(s *stream) (t uint64, ok bool)) []ticket {
	var ts []ticket
	for _, s := range d.streams {
		s.mu.Lock()
		if t, ok := pick(s); ok {
			ts = append(ts, ticket{s, t})
		}
		s.mu.Unlock()
	}
	return ts
}

// waitTickets waits until each stream of ts has completed the item of its
// ticket; with take it returns the first unreported error of those streams,
// taking each stream's.
func waitTickets(ts []ticket, take bool) error {
	var first error
	for _, w := range ts {
		w.s.mu.Lock()
		err := w.s.waitFor(w.t, take)
		w.s.mu.Unlock()
		if err != nil && first == nil {
			first = err
		}
	}
	return first
}

// settle waits until every stream has completed the work queued on it so
// far that upTo selects: upTo returns, for a stream whose mu is held, the
// ticket to wait for (0: none). Errors stay with their streams.
func (d *Driver) settle(upTo func(s *stream) uint64) {
	d.mu.Lock()
	ts := d.tickets(func(s *stream) (uint64, bool) {
		t := upTo(s)
		return t, t > s.done
	})
	d.mu.Unlock()
	_ = waitTickets(ts, false)
}

// settleAll waits for the work queued so far on every stream: what any
// device may use (pinned and registered host memory).
func (d *Driver) settleAll() { d.settle(func(s *stream) uint64 { return s.queued }) }

// settleDevices waits for the work queued so far that may use the memory of
// the devices in mask (bit x: device x): all work of their streams and of
// streams of devices with peer access to one of them, and on other streams
// the copies between devices that involve one of them.
func (d *Driver) settleDevices(mask uint32) {
	var near uint32 // devices whose streams may use the memory directly
	d.memMu.RLock()
	for dev := range d.devices {
		for owner := range d.devices {
			if mask&(1<<owner) != 0 && (dev == owner || d.peer[dev][owner]) {
				near |= 1 << dev
			}
		}
	}
	d.memMu.RUnlock()
	d.settle(func(s *stream) uint64 {
		if near&(1<<s.dev) != 0 {
			return s.queued
		}
		var t uint64
		for x := range d.devices {
			if mask&(1<<x) != 0 {
				t = max(t, s.foreign[x])
			}
		}
		return t
	})
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

// StreamSynchronize waits for the work queued on s before the call (not for
// work queued while it waits) and returns the first error of s's work not yet
// reported. It fails, invalidating the capture, while s is capturing.
func (d *Driver) StreamSynchronize(s vendorapi.Stream) error {
	const call = "hostStreamSynchronize"
	st, err := d.idleStream(call, s)
	if err != nil {
		return err
	}
	return st.sync()
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
	busy := st.queued - st.done
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
	st, err := d.admit(call, s, nodes)
	if err != nil {
		return err
	}
	if st.capture != nil {
		st.capture.add(d, nodes)
		return nil
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

// admit returns s's stream after checking that nodes may be queued on it or
// added to its capture: s is live, every node is valid, and a capture in
// progress is not invalidated. The caller holds d.mu.
func (d *Driver) admit(call string, s vendorapi.Stream, nodes []*node) (*stream, error) {
	st, err := d.lookupStream(call, s)
	if err != nil {
		return nil, err
	}
	if err := d.validate(call, st, nodes); err != nil {
		return nil, err
	}
	if st.capture != nil {
		if err := st.capture.usable(call); err != nil {
			return nil, err
		}
	}
	return st, nil
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
