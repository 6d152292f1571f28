package capture

import (
	"time"

	"github.com/ternion/ternion/core/graph"
	"github.com/ternion/ternion/switches"
)

// Options are the policy's inputs beside the graph and its history: the
// device, the switches and the caller's knowledge of buffers and copies.
type Options struct {
	// ArchOK reports that the device and the code compiled for it allow
	// graphs (the seed: CUDA cc ≥ Ampere); the caller computes it. False
	// keeps every graph eager.
	ArchOK bool
	// Disabled is TERNION_DISABLE_GRAPHS: every graph runs eagerly.
	Disabled bool
	// Warmup is how many runs with identical properties a graph of a new
	// shape makes eagerly before it is captured: 0 captures on the first run
	// (the seed), 1 on the second identical run.
	Warmup int
	// MaxGraphs is how many executable graphs the cache keeps, one per shape
	// (Key); Evict hands back the least recently used beyond it. The seed
	// keeps one. Values below 1 mean 1.
	MaxGraphs int
	// Idle evicts an executable graph unused this long; 0 never does (the
	// seed).
	Idle time.Duration
	// MaxUpdates is how many consecutive captures or updates of one graph,
	// without a replay in between, the policy makes before it falls back to
	// eager (the seed: 4, the first capture counted). It also bounds
	// consecutive captures that each evict another graph (shapes that
	// thrash the cache). 0 or less: no bound.
	MaxUpdates int
	// Retry is how many calls run eagerly after a fall-back (too many
	// updates, thrashing shapes, a failed capture) before the policy tries
	// graphs again; 0 decides again on the next call; below 0, graphs stay
	// disabled on this cache for good (the seed).
	Retry int
	// IsSplit reports that node n reads a split buffer (a tensor split
	// across devices); nil: no buffer is split.
	IsSplit func(n *graph.Tensor) bool
	// CopyIndirection is the seed's CPY pointer indirection: the caller
	// passes every CPY's destination through a device array it refreshes
	// before each call's launches, replays included, so a CPY's destination
	// pointers are left out of its properties (Props) and a KV-cache write
	// whose destination moves every token replays; a CPY that cannot use
	// the array (CopyIndirect) keeps the graph eager, as in the seed. Off
	// (TERNION_GRAPH_NO_CPY_INDIRECTION): a CPY's destination is compared
	// like any pointer, a moved one updates the graph, and no CPY keeps a
	// graph eager.
	CopyIndirection bool
	// CopyIndirect reports that CPY node n can take its destination through
	// pointer indirection; nil: every CPY can. Read only with
	// CopyIndirection.
	CopyIndirect func(n *graph.Tensor) bool
}

// The seed's numbers.
const (
	seedMaxUpdates = 4
)

// SeedOptions returns the seed's policy: capture on the first run, one
// executable graph, never evicted, four consecutive captures or updates and
// graphs are disabled for good, as are they after a failed capture; CPY
// destinations through pointer indirection. ArchOK is false: the caller
// sets it.
func SeedOptions() Options {
	return Options{Warmup: 0, MaxGraphs: 1, Idle: 0, MaxUpdates: seedMaxUpdates, Retry: -1, CopyIndirection: true}
}

// DefaultOptions returns the policy beyond the seed, with the defaults of its
// switches: capture on the second identical run, 8 executable graphs keyed by
// shape, evicted after 10 s unused, and after 4 consecutive captures or
// updates (or a failed capture) 32 eager calls before trying again; CPY
// destinations through pointer indirection, as the seed. ArchOK is false:
// the caller sets it.
func DefaultOptions() Options {
	return Options{
		Warmup:          switches.GraphWarmup.DefaultValue(),
		MaxGraphs:       switches.GraphCache.DefaultValue(),
		Idle:            time.Duration(switches.GraphIdleSeconds.DefaultValue()) * time.Second,
		MaxUpdates:      seedMaxUpdates,
		Retry:           switches.GraphRetry.DefaultValue(),
		CopyIndirection: !switches.GraphNoCopyIndirection.DefaultValue(),
	}
}

// OptionsFromEnv returns DefaultOptions with the switches read through
// lookup (os.LookupEnv in production; nil means os.LookupEnv):
// TERNION_DISABLE_GRAPHS, TERNION_GRAPH_WARMUP, TERNION_GRAPH_CACHE,
// TERNION_GRAPH_IDLE_S, TERNION_GRAPH_RETRY and
// TERNION_GRAPH_NO_CPY_INDIRECTION. A malformed value is an error naming the
// variable (switches.Error), with the defaults returned.
func OptionsFromEnv(lookup switches.Lookup) (Options, error) {
	o := DefaultOptions()
	o.Disabled = switches.On(lookup, switches.DisableGraphs)
	o.CopyIndirection = !switches.On(lookup, switches.GraphNoCopyIndirection)
	var idle int
	for _, r := range []struct {
		s   switches.Of[int]
		dst *int
	}{
		{switches.GraphWarmup, &o.Warmup},
		{switches.GraphCache, &o.MaxGraphs},
		{switches.GraphIdleSeconds, &idle},
		{switches.GraphRetry, &o.Retry},
	} {
		v, err := switches.Int(lookup, r.s)
		if err != nil {
			d := DefaultOptions()
			d.Disabled, d.CopyIndirection = o.Disabled, o.CopyIndirection
			return d, err
		}
		*r.dst = v
	}
	o.Idle = time.Duration(idle) * time.Second
	return o, nil
}
