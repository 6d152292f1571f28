// argsort.cu - ggml's ARGSORT of f32 rows, ascending (order 0) or descending
// (order 1), for rows of any length. Elements are ordered by key, then by
// column index (so equal keys keep their order and every order is total).
//
// argsort_chunk sorts chunks of a power-of-two length (at most 4096) of
// every row in shared memory with a bitonic network; a row that fits one
// chunk is done in this one launch. Longer rows are sorted chunk by chunk
// into (key, index) buffers and merged by argsort_merge, a pass per doubling
// of the sorted run width: each block merges one 2048-element tile of the
// output, found by a merge-path search over the two runs.
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
