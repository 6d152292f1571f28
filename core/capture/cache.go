package capture

import (
	"fmt"
	"math"
	"time"

	"github.com/ternion/ternion/core/graph"
	"github.com/ternion/ternion/switches"
)

// Stats counts a cache's verdicts and events since it was made.
type Stats struct {
	// Verdicts by decision (Reinstantiate: the verdicts UpdateFailed returned).
	Eager, Capture, Replay, Update, Reinstantiate int
	// Fallbacks counts the times the policy fell back to eager: a graph
	// captured or updated MaxUpdates calls in a row that changed again,
	// shapes thrashing the cache, a failed capture.
	Fallbacks int
	// CaptureFailures counts the captures reported failed (CaptureFailed).
	CaptureFailures int
	// Evictions counts executable graphs Evict handed back for being idle
	// or beyond MaxGraphs.
	Evictions int
	// Graphs is the number of executable graphs held now.
	Graphs int
	// Shapes is the number of graph shapes with a history now, executable
	// or not (warming up, falling back).
	Shapes int
}

// String reads "12 eager, 1 capture, 4000 replay, 0 update, 0 reinstantiate;
// 0 fall-backs, 0 failed captures, 0 evictions; 1 graph of 1 shape".
func (s Stats) String() string {
	return fmt.Sprintf("%d eager, %d capture, %d replay, %d update, %d reinstantiate; %d fall-backs, %d failed captures, %d evictions; %d graphs of %d shapes",
		s.Eager, s.Capture, s.Replay, s.Update, s.Reinstantiate, s.Fallbacks, s.CaptureFailures, s.Evictions, s.Graphs, s.Shapes)
}

// entry is the history of one graph shape.
type entry[E any] struct {
	key       Key
	props     []Props         // the last call's properties
	nodes     []*graph.Tensor // the nodes they were taken from
	exec      E               // the executable graph, when hasExec
	hasExec   bool
	stale     bool      // exec was made for other props than these
	same      int       // consecutive calls with identical props, this one included
	changes   int       // consecutive captures and updates without a replay
	eagerLeft int       // calls still eager after a fall-back
	why       string    // the reason of that fall-back
	lastUse   time.Time // the last call's clock, for idle eviction
	tick      uint64    // the last call's sequence number, for LRU order
}

// Cache is one backend's graph-capture state: a history per graph shape
// (Key) with the executable graph of type E made for it (vendorapi.GraphExec
// in core/backend), and the counters the policy decides by. A Cache is not
// safe for concurrent use: the backend's lock guards it.
//
// Each call: Decide, then do what the verdict says and report the outcome:
//   - Eager: run the nodes; nothing to report.
//   - Capture: capture, instantiate and launch; report Captured, or
//     CaptureFailed (then run the graph eagerly: nothing ran under the
//     failed capture).
//   - Replay: launch Exec(key).
//   - Update: capture, update Exec(key) with the captured graph and launch;
//     report Updated, or UpdateFailed, which returns the Reinstantiate
//     verdict: the caller instantiates the graph it just captured at once
//     (as the seed does) and reports Captured (or CaptureFailed).
//
// Then call Evict and destroy what it returns: every executable graph the
// cache lets go of (evicted, replaced, dropped by a fall-back) comes back
// from Evict, except those Drop and DropAll return.
type Cache[E any] struct {
	opts    Options
	entries map[Key]*entry[E]
	execs   int       // entries holding an executable graph
	pending []E       // executables let go of, for Evict to hand back
	off     string    // graphs disabled for good (Retry < 0): the reason
	idleAt  time.Time // no entry can be idle before this
	tick    uint64    // Decide calls that reached an entry
	last    *entry[E] // the entry of the last such call

	// The cache-wide fall-back after thrashing shapes.
	thrash    int    // consecutive captures that each evict another graph
	eagerLeft int    // calls still eager
	eagerWhy  string // why

	stats Stats
}

// NewCache returns an empty cache deciding with o (MaxGraphs below 1 is 1,
// Warmup below 0 is 0).
func NewCache[E any](o Options) *Cache[E] {
	o.MaxGraphs = max(o.MaxGraphs, 1)
	o.Warmup = max(o.Warmup, 0)
	return &Cache[E]{opts: o, entries: map[Key]*entry[E]{}}
}

// Options returns the options the cache decides with.
func (c *Cache[E]) Options() Options { return c.opts }

