package gpushim

import (
	"fmt"

	"github.com/ternion/ternion/switches"
)

// carveoutDevice returns the preferred shared-memory carveout (percent) set
// on every kernel of a device of vendor v as it is loaded, from
// TERNION_CARVEOUT: -1 (unset or -1: the driver chooses per kernel) or
// 0..100 where the vendor has a carveout (CUDA). Where it has none, -1 and
// a note for the log saying the switch is not applied. A malformed value
// is an error naming the variable.
func carveoutDevice(v vendorInfo, env Lookup) (int, string, error) {
	pct, set, err := switches.Get(env, switches.Carveout)
	switch {
	case err != nil:
		return -1, "", err
	case !set || pct < 0:
		return -1, "", nil
	case !v.carveout:
		return -1, fmt.Sprintf("%s=%d is not applied: %s kernels have no shared-memory carveout", switches.Carveout.Name, pct, v.name), nil
	}
	return pct, "", nil
}
