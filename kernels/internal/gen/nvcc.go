package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ternion/ternion/arch"
	"github.com/ternion/ternion/kernels"
	"github.com/ternion/ternion/switches"
)

// nvccToolchain builds the CUDA fatbin.
var nvccToolchain = toolchain{
	vendor: "cuda", compiler: "nvcc", path: switches.NVCC, defPath: "/usr/local/cuda/bin/nvcc",
	require: switches.RequireNVCC, archEnv: switches.CUDAArchs, archs: kernels.CUDAArchs,
	fallback: "kernels will be compiled with NVRTC at run time",
	version:  parseVersion,
	build:    buildFatbin,
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

// buildFatbin runs nvcc once per family for every arch it accepts: machine
// code for each, PTX for the newest, into <family>.fatbin.
func buildFatbin(c compiler, want []arch.CC, units []unit, include, dir string) (kernels.Image, []string, error) {
	archs, rejected := supportedArchs(c.path, want)
	dropped := make([]string, len(rejected))
	for i, a := range rejected {
		dropped[i] = "cannot target " + a.Name()
	}
	if len(archs) == 0 {
		return kernels.Image{}, dropped, fmt.Errorf("nvcc %s accepts none of %v", c.version, names(want))
	}
	im := kernels.Image{Archs: archs, PTX: slices.Max(archs), Families: make([]kernels.FamilyImage, len(units))}
	err := parallel(len(units), func(i int) error {
		u := units[i]
		file := u.family + ".fatbin"
		cmd := exec.Command(c.path, nvccArgs(archs, include, u.path, filepath.Join(dir, file))...)
		fmt.Fprintf(os.Stderr, "kernels: %s\n", strings.Join(cmd.Args, " "))
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("nvcc failed on family %s: %w\n%s", u.family, err, out)
		} else if len(out) > 0 {
			os.Stderr.Write(out)
		}
		im.Families[i] = kernels.FamilyImage{Name: u.family, File: file}
		return nil
	})
	if err != nil {
		return kernels.Image{}, dropped, err
	}
	return im, dropped, nil
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

func names(archs []arch.CC) []string {
	out := make([]string, len(archs))
	for i, a := range archs {
		out[i] = a.Name()
	}
	return out
}