// The fixed reasons (no allocation on the paths that use them).
var (
	reasonDisabled = switches.DisableGraphs.Name + " is set: graphs are off"
	reasonArch     = "the device or its compiled arch does not allow graphs (the seed: CUDA cc ≥ Ampere)"
	reasonReplay   = "same properties as when the executable graph was made"
	reasonEmpty    = "the graph has no nodes"
)

// Decide returns what to do with a graph of nodes (placed: their pointers
// are read) this call, now. Its rules, in order:
//  1. TERNION_DISABLE_GRAPHS (Options.Disabled) → Eager.
//  2. !Options.ArchOK → Eager.
//  3. Graphs disabled for good by an earlier fall-back (Retry < 0) → Eager.
//  4. Node gates, as the seed: a node that reads a split buffer, MUL_MAT_ID
//     with ne[2] ≠ 1, ADD whose src1 has ne[1] > 1 (batched), with
//     Options.CopyIndirection a CPY that cannot use pointer indirection
//     (Options.CopyIndirect) → Eager, naming the node. Views and empty
//     nodes pass.
//  5. A cache-wide fall-back after thrashing shapes still running → Eager.
//  6. History of the graph's shape: its properties are snapshotted;
//     a fall-back of this shape still running → Eager; an executable graph
//     made for identical properties → Replay; otherwise a capture or an
//     update is needed, and a shape captured or updated MaxUpdates calls in
//     a row falls back to eager (for Retry calls, or for good), one with an
//     executable graph → Update, one not yet run Warmup+1 times with
//     identical properties → Eager (warming up), else → Capture (and once
//     MaxUpdates captures in a row have each evicted another graph, the
//     whole cache falls back instead).
//
// The replay path allocates nothing.
func (c *Cache[E]) Decide(nodes []*graph.Tensor, now time.Time) Verdict {
	o := &c.opts
	switch {
	case o.Disabled:
		return c.eager(Verdict{Reason: reasonDisabled})
	case !o.ArchOK:
		return c.eager(Verdict{Reason: reasonArch})
	case c.off != "":
		return c.eager(Verdict{Reason: c.off})
	case len(nodes) == 0:
		return c.eager(Verdict{Reason: reasonEmpty})
	}
	key, gate, hit := c.scan(nodes)
	if gate != "" {
		return c.eager(Verdict{Reason: gate})
	}
	if c.eagerLeft > 0 {
		c.eagerLeft--
		return c.eager(Verdict{Key: key, Reason: c.window(c.eagerWhy, c.eagerLeft)})
	}

	e := c.last
	if !hit {
		if e = c.entries[key]; e == nil {
			e = c.add(key, now)
		}
		c.last = e
	}
	c.tick++
	e.tick, e.lastUse = c.tick, now
	first, what, fresh := -1, "", false
	if !hit {
		first, what, fresh = e.snapshot(nodes, o.CopyIndirection)
	}
	if first >= 0 {
		e.same = 1
		e.stale = e.hasExec
	} else if e.same < math.MaxInt {
		e.same++
	}
	if e.eagerLeft > 0 {
		e.eagerLeft--
		return c.eager(Verdict{Key: key, Reason: c.window(e.why, e.eagerLeft)})
	}
	if e.hasExec && !e.stale {
		e.changes, c.thrash = 0, 0
		c.stats.Replay++
		return Verdict{Decision: Replay, Reason: reasonReplay, Key: key}
	}

	// A capture or an update is needed.
	var change string
	switch {
	case fresh:
		change = "a new shape"
	case first >= 0:
		change = fmt.Sprintf("node %d (%s): %s changed", first, nodes[first].Op(), what)
	default:
		change = "properties changed since the executable graph was made"
	}
	if o.MaxUpdates > 0 && e.changes >= o.MaxUpdates {
		return c.fallBack(e, fmt.Sprintf("graph captured or updated %d calls in a row, then %s", e.changes, change))
	}
	if e.hasExec {
		e.changes++
		c.stats.Update++
		return Verdict{Decision: Update, Reason: change, Key: key}
	}
	if e.same <= o.Warmup {
		return c.eager(Verdict{Key: key, Reason: fmt.Sprintf("warming up %d/%d: captured on the %s run with identical properties",
			e.same, o.Warmup+1, ordinal(o.Warmup+1))})
	}
	if c.execs >= o.MaxGraphs { // this capture will evict another graph
		if o.MaxUpdates > 0 && c.thrash >= o.MaxUpdates {
			return c.fallBackAll(key, fmt.Sprintf("%d captures in a row each evicted another graph (more shapes than %d graphs)",
				c.thrash, o.MaxGraphs))
		}
		c.thrash++
	}
	e.changes++
	c.stats.Capture++
	reason := change + ": capturing"
	if o.Warmup > 0 {
		reason = fmt.Sprintf("%d runs with identical properties: capturing", e.same)
	}
	return Verdict{Decision: Capture, Reason: reason, Key: key}
}

