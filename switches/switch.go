package switches

import (
	"errors"
	"os"
	"strconv"
	"strings"

	"github.com/ternion/ternion/internal/quote"
)

// Prefix starts the name of every switch that is ternion's own.
const Prefix = "TERNION_"

// Lookup reads one environment variable with os.LookupEnv's signature:
// os.LookupEnv in production, a map in tests. Every function of this package
// treats a nil Lookup as os.LookupEnv.
type Lookup func(name string) (value string, ok bool)

// orEnv returns l, or os.LookupEnv when l is nil.
func orEnv(l Lookup) Lookup {
	if l == nil {
		return os.LookupEnv
	}
	return l
}

// Kind is the kind of value a switch takes; it decides the parser.
type Kind int

// The kinds of switch values.
const (
	KindBool        Kind = iota + 1 // on unless "", "0", "false", "no" or "off" (any case)
	KindInt                         // a decimal integer within the switch's range
	KindUint64                      // a decimal unsigned 64-bit integer
	KindSize                        // a byte count: "512MiB", "2GB", "1.5 GiB" or plain bytes
	KindList                        // words separated by commas or spaces, each one of the switch's values
	KindProportions                 // non-negative numbers separated by commas or slashes: "0.7,0.3", "3/1"
	KindArchs                       // arch names for one vendor's compiler, separated by commas, spaces or semicolons
	KindGfxVersion                  // an AMD gfx version as major.minor.stepping: "10.3.0"
	KindText                        // any text, e.g. a path
)

// kindNames are the names Kind.String prints.
var kindNames = map[Kind]string{
	KindBool: "bool", KindInt: "int", KindUint64: "uint64", KindSize: "size", KindList: "list",
	KindProportions: "proportions", KindArchs: "arch list", KindGfxVersion: "gfx version", KindText: "text",
}

// String names the kind: "bool", "int", "size", "arch list", ….
func (k Kind) String() string {
	if s, ok := kindNames[k]; ok {
		return s
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// Layer is a set of the parts of ternion that read a switch.
type Layer uint8

// The layers that read switches.
const (
	LayerCore        Layer = 1 << iota // core/: pools, dispatch, graph capture (not written yet)
	LayerHost                          // the host vendor
	LayerGPU                           // the GPU vendors (cuda, hip, musa) through internal/gpushim
	LayerGenerator                     // the kernel generator, go generate ./kernels
	LayerConformance                   // the conformance suite, vendorapi/conformance
)

// layerNames are the names Layer.String joins, in bit order.
var layerNames = []string{"core", "host", "gpu", "go generate", "conformance"}

// String joins the layer names with commas: "core,gpu".
func (l Layer) String() string {
	var names []string
	for i, n := range layerNames {
		if l&(1<<i) != 0 {
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		return "-"
	}
	return strings.Join(names, ",")
}

// Switch describes one environment variable ternion reads. The package's
// variables (DisableGraphs, HostMemory, …) are the only Switches; treat their
// fields as read-only.
type Switch struct {
	Name        string // the environment variable, e.g. "TERNION_DISABLE_GRAPHS"
	Meaning     string // what it does, one line
	Default     string // what applies when it is unset, as text ("off", "128", "random"); "" when nothing
	Kind        Kind   // the kind of value, which decides the parser
	GGML        string // the ggml variable, define or option it mirrors, e.g. "GGML_CUDA_DISABLE_GRAPHS"; "" when none
	ReadBy      Layer  // the layers that read it
	NoEffectYet bool   // its reader, core/, is not written yet: listed and reported, it changes nothing
	Owner       string // whose variable it is when not ternion's own, e.g. "ROCm"; "" for ternion's
	PerDevice   bool   // Name + "_<n>" sets it for device n only (HSA_OVERRIDE_GFX_VERSION_1)

	check func(string) error // the kind's parser, run on a set, non-blank value
}

// Describe is the switch's one-line description as listings print it: the
// meaning, the default, the ggml name in brackets, and whether it has no
// effect yet.
func (s *Switch) Describe() string {
	var b strings.Builder
	if s.Owner != "" {
		b.WriteString(s.Owner + "'s own: ")
	}
	b.WriteString(s.Meaning)
	if s.Default != "" {
		b.WriteString("; default " + s.Default)
	}
	if s.GGML != "" {
		b.WriteString(" [" + s.GGML + "]")
	}
	if s.NoEffectYet {
		b.WriteString(" " + NoEffectYetNote)
	}
	return b.String()
}

// NoEffectYetNote marks a switch whose reader, core/, is not written yet.
const NoEffectYetNote = "(no effect yet: read by core/, not written)"

// Of is a switch whose values parse to T: Of[bool] for switches that are on
// or off, Of[int] for counts, Of[uint64] for sizes, and so on. Read it with
// Get (or On, Int).
type Of[T any] struct {
	*Switch
	parse func(string) (T, error)
	def   T // the value when the variable is unset or blank
}

// DefaultValue returns the value that applies when the variable is unset or
// blank.
func (s Of[T]) DefaultValue() T { return s.def }

// ErrMalformed is wrapped by every *Error; match it with errors.Is.
var ErrMalformed = errors.New("malformed switch value")

// Error is a switch set to a value its parser rejects.
type Error struct {
	Name   string // the variable as set, e.g. "TERNION_HOST_MEMORY" or "HSA_OVERRIDE_GFX_VERSION_1"
	Value  string // the value as set
	Reason string // what is wrong with it
}

// Error names the variable, its value (quoted, at most quote.Max bytes of it)
// and what is wrong: TERNION_HOST_MEMORY="-5": the size is negative.
func (e *Error) Error() string {
	return e.Name + "=" + quote.Q(e.Value) + ": " + e.Reason
}

// Unwrap returns ErrMalformed.
func (e *Error) Unwrap() error { return ErrMalformed }
