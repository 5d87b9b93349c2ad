/* Exhaustive device checks of prelude helpers: a kernel, written after the whole prelude,
 * strides through all 2^32 values of a 32-bit pattern and counts, per slot, the values
 * where two computations of one thing disagree. Used by the GPU tests that pin a helper
 * to the instruction it replaces (gpu_fp8_convert, gpu_paired_roundings). */
#ifndef IC_TESTS_GPU_EXHAUSTIVE_H
#define IC_TESTS_GPU_EXHAUSTIVE_H

#include <string.h>

#include "backend/cuda/cuda_backend.h"
#include "gpu_harness.h"
#include "runtime/context.h"

enum { GPU_EXHAUSTIVE_MAX_SLOTS = 16 };

/* Compiles `src` (a kernel `name`(unsigned long long *mismatches, unsigned *first) that
 * adds 1 to mismatches[slot] per disagreeing value and leaves the first such value in
 * first[slot]) after the prelude, runs it over 132 * 16 blocks of 256 threads, and copies
 * the `slots` counters into got and the first values (0xffffffff: none) into at. False,
 * with nothing run, where the device's compute capability is below min_sm. */
static inline bool gpu_exhaustive_check(const char *name, const char *src, int min_sm, int slots, unsigned long long *got,
                                        unsigned *at) {
  ck_assert_int_le(slots, GPU_EXHAUSTIVE_MAX_SLOTS);
  ic_context *ctx;
  IC_OK_OR_FAIL(ic_context_create(NULL, &ctx));
  backend_state *bs;
  IC_OK_OR_FAIL(ctx_backend(ctx, &backend_cuda, &bs));
  const cuda_state *cs = (const cuda_state *)bs;
  if (cs->sm < min_sm) {
    ic_context_destroy(ctx);
    return false;
  }
  size_t n = strlen(cuda_prelude) + strlen(src) + 1;
  char *text = malloc(n);
  ck_assert_ptr_nonnull(text);
  snprintf(text, n, "%s%s", cuda_prelude, src);
  void *cubin = NULL;
  size_t size = 0;
  IC_OK_OR_FAIL(cuda_nvrtc_compile(cs, name, text, &cubin, &size));
  IC_OK_OR_FAIL(ctx_enter(ctx));
  const cuda_driver_api *drv = ctx->device->drv;
  CUmodule mod;
  CUfunction fn;
  ck_assert_int_eq(drv->cuModuleLoadData(&mod, cubin), CUDA_SUCCESS);
  ck_assert_int_eq(drv->cuModuleGetFunction(&fn, mod, name), CUDA_SUCCESS);
  unsigned long long zeros[GPU_EXHAUSTIVE_MAX_SLOTS] = {0};
  unsigned none[GPU_EXHAUSTIVE_MAX_SLOTS];
  memset(none, 0xff, sizeof none);
  void *mism = gpu_upload(ctx, zeros, sizeof zeros), *first = gpu_upload(ctx, none, sizeof none);
  void *args[2] = {&mism, &first};
  ck_assert_int_eq(drv->cuLaunchKernel(fn, 132 * 16, 1, 1, 256, 1, 1, 0, NULL, args, NULL), CUDA_SUCCESS);
  ck_assert_int_eq(drv->cuStreamSynchronize(NULL), CUDA_SUCCESS);
  unsigned long long *g = gpu_download(ctx, mism, sizeof zeros);
  unsigned *a = gpu_download(ctx, first, sizeof none);
  memcpy(got, g, sizeof *got * (size_t)slots);
  memcpy(at, a, sizeof *at * (size_t)slots);
  free(g);
  free(a);
  ic_free(ctx, mism);
  ic_free(ctx, first);
  drv->cuModuleUnload(mod);
  ctx_leave(ctx);
  free(cubin);
  free(text);
  ic_context_destroy(ctx);
  return true;
}

#endif
