package host

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/ternion/ternion/vendorapi"
)

// Environment variables OptionsFromEnv reads.
const (
	// EnvDevices is the number of simulated devices, 1 to MaxDevices (default 1).
	EnvDevices = "TERNION_HOST_DEVICES"
	// EnvMemory is each device's memory limit, e.g. "512MiB", "2GB" or plain bytes.
	EnvMemory = "TERNION_HOST_MEMORY"
)

// OptionsFromEnv reads EnvDevices and EnvMemory through lookup (os.LookupEnv
// in production). Unset or empty variables keep the defaults; bad values are
// errors that name the variable and the value.
func OptionsFromEnv(lookup func(string) (string, bool)) (Options, error) {
	o := Options{Devices: 1}
	if v, ok := lookup(EnvDevices); ok && strings.TrimSpace(v) != "" {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < 1 || n > MaxDevices {
			return Options{}, fmt.Errorf("%s=%q: want a device count from 1 to %d: %w", EnvDevices, v, MaxDevices, vendorapi.ErrInvalidValue)
		}
		o.Devices = n
	}
	if v, ok := lookup(EnvMemory); ok && strings.TrimSpace(v) != "" {
		n, err := parseSize(v)
		if err != nil {
			return Options{}, fmt.Errorf("%s=%q: %v: %w", EnvMemory, v, err, vendorapi.ErrInvalidValue)
		}
		o.MemoryLimit = n
	}
	return o, nil
}

// sizeUnits are the suffixes parseSize accepts, lower-cased. Single letters
// are binary, as in -Xmx512m.
var sizeUnits = map[string]uint64{
	"": 1, "b": 1,
	"k": 1 << 10, "kib": 1 << 10, "kb": 1e3,
	"m": 1 << 20, "mib": 1 << 20, "mb": 1e6,
	"g": 1 << 30, "gib": 1 << 30, "gb": 1e9,
	"t": 1 << 40, "tib": 1 << 40, "tb": 1e12,
}

// parseSize parses a positive byte count such as "1GiB", "1.5 GiB", "64KiB",
// "2GB" or "1048576". Fractions of a byte are dropped.
func parseSize(s string) (uint64, error) {
	s = strings.TrimSpace(s)
	i := strings.IndexFunc(s, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	if i < 0 {
		i = len(s)
	}
	num, unit := s[:i], strings.ToLower(strings.TrimSpace(s[i:]))
	mult, ok := sizeUnits[unit]
	if !ok {
		return 0, fmt.Errorf("unknown unit %q (want B, KiB, MiB, GiB, TiB, KB, MB, GB or TB)", s[i:])
	}
	if num == "" || strings.Count(num, ".") > 1 || num == "." {
		return 0, fmt.Errorf("want a number of bytes with an optional unit")
	}
	r, ok := new(big.Rat).SetString(num)
	if !ok {
		return 0, fmt.Errorf("bad number %q", num)
	}
	r.Mul(r, new(big.Rat).SetInt(new(big.Int).SetUint64(mult)))
	n := new(big.Int).Quo(r.Num(), r.Denom())
	if n.Sign() <= 0 {
		return 0, fmt.Errorf("size must be at least one byte")
	}
	if !n.IsUint64() || n.Uint64() > math.MaxInt64 {
		return 0, fmt.Errorf("size too large")
	}
	return n.Uint64(), nil
}
