package capture

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// step is one Compute call of a policy script: the graph, the clock (time
// since the script began), the verdict expected and the outcome reported.
type step struct {
	s      spec
	at     time.Duration
	want   Decision
	reason string // a substring of the verdict's reason
	fail   bool   // report the Capture or Update as failed
	evict  []int  // the executables Evict hands back after the call
}

// seed and defaults are the two option sets, on a device that allows graphs.
func seed(mods ...func(*Options)) Options {
	o := SeedOptions()
	o.ArchOK = true
	for _, m := range mods {
		m(&o)
	}
	return o
}

func defaults(mods ...func(*Options)) Options {
	o := DefaultOptions()
	o.ArchOK = true
	for _, m := range mods {
		m(&o)
	}
	return o
}

// Shorthands for the specs the scripts use.
var (
	base    = spec{}
	moved2  = spec{base: base2}
	moved3  = spec{base: base3}
	moved4  = spec{base: base4}
	moved5  = spec{base: base5}
	moved6  = spec{base: base6}
	moved7  = spec{base: base7}
	moved8  = spec{base: base8}
	kv16    = spec{kv: 16}
	kv32    = spec{kv: 32}
	kv48    = spec{kv: 48}
	kv64    = spec{kv: 64}
	kv80    = spec{kv: 80}
	kv96    = spec{kv: 96}
	scaled3 = spec{scale: 3}
	extra   = spec{extra: true}
)

