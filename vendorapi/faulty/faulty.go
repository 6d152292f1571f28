// Package faulty wraps any vendorapi.Driver and makes chosen calls fail, as a
// GPU vendor's would, so that the error paths of code above the driver (pools
// flushing and retrying on out of memory, re-instantiating a graph whose
// update failed, giving up a capture, reporting a kernel that failed
// asynchronously) are tested in CI on the host device.
//
// Rules name a method and which of its calls fail: the N-th (counted from 1
// over the wrapper's life), every call, or every allocation over a size. An
// injected failure is a *vendorapi.Error naming the wrapped driver's vendor,
// the call and its device, matching the sentinel the rule gives (for example
// vendorapi.ErrOutOfMemory); Injected tells it from a real one. The wrapper
// is safe for concurrent use and deterministic: the same calls in the same
// order fail the same way. It counts every call it forwards or fails.
package faulty

import (
	"errors"
	"fmt"
	"maps"
	"reflect"
	"sync"

	"github.com/ternion/ternion/vendorapi"
)

// Rule is one planned failure: which calls of Method fail, and how.
type Rule struct {
	// Method is the method whose calls fail, e.g. "Malloc": one of
	// vendorapi.Driver or of the optional interfaces the wrapper forwards
	// (ManagedAllocator, BLASWorkspacer, FeatureLister).
	Method string
	// Nth fails only the Nth call of Method (from 1, counted since New); 0
	// fails every call that Over allows.
	Nth int
	// Over, for an allocation (Malloc, MallocManaged, HostAlloc, VMMCreate,
	// VMMReserve), fails only calls asking for more than Over bytes; 0 means any size.
	Over uint64
	// Kind is the sentinel the error matches (vendorapi.ErrOutOfMemory,
	// ErrGraphUpdate, ...); nil for an unclassified failure, as a vendor's
	// launch failure is.
	Kind error
	// Async, for Launch only, fails the launch asynchronously: Launch queues
	// nothing and returns nil, and the next StreamSynchronize,
	// EventSynchronize or DeviceSynchronize of the stream's device reports
	// the failure, once.
	Async bool
}

// FailMalloc fails the n-th Malloc with out of memory.
func FailMalloc(n int) Rule {
	return Rule{Method: "Malloc", Nth: n, Kind: vendorapi.ErrOutOfMemory}
}

// FailMallocOver fails every Malloc of more than size bytes with out of memory.
func FailMallocOver(size uint64) Rule {
	return Rule{Method: "Malloc", Over: size, Kind: vendorapi.ErrOutOfMemory}
}

// FailGraphExecUpdate fails the n-th GraphExecUpdate with ErrGraphUpdate;
// the exec is left as it was, as the contract says.
func FailGraphExecUpdate(n int) Rule {
	return Rule{Method: "GraphExecUpdate", Nth: n, Kind: vendorapi.ErrGraphUpdate}
}

// FailCapture fails the n-th BeginCapture or EndCapture (method names which)
// with ErrNotSupported, as a vendor refusing or invalidating a capture does.
// A failed BeginCapture starts no capture; a failed EndCapture still ends it
// (the graph is discarded), as an invalidated capture ends.
func FailCapture(method string, n int) Rule {
	return Rule{Method: method, Nth: n, Kind: vendorapi.ErrNotSupported}
}

// FailLaunchAsync fails the n-th Launch asynchronously (see Rule.Async).
func FailLaunchAsync(n int) Rule {
	return Rule{Method: "Launch", Nth: n, Async: true}
}

// Fail fails the n-th call of method (any method the wrapper forwards) with
// an error matching kind.
func Fail(method string, n int, kind error) Rule {
	return Rule{Method: method, Nth: n, Kind: kind}
}

// CodeName is the CodeName of every injected *vendorapi.Error.
const CodeName = "faultyInjected"

// Injected reports whether err is (or wraps) a failure the wrapper injected.
func Injected(err error) bool {
	var ve *vendorapi.Error
	return errors.As(err, &ve) && ve.CodeName == CodeName
}

// Driver is a vendorapi.Driver that forwards every call to the driver it
// wraps unless a rule fails it. It also implements vendorapi.ManagedAllocator,
// vendorapi.BLASWorkspacer and vendorapi.FeatureLister, forwarding to the
// wrapped driver where it does (ErrNotSupported and no features otherwise).
type Driver struct {
	inner vendorapi.Driver

	mu      sync.Mutex
	rules   []Rule
	calls   map[string]int
	pending map[int][]error // device → asynchronous failures not yet reported
}

var (
	_ vendorapi.Driver           = (*Driver)(nil)
	_ vendorapi.ManagedAllocator = (*Driver)(nil)
	_ vendorapi.BLASWorkspacer   = (*Driver)(nil)
	_ vendorapi.FeatureLister    = (*Driver)(nil)
)

