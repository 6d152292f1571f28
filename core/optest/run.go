package optest

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/ternion/ternion/core/backend"
	"github.com/ternion/ternion/core/graph"
	"github.com/ternion/ternion/core/ops"
	"github.com/ternion/ternion/core/ref"
)

// Status is a case's outcome.
type Status int

// Outcomes.
const (
	Passed Status = iota + 1
	Failed
	NotSupported
)

// String names the outcome as test-backend-ops prints it.
func (s Status) String() string {
	switch s {
	case Passed:
		return "OK"
	case Failed:
		return "FAIL"
	case NotSupported:
		return "not supported"
	}
	return fmt.Sprintf("Status(%d)", int(s))
}

// Result is one case's check.
type Result struct {
	Case    string  `json:"case"`
	Status  string  `json:"status"`
	NMSE    float64 `json:"nmse"`
	MaxNMSE float64 `json:"max_nmse"`
	Reason  string  `json:"reason,omitempty"` // why it failed or is not supported
	Seed    uint64  `json:"seed"`
	status  Status
}

// Outcome returns the result's status.
func (r Result) Outcome() Status { return r.status }

// Sentinels is the number of elements guarding each side of an output.
const Sentinels = 1024

// Check runs c on dev from inputs drawn with seed and compares the output
// with the reference: refDev when set (the host device, for a GPU), else
// core/ref's float64 evaluation. The output lies between Sentinels-element
// guards of random bytes that must survive the run.
func Check(c Case, dev, refDev *backend.Backend, seed uint64) Result {
	return CheckRuns(c, dev, refDev, seed, 1)
}

// CheckRuns is Check computing the graph runs times on dev (the same
// graph, nothing moved: with the default capture policy the second run
// captures a GPU graph and the later ones replay it), every run's output
// compared with the reference.
func CheckRuns(c Case, dev, refDev *backend.Backend, seed uint64, runs int) Result {
	return checkRuns(c, dev, refDev, seed, runs, false)
}

// CheckSplit is CheckRuns with the src0 of every MUL_MAT node of c in a
// split buffer of dev (backend.AllocSplit: its rows over every device of
// dev's driver by dev's tensor split), compared with the same reference
// and threshold as the case unsplit. A case without a MUL_MAT whose src0
// can be split (a view, a batch of matrices) is not supported, with the
// reason.
func CheckSplit(c Case, dev, refDev *backend.Backend, seed uint64, runs int) Result {
	return checkRuns(c, dev, refDev, seed, runs, true)
}

func checkRuns(c Case, dev, refDev *backend.Backend, seed uint64, runs int, split bool) Result {
	res := Result{Case: c.Name, MaxNMSE: c.MaxNMSE, Seed: seed}
	fail := func(s Status, format string, args ...any) Result {
		res.status, res.Status, res.Reason = s, s.String(), fmt.Sprintf(format, args...)
		return res
	}
	g, out, err := build(c, seed)
	if err != nil {
		return fail(Failed, "building the graph: %v", err)
	}
	if split {
		srcs, why := splittable(g)
		if why != "" {
			return fail(NotSupported, "%s", why)
		}
		buf, err := dev.AllocSplit(srcs...)
		if err != nil {
			return fail(Failed, "%v", err)
		}
		defer buf.Free()
	}
	if err := dev.SupportsGraph(g); err != nil {
		var ue *ops.UnsupportedError
		if errors.As(err, &ue) {
			return fail(NotSupported, "%s", ue.Reason)
		}
		return fail(Failed, "%v", err)
	}
	gots, err := guardedRun(dev, g, out, seed, max(runs, 1))
	if err != nil {
		return fail(Failed, "%v", err)
	}
	rg, rout, err := build(c, seed)
	if err != nil {
		return fail(Failed, "building the reference graph: %v", err)
	}
	var want []float64
	if refDev != nil {
		if err := refDev.Compute(rg); err != nil {
			return fail(Failed, "reference device %s: %v", refDev.Name(), err)
		}
		v, err := rout.Floats()
		if err != nil {
			return fail(Failed, "reference device %s: %v", refDev.Name(), err)
		}
		want = widen(v)
	} else {
		r, err := ref.Eval(rg)
		if err != nil {
			return fail(Failed, "reference: %v", err)
		}
		if want, err = r.Floats(rout); err != nil {
			return fail(Failed, "reference: %v", err)
		}
	}
	for i, got := range gots {
		run := ""
		if len(gots) > 1 {
			run = fmt.Sprintf("run %d of %d: ", i+1, len(gots))
		}
		nmse, why := compare(widen(got), want)
		res.NMSE = max(res.NMSE, nmse)
		if why != "" {
			return fail(Failed, "%s%s", run, why)
		}
		if nmse > c.MaxNMSE {
			return fail(Failed, "%sNMSE = %.9f > %.9f", run, nmse, c.MaxNMSE)
		}
	}
	res.status, res.Status = Passed, Passed.String()
	return res
}

