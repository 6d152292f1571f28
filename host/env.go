package host

import (
	"fmt"

	"github.com/ternion/ternion/switches"
	"github.com/ternion/ternion/vendorapi"
)

// OptionsFromEnv reads switches.HostDevices (the number of devices) and
// switches.HostMemory (each device's memory limit) through lookup
// (os.LookupEnv in production). Unset or blank variables keep the defaults;
// a malformed value is a *switches.Error naming the variable and the value,
// wrapped with vendorapi.ErrInvalidValue.
func OptionsFromEnv(lookup switches.Lookup) (Options, error) {
	n, err := switches.Int(lookup, switches.HostDevices)
	if err != nil {
		return Options{}, fmt.Errorf("%w: %w", err, vendorapi.ErrInvalidValue)
	}
	limit, _, err := switches.Get(lookup, switches.HostMemory)
	if err != nil {
		return Options{}, fmt.Errorf("%w: %w", err, vendorapi.ErrInvalidValue)
	}
	return Options{Devices: n, MemoryLimit: limit}, nil
}