// forwarded are the interfaces whose methods the wrapper forwards (and
// counts): a rule may name any of their methods.
var forwarded = []reflect.Type{
	reflect.TypeFor[vendorapi.Driver](),
	reflect.TypeFor[vendorapi.ManagedAllocator](),
	reflect.TypeFor[vendorapi.BLASWorkspacer](),
	reflect.TypeFor[vendorapi.FeatureLister](),
}

// forwards reports whether method is a method of one of the forwarded interfaces.
func forwards(method string) bool {
	for _, iface := range forwarded {
		if _, ok := iface.MethodByName(method); ok {
			return true
		}
	}
	return false
}

// New wraps d, with no rules yet.
func New(d vendorapi.Driver) *Driver {
	return &Driver{inner: d, calls: map[string]int{}, pending: map[int][]error{}}
}

// Add adds rules; a method the wrapper does not forward (see Rule.Method),
// or Async on another method than Launch, is an error and adds none of them.
func (d *Driver) Add(rules ...Rule) error {
	for _, r := range rules {
		if !forwards(r.Method) {
			return fmt.Errorf("faulty: no forwarded interface (vendorapi.Driver, ManagedAllocator, BLASWorkspacer, FeatureLister) has method %q", r.Method)
		}
		if r.Async && r.Method != "Launch" {
			return fmt.Errorf("faulty: only Launch fails asynchronously, not %s", r.Method)
		}
		if r.Nth < 0 {
			return fmt.Errorf("faulty: %s: negative call number %d", r.Method, r.Nth)
		}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.rules = append(d.rules, rules...)
	return nil
}

// Reset removes every rule and every failure not reported yet; the counters stay.
func (d *Driver) Reset() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.rules = nil
	d.pending = map[int][]error{}
}

// Calls returns how many times method was called (failed calls included).
func (d *Driver) Calls(method string) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.calls[method]
}

// Counts returns a copy of every method's call count.
func (d *Driver) Counts() map[string]int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return maps.Clone(d.calls)
}

// Unwrap returns the wrapped driver.
func (d *Driver) Unwrap() vendorapi.Driver { return d.inner }

// call counts a call of method (asking for size bytes, for an allocation)
// and returns the rule it breaks, if any, and the call's number.
func (d *Driver) call(method string, size uint64) (*Rule, int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.calls[method]++
	n := d.calls[method]
	for i := range d.rules {
		r := &d.rules[i]
		if r.Method == method && (r.Nth == 0 || r.Nth == n) && (r.Over == 0 || size > r.Over) {
			rule := *r
			return &rule, n
		}
	}
	return nil, n
}

// check counts a call and returns the error a rule injects into it (nil to
// forward the call).
func (d *Driver) check(method string, dev int, size uint64) error {
	r, n := d.call(method, size)
	if r == nil {
		return nil
	}
	return d.injected(method, dev, r.Kind, callName(n))
}

// forward makes a call of method on dev (asking for size bytes, for an
// allocation) with f, unless a rule fails it: then it returns the zero T
// and the injected error.
func forward[T any](d *Driver, method string, dev int, size uint64, f func() (T, error)) (T, error) {
	if err := d.check(method, dev, size); err != nil {
		var zero T
		return zero, err
	}
	return f()
}

// forwardErr is forward for a method that returns only an error.
func (d *Driver) forwardErr(method string, dev int, size uint64, f func() error) error {
	if err := d.check(method, dev, size); err != nil {
		return err
	}
	return f()
}

// callName describes call number n of a method.
func callName(n int) string { return fmt.Sprintf("call %d", n) }

// injected is the error a rule makes.
func (d *Driver) injected(method string, dev int, kind error, why string) *vendorapi.Error {
	return &vendorapi.Error{Vendor: d.inner.Vendor(), Call: method, CodeName: CodeName, Device: dev, Kind: kind,
		Message: "injected by faulty: " + why}
}

// unsupported is the ErrNotSupported error of a call of method on dev whose
// optional interface the wrapped driver does not implement (what it lacks
// says so, e.g. "has no managed memory"); it is not an injected failure.
func (d *Driver) unsupported(method string, dev int, what string) *vendorapi.Error {
	return &vendorapi.Error{Vendor: d.inner.Vendor(), Call: method, CodeName: "not supported",
		Message: "the wrapped driver " + what, Device: dev, Kind: vendorapi.ErrNotSupported}
}

// report returns err, or else the oldest asynchronous failure of dev not
// reported yet (which it then forgets).
func (d *Driver) report(dev int, err error) error {
	if err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	q := d.pending[dev]
	if len(q) == 0 {
		return nil
	}
	d.pending[dev] = q[1:]
	return q[0]
}