// window is the reason of an eager call in a fall-back with left calls
// still to go after this one.
func (c *Cache[E]) window(why string, left int) string {
	return fmt.Sprintf("%s: still eager (%d/%d of the fall-back)", why, c.opts.Retry-left, c.opts.Retry)
}

// ordinal spells n as "1st", "2nd", "3rd", "4th", ….
func ordinal(n int) string {
	suffix := "th"
	switch {
	case n%100 >= 11 && n%100 <= 13:
	case n%10 == 1:
		suffix = "st"
	case n%10 == 2:
		suffix = "nd"
	case n%10 == 3:
		suffix = "rd"
	}
	return fmt.Sprint(n) + suffix
}

// eager counts and returns an Eager verdict.
func (c *Cache[E]) eager(v Verdict) Verdict {
	v.Decision = Eager
	c.stats.Eager++
	return v
}

// scan applies the node gates and computes the graph's key; gate is why the
// graph cannot be captured ("" when it can). While the nodes match the
// properties of the shape decided last, it compares them instead of hashing
// (identical properties imply the same key): hit reports that they all
// matched, so that the call is that shape's again with nothing changed.
func (c *Cache[E]) scan(nodes []*graph.Tensor) (key Key, gate string, hit bool) {
	last := c.last
	match := last != nil && len(last.props) == len(nodes)
	h := uint64(len(nodes))
	for i, n := range nodes {
		if match && !last.props[i].matches(n, last.nodes[i] == n, c.opts.CopyIndirection) {
			match = false
			for _, m := range nodes[:i] {
				h = mix(h, nodeWord(m))
			}
		}
		if !match {
			h = mix(h, nodeWord(n))
		}
		if op := n.Op(); c.opts.IsSplit != nil || op == graph.OpAdd || op == graph.OpMulMatID || op == graph.OpCpy {
			if gate = c.gate(i, n); gate != "" {
				return Key{}, gate, false
			}
		}
	}
	if match {
		return last.key, "", true
	}
	return Key{Nodes: len(nodes), Hash: h}, "", false
}

// gate returns why node i keeps the graph from being captured, or "".
func (c *Cache[E]) gate(i int, n *graph.Tensor) string {
	o := &c.opts
	op := n.Op()
	switch {
	case o.IsSplit != nil && o.IsSplit(n) && launches(n):
		return fmt.Sprintf("node %d (%s) reads a split buffer: the seed does not capture it", i, op)
	case op == graph.OpMulMatID && n.Dim(2) != 1 && launches(n):
		return fmt.Sprintf("node %d (%s) has ne[2]=%d != 1: the seed does not capture it", i, op, n.Dim(2))
	case op == graph.OpAdd && n.Src(1) != nil && n.Src(1).Dim(1) > 1 && launches(n):
		return fmt.Sprintf("node %d (%s) has src1 ne[1]=%d > 1: batched, the seed does not capture it", i, op, n.Src(1).Dim(1))
	case op == graph.OpCpy && o.CopyIndirection && o.CopyIndirect != nil && !o.CopyIndirect(n) && launches(n):
		return fmt.Sprintf("node %d (%s %s → %s) cannot use pointer indirection: the seed does not capture it",
			i, op, n.Src(0).Type(), n.Type())
	}
	return ""
}

// launches reports whether node n launches work: it is no view and not
// empty (the seed's gates skip the others).
func launches(n *graph.Tensor) bool {
	return n.Op() != graph.OpNone && !n.Op().IsView() && !empty(n)
}

// empty reports whether n has no elements (ggml_is_empty).
func empty(n *graph.Tensor) bool {
	ne := n.Ne()
	return ne[0] == 0 || ne[1] == 0 || ne[2] == 0 || ne[3] == 0
}

