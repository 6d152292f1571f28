//go:build cuda || hip || musa

package gpushim

/*
#include "shim.h"
*/
import "C"

import (
	"fmt"
	"log/slog"
	"os"
	"slices"
	"sync"

	"github.com/ternion/ternion/kernels"
	"github.com/ternion/ternion/switches"
	"github.com/ternion/ternion/vendorapi"
)

// Driver implements vendorapi.Driver (plus ManagedAllocator and
// FeatureLister) over the C shim for the vendor this build was tagged with.
type Driver struct {
	vendor      string
	driver      int // the driver's version number (CUDA: 12030 for 12.3)
	cfg         Config
	log         *slog.Logger
	devs        []*device
	features    []vendorapi.Feature
	h           handles  // streams, events, graphs, BLAS handles, functions, chunks
	mem         memTable // live allocations, reserved and mapped ranges, pinned memory
	rtc         rtcState
	blas        blasState
	managedWarn sync.Once // the managed-memory fallback warning, once
}

// device is one device's fixed properties and its loaded kernels.
type device struct {
	props   vendorapi.Props
	minGran uint64     // minimum VMM granularity (0 without VMM)
	plan    kernelPlan // where the device's kernels come from (refined per family by planFamily)
	pdl     bool       // kernels whose code allows it launch with programmatic dependent launch (pdlDevice)
	// carveout is the preferred shared-memory carveout (percent) set on
	// every kernel as it is loaded, -1 for none (carveoutDevice).
	carveout int

	mu       sync.Mutex         // guards the fields below
	families map[string]*family // kernel families, by name, as they are first used
	funcs    map[string]vendorapi.Function
}

// openMu serializes Open and the loading of the BLAS library and the run-time
// compiler: the C side's library state is process-wide.
var openMu sync.Mutex

// Register makes this build's vendor (cuda, hip or musa) available through
// vendorapi.Open; the vendor package calls it from init with the function
// returning its embedded code objects. An unusable image is replaced by none,
// with a warning: kernels are then compiled at run time where the vendor can.
func Register(image func() (kernels.Image, error)) {
	vendorapi.Register(vendor.name, func() (vendorapi.Driver, error) {
		img, err := image()
		if err != nil {
			slog.Warn(vendor.name+": the embedded code objects are unusable", "err", err)
			img = kernels.Image{}
		}
		d, err := Open(Config{Image: img})
		if err != nil {
			return nil, err // not d: a nil *Driver in the interface would not be nil
		}
		return d, nil
	})
}

// Open loads the vendor's driver library, enumerates the devices and logs
// each as the seed does. Without the driver it returns an error matching
// vendorapi.ErrNoDriver; with a driver and no device, a Driver with zero
// devices.
func Open(cfg Config) (*Driver, error) {
	openMu.Lock()
	defer openMu.Unlock()
	d := &Driver{vendor: vendor.name, cfg: cfg, log: cfg.Logger}
	if d.log == nil {
		d.log = slog.Default()
	}
	if d.cfg.Env == nil {
		d.cfg.Env = os.LookupEnv
	}
	d.cfg.ForceRTC = d.cfg.ForceRTC || switches.On(d.cfg.Env, switches.ForceRTC)
	sw, err := switchFeatures(d.cfg.Env, vendor)
	if err != nil {
		return nil, fmt.Errorf("%s: %w: %w", d.vendor, err, vendorapi.ErrInvalidValue)
	}
	var n, drv, rt C.int32_t
	if err := d.fail(C.tn_open(&n, &drv, &rt), -1); err != nil {
		return nil, err
	}
	d.driver = int(drv)
	runtime := "-"
	if rt != 0 {
		runtime = vendor.version(int(rt))
	}
	d.log.Info(fmt.Sprintf("%s: driver %s, runtime %s, %d devices", d.vendor, vendor.version(int(drv)), runtime, int(n)))
	var plans []kernelPlan
	for i := range int(n) {
		dv, err := d.initDevice(i)
		if err != nil {
			return nil, err
		}
		d.devs = append(d.devs, dv)
		plans = append(plans, dv.plan)
	}
	source, prebuilt, runtime := familySources(plans, d.cfg.Image, d.cfg.ForceRTC, vendor.rtcFeature)
	d.features = features(d.cfg.Image.Compiled(), sw, source)
	d.features = append(d.features, vendorapi.Feature{Name: "PREBUILT", Value: prebuilt},
		vendorapi.Feature{Name: "RUNTIME_COMPILED", Value: runtime})
	return d, nil
}

