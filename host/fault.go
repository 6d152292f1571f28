package host

import "github.com/ternion/ternion/vendorapi"

var (
	_ vendorapi.FaultInjector = (*Driver)(nil)
	_ vendorapi.LaunchChecker = (*Driver)(nil)
)

// InjectFault queues on s work that fails when it runs (vendorapi.FaultInjector):
// the failure is reported once, as any failure of queued work, and the
// stream goes on with the work queued after it.
func (d *Driver) InjectFault(s vendorapi.Stream) error {
	const call = "hostInjectFault"
	return d.submit(call, s, &node{kind: nodeFault, call: call, dev: s.Device})
}

// CheckLaunch returns the error Launch would return for these arguments,
// every buffer the kernel touches checked, without queueing anything
// (vendorapi.LaunchChecker).
func (d *Driver) CheckLaunch(f vendorapi.Function, grid, block vendorapi.Dim3, sharedMem uint32, s vendorapi.Stream, args *vendorapi.Args) error {
	n, err := launchNode(f, grid, block, sharedMem, s, args)
	if err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	_, err = d.admit(n.call, s, []*node{n})
	return err
}