// snapshot records the properties of nodes in e (ci: copy indirection),
// returning the first node whose properties changed (-1 when none did) and
// what changed; fresh is true when e had no properties yet.
func (e *entry[E]) snapshot(nodes []*graph.Tensor, ci bool) (first int, what string, fresh bool) {
	if len(e.props) != len(nodes) {
		e.props = Snapshot(e.props[:0], nodes, ci)
		e.nodes = append(e.nodes[:0], nodes...)
		return 0, "", true
	}
	first = -1
	for i, n := range nodes {
		if e.props[i].matches(n, e.nodes[i] == n, ci) {
			e.nodes[i] = n
			continue
		}
		var p Props
		p.set(n, ci)
		if first < 0 {
			first, what = i, p.Diff(&e.props[i])
		}
		e.props[i], e.nodes[i] = p, n
	}
	return first, what, false
}

// add makes the entry of a new shape, first forgetting the least recently
// used shape without an executable graph when MaxGraphs of them are kept.
func (c *Cache[E]) add(key Key, now time.Time) *entry[E] {
	if len(c.entries)-c.execs >= c.opts.MaxGraphs {
		if lru := c.lru(false); lru != nil {
			c.remove(lru)
		}
	}
	if deadline := now.Add(c.opts.Idle); len(c.entries) == 0 || deadline.Before(c.idleAt) {
		c.idleAt = deadline
	}
	e := &entry[E]{key: key}
	c.entries[key] = e
	return e
}

// remove forgets entry e.
func (c *Cache[E]) remove(e *entry[E]) {
	delete(c.entries, e.key)
	if c.last == e {
		c.last = nil
	}
}

// lru returns the least recently used entry with (or without) an
// executable graph, or nil.
func (c *Cache[E]) lru(withExec bool) *entry[E] {
	var old *entry[E]
	for _, e := range c.entries {
		if e.hasExec == withExec && (old == nil || e.tick < old.tick) {
			old = e
		}
	}
	return old
}

// letGo moves e's executable graph, if any, to the list Evict hands back.
func (c *Cache[E]) letGo(e *entry[E]) {
	if e.hasExec {
		var zero E
		c.pending = append(c.pending, e.exec)
		e.exec, e.hasExec, e.stale = zero, false, false
		c.execs--
	}
}

// fallBack makes shape e eager for Retry calls (this one not counted), or
// disables graphs for good when Retry < 0; e's executable graph goes.
func (c *Cache[E]) fallBack(e *entry[E], why string) Verdict {
	c.stats.Fallbacks++
	c.letGo(e)
	e.changes = 0
	if c.opts.Retry < 0 {
		c.disable(why)
		return c.eager(Verdict{Key: e.key, Reason: c.off})
	}
	e.eagerLeft, e.why = c.opts.Retry, why
	return c.eager(Verdict{Key: e.key, Reason: fmt.Sprintf("%s: eager now and for the next %d calls", why, c.opts.Retry)})
}

// fallBackAll makes every graph eager for Retry calls (this one not
// counted), or disables graphs for good when Retry < 0.
func (c *Cache[E]) fallBackAll(key Key, why string) Verdict {
	c.stats.Fallbacks++
	c.thrash = 0
	if c.opts.Retry < 0 {
		c.disable(why)
		return c.eager(Verdict{Key: key, Reason: c.off})
	}
	c.eagerLeft, c.eagerWhy = c.opts.Retry, why
	return c.eager(Verdict{Key: key, Reason: fmt.Sprintf("%s: eager now and for the next %d calls", why, c.opts.Retry)})
}

// disable turns graphs off for good (the seed's fall-back): every
// executable graph goes.
func (c *Cache[E]) disable(why string) {
	c.off = why + ": graphs disabled for good on this backend (the seed's rule; Retry < 0)"
	for _, e := range c.entries {
		c.letGo(e)
	}
}

// Exec returns the executable graph of key (for Replay and Update).
func (c *Cache[E]) Exec(key Key) (E, bool) {
	if e := c.entries[key]; e != nil && e.hasExec {
		return e.exec, true
	}
	var zero E
	return zero, false
}

