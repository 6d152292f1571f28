package vendorapi

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"unsafe"
)

// ParamKind is the type of one kernel parameter in the catalog: a scalar, a
// device pointer, or a struct passed by value (a tensor descriptor, fast
// division constants). Every kind has a fixed size and alignment, the same
// in Go and in every device compiler (kernels/abi.h states them in C).
type ParamKind uint8

// Kernel parameter kinds.
const (
	ParamPtr     ParamKind = iota + 1 // device pointer (void *)
	ParamI32                          // int32 (int)
	ParamU32                          // uint32 (unsigned int)
	ParamI64                          // int64 (long long)
	ParamF32                          // float32 (float)
	ParamTensor                       // TensorDesc (ternion_tensor)
	ParamFastDiv                      // FastDiv (ternion_fastdiv, ggml's uint3 of init_fastdiv_values)
	paramKinds                        // one past the last kind
)

// kindInfo is one kind's layout and names.
type kindInfo struct {
	size, align int
	name, ctype string
}

var kindTable = [paramKinds]kindInfo{
	ParamPtr:     {8, 8, "ptr", "void *"},
	ParamI32:     {4, 4, "int32", "int"},
	ParamU32:     {4, 4, "uint32", "ternion_u32"},
	ParamI64:     {8, 8, "int64", "ternion_i64"},
	ParamF32:     {4, 4, "float32", "float"},
	ParamTensor:  {TensorDescSize, 8, "tensor", "ternion_tensor"},
	ParamFastDiv: {FastDivSize, 4, "fastdiv", "ternion_fastdiv"},
}

// ParamKinds lists every kind, in declaration order.
func ParamKinds() []ParamKind {
	out := make([]ParamKind, 0, paramKinds-1)
	for k := ParamPtr; k < paramKinds; k++ {
		out = append(out, k)
	}
	return out
}

func (k ParamKind) info() kindInfo {
	if k == 0 || k >= paramKinds {
		return kindInfo{}
	}
	return kindTable[k]
}

// Size returns the parameter's size in bytes (0 for an unknown kind).
func (k ParamKind) Size() int { return k.info().size }

// Align returns the parameter's alignment in bytes (0 for an unknown kind).
func (k ParamKind) Align() int { return k.info().align }

// CType is the C type a kernel declares for the parameter: the type of the
// generated entry points' parameters (a pointer is void *; a kernel body may
// take a typed pointer).
func (k ParamKind) CType() string { return k.info().ctype }

// String names the kind.
func (k ParamKind) String() string {
	if n := k.info().name; n != "" {
		return n
	}
	return fmt.Sprintf("ParamKind(%d)", uint8(k))
}

// MaxArgBytes bounds a launch's packed arguments: the 4 KiB every vendor
// accepts (CUDA before 12.1, HIP, MUSA).
const MaxArgBytes = 4096

// TensorDesc is a tensor as a kernel sees it: ggml's data pointer, element
// counts ne and byte strides nb of its four dimensions. Passed by value as
// one parameter (ternion_tensor in kernels/abi.h), so a kernel's geometry is
// one argument that cannot be passed with ne and nb swapped.
type TensorDesc struct {
	Data DevicePtr // first element
	Ne   [4]int64  // elements per dimension
	Nb   [4]int64  // bytes between consecutive elements of each dimension
}

// TensorDescSize is the size of TensorDesc and of C's ternion_tensor.
const TensorDescSize = 72

// FastDiv holds the constants of division by D with a multiply and a shift
// (ggml's init_fastdiv_values, passed to kernels as a uint3): for n < 2^31,
// n/D = (umulhi(n, Mp) + n) >> L.
type FastDiv struct {
	Mp, L, D uint32
}

// FastDivSize is the size of FastDiv and of C's ternion_fastdiv.
const FastDivSize = 12

// NewFastDiv returns the fast-division constants for divisor d (d > 0).
func NewFastDiv(d uint32) FastDiv {
	l := uint32(bits.Len32(d - 1)) // the least l with 2^l >= d
	mp := uint32((uint64(1)<<32)*((uint64(1)<<l)-uint64(d))/uint64(d) + 1)
	return FastDiv{Mp: mp, L: l, D: d}
}

// Div returns n/D as a kernel computes it (exact for n < 2^31).
func (f FastDiv) Div(n uint32) uint32 {
	hi := uint32((uint64(n) * uint64(f.Mp)) >> 32)
	return uint32((uint64(hi) + uint64(n)) >> f.L)
}

