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

// objectFile is a family's code object file name for a: fill-gfx90a.hsaco.
func (p perArch) objectFile(family string, a arch.CC) string { return family + "-" + a.Name() + p.ext }

// build compiles every unit once per arch into dir. The first family's
// compilation decides whether the compiler can target an arch: an arch it
// rejects is dropped with the first line of its output, and only no arch at
// all is an error. Any other family failing on an arch the compiler accepts
// is an error of that family's source.
func (p perArch) build(c compiler, want []arch.CC, units []unit, include, dir string) (kernels.Image, []string, error) {
	compile := func(u unit, a arch.CC) ([]byte, error) {
		cmd := exec.Command(c.path, p.args(a, include, u.path, filepath.Join(dir, p.objectFile(u.family, a)))...)
		cmd.Env = c.env
		return cmd.CombinedOutput()
	}
	var im kernels.Image
	var dropped []string
	for _, a := range want {
		if out, err := compile(units[0], a); err != nil {
			dropped = append(dropped, fmt.Sprintf("cannot build %s: %s", a.Name(), firstLine(out)))
			continue
		}
		im.Archs = append(im.Archs, a)
	}
	if len(im.Archs) == 0 {
		return kernels.Image{}, dropped, fmt.Errorf("%s %s builds none of %v", filepath.Base(c.path), c.version, names(want))
	}
	type job struct {
		u unit
		a arch.CC
	}
	var jobs []job
	for _, u := range units[1:] {
		for _, a := range im.Archs {
			jobs = append(jobs, job{u, a})
		}
	}
	err := parallel(len(jobs), func(i int) error {
		if out, err := compile(jobs[i].u, jobs[i].a); err != nil {
			return fmt.Errorf("family %s for %s: %w\n%s", jobs[i].u.family, jobs[i].a.Name(), err, out)
		}
		return nil
	})
	if err != nil {
		return kernels.Image{}, dropped, err
	}
	for _, u := range units {
		f := kernels.FamilyImage{Name: u.family}
		for _, a := range im.Archs {
			f.Objects = append(f.Objects, kernels.Object{Arch: a, File: p.objectFile(u.family, a)})
		}
		im.Families = append(im.Families, f)
	}
	return im, dropped, nil
}
