/* The context: target, device, driver and NVRTC tables, logging. */
#ifndef IC_CONTEXT_H
#define IC_CONTEXT_H

#include "cache/kernel_cache.h"
#include "cache/program_cache.h"
#include "runtime/cuda_api.h"

struct ic_context {
  ic_logger log;
  const ic_driver_api *drv;  /* NULL in compile-only mode */
  const ic_nvrtc_api *nvrtc;
  CUdevice device;
  int32_t ordinal;           /* the device's ordinal (options.device) */
  CUcontext cuctx;           /* the device's retained primary context */
  char arch[16];             /* "sm_90a" */
  int32_t sm;                /* 90 */
  bool strict_env;           /* IC_STRICT=1 */
  char *dump_dir;            /* IC_DUMP */
  uint64_t nvrtc_fingerprint; /* of the loaded libnvrtc file: part of every kernel key */
  disk_cache *disk;
  kernel_cache *kernels;
  program_cache *programs;
};

/* Makes the context's CUDA context current for a call; ctx_leave restores. Both are
 * no-ops in compile-only mode. ctx_enter fails with IC_ERR_NO_DEVICE there. */
ic_status ctx_enter(ic_context *ctx);
void ctx_leave(ic_context *ctx);

/* Writes `text` to $IC_DUMP/<name> when IC_DUMP is set (best effort, logged on failure). */
void ctx_dump(const ic_context *ctx, const char *name, const char *text, size_t len);

#endif
