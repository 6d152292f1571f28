package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/ternion/ternion/arch"
	"github.com/ternion/ternion/host"
	"github.com/ternion/ternion/switches"
	"github.com/ternion/ternion/vendorapi"
)

// TestMain doubles as the ternion binary: with CMD_TERNION_TEST_MAIN=1 the test
// binary runs the CLI on its arguments and exits, so tests can run the real
// registry (vendorapi.Open caches per process) with their own environment.
func TestMain(m *testing.M) {
	if os.Getenv("CMD_TERNION_TEST_MAIN") == "1" {
		os.Exit(newApp(os.Stdout, os.Stderr).run(os.Args[1:]))
	}
	os.Exit(m.Run())
}

// fakeDriver answers the device queries of vendorapi.Driver; any other method
// panics through the nil embedded interface, which ternion devices never calls.
type fakeDriver struct {
	vendorapi.Driver
	vendor   string
	props    []vendorapi.Props
	free     []uint64
	countErr error
}

func (f *fakeDriver) Vendor() string { return f.vendor }

func (f *fakeDriver) DeviceCount() (int, error) { return len(f.props), f.countErr }

func (f *fakeDriver) Props(dev int) (vendorapi.Props, error) {
	if dev < 0 || dev >= len(f.props) {
		return vendorapi.Props{}, vendorapi.ErrInvalidValue
	}
	return f.props[dev], nil
}

func (f *fakeDriver) MemInfo(dev int) (free, total uint64, err error) {
	if dev < 0 || dev >= len(f.props) {
		return 0, 0, vendorapi.ErrInvalidValue
	}
	return f.free[dev], f.props[dev].TotalMemory, nil
}

// listingDriver also reports build switches.
type listingDriver struct {
	fakeDriver
	features []vendorapi.Feature
}

func (l *listingDriver) Features() []vendorapi.Feature { return l.features }

const gib = 1 << 30

func hostFake(n int) *fakeDriver {
	f := &fakeDriver{vendor: "host"}
	for i := range n {
		f.props = append(f.props, vendorapi.Props{
			Index: i, Name: fmt.Sprintf("host device %d", i), ArchName: "host", SMs: 2, WarpSize: 32,
			TotalMemory: 8 * gib, VMM: true, VMMGranularity: 64 << 10, Integrated: true,
		})
		f.free = append(f.free, 6*gib)
	}
	return f
}

func cudaFake() *listingDriver {
	return &listingDriver{
		fakeDriver: fakeDriver{
			vendor: "cuda",
			props: []vendorapi.Props{{
				Name: "NVIDIA H200", ArchName: "sm_90", Major: 9, Minor: 0, SMs: 132, WarpSize: 32,
				TotalMemory: 140 * gib, VMM: true, VMMGranularity: 2 << 20, PCIBusID: "0000:19:00.0",
				CC: arch.NVIDIA(9, 0), CompiledArchs: []arch.CC{arch.NVIDIA(8, 0)},
			}},
			free: []uint64{139 * gib},
		},
		features: []vendorapi.Feature{{Name: "ARCHS", Value: "800"}, {Name: "NVRTC", Value: "1"}},
	}
}

func probes(ps ...vendorapi.Probe) func() []vendorapi.Probe {
	return func() []vendorapi.Probe { return ps }
}

func devicesApp(env map[string]string, ps ...vendorapi.Probe) *app {
	a := testApp()
	var names []string
	for _, p := range ps {
		names = append(names, p.Vendor)
	}
	a.vendors = func() []string { return names }
	a.probe = probes(ps...)
	a.lookupEnv = func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	a.environ = func() []string {
		var kv []string
		for k, v := range env {
			kv = append(kv, k+"="+v)
		}
		return kv
	}
	return a
}

var noDriver = &vendorapi.Error{Vendor: "hip", Call: "dlopen", CodeName: "no driver",
	Message: "libamdhip64.so", Device: -1, Kind: vendorapi.ErrNoDriver}

