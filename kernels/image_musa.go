//go:build musa

package kernels

import "embed"

// musaGen is what `go generate` wrote under gen/musa: one code object per mp
// arch and the manifest, or (on a fresh clone) only the committed placeholder.
//
//go:embed gen/musa
var musaGen embed.FS

// MUSAImage returns the Moore Threads code objects `go generate ./kernels`
// built and the arch list they were built for; the zero Image when it was not
// run (MUSA has no run-time compiler ternion uses: the kernels must be built).
func MUSAImage() (Image, error) { return LoadImage(musaGen, "gen/musa") }
