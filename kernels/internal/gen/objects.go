package main

import (
	"fmt"
	"os/exec"
	"path/filepath"

	"github.com/ternion/ternion/arch"
	"github.com/ternion/ternion/kernels"
)

// perArch describes a compiler that builds one code object per arch (hipcc,
// mcc): the file it writes for an arch and the command that builds it.
type perArch struct {
	ext  string                                             // ".hsaco"
	args func(a arch.CC, include, src, out string) []string // the compiler's arguments
}

// objectFile is the code object's file name for a: kernels-gfx90a.hsaco.
func (p perArch) objectFile(a arch.CC) string { return "kernels-" + a.Name() + p.ext }

// build compiles src once per arch into dir; an arch the compiler rejects is
// dropped with the first line of its output, and only no arch at all is an
// error.
func (p perArch) build(c compiler, want []arch.CC, src, include, dir string) (kernels.Image, []string, error) {
	var im kernels.Image
	var dropped []string
	for _, a := range want {
		file := p.objectFile(a)
		cmd := exec.Command(c.path, p.args(a, include, src, filepath.Join(dir, file))...)
		cmd.Env = c.env
		if out, err := cmd.CombinedOutput(); err != nil {
			dropped = append(dropped, fmt.Sprintf("cannot build %s: %s", a.Name(), firstLine(out)))
			continue
		}
		im.Objects = append(im.Objects, kernels.Object{Arch: a, File: file})
		im.Archs = append(im.Archs, a)
	}
	if len(im.Objects) == 0 {
		return kernels.Image{}, dropped, fmt.Errorf("%s %s builds none of %v", filepath.Base(c.path), c.version, names(want))
	}
	return im, dropped, nil
}
