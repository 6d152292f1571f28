package arch

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/ternion/ternion/internal/quote"
)

// Gfx is an AMD target id read by [ParseGfx], e.g. "gfx90a:sramecc+:xnack-".
type Gfx struct {
	Input    string   // the text as given
	Name     string   // canonical name without feature flags: "gfx90a"; generic names kept as given, lower-cased ("gfx10-3-generic")
	CC       CC       // ggml encoding, OffsetAMD included
	Generic  bool     // a "-generic" target (a family of processors)
	Features []string // feature flags in the order given, e.g. "sramecc+", "xnack-"
}

// String is the target id: the canonical name followed by the feature flags.
func (g Gfx) String() string {
	if len(g.Features) == 0 {
		return g.Name
	}
	return g.Name + ":" + strings.Join(g.Features, ":")
}

// Feature reports whether the flag name (e.g. "xnack") was given and, if so,
// whether it was on ("xnack+") or off ("xnack-").
func (g Gfx) Feature(name string) (on, present bool) {
	for _, f := range g.Features {
		if len(f) > 0 && f[:len(f)-1] == name {
			return f[len(f)-1] == '+', true
		}
	}
	return false, false
}

const genericSuffix = "-generic"

// ParseGfx reads an AMD gfx target id the way ggml's ggml_cuda_parse_id does,
// but returns an error instead of a zero major part. The "gfx" prefix is
// dropped (in any case) and the text cut at the first ':' (the feature flags,
// each of which must end in '+' or '-'). A name ending in "-generic" is split
// on '-': the first field is the major version in hex, the optional second
// field (one hex digit) the minor (gfx10-3-generic → 0x1030, gfx9-generic →
// 0x900). Otherwise the last two characters are the minor version and the
// stepping, one hex digit each, and the rest is the major version in hex
// (gfx90a → 0x90a, gfx1100 → 0x1100). The major version must be 0x1..0xff.
// As in LLVM's target-id parser, a feature may appear once: a repeated flag
// ("xnack+:xnack+") or one both on and off ("xnack+:xnack-") is an error.
func ParseGfx(name string) (Gfx, error) {
	const what = "gfx name"
	if len(name) < 3 || !strings.EqualFold(name[:3], "gfx") {
		return Gfx{}, parseErr(what, name, `want a "gfx" prefix`)
	}
	id, flags, hasFlags := strings.Cut(name[3:], ":")
	id = strings.ToLower(id)
	g := Gfx{Input: name}
	if hasFlags {
		for f := range strings.SplitSeq(flags, ":") {
			if !validFeature(f) {
				return Gfx{}, parseErr(what, name, "feature flag %s is not a name followed by '+' or '-'", quote.Q(f))
			}
			if reason := repeatedFeature(g.Features, f); reason != "" {
				return Gfx{}, parseErr(what, name, "%s", reason)
			}
			g.Features = append(g.Features, f)
		}
	}

	if body, ok := strings.CutSuffix(id, genericSuffix); ok {
		if body == "" {
			return Gfx{}, parseErr(what, name, "generic name has no version")
		}
		fields := strings.Split(body, "-")
		if len(fields) > 2 {
			return Gfx{}, parseErr(what, name, "generic name %s has more than major and minor", quote.Q(body))
		}
		major, err := gfxMajor(fields[0])
		if err != "" {
			return Gfx{}, parseErr(what, name, "%s", err)
		}
		minor := 0
		if len(fields) == 2 {
			if len(fields[1]) != 1 || !isHex(fields[1][0]) {
				return Gfx{}, parseErr(what, name, "generic minor %s is not one hex digit", quote.Q(fields[1]))
			}
			minor = hexVal(fields[1][0])
		}
		g.Name = "gfx" + id
		g.CC = OffsetAMD + CC(major<<8|minor<<4)
		g.Generic = true
		return g, nil
	}

	if len(id) < 3 {
		return Gfx{}, parseErr(what, name, "want major, minor and stepping (at least three hex digits) after \"gfx\"")
	}
	for i := 0; i < len(id); i++ {
		if !isHex(id[i]) {
			return Gfx{}, parseErr(what, name, "%s is not hexadecimal", quote.Q(id))
		}
	}
	major, err := gfxMajor(id[:len(id)-2])
	if err != "" {
		return Gfx{}, parseErr(what, name, "%s", err)
	}
	minor, stepping := hexVal(id[len(id)-2]), hexVal(id[len(id)-1])
	g.CC = OffsetAMD + CC(major<<8|minor<<4|stepping)
	g.Name = g.CC.Name()
	return g, nil
}

