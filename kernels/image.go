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

// Image is the prebuilt code of every catalog kernel and the manifest that
// says what it was built for. CUDA: one fatbin (File, Data) holding machine
// code per arch plus PTX. HIP and MUSA: one code object per arch (Objects),
// since a device loads only code built for its own gfx or mp target. The zero
// Image means none was built.
type Image struct {
	Vendor     string    `json:"vendor"`            // "cuda", "hip", "musa"
	File       string    `json:"file,omitempty"`    // code object file name, next to the manifest (CUDA)
	Objects    []Object  `json:"objects,omitempty"` // one code object per arch (HIP, MUSA)
	Archs      []arch.CC `json:"archs"`             // real architectures with machine code (sm_XY, gfx, mp_XY)
	PTX        arch.CC   `json:"ptx"`               // virtual architecture of the embedded PTX (compute_XY), 0 for none
	Compiler   string    `json:"compiler"`          // e.g. "nvcc 11.8.89", "hipcc 5.2.21153"
	SourceHash string    `json:"source_hash"`       // SourceHash of the sources it was built from
	Data       []byte    `json:"-"`                 // the code object named by File
}

// Object is the code object of one architecture.
type Object struct {
	Arch arch.CC `json:"arch"` // the architecture it was built for
	File string  `json:"file"` // file name, next to the manifest
	Data []byte  `json:"-"`
}

// Empty reports whether im holds no code object.
func (im Image) Empty() bool { return len(im.Data) == 0 && len(im.Objects) == 0 }

// Code returns what a device of compute capability cc loads: the object
// built for cc when the image has per-arch objects, else the single code
// object (nil when there is none for cc).
func (im Image) Code(cc arch.CC) []byte {
	for _, o := range im.Objects {
		if o.Arch == cc {
			return o.Data
		}
	}
	return im.Data
}

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
// "sm_75 sm_80 sm_90 + compute_90" or "gfx90a gfx1030"; "none" for the zero
// Image.
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

// LoadImage reads the manifest in dir of fsys and the code objects it names.
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
	if im.File == "" && len(im.Objects) == 0 {
		return Image{}, fmt.Errorf("kernels: %s/%s names no code object", dir, ManifestName)
	}
	read := func(name string) ([]byte, error) {
		if name == "" || strings.ContainsAny(name, "/\\") {
			return nil, fmt.Errorf("kernels: %s/%s names a bad code object file (%q)", dir, ManifestName, name)
		}
		data, err := fs.ReadFile(fsys, path.Join(dir, name))
		if err != nil {
			return nil, fmt.Errorf("kernels: code object named by %s/%s: %w", dir, ManifestName, err)
		}
		return data, nil
	}
	if im.File != "" {
		if im.Data, err = read(im.File); err != nil {
			return Image{}, err
		}
	}
	for i := range im.Objects {
		if im.Objects[i].Data, err = read(im.Objects[i].File); err != nil {
			return Image{}, err
		}
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
