package arch

import (
	"errors"
	"fmt"

	"github.com/ternion/ternion/internal/quote"
)

// ErrSyntax is wrapped by every error this package returns for input it
// cannot read; match it with errors.Is.
var ErrSyntax = errors.New("invalid syntax")

// ParseError describes input that could not be read as an architecture.
type ParseError struct {
	What   string // what was being read: "gfx name", "sm name", "HSA override", …
	Input  string // the input as given
	Env    string // the environment variable the input came from, if any
	Reason string // what is wrong with it
}

// Error names the input (quoted, at most quote.Max bytes of it), where it
// came from and what is wrong with it.
func (e *ParseError) Error() string {
	if e.Env != "" {
		return fmt.Sprintf("arch: %s=%s: invalid %s: %s", e.Env, quote.Q(e.Input), e.What, e.Reason)
	}
	return fmt.Sprintf("arch: invalid %s %s: %s", e.What, quote.Q(e.Input), e.Reason)
}

// Unwrap returns ErrSyntax.
func (e *ParseError) Unwrap() error { return ErrSyntax }

func parseErr(what, input, format string, args ...any) error {
	return &ParseError{What: what, Input: input, Reason: fmt.Sprintf(format, args...)}
}
