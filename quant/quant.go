// Package quant holds ggml's quantized block formats in Go: byte-identical
// block layouts, the reference quantizers ggml uses without an importance
// matrix, and the dequantizers, bit-exact with ggml's CPU code. It is the
// ground truth for the host device's kernels and for the reference the GPU
// results are checked against, and model code can use it to read and write
// GGUF tensors.
//
// A Format is looked up by its ggml type id (ggml_type; tensor.Type's
// values):
//
//	f, _ := quant.Lookup(2) // q4_0
//	blocks := make([]byte, f.RowBytes(len(row)))
//	err := f.Quantize(blocks, row)
package quant

import (
	"errors"
	"fmt"
)

// Format is one block format: BlockElems values stored in BlockBytes bytes.
type Format struct {
	ID         int    // ggml's type id
	Name       string // ggml's type name ("q4_K")
	BlockElems int    // values in one block
	BlockBytes int    // bytes of one block

	// dequant decodes one block into dst[:BlockElems].
	dequant func(dst []float32, blk []byte)
	// quant encodes src[:BlockElems] into blk[:BlockBytes]; nil when ggml
	// has no quantizer without an importance matrix.
	quant func(blk []byte, src []float32)
}

// ErrNoQuantizer is returned by Quantize for formats ggml only quantizes
// with an importance matrix (or not at all).
var ErrNoQuantizer = errors.New("quant: no reference quantizer for this format")

var formats = map[int]*Format{}

// register adds f to the formats Lookup finds; a second registration of an
// id is a programming error.
func register(f Format) {
	if _, dup := formats[f.ID]; dup {
		panic(fmt.Sprintf("quant: format %d (%s) registered twice", f.ID, f.Name))
	}
	formats[f.ID] = &f
}

// Lookup returns the format of ggml type id, if quant has it.
func Lookup(id int) (*Format, bool) {
	f, ok := formats[id]
	return f, ok
}

// Formats returns every registered format, by type id.
func Formats() []*Format {
	out := make([]*Format, 0, len(formats))
	for id := 0; len(out) < len(formats); id++ {
		if f, ok := formats[id]; ok {
			out = append(out, f)
		}
	}
	return out
}

// String is the format's ggml name.
func (f *Format) String() string { return f.Name }

// CanQuantize reports whether Quantize works for f.
func (f *Format) CanQuantize() bool { return f.quant != nil }

// RowBytes is the size of n values in f; n must be a multiple of BlockElems.
func (f *Format) RowBytes(n int) int { return n / f.BlockElems * f.BlockBytes }

// blocks checks that n values fill whole blocks and returns how many.
func (f *Format) blocks(n int) (int, error) {
	if n%f.BlockElems != 0 {
		return 0, fmt.Errorf("quant: %d values of %s are not a multiple of its block of %d", n, f.Name, f.BlockElems)
	}
	return n / f.BlockElems, nil
}

// Dequantize decodes len(dst) values from src, whole blocks back to back.
func (f *Format) Dequantize(dst []float32, src []byte) error {
	nb, err := f.blocks(len(dst))
	if err != nil {
		return err
	}
	if len(src) < nb*f.BlockBytes {
		return fmt.Errorf("quant: %d bytes hold fewer than the %d blocks of %s that %d values need", len(src), nb, f.Name, len(dst))
	}
	for i := range nb {
		f.dequant(dst[i*f.BlockElems:(i+1)*f.BlockElems], src[i*f.BlockBytes:(i+1)*f.BlockBytes])
	}
	return nil
}

// Quantize encodes src into dst (RowBytes(len(src)) bytes) block by block,
// as ggml's reference quantizer of the format does.
func (f *Format) Quantize(dst []byte, src []float32) error {
	if f.quant == nil {
		return fmt.Errorf("%w: %s", ErrNoQuantizer, f.Name)
	}
	nb, err := f.blocks(len(src))
	if err != nil {
		return err
	}
	if len(dst) < nb*f.BlockBytes {
		return fmt.Errorf("quant: %d bytes cannot hold the %d blocks of %s that %d values need", len(dst), nb, f.Name, len(src))
	}
	for i := range nb {
		f.quant(dst[i*f.BlockBytes:(i+1)*f.BlockBytes], src[i*f.BlockElems:(i+1)*f.BlockElems])
	}
	return nil
}
