package conformance

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/ternion/ternion/internal/le"

	"github.com/ternion/ternion/internal/half"
	"github.com/ternion/ternion/switches"
	"github.com/ternion/ternion/vendorapi"
)

// newRand returns a generator with a fresh seed for t (or the one
// switches.ConformanceSeed fixes, to replay a failure) and prints the seed
// when t fails.
func newRand(t *testing.T) *rand.Rand {
	t.Helper()
	seed, set, err := switches.Get(os.LookupEnv, switches.ConformanceSeed)
	if err != nil {
		t.Fatal(err)
	}
	if !set {
		seed = rand.Uint64()
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("random seed %d (replay with %s=%d)", seed, switches.ConformanceSeed.Name, seed)
		}
	})
	return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
}

// randBytes returns n random bytes, none of them zero.
func randBytes(r *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(1 + r.IntN(255))
	}
	return b
}

// randByte returns one random non-zero byte.
func randByte(r *rand.Rand) byte { return byte(1 + r.IntN(255)) }

// randF32 returns n random floats with 1/16 <= |x| <= 1 and random sign:
// never zero, never denormal, well inside every format's range.
func randF32(r *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = randValue(r)
	}
	return v
}

// randValue returns one value as randF32 does.
func randValue(r *rand.Rand) float32 {
	x := 0.0625 + 0.9375*r.Float32()
	if r.IntN(2) == 0 {
		x = -x
	}
	return x
}

// encode stores v as elements of type dt, rounding to nearest even.
func encode(dt vendorapi.DataType, v []float32) []byte {
	switch dt {
	case vendorapi.F16, vendorapi.BF16:
		b := make([]byte, 2*len(v))
		for i, x := range v {
			h := half.F16FromF32(x)
			if dt == vendorapi.BF16 {
				h = half.BF16FromF32(x)
			}
			binary.LittleEndian.PutUint16(b[2*i:], h)
		}
		return b
	}
	return le.FromF32(v)
}

// decode reads elements of type dt as float64.
func decode(dt vendorapi.DataType, b []byte) []float64 {
	n := len(b) / dt.Size()
	v := make([]float64, n)
	for i := range v {
		switch dt {
		case vendorapi.F16:
			v[i] = float64(half.F16ToF32(binary.LittleEndian.Uint16(b[2*i:])))
		case vendorapi.BF16:
			v[i] = float64(half.BF16ToF32(binary.LittleEndian.Uint16(b[2*i:])))
		default:
			v[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:])))
		}
	}
	return v
}

// NMSE returns the normalized mean squared error Σ(got−want)²/Σwant² of got
// against the reference want, as ggml's test-backend-ops measures it. A NaN
// or infinity in got, a length mismatch or an all-zero reference give +Inf.
func NMSE(got, want []float64) float64 {
	if len(got) != len(want) {
		return math.Inf(1)
	}
	var num, den float64
	for i := range got {
		if math.IsNaN(got[i]) || math.IsInf(got[i], 0) {
			return math.Inf(1)
		}
		d := got[i] - want[i]
		num += d * d
		den += want[i] * want[i]
	}
	if den == 0 {
		return math.Inf(1)
	}
	return num / den
}

// firstDiff returns the index of the first byte where got and want differ
// and how many bytes differ in all; -1 and 0 when they are equal. Lengths
// that differ count as a difference at the shorter length.
func firstDiff(got, want []byte) (first, count int) {
	first = -1
	n := min(len(got), len(want))
	for i := range n {
		if got[i] != want[i] {
			if first < 0 {
				first = i
			}
			count++
		}
	}
	if len(got) != len(want) {
		if first < 0 {
			first = n
		}
		count += max(len(got), len(want)) - n
	}
	return first, count
}

// checkBytes reports the first byte where got differs from want, naming the
// region as what; it returns false on a mismatch. It never prints whole buffers.
func checkBytes(t *testing.T, what string, got, want []byte) bool {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: got %d bytes, want %d", what, len(got), len(want))
		return false
	}
	i, n := firstDiff(got, want)
	if i < 0 {
		return true
	}
	t.Errorf("%s: byte %d is %#02x, want %#02x (%d of %d bytes differ)", what, i, got[i], want[i], n, len(got))
	return false
}

// checkRegion checks a destination buffer after a write of want at byte
// offset off: got[off:off+len(want)] must equal want and every other byte
// must still equal before (the sentinel bytes around the destination).
func checkRegion(t *testing.T, what string, got, before []byte, off int, want []byte) bool {
	t.Helper()
	if len(got) != len(before) || off < 0 || off+len(want) > len(got) {
		t.Errorf("%s: bad check: buffer %d bytes, before %d, region [%d, %d)", what, len(got), len(before), off, off+len(want))
		return false
	}
	ok := checkBytes(t, what+": sentinel bytes before the destination", got[:off], before[:off])
	ok = checkBytes(t, what+": destination", got[off:off+len(want)], want) && ok
	end := off + len(want)
	return checkBytes(t, what+": sentinel bytes after the destination", got[end:], before[end:]) && ok
}

// expectWrite returns before with want written at off.
func expectWrite(before []byte, off int, want []byte) []byte {
	out := append([]byte(nil), before...)
	copy(out[off:], want)
	return out
}

// fill32 returns n copies of v.
func fill32(v float32, n int) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = v
	}
	return out
}

// repeat returns n copies of v.
func repeat(v byte, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = v
	}
	return b
}
