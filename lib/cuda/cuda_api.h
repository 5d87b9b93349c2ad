/* The CUDA driver and NVRTC, loaded at run time with dlopen so that libic loads, builds
 * graphs and compiles kernels on machines without a GPU driver.
 *
 * libcuda: dlopen("libcuda.so.1"), then only cuGetProcAddress_v2 through dlsym; every
 * other entry point comes from cuGetProcAddress_v2 with an explicit CUDA version, typed
 * by the PFN_* typedefs of cudaTypedefs.h (cuda.h renames many functions to _v2.._v4).
 * libnvrtc: IC_NVRTC if set, else the soname whose major matches the driver's CUDA major,
 * else the newest we know. Neither library is ever dlclose'd (tables are process-wide,
 * loaded once under pthread_once).
 */
#ifndef IC_CUDA_API_H
#define IC_CUDA_API_H

#include <cuda.h>
#include <cudaTypedefs.h>
#include <nvrtc.h>

#include "base/base.h"
#include "base/fault.h"

/* Every call of a loaded entry point goes through the fault table (base/fault.h):
 * NVRTC_CALL(nv, nvrtcCompileProgram, prog, n, opts) is nv->nvrtcCompileProgram(prog, n,
 * opts) unless a test armed a fault there. The error-string lookups are not points. */
#define NVRTC_CALL(api, fn, ...) \
  (fault_hit(FAULT_NVRTC, #fn) ? (nvrtcResult)fault_code() : (api)->fn(__VA_ARGS__))
#define CU_CALL(api, fn, ...) (fault_hit(FAULT_DRIVER, #fn) ? (CUresult)fault_code() : (api)->fn(__VA_ARGS__))

/* The entry points ic itself calls, nothing more (benchmarks and tests open their own).
 * Each is requested at the oldest CUDA version that has its ABI, so any driver for CUDA
 * 12.0 or newer serves the table; optional entries are NULL when a driver lacks them. */
typedef struct cuda_driver_api {
  PFN_cuInit_v2000 cuInit;
  PFN_cuDriverGetVersion_v2020 cuDriverGetVersion;
  PFN_cuGetErrorString_v6000 cuGetErrorString;
  PFN_cuGetErrorName_v6000 cuGetErrorName;
  PFN_cuDeviceGetCount_v2000 cuDeviceGetCount;
  PFN_cuDeviceGet_v2000 cuDeviceGet;
  PFN_cuDeviceGetAttribute_v2000 cuDeviceGetAttribute;
  PFN_cuDevicePrimaryCtxRetain_v7000 cuDevicePrimaryCtxRetain;
  PFN_cuDevicePrimaryCtxRelease_v11000 cuDevicePrimaryCtxRelease;
  PFN_cuCtxPushCurrent_v4000 cuCtxPushCurrent;
  PFN_cuCtxPopCurrent_v4000 cuCtxPopCurrent;
  PFN_cuModuleLoadData_v2000 cuModuleLoadData;
  PFN_cuModuleUnload_v2000 cuModuleUnload;
  PFN_cuModuleGetFunction_v2000 cuModuleGetFunction;
  PFN_cuLaunchKernel_v4000 cuLaunchKernel;
  PFN_cuFuncSetAttribute_v9000 cuFuncSetAttribute;
  PFN_cuMemAlloc_v3020 cuMemAlloc;
  PFN_cuMemFree_v3020 cuMemFree;
  PFN_cuMemAllocAsync_v11020 cuMemAllocAsync; /* optional: cuMemAlloc/cuMemFree when absent */
  PFN_cuMemFreeAsync_v11020 cuMemFreeAsync;   /* optional */
  PFN_cuMemPoolCreate_v11020 cuMemPoolCreate; /* optional, as the next three: ic's own pool */
  PFN_cuMemPoolDestroy_v11020 cuMemPoolDestroy;
  PFN_cuMemPoolSetAttribute_v11020 cuMemPoolSetAttribute;
  PFN_cuMemAllocFromPoolAsync_v11020 cuMemAllocFromPoolAsync;
  PFN_cuMemcpyHtoD_v3020 cuMemcpyHtoD;
  PFN_cuMemcpyDtoH_v3020 cuMemcpyDtoH;
  PFN_cuMemsetD8_v3020 cuMemsetD8;
  PFN_cuStreamSynchronize_v2000 cuStreamSynchronize;
  int driver_version; /* cuDriverGetVersion, e.g. 13000 */
} cuda_driver_api;

typedef struct cuda_nvrtc_api {
  nvrtcResult (*nvrtcVersion)(int *major, int *minor);
  const char *(*nvrtcGetErrorString)(nvrtcResult r);
  nvrtcResult (*nvrtcCreateProgram)(nvrtcProgram *prog, const char *src, const char *name, int numHeaders,
                                    const char *const *headers, const char *const *includeNames);
  nvrtcResult (*nvrtcDestroyProgram)(nvrtcProgram *prog);
  nvrtcResult (*nvrtcCompileProgram)(nvrtcProgram prog, int numOptions, const char *const *options);
  nvrtcResult (*nvrtcGetProgramLogSize)(nvrtcProgram prog, size_t *size);
  nvrtcResult (*nvrtcGetProgramLog)(nvrtcProgram prog, char *log);
  nvrtcResult (*nvrtcGetCUBINSize)(nvrtcProgram prog, size_t *size);
  nvrtcResult (*nvrtcGetCUBIN)(nvrtcProgram prog, char *cubin);
  nvrtcResult (*nvrtcGetNumSupportedArchs)(int *n);
  nvrtcResult (*nvrtcGetSupportedArchs)(int *archs);
  int major, minor;
  char path[256]; /* the soname or path that was loaded */
} cuda_nvrtc_api;

/* The process-wide driver table, or NULL with IC_ERR_NO_DEVICE recorded (no libcuda, a
 * stub library, or cuInit failing). Also returns NULL when no device is present. */
const cuda_driver_api *cuda_driver_get(void);
/* The process-wide NVRTC table, or NULL with IC_ERR_NO_NVRTC recorded. driver_major is the
 * CUDA major of the driver (0 when there is none) and is only honoured on the first call. */
const cuda_nvrtc_api *cuda_nvrtc_get(int driver_major);

/* Loads NVRTC (cuda_nvrtc_get) and compiles an empty kernel for arch, so that NVRTC's
 * one-time start-up is paid before the first real compile (IC_CONTEXT_WARM_COMPILER runs
 * it on a thread of its own). Best effort: failures are not reported. */
void cuda_nvrtc_warm(const char *arch, int driver_major);

/* The entries of the driver table: name, requested version, optional. For tests. */
typedef struct cuda_driver_entry {
  const char *name; /* the base name cuGetProcAddress wants ("cuMemAlloc") */
  int version;      /* 3020 for cuMemAlloc_v2 */
  bool optional;
  size_t offset;    /* of the pointer in cuda_driver_api */
} cuda_driver_entry;
const cuda_driver_entry *cuda_driver_entries(size_t *count);

/* Records a driver error as IC_ERR_CUDA ("what: CUDA_ERROR_X (text)") and returns the
 * status (IC_ERR_OUT_OF_MEMORY for CUDA_ERROR_OUT_OF_MEMORY). */
ic_status cuda_error(const cuda_driver_api *drv, CUresult r, const char *what);

#endif
