/* The context: the GPU, the target arch, the kernel caches and the backends' states. */
#include "runtime/context.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { CTX_MEMORY_CACHE_BYTES = 256u << 20 };

/* The CUDA target: options.arch, else IC_ARCH, else the device's own; "" when there is
 * none (a host-only context: the ref backend works, compiling for cuda says why not). */
static ic_status ctx_pick_arch(ic_context *ctx, const char *arch) {
  if (arch && !cuda_arch_sm(arch))
    return error_set(IC_ERR_INVALID_ARGUMENT, "target arch '%s' is not of the form sm_90a / sm_80", arch);
  if (arch && cuda_arch_sm(arch) < 80) return error_set(IC_ERR_UNSUPPORTED, "target %s: ic needs sm_80 or newer", arch);
  if (arch && ctx->device && cuda_arch_sm(arch) != ctx->device->sm)
    return error_set(IC_ERR_UNSUPPORTED,
                     "target arch %s differs from the device's sm_%d (use IC_CONTEXT_COMPILE_ONLY to compile for "
                     "another GPU)",
                     arch, (int)ctx->device->sm);
  if (!arch && ctx->device && ctx->device->sm < 80)
    return error_set(IC_ERR_UNSUPPORTED, "the GPU is %s: ic needs sm_80 or newer", ctx->device->arch);
  snprintf(ctx->arch, sizeof ctx->arch, "%s", arch ? arch : ctx->device ? ctx->device->arch : "");
  return IC_OK;
}

static void *ctx_warm_compiler(void *arg) {
  const ic_context *ctx = arg;
  cuda_nvrtc_warm(ctx->arch, ctx->device ? ctx->device->drv->driver_version / 1000 : 0);
  return NULL;
}

ic_status ctx_open(const ic_context_options *opts, ic_context **out) {
  *out = NULL;
  ic_context_options o = {.struct_size = sizeof o};
  if (opts) {
    if (opts->struct_size < offsetof(ic_context_options, log_level) + sizeof(ic_log_level) ||
        opts->struct_size > sizeof o)
      return error_set(IC_ERR_INVALID_ARGUMENT, "ic_context_create: options.struct_size %u is not one ic knows",
                       (unsigned)opts->struct_size);
    memcpy(&o, opts, opts->struct_size);
  }
  const uint32_t known = IC_CONTEXT_COMPILE_ONLY | IC_CONTEXT_NO_DISK_CACHE | IC_CONTEXT_WARM_COMPILER;
  if (o.flags & ~known)
    return error_set(IC_ERR_INVALID_ARGUMENT, "ic_context_create: unknown flag bits 0x%x", (unsigned)(o.flags & ~known));
  const char *arch = o.arch ? o.arch : getenv("IC_ARCH");
  if (arch && !*arch) arch = NULL;

  ic_context *ctx = sys_calloc(1, sizeof *ctx);
  if (!ctx) return error_set(IC_ERR_OUT_OF_MEMORY, "ic_context_create: out of memory");
  pthread_mutex_init(&ctx->lock, NULL);
  logger_init(&ctx->log, o.log_fn, o.log_user, o.log_level);
  ctx->ordinal = o.device;
  const char *strict = getenv("IC_STRICT");
  ctx->strict_env = strict && strcmp(strict, "0") != 0 && *strict;
  const char *dump = getenv("IC_DUMP");
  ic_status s = IC_OK;
  if (dump && *dump && !(ctx->dump_dir = str_dup(dump)))
    s = error_set(IC_ERR_OUT_OF_MEMORY, "ic_context_create: out of memory");
  /* No GPU is not an error: the context then compiles for an arch, or runs ref only. */
  if (!s && !(o.flags & IC_CONTEXT_COMPILE_ONLY)) {
    s = cuda_device_open(o.device, &ctx->device);
    if (s == IC_ERR_NO_DEVICE) {
      log_msg(&ctx->log, IC_LOG_INFO, "context without a GPU: %s", ic_last_error());
      s = IC_OK;
    }
  }
  if (!s) s = ctx_pick_arch(ctx, arch);
  if (!s && !(o.flags & IC_CONTEXT_NO_DISK_CACHE) && !(ctx->disk = disk_cache_open(o.cache_dir, o.cache_max_bytes, &ctx->log)))
    s = error_set(IC_ERR_OUT_OF_MEMORY, "ic_context_create: out of memory");
  if (!s && !(ctx->kernels = kernel_cache_create(CTX_MEMORY_CACHE_BYTES, ctx->disk, &ctx->log)))
    s = error_set(IC_ERR_OUT_OF_MEMORY, "ic_context_create: out of memory");
  if (s) {
    ctx_close(ctx);
    return s;
  }
  log_msg(&ctx->log, IC_LOG_INFO, "context: target %s, %s", ctx->arch[0] ? ctx->arch : "none (ref backend only)",
          ctx->device ? "device present" : "no device");
  if ((o.flags & IC_CONTEXT_WARM_COMPILER) && ctx->arch[0]) {
    /* no thread to be had: the first compile starts NVRTC, as without the flag */
    ctx->warm_started = pthread_create(&ctx->warm_thread, NULL, ctx_warm_compiler, ctx) == 0;
  }
  *out = ctx;
  return IC_OK;
}

void ctx_close(ic_context *ctx) {
  if (!ctx) return;
  if (ctx->warm_started) pthread_join(ctx->warm_thread, NULL);
  for (int32_t b = 0; b < CTX_MAX_BACKENDS && ctx->backends[b].vt; b++) ctx->backends[b].vt->close(ctx->backends[b].bs);
  kernel_cache_destroy(ctx->kernels);
  disk_cache_close(ctx->disk);
  cuda_device_close(ctx->device);
  pthread_mutex_destroy(&ctx->lock);
  free(ctx->dump_dir);
  free(ctx);
}

