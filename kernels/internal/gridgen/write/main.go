// Command write writes kernels/quant_grids.h from quant/grids/*.txt (see
// package gridgen); `go generate ./kernels` runs it from the kernels
// directory.
package main

import (
	"bytes"
	"fmt"
	"os"

	"github.com/ternion/ternion/kernels/internal/gridgen"
)

func main() {
	h, err := gridgen.Generate(os.DirFS(gridgen.GridsDir))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if old, err := os.ReadFile(gridgen.Header); err == nil && bytes.Equal(old, h) {
		return
	}
	if err := os.WriteFile(gridgen.Header, h, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
