package host

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/ternion/ternion/vendorapi"
)

// Vendor is the name the host device registers under.
const Vendor = "host"

// MaxDevices is the most devices one host driver simulates.
const MaxDevices = 16

// Device properties every simulated device reports.
const (
	sharedMemPerBlock      = 48 << 10
	sharedMemPerBlockOptin = 228 << 10
	warpSize               = 32
	defaultMemoryCap       = 8 << 30
)

// Options configures a host driver.
type Options struct {
	// Devices is how many devices to simulate, 1 to MaxDevices; 0 means 1.
	Devices int
	// MemoryLimit is each device's memory in bytes; 0 means the default, the
	// smaller of 8 GiB and a quarter of physical memory.
	MemoryLimit uint64
}

var _ vendorapi.Driver = (*Driver)(nil)
var _ vendorapi.FeatureLister = (*Driver)(nil)
var _ vendorapi.ManagedAllocator = (*Driver)(nil)

// Driver is the pure-Go device: memory from anonymous mmap, streams on
// goroutines, kernels and BLAS in Go. It is safe for concurrent use.
type Driver struct {
	devices int
	limit   uint64 // bytes per device
	gran    uint64 // VMM granularity
	page    uint64

	// mu guards the handle tables and every stream's and event's capture state.
	// Lock order: mu, then memMu, then a stream's mu.
	mu      sync.Mutex
	streams map[uintptr]*stream
	events  map[uintptr]*event
	graphs  map[uintptr]*graph
	execs   map[uintptr]*graph
	funcs   map[uintptr]*function
	funcIDs map[funcKey]uintptr
	blas    map[uintptr]*blasHandle

	// memMu guards the memory tables. Work that touches device memory holds it
	// for reading, so nothing is unmapped under a running copy or kernel.
	memMu      sync.RWMutex
	regions    table      // device allocations, pinned host memory, VMM reserves, freed ranges in quarantine
	registered table      // HostRegister ranges
	freed      quarantine // freed ranges still reserved, oldest first
	chunks     map[uintptr]*chunk
	used       []uint64 // bytes allocated per device
	peer       [][]bool // peer[dev][owner]: dev may access owner's memory
}

// New returns a host driver simulating o.Devices devices.
func New(o Options) (*Driver, error) {
	if o.Devices == 0 {
		o.Devices = 1
	}
	if o.Devices < 1 || o.Devices > MaxDevices {
		return nil, invalid("hostInit", -1, "device count %d out of range 1..%d", o.Devices, MaxDevices)
	}
	if o.MemoryLimit == 0 {
		o.MemoryLimit = defaultMemoryLimit()
	}
	page := uint64(os.Getpagesize())
	d := &Driver{
		devices: o.Devices,
		limit:   o.MemoryLimit,
		page:    page,
		gran:    max(page, 64<<10),
		streams: map[uintptr]*stream{},
		events:  map[uintptr]*event{},
		graphs:  map[uintptr]*graph{},
		execs:   map[uintptr]*graph{},
		funcs:   map[uintptr]*function{},
		funcIDs: map[funcKey]uintptr{},
		blas:    map[uintptr]*blasHandle{},
		chunks:  map[uintptr]*chunk{},
		used:    make([]uint64, o.Devices),
		peer:    make([][]bool, o.Devices),
	}
	for i := range d.peer {
		d.peer[i] = make([]bool, o.Devices)
	}
	return d, nil
}

func init() {
	vendorapi.Register(Vendor, func() (vendorapi.Driver, error) {
		o, err := OptionsFromEnv(os.LookupEnv)
		if err != nil {
			return nil, err
		}
		return New(o)
	})
}

// defaultMemoryLimit is the smaller of 8 GiB and a quarter of physical memory.
func defaultMemoryLimit() uint64 {
	var si unix.Sysinfo_t
	if err := unix.Sysinfo(&si); err == nil {
		total := uint64(si.Totalram) * uint64(si.Unit)
		if total > 0 {
			return min(defaultMemoryCap, total/4)
		}
	}
	return defaultMemoryCap
}

// nextHandle numbers handles of all drivers, so a handle from another
// driver (or of another kind) is never mistaken for a live one.
var nextHandle atomic.Uintptr

// id returns a fresh handle, never zero.
func (d *Driver) id() uintptr { return nextHandle.Add(1) }

// checkDev reports an error unless dev is a device index.
func (d *Driver) checkDev(call string, dev int) error {
	if dev < 0 || dev >= d.devices {
		return newErr(errInvalidDevice, call, dev, "device %d does not exist (have %d)", dev, d.devices)
	}
	return nil
}

// Vendor returns "host".
func (d *Driver) Vendor() string { return Vendor }

// DeviceCount returns the number of simulated devices.
func (d *Driver) DeviceCount() (int, error) { return d.devices, nil }

