package main

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/ternion/ternion/vendorapi"
)

// runCLI runs one command line against buffers with an empty environment and
// no vendors; devices tests replace probe.
func runCLI(t *testing.T, a *app, args ...string) (stdout, stderr string, status int) {
	t.Helper()
	var out, errb bytes.Buffer
	a.stdout, a.stderr = &out, &errb
	status = a.run(args)
	return out.String(), errb.String(), status
}

func testApp() *app {
	a := newApp(nil, nil)
	a.lookupEnv = func(string) (string, bool) { return "", false }
	a.environ = func() []string { return nil }
	a.vendors = func() []string { return nil }
	a.probe = func() []vendorapi.Probe { return nil }
	return a
}

// archJSON is the part of ternion arch --json the tests compare.
type archJSON struct {
	Input    string          `json:"input"`
	Vendor   string          `json:"vendor"`
	CC       int             `json:"cc"`
	Family   string          `json:"family"`
	Gfx      string          `json:"gfx"`
	WaveSize int             `json:"wave_size"`
	Features map[string]bool `json:"features"`
	Override *struct {
		Env   string `json:"env"`
		Value string `json:"value"`
		CC    int    `json:"cc"`
	} `json:"override"`
	Error string `json:"error"`
}

func decodeArchJSON(t *testing.T, s string) []archJSON {
	t.Helper()
	var got []archJSON
	if err := json.Unmarshal([]byte(s), &got); err != nil {
		t.Fatalf("output is not a JSON array of objects: %v\n%s", err, s)
	}
	return got
}

func TestArchJSON(t *testing.T) {
	inputs := []string{"gfx90a:sramecc+:xnack-", "gfx10-3-generic", "sm_90", "sm_120a", "mp_22", "kfd:90010", "nv:8.6"}
	stdout, stderr, status := runCLI(t, testApp(), append([]string{"arch", "--json"}, inputs...)...)
	if status != exitOK {
		t.Fatalf("status %d, stderr:\n%s", status, stderr)
	}
	got := decodeArchJSON(t, stdout)
	type core struct {
		Input, Vendor string
		CC            int
		Family, Gfx   string
		WaveSize      int
	}
	want := []core{
		{"gfx90a:sramecc+:xnack-", "amd", 0x100090a, "CDNA2", "gfx90a", 64},
		{"gfx10-3-generic", "amd", 0x1001030, "RDNA2", "gfx10-3-generic", 32},
		{"sm_90", "nvidia", 900, "Hopper", "", 32},
		{"sm_120a", "nvidia", 1200, "Blackwell", "", 32},
		{"mp_22", "mthreads", 0x100220, "QY2", "", 32},
		{"kfd:90010", "amd", 0x100090a, "CDNA2", "gfx90a", 64},
		{"nv:8.6", "nvidia", 860, "Ampere", "", 32},
	}
	var gotCore []core
	for _, g := range got {
		if g.Error != "" || g.Override != nil {
			t.Errorf("%s: unexpected error %q or override %+v", g.Input, g.Error, g.Override)
		}
		gotCore = append(gotCore, core{g.Input, g.Vendor, g.CC, g.Family, g.Gfx, g.WaveSize})
	}
	if diff := cmp.Diff(want, gotCore); diff != "" {
		t.Errorf("decoded archs (-want +got):\n%s", diff)
	}

	// Spot checks of the feature object: every arch.Features key is present.
	feature := func(input, name string) bool {
		t.Helper()
		for _, g := range got {
			if g.Input == input {
				v, ok := g.Features[name]
				if !ok {
					t.Fatalf("%s: features lack %q: %v", input, name, g.Features)
				}
				return v
			}
		}
		t.Fatalf("no result for %s", input)
		return false
	}
	for _, c := range []struct {
		input, feature string
		want           bool
	}{
		{"sm_90", "turing_mma", true},
		{"sm_90", "ampere_mma", true},
		{"sm_90", "mfma", false},
		{"nv:8.6", "bf16_mma_hardware", true},
		{"gfx90a:sramecc+:xnack-", "mfma", true},
		{"gfx90a:sramecc+:xnack-", "wmma", false},
		{"gfx10-3-generic", "dp4a", true},
		{"gfx10-3-generic", "mfma", false},
		{"mp_22", "fp16_mma_hardware", true},
		{"mp_22", "turing_mma", false},
	} {
		if got := feature(c.input, c.feature); got != c.want {
			t.Errorf("%s: %s = %v, want %v", c.input, c.feature, got, c.want)
		}
	}
}

func TestArchMalformed(t *testing.T) {
	stdout, _, status := runCLI(t, testApp(), "arch", "sm_90", "gfxzz", "--json")
	if status != exitFail {
		t.Errorf("status %d, want %d", status, exitFail)
	}
	got := decodeArchJSON(t, stdout)
	if len(got) != 2 {
		t.Fatalf("got %d results, want 2:\n%s", len(got), stdout)
	}
	if got[0].Error != "" || got[0].CC != 900 {
		t.Errorf("good input beside a bad one: %+v", got[0])
	}
	bad := got[1]
	if bad.Input != "gfxzz" || bad.Error == "" || bad.CC != 0 || bad.Features != nil {
		t.Errorf("malformed input: want only input and error, got %+v", bad)
	}
	if !strings.Contains(bad.Error, "gfxzz") {
		t.Errorf("error %q does not name the input", bad.Error)
	}

	// Text mode: the good row on stdout, the bad input on stderr, same status.
	stdout, stderr, status := runCLI(t, testApp(), "arch", "gfxzz", "sm_90")
	if status != exitFail || !strings.Contains(stderr, "gfxzz") || !strings.Contains(stdout, "Hopper") {
		t.Errorf("text: status %d\nstdout:\n%s\nstderr:\n%s", status, stdout, stderr)
	}
}