// initDevice reads device i's properties and logs it as the seed does.
func (d *Driver) initDevice(i int) (*device, error) {
	var p C.tn_props
	if err := d.fail(C.tn_props_get(C.int32_t(i), &p), i); err != nil {
		return nil, err
	}
	major, minor := int(p.major), int(p.minor)
	a := vendor.arch(rawArch{dev: i, major: major, minor: minor, name: C.GoString(&p.arch_name[0])}, d.cfg.Env)
	for _, w := range a.warnings {
		d.log.Warn(d.vendor + ": " + w)
	}
	warp := int(p.warp_size)
	if vendor.warpSize > 0 {
		warp = vendor.warpSize
	}
	vmmOn, vmmWhy := vendor.vmmEnabled(d.cfg.Env)
	dv := &device{families: map[string]*family{}, funcs: map[string]vendorapi.Function{}}
	dv.props = vendorapi.Props{
		Index:                  i,
		Name:                   C.GoString(&p.name[0]),
		ArchName:               a.name,
		Major:                  major,
		Minor:                  minor,
		SMs:                    int(p.sms),
		SharedMemPerBlock:      int(p.smem_per_block),
		SharedMemPerBlockOptin: int(max(p.smem_per_block_optin, p.smem_per_block)),
		WarpSize:               warp,
		TotalMemory:            uint64(p.total_mem),
		Integrated:             p.integrated != 0,
		VMM:                    p.vmm != 0 && vmmOn,
		PCIBusID:               C.GoString(&p.pci_bus_id[0]),
		CC:                     a.cc,
		ArchOverride:           a.override,
	}
	if dv.props.VMM {
		dv.props.VMMGranularity = uint64(p.vmm_granularity)
		dv.minGran = max(uint64(p.vmm_min_granularity), 1)
	}
	dv.plan = planKernels(a.cc, d.cfg.Image, d.cfg.ForceRTC)
	dv.pdl = pdlDevice(vendor, a.cc, C.tn_pdl_available() != 0, d.driver, d.cfg.Env)
	carveout, note, err := carveoutDevice(vendor, d.cfg.Env)
	if err != nil {
		return nil, ownError(d.vendor, "Open", i, vendorapi.ErrInvalidValue, "%v", err)
	}
	if note != "" {
		d.log.Warn(d.vendor + ": " + note)
	}
	dv.carveout = carveout
	if dv.plan.embedded {
		dv.props.CompiledArchs = d.cfg.Image.Compiled()
	}
	dv.props.ArchSpecific = d.archSpecific(i, major*10+minor)
	vmm := "no"
	switch {
	case dv.props.VMM:
		vmm = "yes"
	case p.vmm != 0:
		vmm = "no (" + vmmWhy + ")"
	}
	attrs := []any{"device", i, "cc", int(a.cc), "sms", dv.props.SMs, "warp", dv.props.WarpSize,
		"memory", dv.props.TotalMemory, "kernels", dv.plan.reason}
	if a.override != "" {
		attrs = append(attrs, "override", a.override)
	}
	if dv.pdl {
		attrs = append(attrs, "pdl", true)
	}
	if dv.carveout >= 0 {
		attrs = append(attrs, "carveout", dv.carveout)
	}
	d.log.Info(fmt.Sprintf("%s: device %d: %s, %s, compute capability %d.%d, VMM: %s, wave size %d", d.vendor, i,
		dv.props.Name, a.name, major, minor, vmm, dv.props.WarpSize), attrs...)
	return dv, nil
}

// fail converts a C status into an error: nil on success.
func (d *Driver) fail(st C.tn_status, dev int) error {
	if st.src == C.TN_OK {
		return nil
	}
	return status{
		src: int(st.src), code: int(st.code), aux: int(st.aux), hint: int(st.hint),
		call: C.GoString(st.call), name: C.GoString(st.name), msg: C.GoString(st.msg),
	}.toError(vendor.name, dev)
}

