package kernels

import (
	"io/fs"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/vendorapi"
)

var entryRE = regexp.MustCompile(`extern\s+"C"\s+__global__\s+void\s+(\w+)\s*\(([^)]*)\)`)

// cKind maps a C parameter declaration to its catalog kind.
func cKind(decl string) vendorapi.ParamKind {
	d := strings.TrimSpace(decl)
	switch {
	case strings.Contains(d, "*"):
		return vendorapi.ParamPtr
	case strings.HasPrefix(d, "ternion_i64 "), strings.HasPrefix(d, "long long "):
		return vendorapi.ParamI64
	case strings.HasPrefix(d, "ternion_u32 "), strings.HasPrefix(d, "unsigned int "):
		return vendorapi.ParamU32
	case strings.HasPrefix(d, "int "):
		return vendorapi.ParamI32
	case strings.HasPrefix(d, "float "):
		return vendorapi.ParamF32
	}
	return 0
}

type entry struct {
	file   string
	params []string
}

func sourceEntries(t *testing.T) map[string]entry {
	t.Helper()
	files, err := fs.Glob(Sources, "*.cu")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	out := map[string]entry{}
	for _, f := range files {
		b, err := Sources.ReadFile(f)
		require.NoError(t, err)
		for _, m := range entryRE.FindAllStringSubmatch(string(b), -1) {
			_, dup := out[m[1]]
			require.False(t, dup, "entry point %s defined twice", m[1])
			var params []string
			if strings.TrimSpace(m[2]) != "" {
				params = strings.Split(m[2], ",")
			}
			out[m[1]] = entry{file: f, params: params}
		}
	}
	return out
}

func TestCatalogMatchesSources(t *testing.T) {
	src := sourceEntries(t)
	seen := map[string]bool{}
	for _, k := range Catalog {
		t.Run(k.Name, func(t *testing.T) {
			require.False(t, seen[k.Name], "catalog lists %s twice", k.Name)
			seen[k.Name] = true
			e, ok := src[k.Name]
			require.True(t, ok, "catalog kernel %s has no extern \"C\" entry point in the .cu sources", k.Name)
			assert.Equal(t, k.Source, e.file, "catalog names the wrong source file")
			require.Len(t, e.params, len(k.Params), "parameter count differs from the source")
			for i, p := range k.Params {
				assert.Equal(t, p.Kind, cKind(e.params[i]), "parameter %d (%s): source declares %q", i, p.Name, e.params[i])
				assert.True(t, strings.HasSuffix(strings.TrimSpace(e.params[i]), p.Name), "parameter %d is named %q in the source", i, e.params[i])
			}
		})
	}
	for name, e := range src {
		assert.True(t, seen[name], "entry point %s in %s is missing from the catalog", name, e.file)
	}
}

func TestLookup(t *testing.T) {
	k, err := Lookup("add_f32")
	require.NoError(t, err)
	assert.Equal(t, []vendorapi.ParamKind{vendorapi.ParamPtr, vendorapi.ParamPtr, vendorapi.ParamPtr, vendorapi.ParamI64}, k.Kinds())
	_, err = Lookup("no_such_kernel")
	require.ErrorIs(t, err, vendorapi.ErrInvalidValue)
	assert.Contains(t, err.Error(), "no_such_kernel")
}
