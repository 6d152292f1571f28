package gpushim

import (
	"fmt"

	"github.com/ternion/ternion/vendorapi"
)

// maxArgs is the most kernel arguments one launch passes (TN_MAX_ARGS in shim.h).
const maxArgs = 32

// argSlots is a launch's argument buffer: one 64-bit slot per argument, the
// value in the slot's low bytes, which is where the C side's pointer to the
// slot finds a 4-byte value on a little-endian host.
type argSlots [maxArgs]uint64

// pack checks args against kernel name's parameter kinds and writes their
// bits into s, 4-byte kinds masked to 32 bits. It returns the argument count.
func (s *argSlots) pack(name string, kinds []vendorapi.ParamKind, args []vendorapi.Arg) (int, error) {
	if err := vendorapi.CheckArgs(name, kinds, args); err != nil {
		return 0, err
	}
	if len(args) > maxArgs {
		return 0, fmt.Errorf("kernel %s takes %d arguments, the shim passes at most %d: %w", name, len(args), maxArgs,
			vendorapi.ErrInvalidValue)
	}
	for i, a := range args {
		v := a.Bits
		if a.Kind.Size() == 4 {
			v &= 0xffffffff
		}
		s[i] = v
	}
	return len(args), nil
}

// dims packs a launch's grid and block, zero components counted as 1.
func dims(grid, block vendorapi.Dim3) [6]uint32 {
	g, b := grid.Norm(), block.Norm()
	return [6]uint32{g.X, g.Y, g.Z, b.X, b.Y, b.Z}
}
