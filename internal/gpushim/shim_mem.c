//go:build cuda || hip || musa

// shim_mem.c - device, pinned and managed memory, copies, and virtual memory
// management.
#include <string.h>

#include "shim_impl.h"

tn_status tn_malloc(int32_t dev, uint64_t size, uint64_t *out) {
    *out = 0;
    TN_TRY(tn_use_device(dev));
    void *p = NULL;
    TN_RT(cudaMalloc, (&p, (size_t)size));
    *out = TN_U64(p);
    return tn_ok();
}

tn_status tn_malloc_managed(int32_t dev, uint64_t size, uint64_t *out, int32_t *fallback) {
    *out = 0;
    *fallback = 0;
    TN_TRY(tn_use_device(dev));
    void *p = NULL;
#if defined(TERNION_HIP)
    // As the seed: coarse-grained managed memory (device-speed access), and
    // plain device memory where the device or OS has no managed memory.
    cudaError_t e = TN_RT_FN(cudaMallocManaged)(&p, (size_t)size, cudaMemAttachGlobal);
    if (e == cudaErrorNotSupported) {
        (void)TN_RT_FN(cudaGetLastError)();
        *fallback = 1;
        TN_RT(cudaMalloc, (&p, (size_t)size));
    } else if (e != cudaSuccess) {
        return tn_rt(TN_STR(cudaMallocManaged), e);
    } else if ((e = TN_RT_FN(cudaMemAdvise)(p, (size_t)size, hipMemAdviseSetCoarseGrain, dev)) != cudaSuccess) {
        tn_status st = tn_rt(TN_STR(cudaMemAdvise), e);
        (void)TN_RT_FN(cudaFree)(p);
        return st;
    }
#else
    TN_RT(cudaMallocManaged, (&p, (size_t)size, cudaMemAttachGlobal));
#endif
    *out = TN_U64(p);
    return tn_ok();
}

tn_status tn_free(int32_t dev, uint64_t p) {
    TN_TRY(tn_use_device(dev));
    TN_RT(cudaFree, (TN_DPTR(p)));
    return tn_ok();
}

tn_status tn_host_alloc(uint64_t size, uintptr_t *out) {
    *out = 0;
    void *p = NULL;
    TN_RT(cudaHostAlloc, (&p, (size_t)size, cudaHostAllocPortable));
    *out = (uintptr_t)p;
    return tn_ok();
}

tn_status tn_host_free(uintptr_t p) {
    TN_RT(cudaFreeHost, ((void *)p));
    return tn_ok();
}

tn_status tn_host_register(uintptr_t p, uint64_t size) {
    TN_RT(cudaHostRegister, ((void *)p, (size_t)size, cudaHostRegisterPortable));
    return tn_ok();
}

tn_status tn_host_unregister(uintptr_t p) {
    TN_RT(cudaHostUnregister, ((void *)p));
    return tn_ok();
}

// finish waits for the legacy stream when the caller asked for the
// synchronous form (stream 0).
static tn_status finish(uint64_t stream) {
    if (stream == 0) TN_RT(cudaStreamSynchronize, (0));
    return tn_ok();
}

tn_status tn_memset(int32_t dev, uint64_t stream, uint64_t p, int32_t value, uint64_t size) {
    TN_TRY(tn_use_device(dev));
    TN_RT(cudaMemsetAsync, (TN_DPTR(p), value, (size_t)size, TN_STREAM(stream)));
    return finish(stream);
}

// Synchronous copies from and to Go memory: the host side is pageable, so the
// copy is queued on the legacy stream and waited for before returning; C keeps
// no pointer to Go memory afterwards.
tn_status tn_copy_htod(int32_t dev, uint64_t dst, const void *src, uint64_t size) {
    TN_TRY(tn_use_device(dev));
    TN_RT(cudaMemcpyAsync, (TN_DPTR(dst), src, (size_t)size, cudaMemcpyHostToDevice, 0));
    return finish(0);
}

tn_status tn_copy_dtoh(int32_t dev, void *dst, uint64_t src, uint64_t size) {
    TN_TRY(tn_use_device(dev));
    TN_RT(cudaMemcpyAsync, (dst, TN_DPTR(src), (size_t)size, cudaMemcpyDeviceToHost, 0));
    return finish(0);
}

tn_status tn_copy_async(int32_t dev, uint64_t stream, uint64_t dst, uint64_t src, uint64_t size, int32_t dir) {
    enum cudaMemcpyKind kind;
    switch (dir) {
    case TN_H2D: kind = cudaMemcpyHostToDevice; break;
    case TN_D2H: kind = cudaMemcpyDeviceToHost; break;
    case TN_D2D: kind = cudaMemcpyDeviceToDevice; break;
    default: return tn_shim(TN_STR(cudaMemcpyAsync), "TERNION_INVALID_VALUE", "unknown copy direction", TN_HINT_INVALID_VALUE);
    }
    TN_TRY(tn_use_device(dev));
    TN_RT(cudaMemcpyAsync, (TN_DPTR(dst), TN_DPTR(src), (size_t)size, kind, TN_STREAM(stream)));
    return finish(stream);
}