// splittable returns the src0 of every MUL_MAT node of g, or why one
// cannot be split (or there is none).
func splittable(g *graph.Graph) ([]*graph.Tensor, string) {
	var out []*graph.Tensor
	for _, n := range g.Nodes() {
		if n.Op() != graph.OpMulMat {
			continue
		}
		s := n.Src(0)
		if slices.Contains(out, s) {
			continue
		}
		if why := backend.CanSplit(s); why != "" {
			return nil, "src0 cannot be split: " + why
		}
		out = append(out, s)
	}
	if len(out) == 0 {
		return nil, "no MUL_MAT to split"
	}
	return out, ""
}

// buildCopies makes c's graph from seed 1, or with coldBytes > 0 a graph of
// copies of c (each from its own seed) until their inputs total at least
// coldBytes, at least two and at most perfGraphSize / 2; it returns the
// copies' outputs in order. A case of more than one node is an error
// before any copy is made.
func buildCopies(c Case, coldBytes int64) (*graph.Graph, []*graph.Tensor, error) {
	g, out, err := build(c, 1)
	if err != nil || coldBytes <= 0 {
		return g, []*graph.Tensor{out}, err
	}
	if n := len(g.Nodes()); n != 1 {
		return nil, nil, fmt.Errorf("cold perf cycles one-node cases: %s's graph has %d nodes", c.Name, n)
	}
	var inputs int64
	for _, l := range inputLeaves(g) {
		inputs += l.Layout().Bytes()
	}
	copies := int64(2)
	if inputs > 0 {
		copies = min(max(copies, (coldBytes+inputs-1)/inputs), perfGraphSize/2)
	}
	outs := []*graph.Tensor{out}
	for len(outs) < int(copies) {
		seed := uint64(len(outs) + 1)
		outs = append(outs, c.Build(g.Context(), caseRand(seed)))
	}
	g, err = g.Context().Build(outs...)
	return g, outs, err
}

// repeatCopies puts the copies' outputs outs (each once in g already) in
// g again in turn until g computes them per times in all (at least once
// each), and returns how many times that is.
func repeatCopies(g *graph.Graph, outs []*graph.Tensor, per int) (int, error) {
	if len(outs) == 1 {
		return max(per, 1), g.Repeat(outs[0], per-1)
	}
	for i := len(outs); i < per; i++ {
		if err := g.Repeat(outs[i%len(outs)], 1); err != nil {
			return 0, err
		}
	}
	return max(per, len(outs)), nil
}

// caseRand is the random source of a case's inputs drawn from seed.
func caseRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, seed^0x7e5710)) }

// inputLeaves are g's leaves with values to upload: the case's inputs.
func inputLeaves(g *graph.Graph) []*graph.Tensor {
	var in []*graph.Tensor
	for _, l := range g.Leafs() {
		if l.HostData() != nil {
			in = append(in, l)
		}
	}
	return in
}

// build makes c's graph from seed.
func build(c Case, seed uint64) (*graph.Graph, *graph.Tensor, error) {
	ctx := graph.NewContext()
	out := c.Build(ctx, caseRand(seed))
	g, err := ctx.Build(out)
	return g, out, err
}

