/* Context creation: device discovery, target arch, NVRTC, and device memory helpers. */
#include "runtime/context.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <xxhash.h>

/* "sm_90a" -> 90; 0 if the spelling is not sm_<digits>[a|f]. */
static int32_t ctx_parse_arch(const char *arch) {
  if (strncmp(arch, "sm_", 3) != 0) return 0;
  char *end;
  long v = strtol(arch + 3, &end, 10);
  if (end == arch + 3 || v < 10 || v > 1000) return 0;
  if (*end == 'a' || *end == 'f') end++;
  return *end ? 0 : (int32_t)v;
}

static bool ctx_nvrtc_supports(const ic_nvrtc_api *nv, int32_t sm) {
  int n = 0;
  if (nv->nvrtcGetNumSupportedArchs(&n) != NVRTC_SUCCESS || n <= 0 || n > 256) return true;
  int archs[256];
  if (nv->nvrtcGetSupportedArchs(archs) != NVRTC_SUCCESS) return true;
  for (int i = 0; i < n; i++)
    if (archs[i] == sm) return true;
  return false;
}

static ic_status ctx_open_device(ic_context *ctx, int32_t ordinal) {
  const ic_driver_api *d = ctx->drv;
  int count = 0;
  CUresult r = d->cuDeviceGetCount(&count);
  if (r != CUDA_SUCCESS) return ic_cuda_error(d, r, "cuDeviceGetCount");
  if (ordinal < 0 || ordinal >= count)
    return ic_set_error(IC_ERR_INVALID_ARGUMENT, "device %d does not exist (%d device(s))", (int)ordinal, count);
  if ((r = d->cuDeviceGet(&ctx->device, ordinal)) != CUDA_SUCCESS) return ic_cuda_error(d, r, "cuDeviceGet");
  ctx->ordinal = ordinal;
  if ((r = d->cuDevicePrimaryCtxRetain(&ctx->cuctx, ctx->device)) != CUDA_SUCCESS)
    return ic_cuda_error(d, r, "cuDevicePrimaryCtxRetain");
  return IC_OK;
}

static ic_status ctx_device_arch(ic_context *ctx) {
  int major = 0, minor = 0;
  const ic_driver_api *d = ctx->drv;
  CUresult r = d->cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, ctx->device);
  if (r == CUDA_SUCCESS) r = d->cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, ctx->device);
  if (r != CUDA_SUCCESS) return ic_cuda_error(d, r, "cuDeviceGetAttribute");
  ctx->sm = major * 10 + minor;
  /* The arch-specific target (sm_90a) unlocks wgmma/setmaxnreg on Hopper; its CUBIN
   * runs only on that exact arch, which is the device's. */
  snprintf(ctx->arch, sizeof ctx->arch, "sm_%d%s", (int)ctx->sm, ctx->sm >= 90 ? "a" : "");
  return IC_OK;
}

/* Identifies the loaded libnvrtc file (path, size, modification time, inode): a CUBIN
 * cached by one NVRTC build is never served to another, even of the same version. */
static uint64_t ctx_nvrtc_fingerprint(const ic_nvrtc_api *nv) {
  Dl_info info;
  struct stat st;
  uint64_t h = XXH3_64bits(nv->path, strlen(nv->path));
  if (dladdr(*(void **)&nv->nvrtcVersion, &info) && info.dli_fname && stat(info.dli_fname, &st) == 0) {
    int64_t parts[3] = {(int64_t)st.st_size, (int64_t)st.st_mtime, (int64_t)st.st_ino};
    h = XXH3_64bits_withSeed(parts, sizeof parts, h);
    h = XXH3_64bits_withSeed(info.dli_fname, strlen(info.dli_fname), h);
  }
  return h;
}

enum { CTX_MEMORY_CACHE_BYTES = 256u << 20 };

static ic_status ctx_open_caches(ic_context *ctx, const ic_context_options *o) {
  ctx->nvrtc_fingerprint = ctx_nvrtc_fingerprint(ctx->nvrtc);
  if (!(o->flags & IC_CONTEXT_NO_DISK_CACHE) && !(ctx->disk = disk_cache_open(o->cache_dir, o->cache_max_bytes, &ctx->log)))
    return ic_set_error(IC_ERR_OUT_OF_MEMORY, "ic_context_create: out of memory");
  ctx->kernels = kernel_cache_create(CTX_MEMORY_CACHE_BYTES, ctx->disk, &ctx->log);
  ctx->programs = program_cache_create();
  if (!ctx->kernels || !ctx->programs) return ic_set_error(IC_ERR_OUT_OF_MEMORY, "ic_context_create: out of memory");
  return IC_OK;
}

