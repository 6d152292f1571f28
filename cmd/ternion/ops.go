package main

import (
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/ternion/ternion/core/backend"
	"github.com/ternion/ternion/core/optest"
	"github.com/ternion/ternion/internal/quote"
	"github.com/ternion/ternion/switches"
)

const opsSynopsis = "test|perf [-o OP] [-p REGEX] [-d DEVICE] [--json] [--seed N] [--time D] [--cold MIB] [--graphs on|off] [--runs N] [--split LIST|default]"

// ops runs `ternion ops test` or `ternion ops perf`.
func (a *app) ops(args []string) int {
	if len(args) == 0 || (args[0] != "test" && args[0] != "perf") {
		fmt.Fprintf(a.stderr, "usage: ternion ops %s\n", opsSynopsis)
		return exitUsage
	}
	mode := args[0]
	fs := a.newFlagSet("ops "+mode, "[-o OP] [-p REGEX] [-d DEVICE] [--json] [--seed N] [--time D] [--cold MIB] [--graphs on|off] [--runs N] [--split LIST|default]")
	op := fs.String("o", "", "only cases of this op (ggml's name: ADD, MUL_MAT, CPY, ...)")
	pattern := fs.String("p", "", "only cases whose name matches this regular expression")
	device := fs.String("d", "", "device: host, cuda, cuda:0, hip:1, ... (default: the first GPU device, else host)")
	asJSON := fs.Bool("json", false, "print the results as JSON")
	verbose := fs.Bool("v", false, "perf: print the kernel path each MUL_MAT case took, and why")
	seed := fs.Uint64("seed", 0, "test: the random seed of the inputs (default: a fresh one, printed)")
	minTime := fs.Duration("time", time.Second, "perf: time each case for at least this long")
	coldMiB := fs.Int64("cold", 0, "perf: cycle each case's inputs through copies of at least this many MiB in all, so that every repetition reads inputs from memory, not from the cache the repetitions before it warmed (a MUL_MAT's weights as a model's layers stream them); 0: repeat one set, as test-backend-ops does")
	runs := fs.Int("runs", 1, "test: compute each case's graph this many times, every output checked (with graphs on, run 2 captures a GPU graph and later runs replay it)")
	graphs := fs.String("graphs", "on", "on: Compute captures and replays GPU graphs as the capture policy decides; off: every node launches eagerly (as "+switches.DisableGraphs.Name+"=1)")
	splitOver := fs.String("split", "", "test: the MUL_MAT cases with src0 split by rows over every device of the driver (with -d host, set "+
		switches.HostDevices.Name+"=N), as ggml's --tensor-split: proportions such as 0.7,0.3, or default ("+
		switches.TensorSplit.Name+", else by total memory)")
	pos, err := parseInterleaved(fs, args[1:])
	if err != nil {
		return flagStatus(err)
	}
	if len(pos) > 0 {
		fmt.Fprintf(a.stderr, "ternion ops %s: unexpected argument %s\n", mode, quote.Q(pos[0]))
		fs.Usage()
		return exitUsage
	}
	if *coldMiB < 0 || (*coldMiB > 0 && mode != "perf") {
		fmt.Fprintf(a.stderr, "ternion ops %s: --cold takes MiB ≥ 0 and applies to ops perf\n", mode)
		return exitUsage
	}
	if *splitOver != "" {
		if mode != "test" || (*op != "" && *op != "MUL_MAT") {
			fmt.Fprintf(a.stderr, "ternion ops %s: --split runs the MUL_MAT test cases (ops test, -o MUL_MAT or no -o)\n", mode)
			return exitUsage
		}
		*op = "MUL_MAT"
		if *splitOver != "default" {
			props, _, err := switches.Get(func(string) (string, bool) { return *splitOver, true }, switches.TensorSplit)
			if err != nil {
				fmt.Fprintf(a.stderr, "ternion ops %s: --split %s: %v\n", mode, quote.Q(*splitOver), err)
				return exitUsage
			}
			a.tensorSplit = props
		}
	}
	switch *graphs {
	case "on":
	case "off":
		env := a.lookupEnv
		a.lookupEnv = func(k string) (string, bool) {
			if k == switches.DisableGraphs.Name {
				return "1", true
			}
			return env(k)
		}
	default:
		fmt.Fprintf(a.stderr, "ternion ops %s: --graphs %s: want on or off\n", mode, quote.Q(*graphs))
		return exitUsage
	}
	var match func(string) bool
	if *pattern != "" {
		re, err := regexp.Compile(*pattern)
		if err != nil {
			fmt.Fprintf(a.stderr, "ternion ops %s: -p %s: %v\n", mode, quote.Q(*pattern), err)
			return exitUsage
		}
		match = re.MatchString
	}
	cases := optest.Tests()
	if mode == "perf" {
		cases = optest.Perfs()
	}
	cases = optest.Match(cases, *op, match)
	if len(cases) == 0 {
		fmt.Fprintf(a.stderr, "ternion ops %s: no case matches\n", mode)
		return exitFail
	}
	dev, err := a.openDevice(*device)
	if err != nil {
		fmt.Fprintf(a.stderr, "ternion ops %s: %v\n", mode, err)
		return exitFail
	}
	defer dev.Close()
	if mode == "perf" {
		return a.perf(dev, cases, *minTime, *coldMiB<<20, *asJSON, *verbose)
	}
	if *seed == 0 {
		*seed = newSeed()
	}
	if *runs < 1 {
		fmt.Fprintf(a.stderr, "ternion ops %s: --runs %d: want 1 or more\n", mode, *runs)
		return exitUsage
	}
	if *splitOver != "" {
		s, err := dev.Split()
		if err != nil {
			fmt.Fprintf(a.stderr, "ternion ops %s: --split: %v\n", mode, err)
			return exitFail
		}
		if !*asJSON {
			fmt.Fprintf(a.stdout, "ternion ops test: src0 of MUL_MAT split over %d devices (%s): %s\n", s.Devices(), s.Source(), s)
		}
	}
	return a.test(dev, cases, *seed, *runs, *asJSON, *splitOver != "")
}

