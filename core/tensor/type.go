// Package tensor holds ggml's tensor data model, independent of any device:
// element types (numbered as ggml's enum ggml_type, so GGUF files map one to
// one) with their block sizes, and Layout, the shape and byte strides of a
// tensor with ggml's views, permutations and contiguity predicates.
package tensor

import (
	"fmt"
	"strings"
)

// Type is a tensor element type, numbered as ggml's enum ggml_type. A
// quantized type stores blocks of BlockSize elements in BlockBytes bytes.
type Type uint32

// The element types, with ggml's numbers (gaps are types ggml removed).
const (
	F32     Type = 0
	F16     Type = 1
	Q4_0    Type = 2
	Q4_1    Type = 3
	Q5_0    Type = 6
	Q5_1    Type = 7
	Q8_0    Type = 8
	Q8_1    Type = 9
	Q2_K    Type = 10
	Q3_K    Type = 11
	Q4_K    Type = 12
	Q5_K    Type = 13
	Q6_K    Type = 14
	Q8_K    Type = 15
	IQ2_XXS Type = 16
	IQ2_XS  Type = 17
	IQ3_XXS Type = 18
	IQ1_S   Type = 19
	IQ4_NL  Type = 20
	IQ3_S   Type = 21
	IQ2_S   Type = 22
	IQ4_XS  Type = 23
	I8      Type = 24
	I16     Type = 25
	I32     Type = 26
	I64     Type = 27
	F64     Type = 28
	IQ1_M   Type = 29
	BF16    Type = 30
	TQ1_0   Type = 34
	TQ2_0   Type = 35
	MXFP4   Type = 39
)

// QK_K is the block size of the k-quants and most i-quants (ggml's QK_K).
const QK_K = 256

// traits is one type's name and block geometry (ggml's type_traits).
type traits struct {
	name       string
	blockSize  int64 // elements per block (1 for plain types)
	blockBytes int64 // bytes per block
	quantized  bool
}

var typeTraits = map[Type]traits{
	F32:     {"f32", 1, 4, false},
	F16:     {"f16", 1, 2, false},
	BF16:    {"bf16", 1, 2, false},
	F64:     {"f64", 1, 8, false},
	I8:      {"i8", 1, 1, false},
	I16:     {"i16", 1, 2, false},
	I32:     {"i32", 1, 4, false},
	I64:     {"i64", 1, 8, false},
	Q4_0:    {"q4_0", 32, 2 + 16, true},            // f16 d; u8 qs[16]
	Q4_1:    {"q4_1", 32, 2 + 2 + 16, true},        // f16 d, m; u8 qs[16]
	Q5_0:    {"q5_0", 32, 2 + 4 + 16, true},        // f16 d; u32 qh; u8 qs[16]
	Q5_1:    {"q5_1", 32, 2 + 2 + 4 + 16, true},    // f16 d, m; u32 qh; u8 qs[16]
	Q8_0:    {"q8_0", 32, 2 + 32, true},            // f16 d; i8 qs[32]
	Q8_1:    {"q8_1", 32, 2 + 2 + 32, true},        // f16 d, s; i8 qs[32]
	Q2_K:    {"q2_K", QK_K, 16 + 64 + 2 + 2, true}, // scales[16], qs[64], f16 d, dmin
	Q3_K:    {"q3_K", QK_K, 32 + 64 + 12 + 2, true},
	Q4_K:    {"q4_K", QK_K, 2 + 2 + 12 + 128, true},
	Q5_K:    {"q5_K", QK_K, 2 + 2 + 12 + 32 + 128, true},
	Q6_K:    {"q6_K", QK_K, 128 + 64 + 16 + 2, true},
	Q8_K:    {"q8_K", QK_K, 4 + 256 + 2*16, true}, // f32 d; i8 qs[256]; i16 bsums[16]
	IQ2_XXS: {"iq2_xxs", QK_K, 2 + 64, true},
	IQ2_XS:  {"iq2_xs", QK_K, 2 + 64 + 8, true},
	IQ2_S:   {"iq2_s", QK_K, 2 + 64 + 8 + 8, true},
	IQ3_XXS: {"iq3_xxs", QK_K, 2 + 96, true},
	IQ3_S:   {"iq3_s", QK_K, 2 + 64 + 8 + 32 + 4, true},
	IQ1_S:   {"iq1_s", QK_K, 2 + 32 + 16, true},
	IQ1_M:   {"iq1_m", QK_K, 32 + 16 + 8, true},
	IQ4_NL:  {"iq4_nl", 32, 2 + 16, true},
	IQ4_XS:  {"iq4_xs", QK_K, 2 + 2 + 4 + 128, true},
	TQ1_0:   {"tq1_0", QK_K, 48 + 4 + 2, true},
	TQ2_0:   {"tq2_0", QK_K, 64 + 2, true},
	MXFP4:   {"mxfp4", 32, 1 + 16, true}, // e8m0 e; u8 qs[16]
}

// Types lists every type, in ggml's numbering order.
func Types() []Type {
	out := make([]Type, 0, len(typeTraits))
	for t := Type(0); t <= MXFP4; t++ {
		if _, ok := typeTraits[t]; ok {
			out = append(out, t)
		}
	}
	return out
}

// Valid reports whether t is a type ternion knows.
func (t Type) Valid() bool { _, ok := typeTraits[t]; return ok }

// String is ggml's type name: "f32", "q4_0", "q4_K", "iq2_xxs".
func (t Type) String() string {
	if tr, ok := typeTraits[t]; ok {
		return tr.name
	}
	return fmt.Sprintf("type(%d)", uint32(t))
}

// BlockSize is the number of elements in one block (1 for plain types).
func (t Type) BlockSize() int64 { return typeTraits[t].blockSize }

// BlockBytes is the size of one block in bytes (ggml's type_size).
func (t Type) BlockBytes() int64 { return typeTraits[t].blockBytes }

// IsQuantized reports whether t stores elements in quantized blocks.
func (t Type) IsQuantized() bool { return typeTraits[t].quantized }

// IsFloat reports whether t is F32, F16, BF16 or F64.
func (t Type) IsFloat() bool { return t == F32 || t == F16 || t == BF16 || t == F64 }

// RowSize is the number of bytes n elements of t take (ggml_row_size); n
// must be a multiple of the block size.
func (t Type) RowSize(n int64) int64 {
	tr := typeTraits[t]
	if tr.blockSize == 0 {
		return 0
	}
	return tr.blockBytes * n / tr.blockSize
}

// ParseType returns the type named name (ggml's names, case-insensitive).
func ParseType(name string) (Type, error) {
	for t, tr := range typeTraits {
		if strings.EqualFold(tr.name, name) {
			return t, nil
		}
	}
	return 0, fmt.Errorf("tensor: unknown type %q", name)
}
