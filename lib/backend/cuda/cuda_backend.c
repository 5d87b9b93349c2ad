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

/* A kernel's generated source and key. Entry points are named by content, so equal
 * kernels of any program share a source, a cache key and a CUBIN. */
typedef struct cuda_source {
  const kir_kernel *kir;
  char entry[32];
  char *source;
  int32_t per_thread;
  ic_key key;
} cuda_source;

static ic_status cuda_generate(ic_context *ctx, const kir_kernel *k, cuda_source *out) {
  out->kir = k;
  snprintf(out->entry, sizeof out->entry, "ic_%016" PRIx64, kir_content_hash(k));
  cuda_codegen_result cg = {0};
  ic_status s = cuda_codegen(k, out->entry, &cg);
  out->source = cg.source;
  out->per_thread = cg.per_thread;
  if (!s) out->key = cuda_kernel_key(ctx, out->source);
  return s;
}

/* A program's kernels, compiled in one NVRTC call on the first cache miss: one prelude
 * and one NVRTC start-up for all of them (measured by ic-bench compile). Each missing
 * kernel's cache entry is then that CUBIN, which holds its entry point. */
typedef struct cuda_batch {
  ic_context *ctx;
  int32_t n;
  cuda_source *kernels;
  bool *in_cubin; /* compiled into the batch CUBIN */
  bool tried;
  void *cubin;
  size_t size;
} cuda_batch;

static void cuda_batch_end(void *batch) {
  cuda_batch *b = batch;
  if (!b) return;
  for (int32_t i = 0; i < b->n; i++) free(b->kernels[i].source);
  free(b->kernels);
  free(b->in_cubin);
  free(b->cubin);
  free(b);
}

static void *cuda_batch_begin(ic_context *ctx, const kir_kernel *const *kernels, int32_t n, uint32_t flags) {
  if (flags & IC_COMPILE_NO_CACHE) return NULL;
  cuda_batch *b = calloc(1, sizeof *b);
  if (!b) return NULL;
  b->ctx = ctx;
  b->kernels = calloc((size_t)n, sizeof *b->kernels);
  b->in_cubin = calloc((size_t)n, sizeof *b->in_cubin);
  if (!b->kernels || !b->in_cubin) {
    cuda_batch_end(b);
    return NULL;
  }
  b->n = n;
  for (int32_t i = 0; i < n; i++) {
    if (cuda_generate(ctx, kernels[i], &b->kernels[i])) {
      cuda_batch_end(b); /* compile one by one; the error shows there */
      return NULL;
    }
  }
  return b;
}

/* Compiles, once, every kernel of the batch not yet in memory, distinct entries only. */
static void cuda_batch_compile(cuda_batch *b) {
  b->tried = true;
  ic_sbuf src = {0};
  int32_t count = 0;
  for (int32_t i = 0; i < b->n; i++) {
    const cuda_source *k = &b->kernels[i];
    bool dup = false;
    for (int32_t j = 0; j < i && !dup; j++) dup = b->in_cubin[j] && strcmp(b->kernels[j].entry, k->entry) == 0;
    if (dup || kernel_cache_in_memory(b->ctx->kernels, k->key)) continue;
    const char *body = strstr(k->source, CUDA_KERNEL_MARK);
    ic_sbuf_puts(&src, count == 0 || !body ? k->source : body);
    b->in_cubin[i] = true;
    count++;
  }
  for (int32_t i = 0; i < b->n; i++) /* duplicates of a compiled entry are in it too */
    for (int32_t j = 0; j < i && !b->in_cubin[i]; j++)
      b->in_cubin[i] = b->in_cubin[j] && strcmp(b->kernels[j].entry, b->kernels[i].entry) == 0;
  if (count >= 2 && src.data && cuda_nvrtc_compile(b->ctx, "ic_batch", src.data, &b->cubin, &b->size) != IC_OK) {
    ic_log(&b->ctx->log, IC_LOG_DEBUG, "batched NVRTC compile failed; compiling one by one: %s", ic_last_error());
    b->cubin = NULL;
  }
  if (count < 2) b->cubin = NULL;
  ic_sbuf_free(&src);
}

typedef struct cuda_nvrtc_job {
  ic_context *ctx;
  const cuda_source *kernel;
  cuda_batch *batch;
  int32_t index; /* in the batch */
} cuda_nvrtc_job;

static ic_status cuda_compile_missing(void *user, void **binary, size_t *size) {
  const cuda_nvrtc_job *job = user;
  cuda_batch *b = job->batch;
  if (b && !b->tried) cuda_batch_compile(b);
  if (b && b->cubin && b->in_cubin[job->index]) {
    if (!(*binary = malloc(b->size))) return ic_set_error(IC_ERR_OUT_OF_MEMORY, "out of memory for a CUBIN");
    memcpy(*binary, b->cubin, b->size);
    *size = b->size;
    return IC_OK;
  }
  return cuda_nvrtc_compile(job->ctx, job->kernel->entry, job->kernel->source, binary, size);
}

static ic_status cuda_compile(ic_context *ctx, const kir_kernel *k, uint32_t flags, void *batch, backend_kernel **out) {
  *out = NULL;
  cuda_batch *b = batch;
  int32_t index = -1;
  for (int32_t i = 0; b && i < b->n && index < 0; i++)
    if (b->kernels[i].kir == k) index = i;
  cuda_source own = {0};
  const cuda_source *src = index >= 0 ? &b->kernels[index] : &own;
  ic_status s = index >= 0 ? IC_OK : cuda_generate(ctx, k, &own);
  backend_kernel *bk = calloc(1, sizeof *bk);
  if (!bk) {
    free(own.source);
    return ic_set_error(IC_ERR_OUT_OF_MEMORY, "out of memory compiling %s", k->name);
  }
  bk->backend = &ic_backend_cuda;
  bk->block = CUDA_BLOCK;
  bk->per_thread = src->per_thread;
  if (!s && (!(bk->name = ic_strdup(src->entry)) || !(bk->source = ic_strdup(src->source))))
    s = ic_set_error(IC_ERR_OUT_OF_MEMORY, "out of memory compiling %s", k->name);
  if (!s) {
    cuda_nvrtc_job job = {ctx, src, index >= 0 ? b : NULL, index};
    kernel_origin origin = KERNEL_COMPILED;
    double t0 = ic_now_ms();
    bool cached = !(flags & IC_COMPILE_NO_CACHE) && (src->key.lo | src->key.hi);
    s = cached ? kernel_cache_get(ctx->kernels, src->key, cuda_compile_missing, &job, &bk->binary, &bk->binary_size,
                                  &origin)
               : cuda_compile_missing(&job, &bk->binary, &bk->binary_size);
    static const char *const from[] = {"memory", "disk", "compiled"};
    if (!s)
      ic_log(&ctx->log, IC_LOG_INFO, "kernel %s key %016" PRIx64 "%016" PRIx64 ": %s in %.2f ms", k->name,
             src->key.hi, src->key.lo, cached ? from[origin] : "compiled (cache bypassed)", ic_now_ms() - t0);
  }
  free(own.source);
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
    .batch_begin = cuda_batch_begin,
    .batch_end = cuda_batch_end,
    .compile = cuda_compile,
    .launch = cuda_launch,
    .kernel_free = cuda_kernel_free,
};
