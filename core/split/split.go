// Package split is ggml's row split of a tensor over several devices (the
// seed's tensor_split, get_row_rounding and get_row_split): where each
// device's share of a split tensor's rows starts, how the shares are rounded
// to the mmq tile height, and how many bytes each device holds. The default
// follows each device's total memory, as ggml_backend_cuda_get_device_memory
// does for its default tensor_split; the user may give proportions instead
// (switches.TensorSplit, ggml's --tensor-split, or core/backend's
// Options.TensorSplit). It is policy, not driver contract: it imports
// vendorapi, never a vendor shim; core/backend's split buffer type and its
// row-split MUL_MAT are built on it.
package split

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/ternion/ternion/arch"
	"github.com/ternion/ternion/core/tensor"
	"github.com/ternion/ternion/vendorapi"
)

// MaxDevices is the most devices a split spans (the seed's
// GGML_CUDA_MAX_DEVICES).
const MaxDevices = 16

// MatrixRowPadding is the seed's MATRIX_ROW_PADDING: each device's slice of
// a split tensor extends to where a last row padded to a multiple of 512
// elements would end (the padding zeroed), so kernels may read whole blocks
// past a row's end.
const MatrixRowPadding = 512

// ErrBadSplit is matched (errors.Is) by the error of proportions that cannot
// make a split: negative or non-finite, not summing to a positive value, or
// naming more devices than exist.
var ErrBadSplit = errors.New("bad tensor split")

// FromMemory is ggml's default row split over devices: device i's share of a
// split tensor's rows starts at split[i] (a fraction of all rows) and ends
// where device i+1's starts (1 for the last), in proportion to each device's
// total memory. All zero totals give an even split.
func FromMemory(totals []uint64) []float64 {
	split := make([]float64, len(totals))
	var sum float64
	for _, t := range totals {
		sum += float64(t)
	}
	var start float64
	for i, t := range totals {
		if sum == 0 {
			split[i] = float64(i) / float64(len(totals))
			continue
		}
		split[i] = start / sum
		start += float64(t)
	}
	return split
}

// Default returns FromMemory over the total memory of every device of d.
func Default(d vendorapi.Driver) ([]float64, error) {
	n, err := d.DeviceCount()
	if err != nil {
		return nil, err
	}
	totals := make([]uint64, n)
	for i := range totals {
		p, err := d.Props(i)
		if err != nil {
			return nil, err
		}
		totals[i] = p.TotalMemory
	}
	return FromMemory(totals), nil
}

// Starts turns user proportions (ggml's --tensor-split: "0.7,0.3", "3,1")
// into where each of devices devices' share starts, as the seed's
// ggml_backend_cuda_split_buffer_type does: device i starts at the sum of
// the proportions before it over the sum of all. Fewer proportions than
// devices give the devices after them no rows. An error matching
// ErrBadSplit names the problem: a negative, NaN or infinite proportion,
// more proportions than devices, or a sum that is not positive (all zero:
// leave the split unset for the default by memory).
func Starts(proportions []float64, devices int) ([]float64, error) {
	switch {
	case devices < 1 || devices > MaxDevices:
		return nil, fmt.Errorf("%w: %d devices (want 1 to %d)", ErrBadSplit, devices, MaxDevices)
	case len(proportions) > devices:
		return nil, fmt.Errorf("%w: %s names %d devices, only %d exist", ErrBadSplit, format(proportions), len(proportions), devices)
	}
	var sum float64
	for i, p := range proportions {
		if math.IsNaN(p) || math.IsInf(p, 0) || p < 0 {
			return nil, fmt.Errorf("%w: proportion %d of %s is %v (want a finite number ≥ 0)", ErrBadSplit, i, format(proportions), p)
		}
		sum += p
	}
	if !(sum > 0) || math.IsInf(sum, 0) {
		return nil, fmt.Errorf("%w: %s does not sum to a positive finite value", ErrBadSplit, format(proportions))
	}
	starts := make([]float64, devices)
	var acc float64
	for i := range starts {
		starts[i] = acc / sum
		if i < len(proportions) {
			acc += proportions[i]
		}
	}
	return starts, nil
}

// format prints proportions as ggml's --tensor-split takes them: "0.7,0.3".
func format(v []float64) string {
	parts := make([]string, len(v))
	for i, f := range v {
		parts[i] = fmt.Sprint(f)
	}
	return strings.Join(parts, ",")
}

// MMQY is the mmq tile height on a device of compute capability cc (the
// seed's get_mmq_y_host): 128 on AMD except RDNA1 (64); elsewhere 128 from
// Volta on, else 64. The host device (cc 0) counts as below Volta. ggml takes
// an NVIDIA device's highest compiled arch here; ternion takes the device's
// cc, which is the same whenever the kernels were built for the device.
func MMQY(cc arch.CC) int64 {
	if cc.IsAMD() {
		if cc.IsRDNA1() {
			return 64
		}
		return 128
	}
	if cc >= arch.Volta {
		return 128
	}
	return 64
}

// RowRounding is the multiple a device of compute capability cc rounds a
// split boundary of a t tensor to. The seed rounds every type, float ones
// included, to the mmq tile height (get_row_rounding does not look at the
// type), so that a quantized tensor's slices start on whole mmq tiles; the
// type is a parameter so that a rule per type has one place to go.
func RowRounding(t tensor.Type, cc arch.CC) int64 {
	_ = t
	return MMQY(cc)
}

