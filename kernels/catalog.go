package kernels

import (
	"embed"
	"fmt"
	"slices"
	"strings"

	"github.com/ternion/ternion/vendorapi"
)

// Sources are the kernel sources, embedded so a vendor's run-time compiler
// (NVRTC, hipRTC) can build them when no prebuilt code object matches a device.
//
//go:embed *.cu *.h
var Sources embed.FS

// Param is one kernel parameter: its name in the .cu source and its kind.
type Param struct {
	Name string
	Kind vendorapi.ParamKind
}

// Kernel is one catalog entry: an extern "C" entry point of a family's code
// object and its parameters. The entry point is written in the family's .cu
// file, or (when Body is set) generated from a Template: a one-line wrapper
// that calls the __device__ function template Body with the parameters.
type Kernel struct {
	Name   string
	Family string // the family (and .cu file without extension) that defines it
	Params []Param
	Doc    string
	// Body is the call a generated entry point makes, with its template
	// arguments in C ("binary_f32<ternion_bin_add>"); empty for an entry point the
	// .cu file defines itself.
	Body string
	// Fixture is the family's Fixture flag.
	Fixture bool
	// Bind holds the template arguments by axis name ({"op": "add"}), for
	// host implementations; nil for a kernel written in the source.
	Bind map[string]string
	// LaunchBounds is the generated entry point's __launch_bounds__ (the most
	// threads per block a launch may use); 0 for none.
	LaunchBounds int
	// MinBlocks is __launch_bounds__' second argument (blocks of
	// LaunchBounds threads an SM must hold at once, which caps the
	// registers); 0 for none.
	MinBlocks int
	// EarlyEntry: the entry point begins with TERNION_KERNEL_ENTRY_EARLY()
	// instead of TERNION_KERNEL_ENTRY(), and the body calls
	// TERNION_GRID_WAIT() itself before it reads what the kernel before it
	// writes (a test checks both).
	EarlyEntry bool
	// Deferred: the entry point begins with TERNION_KERNEL_ENTRY_DEFERRED()
	// (nothing) instead of TERNION_KERNEL_ENTRY(), and the body calls
	// TERNION_KERNEL_ENTRY() itself once it has requested what it may read
	// before the kernels queued before it are done (memory core knows none
	// of them writes; a test checks the call). Unlike EarlyEntry, the next
	// kernel still launches only after this one has waited.
	Deferred bool
	// Cluster is the blocks of a thread-block cluster along x the entry
	// point declares (TERNION_CLUSTER_DIMS: NVIDIA code for arch 9.0 and
	// later; the grid's x a multiple of it), 0 for none.
	Cluster int
}

// Kinds returns the parameter kinds in order.
func (k Kernel) Kinds() []vendorapi.ParamKind {
	out := make([]vendorapi.ParamKind, len(k.Params))
	for i, p := range k.Params {
		out[i] = p.Kind
	}
	return out
}

// Source is the .cu file that defines k (or its template body).
func (k Kernel) Source() string { return k.Family + ".cu" }

// Template is a kernel template: one __device__ function template of a
// family's .cu file, instantiated for every combination of its axes' values.
// Each instantiation is a catalog kernel with a generated extern "C" entry
// point, so the catalog, the entry points and the host implementations are
// all made from this one spec and cannot drift apart.
type Template struct {
	// Name is the entry point name with {axis} placeholders: "{op}_f32".
	Name string
	// Body is the device function call with {axis} placeholders replaced by
	// the values' C spelling: "binary<{op}>".
	Body         string
	Params       []Param
	Axes         []Axis
	Doc          string // may use {axis} placeholders too
	LaunchBounds int
	MinBlocks    int
	EarlyEntry   bool
	Deferred     bool
	Cluster      int
}

// Axis is one template parameter and the values it is instantiated for.
type Axis struct {
	Name   string
	Values []Value
}

// Value is one value of an axis: its name in entry point names and Bind, and
// its C spelling in the body's template arguments.
type Value struct {
	Name string // "f32", "add"
	C    string // "float", "ternion_bin_add"
}

