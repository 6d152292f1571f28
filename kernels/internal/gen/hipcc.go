package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/ternion/ternion/arch"
	"github.com/ternion/ternion/internal/quote"
	"github.com/ternion/ternion/kernels"
	"github.com/ternion/ternion/switches"
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
	vendor: "hip", compiler: "hipcc", path: switches.HIPCC, defPath: "/opt/rocm/bin/hipcc",
	require: switches.RequireHIPCC, archEnv: switches.HIPArchs, archs: kernels.HIPArchs,
	fallback: "kernels will be compiled with hipRTC at run time",
	version:  parseHIPVersion,
	env:      hipEnv,
	build:    hipBuild.build,
}

// hipEnv is hipcc's environment: HIP_PLATFORM=amd, since hipcc picks the
// NVIDIA platform when it finds nvcc, and the code objects are AMD's.
func hipEnv() ([]string, error) {
	name := switches.HIPPlatform.Name
	switch p, _, _ := switches.Get(os.LookupEnv, switches.HIPPlatform); p {
	case "", "amd", "hcc":
		return append(os.Environ(), name+"=amd"), nil
	default:
		return nil, fmt.Errorf("%s=%s: ternion's HIP code objects are for AMD GPUs; unset it or set amd", name, quote.Q(p))
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
