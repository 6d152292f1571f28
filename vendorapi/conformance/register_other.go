//go:build !unix

package conformance

import "testing"

// hostRegister needs non-Go memory, which the suite maps only on unix.
func (s *suite) hostRegister(t *testing.T, dev int) {
	t.Skip("registering host memory is tested on unix only")
}