// Mod returns n%D as a kernel computes it (exact for n < 2^31).
func (f FastDiv) Mod(n uint32) uint32 { return n - f.Div(n)*f.D }

// Args is one launch's arguments, packed (little-endian, as every device
// ternion supports stores them) as a C compiler lays out the kernel's
// parameter list (each value at the next offset aligned for its
// kind), with the kind of every argument so Launch can check them against
// the catalog. Build it with the chaining methods; Reset reuses its memory,
// so a caller launching in a loop allocates nothing.
//
//	var a vendorapi.Args
//	a.Ptr(dst).F32(scale).I64(n)
type Args struct {
	b     []byte
	kinds []ParamKind
}

// NewArgs returns empty Args.
func NewArgs() *Args { return &Args{} }

// Reset empties a, keeping its memory.
func (a *Args) Reset() *Args {
	a.b, a.kinds = a.b[:0], a.kinds[:0]
	return a
}

// Bytes returns the packed argument bytes.
func (a *Args) Bytes() []byte {
	if a == nil {
		return nil
	}
	return a.b
}

// Kinds returns the kind of each argument, in order.
func (a *Args) Kinds() []ParamKind {
	if a == nil {
		return nil
	}
	return a.kinds
}

// Offsets returns each argument's byte offset in Bytes (Layout of Kinds).
func (a *Args) Offsets() []uint32 {
	offs, _ := Layout(a.Kinds())
	return offs
}

// Len returns the number of arguments.
func (a *Args) Len() int {
	if a == nil {
		return 0
	}
	return len(a.kinds)
}

// Clone returns a copy of a that shares no memory with it.
func (a *Args) Clone() *Args {
	if a == nil {
		return &Args{}
	}
	return &Args{b: slices.Clone(a.b), kinds: slices.Clone(a.kinds)}
}

// slot appends the padding before an argument of kind k and room for it,
// returning the argument's bytes.
func (a *Args) slot(k ParamKind) []byte {
	info := &kindTable[k]
	start := len(a.b)
	off := (start + info.align - 1) &^ (info.align - 1)
	n := off + info.size
	if n > cap(a.b) {
		a.b = slices.Grow(a.b, n-start+128)
	}
	a.b = a.b[:n]
	if off != start {
		clear(a.b[start:off])
	}
	a.kinds = append(a.kinds, k)
	return a.b[off:n:n]
}

// Ptr appends a device pointer.
func (a *Args) Ptr(p DevicePtr) *Args {
	binary.LittleEndian.PutUint64(a.slot(ParamPtr), uint64(p))
	return a
}

// I32 appends an int32.
func (a *Args) I32(v int32) *Args {
	binary.LittleEndian.PutUint32(a.slot(ParamI32), uint32(v))
	return a
}

// U32 appends a uint32.
func (a *Args) U32(v uint32) *Args {
	binary.LittleEndian.PutUint32(a.slot(ParamU32), v)
	return a
}

// I64 appends an int64.
func (a *Args) I64(v int64) *Args {
	binary.LittleEndian.PutUint64(a.slot(ParamI64), uint64(v))
	return a
}

// F32 appends a float32.
func (a *Args) F32(v float32) *Args {
	binary.LittleEndian.PutUint32(a.slot(ParamF32), math.Float32bits(v))
	return a
}

// Tensor appends a tensor descriptor.
func (a *Args) Tensor(t TensorDesc) *Args {
	b := a.slot(ParamTensor)
	if uintptr(unsafe.Pointer(&b[0]))%8 == 0 { // the usual case: one copy (little-endian, C's layout: TestABIHeader)
		*(*TensorDesc)(unsafe.Pointer(&b[0])) = t
		return a
	}
	binary.LittleEndian.PutUint64(b, uint64(t.Data))
	for i := range 4 {
		binary.LittleEndian.PutUint64(b[8+8*i:], uint64(t.Ne[i]))
		binary.LittleEndian.PutUint64(b[40+8*i:], uint64(t.Nb[i]))
	}
	return a
}