// policyCases is the policy as a table: each seed rule and each rule beyond
// the seed, as a script of calls with the verdicts expected.
var policyCases = []struct {
	name  string
	opts  Options
	steps []step
	stats *Stats // the counts after the script, when checked
}{
	// The seed's rules.
	{"disabled switch", seed(func(o *Options) { o.Disabled = true }), []step{
		{s: base, want: Eager, reason: "DISABLE_GRAPHS is set"},
		{s: base, want: Eager, reason: "DISABLE_GRAPHS is set"},
	}, nil},
	{"arch gate", seed(func(o *Options) { o.ArchOK = false }), []step{
		{s: base, want: Eager, reason: "arch does not allow graphs"},
	}, nil},
	{"split buffer", seed(splitOpts), []step{
		{s: spec{split: true}, want: Eager, reason: "node 0 (ADD) reads a split buffer"},
		{s: base, want: Capture},
	}, nil},
	{"batched ADD", seed(), []step{
		{s: spec{rows: 7}, want: Eager, reason: "node 0 (ADD) has src1 ne[1]=7 > 1: batched"},
		{s: base, want: Capture},
	}, nil},
	{"CPY without indirection", seed(noF16Copy), []step{
		{s: spec{f16: true}, want: Eager, reason: "node 4 (CPY f32 → f16) cannot use pointer indirection"},
		{s: base, want: Capture},
	}, nil},
	{"CPY without indirection when indirection is off: compared, not gated", seed(noF16Copy, noIndirection), []step{
		{s: spec{f16: true}, want: Capture},
		{s: spec{f16: true, pos: 5}, want: Update, reason: "node 4 (CPY): data pointer changed"},
	}, nil},
	{"identical second run replays", seed(), []step{
		{s: base, want: Capture, reason: "a new shape: capturing"},
		{s: base, want: Replay, reason: "same properties"},
		{s: base, want: Replay},
	}, &Stats{Capture: 1, Replay: 2, Graphs: 1, Shapes: 1}},
	{"pointer change updates", seed(), []step{
		{s: base, want: Capture},
		{s: base, want: Replay},
		{s: moved2, want: Update, reason: "node 0 (ADD): data pointer changed"},
		{s: moved2, want: Replay},
	}, &Stats{Capture: 1, Update: 1, Replay: 2, Graphs: 1, Shapes: 1}},
	{"CPY destination change replays (pointer indirection)", seed(), []step{
		{s: base, want: Capture},
		{s: spec{pos: 5}, want: Replay, reason: "same properties"},
		{s: spec{pos: 6}, want: Replay},
		{s: spec{pos: 200, f16: false}, want: Replay},
	}, &Stats{Capture: 1, Replay: 3, Graphs: 1, Shapes: 1}},
	{"CPY destination moved by single elements replays (pointer indirection)", seed(), []step{
		{s: spec{pos: 1}, want: Capture},
		{s: spec{pos: 1, skew: 1}, want: Replay, reason: "same properties"},
		{s: spec{pos: 1, skew: 2}, want: Replay},
		{s: spec{pos: 3, skew: 5}, want: Replay},
	}, nil},
	{"CPY destination change updates without pointer indirection", seed(noIndirection), []step{
		{s: base, want: Capture},
		{s: spec{pos: 5}, want: Update, reason: "node 4 (CPY): data pointer changed"},
		{s: spec{pos: 5}, want: Replay},
	}, nil},
	{"CPY destination change replays, defaults after warm-up", defaults(), []step{
		{s: spec{pos: 0}, want: Eager, reason: "warming up 1/2"},
		{s: spec{pos: 1}, want: Capture},
		{s: spec{pos: 2}, want: Replay},
		{s: spec{pos: 3}, want: Replay},
	}, &Stats{Eager: 1, Capture: 1, Replay: 2, Graphs: 1, Shapes: 1}},
	{"SCALE parameter change updates", seed(), []step{
		{s: base, want: Capture},
		{s: scaled3, want: Update, reason: "node 2 (SCALE): op params changed"},
		{s: scaled3, want: Replay},
	}, nil},
	{"node count change is a new key", seed(), []step{
		{s: base, want: Capture, reason: "a new shape"},
		{s: extra, want: Capture, reason: "a new shape", evict: []int{1}}, // one graph kept: the other goes
		{s: extra, want: Replay},
	}, nil},
	{"seed: 4 consecutive captures or updates disable graphs for good", seed(), []step{
		{s: base, want: Capture},
		{s: moved2, want: Update},
		{s: moved3, want: Update},
		{s: moved4, want: Update},
		{s: moved5, want: Eager, reason: "captured or updated 4 calls in a row, then node 0 (ADD): data pointer changed: graphs disabled for good",
			evict: []int{1}},
		{s: moved5, want: Eager, reason: "disabled for good"},
		{s: extra, want: Eager, reason: "disabled for good"},
	}, &Stats{Eager: 3, Capture: 1, Update: 3, Fallbacks: 1, Shapes: 1}},
	{"a replay resets the update count", seed(), []step{
		{s: base, want: Capture},
		{s: moved2, want: Update},
		{s: moved2, want: Replay},
		{s: moved3, want: Update},
		{s: moved4, want: Update},
		{s: moved5, want: Update},
		{s: moved6, want: Update},
		{s: moved7, want: Eager, reason: "4 calls in a row", evict: []int{1}},
	}, nil},
	{"update failure re-instantiates", seed(), []step{
		{s: base, want: Capture},
		{s: scaled3, want: Update, fail: true, evict: []int{1}}, // the script reports Captured(2)
		{s: scaled3, want: Replay},
	}, &Stats{Capture: 1, Update: 1, Reinstantiate: 1, Replay: 1, Graphs: 1, Shapes: 1}},
	{"seed: capture failure disables graphs for good", seed(), []step{
		{s: base, want: Capture, fail: true},
		{s: base, want: Eager, reason: "capture failed (fake driver error): graphs disabled for good"},
	}, &Stats{Eager: 1, Capture: 1, Fallbacks: 1, CaptureFailures: 1, Shapes: 1}},
	{"empty graph", seed(), nil, nil}, // see TestDecideEmpty

	// Beyond the seed.
	{"defaults: 4 consecutive captures or updates, eager for Retry calls, then capture again",
		defaults(func(o *Options) { o.Retry = 2 }), []step{
			{s: base, want: Eager, reason: "warming up 1/2"},
			{s: base, want: Capture},
			{s: moved2, want: Update},
			{s: moved3, want: Update},
			{s: moved4, want: Update},
			{s: moved5, want: Eager, reason: "4 calls in a row, then node 0 (ADD): data pointer changed: eager now and for the next 2 calls",
				evict: []int{1}},
			{s: moved5, want: Eager, reason: "still eager (1/2 of the fall-back)"},
			{s: moved5, want: Eager, reason: "still eager (2/2 of the fall-back)"},
			{s: moved5, want: Capture, reason: "4 runs with identical properties"},
			{s: moved5, want: Replay},
		}, &Stats{Eager: 4, Capture: 2, Update: 3, Replay: 1, Fallbacks: 1, Graphs: 1, Shapes: 1}},
	{"warm-up", defaults(), []step{
		{s: base, want: Eager, reason: "warming up 1/2: captured on the 2nd run with identical properties"},
		{s: moved2, want: Eager, reason: "warming up 1/2"}, // changed: counting starts again
		{s: moved2, want: Capture, reason: "2 runs with identical properties: capturing"},
		{s: moved2, want: Replay},
	}, nil},
	{"longer warm-up", defaults(func(o *Options) { o.Warmup = 2 }), []step{
		{s: base, want: Eager, reason: "warming up 1/3"},
		{s: base, want: Eager, reason: "warming up 2/3: captured on the 3rd run"},
		{s: base, want: Capture},
	}, nil},
	{"several keys: 3 decode shapes alternate without thrashing", defaults(), []step{
		{s: kv16, want: Eager}, {s: kv32, want: Eager}, {s: kv48, want: Eager},
		{s: kv16, want: Capture}, {s: kv32, want: Capture}, {s: kv48, want: Capture},
		{s: kv16, want: Replay}, {s: kv32, want: Replay}, {s: kv48, want: Replay},
		{s: kv16, want: Replay}, {s: kv32, want: Replay}, {s: kv48, want: Replay},
	}, &Stats{Eager: 3, Capture: 3, Replay: 6, Graphs: 3, Shapes: 3}},
	{"LRU eviction beyond MaxGraphs", seed(func(o *Options) { o.MaxGraphs = 2 }), []step{
		{s: kv16, want: Capture}, // 1
		{s: kv32, want: Capture}, // 2
		{s: kv16, want: Replay},
		{s: kv48, want: Capture, evict: []int{2}}, // 3; kv32 is the least recently used
		{s: kv16, want: Replay},
		{s: kv32, want: Capture, evict: []int{3}}, // 4
		{s: kv16, want: Replay},
	}, &Stats{Capture: 4, Replay: 3, Evictions: 2, Graphs: 2, Shapes: 2}},
	{"idle eviction", defaults(func(o *Options) { o.Warmup = 0 }), []step{
		{s: kv16, at: 0, want: Capture},                                 // 1
		{s: kv32, at: 5 * time.Second, want: Capture},                   // 2
		{s: kv32, at: 9 * time.Second, want: Replay},                    // kv16 idle 9 s
		{s: kv32, at: 12 * time.Second, want: Replay, evict: []int{1}},  // kv16 idle 12 s
		{s: kv16, at: 13 * time.Second, want: Capture, reason: "a new"}, // 3
		{s: kv32, at: 21 * time.Second, want: Replay},
		{s: kv16, at: 30 * time.Second, want: Replay},                  // kv32 idle 9 s
		{s: kv16, at: 32 * time.Second, want: Replay, evict: []int{2}}, // kv32 idle 11 s
	}, &Stats{Capture: 3, Replay: 5, Evictions: 2, Graphs: 1, Shapes: 1}},
	{"capture failure: eager for Retry calls, then capture again",
		defaults(func(o *Options) { o.Warmup, o.Retry = 0, 2 }), []step{
			{s: base, want: Capture, fail: true},
			{s: base, want: Eager, reason: "capture failed (fake driver error): still eager (1/2 of the fall-back)"},
			{s: base, want: Eager, reason: "(2/2 of the fall-back)"},
			{s: base, want: Capture},
			{s: base, want: Replay},
		}, &Stats{Eager: 2, Capture: 2, Replay: 1, Fallbacks: 1, CaptureFailures: 1, Graphs: 1, Shapes: 1}},
	{"capture failure with Retry 0: the next call decides again",
		defaults(func(o *Options) { o.Warmup, o.Retry = 0, 0 }), []step{
			{s: base, want: Capture, fail: true},
			{s: base, want: Capture},
			{s: base, want: Replay},
		}, nil},
	{"seed: shapes thrashing one graph disable graphs for good", seed(), []step{
		{s: kv16, want: Capture},                  // 1
		{s: kv32, want: Capture, evict: []int{1}}, // 2
		{s: kv48, want: Capture, evict: []int{2}}, // 3
		{s: kv64, want: Capture, evict: []int{3}}, // 4
		{s: kv80, want: Capture, evict: []int{4}}, // 5
		{s: kv96, want: Eager, reason: "4 captures in a row each evicted another graph", evict: []int{5}},
		{s: kv16, want: Eager, reason: "disabled for good"},
	}, nil},
	{"defaults: shapes thrashing the cache fall back for Retry calls",
		defaults(func(o *Options) { o.Warmup, o.MaxGraphs, o.Retry = 0, 1, 1 }), []step{
			{s: kv16, want: Capture},
			{s: kv32, want: Capture, evict: []int{1}},
			{s: kv48, want: Capture, evict: []int{2}},
			{s: kv64, want: Capture, evict: []int{3}},
			{s: kv80, want: Capture, evict: []int{4}},
			{s: kv96, want: Eager, reason: "evicted another graph (more shapes than 1 graphs): eager now and for the next 1 calls"},
			{s: kv16, want: Eager, reason: "still eager (1/1 of the fall-back)"},
			{s: kv80, want: Replay}, // the graph kept is still good
		}, nil},
	{"a stale executable is updated even when the properties settled", seed(func(o *Options) { o.MaxUpdates = 0 }), []step{
		{s: base, want: Capture},
		{s: moved2, want: Update, fail: true, evict: []int{1}},
		{s: moved2, want: Replay},
		{s: moved3, want: Update},
		{s: moved4, want: Update},
		{s: moved5, want: Update},
		{s: moved6, want: Update},
		{s: moved8, want: Update}, // no bound: updates go on
	}, nil},
}

