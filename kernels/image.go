package kernels

import (
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

// Image is the prebuilt code of the kernel families and the manifest that
// says what it was built for: per family, CUDA's one fatbin (machine code per
// arch plus PTX), or HIP's and MUSA's one code object per arch (a device
// loads only code built for its own gfx or mp target). Code is read from the
// embedded files when a device first loads a family. The zero Image means
// none was built.
type Image struct {
	Vendor   string        `json:"vendor"`   // "cuda", "hip", "musa"
	Archs    []arch.CC     `json:"archs"`    // real architectures with machine code (sm_XY, gfx, mp_XY)
	PTX      arch.CC       `json:"ptx"`      // virtual architecture of the embedded PTX (compute_XY), 0 for none
	Compiler string        `json:"compiler"` // e.g. "nvcc 11.8.89", "hipcc 5.2.21153"
	Families []FamilyImage `json:"families"` // one entry per family built
}

// FamilyImage is one kernel family's prebuilt code.
type FamilyImage struct {
	Name       string   `json:"name"`              // the family
	SourceHash string   `json:"source_hash"`       // FamilyHash of the sources it was built from
	File       string   `json:"file,omitempty"`    // one code object for every arch (CUDA fatbin), next to the manifest
	Objects    []Object `json:"objects,omitempty"` // one code object per arch (HIP, MUSA)

	fsys fs.FS  // where the files are
	dir  string // their directory in fsys
}

// Object is the code object of one architecture.
type Object struct {
	Arch arch.CC `json:"arch"` // the architecture it was built for
	File string  `json:"file"` // file name, next to the manifest
}

// Empty reports whether im holds no code object.
func (im Image) Empty() bool { return len(im.Families) == 0 }

// Family returns the prebuilt code of family name.
func (im Image) Family(name string) (FamilyImage, bool) {
	for _, f := range im.Families {
		if f.Name == name {
			return f, true
		}
	}
	return FamilyImage{}, false
}

// Fresh reports whether f was built from the family's current sources.
func (f FamilyImage) Fresh() bool { return f.SourceHash != "" && f.SourceHash == FamilyHash(f.Name) }

// Code reads what a device of compute capability cc loads: the object built
// for cc when the family has per-arch objects, else its single code object.
// It returns nil and no error when there is none for cc.
func (f FamilyImage) Code(cc arch.CC) ([]byte, error) {
	file := f.File
	for _, o := range f.Objects {
		if o.Arch == cc {
			file = o.File
		}
	}
	if file == "" || f.fsys == nil {
		return nil, nil
	}
	b, err := fs.ReadFile(f.fsys, path.Join(f.dir, file))
	if err != nil {
		return nil, fmt.Errorf("kernels: family %s: %w", f.Name, err)
	}
	return b, nil
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

// Prebuilt lists, sorted, the families im holds code for that was built
// from the current sources.
func (im Image) Prebuilt() []string {
	var out []string
	for _, f := range im.Families {
		if f.Fresh() {
			out = append(out, f.Name)
		}
	}
	slices.Sort(out)
	return out
}

// LoadImage reads the manifest in dir of fsys and checks that the code
// objects it names exist (they are read when a device loads their family).
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
	if len(im.Families) == 0 {
		return Image{}, fmt.Errorf("kernels: %s/%s names no kernel family", dir, ManifestName)
	}
	check := func(fam, name string) error {
		if name == "" || strings.ContainsAny(name, "/\\") {
			return fmt.Errorf("kernels: %s/%s names a bad code object file for family %s (%q)", dir, ManifestName, fam, name)
		}
		if _, err := fs.Stat(fsys, path.Join(dir, name)); err != nil {
			return fmt.Errorf("kernels: code object of family %s named by %s/%s: %w", fam, dir, ManifestName, err)
		}
		return nil
	}
	seen := map[string]bool{}
	for i := range im.Families {
		f := &im.Families[i]
		if f.Name == "" || seen[f.Name] {
			return Image{}, fmt.Errorf("kernels: %s/%s: family %q is unnamed or listed twice", dir, ManifestName, f.Name)
		}
		seen[f.Name] = true
		if f.File == "" && len(f.Objects) == 0 {
			return Image{}, fmt.Errorf("kernels: %s/%s: family %s names no code object", dir, ManifestName, f.Name)
		}
		if f.File != "" {
			if err := check(f.Name, f.File); err != nil {
				return Image{}, err
			}
		}
		for _, o := range f.Objects {
			if err := check(f.Name, o.File); err != nil {
				return Image{}, err
			}
		}
		f.fsys, f.dir = fsys, dir
	}
	return im, nil
}
