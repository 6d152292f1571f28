package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/ternion/ternion/internal/quote"
	"github.com/ternion/ternion/vendorapi"
)

// Exit statuses.
const (
	exitOK    = 0 // success
	exitFail  = 1 // the command ran and found a problem (no vendor opened, malformed input)
	exitUsage = 2 // the command line was wrong
)

// app is one invocation of the CLI with its outside world made explicit, so
// tests run commands against buffers, a fake environment and fake probes.
type app struct {
	stdout, stderr io.Writer
	lookupEnv      func(string) (string, bool)            // os.LookupEnv
	environ        func() []string                        // os.Environ
	probe          func() []vendorapi.Probe               // vendorapi.OpenAll
	vendors        func() []string                        // vendorapi.Vendors
	open           func(string) (vendorapi.Driver, error) // vendorapi.Open
	tensorSplit    []float64                              // ops test --split: the backends' Options.TensorSplit
}

// newApp returns the CLI wired to the process: real environment and registry.
func newApp(stdout, stderr io.Writer) *app {
	return &app{
		stdout:    stdout,
		stderr:    stderr,
		lookupEnv: os.LookupEnv,
		environ:   os.Environ,
		probe:     vendorapi.OpenAll,
		vendors:   vendorapi.Vendors,
		open:      vendorapi.Open,
	}
}

const usage = `ternion reports what the ternion GPU backend sees.

Usage:
  ternion devices [--json] [--features]
        every device of every vendor compiled into this build, the build's
        vendors and switches, and why any vendor is unusable
  ternion arch NAME... [--json] [--override X.Y.Z]
        decode architecture names: gfx90a:sramecc+:xnack-, gfx10-3-generic,
        sm_90, sm_120a, compute_75, mp_22, kfd:90010 (amdkfd
        gfx_target_version), hsa:10.3.0, nv:8.6, amd:9.0, mt:2.2, or a ggml
        value (900, 0x100090a)
  ternion ops test|perf [-o OP] [-p REGEX] [-d DEVICE] [--json] [--seed N] [--time D]
        test: every op case on a device against the host device (on the
        host device: against a float64 reference), ggml's NMSE thresholds,
        sentinels around every output; perf: the cases timed as ggml's
        test-backend-ops times them (µs/run, GB/s or TFLOPS)
  ternion
        the devices, then a short ops test on the first GPU device (host
        without a GPU vendor)
  ternion help
        this text

GPU vendors are compiled in with build tags (go build -tags cuda ./cmd/ternion);
the host vendor is always there. Environment switches: ternion devices --features.
`

// run executes one command line (without the program name) and returns the
// exit status.
func (a *app) run(args []string) int {
	if len(args) == 0 {
		return a.mainJob()
	}
	switch cmd, rest := args[0], args[1:]; cmd {
	case "help", "-h", "-help", "--help":
		fmt.Fprint(a.stdout, usage)
		return exitOK
	case "devices":
		return a.devices(rest)
	case "arch":
		return a.arch(rest)
	case "ops":
		return a.ops(rest)
	default:
		fmt.Fprintf(a.stderr, "ternion: unknown command %s\n\n%s", quote.Q(cmd), usage)
		return exitUsage
	}
}

// parseInterleaved parses fs's flags from args where flags and positional
// arguments may come in any order ("arch sm_90 --json gfx90a"); everything
// after "--" is positional. It returns the positional arguments in order.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if consumed := len(args) - len(rest); consumed > 0 && args[consumed-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// newFlagSet returns a flag set that reports errors on a's stderr (each
// message cut to maxFlagMessage bytes: the flag package repeats a whole bad
// argument) and returns them instead of exiting.
func (a *app) newFlagSet(name, synopsis string) *flag.FlagSet {
	fs := flag.NewFlagSet("ternion "+name, flag.ContinueOnError)
	fs.SetOutput(clipWriter{a.stderr})
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: ternion %s %s\n", name, synopsis)
		fs.PrintDefaults()
	}
	return fs
}

// maxFlagMessage is the longest message of the flag package clipWriter
// passes whole; usage lines are shorter.
const maxFlagMessage = 200

// clipWriter writes each message (one Write) of at most maxFlagMessage bytes
// whole, and a longer one cut at a rune boundary with a count of what was cut.
type clipWriter struct{ w io.Writer }

// Write writes p, or its first maxFlagMessage bytes and how many more there were.
func (c clipWriter) Write(p []byte) (int, error) {
	if len(p) <= maxFlagMessage {
		return c.w.Write(p)
	}
	msg, nl := strings.CutSuffix(string(p), "\n")
	line := quote.Clip(msg, maxFlagMessage)
	if nl {
		line += "\n"
	}
	if _, err := io.WriteString(c.w, line); err != nil {
		return 0, err
	}
	return len(p), nil
}

// flagStatus maps a flag parse error to an exit status: -h is success.
func flagStatus(err error) int {
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	return exitUsage
}
