package backend

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/ternion/ternion/arch"
	"github.com/ternion/ternion/core/capture"
	"github.com/ternion/ternion/core/graph"
	"github.com/ternion/ternion/core/ops"
	"github.com/ternion/ternion/vendorapi"
)

// graphs.go runs a graph's launches through GPU graphs when the capture
// policy (core/capture) says so: Compute asks the backend's capture.Cache
// for a verdict each call and eager-launches, captures, replays or updates
// an executable graph accordingly. A capture that fails for any reason ends
// the stream's capture, is counted and logged, and the call runs eagerly:
// never a wrong result, never a stream left capturing.

// execGraph is one executable graph the backend keeps (the cache's E).
type execGraph struct {
	exec vendorapi.GraphExec
	// frees is the pool's DriverFrees when the graph was made: the
	// graph's launches may use pool memory (scratch) freed back to the pool
	// after the op, which stays the pool's while the count is unchanged.
	frees uint64
	// work is the compute buffer the graph's nodes were placed in.
	work *Buffer
	// ptrs is the CPY pointer array the graph's copies read their
	// destinations from (0: none do); a graph made with an array since
	// replaced by a larger one is captured again.
	ptrs vendorapi.DevicePtr
}

// GraphStats are the counts of a backend's graph decisions and outcomes.
type GraphStats = capture.Stats

// GraphStats returns the counts of this backend's graph decisions (eager,
// capture, replay, update, re-instantiation, fall-backs, failed captures,
// evictions).
func (b *Backend) GraphStats() GraphStats {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.graphs.Stats()
}

// newGraphCache returns the executable-graph cache of a backend on a device
// with props p, with the policy o. ArchOK is set here: the host device
// always captures; a GPU when its compute capability allows graphs, as the
// seed (cc ≥ Ampere on NVIDIA; every AMD and Moore Threads arch ternion
// runs on). Which CPY can use the CPY pointer array is ops.CopyIndirect's
// answer unless o says otherwise.
func newGraphCache(p vendorapi.Props, o capture.Options) *capture.Cache[*execGraph] {
	o.ArchOK = p.CC == 0 || arch.GraphsAllowed(p.CC)
	if o.CopyIndirect == nil {
		o.CopyIndirect = ops.CopyIndirect
	}
	return capture.NewCache[*execGraph](o)
}

// captureGates serialises capture with the destruction of BLAS handles on
// one device (the seed's lock and counter): a capture holds its device's
// gate shared, a handle is destroyed holding it exclusively, so no handle
// goes away while another backend of the device captures.
var captureGates sync.Map // deviceKey → *sync.RWMutex

type deviceKey struct {
	drv vendorapi.Driver
	dev int
}

func captureGate(d vendorapi.Driver, dev int) *sync.RWMutex {
	g, _ := captureGates.LoadOrStore(deviceKey{d, dev}, new(sync.RWMutex))
	return g.(*sync.RWMutex)
}

// launchGraph queues g's nodes (placed, inputs uploaded) as the capture
// policy decides, after the upload of the CPY pointer array (cpyptrs.go),
// which every launch of the call, a replay's included, reads.
func (b *Backend) launchGraph(g *graph.Graph) error {
	if err := b.refreshCopyPtrs(g.Nodes()); err != nil {
		return err
	}
	if err := b.armErrorFlag(g.Nodes()); err != nil {
		return err
	}
	if err := b.armTileCounters(g.Nodes()); err != nil {
		return err
	}
	now := time.Now()
	for _, e := range b.graphs.Evict(now) {
		b.destroyExec(e, "evicted")
	}
	v := b.graphs.Decide(g.Nodes(), now)
	if v.Decision == capture.Replay {
		e, ok := b.graphs.Exec(v.Key)
		stalePtrs := ok && e.ptrs != 0 && e.ptrs != b.cpy.arr
		if ok && e.frees == b.pool.Stats().DriverFrees && e.work == b.work && !stalePtrs {
			b.logGraph(v)
			return b.graphLaunch(e)
		}
		// Memory the graph's launches use went back to the driver (or the
		// compute buffer or the CPY pointer array was replaced): make the
		// graph again.
		reason := "memory the executable graph uses was given back to the driver: captured again"
		if stalePtrs {
			reason = "the CPY pointer array the executable graph reads was replaced by a larger one: captured again"
		}
		v = capture.Verdict{Decision: capture.Update, Key: v.Key, Reason: reason}
	}
	b.logGraph(v)
	switch v.Decision {
	case capture.Capture, capture.Update, capture.Reinstantiate:
		return b.captureRun(g, v)
	default:
		return b.runEager(g)
	}
}

