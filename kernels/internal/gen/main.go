// Command gen builds ternion's kernels for every vendor whose compiler is
// installed, and writes each vendor's code objects with a manifest under
// gen/<vendor>, where the kernels package embeds them under the vendor's
// build tag. `go generate ./kernels` runs it from the kernels directory.
//
// Every kernel family (kernels.Families: one .cu file and the entry points
// generated from its templates, kernels.Unit) is built into code objects of
// its own, so editing one family's source leaves the others' prebuilt code
// valid (the manifest records each family's kernels.FamilyHash):
//   - cuda: nvcc builds one fatbin per family for kernels.CUDAArchs (machine
//     code for each arch nvcc accepts, plus PTX of the newest).
//   - hip: hipcc --genco builds one code object per family and gfx of
//     kernels.HIPArchs (HIP_PLATFORM=amd); a gfx the local hipcc rejects is
//     left out, saying why.
//   - musa: mcc --cuda-device-only builds one code object per family and arch
//     of kernels.MUSAArchs.
//
// Families are compiled in parallel.
//
// A compiler is $NVCC / $HIPCC / $MCC, else found on PATH, else at the
// toolkit's default location. Without it the vendor is skipped with a
// message (its driver compiles at run time where it can), unless
// TERNION_REQUIRE_NVCC / TERNION_REQUIRE_HIPCC / TERNION_REQUIRE_MCC is on.
// TERNION_CUDA_ARCHS ("75,80" or "sm_75 sm_90"), TERNION_HIP_ARCHS
// ("gfx90a,gfx1100") and TERNION_MUSA_ARCHS ("mp_22") replace the arch lists;
// TERNION_GEN_VENDORS ("hip" or "cuda,hip") limits the vendors built. Every
// variable is read through package switches.
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/ternion/ternion/arch"
	"github.com/ternion/ternion/internal/quote"
	"github.com/ternion/ternion/kernels"
	"github.com/ternion/ternion/switches"
)

// toolchain is one vendor's kernel compiler as the generator drives it.
type toolchain struct {
	vendor   string                 // "cuda": also the output directory gen/<vendor>
	compiler string                 // "nvcc": the command looked up on PATH
	path     switches.Of[string]    // switches.NVCC: an explicit path to the compiler
	defPath  string                 // "/usr/local/cuda/bin/nvcc": where the toolkit installs it
	require  switches.Of[bool]      // switches.RequireNVCC: on makes a missing compiler an error
	archEnv  switches.Of[[]arch.CC] // switches.CUDAArchs: replaces the arch list
	archs    []arch.CC              // the default arch list
	fallback string                 // what happens at run time without these code objects
	// version finds the version in the compiler's --version output ("" when
	// there is none).
	version func(out string) string
	// env is the compiler's environment; nil inherits gen's.
	env func() ([]string, error)
	// build compiles every unit (one per family, including from include)
	// for archs into an Image whose files are in dir; it reports archs the
	// compiler rejected in dropped.
	build func(c compiler, archs []arch.CC, units []unit, include, dir string) (im kernels.Image, dropped []string, err error)
}

// compiler is a found compiler: its path, version and environment.
type compiler struct {
	path, version string
	env           []string // nil: gen's own
}

// unit is one family's translation unit written to a file.
type unit struct {
	family string
	path   string // the generated source (kernels.Unit)
}

// toolchains are the vendors gen builds, in order.
var toolchains = []toolchain{nvccToolchain, hipccToolchain, mccToolchain}

func main() {
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "kernels: %v\n", err)
		os.Exit(1)
	}
}

func run() error {
	if _, err := os.Stat("catalog.go"); err != nil {
		return fmt.Errorf("run me from the kernels directory (go generate ./kernels): %w", err)
	}
	want, err := vendorSet(os.LookupEnv)
	if err != nil {
		return err
	}
	include, err := os.Getwd()
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "ternion-gen-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	units, err := writeUnits(tmp)
	if err != nil {
		return err
	}
	var errs []error
	for _, tc := range toolchains {
		if want[tc.vendor] {
			if err := tc.generate(units, include, filepath.Join(tmp, tc.vendor)); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", tc.vendor, err))
			}
		}
	}
	return errors.Join(errs...)
}

// vendorSet reads switches.GenVendors through l; unset means every vendor.
func vendorSet(l switches.Lookup) (map[string]bool, error) {
	vendors, _, err := switches.Get(l, switches.GenVendors)
	if err != nil {
		return nil, err
	}
	set := map[string]bool{}
	for _, v := range vendors {
		set[v] = true
	}
	if len(set) == 0 {
		for _, tc := range toolchains {
			set[tc.vendor] = true
		}
	}
	return set, nil
}

// writeUnits writes the translation unit of every family a vendor's
// compiler prebuilds into dir: all but those of arch-specific code
// (kernels.Family.ArchSpecific), which the run-time compiler builds for
// their one arch.
func writeUnits(dir string) ([]unit, error) {
	var units []unit
	for _, f := range kernels.Families {
		if f.ArchSpecific != "" {
			fmt.Fprintf(os.Stderr, "kernels: family %s is %s code: not prebuilt (the run-time compiler builds it on devices of that arch)\n",
				f.Name, f.ArchSpecific)
			continue
		}
		text, err := kernels.Unit(f.Name)
		if err != nil {
			return nil, err
		}
		u := unit{family: f.Name, path: filepath.Join(dir, kernels.UnitName(f.Name))}
		if err := os.WriteFile(u.path, []byte(text), 0o644); err != nil {
			return nil, err
		}
		units = append(units, u)
	}
	return units, nil
}