tn_status tn_copy_peer(uint64_t stream, int32_t sdev, int32_t dst_dev, uint64_t dst, int32_t src_dev, uint64_t src,
                       uint64_t size) {
    TN_TRY(tn_use_device(sdev));
    TN_RT(cudaMemcpyPeerAsync, (TN_DPTR(dst), dst_dev, TN_DPTR(src), src_dev, (size_t)size, TN_STREAM(stream)));
    return finish(stream);
}

tn_status tn_copy_2d_async(int32_t dev, uint64_t stream, uint64_t dst, uint64_t dpitch, uint64_t src,
                           uint64_t spitch, uint64_t width, uint64_t height) {
    TN_TRY(tn_use_device(dev));
    TN_RT(cudaMemcpy2DAsync, (TN_DPTR(dst), (size_t)dpitch, TN_DPTR(src), (size_t)spitch, (size_t)width,
                              (size_t)height, cudaMemcpyDeviceToDevice, TN_STREAM(stream)));
    return finish(stream);
}

tn_status tn_copy_2d_peer(uint64_t stream, int32_t sdev, int32_t dst_dev, uint64_t dst, uint64_t dpitch, int32_t src_dev,
                          uint64_t src, uint64_t spitch, uint64_t width, uint64_t height) {
    TN_TRY(tn_use_device(sdev));
#if !defined(TERNION_HIP) && !defined(TERNION_MUSA)
    // A plain 2D copy may fail between VMM pools of different devices (as the seed notes): use the 3D peer copy.
    struct cudaMemcpy3DPeerParms p;
    memset(&p, 0, sizeof p);
    p.dstDevice = dst_dev;
    p.dstPtr = make_cudaPitchedPtr(TN_DPTR(dst), (size_t)dpitch, (size_t)dpitch, (size_t)height);
    p.srcDevice = src_dev;
    p.srcPtr = make_cudaPitchedPtr(TN_DPTR(src), (size_t)spitch, (size_t)spitch, (size_t)height);
    p.extent = make_cudaExtent((size_t)width, (size_t)height, 1);
    TN_RT(cudaMemcpy3DPeerAsync, (&p, TN_STREAM(stream)));
#else
    // HIP and MUSA have no 3D peer copy: a 2D copy over unified addresses, as the seed does.
    (void)dst_dev;
    (void)src_dev;
    TN_RT(cudaMemcpy2DAsync, (TN_DPTR(dst), (size_t)dpitch, TN_DPTR(src), (size_t)spitch, (size_t)width,
                              (size_t)height, cudaMemcpyDeviceToDevice, TN_STREAM(stream)));
#endif
    return finish(stream);
}

tn_status tn_vmm_reserve(int32_t dev, uint64_t size, uint64_t alignment, uint64_t *out) {
    *out = 0;
    TN_TRY(tn_use_device_ctx(dev));
    CUdeviceptr p = 0;
    TN_DR(cuMemAddressReserve, (&p, (size_t)size, (size_t)alignment, 0, 0));
    *out = (uint64_t)p;
    return tn_ok();
}

tn_status tn_vmm_free(int32_t dev, uint64_t base, uint64_t size) {
    TN_TRY(tn_use_device_ctx(dev));
    TN_DR(cuMemAddressFree, ((CUdeviceptr)base, (size_t)size));
    return tn_ok();
}

tn_status tn_vmm_create(int32_t dev, uint64_t size, uint64_t *out) {
    *out = 0;
    TN_TRY(tn_use_device_ctx(dev));
    CUmemAllocationProp prop;
    memset(&prop, 0, sizeof prop);
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = dev;
    CUmemGenericAllocationHandle h = 0;
    TN_DR(cuMemCreate, (&h, (size_t)size, &prop, 0));
    *out = (uint64_t)h;
    return tn_ok();
}

tn_status tn_vmm_release(int32_t dev, uint64_t handle) {
    TN_TRY(tn_use_device_ctx(dev));
    TN_DR(cuMemRelease, ((CUmemGenericAllocationHandle)handle));
    return tn_ok();
}

tn_status tn_vmm_map(int32_t dev, uint64_t p, uint64_t size, uint64_t handle) {
    TN_TRY(tn_use_device_ctx(dev));
    TN_DR(cuMemMap, ((CUdeviceptr)p, (size_t)size, 0, (CUmemGenericAllocationHandle)handle, 0));
    return tn_ok();
}

tn_status tn_vmm_set_access(int32_t dev, uint64_t p, uint64_t size) {
    TN_TRY(tn_use_device_ctx(dev));
    CUmemAccessDesc access;
    memset(&access, 0, sizeof access);
    access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    access.location.id = dev;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    TN_DR(cuMemSetAccess, ((CUdeviceptr)p, (size_t)size, &access, 1));
    return tn_ok();
}

tn_status tn_vmm_unmap(int32_t dev, uint64_t p, uint64_t size) {
    TN_TRY(tn_use_device_ctx(dev));
    TN_DR(cuMemUnmap, ((CUdeviceptr)p, (size_t)size));
    return tn_ok();
}
