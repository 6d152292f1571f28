package gpushim

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestHandles(t *testing.T) {
	var h handles
	s := h.add(handle{kind: kindStream, dev: 1, raw: 0xabc})
	e := h.add(handle{kind: kindEvent, dev: 1, raw: 0xabc, timing: true})
	require.NotZero(t, s)
	require.NotEqual(t, s, e, "ids are distinct even for the same vendor handle")

	got, ok := h.get(s, kindStream, 1)
	require.True(t, ok)
	assert.Equal(t, uint64(0xabc), got.raw)
	_, ok = h.get(s, kindEvent, 1)
	assert.False(t, ok, "a stream id is not an event")
	_, ok = h.get(s, kindStream, 0)
	assert.False(t, ok, "a stream of device 1 is not one of device 0")
	_, ok = h.get(0, kindStream, 1)
	assert.False(t, ok, "zero is never a handle")

	h1, h2, ok1, ok2 := h.get2(e, kindEvent, 1, s, kindStream, 1)
	assert.True(t, ok1 && ok2)
	assert.True(t, h1.timing)
	assert.Equal(t, kindStream, h2.kind)

	_, ok = h.remove(s, kindEvent, 1)
	assert.False(t, ok, "remove checks the kind")
	_, ok = h.remove(s, kindStream, 1)
	assert.True(t, ok)
	_, ok = h.remove(s, kindStream, 1)
	assert.False(t, ok, "removing twice fails")
	_, ok = h.get(s, kindStream, 1)
	assert.False(t, ok)

	s2 := h.add(handle{kind: kindStream, dev: 1, raw: 0xabc})
	assert.NotEqual(t, s, s2, "ids are never reused, even when the vendor reuses its handle")
}

func TestHandleKindNames(t *testing.T) {
	for k := kindStream; k <= kindChunk; k++ {
		assert.NotEqual(t, "handle", k.String(), "kind %d", k)
	}
	assert.Equal(t, "handle", handleKind(0).String())
}
