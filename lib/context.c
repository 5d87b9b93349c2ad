/* The public face of the context: the runtime's context (lib/runtime/context.c) plus the
 * program cache, which lives up here beside ic_compile because it hashes graphs. */
#include <string.h>

#include "program_cache.h"
#include "runtime/context.h"

ic_status ic_context_create(const ic_context_options *opts, ic_context **out) {
  if (!out) return error_set(IC_ERR_INVALID_ARGUMENT, "ic_context_create: out is NULL");
  *out = NULL;
  ic_context *ctx = NULL;
  ic_status s = ctx_open(opts, &ctx);
  if (s) return s;
  if (!(ctx->programs = program_cache_create(0))) {
    ctx_close(ctx);
    return error_set(IC_ERR_OUT_OF_MEMORY, "ic_context_create: out of memory");
  }
  *out = ctx;
  return IC_OK;
}

void ic_context_destroy(ic_context *ctx) {
  if (!ctx) return;
  /* Programs first: the cached ones unload their modules through the backends. */
  program_cache_destroy(ctx->programs);
  ctx_close(ctx);
}

ic_status ic_cache_stats_get(ic_context *ctx, ic_cache_stats *out) {
  if (!ctx || !out || out->struct_size < sizeof(uint32_t) || out->struct_size > sizeof(ic_cache_stats))
    return error_set(IC_ERR_INVALID_ARGUMENT, "ic_cache_stats_get: NULL argument or bad struct_size");
  ic_cache_stats all = {.struct_size = out->struct_size};
  kernel_cache_stats(ctx->kernels, &all);
  program_cache_stats(ctx->programs, &all);
  memcpy(out, &all, out->struct_size);
  return IC_OK;
}
