/* The cuda backend: codegen -> NVRTC (CUBIN for the exact arch) -> module -> launch. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "backend/cuda/cuda.h"

typedef struct cuda_module {
  CUmodule module;
  CUfunction function;
} cuda_module;

void cuda_nvrtc_options(const ic_context *ctx, const char **opts, int32_t max, int32_t *count, char *arch_opt,
                        size_t arch_size) {
  /* -fmad=false: no contraction (NVRTC's default is on); IEEE div/sqrt are explicit in
   * the prelude and also NVRTC's defaults. */
  static const char *const fixed[] = {"-fmad=false", "--std=c++17", "-prec-div=true", "-prec-sqrt=true", "-ftz=false"};
  snprintf(arch_opt, arch_size, "--gpu-architecture=%s", ctx->arch);
  int32_t n = 0;
  if (n < max) opts[n++] = arch_opt;
  for (size_t i = 0; i < IC_ARRAY_LEN(fixed) && n < max; i++) opts[n++] = fixed[i];
  *count = n;
}

static char *cuda_nvrtc_log(const ic_nvrtc_api *nv, nvrtcProgram prog) {
  size_t size = 0;
  if (nv->nvrtcGetProgramLogSize(prog, &size) != NVRTC_SUCCESS || size == 0) return NULL;
  char *log = malloc(size + 1);
  if (log && nv->nvrtcGetProgramLog(prog, log) != NVRTC_SUCCESS) {
    free(log);
    return NULL;
  }
  if (log) log[size] = 0;
  return log;
}

ic_status cuda_nvrtc_compile(ic_context *ctx, const char *name, const char *source, void **cubin, size_t *size) {
  const ic_nvrtc_api *nv = ctx->nvrtc;
  *cubin = NULL;
  *size = 0;
  nvrtcProgram prog = NULL;
  nvrtcResult r = nv->nvrtcCreateProgram(&prog, source, name, 0, NULL, NULL);
  if (r != NVRTC_SUCCESS)
    return ic_set_error(r == NVRTC_ERROR_OUT_OF_MEMORY ? IC_ERR_OUT_OF_MEMORY : IC_ERR_COMPILE,
                        "nvrtcCreateProgram(%s): %s", name, nv->nvrtcGetErrorString(r));
  const char *opts[16];
  int32_t nopts;
  char arch_opt[64];
  cuda_nvrtc_options(ctx, opts, 16, &nopts, arch_opt, sizeof arch_opt);
  r = nv->nvrtcCompileProgram(prog, nopts, opts);
  ic_status s = IC_OK;
  if (r != NVRTC_SUCCESS) {
    char *log = cuda_nvrtc_log(nv, prog);
    s = ic_set_error(IC_ERR_COMPILE, "NVRTC failed to compile %s for %s: %s\n%s", name, ctx->arch,
                     nv->nvrtcGetErrorString(r), log ? log : "(no log)");
    char file[96];
    snprintf(file, sizeof file, "%s.nvrtc.log", name);
    if (log) ctx_dump(ctx, file, log, strlen(log));
    snprintf(file, sizeof file, "%s.failed.cu", name);
    ctx_dump(ctx, file, source, strlen(source));
    free(log);
  }
  if (!s && (r = nv->nvrtcGetCUBINSize(prog, size)) != NVRTC_SUCCESS)
    s = ic_set_error(IC_ERR_COMPILE, "nvrtcGetCUBINSize(%s): %s", name, nv->nvrtcGetErrorString(r));
  if (!s && !(*cubin = malloc(*size ? *size : 1))) s = ic_set_error(IC_ERR_OUT_OF_MEMORY, "out of memory for a CUBIN");
  if (!s && (r = nv->nvrtcGetCUBIN(prog, *cubin)) != NVRTC_SUCCESS)
    s = ic_set_error(IC_ERR_COMPILE, "nvrtcGetCUBIN(%s): %s", name, nv->nvrtcGetErrorString(r));
  nv->nvrtcDestroyProgram(&prog);
  if (s) {
    free(*cubin);
    *cubin = NULL;
    *size = 0;
  }
  return s;
}

static ic_status cuda_load(ic_context *ctx, backend_kernel *bk) {
  cuda_module *m = calloc(1, sizeof *m);
  if (!m) return ic_set_error(IC_ERR_OUT_OF_MEMORY, "out of memory loading %s", bk->name);
  ic_status s = ctx_enter(ctx);
  if (s) {
    free(m);
    return s;
  }
  CUresult r = ctx->drv->cuModuleLoadData(&m->module, bk->binary);
  if (r != CUDA_SUCCESS) s = ic_cuda_error(ctx->drv, r, "cuModuleLoadData");
  if (!s && (r = ctx->drv->cuModuleGetFunction(&m->function, m->module, bk->name)) != CUDA_SUCCESS) {
    s = ic_cuda_error(ctx->drv, r, "cuModuleGetFunction");
    ctx->drv->cuModuleUnload(m->module);
  }
  ctx_leave(ctx);
  if (s) free(m);
  else bk->impl = m;
  return s;
}

static void cuda_kernel_free(ic_context *ctx, backend_kernel *bk) {
  if (!bk) return;
  cuda_module *m = bk->impl;
  if (m && ctx->drv && ctx_enter(ctx) == IC_OK) {
    ctx->drv->cuModuleUnload(m->module);
    ctx_leave(ctx);
  }
  free(m);
  free(bk->name);
  free(bk->source);
  free(bk->binary);
  free(bk);
}

typedef struct cuda_nvrtc_job {
  ic_context *ctx;
  const backend_kernel *bk;
} cuda_nvrtc_job;