func TestDevicesText(t *testing.T) {
	a := devicesApp(map[string]string{"TERNION_NO_VMM": "1", "TERNION_SOMETHING_NEW": "x"},
		vendorapi.Probe{Vendor: "host", Driver: hostFake(2)},
		vendorapi.Probe{Vendor: "cuda", Driver: cudaFake()},
		vendorapi.Probe{Vendor: "hip", Err: noDriver},
		vendorapi.Probe{Vendor: "musa", Driver: &fakeDriver{vendor: "musa"}},
	)
	stdout, stderr, status := runCLI(t, a, "devices")
	if status != exitOK {
		t.Fatalf("status %d, stderr:\n%s", status, stderr)
	}
	lines := strings.Split(stdout, "\n")
	row := func(prefix string) string {
		for _, l := range lines {
			if strings.HasPrefix(l, prefix) {
				return l
			}
		}
		t.Fatalf("no line starting %q in:\n%s", prefix, stdout)
		return ""
	}
	for prefix, want := range map[string][]string{
		"#  ":  {"VENDOR", "NAME", "ARCH", "CC", "FAMILY", "SMS", "MEMORY FREE/TOTAL", "WARP", "VMM", "INTEGRATED", "FEATURES"},
		"0  ":  {"host", "host device 0", " - ", "host", "6.0 GiB / 8.0 GiB", "yes"},
		"1  ":  {"host", "host device 1"},
		"2  ":  {"cuda", "NVIDIA H200", "sm_90", " 900 ", "Hopper", "132", "139.0 GiB / 140.0 GiB", "ampere_mma"},
		"note": {"device 2 (cuda 0)", "kernels built for sm_80 run on this sm_90"},

		"vendors compiled in: host, cuda, hip, musa":                    nil,
		"default tensor split (host, by total memory): 0:0.000 1:0.500": nil,
		"  cuda: ARCHS=800":                        nil,
		"  TERNION_NO_VMM=1":                       nil,
		"  TERNION_SOMETHING_NEW=x":                nil,
		"  hip: driver not found (libamdhip64.so)": nil,
		"  musa: 0 devices":                        nil,
	} {
		l := row(prefix)
		for _, w := range want {
			if !strings.Contains(l, w) {
				t.Errorf("line %q lacks %q", l, w)
			}
		}
	}
}

// TestDevicesArchSpecific: a cc 9.0 device says whether its sm_90a kernels
// (gemm90) can be built, never silently without them.
func TestDevicesArchSpecific(t *testing.T) {
	for _, c := range []struct {
		specific []string
		want     string
	}{
		{nil, "no sm_90a kernels (fattn90,gemm90): they need NVRTC 12 or later"},
		{[]string{"sm_90a"}, "sm_90a kernels (fattn90,gemm90) are compiled at run time by NVRTC"},
	} {
		fake := cudaFake()
		fake.props[0].ArchSpecific = c.specific
		a := devicesApp(nil, vendorapi.Probe{Vendor: "cuda", Driver: fake})
		stdout, stderr, status := runCLI(t, a, "devices")
		if status != exitOK || !strings.Contains(stdout, c.want) {
			t.Errorf("status %d, want a note %q in:\n%s%s", status, c.want, stdout, stderr)
		}
	}
	ada := cudaFake()
	ada.props[0].CC, ada.props[0].ArchName = arch.NVIDIA(8, 9), "sm_89"
	stdout, _, _ := runCLI(t, devicesApp(nil, vendorapi.Probe{Vendor: "cuda", Driver: ada}), "devices")
	if strings.Contains(stdout, "sm_89a") {
		t.Errorf("no family is sm_89a code, yet:\n%s", stdout)
	}
}

