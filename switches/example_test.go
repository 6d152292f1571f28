package switches_test

import (
	"fmt"

	"github.com/ternion/ternion/switches"
)

// A reader passes os.LookupEnv in production; a map stands in here.
func Example() {
	env := map[string]string{
		"TERNION_DISABLE_GRAPHS":      "1",
		"TERNION_PEER_MAX_BATCH_SIZE": "lots",
		"TERNION_HOST_MEMORY":         "512MiB",
	}
	lookup := func(name string) (string, bool) { v, ok := env[name]; return v, ok }

	fmt.Println(switches.On(lookup, switches.DisableGraphs))
	batch, err := switches.Int(lookup, switches.PeerMaxBatchSize)
	fmt.Println(batch, err)
	limit, set, err := switches.Get(lookup, switches.HostMemory)
	fmt.Println(limit, set, err)
	fmt.Println(switches.HostDevices.Describe())
	// Output:
	// true
	// 128 TERNION_PEER_MAX_BATCH_SIZE="lots": want an integer from 0 to 2147483647
	// 536870912 true <nil>
	// number of simulated host devices; multi-device split and peer copies are tested this way; default 1
}
