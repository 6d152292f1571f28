//go:build cuda || hip || musa

package gpushim

import (
	"bytes"
	"errors"
	"io"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/arch"
	"github.com/ternion/ternion/kernels"
	"github.com/ternion/ternion/vendorapi"
)

// openQuiet opens the driver with a silent logger; it also loads the vendor
// libraries that are opened at run time, which naming statuses needs.
func openQuiet() (*Driver, error) {
	return Open(Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
}

// TestStatusNames checks the names the vendor reports for statusCases against
// the classification tables. Runtime and driver names need the vendor's
// libraries (loaded by Open where they are opened at run time): a source the
// vendor cannot name here is skipped with a message. No GPU is needed.
func TestStatusNames(t *testing.T) {
	_, err := openQuiet()
	t.Logf("Open: %v", err)
	named := map[int]bool{srcBLAS: true}
	for _, src := range []int{srcRuntime, srcDriver} {
		named[src] = cStatus(src, 1).name != ""
	}
	for _, c := range statusCases {
		if !named[c.src] {
			t.Logf("%s status %d: the %s library is not loaded here to name it; skipped", sourceName(c.src), c.code, vendor.name)
			continue
		}
		e := cStatus(c.src, c.code).toError(vendor.name, 0)
		assert.ErrorIs(t, e, c.kind, "%s status %d named %q", sourceName(c.src), c.code, e.CodeName)
		assert.NotEmpty(t, e.Message, "%s status %d", sourceName(c.src), c.code)
	}
}

// TestRTCCompileWithoutDevice compiles the kernel sources with the vendor's
// run-time compiler for a fixed target; compiling needs the compiler's
// library but no GPU, so this runs wherever the library is installed. It
// skips where the driver or the compiler is missing, saying why.
func TestRTCCompileWithoutDevice(t *testing.T) {
	d, err := openQuiet()
	if errors.Is(err, vendorapi.ErrNoDriver) {
		t.Skipf("no driver: %v", err)
	}
	require.NoError(t, err)
	d.rtc.mu.Lock()
	defer d.rtc.mu.Unlock()
	if err := d.rtcOpen(0); err != nil {
		require.ErrorIs(t, err, vendorapi.ErrNoKernel)
		t.Skipf("no run-time compiler: %v", err)
	}
	t.Logf("%s from %s", d.rtc.version, d.rtc.lib)
	target := map[string]rtcTarget{
		"cuda": {name: "compute_75", opt: "--gpu-architecture=compute_75"},
		"hip":  gfxRTCTarget("gfx90a:sramecc+:xnack-", arch.CDNA2),
	}[vendor.name]
	for _, f := range kernels.Families {
		code, err := d.rtcCompile(0, f.Name, target)
		require.NoError(t, err, "family %s", f.Name)
		if target.kind == codeObject {
			assert.True(t, bytes.HasPrefix(code, []byte("\x7fELF")), "an AMD code object is an ELF file")
		}
		for _, k := range f.All() {
			if target.kind == codeObject {
				assert.True(t, bytes.Contains(code, []byte(k.Name)), "family %s's code object defines %s", f.Name, k.Name)
			} else {
				assert.Contains(t, string(code), ".entry "+k.Name, "PTX of family %s", f.Name)
			}
		}
	}
}