// newSeed is a fresh random seed for the op tests when none is given: 63
// random bits.
func newSeed() uint64 { return rand.Uint64() >> 1 }

// quietLogger drops the backends' info logs (the CLI prints its own lines).
var quietLogger = slog.New(slog.NewTextHandler(io.Discard, nil))

// openDevice opens the backend named spec ("host", "cuda", "cuda:1"), or the
// first GPU device any compiled-in vendor has when spec is empty (host when
// there is none).
func (a *app) openDevice(spec string) (*backend.Backend, error) {
	opts := backend.Options{Logger: quietLogger, Env: a.lookupEnv, TensorSplit: a.tensorSplit}
	if spec == "" {
		for _, p := range a.probe() {
			if p.Vendor == "host" || p.Err != nil {
				continue
			}
			if n, err := p.Driver.DeviceCount(); err == nil && n > 0 {
				return backend.New(p.Driver, 0, opts)
			}
		}
		spec = "host"
	}
	vendor, idx, _ := strings.Cut(spec, ":")
	dev := 0
	if idx != "" {
		n, err := strconv.Atoi(idx)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("device %s: want VENDOR or VENDOR:INDEX (cuda:0)", quote.Q(spec))
		}
		dev = n
	}
	d, err := a.open(vendor)
	if err != nil {
		return nil, fmt.Errorf("device %s: %w", quote.Q(spec), err)
	}
	if n, err := d.DeviceCount(); err != nil || dev >= n {
		return nil, fmt.Errorf("device %s: %s has %d devices (%v)", quote.Q(spec), vendor, n, err)
	}
	return backend.New(d, dev, opts)
}

// describeDevice is "cuda:0 (NVIDIA H200, sm_90)".
func describeDevice(b *backend.Backend) string {
	p := b.Props()
	return fmt.Sprintf("%s (%s, %s)", b.Name(), p.Name, p.ArchName)
}

// testReport is `ternion ops test --json`.
type testReport struct {
	Device       string          `json:"device"`
	Reference    string          `json:"reference"`
	Seed         uint64          `json:"seed"`
	Results      []optest.Result `json:"results"`
	Passed       int             `json:"passed"`
	Failed       int             `json:"failed"`
	NotSupported int             `json:"not_supported"`
}