// Range is the rows [Lo, Hi) of a split tensor one device holds.
type Range struct{ Lo, Hi int64 }

// Rows is the number of rows in r.
func (r Range) Rows() int64 { return r.Hi - r.Lo }

// Source says where a split's proportions came from (core/backend also
// names the switch, switches.TensorSplit).
type Source string

// The sources of a split.
const (
	ByMemory Source = "by total memory"
	ByOption Source = "given proportions"
)

// Split is a row split over a driver's devices, resolved: where each
// device's share starts and each device's compute capability (the
// rounding). It is immutable.
type Split struct {
	starts []float64
	ccs    []arch.CC
	source Source
}

// New returns the split of proportions over devices of compute capabilities
// ccs (one per device of the driver); nil proportions mean the default
// split, by totals (each device's total memory, one per device). Bad
// proportions are an error matching ErrBadSplit.
func New(proportions []float64, ccs []arch.CC, totals []uint64) (*Split, error) {
	if len(ccs) != len(totals) {
		return nil, fmt.Errorf("%w: %d compute capabilities for %d memory sizes", ErrBadSplit, len(ccs), len(totals))
	}
	if proportions == nil {
		if len(ccs) < 1 || len(ccs) > MaxDevices {
			return nil, fmt.Errorf("%w: %d devices (want 1 to %d)", ErrBadSplit, len(ccs), MaxDevices)
		}
		return &Split{starts: FromMemory(totals), ccs: append([]arch.CC(nil), ccs...), source: ByMemory}, nil
	}
	starts, err := Starts(proportions, len(ccs))
	if err != nil {
		return nil, err
	}
	return &Split{starts: starts, ccs: append([]arch.CC(nil), ccs...), source: ByOption}, nil
}

// ForDriver returns the split of proportions (nil: by memory) over every
// device of d.
func ForDriver(d vendorapi.Driver, proportions []float64) (*Split, error) {
	n, err := d.DeviceCount()
	if err != nil {
		return nil, err
	}
	ccs, totals := make([]arch.CC, n), make([]uint64, n)
	for i := range n {
		p, err := d.Props(i)
		if err != nil {
			return nil, err
		}
		ccs[i], totals[i] = p.CC, p.TotalMemory
	}
	return New(proportions, ccs, totals)
}

// WithSource returns s marked as coming from src (for display).
func (s *Split) WithSource(src Source) *Split {
	c := *s
	c.source = src
	return &c
}

// Source says where the proportions came from.
func (s *Split) Source() Source { return s.source }

// Devices is the number of devices the split spans.
func (s *Split) Devices() int { return len(s.starts) }

// Starts returns where each device's share starts (a fraction of the rows).
func (s *Split) Starts() []float64 { return append([]float64(nil), s.starts...) }

// end is where device i's share ends.
func (s *Split) end(i int) float64 {
	if i+1 < len(s.starts) {
		return s.starts[i+1]
	}
	return 1
}

// Rounding is the multiple every split boundary of a t tensor is rounded
// down to (the seed's get_row_rounding): the largest RowRounding of the
// devices with a share.
func (s *Split) Rounding(t tensor.Type) int64 {
	r := int64(1)
	for i, cc := range s.ccs {
		if s.starts[i] >= s.end(i) {
			continue
		}
		r = max(r, RowRounding(t, cc))
	}
	return r
}

// Rows returns each device's rows of a t tensor of nrows rows, as the
// seed's ggml_cuda_op_mul_mat computes them: device i from nrows·start[i],
// to nrows·start[i+1] (nrows for the last), each boundary below nrows
// rounded down to Rounding(t). The ranges cover [0, nrows) in device order;
// a device may get none. (The seed's split buffer rounds a boundary at
// nrows too, which can give rows to a device with no share and disagree
// with its mul_mat; ternion uses this one rule for both.)
func (s *Split) Rows(t tensor.Type, nrows int64) []Range {
	r := s.Rounding(t)
	bound := func(f float64) int64 {
		b := min(int64(float64(nrows)*f), nrows)
		if b < nrows {
			b -= b % r
		}
		return b
	}
	out := make([]Range, len(s.starts))
	for i := range out {
		lo, hi := int64(0), nrows
		if i > 0 {
			lo = bound(s.starts[i])
		}
		if i+1 < len(s.starts) {
			hi = bound(s.starts[i+1])
		}
		out[i] = Range{Lo: lo, Hi: max(lo, hi)}
	}
	return out
}

// DeviceBytes is the memory a device holding rows rows of a t tensor with
// rows of ne0 elements needs: the rows, plus the padding of the last row to
// a multiple of MatrixRowPadding elements when ne0 is not one (the seed's
// split buffer pads every type); nothing for no rows.
func DeviceBytes(t tensor.Type, ne0, rows int64) uint64 {
	if rows <= 0 {
		return 0
	}
	n := uint64(rows * t.RowSize(ne0))
	if ne0%MatrixRowPadding != 0 {
		n += uint64(t.RowSize(MatrixRowPadding - ne0%MatrixRowPadding))
	}
	return n
}

// String prints each device's share as "0:0.700 1:0.300" (fractions of the rows).
func (s *Split) String() string {
	parts := make([]string, len(s.starts))
	for i := range s.starts {
		parts[i] = fmt.Sprintf("%d:%.3f", i, s.end(i)-s.starts[i])
	}
	return strings.Join(parts, " ")
}