func TestDevicesFeatures(t *testing.T) {
	a := devicesApp(map[string]string{"TERNION_PEER_MAX_BATCH_SIZE": "64"},
		vendorapi.Probe{Vendor: "host", Driver: hostFake(1)})
	stdout, _, status := runCLI(t, a, "devices", "--features")
	if status != exitOK {
		t.Fatalf("status %d", status)
	}
	_, listing, _ := strings.Cut(stdout, "environment switches:\n")
	lines := strings.Split(strings.TrimSuffix(listing, "\n"), "\n")
	all := switches.All()
	if len(lines) != len(all) {
		t.Fatalf("--features lists %d switches, want %d:\n%s", len(lines), len(all), listing)
	}
	for i, s := range all {
		value := s.Name + " (unset)"
		if s == switches.PeerMaxBatchSize.Switch {
			value = s.Name + "=64"
		}
		if f := strings.Fields(lines[i]); len(f) < 3 || !strings.HasPrefix(lines[i], "  "+value+"  ") ||
			!strings.Contains(lines[i], "  "+s.ReadBy.String()+"  ") || !strings.HasSuffix(lines[i], s.Describe()) {
			t.Errorf("line %d: %q, want %s, read by %s, %s", i, lines[i], value, s.ReadBy, s.Describe())
		}
	}
}

func TestDevicesBadSwitch(t *testing.T) {
	big := strings.Repeat("9", 1<<20)
	for _, tc := range []struct {
		name, key, value string
		args             []string
		stdout           string // a line of stdout
		stderr           string // a substring of stderr
	}{
		{"malformed int, text", "TERNION_PEER_MAX_BATCH_SIZE", "abc", nil,
			"  TERNION_PEER_MAX_BATCH_SIZE=abc (malformed)", `ternion devices: TERNION_PEER_MAX_BATCH_SIZE="abc": want an integer from 0 to 2147483647`},
		{"malformed int, json", "TERNION_PEER_MAX_BATCH_SIZE", "abc", []string{"--json"},
			"[", `ternion devices: TERNION_PEER_MAX_BATCH_SIZE="abc": want an integer`},
		{"malformed, features", "TERNION_TENSOR_SPLIT", "1,x", []string{"--features"},
			"  TERNION_TENSOR_SPLIT=1,x (malformed)", `TERNION_TENSOR_SPLIT="1,x": proportion 1, "x", is not a finite number`},
		{"negative size", "TERNION_HOST_MEMORY", "-5", nil,
			"  TERNION_HOST_MEMORY=-5 (malformed)", `TERNION_HOST_MEMORY="-5": the size is negative`},
		{"a megabyte", "TERNION_HOST_DEVICES", big, nil,
			"  TERNION_HOST_DEVICES=" + big[:80] + "… (1048496 more bytes) (malformed)", `TERNION_HOST_DEVICES="` + big[:80] + `…" (1048496 more bytes): want an integer from 1 to 16`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := devicesApp(map[string]string{tc.key: tc.value}, vendorapi.Probe{Vendor: "host", Driver: hostFake(1)})
			stdout, stderr, status := runCLI(t, a, append([]string{"devices"}, tc.args...)...)
			if status != exitFail {
				t.Errorf("status %d, want %d", status, exitFail)
			}
			if !slices.ContainsFunc(strings.Split(stdout, "\n"), func(l string) bool { return strings.HasPrefix(l, tc.stdout) }) {
				t.Errorf("stdout lacks %q:\n%.2000s", tc.stdout, stdout)
			}
			if !strings.Contains(stderr, tc.stderr) {
				t.Errorf("stderr lacks %q:\n%.2000s", tc.stderr, stderr)
			}
			if len(stdout)+len(stderr) > 16000 { // every switch's line, and the bad value cut short (not a megabyte)
				t.Errorf("%d bytes of output", len(stdout)+len(stderr))
			}
		})
	}
}

func TestDevicesUnknownSwitch(t *testing.T) {
	a := devicesApp(map[string]string{"TERNION_FORCE_CUBLAS": "1"}, vendorapi.Probe{Vendor: "host", Driver: hostFake(1)})
	stdout, stderr, status := runCLI(t, a, "devices")
	if status != exitOK {
		t.Errorf("status %d: an unknown variable is reported, not an error", status)
	}
	want := "TERNION_FORCE_CUBLAS: not a ternion switch; TERNION_FORCE_BLAS is ggml's GGML_CUDA_FORCE_CUBLAS"
	if !strings.Contains(stderr, "ternion devices: "+want) || !strings.Contains(stdout, "  TERNION_FORCE_CUBLAS=1  (not a ternion switch;") {
		t.Errorf("stdout:\n%s\nstderr:\n%s", stdout, stderr)
	}
}