static ic_status cuda_compile_missing(void *user, void **binary, size_t *size) {
  const cuda_nvrtc_job *job = user;
  return cuda_nvrtc_compile(job->ctx, job->bk->name, job->bk->source, binary, size);
}

static uint64_t cuda_config_hash(const ic_context *ctx);

/* The key of a generated source: the source and everything NVRTC's output depends on. */
static ic_key cuda_kernel_key(const ic_context *ctx, const char *source) {
  const char *opts[16];
  int32_t n;
  char arch_opt[64];
  cuda_nvrtc_options(ctx, opts, 16, &n, arch_opt, sizeof arch_opt);
  kernel_key_parts parts = {.source = source, .options = opts, .noptions = n, .nvrtc_major = ctx->nvrtc->major,
                            .nvrtc_minor = ctx->nvrtc->minor, .nvrtc_fingerprint = ctx->nvrtc_fingerprint,
                            .arch = ctx->arch, .ic_version = IC_VERSION_STRING, .schema = DISK_CACHE_SCHEMA,
                            .backend_config = cuda_config_hash(ctx)};
  return kernel_key(&parts);
}

static ic_status cuda_compile(ic_context *ctx, const kir_kernel *k, uint32_t flags, backend_kernel **out) {
  *out = NULL;
  /* Entry points are named by content, so equal kernels of any program share a source,
   * a cache key and a CUBIN. */
  char entry[32];
  snprintf(entry, sizeof entry, "ic_%016" PRIx64, kir_content_hash(k));
  backend_kernel *bk = calloc(1, sizeof *bk);
  if (!bk || !(bk->name = ic_strdup(entry))) {
    free(bk);
    return ic_set_error(IC_ERR_OUT_OF_MEMORY, "out of memory compiling %s", k->name);
  }
  bk->backend = &ic_backend_cuda;
  bk->block = CUDA_BLOCK;
  cuda_codegen_result cg = {0};
  ic_status s = cuda_codegen(k, entry, &cg);
  bk->source = cg.source;
  bk->per_thread = cg.per_thread;
  if (!s) {
    ic_key key = cuda_kernel_key(ctx, bk->source);
    cuda_nvrtc_job job = {ctx, bk};
    kernel_origin origin = KERNEL_COMPILED;
    double t0 = ic_now_ms();
    bool cached = !(flags & IC_COMPILE_NO_CACHE) && (key.lo | key.hi);
    s = cached ? kernel_cache_get(ctx->kernels, key, cuda_compile_missing, &job, &bk->binary, &bk->binary_size, &origin)
               : cuda_compile_missing(&job, &bk->binary, &bk->binary_size);
    static const char *const from[] = {"memory", "disk", "compiled"};
    if (!s)
      ic_log(&ctx->log, IC_LOG_INFO, "kernel %s key %016" PRIx64 "%016" PRIx64 ": %s in %.2f ms", k->name, key.hi,
             key.lo, cached ? from[origin] : "compiled (cache bypassed)", ic_now_ms() - t0);
  }
  if (!s && ctx->drv) s = cuda_load(ctx, bk);
  if (s) {
    cuda_kernel_free(ctx, bk);
    return s;
  }
  *out = bk;
  return IC_OK;
}

static ic_status cuda_launch(ic_context *ctx, const backend_kernel *bk, uint32_t blocks, void **args, void *stream) {
  const cuda_module *m = bk->impl;
  if (!m) return ic_set_error(IC_ERR_NO_DEVICE, "kernel %s was compiled without a device: it cannot run", bk->name);
  CUresult r = ctx->drv->cuLaunchKernel(m->function, blocks, 1, 1, (unsigned)bk->block, 1, 1, 0, (CUstream)stream,
                                        args, NULL);
  return r == CUDA_SUCCESS ? IC_OK : ic_cuda_error(ctx->drv, r, "cuLaunchKernel");
}

static uint64_t cuda_config_hash(const ic_context *ctx) {
  /* Everything that shapes the binary besides the source: the NVRTC options. */
  const char *opts[16];
  int32_t n;
  char arch_opt[64];
  cuda_nvrtc_options(ctx, opts, 16, &n, arch_opt, sizeof arch_opt);
  uint64_t h = 0;
  for (int32_t i = 0; i < n; i++) h = XXH3_64bits_withSeed(opts[i], strlen(opts[i]) + 1, h);
  return h;
}

static ic_status cuda_mem_alloc(ic_context *ctx, size_t bytes, void *stream, void **out) {
  CUdeviceptr p = 0;
  CUresult r = ctx->drv->cuMemAllocAsync(&p, bytes, (CUstream)stream);
  *out = (void *)(uintptr_t)p;
  return r == CUDA_SUCCESS ? IC_OK : ic_cuda_error(ctx->drv, r, "cuMemAllocAsync");
}

static ic_status cuda_mem_free(ic_context *ctx, void *ptr, void *stream) {
  CUresult r = ctx->drv->cuMemFreeAsync((CUdeviceptr)(uintptr_t)ptr, (CUstream)stream);
  return r == CUDA_SUCCESS ? IC_OK : ic_cuda_error(ctx->drv, r, "cuMemFreeAsync");
}

const ic_backend ic_backend_cuda = {
    .name = "cuda",
    .id = BACKEND_CUDA,
    .on_device = true,
    .mem_alloc = cuda_mem_alloc,
    .mem_free = cuda_mem_free,
    .config_hash = cuda_config_hash,
    .compile = cuda_compile,
    .launch = cuda_launch,
    .kernel_free = cuda_kernel_free,
};
