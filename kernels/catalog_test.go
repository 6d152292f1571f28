package kernels

import (
	"io/fs"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/vendorapi"
)

var (
	entryRE    = regexp.MustCompile(`extern\s+"C"\s+__global__\s+void\s+(?:__launch_bounds__\(\d+(?:,\s*\d+)?\)\s+)?(?:TERNION_CLUSTER_DIMS\(\d+\)\s+)?(\w+)\s*\(([^)]*)\)`)
	templateRE = regexp.MustCompile(`template\s*<[^>]*>\s*[^;{()]*?__device__[^;{()]*?\bvoid\s+(\w+)\s*\(([^)]*)\)`)
	includeRE  = regexp.MustCompile(`(?m)^\s*#\s*include\s+"([^"]+)"`)
)

// cKind maps a C parameter declaration to its catalog kind (0 for none).
func cKind(decl string) vendorapi.ParamKind {
	d := strings.TrimSpace(decl)
	d = strings.TrimPrefix(d, "const ")
	switch {
	case strings.Contains(d, "*"):
		return vendorapi.ParamPtr
	case strings.HasPrefix(d, "ternion_tensor "):
		return vendorapi.ParamTensor
	case strings.HasPrefix(d, "ternion_fastdiv "):
		return vendorapi.ParamFastDiv
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

// signature is a function found in a source: its file and parameter declarations.
type signature struct {
	file   string
	params []string
}

func splitParams(s string) []string {
	if strings.TrimSpace(s) == "" {
		return nil
	}
	return strings.Split(s, ",")
}

// scan finds every match of re in the sources named files, by function name.
func scan(t *testing.T, re *regexp.Regexp, files map[string]string) map[string]signature {
	t.Helper()
	out := map[string]signature{}
	for f, text := range files {
		for _, m := range re.FindAllStringSubmatch(text, -1) {
			prev, dup := out[m[1]]
			require.False(t, dup, "%s defined twice (%s and %s)", m[1], prev.file, f)
			out[m[1]] = signature{file: f, params: splitParams(m[2])}
		}
	}
	return out
}

func cuFiles(t *testing.T) map[string]string {
	t.Helper()
	names, err := fs.Glob(Sources, "*.cu")
	require.NoError(t, err)
	require.NotEmpty(t, names)
	out := map[string]string{}
	for _, n := range names {
		b, err := Sources.ReadFile(n)
		require.NoError(t, err)
		out[n] = string(b)
	}
	return out
}

// checkParams compares a source's parameter declarations with the catalog's.
func checkParams(t *testing.T, what string, params []Param, decls []string) {
	t.Helper()
	require.Len(t, decls, len(params), "%s: parameter count differs from the catalog", what)
	for i, p := range params {
		assert.Equal(t, p.Kind, cKind(decls[i]), "%s parameter %d (%s): the source declares %q", what, i, p.Name, decls[i])
		assert.True(t, strings.HasSuffix(strings.TrimSpace(decls[i]), p.Name), "%s parameter %d is named %q in the source, %q in the catalog", what, i, decls[i], p.Name)
	}
}

func TestCatalogMatchesSources(t *testing.T) {
	files := cuFiles(t)
	entries := scan(t, entryRE, files)
	bodies := scan(t, templateRE, files)
	written := map[string]bool{}
	for _, k := range Catalog {
		t.Run(k.Name, func(t *testing.T) {
			_, ok := files[k.Source()]
			require.True(t, ok, "family %s has no source %s", k.Family, k.Source())
			if k.Body == "" {
				e, ok := entries[k.Name]
				require.True(t, ok, "catalog kernel %s has no extern \"C\" entry point in the .cu sources", k.Name)
				written[k.Name] = true
				assert.Equal(t, k.Source(), e.file, "catalog names the wrong family")
				checkParams(t, "entry point "+k.Name, k.Params, e.params)
				return
			}
			name, _, _ := strings.Cut(k.Body, "<")
			b, ok := bodies[name]
			require.True(t, ok, "template body %s of %s is not a __device__ function template in the sources", name, k.Name)
			assert.Equal(t, k.Source(), b.file, "template body %s is in another family's source", name)
			checkParams(t, "template body "+name, k.Params, b.params)
		})
	}
	for name, e := range entries {
		assert.True(t, written[name], "entry point %s in %s is missing from the catalog", name, e.file)
	}
}

func TestGeneratedEntryPoints(t *testing.T) {
	for _, f := range Families {
		unit, err := Unit(f.Name)
		require.NoError(t, err)
		assert.Contains(t, unit, `#include "`+f.Name+`.cu"`)
		entries := scan(t, entryRE, map[string]string{UnitName(f.Name): unit})
		n := 0
		for _, k := range f.All() {
			if k.Body == "" {
				assert.NotContains(t, entries, k.Name, "the unit generates %s, which the source writes", k.Name)
				continue
			}
			n++
			e, ok := entries[k.Name]
			require.True(t, ok, "unit of %s lacks the entry point of %s", f.Name, k.Name)
			checkParams(t, "generated "+k.Name, k.Params, e.params)
			assert.Contains(t, unit, k.Body+"(", "the entry point calls its body")
		}
		assert.Len(t, entries, n, "the unit of %s generates only the template instantiations", f.Name)
	}
}

func TestCatalogNamesAreUnique(t *testing.T) {
	seen := map[string]string{}
	for _, k := range Catalog {
		prev, dup := seen[k.Name]
		assert.False(t, dup, "kernel %s is in families %s and %s", k.Name, prev, k.Family)
		seen[k.Name] = k.Family
		got, err := Lookup(k.Name)
		require.NoError(t, err)
		assert.Equal(t, k.Family, got.Family)
	}
	names := make([]string, len(Families))
	for i, f := range Families {
		names[i] = f.Name
	}
	assert.True(t, slices.IsSorted(names), "Families is sorted by name")
	assert.Equal(t, names, slices.Compact(slices.Clone(names)), "family names are unique")
	assert.Equal(t, names, FamilyNames())
	cu := cuFiles(t)
	for f := range cu {
		_, err := LookupFamily(strings.TrimSuffix(f, ".cu"))
		assert.NoError(t, err, "%s is no family's source", f)
	}
}

func TestSourcesIncludeOnlyHeaders(t *testing.T) {
	// A family's hash covers its .cu file and the headers: a .cu file that
	// included another would make that family's code object stale unseen.
	all, err := fs.Glob(Sources, "*")
	require.NoError(t, err)
	for _, n := range all {
		b, err := Sources.ReadFile(n)
		require.NoError(t, err)
		for _, m := range includeRE.FindAllStringSubmatch(string(b), -1) {
			assert.True(t, strings.HasSuffix(m[1], ".h"), "%s includes %s: sources include only headers", n, m[1])
			_, err := Sources.ReadFile(m[1])
			assert.NoError(t, err, "%s includes %s, which is not embedded", n, m[1])
		}
	}
}

func TestTemplateExpansion(t *testing.T) {
	tm := Template{Name: "k_{T}_{op}", Body: "k<{T}, {op}>", Doc: "{op} of {T}",
		Params: []Param{{"x", vendorapi.ParamPtr}},
		Axes: []Axis{{Name: "T", Values: []Value{{"f32", "float"}, {"b16", "unsigned short"}}},
			{Name: "op", Values: []Value{{"add", "op_add"}, {"mul", "op_mul"}}}}}
	ks := tm.expand("fam")
	require.Len(t, ks, 4)
	assert.Equal(t, "k_f32_add", ks[0].Name)
	assert.Equal(t, "k<float, op_add>", ks[0].Body)
	assert.Equal(t, "add of f32", ks[0].Doc)
	assert.Equal(t, map[string]string{"T": "f32", "op": "add"}, ks[0].Bind)
	assert.Equal(t, "k_b16_mul", ks[3].Name)
	assert.Equal(t, "k<unsigned short, op_mul>", ks[3].Body)
	for _, k := range ks {
		assert.Equal(t, "fam", k.Family)
	}
}

func TestLookup(t *testing.T) {
	k, err := Lookup("add_f32")
	require.NoError(t, err)
	assert.Equal(t, []vendorapi.ParamKind{vendorapi.ParamPtr, vendorapi.ParamPtr, vendorapi.ParamPtr, vendorapi.ParamI64}, k.Kinds())
	assert.Equal(t, "binary", k.Family)
	assert.Equal(t, map[string]string{"op": "add"}, k.Bind)
	_, err = Lookup("no_such_kernel")
	require.ErrorIs(t, err, vendorapi.ErrInvalidValue)
	assert.Contains(t, err.Error(), "no_such_kernel")
	_, err = LookupFamily("no_such_family")
	require.ErrorIs(t, err, vendorapi.ErrInvalidValue)
}

// abiDefine reads #define name <int> from abi.h.
func abiDefine(t *testing.T, header, name string) int {
	t.Helper()
	m := regexp.MustCompile(`(?m)^#define ` + name + ` (\d+)$`).FindStringSubmatch(header)
	require.NotNil(t, m, "abi.h defines %s", name)
	v, err := strconv.Atoi(m[1])
	require.NoError(t, err)
	return v
}

// cStructLayout lays out the members of typedef struct name in header as a
// C compiler does on the 64-bit targets ternion supports (natural alignment),
// returning each member's offset by name, the size and the alignment.
func cStructLayout(t *testing.T, header, name string) (offsets map[string]int, size, align int) {
	t.Helper()
	m := regexp.MustCompile(`typedef struct ` + name + ` \{([^}]*)\}`).FindStringSubmatch(header)
	require.NotNil(t, m, "abi.h defines struct %s", name)
	sizes := map[string]int{"void *": 8, "ternion_i64": 8, "ternion_u32": 4}
	memberRE := regexp.MustCompile(`^(void \*|ternion_i64|ternion_u32)\s*(\w+)(?:\[(\d+)\])?$`)
	offsets, align = map[string]int{}, 1
	for _, decl := range strings.Split(m[1], ";") {
		decl = strings.TrimSpace(decl)
		if decl == "" {
			continue
		}
		mm := memberRE.FindStringSubmatch(decl)
		require.NotNil(t, mm, "member %q of %s has a type the test does not know", decl, name)
		sz, count := sizes[mm[1]], 1
		if mm[3] != "" {
			count, _ = strconv.Atoi(mm[3])
		}
		size = (size + sz - 1) / sz * sz
		offsets[mm[2]] = size
		size += sz * count
		align = max(align, sz)
	}
	return offsets, (size + align - 1) / align * align, align
}

func TestABIHeader(t *testing.T) {
	b, err := Sources.ReadFile("abi.h")
	require.NoError(t, err)
	h := string(b)

	offs, size, align := cStructLayout(t, h, "ternion_tensor")
	assert.Equal(t, map[string]int{"data": int(unsafe.Offsetof(vendorapi.TensorDesc{}.Data)),
		"ne": int(unsafe.Offsetof(vendorapi.TensorDesc{}.Ne)), "nb": int(unsafe.Offsetof(vendorapi.TensorDesc{}.Nb))}, offs)
	assert.Equal(t, int(unsafe.Sizeof(vendorapi.TensorDesc{})), size)
	assert.Equal(t, vendorapi.TensorDescSize, size)
	assert.Equal(t, size, abiDefine(t, h, "TERNION_TENSOR_SIZE"))
	assert.Equal(t, align, abiDefine(t, h, "TERNION_TENSOR_ALIGN"))
	assert.Equal(t, vendorapi.ParamTensor.Size(), size)
	assert.Equal(t, vendorapi.ParamTensor.Align(), align)

	offs, size, align = cStructLayout(t, h, "ternion_fastdiv")
	assert.Equal(t, map[string]int{"mp": int(unsafe.Offsetof(vendorapi.FastDiv{}.Mp)),
		"l": int(unsafe.Offsetof(vendorapi.FastDiv{}.L)), "d": int(unsafe.Offsetof(vendorapi.FastDiv{}.D))}, offs)
	assert.Equal(t, int(unsafe.Sizeof(vendorapi.FastDiv{})), size)
	assert.Equal(t, vendorapi.FastDivSize, size)
	assert.Equal(t, size, abiDefine(t, h, "TERNION_FASTDIV_SIZE"))
	assert.Equal(t, align, abiDefine(t, h, "TERNION_FASTDIV_ALIGN"))
	assert.Equal(t, vendorapi.ParamFastDiv.Size(), size)
	assert.Equal(t, vendorapi.ParamFastDiv.Align(), align)

	// Every kind's C type is one the catalog test can read back.
	for _, k := range vendorapi.ParamKinds() {
		assert.Equal(t, k, cKind(k.CType()+" x"), "kind %s (C type %q)", k, k.CType())
	}
}

func TestFamilyHash(t *testing.T) {
	seen := map[string]string{}
	for _, f := range Families {
		h := FamilyHash(f.Name)
		require.Len(t, h, 64, f.Name)
		assert.Equal(t, h, FamilyHash(f.Name), "stable")
		prev, dup := seen[h]
		assert.False(t, dup, "families %s and %s hash alike", prev, f.Name)
		seen[h] = f.Name
		main, names, bodies, err := RTCProgram(f.Name)
		require.NoError(t, err)
		unit, _ := Unit(f.Name)
		assert.Equal(t, unit, main)
		assert.Contains(t, names, f.Name+".cu")
		assert.Contains(t, names, "vendor.h")
		assert.Len(t, bodies, len(names))
	}
	assert.Empty(t, FamilyHash("no_such_family"))
}

// TestMMVQ8WTFormats keeps MMVQ8WTFormats and MMVQ8WTWarps equal to
// quant.cu's mmvq8wt_fmt and MMVQ8WT_WARPS, and its formats to the axis of
// the mmvq8wt kernels.
func TestMMVQ8WTFormats(t *testing.T) {
	b, err := Sources.ReadFile("quant.cu")
	require.NoError(t, err)
	require.Contains(t, string(b), "#define MMVQ8WT_WARPS "+strconv.Itoa(MMVQ8WTWarps)+"\n")
	re := regexp.MustCompile(`struct mmvq8wt_fmt<ternion_(\w+)> \{ static constexpr int GROUP = (\d+), STAGES_R1 = (\d+), STAGES_R2 = (\d+); \};`)
	got := map[string]MMVQ8WTFormat{}
	for _, m := range re.FindAllStringSubmatch(string(b), -1) {
		n := func(s string) int64 { v, err := strconv.ParseInt(s, 10, 64); require.NoError(t, err); return v }
		got[m[1]] = MMVQ8WTFormat{Group: n(m[2]), Stages: [2]int64{n(m[3]), n(m[4])}}
	}
	require.Equal(t, MMVQ8WTFormats, got)
	require.Len(t, mmvq8wtTypes.Values, len(got))
	for _, v := range mmvq8wtTypes.Values {
		require.Contains(t, got, v.Name)
	}
}

// TestMMVTRows keeps MMVTRows equal to mmv.cu's MMVT_ROWS (host and core
// size mmvt's grid by it).
func TestMMVTRows(t *testing.T) {
	b, err := os.ReadFile("mmv.cu")
	require.NoError(t, err)
	require.Contains(t, string(b), "#define MMVT_ROWS "+strconv.Itoa(MMVTRows)+"\n")
}

// TestGemm90Geometry keeps gemm90's Go constants equal to gemm90.cu's:
// the tile, the threads, each format's group bytes, and the shared memory
// formula's terms (core sizes the launch by them).
func TestGemm90Geometry(t *testing.T) {
	b, err := os.ReadFile("gemm90.cu")
	require.NoError(t, err)
	src := string(b)
	for _, def := range []string{"#define GEMM90_BM " + strconv.Itoa(Gemm90Tile), "#define GEMM90_BN " + strconv.Itoa(Gemm90Tile),
		"#define GEMM90_BK 64", "#define GEMM90_STAGES 4", "#define GEMM90_RAW 2", "#define GEMM90_THREADS " + strconv.Itoa(Gemm90Threads),
		"#define GEMM90_SHARED(gs) (GEMM90_STAGES * GEMM90_TILE_B + GEMM90_RAW * 128 * (gs) + 1024)",
		"#define GEMM90_COVER(gb) ((gb) % 16 == 0 ? (gb) : ((gb) + 14 + 15) / 16 * 16)",
		"#define GEMM90_SLOT(gb) (GEMM90_COVER(gb) % 32 == 0 ? GEMM90_COVER(gb) + 16 : GEMM90_COVER(gb))"} {
		require.Contains(t, src, def+"\n")
	}
	for q, group := range Gemm90Groups {
		require.Contains(t, src, "struct g90_"+q+" : g90_group<"+strconv.Itoa(group)+"> {};")
	}
	assert.Equal(t, 4*(128*64*2)+2*128*144+1024, Gemm90Shared("q4_0"))
	// q6_K's 210-byte groups start 2-byte aligned: 14 chunks of 16 bytes
	// cover one wherever it starts (at most 14 bytes past a chunk's start).
	assert.Equal(t, 224, Gemm90Cover("q6_K"))
	assert.Equal(t, 2, Gemm90RowAlign("q6_K"))
	assert.Equal(t, 16, Gemm90RowAlign("q8_0"))
	// Slots are 4 mod 8 words apart (16 mod 32 bytes): 8 rows, 8 groups of
	// 4 banks.
	for q := range Gemm90Groups {
		slot := Gemm90Slot(q)
		assert.Equal(t, 16, slot%32, "%s: slot %d", q, slot)
		assert.GreaterOrEqual(t, slot, Gemm90Cover(q), q)
		assert.Less(t, slot, Gemm90Cover(q)+32, q)
	}
	assert.Equal(t, 144, Gemm90Slot("q4_0"))
	assert.Equal(t, 208, Gemm90Slot("q5_1"))
	assert.Equal(t, 240, Gemm90Slot("q6_K"))
	assert.Equal(t, 4*(128*64*2)+2*128*240+1024, Gemm90Shared("q6_K"))
	f, err := LookupFamily("gemm90")
	require.NoError(t, err)
	assert.Equal(t, "sm_90a", f.ArchSpecific)
	assert.Len(t, f.All(), 1+len(Gemm90Groups))
}

// TestFattn90Geometry keeps fattn90's Go constants equal to fattn90.cu's
// (core sizes the launch by them).
func TestFattn90Geometry(t *testing.T) {
	b, err := os.ReadFile("fattn90.cu")
	require.NoError(t, err)
	src := string(b)
	for _, def := range []string{"#define FA90_BQ " + strconv.Itoa(Fattn90Queries), "#define FA90_BK 64",
		"#define FA90_THREADS " + strconv.Itoa(Fattn90Threads),
		"#define FA90_SHARED(D) (256 * (D) + 4 * 128 * (D) + 2 * FA90_BQ * 128 + 1024)"} {
		require.Contains(t, src, def+"\n")
	}
	// 227 KiB a block on compute capability 9.0: head size 256 fits.
	assert.Equal(t, 230400, Fattn90Shared(256))
	assert.LessOrEqual(t, Fattn90Shared(256), 232448)
	assert.Equal(t, 132096, Fattn90Shared(128))
	f, err := LookupFamily("fattn90")
	require.NoError(t, err)
	assert.Equal(t, "sm_90a", f.ArchSpecific)
	assert.Len(t, f.All(), 2)
}

// TestFunctionsHaveExecutionSpace: NVRTC treats a function without
// __device__ (or __host__ __device__) as host code, which it refuses ("host
// functions are not allowed in JIT mode"): the quant family failed to build
// at run time that way, while nvcc, which allows host functions, built it.
func TestFunctionsHaveExecutionSpace(t *testing.T) {
	names, err := fs.Glob(Sources, "*.[ch]*")
	require.NoError(t, err)
	fn := regexp.MustCompile(`^(template <[^>]*> )?(static )?(inline )?(constexpr )?[A-Za-z_][A-Za-z_0-9]*( \*)? [A-Za-z_][A-Za-z_0-9]*\(`)
	for _, n := range names {
		b, err := Sources.ReadFile(n)
		require.NoError(t, err)
		for i, line := range strings.Split(string(b), "\n") {
			if fn.MatchString(line) && !strings.Contains(line, "__device__") && !strings.Contains(line, "__global__") &&
				!strings.HasPrefix(line, "typedef") && !strings.Contains(line, "struct ") {
				t.Errorf("%s:%d: a function without __device__: %s", n, i+1, line)
			}
		}
	}
}
