package host

import "github.com/ternion/ternion/kernels"

// fattn90.go is kernels/fattn90.cu: FLASH_ATTN_EXT prefill on wgmma, on the
// host as fattn_mma (host/fattn.go) with its block of queries.
func init() {
	// fattn90_d{d}(dst, q, k, v, mask, sinks, scale, softcap, max_bias, m0,
	// m1, n_head_log2, gqa, r3): kernels.Fattn90Queries queries of one head a block.
	registerTemplate("fattn90", func(k kernels.Kernel) (*hostKernel, error) {
		d, err := fattnDim(k)
		if err != nil {
			return nil, err
		}
		return fattnQueryBlocks(d, kernels.Fattn90Queries), nil
	})
}
