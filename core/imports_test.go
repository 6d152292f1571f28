package core

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// allowed are the module's packages core may import besides its own.
var allowed = map[string]bool{
	"github.com/ternion/ternion/vendorapi":      true,
	"github.com/ternion/ternion/arch":           true,
	"github.com/ternion/ternion/switches":       true,
	"github.com/ternion/ternion/internal/quote": true,
	"github.com/ternion/ternion/internal/half":  true,
	"github.com/ternion/ternion/internal/le":    true,
	"github.com/ternion/ternion/internal/align": true,
	"github.com/ternion/ternion/quant":          true,
}

// TestImports checks DESIGN.md's rule: core imports vendorapi and arch (and
// the switch list and small helpers), never a vendor shim or the host device.
func TestImports(t *testing.T) {
	const module = "github.com/ternion/ternion/"
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if strings.HasPrefix(p, module) && !strings.HasPrefix(p, module+"core/") && !allowed[p] {
				t.Errorf("%s imports %s", path, p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
