//go:build cuda

package cuda

import (
	"github.com/ternion/ternion/internal/gpushim"
	"github.com/ternion/ternion/kernels"
)

// init registers "cuda", opened with the fatbin go generate embedded.
func init() { gpushim.Register(kernels.CUDAImage) }