// invalid is an own ErrInvalidValue error of call on dev.
func (d *Driver) invalid(call string, dev int, format string, args ...any) error {
	return ownError(d.vendor, call, dev, vendorapi.ErrInvalidValue, format, args...)
}

// checkDev checks a device index.
func (d *Driver) checkDev(call string, dev int) error {
	if dev < 0 || dev >= len(d.devs) {
		return d.invalid(call, dev, "device %d does not exist (%s has %d)", dev, d.vendor, len(d.devs))
	}
	return nil
}

// Vendor names the vendor.
func (d *Driver) Vendor() string { return d.vendor }

// DeviceCount returns the number of devices.
func (d *Driver) DeviceCount() (int, error) { return len(d.devs), nil }

// Props returns device dev's properties, read once at Open.
func (d *Driver) Props(dev int) (vendorapi.Props, error) {
	if err := d.checkDev("Props", dev); err != nil {
		return vendorapi.Props{}, err
	}
	p := d.devs[dev].props
	p.CompiledArchs = slices.Clone(p.CompiledArchs)
	p.ArchSpecific = slices.Clone(p.ArchSpecific)
	return p, nil
}

// Features lists the build and run-time switches (vendorapi.FeatureLister).
func (d *Driver) Features() []vendorapi.Feature {
	return append([]vendorapi.Feature(nil), d.features...)
}

// MemInfo returns free and total memory of dev.
func (d *Driver) MemInfo(dev int) (free, total uint64, err error) {
	if err := d.checkDev("MemInfo", dev); err != nil {
		return 0, 0, err
	}
	var f, t C.uint64_t
	if err := d.fail(C.tn_mem_info(C.int32_t(dev), &f, &t), dev); err != nil {
		return 0, 0, err
	}
	return uint64(f), uint64(t), nil
}

// checkPeer checks both devices of a peer call.
func (d *Driver) checkPeer(call string, dev, peer int) error {
	if err := d.checkDev(call, dev); err != nil {
		return err
	}
	return d.checkDev(call, peer)
}

// CanAccessPeer reports whether dev can access peer's memory.
func (d *Driver) CanAccessPeer(dev, peer int) (bool, error) {
	if err := d.checkPeer("CanAccessPeer", dev, peer); err != nil {
		return false, err
	}
	if dev == peer {
		return false, nil
	}
	var can C.int32_t
	if err := d.fail(C.tn_can_access_peer(C.int32_t(dev), C.int32_t(peer), &can), dev); err != nil {
		return false, err
	}
	return can != 0, nil
}

// EnablePeerAccess lets dev access peer's memory; enabling twice is not an error.
func (d *Driver) EnablePeerAccess(dev, peer int) error {
	if err := d.checkPeer("EnablePeerAccess", dev, peer); err != nil {
		return err
	}
	if dev == peer {
		return d.invalid("EnablePeerAccess", dev, "a device cannot be its own peer")
	}
	if err := d.fail(C.tn_peer_enable(C.int32_t(dev), C.int32_t(peer)), dev); err != nil {
		return err
	}
	d.mem.setPeer(dev, peer, true)
	return nil
}

// DisablePeerAccess revokes peer access; disabling when not enabled is not an error.
func (d *Driver) DisablePeerAccess(dev, peer int) error {
	if err := d.checkPeer("DisablePeerAccess", dev, peer); err != nil {
		return err
	}
	if err := d.fail(C.tn_peer_disable(C.int32_t(dev), C.int32_t(peer)), dev); err != nil {
		return err
	}
	d.mem.setPeer(dev, peer, false)
	return nil
}

// DeviceSynchronize waits for all work on dev.
func (d *Driver) DeviceSynchronize(dev int) error {
	if err := d.checkDev("DeviceSynchronize", dev); err != nil {
		return err
	}
	return d.fail(C.tn_device_sync(C.int32_t(dev)), dev)
}

// Interface checks.
var (
	_ vendorapi.Driver           = (*Driver)(nil)
	_ vendorapi.ManagedAllocator = (*Driver)(nil)
	_ vendorapi.FeatureLister    = (*Driver)(nil)
)
