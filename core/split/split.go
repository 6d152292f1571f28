// Package split is ggml's row split of a tensor over several devices: where
// each device's share of the rows starts. The default follows each device's
// total memory, as ggml_backend_cuda_get_device_memory does for its default
// tensor_split; core's split buffer type will also take the proportions the
// user gives (switches.TensorSplit, ggml's --tensor-split). It is policy,
// not driver contract: it imports vendorapi, never a vendor shim.
package split

import "github.com/ternion/ternion/vendorapi"

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
