//go:build musa

package musa

import (
	"github.com/ternion/ternion/internal/gpushim"
	"github.com/ternion/ternion/kernels"
)

// init registers "musa", opened with the code objects go generate embedded
// (MUSA has no run-time compiler to fall back on).
func init() { gpushim.Register(kernels.MUSAImage) }
