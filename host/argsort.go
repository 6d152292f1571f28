package host

import (
	"fmt"
	"math/bits"
	"slices"

	"github.com/ternion/ternion/vendorapi"
)

// argsort.go implements kernels/argsort.cu. Both kernels order (key, index)
// pairs totally (argsortBefore), so any correct sort or merge gives the
// kernels' result: chunks are sorted with slices.SortFunc, tiles merged in
// order.

// argsortBefore is argsort.cu's argsort_before.
func argsortBefore(ka float32, ia int32, kb float32, ib int32, desc bool) bool {
	if ka != kb {
		if desc {
			return ka > kb
		}
		return ka < kb
	}
	return ia < ib
}

// argsortPair is one (key, index) element of a sort.
type argsortPair struct {
	key float32
	idx int32
}

// argsortRun is a sorted run of a merge: keys and indices in device memory.
type argsortRun struct {
	keys []float32
	idx  []uint32
}

func (r argsortRun) len() int             { return len(r.keys) }
func (r argsortRun) at(i int) argsortPair { return argsortPair{r.keys[i], int32(r.idx[i])} }

// argsortOut is an output buffer of nrows×ne0 4-byte elements at pointer
// argument i, touching nothing when the pointer is null.
func argsortOut(param string, a *vendorapi.Args, i int, n int64) buffer {
	if a.PtrAt(i) == 0 {
		return buffer{param: param}
	}
	return elems(param, a.PtrAt(i), n, 4)
}

// argsortSplit is argsort.cu's argsort_split: how many elements of run a
// are among the first d of the merge of runs a and b.
func argsortSplit(a, b argsortRun, d int, desc bool) int {
	lo, hi := max(0, d-b.len()), min(d, a.len())
	for lo < hi {
		mid := (lo + hi) / 2
		if argsortBefore(a.keys[mid], int32(a.idx[mid]), b.keys[d-1-mid], int32(b.idx[d-1-mid]), desc) {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}

// argsortTile is the merge tile of argsort_merge.
const argsortTile = 2048

func init() {
	// argsort_chunk(okeys, oidx, src, nchunks, ne1, ne2, chunk, order).
	register("argsort_chunk", &hostKernel{
		buffers: func(a *vendorapi.Args) []buffer {
			src := a.TensorAt(2)
			n := src.Ne[0] * src.Ne[1] * src.Ne[2] * src.Ne[3]
			bufs := []buffer{argsortOut("okeys", a, 0, n), argsortOut("oidx", a, 1, n), tensorBuf("src", src, 4)}
			if c := a.I32At(6); c < 1 || bits.OnesCount32(uint32(c)) != 1 || c > 4096 {
				bufs[1].bad = fmt.Sprintf("chunk %d is not a power of two up to 4096", c)
			}
			return bufs
		},
		block: func(m [][]byte, a *vendorapi.Args, b block) {
			src, nchunks, ne1, ne2 := a.TensorAt(2), a.FastDivAt(3), a.FastDivAt(4), a.FastDivAt(5)
			chunk, desc := int64(a.I32At(6)), a.I32At(7) != 0
			row := nchunks.Div(b.idx.X)
			c := int64(b.idx.X - row*nchunks.D)
			start := c * chunk
			n := min(src.Ne[0]-start, chunk)
			s := rowOffset(row, src, ne1, ne2)
			f32 := elemTypes["f32"]
			pairs := make([]argsortPair, max(n, 0))
			for j := range pairs {
				pairs[j] = argsortPair{f32.load(m[2][s+(start+int64(j))*src.Nb[0]:]), int32(start) + int32(j)}
			}
			slices.SortFunc(pairs, func(x, y argsortPair) int {
				if argsortBefore(x.key, x.idx, y.key, y.idx, desc) {
					return -1
				}
				return 1
			})
			o := int64(row)*src.Ne[0] + start
			for j, p := range pairs {
				u32s(m[1])[o+int64(j)] = uint32(p.idx)
				if a.PtrAt(0) != 0 {
					f32s(m[0])[o+int64(j)] = p.key
				}
			}
		},
	})
	// argsort_merge(okeys, oidx, ikeys, iidx, nrows, ne0, width, tiles, order).
	register("argsort_merge", &hostKernel{
		buffers: func(a *vendorapi.Args) []buffer {
			n := a.I64At(4) * a.I64At(5)
			bufs := []buffer{argsortOut("okeys", a, 0, n), argsortOut("oidx", a, 1, n), elems("ikeys", a.PtrAt(2), n, 4),
				elems("iidx", a.PtrAt(3), n, 4)}
			if w := a.I64At(6); w < argsortTile/2 || bits.OnesCount64(uint64(w)) != 1 {
				bufs[1].bad = fmt.Sprintf("run width %d is not a power of two of at least %d", w, argsortTile/2)
			}
			return bufs
		},
		block: func(m [][]byte, a *vendorapi.Args, b block) {
			nrows, ne0, width, tiles, desc := a.I64At(4), a.I64At(5), a.I64At(6), a.FastDivAt(7), a.I32At(8) != 0
			row := int64(tiles.Div(b.idx.X))
			if row >= nrows {
				return
			}
			t0 := int64(b.idx.X-uint32(row)*tiles.D) * argsortTile
			pair := t0 / (2 * width) * (2 * width)
			na := min(ne0-pair, width)
			nb := max(min(ne0-pair-na, width), 0)
			base := row * ne0
			ra := argsortRun{f32s(m[2])[base+pair:][:na], u32s(m[3])[base+pair:][:na]}
			rb := argsortRun{f32s(m[2])[base+pair+na:][:nb], u32s(m[3])[base+pair+na:][:nb]}
			d0 := int(t0 - pair)
			d1 := min(d0+argsortTile, int(na+nb))
			x := argsortSplit(ra, rb, d0, desc)
			y := d0 - x
			for j := d0; j < d1; j++ {
				var p argsortPair
				if y >= rb.len() || (x < ra.len() && argsortBefore(ra.keys[x], int32(ra.idx[x]), rb.keys[y], int32(rb.idx[y]), desc)) {
					p, x = ra.at(x), x+1
				} else {
					p, y = rb.at(y), y+1
				}
				o := base + pair + int64(j)
				u32s(m[1])[o] = uint32(p.idx)
				if a.PtrAt(0) != 0 {
					f32s(m[0])[o] = p.key
				}
			}
		},
	})
}
