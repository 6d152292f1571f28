//go:build cuda

package kernels

import "embed"

// cudaGen is what `go generate` wrote under gen/cuda: the fatbin and its
// manifest, or (on a fresh clone) only the committed placeholder.
//
//go:embed gen/cuda
var cudaGen embed.FS

// CUDAImage returns the CUDA fatbin `go generate ./kernels` built and the arch
// list it was built for; the zero Image when it was not run.
func CUDAImage() (Image, error) { return LoadImage(cudaGen, "gen/cuda") }
