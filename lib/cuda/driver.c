/* libcuda, loaded at run time: dlopen + cuGetProcAddress_v2 with explicit versions. */
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "cuda/cuda_api.h"

/* Every entry point of cuda_driver_api, with the CUDA version of the ABI that its
 * PFN_<name>_v<version> typedef describes (cuGetProcAddress's cudaVersion argument). */
#define IC_DRIVER_ENTRIES(X)               \
  X(cuInit, 2000, false)                   \
  X(cuDriverGetVersion, 2020, false)       \
  X(cuGetErrorString, 6000, false)         \
  X(cuGetErrorName, 6000, false)           \
  X(cuDeviceGetCount, 2000, false)         \
  X(cuDeviceGet, 2000, false)              \
  X(cuDeviceGetAttribute, 2000, false)     \
  X(cuDevicePrimaryCtxRetain, 7000, false) \
  X(cuDevicePrimaryCtxRelease, 11000, false) \
  X(cuCtxPushCurrent, 4000, false)         \
  X(cuCtxPopCurrent, 4000, false)          \
  X(cuModuleLoadData, 2000, false)         \
  X(cuModuleUnload, 2000, false)           \
  X(cuModuleGetFunction, 2000, false)      \
  X(cuLaunchKernel, 4000, false)           \
  X(cuFuncSetAttribute, 9000, false)       \
  X(cuMemAlloc, 3020, false)               \
  X(cuMemFree, 3020, false)                \
  X(cuMemAllocAsync, 11020, true)          \
  X(cuMemFreeAsync, 11020, true)           \
  X(cuMemPoolCreate, 11020, true)          \
  X(cuMemPoolDestroy, 11020, true)         \
  X(cuMemPoolSetAttribute, 11020, true)    \
  X(cuMemAllocFromPoolAsync, 11020, true)  \
  X(cuMemcpyHtoD, 3020, false)             \
  X(cuMemcpyDtoH, 3020, false)             \
  X(cuMemsetD8, 3020, false)               \
  X(cuStreamSynchronize, 2000, false)