// generate builds tc's code objects in tmp and writes them under gen/<vendor>.
func (tc toolchain) generate(units []unit, include, tmp string) error {
	explicit, _, _ := switches.Get(os.LookupEnv, tc.path) // any text is a path
	path, err := findTool(explicit, tc.path.Name, tc.compiler, tc.defPath, exec.LookPath)
	if err != nil {
		if switches.On(os.LookupEnv, tc.require) {
			return err
		}
		fmt.Fprintf(os.Stderr, "kernels: %v; skipping the %s code objects (%s; set $%s, or %s=1 to fail instead)\n",
			err, tc.vendor, tc.fallback, tc.path.Name, tc.require.Name)
		return nil
	}
	var env []string
	if tc.env != nil {
		if env, err = tc.env(); err != nil {
			return err
		}
	}
	version, err := toolVersion(path, env, tc.version)
	if err != nil {
		return err
	}
	want, set, err := switches.Get(os.LookupEnv, tc.archEnv)
	if err != nil {
		return err
	}
	if !set {
		want = slices.Clone(tc.archs)
	}
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return err
	}
	im, dropped, err := tc.build(compiler{path, version, env}, want, units, include, tmp)
	for _, d := range dropped {
		fmt.Fprintf(os.Stderr, "kernels: %s %s: %s; left out\n", tc.compiler, version, d)
	}
	if err != nil {
		return err
	}
	im.Vendor, im.Compiler = tc.vendor, tc.compiler+" "+version
	for i := range im.Families {
		im.Families[i].SourceHash = kernels.FamilyHash(im.Families[i].Name)
	}
	dir := filepath.Join("gen", tc.vendor)
	if err := writeImage(dir, tmp, im); err != nil {
		return err
	}
	written, err := kernels.LoadImage(os.DirFS(dir), ".") // what the build will embed
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "kernels: wrote %s: %d families for %s with %s\n", dir, len(written.Families),
		written.Describe(), written.Compiler)
	return nil
}

// toolVersion runs path --version and finds the version in its standard
// output with parse (standard error is shown only on failure: hipcc may print
// tracebacks of rocm_agent_enumerator there).
func toolVersion(path string, env []string, parse func(string) string) (string, error) {
	cmd := exec.Command(path, "--version")
	cmd.Env = env
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			out = append(out, ee.Stderr...)
		}
		return "", fmt.Errorf("%s --version: %w\n%s", path, err, out)
	}
	v := parse(string(out))
	if v == "" {
		return "", fmt.Errorf("%s --version: no version in %q", path, out)
	}
	return v, nil
}

// findTool returns env when set, else name found by lookPath, else def when
// it exists.
func findTool(env, envName, name, def string, lookPath func(string) (string, error)) (string, error) {
	if env != "" {
		if _, err := os.Stat(env); err != nil {
			return "", fmt.Errorf("$%s=%s: %w", envName, quote.Q(env), err)
		}
		return env, nil
	}
	if p, err := lookPath(name); err == nil {
		return p, nil
	}
	if _, err := os.Stat(def); err == nil {
		return def, nil
	}
	return "", fmt.Errorf("%s not found ($%s unset, not on PATH, not at %s)", name, envName, def)
}

// parallel runs job(i) for i < n on up to GOMAXPROCS goroutines and returns
// the errors of all jobs, joined.
func parallel(n int, job func(i int) error) error {
	errs := make([]error, n)
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			errs[i] = job(i)
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// writeImage copies im's files from tmp into dir, removes code objects of an
// earlier run that im does not list (so that stale archs are not embedded),
// and writes the manifest last.
func writeImage(dir, tmp string, im kernels.Image) error {
	keep := map[string]bool{kernels.ManifestName: true, "README.md": true}
	files := []string{}
	for _, f := range im.Families {
		if f.File != "" {
			files = append(files, f.File)
		}
		for _, o := range f.Objects {
			files = append(files, o.File)
		}
	}
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(tmp, f))
		if err != nil {
			return err
		}
		if err := writeAtomic(filepath.Join(dir, f), data); err != nil {
			return err
		}
		keep[f] = true
	}
	old, _ := os.ReadDir(dir)
	for _, e := range old {
		if !keep[e.Name()] && !e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
				return err
			}
		}
	}
	manifest, err := json.MarshalIndent(im, "", "  ")
	if err != nil {
		return err
	}
	return writeAtomic(filepath.Join(dir, kernels.ManifestName), append(manifest, '\n'))
}

// writeAtomic writes b to path through a temporary file and a rename.
func writeAtomic(path string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp") // hidden: never embedded
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// firstLine is the line of compiler output that says why it failed: the
// first one holding "error", else the first non-empty one.
func firstLine(out []byte) string {
	first := ""
	for l := range strings.SplitSeq(string(out), "\n") {
		l = strings.TrimSpace(l)
		if strings.Contains(l, "error") {
			return l
		}
		if first == "" {
			first = l
		}
	}
	if first == "" {
		return "(no output)"
	}
	return first
}
