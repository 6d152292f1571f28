//go:build !unix

package conformance

import "testing"

// hostRegister needs non-Go memory, which the suite maps only on unix.
func (s *suite) hostRegister(t *testing.T, dev int) {
	t.Skip("registering host memory is tested on unix only")
}

// hostMapping returns nil: the suite maps memory that is not Go's on unix only.
func hostMapping(t *testing.T, size int) []byte { return nil }