func TestPolicy(t *testing.T) {
	start := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	for _, tc := range policyCases {
		if tc.steps == nil {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			c := NewCache[int](tc.opts)
			next := 1 // the next executable's id
			for i, st := range tc.steps {
				now := start.Add(st.at)
				v := c.Decide(build(t, st.s), now)
				require.Equal(t, st.want, v.Decision, "call %d: %v", i, v)
				assert.Contains(t, v.Reason, st.reason, "call %d", i)
				switch v.Decision {
				case Capture:
					if st.fail {
						c.CaptureFailed(v.Key, errDriver)
						break
					}
					c.Captured(v.Key, next)
					next++
				case Update:
					_, ok := c.Exec(v.Key)
					require.True(t, ok, "call %d: an update has an executable to update", i)
					if st.fail {
						r := c.UpdateFailed(v.Key, errDriver)
						assert.Equal(t, Reinstantiate, r.Decision)
						assert.Contains(t, r.Reason, "updating the executable graph failed (fake driver error)")
						_, ok := c.Exec(v.Key)
						assert.False(t, ok, "call %d: the executable whose update failed is gone", i)
						c.Captured(v.Key, next)
						next++
						break
					}
					c.Updated(v.Key)
				case Replay:
					_, ok := c.Exec(v.Key)
					require.True(t, ok, "call %d: a replay has an executable", i)
				}
				if v.Decision != Eager || v.Key != (Key{}) {
					assert.Equal(t, KeyOf(build(t, st.s)), v.Key, "call %d: the verdict's key", i)
				}
				got := c.Evict(now)
				slices.Sort(got)
				assert.Equal(t, st.evict, got, "call %d: evicted", i)
			}
			if tc.stats != nil {
				assert.Equal(t, *tc.stats, c.Stats())
			}
		})
	}
}