func TestArchRepeatedFeature(t *testing.T) {
	for _, in := range []string{"gfx90a:xnack+:xnack-", "gfx90a:xnack+:xnack+"} {
		_, stderr, status := runCLI(t, testApp(), "arch", in)
		if status != exitFail || !strings.Contains(stderr, `feature "xnack" is`) {
			t.Errorf("%s: status %d, stderr:\n%s", in, status, stderr)
		}
	}
}

// TestArchBoundedErrors feeds a megabyte of input: errors stay short, and
// the JSON holds the input once plus a short error.
func TestArchBoundedErrors(t *testing.T) {
	big := "gfx90a" + strings.Repeat("a", 1<<20)
	for i, args := range [][]string{
		{"arch", big},
		{"arch", "gfx90a:xnack+:" + big[6:]},
		{"arch", "--override", big, "gfx90a"},
		{"arch", "--" + big, "gfx90a"},
		{"arch", "--json=" + big, "gfx90a"},
		{"devices", big},
		{big},
	} {
		t.Run(strconv.Itoa(i), func(t *testing.T) {
			stdout, stderr, status := runCLI(t, testApp(), args...)
			if status == exitOK || len(stderr) > 4000 || !strings.Contains(stderr, "more bytes)") {
				t.Errorf("status %d, %d bytes of stderr:\n%.1000s", status, len(stderr), stderr)
			}
			if len(stdout) > 4000 {
				t.Errorf("%d bytes of stdout", len(stdout))
			}
		})
	}
	stdout, _, status := runCLI(t, testApp(), "arch", "--json", big)
	got := decodeArchJSON(t, stdout)
	if status != exitFail || len(got) != 1 || got[0].Input != big || len(got[0].Error) > 400 || len(stdout) > len(big)+1000 {
		t.Errorf("status %d, %d bytes of JSON, error %.500q", status, len(stdout), got[0].Error)
	}
}

func TestArchOverride(t *testing.T) {
	stdout, stderr, status := runCLI(t, testApp(), "arch", "--override", "10.3.0", "gfx90a:sramecc+:xnack-", "sm_90", "--json")
	if status != exitOK {
		t.Fatalf("status %d, stderr:\n%s", status, stderr)
	}
	got := decodeArchJSON(t, stdout)
	if len(got) != 2 {
		t.Fatalf("got %d results, want 2", len(got))
	}
	amd, nv := got[0], got[1]
	if amd.CC != 0x1001030 || amd.Family != "RDNA2" || amd.WaveSize != 32 || amd.Gfx != "gfx1030" {
		t.Errorf("AMD input with override 10.3.0: %+v", amd)
	}
	if amd.Override == nil || amd.Override.Env != "HSA_OVERRIDE_GFX_VERSION" || amd.Override.Value != "10.3.0" || amd.Override.CC != 0x1001030 {
		t.Errorf("override not reported: %+v", amd.Override)
	}
	if nv.Override != nil || nv.CC != 900 {
		t.Errorf("NVIDIA input must ignore the HSA override: %+v", nv)
	}

	stdout, _, _ = runCLI(t, testApp(), "arch", "gfx90a", "--override=10.3.0")
	if !strings.Contains(stdout, "HSA_OVERRIDE_GFX_VERSION=10.3.0 applied") {
		t.Errorf("text output does not say the override applied:\n%s", stdout)
	}

	_, stderr, status = runCLI(t, testApp(), "arch", "gfx90a", "--override", "ten")
	if status != exitUsage || !strings.Contains(stderr, "--override") {
		t.Errorf("bad override: status %d, stderr:\n%s", status, stderr)
	}
}

func TestArchText(t *testing.T) {
	stdout, stderr, status := runCLI(t, testApp(), "arch", "sm_90", "gfx1100", "mp_22")
	if status != exitOK {
		t.Fatalf("status %d, stderr:\n%s", status, stderr)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if len(lines) != 4 {
		t.Fatalf("want a header and 3 rows, got:\n%s", stdout)
	}
	for i, want := range [][]string{
		{"INPUT", "VENDOR", "CC", "FAMILY", "GFX", "WAVE", "FEATURES"},
		{"sm_90", "nvidia", "900", "Hopper", "turing_mma"},
		{"gfx1100", "amd", "0x1001100", "RDNA3", "wmma"},
		{"mp_22", "mthreads", "0x100220", "QY2"},
	} {
		for _, w := range want {
			if !strings.Contains(lines[i], w) {
				t.Errorf("line %d lacks %q: %s", i, w, lines[i])
			}
		}
	}
}

func TestUsage(t *testing.T) {
	for _, c := range []struct {
		args   []string
		status int
		out    string // substring of stdout
		err    string // substring of stderr
	}{
		{[]string{"help"}, exitOK, "ternion devices", ""},
		{[]string{"help"}, exitOK, "ternion ops test|perf", ""},
		{[]string{"frobnicate"}, exitUsage, "", `unknown command "frobnicate"`},
		{[]string{"arch"}, exitUsage, "", "no architecture given"},
		{[]string{"arch", "--bogus", "sm_90"}, exitUsage, "", "bogus"},
		{[]string{"devices", "extra"}, exitUsage, "", `unexpected argument "extra"`},
		{[]string{"arch", "--", "sm_90"}, exitOK, "Hopper", ""},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			stdout, stderr, status := runCLI(t, testApp(), c.args...)
			if status != c.status || !strings.Contains(stdout, c.out) || !strings.Contains(stderr, c.err) {
				t.Errorf("status %d (want %d)\nstdout:\n%s\nstderr:\n%s", status, c.status, stdout, stderr)
			}
		})
	}
}