// guardedRun places out's memory between sentinels, computes g on dev runs
// times and returns out's values of each run after checking the sentinels.
func guardedRun(dev *backend.Backend, g *graph.Graph, out *graph.Tensor, seed uint64, runs int) ([][]float32, error) {
	root := out
	if out.ViewSrc() != nil {
		root = out.ViewSrc()
	}
	guard := uint64(Sentinels * root.Type().BlockBytes())
	size := backend.AllocSize(root)
	buf, err := dev.Alloc(guard + size + guard)
	if err != nil {
		return nil, err
	}
	defer buf.Free()
	r := rand.New(rand.NewPCG(seed, 0x5e471e1))
	before := make([]byte, buf.Size())
	for i := range before {
		before[i] = byte(r.Uint32())
	}
	if err := buf.Write(0, before); err != nil {
		return nil, err
	}
	if err := root.Place(buf, guard); err != nil {
		return nil, err
	}
	var gots [][]float32
	for range runs {
		// An in-place op's output is its input leaf's memory: a tensor placed
		// by hand keeps what is written there (Compute uploads only the
		// tensors it places), so the leaf's values go in now, every run.
		if h := root.HostData(); h != nil {
			if err := buf.Write(guard, h); err != nil {
				return nil, err
			}
		}
		if err := dev.Compute(g); err != nil {
			return nil, err
		}
		got, err := out.Floats()
		if err != nil {
			return nil, err
		}
		after := make([]byte, buf.Size())
		if err := buf.Read(0, after); err != nil {
			return nil, err
		}
		if !bytes.Equal(after[:guard], before[:guard]) {
			return nil, fmt.Errorf("run %d: the %d sentinel elements before the output were overwritten", len(gots)+1, Sentinels)
		}
		if !bytes.Equal(after[guard+size:], before[guard+size:]) {
			return nil, fmt.Errorf("run %d: the %d sentinel elements after the output were overwritten", len(gots)+1, Sentinels)
		}
		gots = append(gots, got)
	}
	return gots, nil
}

func widen(v []float32) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}

// compare returns the NMSE of got against want, Σ(got−want)²/Σgot² as ggml
// computes it, or why the two cannot pass: a NaN, or an infinity the other
// does not have with the same sign, or a length mismatch.
func compare(got, want []float64) (float64, string) {
	if len(got) != len(want) {
		return 0, fmt.Sprintf("%d values, the reference has %d", len(got), len(want))
	}
	var num, den float64
	for i := range got {
		a, b := got[i], want[i]
		switch {
		case math.IsNaN(a) || math.IsNaN(b):
			return math.NaN(), fmt.Sprintf("element %d is NaN (got %v, want %v)", i, a, b)
		case math.IsInf(a, 0) || math.IsInf(b, 0):
			if a != b {
				return math.Inf(1), fmt.Sprintf("element %d: got %v, want %v", i, a, b)
			}
			continue
		}
		num += (a - b) * (a - b)
		den += a * a
	}
	if den == 0 {
		if num == 0 {
			return 0, ""
		}
		return math.Inf(1), ""
	}
	return num / den, ""
}

// PerfResult is one case's timing.
type PerfResult struct {
	Case   string  `json:"case"`
	Runs   int     `json:"runs"`             // op runs timed
	USRun  float64 `json:"us_run"`           // microseconds per run
	GBs    float64 `json:"gb_s"`             // GiB/s moved (memory-bound cases), 2^30 bytes as ggml prints
	TFLOPs float64 `json:"tflop_s"`          // for cases with FLOPs
	Path   string  `json:"path,omitempty"`   // MUL_MAT: the kernel path and why (ops.ChooseMulMat)
	Copies int     `json:"copies,omitempty"` // PerfCold: the copies of the inputs cycled (absent: one set)
	Err    string  `json:"error,omitempty"`
}

// Bytes is what one run of the output node moves: its sources' and its
// own bytes (ggml's op_size), a source whose memory the output is (CPY's
// destination) counted once.
func Bytes(out *graph.Tensor) int64 {
	n := out.Layout().Bytes()
	for i := range graph.MaxSrc {
		if s := out.Src(i); s != nil && s != out.ViewSrc() {
			n += s.Layout().Bytes()
		}
	}
	return n
}

// perfGraphSize is the node capacity of test-backend-ops' perf graph.
const perfGraphSize = 8192

// perfRepeats is how many times Perf puts the op in its graph, as
// test-backend-ops computes n_runs: the whole times the op's work (bytes or
// FLOPs) fits target, at most the graph's free nodes (it already holds
// nodes), plus one. An op of 60 GFLOP thus runs twice a graph at 100 GFLOP.
func perfRepeats(target, work float64, nodes int) int {
	return int(min(float64(perfGraphSize-nodes), math.Floor(target/work))) + 1
}

