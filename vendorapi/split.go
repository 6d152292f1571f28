package vendorapi

// TensorSplitFromMemory is ggml's default row split over devices: device i's
// share of a split tensor's rows starts at split[i] (a fraction of all rows)
// and ends where device i+1's starts (1 for the last), in proportion to each
// device's total memory. All zero totals give an even split.
func TensorSplitFromMemory(totals []uint64) []float64 {
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

// DefaultTensorSplit returns TensorSplitFromMemory over the total memory of
// every device of d.
func DefaultTensorSplit(d Driver) ([]float64, error) {
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
	return TensorSplitFromMemory(totals), nil
}