ic_status ic_context_create(const ic_context_options *opts, ic_context **out) {
  if (!out) return ic_set_error(IC_ERR_INVALID_ARGUMENT, "ic_context_create: out is NULL");
  *out = NULL;
  ic_context_options o = {.struct_size = sizeof o};
  if (opts) {
    if (opts->struct_size < offsetof(ic_context_options, log_level) + sizeof(ic_log_level) ||
        opts->struct_size > sizeof o)
      return ic_set_error(IC_ERR_INVALID_ARGUMENT, "ic_context_create: options.struct_size %u is not one ic knows",
                          (unsigned)opts->struct_size);
    memcpy(&o, opts, opts->struct_size);
  }
  const char *arch = o.arch ? o.arch : getenv("IC_ARCH");
  if (arch && !*arch) arch = NULL;
  if (arch && !ctx_parse_arch(arch))
    return ic_set_error(IC_ERR_INVALID_ARGUMENT, "target arch '%s' is not of the form sm_90a / sm_80", arch);

  ic_context *ctx = calloc(1, sizeof *ctx);
  if (!ctx) return ic_set_error(IC_ERR_OUT_OF_MEMORY, "ic_context_create: out of memory");
  ic_logger_init(&ctx->log, o.log_fn, o.log_user, o.log_level);
  const char *strict = getenv("IC_STRICT");
  ctx->strict_env = strict && strcmp(strict, "0") != 0 && *strict;
  const char *dump = getenv("IC_DUMP");
  if (dump && *dump && !(ctx->dump_dir = ic_strdup(dump))) {
    free(ctx);
    return ic_set_error(IC_ERR_OUT_OF_MEMORY, "ic_context_create: out of memory");
  }

  ic_status s = IC_OK;
  bool compile_only = (o.flags & IC_CONTEXT_COMPILE_ONLY) != 0;
  if (compile_only && !arch)
    s = ic_set_error(IC_ERR_INVALID_ARGUMENT, "IC_CONTEXT_COMPILE_ONLY needs a target arch (options.arch or IC_ARCH)");
  ctx->drv = compile_only ? NULL : ic_driver_get();
  if (!s && !ctx->drv && !arch) {
    ic_error_prefix("no GPU and no target arch (pass options.arch or set IC_ARCH=sm_90a for compile-only use)");
    s = IC_ERR_NO_DEVICE;
  }
  if (!s && ctx->drv) s = ctx_open_device(ctx, o.device);
  if (!s && ctx->drv) s = ctx_device_arch(ctx);
  if (!s && arch) {
    int32_t sm = ctx_parse_arch(arch);
    if (ctx->drv && sm != ctx->sm)
      s = ic_set_error(IC_ERR_UNSUPPORTED, "target arch %s differs from the device's sm_%d", arch, (int)ctx->sm);
    snprintf(ctx->arch, sizeof ctx->arch, "%s", arch);
    ctx->sm = sm;
  }
  if (!s && ctx->sm < 80)
    s = ic_set_error(IC_ERR_UNSUPPORTED, "target %s: ic needs sm_80 or newer", ctx->arch);
  if (!s) {
    ctx->nvrtc = ic_nvrtc_get(ctx->drv ? ctx->drv->driver_version / 1000 : 0);
    if (!ctx->nvrtc) s = IC_ERR_NO_NVRTC;
  }
  if (!s && !ctx_nvrtc_supports(ctx->nvrtc, ctx->sm))
    s = ic_set_error(IC_ERR_UNSUPPORTED, "NVRTC %d.%d cannot target %s", ctx->nvrtc->major, ctx->nvrtc->minor,
                     ctx->arch);
  if (!s) s = ctx_open_caches(ctx, &o);
  if (s) {
    ic_context_destroy(ctx);
    return s;
  }
  ic_log(&ctx->log, IC_LOG_INFO, "context: target %s, %s, NVRTC %d.%d (%s)", ctx->arch,
         ctx->drv ? "device present" : "compile-only", ctx->nvrtc->major, ctx->nvrtc->minor, ctx->nvrtc->path);
  *out = ctx;
  return IC_OK;
}

void ic_context_destroy(ic_context *ctx) {
  if (!ctx) return;
  /* Programs first: the cached ones unload their modules through the context. */
  program_cache_destroy(ctx->programs);
  kernel_cache_destroy(ctx->kernels);
  disk_cache_close(ctx->disk);
  if (ctx->drv && ctx->cuctx) ctx->drv->cuDevicePrimaryCtxRelease(ctx->device);
  free(ctx->dump_dir);
  free(ctx);
}

const char *ic_context_arch(const ic_context *ctx) { return ctx ? ctx->arch : ""; }

