// argsort.cu - ggml's ARGSORT of f32 rows, ascending (order 0) or descending
// (order 1), for rows of any length. Elements are ordered by key, then by
// column index (so equal keys keep their order and every order is total).
//
// argsort_chunk sorts chunks of a power-of-two length (at most 4096) of
// every row in shared memory with a bitonic network; a row that fits one
// chunk is done in this one launch. Longer rows are sorted chunk by chunk
// into (key, index) buffers and merged by argsort_merge, a pass per doubling
// of the sorted run width: each block merges one 2048-element tile of the
// output, found by a merge-path search over the two runs. Long rows with
// many elements in all take the LSD radix sort at the end of this file
// instead (the planner's argsortRadixMin says when).
#include "index.h"

// Elements per merge tile and threads per merge block.
#define ARGSORT_TILE 2048
#define ARGSORT_MERGE_THREADS 256

// argsort_before reports whether (ka, ia) comes before (kb, ib): by key in
// the order asked for, then by index.
static __device__ __forceinline__ bool argsort_before(float ka, int ia, float kb, int ib, int desc) {
    if (ka != kb) {
        return desc ? ka > kb : ka < kb;
    }
    return ia < ib;
}

// Block b sorts chunk b % nchunks of row b / nchunks (row r of src is (i1,
// i2, i3), ne1 and ne2 dividing r): chunk elements (a power of two, blockDim.x
// = min(chunk/2, 1024) threads, chunk*8 bytes of dynamic shared memory),
// padding past the row's end sorting last. The sorted chunk's column indices
// go to oidx (and its keys to okeys, unless okeys is null) at row*ne0 +
// chunk start: packed rows of src's ne0.
extern "C" __global__ void argsort_chunk(float * okeys, int * oidx, ternion_tensor src, ternion_fastdiv nchunks, ternion_fastdiv ne1,
                                         ternion_fastdiv ne2, int chunk, int order) {
    TERNION_KERNEL_ENTRY();
    extern __shared__ float argsort_smem[];
    float * keys = argsort_smem;
    int * idx = (int *)(argsort_smem + chunk);
    const ternion_u32 row = ternion_fastdiv_div(blockIdx.x, nchunks);
    const ternion_u32 c = blockIdx.x - row * nchunks.d;
    const ternion_i64 ne0 = src.ne[0];
    const int start = (int)c * chunk;
    const int n = (int)(ne0 - start < chunk ? ne0 - start : chunk); // valid elements of the chunk
    const char * s = (const char *)src.data + ternion_row_offset(row, src, ne1, ne2);
    for (int j = threadIdx.x; j < chunk; j += blockDim.x) {
        keys[j] = j < n ? *(const float *)(s + (ternion_i64)(start + j) * src.nb[0]) : 0.0f;
        idx[j] = start + j;
    }
    const int limit = start + n; // indices from limit on are padding
    __syncthreads();
    for (int k = 2; k <= chunk; k <<= 1) {
        for (int j = k >> 1; j > 0; j >>= 1) {
            for (int p = threadIdx.x; p < chunk / 2; p += blockDim.x) {
                const int a = ((p & ~(j - 1)) << 1) | (p & (j - 1));
                const int b = a + j;
                const float ka = keys[a], kb = keys[b];
                const int ia = idx[a], ib = idx[b];
                // b before a: padding always last, else by key and index.
                const bool pa = ia >= limit, pb = ib >= limit;
                const bool b_first = pa != pb ? pa : (pa ? ib < ia : argsort_before(kb, ib, ka, ia, order));
                const bool up = (a & k) == 0;
                if (b_first == up) {
                    keys[a] = kb;
                    keys[b] = ka;
                    idx[a] = ib;
                    idx[b] = ia;
                }
            }
            __syncthreads();
        }
    }
    const ternion_i64 o = (ternion_i64)row * ne0 + start;
    for (int j = threadIdx.x; j < n; j += blockDim.x) {
        oidx[o + j] = idx[j];
        if (okeys != nullptr) {
            okeys[o + j] = keys[j];
        }
    }
}