func TestDevicesJSON(t *testing.T) {
	a := devicesApp(nil,
		vendorapi.Probe{Vendor: "host", Driver: hostFake(1)},
		vendorapi.Probe{Vendor: "cuda", Driver: cudaFake()},
		vendorapi.Probe{Vendor: "hip", Err: noDriver},
	)
	stdout, stderr, status := runCLI(t, a, "devices", "--json")
	if status != exitOK {
		t.Fatalf("status %d, stderr:\n%s", status, stderr)
	}
	if stderr != "hip: driver not found (libamdhip64.so)\n" {
		t.Errorf("stderr = %q, want the hip problem line", stderr)
	}
	var got []map[string]any
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatalf("not a JSON array: %v\n%s", err, stdout)
	}
	if len(got) != 2 {
		t.Fatalf("got %d devices, want 2", len(got))
	}
	for _, d := range got {
		for _, k := range []string{"index", "vendor", "name", "arch", "cc", "family", "sms", "memory_total",
			"memory_free", "warp_size", "vmm", "integrated", "features"} {
			if _, ok := d[k]; !ok {
				t.Errorf("device %v lacks key %q", d["index"], k)
			}
		}
	}
	host, gpu := got[0], got[1]
	if diff := cmp.Diff(map[string]any{
		"index": 0.0, "vendor": "host", "cc": 0.0, "cc_string": "-", "family": "host", "features": nil,
		"memory_total": float64(8 * gib), "memory_free": float64(6 * gib), "vmm": true,
	}, pick(host, "index", "vendor", "cc", "cc_string", "family", "features", "memory_total", "memory_free", "vmm")); diff != "" {
		t.Errorf("host row (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]any{
		"index": 1.0, "vendor": "cuda", "device": 0.0, "arch": "sm_90", "cc": 900.0, "family": "Hopper",
		"sms": 132.0, "warp_size": 32.0, "integrated": false,
	}, pick(gpu, "index", "vendor", "device", "arch", "cc", "family", "sms", "warp_size", "integrated")); diff != "" {
		t.Errorf("cuda row (-want +got):\n%s", diff)
	}
	feats, _ := gpu["features"].(map[string]any)
	if feats["turing_mma"] != true || feats["mfma"] != false {
		t.Errorf("cuda features: %v", feats)
	}
}

func pick(m map[string]any, keys ...string) map[string]any {
	out := map[string]any{}
	for _, k := range keys {
		out[k] = m[k]
	}
	return out
}

func TestDevicesNoVendorOpened(t *testing.T) {
	bad := errors.New(`host: TERNION_HOST_DEVICES="abc": want a positive integer`)
	a := devicesApp(nil, vendorapi.Probe{Vendor: "host", Err: bad})
	stdout, stderr, status := runCLI(t, a, "devices")
	if status != exitFail {
		t.Errorf("status %d, want %d", status, exitFail)
	}
	if !strings.Contains(stdout, `  host: TERNION_HOST_DEVICES="abc": want a positive integer`) ||
		!strings.Contains(stdout, "no devices") || !strings.Contains(stderr, "no vendor opened") {
		t.Errorf("stdout:\n%s\nstderr:\n%s", stdout, stderr)
	}

	stdout, stderr, status = runCLI(t, a, "devices", "--json")
	if status != exitFail || strings.TrimSpace(stdout) != "[]" || !strings.Contains(stderr, "TERNION_HOST_DEVICES") {
		t.Errorf("--json: status %d\nstdout:\n%s\nstderr:\n%s", status, stdout, stderr)
	}

	// A driver that opens but cannot count its devices did not open either.
	a = devicesApp(nil, vendorapi.Probe{Vendor: "cuda", Driver: &fakeDriver{vendor: "cuda",
		countErr: &vendorapi.Error{Vendor: "cuda", Call: "cuDeviceGetCount", Code: 100, CodeName: "CUDA_ERROR_NO_DEVICE", Device: -1}}})
	stdout, _, status = runCLI(t, a, "devices")
	if status != exitFail || !strings.Contains(stdout, "  cuda: cuDeviceGetCount failed: CUDA_ERROR_NO_DEVICE (code 100)") {
		t.Errorf("count error: status %d\n%s", status, stdout)
	}
}

