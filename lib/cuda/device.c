/* Opening a GPU: driver table, device, retained primary context, arch. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/device.h"

int32_t cuda_arch_sm(const char *arch) {
  if (!arch || strncmp(arch, "sm_", 3) != 0) return 0;
  char *end;
  long v = strtol(arch + 3, &end, 10);
  if (end == arch + 3 || v < 10 || v > 1000) return 0;
  if (*end == 'a' || *end == 'f') end++;
  return *end ? 0 : (int32_t)v;
}

static ic_status device_arch(cuda_device *d) {
  int major = 0, minor = 0;
  CUresult r = CU_CALL(d->drv, cuDeviceGetAttribute, &major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, d->device);
  if (r == CUDA_SUCCESS)
    r = CU_CALL(d->drv, cuDeviceGetAttribute, &minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, d->device);
  if (r != CUDA_SUCCESS) return cuda_error(d->drv, r, "cuDeviceGetAttribute");
  d->sm = major * 10 + minor;
  /* The arch-specific target (sm_90a) unlocks wgmma/setmaxnreg on Hopper; its CUBIN
   * runs only on that exact arch, which is the device's. */
  snprintf(d->arch, sizeof d->arch, "sm_%d%s", (int)d->sm, d->sm >= 90 ? "a" : "");
  return IC_OK;
}

/* ic's pool (device.h): none when the driver lacks pools or refuses (not an error: the
 * default pool serves then). */
static void device_pool(cuda_device *d) {
  const cuda_driver_api *drv = d->drv;
  if (!drv->cuMemPoolCreate || !drv->cuMemPoolDestroy || !drv->cuMemPoolSetAttribute || !drv->cuMemAllocFromPoolAsync)
    return;
  CUmemPoolProps props;
  memset(&props, 0, sizeof props);
  props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  props.handleTypes = CU_MEM_HANDLE_TYPE_NONE;
  props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  props.location.id = d->ordinal;
  if (CU_CALL(drv, cuMemPoolCreate, &d->pool, &props) != CUDA_SUCCESS) {
    d->pool = NULL;
    return;
  }
  cuuint64_t keep = ~(cuuint64_t)0;
  if (CU_CALL(drv, cuMemPoolSetAttribute, d->pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &keep) != CUDA_SUCCESS) {
    CU_CALL(drv, cuMemPoolDestroy, d->pool);
    d->pool = NULL;
  }
}

ic_status cuda_device_open(int32_t ordinal, cuda_device **out) {
  *out = NULL;
  const cuda_driver_api *drv = cuda_driver_get();
  if (!drv) return IC_ERR_NO_DEVICE; /* the reason is recorded */
  int count = 0;
  CUresult r = CU_CALL(drv, cuDeviceGetCount, &count);
  if (r != CUDA_SUCCESS) return cuda_error(drv, r, "cuDeviceGetCount");
  if (ordinal < 0 || ordinal >= count)
    return error_set(IC_ERR_INVALID_ARGUMENT, "device %d does not exist (%d device(s))", (int)ordinal, count);
  cuda_device *d = sys_calloc(1, sizeof *d);
  if (!d) return error_set(IC_ERR_OUT_OF_MEMORY, "out of memory opening device %d", (int)ordinal);
  d->drv = drv;
  d->ordinal = ordinal;
  ic_status s = IC_OK;
  if ((r = CU_CALL(drv, cuDeviceGet, &d->device, ordinal)) != CUDA_SUCCESS) s = cuda_error(drv, r, "cuDeviceGet");
  if (!s && (r = CU_CALL(drv, cuDevicePrimaryCtxRetain, &d->cuctx, d->device)) != CUDA_SUCCESS)
    s = cuda_error(drv, r, "cuDevicePrimaryCtxRetain");
  if (!s) s = device_arch(d);
  if (s) {
    cuda_device_close(d);
    return s;
  }
  device_pool(d);
  *out = d;
  return IC_OK;
}

void cuda_device_close(cuda_device *d) {
  if (!d) return;
  if (d->pool) CU_CALL(d->drv, cuMemPoolDestroy, d->pool); /* released once its last allocation is freed */
  if (d->cuctx) CU_CALL(d->drv, cuDevicePrimaryCtxRelease, d->device);
  free(d);
}

ic_status cuda_device_enter(const cuda_device *d) {
  CUresult r = CU_CALL(d->drv, cuCtxPushCurrent, d->cuctx);
  return r == CUDA_SUCCESS ? IC_OK : cuda_error(d->drv, r, "cuCtxPushCurrent");
}

void cuda_device_leave(const cuda_device *d) {
  CUcontext popped;
  CU_CALL(d->drv, cuCtxPopCurrent, &popped);
}
