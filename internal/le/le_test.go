package le

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestRoundTrip(t *testing.T) {
	v := []float32{1, -2.5, 3e-8, 65504}
	b := FromF32(v)
	assert.Equal(t, []byte{0, 0, 0x80, 0x3f}, b[:4], "1.0 little-endian")
	assert.Equal(t, v, ToF32(b))
	assert.Len(t, ToF32(b[:7]), 1, "partial trailing element ignored")
	assert.Equal(t, []byte{1, 0, 0, 0, 0, 0, 0, 0x80}, FromU64([]uint64{1<<63 | 1}))
}
