package main

import (
	"strings"
	"testing"

	"github.com/ternion/ternion/host"
	"github.com/ternion/ternion/vendorapi"
)

// opsApp is the CLI with a host driver of n devices as vendor "host".
func opsApp(t *testing.T, n int, env map[string]string) *app {
	t.Helper()
	d, err := host.New(host.Options{Devices: n, MemoryLimit: 512 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	a := devicesApp(env, vendorapi.Probe{Vendor: "host", Driver: d})
	a.open = func(v string) (vendorapi.Driver, error) {
		if v != "host" {
			t.Fatalf("opened %q", v)
		}
		return d, nil
	}
	return a
}

func TestOpsTestSplit(t *testing.T) {
	for _, tc := range []struct {
		name    string
		devices int
		env     map[string]string
		args    []string
		status  int
		stdout  []string // substrings of stdout
		stderr  string   // a substring of stderr
	}{
		{"0.7,0.3 over 2", 2, nil, []string{"--split", "0.7,0.3", "-p", "m=320,n=(7|300),"}, exitOK,
			[]string{"src0 of MUL_MAT split over 2 devices (given proportions): 0:0.700 1:0.300",
				"MUL_MAT(type_a=bf16,type_b=f32,m=320,n=300,k=64,", "12 passed, 0 failed, 0 not supported"}, ""},
		{"default: the variable", 3, map[string]string{"TERNION_TENSOR_SPLIT": "1,0,1"}, []string{"--split", "default", "-p", "m=320,n=1,"}, exitOK,
			[]string{"over 3 devices (TERNION_TENSOR_SPLIT): 0:0.500 1:0.000 2:0.500", "6 passed, 0 failed"}, ""},
		{"default: by memory", 4, nil, []string{"--split", "default", "-p", "m=320,n=128,"}, exitOK,
			[]string{"over 4 devices (by total memory): 0:0.250 1:0.250 2:0.250 3:0.250", "3 passed, 0 failed"}, ""},
		{"cases that cannot be split", 2, nil, []string{"--split", "1,1", "-p", "bs=\\[2,1\\]"}, exitOK,
			[]string{"not supported (src0 cannot be split:", "is a batch of matrices"}, ""},
		{"more devices than exist", 2, nil, []string{"--split", "1,1,1"}, exitFail, nil,
			"names 3 devices, only 2 exist"},
		{"malformed", 2, nil, []string{"--split", "0.7,x"}, exitUsage, nil, `--split "0.7,x"`},
		{"another op", 2, nil, []string{"--split", "1,1", "-o", "ADD"}, exitUsage, nil, "--split runs the MUL_MAT test cases"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := opsApp(t, tc.devices, tc.env)
			stdout, stderr, status := runCLI(t, a, append([]string{"ops", "test", "-d", "host", "--seed", "7"}, tc.args...)...)
			if status != tc.status {
				t.Errorf("status %d, want %d; stderr:\n%s\nstdout:\n%s", status, tc.status, stderr, stdout)
			}
			for _, w := range tc.stdout {
				if !strings.Contains(stdout, w) {
					t.Errorf("stdout lacks %q:\n%s", w, stdout)
				}
			}
			if !strings.Contains(stderr, tc.stderr) {
				t.Errorf("stderr lacks %q:\n%s", tc.stderr, stderr)
			}
		})
	}
}

// TestOpsPerfPath: `ops perf -v` prints the path a MUL_MAT_ID case takes
// and why (as for MUL_MAT, whose perf cases are too large for the host).
func TestOpsPerfPath(t *testing.T) {
	a := opsApp(t, 1, nil)
	stdout, stderr, status := runCLI(t, a, "ops", "perf", "-d", "host", "-v", "--time", "1ms", "-p",
		`MUL_MAT_ID\(type_a=q4_0,type_b=f32,n_mats=128,n_used=8,b=0,m=768,n=1,k=2048,`)
	if status != exitOK {
		t.Fatalf("status %d; stderr:\n%s", status, stderr)
	}
	for _, w := range []string{"1 cases on host:0", "MUL_MAT_ID(type_a=q4_0", "path mmvq8w_id: few pairs an expert"} {
		if !strings.Contains(stdout, w) {
			t.Errorf("stdout lacks %q:\n%s", w, stdout)
		}
	}
}

// TestOpsPerfCold checks --cold: accepted by ops perf (a one-node case
// timed over copies of its inputs; a case of more nodes an error line and
// status 1), refused by ops test and below 0.
func TestOpsPerfCold(t *testing.T) {
	for _, tc := range []struct {
		name   string
		args   []string
		status int
		out    string // a substring of stdout, or of stderr for a usage error
	}{
		{"a one-node case", []string{"ops", "perf", "-d", "host", "-v", "--time", "1ms", "--cold", "1", "-p", `^MUL_MAT\(type_a=q4_0,type_b=f32,m=4096,n=1,k=4096,`},
			exitOK, "cold: 2 copies of the inputs in turn"},
		{"a case of two nodes", []string{"ops", "perf", "-d", "host", "--time", "1ms", "--cold", "1", "-p", `^CPY\(type_src=f32,type_dst=f32,ne=\[8192,512,2,1\],permute_src=\[0,2,1,3\]`},
			exitFail, "cold perf cycles one-node cases"},
		{"ops test", []string{"ops", "test", "-d", "host", "--cold", "1"}, exitUsage, "applies to ops perf"},
		{"negative", []string{"ops", "perf", "-d", "host", "--cold", "-1"}, exitUsage, "MiB ≥ 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, status := runCLI(t, opsApp(t, 1, nil), tc.args...)
			if status != tc.status || !strings.Contains(stdout+stderr, tc.out) {
				t.Errorf("status %d (want %d), want %q in\nstdout:\n%s\nstderr:\n%s", status, tc.status, tc.out, stdout, stderr)
			}
		})
	}
}
