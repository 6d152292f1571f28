// pdl.cu - a standalone nvcc program that measures what programmatic
// dependent launch (PDL: griddepcontrol on Hopper) saves per node of a chain
// of tiny dependent kernels replayed as a CUDA graph, before ternion's
// launches use it (Wave 2 · 5/7's goal: a 1000-node chain replayed at
// <= 0.75 us/node; ternion's bin ops measured 1.06, a noop chain 0.51-0.69).
//
// Each kernel adds 1 to one float (a chain: every node reads what the one
// before wrote), with the kernel's parameters padded to P bytes (ternion's
// tensor descriptors make a bin op's parameters ~250 bytes). Variants:
// plain launches; launches with the programmatic-stream-serialization
// attribute and griddepcontrol.wait at the kernel's start (no trigger: the
// next kernel may launch when this one completes); the same with
// griddepcontrol.launch_dependents right after the wait (the next kernel's
// blocks launch early and wait for this grid's completion and memory).
// The result is checked (the float must equal the node count).
//
// Build and run (device tool, repo root):
//   nvcc -O3 -arch=sm_90 -o /tmp/pdl bench/experiments/pdl.cu && /tmp/pdl
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); exit(1); } } while (0)

template <int P> struct pad { char b[P]; };

// MODE 0: plain; 1: wait at the start; 2: wait, then trigger.
template <int MODE, int P>
__global__ void add1(float * x, pad<P> p) {
    if (MODE >= 1) asm volatile("griddepcontrol.wait;" ::: "memory");
    if (MODE == 2) asm volatile("griddepcontrol.launch_dependents;");
    if (threadIdx.x == 0 && blockIdx.x == 0) x[0] += 1.0f + (float)p.b[0];
}

template <int MODE, int P>
static void run(const char * name, float * x, int nodes, int blocks, int threads = 128) {
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    pad<P> p = {};
    cudaGraph_t g;
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    for (int i = 0; i < nodes; i++) {
        cudaLaunchConfig_t cfg = {};
        cfg.gridDim = dim3(blocks);
        cfg.blockDim = dim3(threads);
        cfg.stream = s;
        cudaLaunchAttribute attr[1];
        attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
        attr[0].val.programmaticStreamSerializationAllowed = 1;
        cfg.attrs = attr;
        cfg.numAttrs = MODE >= 1 ? 1 : 0;
        CK(cudaLaunchKernelEx(&cfg, add1<MODE, P>, x, p));
    }
    CK(cudaStreamEndCapture(s, &g));
    cudaGraphExec_t ge;
    CK(cudaGraphInstantiateWithFlags(&ge, g, 0));
    CK(cudaMemsetAsync(x, 0, 4, s));
    CK(cudaGraphLaunch(ge, s));
    CK(cudaStreamSynchronize(s));
    float h = 0;
    CK(cudaMemcpy(&h, x, 4, cudaMemcpyDeviceToHost));
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    float best = 1e30f;
    for (int rep = 0; rep < 7; rep++) {
        CK(cudaEventRecord(e0, s));
        CK(cudaGraphLaunch(ge, s));
        CK(cudaEventRecord(e1, s));
        CK(cudaEventSynchronize(e1));
        float ms;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        if (ms < best) best = ms;
    }
    printf("%-28s params %4d B, %3d blocks of %3d: %.3f us/node  (check %s: %.0f of %d)\n", name, P, blocks, threads, best * 1000 / nodes,
           h == (float)nodes ? "ok" : "FAILED", h, nodes);
    CK(cudaGraphExecDestroy(ge));
    CK(cudaGraphDestroy(g));
    CK(cudaStreamDestroy(s));
}

int main() {
    float * x;
    CK(cudaMalloc(&x, 4));
    const int n = 1000;
    for (int blocks : {1, 132}) {
        run<0, 16>("plain", x, n, blocks);
        run<1, 16>("pdl, wait", x, n, blocks);
        run<2, 16>("pdl, wait + trigger", x, n, blocks);
        run<0, 256>("plain", x, n, blocks);
        run<1, 256>("pdl, wait", x, n, blocks);
        run<2, 256>("pdl, wait + trigger", x, n, blocks);
    }
    // Block size (session 17: ternion's tiny ops launched 256 threads for one element).
    for (int threads : {32, 128, 256})
        run<2, 256>("pdl, wait + trigger", x, n, 1, threads);
    return 0;
}
