package switches

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"github.com/ternion/ternion/arch"
	"github.com/ternion/ternion/internal/quote"
)

// parseBool reads an on/off switch: on unless "", "0", "false", "no" or "off"
// (any case, surrounding space ignored). It accepts every value.
func parseBool(v string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "", "0", "false", "no", "off":
		return false, nil
	}
	return true, nil
}

// intParser reads a decimal integer from lo to hi.
func intParser(lo, hi int) func(string) (int, error) {
	want := fmt.Sprintf("want an integer from %d to %d", lo, hi)
	if hi == math.MaxInt {
		want = fmt.Sprintf("want an integer of at least %d", lo)
	}
	return func(v string) (int, error) {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < lo || n > hi {
			return 0, errors.New(want)
		}
		return n, nil
	}
}

// parseUint64 reads a decimal unsigned 64-bit integer.
func parseUint64(v string) (uint64, error) {
	n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
	if err != nil {
		return 0, errors.New("want a decimal integer from 0 to 18446744073709551615")
	}
	return n, nil
}

// sizeUnit returns the multiplier of a size suffix, lower-cased. Single
// letters are binary, as in -Xmx512m. (A function, not a map variable: the
// switches' initializers call the parsers, and a package variable they waited
// for would register them out of order.)
func sizeUnit(unit string) (uint64, bool) {
	switch unit {
	case "", "b":
		return 1, true
	case "k", "kib":
		return 1 << 10, true
	case "kb":
		return 1e3, true
	case "m", "mib":
		return 1 << 20, true
	case "mb":
		return 1e6, true
	case "g", "gib":
		return 1 << 30, true
	case "gb":
		return 1e9, true
	case "t", "tib":
		return 1 << 40, true
	case "tb":
		return 1e12, true
	}
	return 0, false
}

// parseSizeOrZero is parseSize that also takes "0" (a size switch whose 0
// turns a limit off).
func parseSizeOrZero(v string) (uint64, error) {
	if strings.TrimSpace(v) == "0" {
		return 0, nil
	}
	return parseSize(v)
}

// parseSize reads a positive byte count such as "1GiB", "1.5 GiB", "64KiB",
// "2GB" or "1048576", at most math.MaxInt64. Fractions of a byte are dropped.
func parseSize(v string) (uint64, error) {
	s := strings.TrimSpace(v)
	if strings.HasPrefix(s, "-") {
		return 0, errors.New("the size is negative; want a number of bytes with an optional unit (512MiB, 2GB)")
	}
	i := strings.IndexFunc(s, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	if i < 0 {
		i = len(s)
	}
	num, unit := s[:i], strings.ToLower(strings.TrimSpace(s[i:]))
	mult, ok := sizeUnit(unit)
	if !ok {
		return 0, fmt.Errorf("unknown unit %s (want B, KiB, MiB, GiB, TiB, KB, MB, GB or TB)", quote.Q(s[i:]))
	}
	if num == "" || num == "." || strings.Count(num, ".") > 1 {
		return 0, errors.New("want a number of bytes with an optional unit (512MiB, 2GB)")
	}
	r, ok := new(big.Rat).SetString(num)
	if !ok {
		return 0, fmt.Errorf("bad number %s", quote.Q(num))
	}
	r.Mul(r, new(big.Rat).SetInt(new(big.Int).SetUint64(mult)))
	n := new(big.Int).Quo(r.Num(), r.Denom())
	if n.Sign() <= 0 {
		return 0, errors.New("the size must be at least one byte")
	}
	if !n.IsUint64() || n.Uint64() > math.MaxInt64 {
		return 0, errors.New("the size is too large")
	}
	return n.Uint64(), nil
}

// splitList splits v at any of seps (and spaces), dropping empty fields.
func splitList(v, seps string) []string {
	return strings.FieldsFunc(v, func(r rune) bool { return r == ' ' || r == '\t' || strings.ContainsRune(seps, r) })
}

// listParser reads words separated by commas or spaces, each one of values,
// in order without repeats.
func listParser(values []string) func(string) ([]string, error) {
	return func(v string) ([]string, error) {
		var out []string
		for _, f := range splitList(v, ",") {
			if !slices.Contains(values, f) {
				return nil, fmt.Errorf("unknown value %s (want %s)", quote.Q(f), strings.Join(values, ", "))
			}
			if !slices.Contains(out, f) {
				out = append(out, f)
			}
		}
		return out, nil
	}
}

// parseProportions reads ggml's --tensor-split syntax: non-negative numbers
// separated by commas or slashes, e.g. "0.7,0.3" or "3/1"; each device's
// share is its number over the sum. core/split refuses a sum that is not
// positive and more numbers than devices.
func parseProportions(v string) ([]float64, error) {
	parts := strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == '/' })
	if len(parts) == 0 {
		return nil, errors.New("want numbers separated by commas, e.g. 0.7,0.3")
	}
	out := make([]float64, len(parts))
	for i, p := range parts {
		f, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < 0 {
			return nil, fmt.Errorf("proportion %d, %s, is not a finite number of at least 0", i, quote.Q(p))
		}
		out[i] = f
	}
	return out, nil
}

// archParser reads an arch list for one vendor's compiler (separated by
// commas, spaces or semicolons), each arch with or without its prefix
// ("sm_", "gfx", "mp_"), sorted and without repeats.
func archParser(prefix string, parse func(string) (arch.CC, error)) func(string) ([]arch.CC, error) {
	return func(v string) ([]arch.CC, error) {
		var out []arch.CC
		for _, f := range splitList(v, ",;") {
			if !strings.HasPrefix(strings.ToLower(f), prefix) {
				f = prefix + f
			}
			cc, err := parse(f)
			if err != nil {
				return nil, reason(err)
			}
			out = append(out, cc)
		}
		if len(out) == 0 {
			return nil, errors.New("want at least one arch")
		}
		slices.Sort(out)
		return slices.Compact(out), nil
	}
}

// parseGfxCC reads one gfx target id ("gfx90a", "gfx90a:xnack-").
func parseGfxCC(s string) (arch.CC, error) {
	g, err := arch.ParseGfx(s)
	return g.CC, err
}

// parseGfxVersion reads an HSA override version ("10.3.0").
func parseGfxVersion(v string) (arch.CC, error) {
	cc, err := arch.ParseHSAOverride(v)
	if pe := (*arch.ParseError)(nil); errors.As(err, &pe) {
		return 0, errors.New(pe.Reason) // the value is the whole input: the Error quotes it
	}
	return cc, err
}

// parseText accepts any value.
func parseText(v string) (string, error) { return v, nil }

// reason turns an arch.ParseError into its input and reason alone, without
// the "arch:" prefix, as an Error's reason; other errors pass unchanged.
func reason(err error) error {
	var pe *arch.ParseError
	if errors.As(err, &pe) {
		return fmt.Errorf("invalid %s %s: %s", pe.What, quote.Q(pe.Input), pe.Reason)
	}
	return err
}