func TestProblemLine(t *testing.T) {
	for _, c := range []struct {
		name string
		err  error
		want string
	}{
		{"vendor error with library", &vendorapi.Error{Vendor: "cuda", Call: "dlopen", Message: "libcuda.so.1",
			Device: -1, Kind: vendorapi.ErrNoDriver}, "cuda: driver not found (libcuda.so.1)"},
		{"wrapped sentinel", fmt.Errorf("cuda: libcuda.so.1: %w", vendorapi.ErrNoDriver), "cuda: driver not found (libcuda.so.1)"},
		{"bare sentinel", vendorapi.ErrNoDriver, "cuda: driver not found"},
		{"other error keeps its text", errors.New("cuda: cuInit failed"), "cuda: cuInit failed"},
		{"other error without prefix", errors.New("cuInit failed"), "cuda: cuInit failed"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := problemLine("cuda", c.err); got != c.want {
				t.Errorf("problemLine = %q, want %q", got, c.want)
			}
		})
	}
}

func TestHumanBytes(t *testing.T) {
	for n, want := range map[uint64]string{
		0: "0 B", 1023: "1023 B", 1024: "1.0 KiB", 1536: "1.5 KiB", 8 << 30: "8.0 GiB",
		150_000_000_000: "139.7 GiB", 3 << 40: "3.0 TiB",
	} {
		if got := humanBytes(n); got != want {
			t.Errorf("humanBytes(%d) = %q, want %q", n, got, want)
		}
	}
}

// cli runs the test binary as the ternion binary with a clean environment
// plus env, so the real registry (host vendor) answers.
func cli(t *testing.T, env []string, args ...string) (stdout, stderr string, status int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "TERNION_") && !strings.HasPrefix(kv, "HSA_OVERRIDE_GFX_VERSION") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "CMD_TERNION_TEST_MAIN=1")
	cmd.Env = append(cmd.Env, env...)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		status = ee.ExitCode()
	case err != nil:
		t.Fatalf("running %v: %v", args, err)
	}
	return out.String(), errb.String(), status
}

func TestHostDevices(t *testing.T) {
	stdout, stderr, status := cli(t, []string{"TERNION_HOST_DEVICES=2"}, "devices", "--json")
	if status != exitOK {
		t.Fatalf("status %d, stderr:\n%s", status, stderr)
	}
	var got []deviceRow
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatalf("not a JSON array of devices: %v\n%s", err, stdout)
	}
	var hosts []deviceRow
	for _, d := range got {
		if d.Vendor == "host" {
			hosts = append(hosts, d)
		}
	}
	if len(hosts) != 2 {
		t.Fatalf("TERNION_HOST_DEVICES=2 gave %d host devices:\n%s", len(hosts), stdout)
	}
	for i, d := range hosts {
		if d.Index != i || d.Device != i || d.Family != "host" || d.CC != 0 || d.CCString != "-" || d.Features != nil ||
			d.MemoryTotal == 0 || d.MemoryFree > d.MemoryTotal || d.WarpSize <= 0 || d.Name == "" {
			t.Errorf("host device %d: %+v", i, d)
		}
	}

	stdout, stderr, status = cli(t, []string{"TERNION_HOST_DEVICES=2", "TERNION_FORCE_MMQ=1"}, "devices")
	if status != exitOK {
		t.Fatalf("text: status %d, stderr:\n%s", status, stderr)
	}
	for _, want := range []string{"vendors compiled in: host", "  TERNION_HOST_DEVICES=2\n", "  TERNION_FORCE_MMQ=1\n", "FEATURES"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("text output lacks %q:\n%s", want, stdout)
		}
	}
}