func TestDecideEmpty(t *testing.T) {
	c := NewCache[int](seed())
	v := c.Decide(nil, time.Now())
	assert.Equal(t, Eager, v.Decision)
	assert.Contains(t, v.Reason, "no nodes")
}

// TestKeys checks what the key tells apart: shapes and node counts, not
// pointers or parameters.
func TestKeys(t *testing.T) {
	k := KeyOf(build(t, base))
	assert.Equal(t, 8, k.Nodes)
	assert.Equal(t, k, KeyOf(build(t, moved2)), "pointers")
	assert.Equal(t, k, KeyOf(build(t, scaled3)), "parameters")
	assert.Equal(t, k, KeyOf(build(t, spec{pos: 3})), "the CPY's destination")
	assert.NotEqual(t, k, KeyOf(build(t, kv32)), "KV length")
	assert.NotEqual(t, k, KeyOf(build(t, spec{f16: true})), "types")
	e := KeyOf(build(t, extra))
	assert.Equal(t, 9, e.Nodes)
	assert.NotEqual(t, k, e)
	assert.Regexp(t, `^8 nodes #[0-9a-f]{16}$`, k.String())
}

func TestExecDropDropAll(t *testing.T) {
	c := NewCache[string](seed(func(o *Options) { o.MaxGraphs = 4 }))
	now := time.Now()
	var keys []Key
	for i, s := range []spec{kv16, kv32, kv48} {
		v := c.Decide(build(t, s), now)
		require.Equal(t, Capture, v.Decision)
		c.Captured(v.Key, []string{"a", "b", "c"}[i])
		keys = append(keys, v.Key)
	}
	e, ok := c.Exec(keys[1])
	assert.True(t, ok)
	assert.Equal(t, "b", e)
	e, ok = c.Drop(keys[1])
	assert.True(t, ok)
	assert.Equal(t, "b", e)
	_, ok = c.Exec(keys[1])
	assert.False(t, ok)
	_, ok = c.Drop(keys[1])
	assert.False(t, ok)
	all := c.DropAll()
	slices.Sort(all)
	assert.Equal(t, []string{"a", "c"}, all)
	assert.Equal(t, 0, c.Stats().Graphs)
	assert.Equal(t, 0, c.Stats().Shapes)
	assert.Nil(t, c.Evict(now))
	// A capture reported for a key the cache no longer has is handed back.
	c.Captured(keys[0], "late")
	assert.Equal(t, []string{"late"}, c.Evict(now))

	// A second executable for one key replaces the first, which goes to Evict.
	v := c.Decide(build(t, kv16), now)
	require.Equal(t, Capture, v.Decision)
	c.Captured(v.Key, "first")
	c.Captured(v.Key, "second")
	assert.Equal(t, []string{"first"}, c.Evict(now))
	e, _ = c.Exec(v.Key)
	assert.Equal(t, "second", e)
	assert.Equal(t, 1, c.Stats().Graphs)
}