ic_status ic_cache_stats_get(ic_context *ctx, ic_cache_stats *out) {
  if (!ctx || !out || out->struct_size < sizeof(uint32_t) || out->struct_size > sizeof(ic_cache_stats))
    return ic_set_error(IC_ERR_INVALID_ARGUMENT, "ic_cache_stats_get: NULL argument or bad struct_size");
  ic_cache_stats all = {.struct_size = out->struct_size};
  kernel_cache_stats(ctx->kernels, &all);
  program_cache_stats(ctx->programs, &all);
  memcpy(out, &all, out->struct_size);
  return IC_OK;
}
int ic_context_has_device(const ic_context *ctx) { return ctx && ctx->drv ? 1 : 0; }

ic_status ctx_enter(ic_context *ctx) {
  if (!ctx->drv)
    return ic_set_error(IC_ERR_NO_DEVICE, "this context is compile-only (target %s, no GPU): it cannot run",
                        ctx->arch);
  CUresult r = ctx->drv->cuCtxPushCurrent(ctx->cuctx);
  return r == CUDA_SUCCESS ? IC_OK : ic_cuda_error(ctx->drv, r, "cuCtxPushCurrent");
}

void ctx_leave(ic_context *ctx) {
  CUcontext popped;
  if (ctx->drv) ctx->drv->cuCtxPopCurrent(&popped);
}

void ctx_dump(const ic_context *ctx, const char *name, const char *text, size_t len) {
  if (!ctx->dump_dir || !text) return;
  char path[4096];
  mkdir(ctx->dump_dir, 0755);
  snprintf(path, sizeof path, "%s/%s", ctx->dump_dir, name);
  FILE *f = fopen(path, "wb");
  if (!f || fwrite(text, 1, len, f) != len)
    ic_log(&ctx->log, IC_LOG_WARN, "IC_DUMP: cannot write %s: %s", path, strerror(errno));
  if (f) fclose(f);
}

/* ---------------------------------------------------------------- memory helpers */

#define CTX_CALL(ctx, call, what)                                       \
  do {                                                                  \
    if (!(ctx)) return ic_set_error(IC_ERR_INVALID_ARGUMENT, "%s: context is NULL", what); \
    ic_status st_ = ctx_enter(ctx);                                     \
    if (st_) return st_;                                                \
    CUresult r_ = (call);                                               \
    ctx_leave(ctx);                                                     \
    return r_ == CUDA_SUCCESS ? IC_OK : ic_cuda_error((ctx)->drv, r_, what); \
  } while (0)

ic_status ic_malloc(ic_context *ctx, size_t bytes, void **out) {
  if (!out || !ctx) return ic_set_error(IC_ERR_INVALID_ARGUMENT, "ic_malloc: context or out is NULL");
  *out = NULL;
  ic_status s = ctx_enter(ctx);
  if (s || bytes == 0) {
    if (!s) ctx_leave(ctx);
    return s;
  }
  CUdeviceptr p = 0;
  CUresult r = ctx->drv->cuMemAlloc(&p, bytes);
  ctx_leave(ctx);
  if (r != CUDA_SUCCESS) return ic_cuda_error(ctx->drv, r, "cuMemAlloc");
  *out = (void *)(uintptr_t)p;
  return IC_OK;
}

ic_status ic_free(ic_context *ctx, void *ptr) {
  if (!ptr) return IC_OK;
  CTX_CALL(ctx, ctx->drv->cuMemFree((CUdeviceptr)(uintptr_t)ptr), "cuMemFree");
}

ic_status ic_memcpy_htod(ic_context *ctx, void *dst, const void *src, size_t bytes) {
  if (bytes && (!dst || !src)) return ic_set_error(IC_ERR_INVALID_ARGUMENT, "ic_memcpy_htod: NULL pointer");
  if (!bytes) return IC_OK;
  CTX_CALL(ctx, ctx->drv->cuMemcpyHtoD((CUdeviceptr)(uintptr_t)dst, src, bytes), "cuMemcpyHtoD");
}

ic_status ic_memcpy_dtoh(ic_context *ctx, void *dst, const void *src, size_t bytes) {
  if (bytes && (!dst || !src)) return ic_set_error(IC_ERR_INVALID_ARGUMENT, "ic_memcpy_dtoh: NULL pointer");
  if (!bytes) return IC_OK;
  CTX_CALL(ctx, ctx->drv->cuMemcpyDtoH(dst, (CUdeviceptr)(uintptr_t)src, bytes), "cuMemcpyDtoH");
}

ic_status ic_memset_d8(ic_context *ctx, void *dst, uint8_t value, size_t bytes) {
  if (bytes && !dst) return ic_set_error(IC_ERR_INVALID_ARGUMENT, "ic_memset_d8: NULL pointer");
  if (!bytes) return IC_OK;
  CTX_CALL(ctx, ctx->drv->cuMemsetD8((CUdeviceptr)(uintptr_t)dst, value, bytes), "cuMemsetD8");
}

ic_status ic_stream_synchronize(ic_context *ctx, void *stream) {
  CTX_CALL(ctx, ctx->drv->cuStreamSynchronize((CUstream)stream), "cuStreamSynchronize");
}
