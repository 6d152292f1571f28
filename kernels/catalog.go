package kernels

import (
	"embed"
	"fmt"

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

// Kernel is one catalog entry: an extern "C" entry point and its parameters.
type Kernel struct {
	Name   string
	Source string // .cu file that defines it
	Params []Param
	Doc    string
}

// Kinds returns the parameter kinds in order.
func (k Kernel) Kinds() []vendorapi.ParamKind {
	out := make([]vendorapi.ParamKind, len(k.Params))
	for i, p := range k.Params {
		out[i] = p.Kind
	}
	return out
}

var (
	ptr = vendorapi.ParamPtr
	i64 = vendorapi.ParamI64
	f32 = vendorapi.ParamF32
)

// Catalog lists every kernel, in the order of their source files.
var Catalog = []Kernel{
	{Name: "fill_f32", Source: "fill.cu", Doc: "dst[i] = value for i < n",
		Params: []Param{{"dst", ptr}, {"value", f32}, {"n", i64}}},
	{Name: "fill_u32", Source: "fill.cu", Doc: "dst[i] = value bits for i < n (any 4-byte type)",
		Params: []Param{{"dst", ptr}, {"value", vendorapi.ParamU32}, {"n", i64}}},
	{Name: "add_f32", Source: "binary.cu", Doc: "dst[i] = a[i] + b[i] for i < n",
		Params: []Param{{"dst", ptr}, {"a", ptr}, {"b", ptr}, {"n", i64}}},
	{Name: "mul_f32", Source: "binary.cu", Doc: "dst[i] = a[i] * b[i] for i < n",
		Params: []Param{{"dst", ptr}, {"a", ptr}, {"b", ptr}, {"n", i64}}},
	{Name: "noop", Source: "noop.cu", Doc: "does nothing: the smallest launch, for overhead benchmarks"},
	{Name: "scale_f32", Source: "scale.cu", Doc: "dst[i] = src[i]*scale + bias for i < n",
		Params: []Param{{"dst", ptr}, {"src", ptr}, {"scale", f32}, {"bias", f32}, {"n", i64}}},
}

// Lookup returns the catalog entry named name.
func Lookup(name string) (Kernel, error) {
	for _, k := range Catalog {
		if k.Name == name {
			return k, nil
		}
	}
	return Kernel{}, fmt.Errorf("kernel %q is not in the catalog: %w", name, vendorapi.ErrInvalidValue)
}
