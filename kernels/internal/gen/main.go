// Command gen builds ternion's CUDA kernels: nvcc compiles every .cu file of
// the kernels package into one fatbin for the arch list in kernels.CUDAArchs
// (machine code for each arch the local nvcc accepts, plus PTX of the newest)
// and writes it with a manifest under gen/cuda, where kernels/image_cuda.go
// embeds it. `go generate ./kernels` runs it from the kernels directory.
//
// nvcc is $NVCC, else nvcc on PATH, else /usr/local/cuda/bin/nvcc. Without
// nvcc it says so and exits 0 (the CUDA driver then compiles the kernels with
// NVRTC at run time), unless TERNION_REQUIRE_NVCC=1. TERNION_CUDA_ARCHS
// ("75,80,90" or "sm_75 sm_90") replaces the arch list.
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ternion/ternion/arch"
	"github.com/ternion/ternion/kernels"
)

const (
	outDir  = "gen/cuda"
	outFile = "kernels.fatbin"
)

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
	nvcc, err := findNVCC(os.Getenv("NVCC"), exec.LookPath)
	if err != nil {
		if os.Getenv("TERNION_REQUIRE_NVCC") == "1" {
			return err
		}
		fmt.Fprintf(os.Stderr, "kernels: %v; skipping the CUDA fatbin (kernels will be compiled with NVRTC at run time; set $NVCC or TERNION_REQUIRE_NVCC=1)\n", err)
		return nil
	}
	version, err := nvccVersion(nvcc)
	if err != nil {
		return err
	}
	want, err := archList(os.Getenv("TERNION_CUDA_ARCHS"), kernels.CUDAArchs)
	if err != nil {
		return err
	}
	archs, dropped := supportedArchs(nvcc, want)
	for _, a := range dropped {
		fmt.Fprintf(os.Stderr, "kernels: nvcc %s cannot target %s; left out\n", version, a.Name())
	}
	if len(archs) == 0 {
		return fmt.Errorf("nvcc %s accepts none of %v", version, names(want))
	}
	return build(nvcc, version, archs)
}

// findNVCC returns env when set, else nvcc found by lookPath, else the
// toolkit's default location.
func findNVCC(env string, lookPath func(string) (string, error)) (string, error) {
	if env != "" {
		if _, err := os.Stat(env); err != nil {
			return "", fmt.Errorf("$NVCC=%s: %w", env, err)
		}
		return env, nil
	}
	if p, err := lookPath("nvcc"); err == nil {
		return p, nil
	}
	const def = "/usr/local/cuda/bin/nvcc"
	if _, err := os.Stat(def); err == nil {
		return def, nil
	}
	return "", errors.New("nvcc not found ($NVCC unset, not on PATH, not in /usr/local/cuda/bin)")
}

// nvccVersion returns nvcc's version, e.g. "11.8.89".
func nvccVersion(nvcc string) (string, error) {
	out, err := exec.Command(nvcc, "--version").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("%s --version: %w\n%s", nvcc, err, out)
	}
	v := parseVersion(string(out))
	if v == "" {
		return "", fmt.Errorf("%s --version: no version in %q", nvcc, out)
	}
	return v, nil
}

// parseVersion finds "V11.8.89" (or else "release 11.8") in nvcc --version output.
func parseVersion(out string) string {
	for _, f := range strings.FieldsFunc(out, func(r rune) bool { return r == ' ' || r == ',' || r == '\n' }) {
		if len(f) > 1 && f[0] == 'V' && f[1] >= '0' && f[1] <= '9' {
			return f[1:]
		}
	}
	if i := strings.Index(out, "release "); i >= 0 {
		if f := strings.FieldsFunc(out[i+len("release "):], func(r rune) bool { return r == ',' || r == ' ' || r == '\n' }); len(f) > 0 {
			return f[0]
		}
	}
	return ""
}

