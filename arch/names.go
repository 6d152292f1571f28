package arch

import (
	"strconv"
	"strings"
)

// ParseSM reads an NVIDIA architecture name as nvcc spells it: "sm_90",
// "sm_75", "compute_90", and the arch-specific and family variants "sm_90a",
// "sm_120a", "sm_100f" (the suffix does not change the cc). The last digit is
// the minor version, the digits before it the major: sm_120 → 1200,
// sm_86 → 860.
func ParseSM(s string) (CC, error) {
	const what = "sm name"
	lower := strings.ToLower(s)
	var digits string
	switch {
	case strings.HasPrefix(lower, "sm_"):
		digits = lower[len("sm_"):]
	case strings.HasPrefix(lower, "compute_"):
		digits = lower[len("compute_"):]
	default:
		return 0, parseErr(what, s, `want "sm_" or "compute_" followed by the version, e.g. sm_90`)
	}
	if n := len(digits); n > 0 && (digits[n-1] == 'a' || digits[n-1] == 'f') {
		digits = digits[:n-1]
	}
	major, minor, reason := splitVersionDigits(digits)
	if reason != "" {
		return 0, parseErr(what, s, "%s", reason)
	}
	return NVIDIA(major, minor), nil
}

// ParseMP reads a Moore Threads architecture name, "mp_" followed by major
// and one minor digit: "mp_21" (QY1), "mp_22" (QY2), "mp_31" (PH1).
func ParseMP(s string) (CC, error) {
	const what = "mp name"
	lower := strings.ToLower(s)
	if !strings.HasPrefix(lower, "mp_") {
		return 0, parseErr(what, s, `want "mp_" followed by the version, e.g. mp_22`)
	}
	major, minor, reason := splitVersionDigits(lower[len("mp_"):])
	if reason != "" {
		return 0, parseErr(what, s, "%s", reason)
	}
	return MThreads(major, minor), nil
}

// splitVersionDigits reads 2–4 decimal digits: the last is the minor version,
// the rest the (non-zero) major. It returns a reason on failure.
func splitVersionDigits(d string) (major, minor int, reason string) {
	if len(d) < 2 || len(d) > 4 || strings.TrimLeft(d, "0123456789") != "" {
		return 0, 0, "want 2 to 4 decimal digits: major then one minor digit"
	}
	major, _ = strconv.Atoi(d[:len(d)-1]) // digits only: cannot fail
	minor = int(d[len(d)-1] - '0')
	if major == 0 {
		return 0, 0, "major version is 0"
	}
	return major, minor, ""
}

// parseDotted reads "major.minor" in decimal with major in 1..maxMajor and
// minor in 0..maxMinor; it returns a reason on failure.
func parseDotted(s string, maxMajor, maxMinor int) (major, minor int, reason string) {
	a, b, ok := strings.Cut(s, ".")
	if !ok {
		return 0, 0, "want major.minor"
	}
	for _, p := range []string{a, b} {
		if p == "" || len(p) > 4 || strings.TrimLeft(p, "0123456789") != "" {
			return 0, 0, "want major.minor in decimal"
		}
	}
	major, _ = strconv.Atoi(a)
	minor, _ = strconv.Atoi(b)
	switch {
	case major < 1 || major > maxMajor:
		return 0, 0, "major version out of range 1.." + strconv.Itoa(maxMajor)
	case minor > maxMinor:
		return 0, 0, "minor version out of range 0.." + strconv.Itoa(maxMinor)
	}
	return major, minor, ""
}