/* A version that disagrees with the struct's PFN type is a compile error. */
#define IC_DRV_CHECK_(fn, ver, opt)                                                          \
  _Static_assert(__builtin_types_compatible_p(__typeof__(((cuda_driver_api *)0)->fn), \
                                              PFN_##fn##_v##ver),                     \
                 #fn ": version differs from cuda_driver_api");
IC_DRIVER_ENTRIES(IC_DRV_CHECK_)
#undef IC_DRV_CHECK_

static const cuda_driver_entry k_entries[] = {
#define IC_DRV_ENTRY_(fn, ver, opt) {#fn, ver, opt, offsetof(cuda_driver_api, fn)},
    IC_DRIVER_ENTRIES(IC_DRV_ENTRY_)
#undef IC_DRV_ENTRY_
};

/* Every function pointer of the struct (they come first) has an entry. */
_Static_assert(offsetof(cuda_driver_api, driver_version) ==
                   sizeof k_entries / sizeof k_entries[0] * sizeof(void (*)(void)),
               "cuda_driver_api and IC_DRIVER_ENTRIES differ");

typedef CUresult (*get_proc_fn)(const char *symbol, void **pfn, int cuda_version, cuuint64_t flags,
                                CUdriverProcAddressQueryResult *status);
_Static_assert(__builtin_types_compatible_p(get_proc_fn, PFN_cuGetProcAddress_v12000),
               "cuGetProcAddress_v2 signature");

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static cuda_driver_api g_api;
static const cuda_driver_api *g_result; /* &g_api on success */
static char g_error[1024];            /* the failure, recorded again on every call */

static void fail(const char *fmt, ...) PRINTF_LIKE(1, 2);
static void fail(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(g_error, sizeof g_error, fmt, ap);
  va_end(ap);
  if (n < 0) snprintf(g_error, sizeof g_error, "no CUDA driver");
}

static const char *result_name(const cuda_driver_api *drv, CUresult r) {
  const char *s = NULL;
  if (drv && drv->cuGetErrorName && drv->cuGetErrorName(r, &s) == CUDA_SUCCESS && s) return s;
  switch (r) {
    case CUDA_ERROR_STUB_LIBRARY:
      return "CUDA_ERROR_STUB_LIBRARY";
    case CUDA_ERROR_NO_DEVICE:
      return "CUDA_ERROR_NO_DEVICE";
    case CUDA_ERROR_INVALID_VALUE:
      return "CUDA_ERROR_INVALID_VALUE";
    case CUDA_ERROR_NOT_SUPPORTED:
      return "CUDA_ERROR_NOT_SUPPORTED";
    default:
      return "CUDA error";
  }
}

static void load_driver(void) {
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char *why = dlerror();
    fail("no CUDA driver: libcuda.so.1 not found (%s)", why ? why : "dlopen failed");
    return;
  }
  /* Never dlclose'd: the table is process-wide and lives until exit. */
  get_proc_fn get_proc = NULL;
  dlerror();
  *(void **)&get_proc = dlsym(lib, "cuGetProcAddress_v2");
  if (!get_proc) {
    const char *why = dlerror();
    fail("no usable CUDA driver: libcuda.so.1 has no cuGetProcAddress_v2 (%s); a driver for "
         "CUDA 12.0 or newer is needed",
         why ? why : "symbol not found");
    return;
  }

  cuda_driver_api api;
  memset(&api, 0, sizeof api);
  for (size_t i = 0; i < ARRAY_LEN(k_entries); i++) {
    const cuda_driver_entry *e = &k_entries[i];
    void *fn = NULL;
    CUdriverProcAddressQueryResult found = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    CUresult r = get_proc(e->name, &fn, e->version, CU_GET_PROC_ADDRESS_DEFAULT, &found);
    if (r == CUDA_ERROR_STUB_LIBRARY) {
      fail("no CUDA driver: libcuda.so.1 is the toolkit's stub library "
           "(CUDA_ERROR_STUB_LIBRARY); install the NVIDIA driver");
      return;
    }
    if (e->optional && (r != CUDA_SUCCESS || !fn || found != CU_GET_PROC_ADDRESS_SUCCESS)) continue;
    if (r != CUDA_SUCCESS || !fn || found != CU_GET_PROC_ADDRESS_SUCCESS) {
      const char *why = r != CUDA_SUCCESS ? result_name(NULL, r)
                        : found == CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT
                            ? "version not sufficient"
                            : "symbol not found";
      fail("no usable CUDA driver: cuGetProcAddress(\"%s\", version %d) failed (%s)", e->name,
           e->version, why);
      return;
    }
    memcpy((char *)&api + e->offset, &fn, sizeof fn);
  }

  CUresult r = api.cuInit(0);
  if (r != CUDA_SUCCESS) {
    const char *desc = NULL;
    if (api.cuGetErrorString(r, &desc) != CUDA_SUCCESS) desc = NULL;
    if (r == CUDA_ERROR_STUB_LIBRARY)
      fail("no CUDA driver: libcuda.so.1 is the toolkit's stub library "
           "(CUDA_ERROR_STUB_LIBRARY); install the NVIDIA driver");
    else if (r == CUDA_ERROR_NO_DEVICE)
      fail("no CUDA device: cuInit failed (CUDA_ERROR_NO_DEVICE%s%s)", desc ? ": " : "",
           desc ? desc : "");
    else
      fail("CUDA driver unusable: cuInit failed (%s%s%s)", result_name(&api, r), desc ? ": " : "",
           desc ? desc : "");
    return;
  }
  int version = 0;
  r = api.cuDriverGetVersion(&version);
  if (r != CUDA_SUCCESS) {
    fail("CUDA driver unusable: cuDriverGetVersion failed (%s)", result_name(&api, r));
    return;
  }
  api.driver_version = version;
  int count = 0;
  r = api.cuDeviceGetCount(&count);
  if (r != CUDA_SUCCESS) {
    fail("no CUDA device: cuDeviceGetCount failed (%s)", result_name(&api, r));
    return;
  }
  if (count <= 0) {
    fail("no CUDA device: the driver (CUDA %d.%d) sees no GPU", version / 1000,
         version % 1000 / 10);
    return;
  }
  g_api = api;
  g_result = &g_api;
}

const cuda_driver_api *cuda_driver_get(void) {
  if (pthread_once(&g_once, load_driver) != 0) {
    error_set(IC_ERR_NO_DEVICE, "no CUDA driver: initialisation failed");
    return NULL;
  }
  if (!g_result) {
    error_set(IC_ERR_NO_DEVICE, "%s", g_error[0] ? g_error : "no CUDA driver");
    return NULL;
  }
  return g_result;
}

const cuda_driver_entry *cuda_driver_entries(size_t *count) {
  *count = ARRAY_LEN(k_entries);
  return k_entries;
}

ic_status cuda_error(const cuda_driver_api *drv, CUresult r, const char *what) {
  const ic_status st = r == CUDA_ERROR_OUT_OF_MEMORY ? IC_ERR_OUT_OF_MEMORY : IC_ERR_CUDA;
  const char *name = NULL;
  const char *desc = NULL;
  if (drv) {
    if (!drv->cuGetErrorName || drv->cuGetErrorName(r, &name) != CUDA_SUCCESS) name = NULL;
    if (!drv->cuGetErrorString || drv->cuGetErrorString(r, &desc) != CUDA_SUCCESS) desc = NULL;
  }
  if (!what) what = "CUDA call";
  if (name && desc) return error_set(st, "%s: %s (%s)", what, name, desc);
  if (name) return error_set(st, "%s: %s", what, name);
  return error_set(st, "%s: CUDA error %d", what, (int)r);
}
