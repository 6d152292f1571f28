package host

import (
	"fmt"
	"math"
	"math/bits"
	"slices"

	"github.com/ternion/ternion/vendorapi"
)

// argsort.go implements kernels/argsort.cu. Both kernels order (key, index)
// pairs totally (argsortBefore), so any correct sort or merge gives the
// kernels' result: chunks are sorted with slices.SortFunc, tiles merged in
// order. The radix passes (argsort_radix_*) are done as the kernels do them:
// per-tile digit counts, their exclusive scan a row, a stable scatter.

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

// argsortRadixTile is argsort.cu's ARGSORT_RADIX_TILE: the elements of a
// row one block of a radix pass takes.
const argsortRadixTile = 4096

// argsortRadixKey is argsort.cu's argsort_radix_key: the u32 whose unsigned
// order is x's (-0 as +0), reversed when desc.
func argsortRadixKey(x float32, desc bool) uint32 {
	f := math.Float32bits(x)
	if f == 0x80000000 {
		f = 0
	}
	k := f | 0x80000000
	if f&0x80000000 != 0 {
		k = ^f
	}
	if desc {
		return ^k
	}
	return k
}

// argsortRadixTileOf is the row, tile, first column and element count of the
// tile block b of a radix pass takes.
func argsortRadixTileOf(b block, tiles vendorapi.FastDiv, ncols int64) (row uint32, t, t0, n int64) {
	row = tiles.Div(b.idx.X)
	t = int64(b.idx.X - row*tiles.D)
	t0 = t * argsortRadixTile
	return row, t, t0, min(ncols-t0, argsortRadixTile)
}

// argsortRadixSource is where a radix pass reads its keys: src (memory of
// tensor t, rows split by ne1, ne2; keys reversed when desc) when kin is nil,
// else kin (packed rows of ncols).
type argsortRadixSource struct {
	src      []byte
	t        vendorapi.TensorDesc
	ne1, ne2 vendorapi.FastDiv
	kin      []uint32
	ncols    int64
	desc     bool
}

// key is argsort.cu's argsort_radix_load: the key of element j of row row.
func (s argsortRadixSource) key(row uint32, j int64) uint32 {
	if s.kin != nil {
		return s.kin[int64(row)*s.ncols+j]
	}
	return argsortRadixKey(elemTypes["f32"].load(s.src[rowOffset(row, s.t, s.ne1, s.ne2)+j*s.t.Nb[0]:]), s.desc)
}

// argsortRadixFrom is the argsortRadixSource of a pass's arguments: src at
// argument si (buffer si), kin at argument ki (buffer ki), ne1, ne2 at ni,
// ni+1, ncols at ci, order at oi.
func argsortRadixFrom(m [][]byte, a *vendorapi.Args, si, ki, ni, ci, oi int) argsortRadixSource {
	s := argsortRadixSource{src: m[si], t: a.TensorAt(si), ne1: a.FastDivAt(ni), ne2: a.FastDivAt(ni + 1), ncols: int64(a.I32At(ci)),
		desc: a.I32At(oi) != 0}
	if a.PtrAt(ki) != 0 {
		s.kin = u32s(m[ki])
	}
	return s
}

func init() {
	// argsort_radix_up(hist, src, kin, ne1, ne2, ncols, tiles, shift, order).
	register("argsort_radix_up", &hostKernel{
		buffers: func(a *vendorapi.Args) []buffer {
			src, tiles := a.TensorAt(1), int64(a.FastDivAt(6).D)
			nrows := src.Ne[1] * src.Ne[2] * src.Ne[3]
			return []buffer{elems("hist", a.PtrAt(0), nrows*256*tiles, 4), tensorBuf("src", src, 4), argsortOut("kin", a, 2, nrows*src.Ne[0])}
		},
		block: func(m [][]byte, a *vendorapi.Args, b block) {
			tiles, shift := a.FastDivAt(6), a.I32At(7)
			s := argsortRadixFrom(m, a, 1, 2, 3, 5, 8)
			row, t, t0, n := argsortRadixTileOf(b, tiles, s.ncols)
			var bins [256]uint32
			for j := range n {
				bins[s.key(row, t0+j)>>shift&255]++
			}
			for d, c := range bins {
				u32s(m[0])[(int64(row)*256+int64(d))*int64(tiles.D)+t] = c
			}
		},
	})
	// argsort_radix_scan(hist, nrows, tiles).
	register("argsort_radix_scan", &hostKernel{
		buffers: func(a *vendorapi.Args) []buffer {
			return []buffer{elems("hist", a.PtrAt(0), int64(a.I32At(1))*256*int64(a.I32At(2)), 4)}
		},
		block: func(m [][]byte, a *vendorapi.Args, b block) {
			n := 256 * int64(a.I32At(2))
			if int64(b.idx.X) >= int64(a.I32At(1)) {
				return
			}
			run := uint32(0)
			for i, c := range u32s(m[0])[int64(b.idx.X)*n:][:n] {
				u32s(m[0])[int64(b.idx.X)*n+int64(i)] = run
				run += c
			}
		},
	})
	// argsort_radix_down(kout, iout, src, kin, iin, offs, ne1, ne2, ncols, tiles, shift, order):
	// the tile's elements in column order, each after the earlier ones of its digit.
	register("argsort_radix_down", &hostKernel{
		buffers: func(a *vendorapi.Args) []buffer {
			src, tiles := a.TensorAt(2), int64(a.FastDivAt(9).D)
			nrows := src.Ne[1] * src.Ne[2] * src.Ne[3]
			n := nrows * src.Ne[0]
			bufs := []buffer{argsortOut("kout", a, 0, n), elems("iout", a.PtrAt(1), n, 4), tensorBuf("src", src, 4), argsortOut("kin", a, 3, n),
				argsortOut("iin", a, 4, n), elems("offs", a.PtrAt(5), nrows*256*tiles, 4)}
			if int64(a.I32At(8)) != src.Ne[0] {
				bufs[1].bad = fmt.Sprintf("ncols %d is not src's row length %d", a.I32At(8), src.Ne[0])
			}
			return bufs
		},
		block: func(m [][]byte, a *vendorapi.Args, b block) {
			tiles, shift := a.FastDivAt(9), a.I32At(10)
			s := argsortRadixFrom(m, a, 2, 3, 6, 8, 11)
			ncols := s.ncols
			row, t, t0, n := argsortRadixTileOf(b, tiles, ncols)
			var next [256]int64 // the next place of each digit
			for d := range next {
				next[d] = int64(u32s(m[5])[(int64(row)*256+int64(d))*int64(tiles.D)+t])
			}
			rb := int64(row) * ncols
			for j := range n {
				k := s.key(row, t0+j)
				idx := uint32(t0 + j)
				if a.PtrAt(3) != 0 {
					idx = u32s(m[4])[rb+t0+j]
				}
				d := k >> shift & 255
				q := rb + next[d]
				next[d]++
				if a.PtrAt(0) != 0 {
					u32s(m[0])[q] = k
				}
				u32s(m[1])[q] = idx
			}
		},
	})
}