ic_status ctx_backend(ic_context *ctx, const backend_vtable *vt, backend_state **out) {
  *out = NULL;
  if (pthread_mutex_lock(&ctx->lock) != 0) return error_set(IC_ERR_INTERNAL, "context lock failed");
  int32_t b = 0;
  while (b < CTX_MAX_BACKENDS && ctx->backends[b].vt && ctx->backends[b].vt != vt) b++;
  ic_status s = IC_OK;
  if (b == CTX_MAX_BACKENDS) {
    s = error_set(IC_ERR_UNSUPPORTED, "a context opens at most %d backends", CTX_MAX_BACKENDS);
  } else if (!ctx->backends[b].vt) {
    backend_env env = {.log = &ctx->log, .kernels = ctx->kernels, .dump_dir = ctx->dump_dir, .device = ctx->device,
                       .arch = ctx->arch};
    if (!(s = vt->open(&env, &ctx->backends[b].bs))) ctx->backends[b].vt = vt;
  }
  if (!s) *out = ctx->backends[b].bs;
  pthread_mutex_unlock(&ctx->lock);
  return s;
}

const char *ic_context_arch(const ic_context *ctx) { return ctx ? ctx->arch : ""; }

int ic_context_has_device(const ic_context *ctx) { return ctx && ctx->device ? 1 : 0; }

ic_status ctx_enter(ic_context *ctx) {
  if (!ctx->device)
    return error_set(IC_ERR_NO_DEVICE, "this context is compile-only (target %s, no GPU): it cannot run",
                     ctx->arch[0] ? ctx->arch : "none");
  return cuda_device_enter(ctx->device);
}

void ctx_leave(ic_context *ctx) {
  if (ctx->device) cuda_device_leave(ctx->device);
}

void ctx_dump(const ic_context *ctx, const char *sub, const char *name, const char *text, size_t len) {
  log_dump_file(&ctx->log, ctx->dump_dir, sub, name, text, len);
}

/* ---------------------------------------------------------------- memory helpers */

#define CTX_CALL(ctx, call, what)                                       \
  do {                                                                  \
    if (!(ctx)) return error_set(IC_ERR_INVALID_ARGUMENT, "%s: context is NULL", what); \
    ic_status st_ = ctx_enter(ctx);                                     \
    if (st_) return st_;                                                \
    CUresult r_ = (call);                                               \
    ctx_leave(ctx);                                                     \
    return r_ == CUDA_SUCCESS ? IC_OK : cuda_error((ctx)->device->drv, r_, what); \
  } while (0)

ic_status ic_malloc(ic_context *ctx, size_t bytes, void **out) {
  if (!out || !ctx) return error_set(IC_ERR_INVALID_ARGUMENT, "ic_malloc: context or out is NULL");
  *out = NULL;
  ic_status s = ctx_enter(ctx);
  if (s || bytes == 0) {
    if (!s) ctx_leave(ctx);
    return s;
  }
  CUdeviceptr p = 0;
  CUresult r = CU_CALL(ctx->device->drv, cuMemAlloc, &p, bytes);
  ctx_leave(ctx);
  if (r != CUDA_SUCCESS) return cuda_error(ctx->device->drv, r, "cuMemAlloc");
  *out = (void *)(uintptr_t)p;
  return IC_OK;
}

ic_status ic_free(ic_context *ctx, void *ptr) {
  if (!ptr) return IC_OK;
  CTX_CALL(ctx, CU_CALL(ctx->device->drv, cuMemFree, (CUdeviceptr)(uintptr_t)ptr), "cuMemFree");
}

ic_status ic_memcpy_htod(ic_context *ctx, void *dst, const void *src, size_t bytes) {
  if (bytes && (!dst || !src)) return error_set(IC_ERR_INVALID_ARGUMENT, "ic_memcpy_htod: NULL pointer");
  if (!bytes) return IC_OK;
  CTX_CALL(ctx, CU_CALL(ctx->device->drv, cuMemcpyHtoD, (CUdeviceptr)(uintptr_t)dst, src, bytes), "cuMemcpyHtoD");
}

ic_status ic_memcpy_dtoh(ic_context *ctx, void *dst, const void *src, size_t bytes) {
  if (bytes && (!dst || !src)) return error_set(IC_ERR_INVALID_ARGUMENT, "ic_memcpy_dtoh: NULL pointer");
  if (!bytes) return IC_OK;
  CTX_CALL(ctx, CU_CALL(ctx->device->drv, cuMemcpyDtoH, dst, (CUdeviceptr)(uintptr_t)src, bytes), "cuMemcpyDtoH");
}

ic_status ic_memset_d8(ic_context *ctx, void *dst, uint8_t value, size_t bytes) {
  if (bytes && !dst) return error_set(IC_ERR_INVALID_ARGUMENT, "ic_memset_d8: NULL pointer");
  if (!bytes) return IC_OK;
  CTX_CALL(ctx, CU_CALL(ctx->device->drv, cuMemsetD8, (CUdeviceptr)(uintptr_t)dst, value, bytes), "cuMemsetD8");
}

ic_status ic_stream_synchronize(ic_context *ctx, void *stream) {
  CTX_CALL(ctx, CU_CALL(ctx->device->drv, cuStreamSynchronize, (CUstream)stream), "cuStreamSynchronize");
}