// archList parses TERNION_CUDA_ARCHS ("75,80" or "sm_75 sm_80"), or returns def.
func archList(env string, def []arch.CC) ([]arch.CC, error) {
	if strings.TrimSpace(env) == "" {
		return slices.Clone(def), nil
	}
	var out []arch.CC
	for _, f := range strings.FieldsFunc(env, func(r rune) bool { return r == ',' || r == ' ' || r == ';' }) {
		if !strings.HasPrefix(f, "sm_") {
			f = "sm_" + f
		}
		cc, err := arch.ParseSM(f)
		if err != nil {
			return nil, fmt.Errorf("TERNION_CUDA_ARCHS: %w", err)
		}
		out = append(out, cc)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// supportedArchs splits want into the archs nvcc accepts and those it does
// not, asking nvcc --list-gpu-code, or trying each arch when it cannot answer.
func supportedArchs(nvcc string, want []arch.CC) (ok, dropped []arch.CC) {
	out, err := exec.Command(nvcc, "--list-gpu-code").Output()
	codes := parseGPUCodes(string(out))
	for _, a := range want {
		var accepted bool
		if err == nil && len(codes) > 0 {
			accepted = codes[a.Name()]
		} else {
			accepted = tryArch(nvcc, a)
		}
		if accepted {
			ok = append(ok, a)
		} else {
			dropped = append(dropped, a)
		}
	}
	return ok, dropped
}

// parseGPUCodes reads nvcc --list-gpu-code output: one sm_XY per line.
func parseGPUCodes(out string) map[string]bool {
	codes := map[string]bool{}
	for _, f := range strings.Fields(out) {
		if strings.HasPrefix(f, "sm_") {
			codes[f] = true
		}
	}
	return codes
}

// tryArch compiles an empty kernel for a (slow; for nvcc without --list-gpu-code).
func tryArch(nvcc string, a arch.CC) bool {
	dir, err := os.MkdirTemp("", "ternion-arch-")
	if err != nil {
		return false
	}
	defer os.RemoveAll(dir)
	src := filepath.Join(dir, "probe.cu")
	if os.WriteFile(src, []byte("extern \"C\" __global__ void probe() {}\n"), 0o644) != nil {
		return false
	}
	cmd := exec.Command(nvcc, "-cubin", "-arch="+a.Name(), "-o", filepath.Join(dir, "probe.cubin"), src)
	return cmd.Run() == nil
}

// nvccArgs is the command line building out from src: machine code for
// every arch, PTX for the newest.
func nvccArgs(archs []arch.CC, include, src, out string) []string {
	args := []string{"-fatbin", "-O3", "-I", include, "-o", out}
	for _, a := range archs {
		v := strings.TrimPrefix(a.Name(), "sm_")
		args = append(args, "--generate-code", "arch=compute_"+v+",code=sm_"+v)
	}
	v := strings.TrimPrefix(slices.Max(archs).Name(), "sm_")
	return append(args, "--generate-code", "arch=compute_"+v+",code=compute_"+v, src)
}

// unitySource includes every .cu file, so one nvcc run makes one fatbin.
func unitySource(files []string) string {
	var b strings.Builder
	b.WriteString("// generated by kernels/internal/gen: every kernel source in one translation unit\n")
	for _, f := range files {
		fmt.Fprintf(&b, "#include \"%s\"\n", f)
	}
	return b.String()
}

// build runs nvcc and writes the fatbin and its manifest into outDir.
func build(nvcc, version string, archs []arch.CC) error {
	files, err := fs.Glob(kernels.Sources, "*.cu")
	if err != nil || len(files) == 0 {
		return fmt.Errorf("no .cu sources (%v)", err)
	}
	slices.Sort(files)
	here, err := os.Getwd()
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "ternion-gen-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	src := filepath.Join(tmp, "ternion_kernels.cu")
	if err := os.WriteFile(src, []byte(unitySource(files)), 0o644); err != nil {
		return err
	}
	fatbin := filepath.Join(tmp, outFile)
	cmd := exec.Command(nvcc, nvccArgs(archs, here, src, fatbin)...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	fmt.Fprintf(os.Stderr, "kernels: %s\n", strings.Join(cmd.Args, " "))
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("nvcc failed: %w", err)
	}
	data, err := os.ReadFile(fatbin)
	if err != nil {
		return err
	}
	im := kernels.Image{Vendor: "cuda", File: outFile, Archs: archs, PTX: slices.Max(archs),
		Compiler: "nvcc " + version, SourceHash: kernels.SourceHash()}
	manifest, err := json.MarshalIndent(im, "", "  ")
	if err != nil {
		return err
	}
	if err := writeAtomic(filepath.Join(outDir, outFile), data); err != nil {
		return err
	}
	if err := writeAtomic(filepath.Join(outDir, kernels.ManifestName), append(manifest, '\n')); err != nil {
		return err
	}
	im.Data = data
	fmt.Fprintf(os.Stderr, "kernels: wrote %s/%s (%d bytes) for %s with nvcc %s\n", outDir, outFile, len(data),
		im.Describe(), version)
	return nil
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

func names(archs []arch.CC) []string {
	out := make([]string, len(archs))
	for i, a := range archs {
		out[i] = a.Name()
	}
	return out
}