// Captured stores exec, the executable graph instantiated from a capture of
// key's graph (after Capture, or after UpdateFailed's re-instantiation). An
// executable it replaces, or one for a key the cache no longer has, goes to
// Evict.
func (c *Cache[E]) Captured(key Key, exec E) {
	e := c.entries[key]
	if e == nil || c.off != "" {
		c.pending = append(c.pending, exec)
		return
	}
	c.letGo(e)
	e.exec, e.hasExec, e.stale = exec, true, false
	c.execs++
}

// CaptureFailed records that capturing or instantiating key's graph failed
// with err; the caller runs the graph eagerly this call. The shape falls
// back: eager for the next Retry calls, after which the policy decides
// again, or graphs disabled for good when Retry < 0 (the seed). An
// executable graph the shape held goes to Evict.
func (c *Cache[E]) CaptureFailed(key Key, err error) {
	c.stats.CaptureFailures++
	e := c.entries[key]
	if e == nil {
		return
	}
	c.stats.Fallbacks++
	c.letGo(e)
	e.changes = 0
	why := fmt.Sprintf("capture failed (%v)", err)
	if c.opts.Retry < 0 {
		c.disable(why)
		return
	}
	e.eagerLeft, e.why = c.opts.Retry, why
}

// Updated records that key's executable graph was updated to the graph just
// captured: it matches this call's properties.
func (c *Cache[E]) Updated(key Key) {
	if e := c.entries[key]; e != nil && e.hasExec {
		e.stale = false
	}
}

// UpdateFailed records that updating key's executable graph failed with err
// (the driver refused the update: another topology). As the seed does, the
// caller re-instantiates at once: the old executable goes to Evict, the
// caller instantiates the graph it just captured and reports Captured (or
// CaptureFailed). It returns the Reinstantiate verdict, for the log.
func (c *Cache[E]) UpdateFailed(key Key, err error) Verdict {
	c.stats.Reinstantiate++
	if e := c.entries[key]; e != nil {
		c.letGo(e)
	}
	return Verdict{Decision: Reinstantiate, Key: key,
		Reason: fmt.Sprintf("updating the executable graph failed (%v): instantiating the graph just captured instead", err)}
}

// Evict returns the executable graphs for the caller to destroy: those the
// cache let go of since the last call, those unused for Options.Idle (the
// shape's history goes too), and the least recently used beyond
// Options.MaxGraphs. Call it after each call's launches are queued. It
// allocates nothing when there is nothing to evict.
func (c *Cache[E]) Evict(now time.Time) []E {
	var out []E
	if len(c.pending) > 0 {
		out = append(out, c.pending...)
		clear(c.pending)
		c.pending = c.pending[:0]
	}
	if c.opts.Idle > 0 && !now.Before(c.idleAt) && len(c.entries) > 0 {
		c.idleAt = time.Time{}
		first := true
		for _, e := range c.entries {
			if deadline := e.lastUse.Add(c.opts.Idle); !now.Before(deadline) {
				if e.hasExec {
					out = append(out, e.exec)
					c.execs--
					c.stats.Evictions++
				}
				c.remove(e)
			} else if first || deadline.Before(c.idleAt) {
				c.idleAt, first = deadline, false
			}
		}
	}
	for c.execs > c.opts.MaxGraphs {
		e := c.lru(true)
		out = append(out, e.exec)
		c.execs--
		c.stats.Evictions++
		c.remove(e)
	}
	return out
}

// Drop forgets key's history and returns its executable graph, if any, for
// the caller to destroy.
func (c *Cache[E]) Drop(key Key) (E, bool) {
	e := c.entries[key]
	var zero E
	if e == nil {
		return zero, false
	}
	c.remove(e)
	if !e.hasExec {
		return zero, false
	}
	c.execs--
	return e.exec, true
}

// DropAll forgets every history and returns every executable graph held or
// waiting for Evict, for the caller to destroy (closing the backend). The
// statistics stay, and so do graphs disabled for good.
func (c *Cache[E]) DropAll() []E {
	out := append([]E(nil), c.pending...)
	clear(c.pending)
	c.pending = c.pending[:0]
	for _, e := range c.entries {
		if e.hasExec {
			out = append(out, e.exec)
		}
		c.remove(e)
	}
	c.execs, c.thrash, c.eagerLeft = 0, 0, 0
	return out
}

// Stats returns the cache's counts.
func (c *Cache[E]) Stats() Stats {
	s := c.stats
	s.Graphs, s.Shapes = c.execs, len(c.entries)
	return s
}