// perfMaxWarmUps bounds the computes Perf runs before it times: with GPU
// graphs on, the policy runs a graph eager, captures it the second time and
// replays it from the third.
const perfMaxWarmUps = 3

// warmUp runs the perf graph until its computes have settled (kernels
// loaded, buffers grown, and the graph replayed or run eager twice in a row,
// as the backend's graph policy decides), at most perfMaxWarmUps times, so
// that no capture falls into the timed loop: test-backend-ops' warm-up
// compute likewise leaves ggml-cuda's graph captured before it times.
func warmUp(dev *backend.Backend, run func() error) error {
	eager := 0
	for range perfMaxWarmUps {
		before := dev.GraphStats()
		if err := run(); err != nil {
			return err
		}
		after := dev.GraphStats()
		switch {
		case after.Replay > before.Replay:
			return nil
		case after.Eager > before.Eager:
			if eager++; eager == 2 {
				return nil
			}
		default:
			eager = 0
		}
	}
	return nil
}

// Perf times c on dev as test-backend-ops' perf mode does: the op repeated
// in one graph until the graph moves about targetBytes (cases with FLOPs:
// does about targetFLOPs), the graph computed again until at least minTime
// has passed; the inputs are placed once beforehand and the graph warmed up
// (warmUp) before the clock starts.
func Perf(c Case, dev *backend.Backend, targetBytes, targetFLOPs float64, minTime time.Duration) PerfResult {
	return PerfCold(c, dev, targetBytes, targetFLOPs, minTime, 0)
}

// PerfCold is Perf with the op's inputs cycled through copies (each its
// own random inputs) whose inputs total at least coldBytes (two at least),
// so that a repetition reads inputs the ones just before it did not: the
// weights of a MUL_MAT come from DRAM, as in a model whose layers exceed
// the last-level cache, instead of from the cache that test-backend-ops'
// repetitions of the same inputs keep warm. coldBytes 0 is Perf. Only cases
// whose graph is their output node alone can be cycled.
func PerfCold(c Case, dev *backend.Backend, targetBytes, targetFLOPs float64, minTime time.Duration, coldBytes int64) PerfResult {
	res := PerfResult{Case: c.Name}
	g, outs, err := buildCopies(c, coldBytes)
	if err != nil {
		res.Err = err.Error()
		return res
	}
	out := outs[0]
	if len(outs) > 1 {
		res.Copies = len(outs)
	}
	switch out.Op() {
	case graph.OpMulMat:
		p, why := ops.MulMatPathOf(out, dev.Props())
		res.Path = p.String() + ": " + why
	case graph.OpMulMatID:
		p, why := ops.MulMatIDPathOf(out, dev.Props())
		res.Path = p.String() + ": " + why
	}
	if err := dev.SupportsGraph(g); err != nil {
		res.Err = err.Error()
		return res
	}
	inputs := inputLeaves(g)
	buf, err := dev.AllocTensors(inputs...)
	if err != nil {
		res.Err = err.Error()
		return res
	}
	defer buf.Free()
	bytesPerRun := float64(Bytes(out))
	per := perfRepeats(targetBytes, bytesPerRun, len(g.Nodes()))
	if c.FLOPs > 0 {
		per = perfRepeats(targetFLOPs, c.FLOPs, len(g.Nodes()))
	}
	if per, err = repeatCopies(g, outs, per); err != nil {
		res.Err = err.Error()
		return res
	}
	run := func() error {
		if err := dev.Compute(g); err != nil {
			return err
		}
		return dev.Synchronize()
	}
	if err := warmUp(dev, run); err != nil {
		res.Err = err.Error()
		return res
	}
	start, loops := time.Now(), 0
	for loops == 0 || time.Since(start) < minTime {
		if err := run(); err != nil {
			res.Err = err.Error()
			return res
		}
		loops++
	}
	elapsed := time.Since(start)
	res.Runs = loops * per
	sec := elapsed.Seconds() / float64(res.Runs)
	res.USRun = sec * 1e6
	res.GBs = bytesPerRun / sec / (1 << 30)
	if c.FLOPs > 0 {
		res.TFLOPs = c.FLOPs / sec / 1e12
	}
	return res
}