func TestHostDevicesBadEnv(t *testing.T) {
	for _, env := range []string{"TERNION_HOST_MEMORY=-5", "TERNION_HOST_MEMORY=-1GiB"} {
		stdout, stderr, status := cli(t, []string{env}, "devices")
		if status != exitFail || !strings.Contains(stdout, "the size is negative") || !strings.Contains(stderr, "the size is negative") {
			t.Errorf("%s: status %d\nstdout:\n%s\nstderr:\n%s", env, status, stdout, stderr)
		}
	}
	stdout, stderr, status := cli(t, []string{"TERNION_HOST_DEVICES=abc"}, "devices")
	if !strings.Contains(stderr, `ternion devices: TERNION_HOST_DEVICES="abc": want an integer from 1 to 16`) {
		t.Errorf("text mode explains the bad variable on stderr too:\n%s", stderr)
	}
	// With host the only vendor nothing opens; a GPU build's vendor may still open.
	if strings.Contains(stdout, "vendors compiled in: host\n") && status != exitFail {
		t.Errorf("status %d, want %d\nstdout:\n%s\nstderr:\n%s", status, exitFail, stdout, stderr)
	}
	var line string
	for l := range strings.SplitSeq(stdout, "\n") {
		if strings.HasPrefix(l, "  host: ") {
			line = l
		}
	}
	if !strings.Contains(line, "TERNION_HOST_DEVICES") {
		t.Errorf("no host problem line naming TERNION_HOST_DEVICES:\n%s", stdout)
	}
}

// TestCollectHostDriver formats a host driver built directly (not through the
// per-process registry): two devices with a 1 GiB limit each.
func TestCollectHostDriver(t *testing.T) {
	d, err := host.New(host.Options{Devices: 2, MemoryLimit: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	inv := collect([]string{"host"}, []vendorapi.Probe{{Vendor: "host", Driver: d}}, func(string) (string, bool) { return "", false })
	if !inv.opened() || len(inv.problems()) != 0 || len(inv.Devices) != 2 {
		t.Fatalf("inventory: %+v", inv)
	}
	for i, row := range inv.Devices {
		if row.Index != i || row.Device != i || row.Vendor != "host" || row.Family != "host" || row.CCString != "-" ||
			row.MemoryTotal != 1<<30 || row.MemoryFree == 0 || row.MemoryFree > row.MemoryTotal || row.Features != nil {
			t.Errorf("device %d: %+v", i, row)
		}
	}
	if len(inv.Reports) != 1 || !slices.Contains(inv.Reports[0].Features, vendorapi.Feature{Name: "DEVICES", Value: "2"}) {
		t.Errorf("host build switches: %+v", inv.Reports)
	}
}

func TestDevicesTensorSplit(t *testing.T) {
	for _, tc := range []struct {
		name, value string
		devices     int
		want        string // a line of stdout
		problem     string // a line about the vendor
	}{
		{"0.7,0.3", "0.7,0.3", 2, "tensor split in effect (host, TERNION_TENSOR_SPLIT=0.7,0.3): shares of a split tensor's rows 0:0.700 1:0.300, boundaries rounded down to 64 rows", ""},
		{"a device without rows", "1,0,1", 3, "tensor split in effect (host, TERNION_TENSOR_SPLIT=1,0,1): shares of a split tensor's rows 0:0.500 1:0.000 2:0.500", ""},
		{"more devices than exist", "1,1,1", 2, "", "host: tensor split TERNION_TENSOR_SPLIT=1,1,1: bad tensor split: 1,1,1 names 3 devices, only 2 exist"},
		{"all zero", "0,0", 2, "", "does not sum to a positive finite value"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := devicesApp(map[string]string{"TERNION_TENSOR_SPLIT": tc.value}, vendorapi.Probe{Vendor: "host", Driver: hostFake(tc.devices)})
			stdout, _, status := runCLI(t, a, "devices")
			if status != exitOK {
				t.Errorf("status %d", status)
			}
			if tc.want != "" && !strings.Contains(stdout, tc.want) {
				t.Errorf("stdout lacks %q:\n%s", tc.want, stdout)
			}
			if tc.problem != "" && !strings.Contains(stdout, tc.problem) {
				t.Errorf("stdout lacks %q:\n%s", tc.problem, stdout)
			}
			if strings.Contains(stdout, "default tensor split") {
				t.Errorf("the default split is not in effect:\n%s", stdout)
			}
		})
	}
}