// Family is one .cu file: its kernels are built into one code object, loaded
// at the first use of any of them, and compiled at run time (NVRTC, hipRTC)
// one family at a time, keyed by the family's source hash.
type Family struct {
	Name string // the .cu file without extension: "binary"
	Doc  string
	// Fixture marks the families whose kernels vendorapi/conformance runs on
	// every vendor (argument ABI, launch geometry, copies); the others hold
	// op kernels, which core's op tests check against references.
	Fixture bool
	// ArchSpecific names the one NVIDIA target the family's code is for
	// ("sm_90a": instructions of that arch only, such as wgmma): the kernel
	// generator does not prebuild it (nvcc of any version builds it for no
	// other arch), the run-time compiler builds it for devices of that
	// compute capability only, and built for any other target its kernels
	// trap. "" for a family of portable code.
	ArchSpecific string
	Kernels      []Kernel   // entry points the .cu file defines
	Templates    []Template // entry points generated from templates
}

// expand returns the kernels of t in family fam, one per combination of the
// axes' values (the first axis varies slowest).
func (t Template) expand(fam string) []Kernel {
	combos := []map[string]Value{{}}
	for _, ax := range t.Axes {
		var next []map[string]Value
		for _, c := range combos {
			for _, v := range ax.Values {
				m := make(map[string]Value, len(c)+1)
				for k, x := range c {
					m[k] = x
				}
				m[ax.Name] = v
				next = append(next, m)
			}
		}
		combos = next
	}
	out := make([]Kernel, 0, len(combos))
	for _, c := range combos {
		name, body, doc := t.Name, t.Body, t.Doc
		bind := make(map[string]string, len(c))
		for ax, v := range c {
			name = strings.ReplaceAll(name, "{"+ax+"}", v.Name)
			body = strings.ReplaceAll(body, "{"+ax+"}", v.C)
			doc = strings.ReplaceAll(doc, "{"+ax+"}", v.Name)
			bind[ax] = v.Name
		}
		out = append(out, Kernel{Name: name, Family: fam, Params: t.Params, Doc: doc, Body: body, Bind: bind,
			LaunchBounds: t.LaunchBounds, MinBlocks: t.MinBlocks, EarlyEntry: t.EarlyEntry, Deferred: t.Deferred, Cluster: t.Cluster})
	}
	return out
}

// All returns every kernel of f: those its source defines, then the
// instantiations of its templates.
func (f Family) All() []Kernel {
	out := make([]Kernel, 0, len(f.Kernels))
	for _, k := range f.Kernels {
		k.Family = f.Name
		out = append(out, k)
	}
	for _, t := range f.Templates {
		out = append(out, t.expand(f.Name)...)
	}
	for i := range out {
		out[i].Fixture = f.Fixture
	}
	return out
}

// Catalog lists every kernel of every family, in the order of Families.
var Catalog []Kernel

// byName indexes Catalog; familyIndex indexes Families.
var (
	byName      map[string]int
	familyIndex map[string]int
)

func init() {
	// Families of their own files are listed at the end; keep the order by name.
	slices.SortStableFunc(Families, func(a, b Family) int { return strings.Compare(a.Name, b.Name) })
	byName = map[string]int{}
	familyIndex = map[string]int{}
	for i, f := range Families {
		familyIndex[f.Name] = i
		for _, k := range f.All() {
			byName[k.Name] = len(Catalog) // a duplicate name is caught by TestCatalogNamesAreUnique
			Catalog = append(Catalog, k)
		}
	}
}

// Lookup returns the catalog entry named name.
func Lookup(name string) (Kernel, error) {
	i, ok := byName[name]
	if !ok {
		return Kernel{}, fmt.Errorf("kernel %q is not in the catalog: %w", name, vendorapi.ErrInvalidValue)
	}
	return Catalog[i], nil
}

// LookupFamily returns the family named name.
func LookupFamily(name string) (Family, error) {
	i, ok := familyIndex[name]
	if !ok {
		return Family{}, fmt.Errorf("kernel family %q does not exist: %w", name, vendorapi.ErrInvalidValue)
	}
	return Families[i], nil
}

// FamilyNames lists the families' names, sorted.
func FamilyNames() []string {
	out := make([]string, len(Families))
	for i, f := range Families {
		out[i] = f.Name
	}
	slices.Sort(out)
	return out
}