// FastDiv appends fast-division constants.
func (a *Args) FastDiv(f FastDiv) *Args {
	b := a.slot(ParamFastDiv)
	if uintptr(unsafe.Pointer(&b[0]))%4 == 0 {
		*(*FastDiv)(unsafe.Pointer(&b[0])) = f
		return a
	}
	binary.LittleEndian.PutUint32(b, f.Mp)
	binary.LittleEndian.PutUint32(b[4:], f.L)
	binary.LittleEndian.PutUint32(b[8:], f.D)
	return a
}

// at returns argument i's bytes; it panics when i is out of range or not of
// kind k (a programming error of the reader, who checked the kinds first).
func (a *Args) at(i int, k ParamKind) []byte {
	if a.kinds[i] != k {
		panic(fmt.Sprintf("vendorapi: argument %d is %s, read as %s", i, a.kinds[i], k))
	}
	off := 0
	for _, p := range a.kinds[:i] { // the offset of argument i, as slot placed it
		off = (off+p.Align()-1)&^(p.Align()-1) + p.Size()
	}
	off = (off + k.Align() - 1) &^ (k.Align() - 1)
	return a.b[off : off+k.Size()]
}

// PtrAt returns argument i, a device pointer.
func (a *Args) PtrAt(i int) DevicePtr {
	return DevicePtr(binary.LittleEndian.Uint64(a.at(i, ParamPtr)))
}

// I32At returns argument i, an int32.
func (a *Args) I32At(i int) int32 { return int32(binary.LittleEndian.Uint32(a.at(i, ParamI32))) }

// U32At returns argument i, a uint32.
func (a *Args) U32At(i int) uint32 { return binary.LittleEndian.Uint32(a.at(i, ParamU32)) }

// I64At returns argument i, an int64.
func (a *Args) I64At(i int) int64 { return int64(binary.LittleEndian.Uint64(a.at(i, ParamI64))) }

// F32At returns argument i, a float32.
func (a *Args) F32At(i int) float32 {
	return math.Float32frombits(binary.LittleEndian.Uint32(a.at(i, ParamF32)))
}

// TensorAt returns argument i, a tensor descriptor.
func (a *Args) TensorAt(i int) TensorDesc {
	b := a.at(i, ParamTensor)
	t := TensorDesc{Data: DevicePtr(binary.LittleEndian.Uint64(b))}
	for j := range 4 {
		t.Ne[j] = int64(binary.LittleEndian.Uint64(b[8+8*j:]))
		t.Nb[j] = int64(binary.LittleEndian.Uint64(b[40+8*j:]))
	}
	return t
}

// FastDivAt returns argument i, fast-division constants.
func (a *Args) FastDivAt(i int) FastDiv {
	b := a.at(i, ParamFastDiv)
	return FastDiv{Mp: binary.LittleEndian.Uint32(b), L: binary.LittleEndian.Uint32(b[4:]), D: binary.LittleEndian.Uint32(b[8:])}
}

// Layout returns the offset of each parameter of a list of kinds packed as
// Args packs them, and the packed size.
func Layout(kinds []ParamKind) (offsets []uint32, size int) {
	offsets = make([]uint32, len(kinds))
	for i, k := range kinds {
		align := max(k.Align(), 1)
		size = (size + align - 1) &^ (align - 1)
		offsets[i] = uint32(size)
		size += k.Size()
	}
	return offsets, size
}

// CheckArgs reports whether args match the parameter kinds params of kernel
// name and fit in MaxArgBytes.
func CheckArgs(name string, params []ParamKind, args *Args) error {
	kinds := args.Kinds()
	if len(kinds) != len(params) {
		return fmt.Errorf("kernel %s takes %d arguments (%s), got %d (%s): %w", name, len(params), kindList(params), len(kinds), kindList(kinds), ErrInvalidValue)
	}
	for i, p := range params {
		if kinds[i] != p {
			return fmt.Errorf("kernel %s argument %d is %s, got %s: %w", name, i, p, kinds[i], ErrInvalidValue)
		}
	}
	if len(args.Bytes()) > MaxArgBytes {
		return fmt.Errorf("kernel %s: %d bytes of arguments exceed the %d a launch passes: %w", name, len(args.Bytes()), MaxArgBytes, ErrInvalidValue)
	}
	return nil
}

// kindList formats kinds as "ptr, f32, int64".
func kindList(kinds []ParamKind) string {
	if len(kinds) == 0 {
		return "none"
	}
	s := ""
	for i, k := range kinds {
		if i > 0 {
			s += ", "
		}
		s += k.String()
	}
	return s
}
