package arch

import (
	"strconv"
	"strings"

	"github.com/ternion/ternion/internal/quote"
)

// Decoded is everything this package can say about one architecture, for the
// command line (ternion arch).
type Decoded struct {
	Input    string    `json:"input"`              // the input as given
	Vendor   Vendor    `json:"vendor"`             // nvidia, amd or mthreads
	CC       CC        `json:"cc"`                 // ggml encoding, after any override
	Name     string    `json:"name"`               // canonical arch name: sm_90, gfx90a, mp_22
	Family   string    `json:"family"`             // CC.Family
	Gfx      string    `json:"gfx,omitempty"`      // AMD canonical name (generic names as given; the override's name when one applied), else ""
	WaveSize int       `json:"wave_size"`          // physical wave size
	Override *Override `json:"override,omitempty"` // the HSA override that applied, if any
	Features Features  `json:"features"`           // FeaturesOf(CC, nil): hc = cc
}

// Decode reads an architecture in any of the forms this package knows:
//   - gfx target ids: "gfx90a", "gfx90a:sramecc+:xnack-", "gfx10-3-generic"
//   - NVIDIA names: "sm_90", "sm_120a", "compute_75"
//   - Moore Threads names: "mp_22"
//   - amdkfd gfx_target_version: "kfd:90010"
//   - an HSA override value as the device: "hsa:10.3.0"
//   - major.minor per vendor: "nv:8.6" (also "nvidia:", "cuda:"), "amd:9.0"
//     (also "hip:"; ggml's fallback encoding), "mt:2.2" (also "mthreads:", "musa:")
//   - a raw ggml value as CC.String prints it: "900", "0x100090a"
//
// override, when not "", is an HSA_OVERRIDE_GFX_VERSION value ("10.3.0"); it
// must parse, and it replaces the architecture of AMD inputs only.
func Decode(input, override string) (Decoded, error) {
	in := strings.TrimSpace(input)
	cc, gfx, err := decodeCC(in)
	if err != nil {
		return Decoded{}, err
	}
	d := Decoded{Input: input}
	if override != "" {
		occ, err := ParseHSAOverride(override)
		if err != nil {
			return Decoded{}, err
		}
		if cc.IsAMD() {
			cc, gfx = occ, occ.Name()
			d.Override = &Override{Env: HSAOverrideEnv, Value: override, CC: occ}
		}
	}
	d.Vendor = cc.Vendor()
	d.CC = cc
	d.Name = cc.Name()
	d.Family = cc.Family()
	d.Gfx = gfx
	d.WaveSize = cc.WaveSize()
	d.Features = FeaturesOf(cc, nil)
	return d, nil
}

// decodeCC dispatches on the form of in; gfx is the AMD name, or "".
func decodeCC(in string) (cc CC, gfx string, err error) {
	const what = "architecture"
	lower := strings.ToLower(in)
	switch {
	case in == "":
		return 0, "", parseErr(what, in, "empty")
	case strings.HasPrefix(lower, "gfx"):
		g, err := ParseGfx(in)
		return g.CC, g.Name, err
	case strings.HasPrefix(lower, "sm_"), strings.HasPrefix(lower, "compute_"):
		cc, err := ParseSM(in)
		return cc, "", err
	case strings.HasPrefix(lower, "mp_"):
		cc, err := ParseMP(in)
		return cc, "", err
	}
	if prefix, rest, ok := strings.Cut(in, ":"); ok {
		switch strings.ToLower(prefix) {
		case "kfd":
			g, err := ParseKFDTargetVersion(rest)
			return g.CC, g.Name, err
		case "hsa":
			cc, err := ParseHSAOverride(rest)
			return cc, cc.Name(), err
		case "nv", "nvidia", "cuda":
			major, minor, reason := parseDotted(rest, 999, 9)
			if reason != "" {
				return 0, "", parseErr(what, in, "%s", reason)
			}
			return NVIDIA(major, minor), "", nil
		case "amd", "hip":
			major, minor, reason := parseDotted(rest, 0xff, 0xf)
			if reason != "" {
				return 0, "", parseErr(what, in, "%s", reason)
			}
			cc := AMD(major, minor)
			return cc, cc.Name(), nil
		case "mt", "mthreads", "musa":
			major, minor, reason := parseDotted(rest, 0xff, 0xf)
			if reason != "" {
				return 0, "", parseErr(what, in, "%s", reason)
			}
			return MThreads(major, minor), "", nil
		}
		return 0, "", parseErr(what, in, "unknown prefix %s (want kfd, hsa, nv, amd or mt)", quote.Q(prefix))
	}
	return decodeRaw(in)
}

// decodeRaw reads a ggml value in decimal or 0x-hexadecimal.
func decodeRaw(in string) (CC, string, error) {
	const what = "architecture"
	digits, base := in, 10
	if rest, ok := strings.CutPrefix(strings.ToLower(in), "0x"); ok {
		digits, base = rest, 16
	}
	v, err := strconv.ParseInt(digits, base, 64)
	if err != nil || digits == "" || digits[0] == '+' || digits[0] == '-' {
		return 0, "", parseErr(what, in, "not a gfx, sm_, compute_ or mp_ name, a prefixed version (kfd:, hsa:, nv:, amd:, mt:) or a ggml value")
	}
	cc := CC(v)
	switch {
	case cc <= 0 || cc > OffsetAMD+0xffff:
		return 0, "", parseErr(what, in, "ggml value out of range 1..%#x", int(OffsetAMD+0xffff))
	case cc.IsAMD() && cc&0xff00 == 0:
		return 0, "", parseErr(what, in, "AMD value has no major version")
	case cc.IsAMD():
		return cc, cc.Name(), nil
	}
	return cc, "", nil
}
