package quant_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/core/tensor"
	"github.com/ternion/ternion/quant"
)

// TestRegistryMatchesTensorTypes checks every registered format's name and
// block geometry against core/tensor's table of ggml's type traits, and
// that the formats ggml quantizes without an importance matrix have a
// quantizer.
func TestRegistryMatchesTensorTypes(t *testing.T) {
	withQuantizer := map[tensor.Type]bool{
		tensor.Q4_0: true, tensor.Q4_1: true, tensor.Q5_0: true, tensor.Q5_1: true,
		tensor.Q8_0: true, tensor.Q8_1: true, tensor.Q2_K: true, tensor.Q3_K: true,
		tensor.Q4_K: true, tensor.Q5_K: true, tensor.Q6_K: true, tensor.Q8_K: true,
		tensor.IQ4_NL: true, tensor.IQ4_XS: true, tensor.MXFP4: true,
	}
	for typ := range withQuantizer {
		_, ok := quant.Lookup(int(typ))
		assert.True(t, ok, "%s is not registered", typ)
	}
	for _, f := range quant.Formats() {
		t.Run(f.Name, func(t *testing.T) {
			typ := tensor.Type(f.ID)
			require.True(t, typ.Valid())
			assert.Equal(t, typ.String(), f.Name)
			assert.EqualValues(t, typ.BlockSize(), f.BlockElems)
			assert.EqualValues(t, typ.BlockBytes(), f.BlockBytes)
			if withQuantizer[typ] {
				assert.True(t, f.CanQuantize())
			}
		})
	}
}