// gfxMajor reads the major part of a gfx id; it returns a reason on failure.
func gfxMajor(s string) (int, string) {
	if s == "" {
		return 0, "no major version"
	}
	v := 0
	for i := 0; i < len(s); i++ {
		if !isHex(s[i]) {
			return 0, fmt.Sprintf("major version %s is not hexadecimal", quote.Q(s))
		}
		v = v<<4 | hexVal(s[i])
		if v > 0xff {
			return 0, fmt.Sprintf("major version %s is above 0xff", quote.Q(s))
		}
	}
	if v == 0 {
		return 0, "no major version (major is 0)"
	}
	return v, ""
}

// repeatedFeature returns why flag f (e.g. "xnack-") may not follow flags,
// or "" when its feature is not among them. Names compare without case.
func repeatedFeature(flags []string, f string) string {
	name := f[:len(f)-1]
	for _, g := range flags {
		if strings.EqualFold(g[:len(g)-1], name) {
			if g[len(g)-1] == f[len(f)-1] {
				return fmt.Sprintf("feature %s is given twice", quote.Q(name))
			}
			return fmt.Sprintf("feature %s is both on and off (%s and %s)", quote.Q(name), quote.Q(g), quote.Q(f))
		}
	}
	return ""
}

// validFeature reports whether f is a feature name followed by '+' or '-'.
func validFeature(f string) bool {
	if len(f) < 2 || (f[len(f)-1] != '+' && f[len(f)-1] != '-') {
		return false
	}
	for i := 0; i < len(f)-1; i++ {
		c := f[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func hexVal(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return 0
}

// ResolveGfx is the seed's device-init rule: the cc of the gfx name, or, when
// the name cannot be read (ggml: the result has no major part) and the runtime
// reported major > 0, AMD(major, minor) with fallback set; the caller should
// warn, as the seed does, because the stepping and often the family are lost:
// gfx90a reports 9.0 (→ Vega), and from gfx10 on major*0x100 is not the hex
// reading of the name (10.3 → 0x1000a30, inside the CDNA range). With neither,
// the parse error is returned.
func ResolveGfx(name string, major, minor int) (cc CC, fallback bool, err error) {
	g, err := ParseGfx(name)
	if err == nil && g.CC&0xff00 != 0 {
		return g.CC, false, nil
	}
	if major > 0 {
		return AMD(major, minor), true, nil
	}
	return 0, false, err
}

// ParseKFDTargetVersion reads the decimal gfx_target_version of an amdkfd
// topology node (/sys/class/kfd/kfd/topology/nodes/*/properties): the last two
// digits are the stepping, the two before the minor, the rest the major; the
// name is printed as gfx%d%x%x (90010 → gfx90a, 90012 → gfx90c, 100300 →
// gfx1030, 110001 → gfx1101). Surrounding space is ignored; 0 (a CPU node) is
// an error.
func ParseKFDTargetVersion(s string) (Gfx, error) {
	const what = "kfd gfx_target_version"
	t := strings.TrimSpace(s)
	if t == "" || len(t) > 9 || strings.TrimLeft(t, "0123456789") != "" {
		return Gfx{}, parseErr(what, s, "want a decimal number")
	}
	v, _ := strconv.Atoi(t) // at most 9 digits: cannot fail
	if v == 0 {
		return Gfx{}, parseErr(what, s, "0 is a node without a GPU")
	}
	g, err := gfxFromDecimal(v/10000, v/100%100, v%100)
	if err != "" {
		return Gfx{}, parseErr(what, s, "%s", err)
	}
	g.Input = s
	return g, nil
}

// ParseHSAOverride reads an HSA_OVERRIDE_GFX_VERSION value,
// "major.minor.stepping" in decimal, printed as gfx%d%x%x: "10.3.0" → gfx1030,
// "9.0.10" → gfx90a. Surrounding space is ignored.
func ParseHSAOverride(s string) (CC, error) {
	const what = "HSA override"
	parts := strings.Split(strings.TrimSpace(s), ".")
	if len(parts) != 3 {
		return 0, parseErr(what, s, "want major.minor.stepping")
	}
	var n [3]int
	for i, p := range parts {
		if p == "" || len(p) > 4 || strings.TrimLeft(p, "0123456789") != "" {
			return 0, parseErr(what, s, "%s is not a decimal number", quote.Q(p))
		}
		n[i], _ = strconv.Atoi(p) // at most 4 digits: cannot fail
	}
	g, err := gfxFromDecimal(n[0], n[1], n[2])
	if err != "" {
		return 0, parseErr(what, s, "%s", err)
	}
	return g.CC, nil
}

// gfxFromDecimal prints gfx%d%x%x and parses the result; it returns a reason on failure.
func gfxFromDecimal(major, minor, stepping int) (Gfx, string) {
	switch {
	case major == 0:
		return Gfx{}, "major version is 0"
	case minor > 0xf:
		return Gfx{}, fmt.Sprintf("minor version %d does not fit one hex digit", minor)
	case stepping > 0xf:
		return Gfx{}, fmt.Sprintf("stepping %d does not fit one hex digit", stepping)
	}
	g, err := ParseGfx(fmt.Sprintf("gfx%d%x%x", major, minor, stepping))
	if err != nil {
		var pe *ParseError
		if errors.As(err, &pe) {
			return Gfx{}, pe.Reason
		}
		return Gfx{}, err.Error()
	}
	return g, ""
}

// HSAOverrideEnv is the ROCm variable that makes every device report another
// gfx version; HSAOverrideEnv + "_<n>" does so for device n only.
const HSAOverrideEnv = "HSA_OVERRIDE_GFX_VERSION"

// Override is an HSA_OVERRIDE_GFX_VERSION setting that applies to a device.
type Override struct {
	Env   string `json:"env"`   // the variable that applied, e.g. HSA_OVERRIDE_GFX_VERSION_1
	Value string `json:"value"` // its value as set, e.g. "10.3.0"
	CC    CC     `json:"cc"`    // the architecture it selects
}

// HSAOverrideFor finds the override ROCm would apply to device: the
// per-device variable HSA_OVERRIDE_GFX_VERSION_<device> beats
// HSA_OVERRIDE_GFX_VERSION; unset or blank variables are skipped. A value
// that does not parse is an error naming the variable and the value (the
// Override still carries both); it does not fall through to the next
// variable. lookup has os.LookupEnv's signature; nil means os.LookupEnv.
func HSAOverrideFor(lookup func(string) (string, bool), device int) (Override, bool, error) {
	if lookup == nil {
		lookup = os.LookupEnv
	}
	names := []string{HSAOverrideEnv}
	if device >= 0 {
		names = []string{HSAOverrideEnv + "_" + strconv.Itoa(device), HSAOverrideEnv}
	}
	for _, env := range names {
		v, ok := lookup(env)
		if !ok || strings.TrimSpace(v) == "" {
			continue
		}
		o := Override{Env: env, Value: v}
		cc, err := ParseHSAOverride(v)
		if err != nil {
			var pe *ParseError
			if errors.As(err, &pe) {
				withEnv := *pe
				withEnv.Env = env
				err = &withEnv
			}
			return o, false, err
		}
		o.CC = cc
		return o, true, nil
	}
	return Override{}, false, nil
}
