package switches

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ternion/ternion/internal/quote"
)

// notSwitchFiles may hold TERNION_ string literals that are no environment
// variables; none of them may be, or contain, a switch's name.
var notSwitchFiles = map[string]string{
	"internal/gpushim/status.go": "the shim's own error code names (TERNION_NO_KERNEL, …)",
	"kernels/unit.go":            "vendor.h's macros the generated entry points use (TERNION_CLUSTER_DIMS)",
}

// TestNoSwitchBehindTheList scans every non-test .go file of the module
// outside this package: a string literal that starts with "TERNION_" or
// holds a switch's name, or a call of os.Getenv or os.LookupEnv, means
// some code reads (or names) a variable without this package's list.
func TestNoSwitchBehindTheList(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range all {
		if strings.HasPrefix(s.Name, Prefix) {
			names = append(names, s.Name)
		}
	}
	files := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel == "switches" || rel != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		files++
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.BasicLit:
				if n.Kind != token.STRING {
					return true
				}
				v, err := strconv.Unquote(n.Value)
				if err != nil {
					return true
				}
				for _, name := range names {
					if strings.Contains(v, name) {
						t.Errorf("%s: %q names switch %s: use its Name from package switches", fset.Position(n.Pos()), quote.Text(v), name)
						return true
					}
				}
				if _, ok := notSwitchFiles[rel]; !ok && strings.HasPrefix(v, Prefix) {
					t.Errorf("%s: %q: a TERNION_ variable outside package switches; add it to the list", fset.Position(n.Pos()), quote.Text(v))
				}
			case *ast.CallExpr:
				if sel, ok := n.Fun.(*ast.SelectorExpr); ok {
					if x, ok := sel.X.(*ast.Ident); ok && x.Name == "os" && (sel.Sel.Name == "Getenv" || sel.Sel.Name == "LookupEnv") {
						t.Errorf("%s: os.%s: read environment variables through package switches", fset.Position(n.Pos()), sel.Sel.Name)
					}
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 50 {
		t.Fatalf("scanned only %d files under %s", files, root)
	}
}
