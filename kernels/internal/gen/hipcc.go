package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/ternion/ternion/arch"
	"github.com/ternion/ternion/kernels"
)

// hipBuild builds one AMD code object per gfx with hipcc --genco.
var hipBuild = perArch{
	ext: ".hsaco",
	args: func(a arch.CC, include, src, out string) []string {
		return []string{"--genco", "--offload-arch=" + a.Name(), "-O3", "-I", include, "-o", out, src}
	},
}

// hipccToolchain builds the AMD code objects.
var hipccToolchain = toolchain{
	vendor: "hip", compiler: "hipcc", pathEnv: "HIPCC", defPath: "/opt/rocm/bin/hipcc",
	require: "TERNION_REQUIRE_HIPCC", archEnv: "TERNION_HIP_ARCHS", archs: kernels.HIPArchs,
	parse: func(s string) (arch.CC, error) {
		if !strings.HasPrefix(strings.ToLower(s), "gfx") {
			s = "gfx" + s
		}
		g, err := arch.ParseGfx(s)
		return g.CC, err
	},
	fallback: "kernels will be compiled with hipRTC at run time",
	version:  parseHIPVersion,
	env:      hipEnv,
	build:    hipBuild.build,
}

// hipEnv is hipcc's environment: HIP_PLATFORM=amd, since hipcc picks the
// NVIDIA platform when it finds nvcc, and the code objects are AMD's.
func hipEnv() ([]string, error) {
	switch p := os.Getenv("HIP_PLATFORM"); p {
	case "", "amd", "hcc":
		return append(os.Environ(), "HIP_PLATFORM=amd"), nil
	default:
		return nil, fmt.Errorf("HIP_PLATFORM=%s: ternion's HIP code objects are for AMD GPUs; unset it or set amd", p)
	}
}

// parseHIPVersion finds "HIP version: 5.2.21153-0" in hipcc --version output
// and returns "5.2.21153".
func parseHIPVersion(out string) string {
	for line := range strings.SplitSeq(out, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "HIP version:"); ok {
			v = strings.TrimSpace(v)
			if i := strings.IndexByte(v, '-'); i > 0 {
				v = v[:i]
			}
			return v
		}
	}
	return ""
}
