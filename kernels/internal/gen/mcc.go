package main

import (
	"strings"

	"github.com/ternion/ternion/arch"
	"github.com/ternion/ternion/kernels"
	"github.com/ternion/ternion/switches"
)

// musaBuild builds one Moore Threads code object per arch with mcc (a clang:
// -x musa compiles the .cu sources as MUSA, --cuda-device-only keeps the
// device code).
var musaBuild = perArch{
	ext: ".mubin",
	args: func(a arch.CC, include, src, out string) []string {
		return []string{"-x", "musa", "--cuda-device-only", "--cuda-gpu-arch=" + a.Name(), "-O3", "-I", include,
			"-o", out, src}
	},
}

// mccToolchain builds the MUSA code objects.
var mccToolchain = toolchain{
	vendor: "musa", compiler: "mcc", path: switches.MCC, defPath: "/usr/local/musa/bin/mcc",
	require: switches.RequireMCC, archEnv: switches.MUSAArchs, archs: kernels.MUSAArchs,
	fallback: "MUSA has no run-time compiler ternion uses: its kernels will be missing",
	version:  parseMCCVersion,
	build:    musaBuild.build,
}

// parseMCCVersion returns the last field of the line naming "mcc version".
func parseMCCVersion(out string) string {
	for line := range strings.SplitSeq(out, "\n") {
		if strings.Contains(line, "mcc version") {
			if f := strings.Fields(line); len(f) > 0 {
				return f[len(f)-1]
			}
		}
	}
	return ""
}