func (b *Backend) logGraph(v capture.Verdict) {
	if b.log.Enabled(context.Background(), slog.LevelDebug) {
		b.log.Debug("ternion: graph", slog.String("backend", b.name), slog.String("decision", v.Decision.String()),
			slog.String("key", v.Key.String()), slog.String("reason", v.Reason))
	}
}

// captureRun captures g's launches, makes or updates the executable graph
// of v.Key and launches it. When the capture fails the reason is counted
// and logged and g runs eagerly.
func (b *Backend) captureRun(g *graph.Graph, v capture.Verdict) error {
	gate := captureGate(b.drv, b.dev)
	gate.RLock()
	cg, err := b.captureLaunches(g)
	gate.RUnlock()
	if err != nil {
		b.graphFailed(v, fmt.Errorf("capturing: %w", err))
		return b.runEager(g)
	}
	defer func() { _ = b.drv.GraphDestroy(cg) }()
	frees := b.pool.Stats().DriverFrees
	e, have := b.graphs.Exec(v.Key)
	if v.Decision == capture.Update && have {
		uerr := b.drv.GraphExecUpdate(e.exec, cg)
		if uerr == nil {
			e.frees, e.work, e.ptrs = frees, b.work, b.cpy.usesCopyPtrs()
			b.graphs.Updated(v.Key)
			return b.graphLaunch(e)
		}
		rv := b.graphs.UpdateFailed(v.Key, uerr) // the old executable comes back from Evict, destroyed then
		b.logGraph(rv)
		if rv.Decision != capture.Reinstantiate {
			return b.runEager(g)
		}
	}
	exec, err := b.drv.GraphInstantiate(cg)
	if err != nil {
		b.graphFailed(v, fmt.Errorf("instantiating: %w", err))
		return b.runEager(g)
	}
	e = &execGraph{exec: exec, frees: frees, work: b.work, ptrs: b.cpy.usesCopyPtrs()}
	b.graphs.Captured(v.Key, e)
	return b.graphLaunch(e)
}

// captureLaunches queues g's launches into a capture of the backend's
// stream and returns the captured graph. It always ends the capture.
func (b *Backend) captureLaunches(g *graph.Graph) (vendorapi.Graph, error) {
	if err := b.drv.BeginCapture(b.stream); err != nil {
		return vendorapi.Graph{}, err
	}
	runErr := b.runEager(g)
	cg, endErr := b.drv.EndCapture(b.stream)
	if runErr != nil || endErr != nil {
		if endErr == nil {
			_ = b.drv.GraphDestroy(cg)
		}
		return vendorapi.Graph{}, errors.Join(runErr, endErr)
	}
	return cg, nil
}

func (b *Backend) graphLaunch(e *execGraph) error {
	if err := b.drv.GraphLaunch(e.exec, b.stream); err != nil {
		return fmt.Errorf("ternion: backend %s: launching the graph: %w", b.name, err)
	}
	return nil
}

// graphFailed reports a failed capture of v.Key to the policy and the log.
func (b *Backend) graphFailed(v capture.Verdict, err error) {
	b.graphs.CaptureFailed(v.Key, err)
	b.log.Debug("ternion: graph capture failed; running eagerly", slog.String("backend", b.name),
		slog.String("key", v.Key.String()), slog.String("error", err.Error()))
}

// destroyExec destroys an executable graph the cache let go of.
func (b *Backend) destroyExec(e *execGraph, why string) {
	if err := b.drv.GraphExecDestroy(e.exec); err != nil {
		b.log.Warn("ternion: destroying an executable graph", slog.String("backend", b.name), slog.String("why", why),
			slog.String("error", err.Error()))
	}
}

// closeGraphs destroys every executable graph (Close).
func (b *Backend) closeGraphs() error {
	var errs []error
	for _, e := range b.graphs.DropAll() {
		errs = append(errs, b.drv.GraphExecDestroy(e.exec))
	}
	return errors.Join(errs...)
}
