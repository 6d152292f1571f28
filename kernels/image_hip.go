//go:build hip

package kernels

import "embed"

// hipGen is what `go generate` wrote under gen/hip: one code object per gfx
// and the manifest, or (on a fresh clone) only the committed placeholder.
//
//go:embed gen/hip
var hipGen embed.FS

// HIPImage returns the AMD code objects `go generate ./kernels` built and the
// gfx list they were built for; the zero Image when it was not run.
func HIPImage() (Image, error) { return LoadImage(hipGen, "gen/hip") }
