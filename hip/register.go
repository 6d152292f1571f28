//go:build hip

package hip

import (
	"github.com/ternion/ternion/internal/gpushim"
	"github.com/ternion/ternion/kernels"
)

// init registers "hip", opened with the code objects go generate embedded.
func init() { gpushim.Register(kernels.HIPImage) }