// Props describes simulated device dev.
func (d *Driver) Props(dev int) (vendorapi.Props, error) {
	if err := d.checkDev("hostGetDeviceProperties", dev); err != nil {
		return vendorapi.Props{}, err
	}
	return vendorapi.Props{
		Index:                  dev,
		Name:                   fmt.Sprintf("ternion host device %d", dev),
		ArchName:               "host",
		SMs:                    runtime.NumCPU(),
		SharedMemPerBlock:      sharedMemPerBlock,
		SharedMemPerBlockOptin: sharedMemPerBlockOptin,
		WarpSize:               warpSize,
		TotalMemory:            d.limit,
		Integrated:             true,
		VMM:                    true,
		VMMGranularity:         d.gran,
	}, nil
}

// MemInfo returns the bytes of dev's memory limit not allocated, and the limit.
func (d *Driver) MemInfo(dev int) (free, total uint64, err error) {
	if err := d.checkDev("hostMemGetInfo", dev); err != nil {
		return 0, 0, err
	}
	d.memMu.RLock()
	defer d.memMu.RUnlock()
	return d.limit - d.used[dev], d.limit, nil
}

// CanAccessPeer reports true for any two distinct devices.
func (d *Driver) CanAccessPeer(dev, peer int) (bool, error) {
	const call = "hostDeviceCanAccessPeer"
	if err := d.checkDev(call, dev); err != nil {
		return false, err
	}
	if err := d.checkDev(call, peer); err != nil {
		return false, err
	}
	return dev != peer, nil
}

// EnablePeerAccess lets kernels and copies on dev use peer's memory.
func (d *Driver) EnablePeerAccess(dev, peer int) error {
	return d.setPeer("hostDeviceEnablePeerAccess", dev, peer, true)
}

// DisablePeerAccess revokes EnablePeerAccess.
func (d *Driver) DisablePeerAccess(dev, peer int) error {
	return d.setPeer("hostDeviceDisablePeerAccess", dev, peer, false)
}

func (d *Driver) setPeer(call string, dev, peer int, on bool) error {
	if err := d.checkDev(call, dev); err != nil {
		return err
	}
	if err := d.checkDev(call, peer); err != nil {
		return err
	}
	if dev == peer {
		return newErr(errInvalidDevice, call, dev, "a device cannot be its own peer")
	}
	d.memMu.Lock()
	defer d.memMu.Unlock()
	d.peer[dev][peer] = on
	return nil
}

// DeviceSynchronize waits for the work queued on dev's streams before the
// call (not for work queued while it waits) and returns the first unreported
// error of their asynchronous work. It fails, invalidating the capture, when
// a stream of dev is capturing.
func (d *Driver) DeviceSynchronize(dev int) error {
	const call = "hostDeviceSynchronize"
	if err := d.checkDev(call, dev); err != nil {
		return err
	}
	d.mu.Lock()
	var capturing []*stream
	ts := d.tickets(func(s *stream) (uint64, bool) {
		if s.dev != dev {
			return 0, false
		}
		if s.capture != nil {
			capturing = append(capturing, s)
		}
		return s.queued, true
	})
	for _, s := range capturing {
		s.capture.invalidate(call + " during capture")
	}
	d.mu.Unlock()
	if len(capturing) > 0 {
		return newErr(errCaptureUnsupported, call, dev,
			"stream %d is capturing; synchronizing the device invalidated its capture", capturing[0].id)
	}
	return waitTickets(ts, true)
}

// Features reports the simulated configuration.
func (d *Driver) Features() []vendorapi.Feature {
	return []vendorapi.Feature{
		{Name: "DEVICES", Value: strconv.Itoa(d.devices)},
		{Name: "MEMORY_LIMIT", Value: strconv.FormatUint(d.limit, 10)},
		{Name: "VMM_GRANULARITY", Value: strconv.FormatUint(d.gran, 10)},
		{Name: "BLAS", Value: blasVersion()},
	}
}

// Close destroys every stream (after its queued work) and releases all
// memory, handles, kernel functions and VMM ranges of d, and disables peer
// access (vendorapi.Driver.Close). The driver stays usable, empty.
func (d *Driver) Close() error {
	d.mu.Lock()
	var list []*stream
	for id, s := range d.streams {
		list = append(list, s)
		if s.capture != nil {
			s.capture.end()
		}
		delete(d.streams, id)
	}
	d.events = map[uintptr]*event{}
	d.graphs = map[uintptr]*graph{}
	d.execs = map[uintptr]*graph{}
	d.blas = map[uintptr]*blasHandle{}
	d.funcs = map[uintptr]*function{}
	d.funcIDs = map[funcKey]uintptr{}
	d.mu.Unlock()
	for _, s := range list {
		s.stop()
	}
	d.memMu.Lock()
	defer d.memMu.Unlock()
	var first error
	// unmapRegion removes r from d.regions, so range over a copy.
	for _, r := range d.regions.Ranges() {
		if err := d.unmapRegion(r.Val); err != nil && first == nil {
			first = err
		}
	}
	for _, c := range d.chunks {
		c.release()
	}
	d.regions.Clear()
	d.registered.Clear()
	d.freed = quarantine{}
	d.chunks = map[uintptr]*chunk{}
	for i := range d.used {
		d.used[i] = 0
		clear(d.peer[i])
	}
	return first
}