func TestWarmEntriesAreBounded(t *testing.T) {
	c := NewCache[int](defaults(func(o *Options) { o.MaxGraphs = 2 }))
	now := time.Now()
	for _, s := range []spec{kv16, kv32, kv48, kv64, kv80} {
		assert.Equal(t, Eager, c.Decide(build(t, s), now).Decision)
	}
	assert.Equal(t, 2, c.Stats().Shapes, "shapes warming up are kept up to MaxGraphs")
	// kv16 was forgotten: warming up again; kv80 was not.
	assert.Contains(t, c.Decide(build(t, kv16), now).Reason, "warming up 1/2")
	assert.Equal(t, Capture, c.Decide(build(t, kv16), now).Decision)
}

func TestDecisionStrings(t *testing.T) {
	for d, want := range map[Decision]string{Eager: "eager", Capture: "capture", Replay: "replay", Update: "update",
		Reinstantiate: "reinstantiate", Decision(9): "Decision(9)", Decision(-1): "Decision(-1)"} {
		assert.Equal(t, want, d.String())
	}
	v := Verdict{Decision: Replay, Reason: "why", Key: Key{Nodes: 3, Hash: 0xab}}
	assert.Equal(t, "replay (3 nodes #00000000000000ab): why", v.String())
	assert.Equal(t, "eager: off", Verdict{Reason: "off"}.String())
}

func TestNewCacheClampsOptions(t *testing.T) {
	c := NewCache[int](Options{ArchOK: true, MaxGraphs: -3, Warmup: -1})
	assert.Equal(t, 1, c.Options().MaxGraphs)
	assert.Equal(t, 0, c.Options().Warmup)
}

func TestOrdinal(t *testing.T) {
	for n, want := range map[int]string{1: "1st", 2: "2nd", 3: "3rd", 4: "4th", 11: "11th", 12: "12th", 13: "13th",
		21: "21st", 22: "22nd", 101: "101st", 111: "111th"} {
		assert.Equal(t, want, ordinal(n))
	}
}
