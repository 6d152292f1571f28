//go:build cuda || hip || musa

// shim_exec.c - streams, events and graph capture/replay.
#include <string.h>

#include "shim_impl.h"

tn_status tn_stream_create(int32_t dev, uint64_t *out) {
    *out = 0;
    TN_TRY(tn_use_device(dev));
    cudaStream_t s = NULL;
    TN_RT(cudaStreamCreateWithFlags, (&s, cudaStreamNonBlocking));
    *out = TN_U64(s);
    return tn_ok();
}

tn_status tn_stream_destroy(int32_t dev, uint64_t s) {
    TN_TRY(tn_use_device(dev));
    TN_RT(cudaStreamDestroy, (TN_STREAM(s)));
    return tn_ok();
}

tn_status tn_stream_sync(int32_t dev, uint64_t s) {
    TN_TRY(tn_use_device(dev));
    TN_RT(cudaStreamSynchronize, (TN_STREAM(s)));
    return tn_ok();
}

tn_status tn_stream_query(int32_t dev, uint64_t s) {
    TN_TRY(tn_use_device(dev));
    TN_RT(cudaStreamQuery, (TN_STREAM(s)));
    return tn_ok();
}

tn_status tn_stream_wait_event(int32_t dev, uint64_t s, uint64_t e) {
    TN_TRY(tn_use_device(dev));
    TN_RT(cudaStreamWaitEvent, (TN_STREAM(s), TN_EVENT(e), 0));
    return tn_ok();
}

tn_status tn_event_create(int32_t dev, int32_t timing, uint64_t *out) {
    *out = 0;
    TN_TRY(tn_use_device(dev));
    cudaEvent_t e = NULL;
    TN_RT(cudaEventCreateWithFlags, (&e, timing ? cudaEventDefault : cudaEventDisableTiming));
    *out = TN_U64(e);
    return tn_ok();
}

tn_status tn_event_destroy(int32_t dev, uint64_t e) {
    TN_TRY(tn_use_device(dev));
    TN_RT(cudaEventDestroy, (TN_EVENT(e)));
    return tn_ok();
}

tn_status tn_event_record(int32_t dev, uint64_t e, uint64_t s) {
    TN_TRY(tn_use_device(dev));
    TN_RT(cudaEventRecord, (TN_EVENT(e), TN_STREAM(s)));
    return tn_ok();
}

tn_status tn_event_sync(int32_t dev, uint64_t e) {
    TN_TRY(tn_use_device(dev));
    TN_RT(cudaEventSynchronize, (TN_EVENT(e)));
    return tn_ok();
}

tn_status tn_event_query(int32_t dev, uint64_t e) {
    TN_TRY(tn_use_device(dev));
    TN_RT(cudaEventQuery, (TN_EVENT(e)));
    return tn_ok();
}

tn_status tn_event_elapsed(int32_t dev, uint64_t start, uint64_t end, float *ms) {
    *ms = 0;
    TN_TRY(tn_use_device(dev));
    TN_RT(cudaEventElapsedTime, (ms, TN_EVENT(start), TN_EVENT(end)));
    return tn_ok();
}

tn_status tn_capture_begin(int32_t dev, uint64_t s) {
    TN_TRY(tn_use_device(dev));
    TN_RT(cudaStreamBeginCapture, (TN_STREAM(s), cudaStreamCaptureModeRelaxed));
    return tn_ok();
}

tn_status tn_capture_end(int32_t dev, uint64_t s, uint64_t *graph) {
    *graph = 0;
    TN_TRY(tn_use_device(dev));
    cudaGraph_t g = NULL;
    TN_RT(cudaStreamEndCapture, (TN_STREAM(s), &g));
    *graph = TN_U64(g);
    return tn_ok();
}

tn_status tn_capture_status(int32_t dev, uint64_t s, int32_t *status) {
    *status = 0;
    TN_TRY(tn_use_device(dev));
    enum cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
    TN_RT(cudaStreamIsCapturing, (TN_STREAM(s), &cs));
    switch (cs) {
    case cudaStreamCaptureStatusNone: *status = 0; break;
    case cudaStreamCaptureStatusActive: *status = 1; break;
    default: *status = 2; break; // invalidated
    }
    return tn_ok();
}

tn_status tn_graph_instantiate(int32_t dev, uint64_t graph, uint64_t *exec) {
    *exec = 0;
    TN_TRY(tn_use_device(dev));
    cudaGraphExec_t x = NULL;
#if TN_GRAPH_API_12
    TN_RT(cudaGraphInstantiate, (&x, (cudaGraph_t)(uintptr_t)graph, 0));
#else
    TN_RT(cudaGraphInstantiate, (&x, (cudaGraph_t)(uintptr_t)graph, NULL, NULL, 0));
#endif
    *exec = TN_U64(x);
    return tn_ok();
}

tn_status tn_graph_exec_update(int32_t dev, uint64_t exec, uint64_t graph) {
    TN_TRY(tn_use_device(dev));
    cudaGraphExec_t x = (cudaGraphExec_t)(uintptr_t)exec;
    cudaGraph_t g = (cudaGraph_t)(uintptr_t)graph;
    int result = 0;
#if TN_GRAPH_API_12
    cudaGraphExecUpdateResultInfo info;
    memset(&info, 0, sizeof info);
    cudaError_t e = TN_RT_FN(cudaGraphExecUpdate)(x, g, &info);
    result = (int)info.result;
#else
    cudaGraphNode_t node = NULL;
    enum cudaGraphExecUpdateResult res = cudaGraphExecUpdateSuccess;
    cudaError_t e = TN_RT_FN(cudaGraphExecUpdate)(x, g, &node, &res);
    result = (int)res;
#endif
    if (e == cudaSuccess) return tn_ok();
    // Every failure is reported as a graph update failure (the caller
    // re-instantiates; x is unchanged), with the update result in aux.
    tn_status s = tn_rt(TN_STR(cudaGraphExecUpdate), e);
    s.hint = TN_HINT_GRAPH_UPDATE;
    s.aux = result;
    return s;
}

tn_status tn_graph_launch(int32_t dev, uint64_t exec, uint64_t s) {
    TN_TRY(tn_use_device(dev));
    TN_RT(cudaGraphLaunch, ((cudaGraphExec_t)(uintptr_t)exec, TN_STREAM(s)));
    return tn_ok();
}

tn_status tn_graph_destroy(int32_t dev, uint64_t graph) {
    TN_TRY(tn_use_device(dev));
    TN_RT(cudaGraphDestroy, ((cudaGraph_t)(uintptr_t)graph));
    return tn_ok();
}

tn_status tn_graph_exec_destroy(int32_t dev, uint64_t exec) {
    TN_TRY(tn_use_device(dev));
    TN_RT(cudaGraphExecDestroy, ((cudaGraphExec_t)(uintptr_t)exec));
    return tn_ok();
}
