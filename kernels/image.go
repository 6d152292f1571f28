package kernels

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/ternion/ternion/arch"
)

// ManifestName is the file `go generate` writes next to a code object,
// describing it.
const ManifestName = "manifest.json"

// Image is a prebuilt code object of every catalog kernel (for CUDA, one
// fatbin holding machine code per arch plus PTX) and the manifest that says
// what it was built for. The zero Image means none was built.
type Image struct {
	Vendor     string    `json:"vendor"`      // "cuda"
	File       string    `json:"file"`        // code object file name, next to the manifest
	Archs      []arch.CC `json:"archs"`       // real architectures with machine code (sm_XY)
	PTX        arch.CC   `json:"ptx"`         // virtual architecture of the embedded PTX (compute_XY), 0 for none
	Compiler   string    `json:"compiler"`    // e.g. "nvcc 11.8.89"
	SourceHash string    `json:"source_hash"` // SourceHash of the sources it was built from
	Data       []byte    `json:"-"`           // the code object
}

// Empty reports whether im holds no code object.
func (im Image) Empty() bool { return len(im.Data) == 0 }

// Compiled is the arch list the image carries, as ggml's __CUDA_ARCH_LIST__:
// the machine-code archs and the PTX arch, sorted, without duplicates.
func (im Image) Compiled() []arch.CC {
	if im.Empty() {
		return nil
	}
	out := slices.Clone(im.Archs)
	if im.PTX != 0 {
		out = append(out, im.PTX)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Describe lists the image's archs for logs and errors, e.g.
// "sm_75 sm_80 sm_90 + compute_90"; "none" for the zero Image.
func (im Image) Describe() string {
	if im.Empty() {
		return "none"
	}
	names := make([]string, len(im.Archs))
	for i, a := range im.Archs {
		names[i] = a.Name()
	}
	s := strings.Join(names, " ")
	if im.PTX != 0 {
		s += " + " + strings.Replace(im.PTX.Name(), "sm_", "compute_", 1)
	}
	return s
}

// LoadImage reads the manifest in dir of fsys and the code object it names.
// A directory without a manifest (go generate not run) gives the zero Image
// and no error.
func LoadImage(fsys fs.FS, dir string) (Image, error) {
	b, err := fs.ReadFile(fsys, path.Join(dir, ManifestName))
	if errors.Is(err, fs.ErrNotExist) {
		return Image{}, nil
	}
	if err != nil {
		return Image{}, fmt.Errorf("kernels: reading %s: %w", ManifestName, err)
	}
	var im Image
	if err := json.Unmarshal(b, &im); err != nil {
		return Image{}, fmt.Errorf("kernels: %s/%s: %w", dir, ManifestName, err)
	}
	if im.File == "" || strings.ContainsAny(im.File, "/\\") {
		return Image{}, fmt.Errorf("kernels: %s/%s names no code object file (%q)", dir, ManifestName, im.File)
	}
	im.Data, err = fs.ReadFile(fsys, path.Join(dir, im.File))
	if err != nil {
		return Image{}, fmt.Errorf("kernels: code object named by %s/%s: %w", dir, ManifestName, err)
	}
	return im, nil
}

// SourceHash is a hash of every embedded kernel source (names and contents):
// it tells whether a code object was built from the current sources, and keys
// the cache of run-time compiled code.
func SourceHash() string {
	h := sha256.New()
	names, err := fs.Glob(Sources, "*")
	if err != nil { // only on a malformed pattern
		return ""
	}
	slices.Sort(names)
	for _, n := range names {
		b, err := Sources.ReadFile(n)
		if err != nil {
			continue // a directory: Sources holds files only
		}
		fmt.Fprintf(h, "%s\x00%d\x00", n, len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))
}
