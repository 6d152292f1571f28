package gpushim

import (
	"log/slog"

	"github.com/ternion/ternion/kernels"
)

// Config is what a vendor package passes to Open.
type Config struct {
	// Image is the embedded code object of the catalog kernels; the zero
	// Image when `go generate ./kernels` was not run.
	Image kernels.Image
	// ForceRTC compiles the kernels at run time even where Image would run.
	ForceRTC bool
	// DisableRTC never compiles at run time: a device Image does not cover
	// gets ErrNoKernel (tests of that path).
	DisableRTC bool
	// CacheDir holds run-time compiled code; "" means
	// os.UserCacheDir()/ternion/kernels, "-" disables the cache.
	CacheDir string
	// Env reads the TERNION_ switches; nil means os.LookupEnv.
	Env Lookup
	// Logger receives device init and kernel source messages; nil means slog.Default().
	Logger *slog.Logger
}
