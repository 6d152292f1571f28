package vendorapi

import (
	"fmt"
	"sort"
	"sync"
)

// Opener opens a vendor's driver. It returns an error matching ErrNoDriver when
// the vendor's libraries are absent at run time.
type Opener func() (Driver, error)

var (
	registryMu sync.Mutex
	registry   = map[string]Opener{}
	opened     = map[string]openResult{}
)

type openResult struct {
	d   Driver
	err error
}

// Register makes a vendor available under name; shims call it from init.
// Registering the same name twice replaces the opener.
func Register(name string, open Opener) {
	registryMu.Lock()
	defer registryMu.Unlock()
	registry[name] = open
	delete(opened, name)
}

// Vendors lists the registered vendor names: host first, then the others sorted.
func Vendors() []string {
	registryMu.Lock()
	defer registryMu.Unlock()
	names := make([]string, 0, len(registry))
	for n := range registry {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		if (names[i] == "host") != (names[j] == "host") {
			return names[i] == "host"
		}
		return names[i] < names[j]
	})
	return names
}

// Open returns the driver of vendor name, opening it once per process.
func Open(name string) (Driver, error) {
	registryMu.Lock()
	open, ok := registry[name]
	if r, done := opened[name]; done {
		registryMu.Unlock()
		return r.d, r.err
	}
	registryMu.Unlock()
	if !ok {
		return nil, fmt.Errorf("vendor %q is not compiled in (have %v): %w", name, Vendors(), ErrNotSupported)
	}
	d, err := open()
	registryMu.Lock()
	opened[name] = openResult{d, err}
	registryMu.Unlock()
	return d, err
}

// Probe is the outcome of opening one vendor.
type Probe struct {
	Vendor string
	Driver Driver // nil when Err is set
	Err    error
}

// OpenAll opens every registered vendor and reports each outcome, never
// dropping a vendor that failed.
func OpenAll() []Probe {
	var out []Probe
	for _, n := range Vendors() {
		d, err := Open(n)
		out = append(out, Probe{Vendor: n, Driver: d, Err: err})
	}
	return out
}