// The number of elements of run a among the first d of the merge of runs a
// (na) and b (nb): a merge-path search by the whole block, blockDim.x probes
// a step (every thread gets the result).
static __device__ __forceinline__ int argsort_split(const float * ka, const int * ia, int na, const float * kb, const int * ib, int nb,
                                                    int d, int order) {
    int lo = d - nb > 0 ? d - nb : 0, hi = d < na ? d : na;
    while (hi > lo) {
        const int step = (hi - lo + (int)blockDim.x - 1) / (int)blockDim.x;
        const int p = lo + ((int)threadIdx.x + 1) * step - 1;
        const bool before = p < hi && argsort_before(ka[p], ia[p], kb[d - 1 - p], ib[d - 1 - p], order);
        const int cnt = __syncthreads_count(before);
        const int nhi = lo + (cnt + 1) * step - 1;
        lo += cnt * step;
        hi = nhi < hi ? nhi : hi;
    }
    return lo;
}

// The sequential form of argsort_split, for one thread over shared memory.
static __device__ __forceinline__ int argsort_split1(const float * ka, const int * ia, int na, const float * kb, const int * ib, int nb,
                                                     int d, int order) {
    int lo = d - nb > 0 ? d - nb : 0, hi = d < na ? d : na;
    while (hi > lo) {
        const int mid = (lo + hi) / 2;
        if (argsort_before(ka[mid], ia[mid], kb[d - 1 - mid], ib[d - 1 - mid], order)) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}

// One merge pass over nrows packed rows of ne0 (key, index) pairs sorted in runs of
// width elements: block b writes tile b % tiles of row b / tiles (2048
// elements of the merge of its run pair) to okeys and oidx, or, when okeys
// is null (the last pass), only the indices to oidx. 256 threads.
extern "C" __global__ void __launch_bounds__(256) argsort_merge(float * okeys, int * oidx, const float * ikeys, const int * iidx,
                                                                 ternion_i64 nrows, ternion_i64 ne0, ternion_i64 width,
                                                                 ternion_fastdiv tiles, int order) {
    TERNION_KERNEL_ENTRY();
    __shared__ float sk[ARGSORT_TILE];
    __shared__ int si[ARGSORT_TILE];
    __shared__ float ok[ARGSORT_TILE];
    __shared__ int oi[ARGSORT_TILE];
    const ternion_u32 row = ternion_fastdiv_div(blockIdx.x, tiles);
    if (row >= nrows) {
        return; // the whole block
    }
    const ternion_i64 t0 = (ternion_i64)(blockIdx.x - row * tiles.d) * ARGSORT_TILE; // tile start in the row
    const ternion_i64 pair = t0 / (2 * width) * (2 * width);
    const int na = (int)(ne0 - pair < width ? ne0 - pair : width);
    const ternion_i64 bstart = pair + na;
    const int nb = (int)(ne0 - bstart < width ? (ne0 - bstart > 0 ? ne0 - bstart : 0) : width);
    const ternion_i64 base = (ternion_i64)row * ne0;
    const float * ka = ikeys + base + pair;
    const int * ia = iidx + base + pair;
    const float * kb = ikeys + base + bstart;
    const int * ib = iidx + base + bstart;
    const int d0 = (int)(t0 - pair);
    const int d1 = d0 + ARGSORT_TILE < na + nb ? d0 + ARGSORT_TILE : na + nb;
    const int a0 = argsort_split(ka, ia, na, kb, ib, nb, d0, order);
    const int a1 = argsort_split(ka, ia, na, kb, ib, nb, d1, order);
    const int b0 = d0 - a0, b1 = d1 - a1;
    const int ta = a1 - a0, tb = b1 - b0, n = d1 - d0;
    for (int j = threadIdx.x; j < n; j += blockDim.x) {
        if (j < ta) {
            sk[j] = ka[a0 + j];
            si[j] = ia[a0 + j];
        } else {
            sk[j] = kb[b0 + j - ta];
            si[j] = ib[b0 + j - ta];
        }
    }
    __syncthreads();
    const int per = ARGSORT_TILE / ARGSORT_MERGE_THREADS;
    const int d = (int)threadIdx.x * per;
    if (d < n) {
        int x = argsort_split1(sk, si, ta, sk + ta, si + ta, tb, d, order);
        int y = d - x;
        for (int j = d; j < d + per && j < n; j++) {
            const bool from_a = y >= tb || (x < ta && argsort_before(sk[x], si[x], sk[ta + y], si[ta + y], order));
            if (from_a) {
                ok[j] = sk[x];
                oi[j] = si[x];
                x++;
            } else {
                ok[j] = sk[ta + y];
                oi[j] = si[ta + y];
                y++;
            }
        }
    }
    __syncthreads();
    for (int j = threadIdx.x; j < n; j += blockDim.x) {
        oidx[base + t0 + j] = oi[j];
        if (okeys != nullptr) {
            okeys[base + t0 + j] = ok[j];
        }
    }
}

// ---------------------------------------------------------------------------
// LSD radix sort of long rows (argsort_radix_*): keys become order-preserving
// u32 (argsort_radix_key), sorted in four stable passes of 8-bit digits, least
// significant first. Stability keeps equal keys in index order, the order
// argsort_before gives, so both paths give one result. Each pass is three
// launches over tiles of ARGSORT_RADIX_TILE elements of a row (block b: row
// b / tiles, tile b % tiles):
//   argsort_radix_up:   a digit histogram of every tile, hist[row][digit][tile];
//   argsort_radix_scan: one block a row turns its hist into exclusive offsets
//                       in (digit, tile) order, in place;
//   argsort_radix_down: ranks the tile's elements stably by digit (warp
//                       ballots, a running count a warp and digit), reorders
//                       them in shared memory and scatters them coalesced.
// The first pass reads src (any strides), the others packed (key, index)
// buffers; the last writes only the indices, to dst.
#define ARGSORT_RADIX_THREADS 256
#define ARGSORT_RADIX_IPT 16
#define ARGSORT_RADIX_TILE (ARGSORT_RADIX_THREADS * ARGSORT_RADIX_IPT)
#define ARGSORT_RADIX_WARPS (ARGSORT_RADIX_THREADS / TERNION_WARP_SIZE)
#define ARGSORT_RADIX_SCAN_THREADS 1024

// A warp's lane mask, ballot, population count and the pieces of a warp
// scan, per vendor (HIP wavefronts of 64 have 64-bit ballots).
#if defined(TERNION_VENDOR_HIP)
typedef unsigned long long argsort_lanes;
static __device__ __forceinline__ argsort_lanes argsort_ballot(bool p) { return __ballot(p); }
static __device__ __forceinline__ int argsort_popc(argsort_lanes m) { return __popcll(m); }
static __device__ __forceinline__ unsigned argsort_shfl_up(unsigned v, int o) { return __shfl_up(v, o, TERNION_WARP_SIZE); }
static __device__ __forceinline__ void argsort_syncwarp() { __builtin_amdgcn_wave_barrier(); }
#else
typedef unsigned argsort_lanes;
static __device__ __forceinline__ argsort_lanes argsort_ballot(bool p) { return __ballot_sync(0xffffffffu, p); }
static __device__ __forceinline__ int argsort_popc(argsort_lanes m) { return __popc(m); }
static __device__ __forceinline__ unsigned argsort_shfl_up(unsigned v, int o) { return __shfl_up_sync(0xffffffffu, v, o, 32); }
static __device__ __forceinline__ void argsort_syncwarp() { __syncwarp(); }
#endif

// The u32 whose unsigned order is x's order (-0 as +0, so the two tie),
// reversed for a descending sort (order 1).
static __device__ __forceinline__ ternion_u32 argsort_radix_key(float x, int order) {
    ternion_u32 f = __float_as_uint(x);
    if (f == 0x80000000u) {
        f = 0;
    }
    const ternion_u32 k = (f & 0x80000000u) ? ~f : (f | 0x80000000u);
    return order ? ~k : k;
}

// Exclusive scan of one value a thread of a 1-D block of NT threads.
template <int NT>
static __device__ __forceinline__ ternion_u32 argsort_block_scan(ternion_u32 v) {
    __shared__ ternion_u32 ws[NT / TERNION_WARP_SIZE];
    const int lane = threadIdx.x % TERNION_WARP_SIZE, warp = threadIdx.x / TERNION_WARP_SIZE;
    ternion_u32 x = v;
    for (int o = 1; o < TERNION_WARP_SIZE; o <<= 1) {
        const ternion_u32 y = argsort_shfl_up(x, o);
        if (lane >= o) {
            x += y;
        }
    }
    if (lane == TERNION_WARP_SIZE - 1) {
        ws[warp] = x;
    }
    __syncthreads();
    if (warp == 0) {
        ternion_u32 w = lane < NT / TERNION_WARP_SIZE ? ws[lane] : 0;
        for (int o = 1; o < TERNION_WARP_SIZE; o <<= 1) {
            const ternion_u32 y = argsort_shfl_up(w, o);
            if (lane >= o) {
                w += y;
            }
        }
        if (lane < NT / TERNION_WARP_SIZE) {
            ws[lane] = w; // inclusive warp totals
        }
    }
    __syncthreads();
    const ternion_u32 before = warp > 0 ? ws[warp - 1] : 0;
    __syncthreads(); // ws may be reused by the next call
    return before + x - v;
}

// The key of element j (< ncols) of row row: from srow (row row of src,
// elements nb0 bytes apart) when kin is null, else kin[row*ncols + j].
static __device__ __forceinline__ ternion_u32 argsort_radix_load(const char * srow, ternion_i64 nb0, const ternion_u32 * kin, ternion_u32 row,
                                                                 int ncols, int j, int order) {
    if (kin != nullptr) {
        return kin[(ternion_i64)row * ncols + j];
    }
    return argsort_radix_key(*(const float *)(srow + (ternion_i64)j * nb0), order);
}

// hist[(row*256 + digit)*tiles + tile] = how many keys of the tile have
// digit (key >> shift) & 255. ARGSORT_RADIX_THREADS threads.
extern "C" __global__ void __launch_bounds__(256)
    argsort_radix_up(ternion_u32 * hist, ternion_tensor src, const ternion_u32 * kin, ternion_fastdiv ne1, ternion_fastdiv ne2, int ncols,
                     ternion_fastdiv tiles, int shift, int order) {
    TERNION_KERNEL_ENTRY();
    __shared__ ternion_u32 bins[256];
    const ternion_u32 row = ternion_fastdiv_div(blockIdx.x, tiles);
    const ternion_u32 t = blockIdx.x - row * tiles.d;
    const int t0 = (int)t * ARGSORT_RADIX_TILE;
    const int n = ncols - t0 < ARGSORT_RADIX_TILE ? ncols - t0 : ARGSORT_RADIX_TILE;
    const char * srow = kin != nullptr ? nullptr : (const char *)src.data + ternion_row_offset(row, src, ne1, ne2);
    bins[threadIdx.x] = 0;
    __syncthreads();
    for (int j = threadIdx.x; j < n; j += ARGSORT_RADIX_THREADS) {
        const ternion_u32 k = argsort_radix_load(srow, src.nb[0], kin, row, ncols, t0 + j, order);
        atomicAdd(&bins[(k >> shift) & 255], 1u);
    }
    __syncthreads();
    hist[((ternion_i64)row * 256 + threadIdx.x) * tiles.d + t] = bins[threadIdx.x];
}

// Block b < nrows turns the 256*tiles counts of row b of hist into exclusive
// offsets (in their order) in place. ARGSORT_RADIX_SCAN_THREADS threads.
extern "C" __global__ void __launch_bounds__(1024) argsort_radix_scan(ternion_u32 * hist, int nrows, int tiles) {
    TERNION_KERNEL_ENTRY();
    if ((int)blockIdx.x >= nrows) {
        return;
    }
    const int n = 256 * tiles;
    ternion_u32 * h = hist + (ternion_i64)blockIdx.x * n;
    const int per = (n + ARGSORT_RADIX_SCAN_THREADS - 1) / ARGSORT_RADIX_SCAN_THREADS;
    const int b = threadIdx.x * per, e = b + per < n ? b + per : n;
    ternion_u32 s = 0;
    for (int i = b; i < e; i++) {
        s += h[i];
    }
    ternion_u32 run = argsort_block_scan<ARGSORT_RADIX_SCAN_THREADS>(s);
    for (int i = b; i < e; i++) {
        const ternion_u32 c = h[i];
        h[i] = run;
        run += c;
    }
}

// Scatters the tile's (key, index) pairs to their places by digit (key >>
// shift) & 255: the offsets of argsort_radix_scan plus the element's rank
// among the tile's earlier elements of its digit. Pairs come from src (index
// = column) when kin is null, else from kin, iin; keys go to kout unless it
// is null, indices to iout (packed rows of ncols). ARGSORT_RADIX_THREADS
// threads; element j of the tile is thread (j / (warp*IPT)) * warp + j % warp's
// round (j / warp) % IPT, so a warp's rounds and lanes follow tile order.
extern "C" __global__ void __launch_bounds__(256)
    argsort_radix_down(ternion_u32 * kout, int * iout, ternion_tensor src, const ternion_u32 * kin, const int * iin, const ternion_u32 * offs,
                       ternion_fastdiv ne1, ternion_fastdiv ne2, int ncols, ternion_fastdiv tiles, int shift, int order) {
    TERNION_KERNEL_ENTRY();
    __shared__ ternion_u32 wcnt[ARGSORT_RADIX_WARPS][256];
    __shared__ ternion_u32 skey[ARGSORT_RADIX_TILE];
    __shared__ int sidx[ARGSORT_RADIX_TILE];
    __shared__ ternion_u32 lbase[256];
    __shared__ int gofs[256];
    const ternion_u32 row = ternion_fastdiv_div(blockIdx.x, tiles);
    const ternion_u32 t = blockIdx.x - row * tiles.d;
    const int t0 = (int)t * ARGSORT_RADIX_TILE;
    const int n = ncols - t0 < ARGSORT_RADIX_TILE ? ncols - t0 : ARGSORT_RADIX_TILE;
    const ternion_i64 rb = (ternion_i64)row * ncols;
    const int warp = threadIdx.x / TERNION_WARP_SIZE, lane = threadIdx.x % TERNION_WARP_SIZE;
    const char * srow = kin != nullptr ? nullptr : (const char *)src.data + ternion_row_offset(row, src, ne1, ne2);
    for (int i = threadIdx.x; i < ARGSORT_RADIX_WARPS * 256; i += ARGSORT_RADIX_THREADS) {
        (&wcnt[0][0])[i] = 0;
    }
    __syncthreads();
    ternion_u32 key[ARGSORT_RADIX_IPT], rk[ARGSORT_RADIX_IPT];
    int idx[ARGSORT_RADIX_IPT], dig[ARGSORT_RADIX_IPT];
    const argsort_lanes below = ((argsort_lanes)1 << lane) - 1;
#pragma unroll
    for (int r = 0; r < ARGSORT_RADIX_IPT; r++) {
        const int j = warp * TERNION_WARP_SIZE * ARGSORT_RADIX_IPT + r * TERNION_WARP_SIZE + lane;
        const bool valid = j < n;
        ternion_u32 k = 0;
        int ix = 0;
        if (valid) {
            k = argsort_radix_load(srow, src.nb[0], kin, row, ncols, t0 + j, order);
            ix = kin != nullptr ? iin[rb + t0 + j] : t0 + j;
        }
        const int d = valid ? (int)((k >> shift) & 255) : 256;
        // peers: the lanes whose d equals this lane's.
        const argsort_lanes vb = argsort_ballot(valid);
        argsort_lanes peers = valid ? vb : ~vb;
#pragma unroll
        for (int bit = 0; bit < 8; bit++) {
            const argsort_lanes m = argsort_ballot((d >> bit) & 1);
            peers &= ((d >> bit) & 1) ? m : ~m;
        }
        const ternion_u32 rank = argsort_popc(peers & below);
        const ternion_u32 pre = valid ? wcnt[warp][d] : 0;
        argsort_syncwarp();
        if (valid && (peers >> lane) == 1) { // the last lane of its digit
            wcnt[warp][d] = pre + argsort_popc(peers);
        }
        argsort_syncwarp();
        key[r] = k;
        idx[r] = ix;
        dig[r] = d;
        rk[r] = pre + rank;
    }
    __syncthreads();
    {
        const int d = threadIdx.x; // one digit a thread
        ternion_u32 s = 0;
#pragma unroll
        for (int w = 0; w < ARGSORT_RADIX_WARPS; w++) {
            const ternion_u32 c = wcnt[w][d];
            wcnt[w][d] = s;
            s += c;
        }
        const ternion_u32 ex = argsort_block_scan<ARGSORT_RADIX_THREADS>(s);
        lbase[d] = ex;
        gofs[d] = (int)offs[((ternion_i64)row * 256 + d) * tiles.d + t] - (int)ex;
    }
    __syncthreads();
#pragma unroll
    for (int r = 0; r < ARGSORT_RADIX_IPT; r++) {
        if (dig[r] < 256) {
            const ternion_u32 p = lbase[dig[r]] + wcnt[warp][dig[r]] + rk[r];
            skey[p] = key[r];
            sidx[p] = idx[r];
        }
    }
    __syncthreads();
    for (int j = threadIdx.x; j < n; j += ARGSORT_RADIX_THREADS) {
        const ternion_u32 k = skey[j];
        const ternion_i64 q = rb + gofs[(k >> shift) & 255] + j;
        if (kout != nullptr) {
            kout[q] = k;
        }
        iout[q] = sidx[j];
    }
}