// test checks cases on dev against the host device (or, on the host device,
// against the float64 reference) and prints one line per case.
func (a *app) test(dev *backend.Backend, cases []optest.Case, seed uint64, runs int, asJSON, split bool) int {
	rep := testReport{Device: describeDevice(dev), Reference: "float64 reference (core/ref)", Seed: seed}
	var ref *backend.Backend
	if dev.Driver().Vendor() != "host" {
		hostDev, err := a.openDevice("host")
		if err != nil {
			fmt.Fprintf(a.stderr, "ternion ops test: the reference device: %v\n", err)
			return exitFail
		}
		defer hostDev.Close()
		ref, rep.Reference = hostDev, describeDevice(hostDev)
	}
	if !asJSON {
		fmt.Fprintf(a.stdout, "ternion ops test: %d cases on %s against %s, seed %d (replay: --seed %d)\n",
			len(cases), rep.Device, rep.Reference, seed, seed)
	}
	width := len(strconv.Itoa(len(cases)))
	for i, c := range cases {
		check := optest.CheckRuns
		if split {
			check = optest.CheckSplit
		}
		r := check(c, dev, ref, seed+uint64(i), runs)
		rep.Results = append(rep.Results, r)
		switch r.Outcome() {
		case optest.Passed:
			rep.Passed++
		case optest.Failed:
			rep.Failed++
		default:
			rep.NotSupported++
		}
		if asJSON {
			continue
		}
		line := fmt.Sprintf("[%*d/%d] %s: %s", width, i+1, len(cases), c.Name, r.Status)
		if r.Reason != "" {
			line += " (" + r.Reason + ")"
		}
		fmt.Fprintln(a.stdout, line)
	}
	if asJSON {
		if err := writeJSON(a.stdout, rep); err != nil {
			fmt.Fprintf(a.stderr, "ternion ops test: %v\n", err)
			return exitFail
		}
	} else {
		fmt.Fprintf(a.stdout, "%d passed, %d failed, %d not supported\n", rep.Passed, rep.Failed, rep.NotSupported)
	}
	if rep.Failed > 0 {
		return exitFail
	}
	return exitOK
}

// Perf targets per graph, as test-backend-ops sizes its perf graphs: about
// 32 GiB moved or 100 GFLOP per graph on a GPU; the host device gets a
// thousandth.
const (
	perfBytes = 32 << 30
	perfFLOPs = 100e9
)

// perf times cases on dev and prints ggml-style lines.
func (a *app) perf(dev *backend.Backend, cases []optest.Case, minTime time.Duration, coldBytes int64, asJSON, verbose bool) int {
	bytes, flops := float64(perfBytes), perfFLOPs
	if dev.Driver().Vendor() == "host" {
		bytes, flops = bytes/1000, flops/1000
	}
	if !asJSON {
		fmt.Fprintf(a.stdout, "ternion ops perf: %d cases on %s\n", len(cases), describeDevice(dev))
	}
	var results []optest.PerfResult
	status := exitOK
	for _, c := range cases {
		r := optest.PerfCold(c, dev, bytes, flops, minTime, coldBytes)
		results = append(results, r)
		if r.Err != "" {
			status = exitFail
		}
		if asJSON {
			continue
		}
		switch {
		case r.Err != "":
			fmt.Fprintf(a.stdout, "  %s: error: %s\n", c.Name, r.Err)
		case c.FLOPs > 0:
			fmt.Fprintf(a.stdout, "  %s: %8d runs - %10.2f us/run - %8.2f TFLOPS\n", c.Name, r.Runs, r.USRun, r.TFLOPs)
		default:
			fmt.Fprintf(a.stdout, "  %s: %8d runs - %10.2f us/run - %8.2f GB/s\n", c.Name, r.Runs, r.USRun, r.GBs)
		}
		if verbose && r.Path != "" {
			fmt.Fprintf(a.stdout, "    path %s\n", r.Path)
		}
		if verbose && r.Copies > 0 {
			fmt.Fprintf(a.stdout, "    cold: %d copies of the inputs in turn\n", r.Copies)
		}
	}
	gs := dev.GraphStats()
	if asJSON {
		if err := writeJSON(a.stdout, struct {
			Device  string              `json:"device"`
			Results []optest.PerfResult `json:"results"`
			Graphs  backend.GraphStats  `json:"graphs"`
		}{describeDevice(dev), results, gs}); err != nil {
			return exitFail
		}
	} else {
		fmt.Fprintf(a.stdout, "graphs: %s\n", gs)
	}
	return status
}

// shortEvery picks every shortEvery-th test case for the main job.
const shortEvery = 12

// mainJob is `ternion` without arguments: the devices, then a short op test
// on the best device compiled in.
func (a *app) mainJob() int {
	status := a.devices(nil)
	if status != exitOK {
		return status
	}
	dev, err := a.openDevice("")
	if err != nil {
		fmt.Fprintf(a.stderr, "ternion: %v\n", err)
		return exitFail
	}
	defer dev.Close()
	var short []optest.Case
	for i, c := range optest.Tests() {
		if i%shortEvery == 0 {
			short = append(short, c)
		}
	}
	fmt.Fprintln(a.stdout)
	return a.test(dev, short, newSeed(), 1, false, false)
}
