/* The cuda backend: codegen -> NVRTC (CUBIN for the exact arch) -> module -> launch. Its
 * state: NVRTC (loaded on open, so a context that never compiles for cuda needs no
 * libnvrtc), the target arch and the device the context lends it. */
#include <ctype.h>
#include <dlfcn.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include "backend/cuda/cuda_backend.h"
#include "base/bytes.h"

typedef struct cuda_module {
  CUmodule module;
  CUfunction function;
} cuda_module;

void cuda_nvrtc_options(const char *arch, int nvrtc_major, const char **opts, int32_t max, int32_t *count, char *arch_opt,
                        size_t arch_size) {
  /* -fmad=false: no contraction (NVRTC's default is on); IEEE div/sqrt are explicit in
   * the prelude and also NVRTC's defaults. */
  static const char *const fixed[] = {"-fmad=false", "--std=c++17", "-prec-div=true", "-prec-sqrt=true", "-ftz=false"};
  snprintf(arch_opt, arch_size, "--gpu-architecture=%s", arch);
  int32_t n = 0;
  if (n < max) opts[n++] = arch_opt;
  for (size_t i = 0; i < ARRAY_LEN(fixed) && n < max; i++) opts[n++] = fixed[i];
  /* -minimal leaves out the runtime API, textures and device launches, none of which a
   * generated source uses: NVRTC 13.0 makes the same PTX 2-5 ms sooner (an empty kernel
   * 18.3 -> 16.1 ms). Used from NVRTC 13, where that was checked. */
  if (nvrtc_major >= 13 && n < max) opts[n++] = "-minimal";
  /* strict ptxas: its report, which cuda_nvrtc_compile reads (and a key of its own) */
  if (cuda_ptxas_strict() && n < max) opts[n++] = "--ptxas-options=-v";
  *count = n;
}

bool cuda_ptxas_strict(void) {
  const char *v = getenv("IC_PTXAS_STRICT");
  return v && strcmp(v, "1") == 0;
}

/* The first line of a ptxas report (the NVRTC log) that says a kernel spills registers
 * ("N bytes spill stores" or "... spill loads" with N > 0) or carries a performance
 * warning (C7xxx: a serialized wgmma, a register count ignored, ...), copied into line;
 * false when there is none. */
bool cuda_ptxas_complaint(const char *log, char *line, size_t size) {
  const char *fn = "", *props = "Function properties for ";
  int fn_len = 0;
  for (const char *p = log; p && *p;) {
    const char *e = strchr(p, '\n');
    size_t len = e ? (size_t)(e - p) : strlen(p);
    const char *f = strstr(p, props);
    if (f && f < p + len) { /* the function the lines below are about */
      fn = f + strlen(props);
      fn_len = (int)(p + len - fn);
    }
    bool bad = false;
    for (const char *q = p; q + 5 <= p + len && !bad; q++) {
      if (strncmp(q, " bytes spill ", 13) == 0 && q > p) {
        const char *d = q;
        while (d > p && d[-1] >= '0' && d[-1] <= '9') d--;
        bad = d < q && strtol(d, NULL, 10) > 0;
      }
      /* a warning's code, "C7" and three digits, a word of its own */
      if (q[0] == 'C' && q[1] == '7' && isdigit((unsigned char)q[2]) && isdigit((unsigned char)q[3]) && isdigit((unsigned char)q[4]) &&
          (q == p || !(isalnum((unsigned char)q[-1]) || q[-1] == '_')) && !(isalnum((unsigned char)q[5]) || q[5] == '_'))
        bad = true;
    }
    if (bad) {
      while (len > 0 && *p == ' ') p++, len--;
      if (fn_len > 0) snprintf(line, size, "%.*s: %.*s", fn_len, fn, (int)len, p);
      else snprintf(line, size, "%.*s", (int)len, p);
      return true;
    }
    p = e ? e + 1 : NULL;
  }
  return false;
}

static char *cuda_nvrtc_log(const cuda_nvrtc_api *nv, nvrtcProgram prog) {
  size_t size = 0;
  if (NVRTC_CALL(nv, nvrtcGetProgramLogSize, prog, &size) != NVRTC_SUCCESS || size == 0) return NULL;
  char *log = sys_malloc(size + 1);
  if (log && NVRTC_CALL(nv, nvrtcGetProgramLog, prog, log) != NVRTC_SUCCESS) {
    free(log);
    return NULL;
  }
  if (log) log[size] = 0;
  return log;
}

ic_status cuda_nvrtc_compile(const cuda_state *cs, const char *name, const char *source, void **cubin, size_t *size) {
  const cuda_nvrtc_api *nv = cs->nvrtc;
  *cubin = NULL;
  *size = 0;
  nvrtcProgram prog = NULL;
  nvrtcResult r = NVRTC_CALL(nv, nvrtcCreateProgram, &prog, source, name, 0, NULL, NULL);
  if (r != NVRTC_SUCCESS)
    return error_set(r == NVRTC_ERROR_OUT_OF_MEMORY ? IC_ERR_OUT_OF_MEMORY : IC_ERR_COMPILE,
                        "nvrtcCreateProgram(%s): %s", name, nv->nvrtcGetErrorString(r));
  const char *opts[16];
  int32_t nopts;
  char arch_opt[64];
  cuda_nvrtc_options(cs->arch, cs->nvrtc->major, opts, 16, &nopts, arch_opt, sizeof arch_opt);
  r = NVRTC_CALL(nv, nvrtcCompileProgram, prog, nopts, opts);
  ic_status s = IC_OK;
  if (r != NVRTC_SUCCESS) {
    char *log = cuda_nvrtc_log(nv, prog);
    s = error_set(IC_ERR_COMPILE, "NVRTC failed to compile %s for %s: %s\n%s", name, cs->arch,
                     nv->nvrtcGetErrorString(r), log ? log : "(no log)");
    char file[96];
    snprintf(file, sizeof file, "%s.nvrtc.log", name);
    if (log) log_dump_file(cs->log, cs->dump_dir, LOG_DUMP_FAILED_DIR, file, log, strlen(log));
    snprintf(file, sizeof file, "%s.failed.cu", name);
    log_dump_file(cs->log, cs->dump_dir, LOG_DUMP_FAILED_DIR, file, source, strlen(source));
    free(log);
  }
  if (!s && cuda_ptxas_strict()) {
    char *log = cuda_nvrtc_log(nv, prog);
    char line[512];
    if (log && cuda_ptxas_complaint(log, line, sizeof line))
      s = error_set(IC_ERR_COMPILE, "ptxas (IC_PTXAS_STRICT) on %s for %s: %s", name, cs->arch, line);
    free(log);
  }
  if (!s && (r = NVRTC_CALL(nv, nvrtcGetCUBINSize, prog, size)) != NVRTC_SUCCESS)
    s = error_set(IC_ERR_COMPILE, "nvrtcGetCUBINSize(%s): %s", name, nv->nvrtcGetErrorString(r));
  if (!s && !(*cubin = sys_malloc(*size ? *size : 1))) s = error_set(IC_ERR_OUT_OF_MEMORY, "out of memory for a CUBIN");
  if (!s && (r = NVRTC_CALL(nv, nvrtcGetCUBIN, prog, *cubin)) != NVRTC_SUCCESS)
    s = error_set(IC_ERR_COMPILE, "nvrtcGetCUBIN(%s): %s", name, nv->nvrtcGetErrorString(r));
  NVRTC_CALL(nv, nvrtcDestroyProgram, &prog);
  if (s) {
    free(*cubin);
    *cubin = NULL;
    *size = 0;
  }
  return s;
}

static ic_status cuda_load(const cuda_state *cs, backend_kernel *bk) {
  const cuda_device *dev = cs->device;
  cuda_module *m = sys_calloc(1, sizeof *m);
  if (!m) return error_set(IC_ERR_OUT_OF_MEMORY, "out of memory loading %s", bk->name);
  ic_status s = cuda_device_enter(dev);
  if (s) {
    free(m);
    return s;
  }
  CUresult r = CU_CALL(dev->drv, cuModuleLoadData, &m->module, bk->binary);
  if (r != CUDA_SUCCESS) s = cuda_error(dev->drv, r, "cuModuleLoadData");
  if (!s && (r = CU_CALL(dev->drv, cuModuleGetFunction, &m->function, m->module, bk->name)) != CUDA_SUCCESS)
    s = cuda_error(dev->drv, r, "cuModuleGetFunction");
  /* dynamic shared memory past the default 48 KB is opted in to, a kernel at a time */
  if (!s && bk->smem > 0 &&
      (r = CU_CALL(dev->drv, cuFuncSetAttribute, m->function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, bk->smem)) !=
          CUDA_SUCCESS) {
    s = cuda_error(dev->drv, r, "cuFuncSetAttribute");
    error_prefix("kernel %s, %" PRId32 " bytes of dynamic shared memory a block: ", bk->name, bk->smem);
  }
  if (s && m->module) CU_CALL(dev->drv, cuModuleUnload, m->module);
  cuda_device_leave(dev);
  if (s) free(m);
  else bk->impl = m;
  return s;
}

static void cuda_kernel_free(backend_state *bs, backend_kernel *bk) {
  if (!bk) return;
  const cuda_device *dev = ((const cuda_state *)bs)->device;
  cuda_module *m = bk->impl;
  if (m && dev && cuda_device_enter(dev) == IC_OK) {
    CU_CALL(dev->drv, cuModuleUnload, m->module);
    cuda_device_leave(dev);
  }
  free(m);
  free(bk->name);
  free(bk->source);
  free(bk->binary);
  free(bk);
}

key128 cuda_kernel_key(const cuda_key_parts *p) {
  key128 key = {0, 0};
  XXH3_state_t *st = XXH3_createState();
  if (!st) return key;
  XXH3_128bits_reset(st);
  key_feed_str(st, "ic kernel");
  key_feed_str(st, p->ic_version);
  key_feed(st, &p->schema, sizeof p->schema);
  key_feed_str(st, p->source);
  key_feed(st, &p->noptions, sizeof p->noptions);
  for (int32_t i = 0; i < p->noptions; i++) key_feed_str(st, p->options[i]);
  int32_t version[2] = {p->nvrtc_major, p->nvrtc_minor};
  key_feed(st, version, sizeof version);
  key_feed(st, &p->nvrtc_fingerprint, sizeof p->nvrtc_fingerprint);
  key_feed_str(st, p->arch);
  key = key_digest(st);
  XXH3_freeState(st);
  return key;
}

/* The key of a generated source: the source and everything NVRTC's output depends on. */
static key128 cuda_source_key(const cuda_state *cs, const char *source) {
  const char *opts[16];
  int32_t n;
  char arch_opt[64];
  cuda_nvrtc_options(cs->arch, cs->nvrtc->major, opts, 16, &n, arch_opt, sizeof arch_opt);
  cuda_key_parts parts = {.source = source, .options = opts, .noptions = n, .nvrtc_major = cs->nvrtc->major,
                          .nvrtc_minor = cs->nvrtc->minor, .nvrtc_fingerprint = cs->nvrtc_fingerprint,
                          .arch = cs->arch, .ic_version = IC_VERSION_STRING, .schema = DISK_CACHE_SCHEMA};
  return cuda_kernel_key(&parts);
}

/* A kernel's generated source and key. Entry points are named by content, so equal
 * kernels of any program share a source, a cache key and a CUBIN. */
typedef struct cuda_source {
  const kir_kernel *kir;
  char entry[32];
  char *source;
  int32_t per_thread, block, per_block, smem, cluster;
  key128 key;
} cuda_source;

static ic_status cuda_generate(const cuda_state *cs, const kir_kernel *k, cuda_source *out) {
  out->kir = k;
  snprintf(out->entry, sizeof out->entry, "ic_%016" PRIx64, kir_content_hash(k));
  cuda_codegen_result cg = {0};
  ic_status s = cuda_codegen(k, out->entry, cs->sm, &cg);
  out->source = cg.source;
  out->per_thread = cg.per_thread;
  out->block = cg.block ? cg.block : CUDA_BLOCK;
  out->per_block = cg.per_block;
  out->smem = cg.smem;
  out->cluster = cg.cluster;
  if (!s) out->key = cuda_source_key(cs, out->source);
  return s;
}

/* A program's kernels, compiled in one NVRTC call on the first cache miss: one prelude
 * and one NVRTC start-up for all of them (measured by ic-bench compile).
 *
 * The cache then holds that CUBIN once, under its own key (cuda_source_key of the batch
 * source), and each of its kernels' entries is a reference record naming it:
 *
 *   "ICKBREF1", batch key (lo then hi, u64 little-endian each), entry point name (no NUL)
 *
 * A kernel compiled on its own (no batch, a batch of one, a failed batch) has its CUBIN as
 * its entry; a CUBIN is an ELF file, never starting with the record's magic. Getting a
 * kernel that finds a reference gets the batch entry (kernel_cache_fetch: not counted as a
 * kernel in the stats); a reference whose batch entry is gone from memory and disk (or
 * that names another entry point) is stale: it is dropped and the kernel produced again.
 * Memory and disk thus hold each batch CUBIN once plus a few dozen bytes a kernel, and a
 * warm run compiles nothing. */
#define CUDA_REF_MAGIC "ICKBREF1"
enum { CUDA_REF_HEAD = 8 + 16 };

/* The missing kernels of a batch compile as up to CUDA_BATCH_MAX_PARTS parts, one NVRTC
 * call each, on as many threads as the machine has cores: one call amortizes NVRTC's
 * start-up and the prelude over its kernels, parallel calls use the cores (ic-bench
 * compile; on 2 cores, 6 eager kernels: 142 ms in one call, 102 ms as 2 parallel parts).
 * Each part's CUBIN is a batch entry of its own. */
typedef struct cuda_batch_part {
  sbuf bodies; /* its kernels from their marks; then the source: the prelude they need, the bodies */
  const char *source; /* what NVRTC compiles: bodies.data, or the one kernel's own source */
  void *cubin;
  size_t size;
  key128 key; /* of the part's source: the cache entry of cubin */
  const cuda_state *cs;
  int32_t index;   /* for its NVRTC name (ic_batch_p<index>) */
  int32_t kernels; /* distinct kernels in it; a part of one is that kernel's own CUBIN */
  char error[256]; /* why its compile failed (the worker thread's message) */
} cuda_batch_part;

typedef struct cuda_batch {
  const cuda_state *cs;
  int32_t n;
  cuda_source *kernels;
  int8_t *part_of; /* the part whose CUBIN holds kernel i, -1: none */
  bool tried;
  int32_t nparts;
  cuda_batch_part parts[CUDA_BATCH_MAX_PARTS];
} cuda_batch;

static void cuda_batch_end(void *batch) {
  cuda_batch *b = batch;
  if (!b) return;
  for (int32_t i = 0; i < b->n; i++) free(b->kernels[i].source);
  free(b->kernels);
  free(b->part_of);
  for (int32_t p = 0; p < b->nparts; p++) {
    free(b->parts[p].cubin);
    sbuf_free(&b->parts[p].bodies);
  }
  free(b);
}

static void *cuda_batch_begin(backend_state *bs, const kir_kernel *const *kernels, int32_t n, uint32_t flags) {
  const cuda_state *cs = (const cuda_state *)bs;
  if ((flags & IC_COMPILE_NO_CACHE) || !cs->kernels) return NULL;
  cuda_batch *b = sys_malloc(sizeof *b);
  if (!b) return NULL;
  *b = (cuda_batch){.cs = cs};
  b->kernels = sys_calloc((size_t)n, sizeof *b->kernels);
  b->part_of = sys_malloc((size_t)n + 1);
  if (!b->kernels || !b->part_of) {
    cuda_batch_end(b);
    return NULL;
  }
  b->n = n;
  memset(b->part_of, -1, (size_t)n + 1);
  for (int32_t i = 0; i < n; i++) {
    if (cuda_generate(cs, kernels[i], &b->kernels[i])) {
      cuda_batch_end(b); /* compile one by one; the error shows there */
      return NULL;
    }
  }
  return b;
}

static void *cuda_batch_part_compile(void *arg) {
  cuda_batch_part *part = arg;
  char name[32];
  snprintf(name, sizeof name, "ic_batch_p%" PRId32, part->index);
  /* a failure leaves cubin NULL (cuda_nvrtc_compile clears it); its message is this
   * thread's, so it is kept for the caller's log */
  if (!part->source) snprintf(part->error, sizeof part->error, "out of memory for its source");
  else if (cuda_nvrtc_compile(part->cs, name, part->source, &part->cubin, &part->size) != IC_OK)
    snprintf(part->error, sizeof part->error, "%s", ic_last_error());
  return NULL;
}

/* A part's source: its kernel's own when it has one (the key and the binary then agree),
 * else the prelude its kernels need (cuda_prelude_needed over their bodies) and the
 * bodies; NULL when out of memory. */
static void cuda_batch_part_source(cuda_batch_part *part, const char *only_source) {
  if (part->kernels == 1) {
    part->source = only_source;
    return;
  }
  sbuf src = {0};
  if (part->bodies.data) cuda_prelude_needed(part->bodies.data, &src);
  sbuf_puts(&src, part->bodies.data ? part->bodies.data : "");
  bool oom = src.oom || part->bodies.oom;
  sbuf_free(&part->bodies);
  if (oom) {
    sbuf_free(&src);
    return;
  }
  part->bodies = src;
  part->source = src.data;
}

int32_t cuda_batch_parts(int32_t kernels) {
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  int32_t parts = cores < 1 ? 1 : cores > CUDA_BATCH_MAX_PARTS ? CUDA_BATCH_MAX_PARTS : (int32_t)cores;
  return kernels < parts ? (kernels < 1 ? 1 : kernels) : parts;
}

/* Compiles, once, every kernel of the batch not yet in memory, distinct entries only:
 * with two or more, as min(cores, kernels, CUDA_BATCH_MAX_PARTS) parts in parallel, the
 * largest sources spread first (each to the part with the fewest bytes so far). A part
 * that fails leaves its kernels to be compiled one by one, where the error shows. */
static void cuda_batch_compile(cuda_batch *b) {
  b->tried = true;
  int32_t *todo = sys_malloc(sizeof *todo * ((size_t)b->n + 1));
  if (!todo) return;
  int32_t count = 0;
  for (int32_t i = 0; i < b->n; i++) {
    const cuda_source *k = &b->kernels[i];
    bool dup = false;
    for (int32_t j = 0; j < count && !dup; j++) dup = strcmp(b->kernels[todo[j]].entry, k->entry) == 0;
    if (!dup && !kernel_cache_in_memory(b->cs->kernels, k->key)) todo[count++] = i;
  }
  if (count < 2) { /* nothing to share: each kernel compiles as its own entry */
    free(todo);
    return;
  }
  int32_t nparts = cuda_batch_parts(count);
  /* largest first, each to the lightest part; a kernel's body is its source from the mark */
  size_t *len = sys_malloc(sizeof *len * ((size_t)b->n + 1));
  if (!len) {
    free(todo);
    return;
  }
  for (int32_t t = 0; t < count; t++) len[todo[t]] = strlen(b->kernels[todo[t]].source);
  for (int32_t a = 1; a < count; a++)
    for (int32_t c = a; c > 0 && len[todo[c]] > len[todo[c - 1]]; c--) {
      int32_t t = todo[c];
      todo[c] = todo[c - 1];
      todo[c - 1] = t;
    }
  b->nparts = nparts;
  const char *only[CUDA_BATCH_MAX_PARTS] = {NULL};
  for (int32_t p = 0; p < nparts; p++) {
    b->parts[p].cs = b->cs;
    b->parts[p].index = p;
  }
  for (int32_t t = 0; t < count; t++) {
    int32_t p = 0;
    for (int32_t q = 1; q < nparts; q++)
      if (b->parts[q].bodies.len < b->parts[p].bodies.len) p = q;
    const char *src = b->kernels[todo[t]].source, *body = strstr(src, CUDA_KERNEL_MARK);
    sbuf_puts(&b->parts[p].bodies, body ? body : src);
    only[p] = src;
    b->parts[p].kernels++;
    b->part_of[todo[t]] = (int8_t)p;
  }
  free(len);
  free(todo);
  for (int32_t p = 0; p < nparts; p++) cuda_batch_part_source(&b->parts[p], only[p]);
  pthread_t threads[CUDA_BATCH_MAX_PARTS];
  bool started[CUDA_BATCH_MAX_PARTS] = {false};
  for (int32_t p = 1; p < nparts; p++)
    started[p] = pthread_create(&threads[p], NULL, cuda_batch_part_compile, &b->parts[p]) == 0;
  cuda_batch_part_compile(&b->parts[0]);
  for (int32_t p = 1; p < nparts; p++) {
    if (started[p]) pthread_join(threads[p], NULL);
    else cuda_batch_part_compile(&b->parts[p]); /* no thread to be had: here */
  }
  for (int32_t p = 0; p < nparts; p++) {
    cuda_batch_part *part = &b->parts[p];
    if (part->cubin) part->key = cuda_source_key(b->cs, part->source);
    if (part->cubin && !(part->key.lo | part->key.hi)) { /* out of memory for the key: one by one */
      free(part->cubin);
      part->cubin = NULL;
      snprintf(part->error, sizeof part->error, "out of memory for its key");
    }
    if (!part->cubin)
      log_msg(b->cs->log, IC_LOG_DEBUG,
              "batched NVRTC compile (part %" PRId32 " of %" PRId32 ") failed; compiling its kernels one by one: %s", p + 1,
              nparts, part->error);
    sbuf_free(&part->bodies);
    part->source = NULL;
  }
  for (int32_t i = 0; i < b->n; i++) { /* duplicates of a compiled entry are in its part too */
    if (b->part_of[i] >= 0 && !b->parts[b->part_of[i]].cubin) b->part_of[i] = -1;
    for (int32_t j = 0; j < i && b->part_of[i] < 0; j++)
      if (b->part_of[j] >= 0 && strcmp(b->kernels[j].entry, b->kernels[i].entry) == 0) b->part_of[i] = b->part_of[j];
  }
}

/* A reference record (malloc'd) naming the entry point entry in the batch CUBIN under batch. */
static ic_status cuda_ref_make(key128 batch, const char *entry, void **out, size_t *size) {
  size_t n = strlen(entry);
  unsigned char *r = sys_malloc(CUDA_REF_HEAD + n);
  if (!r) return error_set(IC_ERR_OUT_OF_MEMORY, "out of memory for a kernel cache reference");
  memcpy(r, CUDA_REF_MAGIC, 8);
  bytes_store_u64(r + 8, batch.lo);
  bytes_store_u64(r + 16, batch.hi);
  memcpy(r + CUDA_REF_HEAD, entry, n);
  *out = r;
  *size = CUDA_REF_HEAD + n;
  return IC_OK;
}

/* 0: not a reference (a CUBIN); 1: a reference to entry, its batch key in *batch; -1: a
 * reference that does not name entry (treated as stale). */
static int cuda_ref_parse(const void *p, size_t size, const char *entry, key128 *batch) {
  const unsigned char *r = p;
  if (size < 8 || memcmp(r, CUDA_REF_MAGIC, 8) != 0) return 0;
  size_t n = strlen(entry);
  if (size != CUDA_REF_HEAD + n || memcmp(r + CUDA_REF_HEAD, entry, n) != 0) return -1;
  batch->lo = bytes_load_u64(r + 8);
  batch->hi = bytes_load_u64(r + 16);
  return 1;
}

/* A malloc'd copy of a batch part's CUBIN. */
static ic_status cuda_part_copy(const cuda_batch_part *part, void **binary, size_t *size) {
  if (!(*binary = sys_malloc(part->size ? part->size : 1))) return error_set(IC_ERR_OUT_OF_MEMORY, "out of memory for a CUBIN");
  memcpy(*binary, part->cubin, part->size);
  *size = part->size;
  return IC_OK;
}

typedef struct cuda_nvrtc_job {
  const cuda_state *cs;
  const cuda_source *kernel;
  cuda_batch *batch;
  int32_t index; /* in the batch */
} cuda_nvrtc_job;

/* Produces a missing kernel entry: a reference into the batch CUBIN when the kernel is in
 * it, else the kernel's own CUBIN. */
static ic_status cuda_compile_missing(void *user, void **binary, size_t *size) {
  const cuda_nvrtc_job *job = user;
  cuda_batch *b = job->batch;
  if (b && !b->tried) cuda_batch_compile(b);
  const cuda_batch_part *part = b && b->part_of[job->index] >= 0 ? &b->parts[b->part_of[job->index]] : NULL;
  if (part && part->kernels > 1) return cuda_ref_make(part->key, job->kernel->entry, binary, size);
  if (part) return cuda_part_copy(part, binary, size); /* a part of one: the kernel's own CUBIN */
  return cuda_nvrtc_compile(job->cs, job->kernel->entry, job->kernel->source, binary, size);
}

/* Produces a missing batch entry: only the batch in hand can (its CUBIN under that key);
 * otherwise the reference that named it is stale. */
typedef struct cuda_batch_want {
  cuda_batch *batch;
  key128 key;
  bool stale;
} cuda_batch_want;

static ic_status cuda_batch_missing(void *user, void **binary, size_t *size) {
  cuda_batch_want *w = user;
  const cuda_batch *b = w->batch;
  const cuda_batch_part *part = NULL;
  for (int32_t p = 0; b && p < b->nparts && !part; p++)
    if (b->parts[p].cubin && b->parts[p].kernels > 1 && b->parts[p].key.lo == w->key.lo && b->parts[p].key.hi == w->key.hi) part = &b->parts[p];
  if (!part) {
    w->stale = true;
    return error_set(IC_ERR_COMPILE, "batch CUBIN %016" PRIx64 "%016" PRIx64 " is no longer cached", w->key.hi,
                     w->key.lo);
  }
  return cuda_part_copy(part, binary, size);
}

/* The CUBIN holding a kernel through the cache (see the batch comment above); batch_origin
 * gets where its batch CUBIN came from, -1 when the entry was the kernel's own CUBIN. */
static ic_status cuda_cached(const cuda_state *cs, const cuda_source *src, cuda_nvrtc_job *job, void **binary,
                             size_t *size, kernel_origin *origin, int *batch_origin) {
  *batch_origin = -1;
  for (int attempt = 0; attempt < 2; attempt++) {
    ic_status s = kernel_cache_get(cs->kernels, src->key, cuda_compile_missing, job, binary, size, origin);
    key128 bkey = {0, 0};
    int ref = s ? 0 : cuda_ref_parse(*binary, *size, src->entry, &bkey);
    if (ref == 0) return s;
    void *record = *binary;
    *binary = NULL;
    *size = 0;
    cuda_batch_want want = {job->batch, bkey, ref < 0};
    kernel_origin bo = KERNEL_COMPILED;
    if (ref > 0) s = kernel_cache_fetch(cs->kernels, bkey, cuda_batch_missing, &want, binary, size, &bo);
    free(record);
    if (ref > 0 && s == IC_OK) {
      *batch_origin = (int)bo;
      return IC_OK;
    }
    if (!want.stale) return s;
    log_msg(cs->log, IC_LOG_DEBUG, "kernel %s: stale cache reference to batch %016" PRIx64 "%016" PRIx64
            "; producing it again", src->entry, bkey.hi, bkey.lo);
    kernel_cache_drop(cs->kernels, src->key);
  }
  /* Stale twice (another thread or process keeps putting it back): compile it alone. */
  *origin = KERNEL_COMPILED;
  return cuda_nvrtc_compile(cs, src->entry, src->source, binary, size);
}

/* After a failed compile of a kernel with inline PTX: the asm lines that the compiler's
 * complaints name (a 'quoted' token of an error line found in a line of the asm) are
 * appended to the message, so the user sees their own line, not generated PTX. */
static void cuda_quote_asm(const kir_kernel *k) {
  bool any_asm = false;
  for (int32_t i = 0; i < k->instrs.count; i++) any_asm |= k->instrs.items[i].kind == KIR_ASM;
  if (!any_asm) return;
  char *msg = str_dup(ic_last_error());
  if (!msg) return;
  sbuf quotes = {0};
  for (int32_t i = 0; i < k->instrs.count; i++) {
    const kir_instr *in = &k->instrs.items[i];
    if (in->kind != KIR_ASM) continue;
    const char *text = in->spec->text;
    int32_t line = 1;
    for (const char *ls = text; *ls; line++) {
      const char *le = strchr(ls, '\n');
      size_t len = le ? (size_t)(le - ls) : strlen(ls);
      /* does an error line quote a token of this asm line, or a word of one (ptxas:
       * "Feature 'cvt with .e4m3x2/.e5m2x2' requires ...")? */
      bool hit = false;
      for (const char *q = strchr(msg, '\''); q && !hit; q = strchr(q + 1, '\'')) {
        const char *e = strchr(q + 1, '\'');
        if (!e) break;
        for (const char *w = q + 1; w < e && !hit;) {
          size_t wl = 0;
          while (w + wl < e && w[wl] != ' ') wl++;
          for (size_t at = 0; wl > 2 && at + wl <= len && !hit; at++) hit = memcmp(ls + at, w, wl) == 0;
          w += wl + 1;
        }
        q = e;
      }
      if (hit) sbuf_printf(&quotes, "\n  inline_asm line %" PRId32 ": %.*s", line, (int)len, ls);
      ls = le ? le + 1 : ls + len;
    }
  }
  if (quotes.len > 0 && quotes.data)
    error_set(IC_ERR_COMPILE, "%s\nthe inline_asm the compiler refuses:%s", msg, quotes.data);
  sbuf_free(&quotes);
  free(msg);
}

static ic_status cuda_compile(backend_state *bs, const kir_kernel *k, uint32_t flags, void *batch,
                              backend_kernel **out) {
  const cuda_state *cs = (const cuda_state *)bs;
  *out = NULL;
  cuda_batch *b = batch;
  int32_t index = -1;
  for (int32_t i = 0; b && i < b->n && index < 0; i++)
    if (b->kernels[i].kir == k) index = i;
  cuda_source own = {0};
  const cuda_source *src = index >= 0 ? &b->kernels[index] : &own;
  ic_status s = index >= 0 ? IC_OK : cuda_generate(cs, k, &own);
  backend_kernel *bk = sys_calloc(1, sizeof *bk);
  if (!bk) {
    free(own.source);
    return error_set(IC_ERR_OUT_OF_MEMORY, "out of memory compiling %s", k->name);
  }
  bk->block = src->block;
  bk->per_thread = src->per_thread;
  bk->per_block = src->per_block;
  bk->smem = src->smem;
  bk->cluster = src->cluster;
  if (!s && (!(bk->name = str_dup(src->entry)) || !(bk->source = str_dup(src->source))))
    s = error_set(IC_ERR_OUT_OF_MEMORY, "out of memory compiling %s", k->name);
  if (!s) {
    cuda_nvrtc_job job = {cs, src, index >= 0 ? b : NULL, index};
    kernel_origin origin = KERNEL_COMPILED;
    int batch_origin = -1;
    double t0 = clock_now_ms();
    bool cached = !(flags & IC_COMPILE_NO_CACHE) && cs->kernels && (src->key.lo | src->key.hi);
    s = cached ? cuda_cached(cs, src, &job, &bk->binary, &bk->binary_size, &origin, &batch_origin)
               : cuda_nvrtc_compile(cs, src->entry, src->source, &bk->binary, &bk->binary_size);
    static const char *const from[] = {"memory", "disk", "compiled"};
    if (!s)
      log_msg(cs->log, IC_LOG_INFO, "kernel %s key %016" PRIx64 "%016" PRIx64 ": %s in %.2f ms%s%s", k->name,
              src->key.hi, src->key.lo, cached ? from[origin] : "compiled (cache bypassed)", clock_now_ms() - t0,
              batch_origin >= 0 ? ", in a batch CUBIN from " : "", batch_origin >= 0 ? from[batch_origin] : "");
  }
  free(own.source);
  if (s == IC_ERR_COMPILE) cuda_quote_asm(k);
  /* bk->binary is the CUBIN holding bk->name: the kernel's own or its whole batch. */
  if (!s && cs->device) s = cuda_load(cs, bk);
  if (s) {
    cuda_kernel_free(bs, bk);
    return s;
  }
  *out = bk;
  return IC_OK;
}

static ic_status cuda_launch(backend_state *bs, const backend_kernel *bk, uint32_t blocks, void **args,
                             void *stream) {
  const cuda_device *dev = ((const cuda_state *)bs)->device;
  const cuda_module *m = bk->impl;
  if (!m || !dev) return error_set(IC_ERR_NO_DEVICE, "kernel %s was compiled without a device: it cannot run", bk->name);
  CUresult r = CU_CALL(dev->drv, cuLaunchKernel, m->function, blocks, 1, 1, (unsigned)bk->block, 1, 1, (unsigned)bk->smem,
                       (CUstream)stream, args, NULL);
  return r == CUDA_SUCCESS ? IC_OK : cuda_error(dev->drv, r, "cuLaunchKernel");
}

/* Everything that shapes the binary besides the source: the NVRTC options (the arch
 * among them), NVRTC's version and the library file. Fixed once the backend is open. */
static uint64_t cuda_config_compute(const cuda_state *cs) {
  const char *opts[16];
  int32_t n;
  char arch_opt[64];
  cuda_nvrtc_options(cs->arch, cs->nvrtc->major, opts, 16, &n, arch_opt, sizeof arch_opt);
  uint64_t h = XXH3_64bits_withSeed(&cs->nvrtc_fingerprint, sizeof cs->nvrtc_fingerprint, 0);
  int32_t version[2] = {cs->nvrtc->major, cs->nvrtc->minor};
  h = XXH3_64bits_withSeed(version, sizeof version, h);
  for (int32_t i = 0; i < n; i++) h = XXH3_64bits_withSeed(opts[i], strlen(opts[i]) + 1, h);
  return h;
}

/* Asked by every ic_compile (program keys): computed once, at open. */
static uint64_t cuda_config_hash(const backend_state *bs) { return ((const cuda_state *)bs)->config_hash; }

static const char *cuda_target(const backend_state *bs) { return ((const cuda_state *)bs)->arch; }

static ic_status cuda_enter(backend_state *bs) {
  const cuda_state *cs = (const cuda_state *)bs;
  if (!cs->device)
    return error_set(IC_ERR_NO_DEVICE, "this context is compile-only (target %s, no GPU): it cannot run", cs->arch);
  return cuda_device_enter(cs->device);
}

static void cuda_leave(backend_state *bs) {
  const cuda_state *cs = (const cuda_state *)bs;
  if (cs->device) cuda_device_leave(cs->device);
}

/* Stream-ordered where the driver has memory pools (CUDA 11.2 on): from ic's own pool
 * (cuda_device.pool), else the default one; else plain. */
static ic_status cuda_mem_alloc(backend_state *bs, size_t bytes, void *stream, void **out) {
  const cuda_device *dev = ((const cuda_state *)bs)->device;
  const cuda_driver_api *drv = dev->drv;
  CUdeviceptr p = 0;
  CUresult r;
  const char *what = "cuMemAlloc";
  if (dev->pool) {
    r = CU_CALL(drv, cuMemAllocFromPoolAsync, &p, bytes, dev->pool, (CUstream)stream);
    what = "cuMemAllocFromPoolAsync";
  } else if (drv->cuMemAllocAsync) {
    r = CU_CALL(drv, cuMemAllocAsync, &p, bytes, (CUstream)stream);
    what = "cuMemAllocAsync";
  } else {
    r = CU_CALL(drv, cuMemAlloc, &p, bytes);
  }
  *out = (void *)(uintptr_t)p;
  return r == CUDA_SUCCESS ? IC_OK : cuda_error(drv, r, what);
}

static ic_status cuda_mem_free(backend_state *bs, void *ptr, void *stream) {
  const cuda_driver_api *drv = ((const cuda_state *)bs)->device->drv;
  CUdeviceptr p = (CUdeviceptr)(uintptr_t)ptr;
  CUresult r = drv->cuMemFreeAsync ? CU_CALL(drv, cuMemFreeAsync, p, (CUstream)stream) : CU_CALL(drv, cuMemFree, p);
  return r == CUDA_SUCCESS ? IC_OK : cuda_error(drv, r, drv->cuMemFreeAsync ? "cuMemFreeAsync" : "cuMemFree");
}

static bool cuda_nvrtc_supports(const cuda_nvrtc_api *nv, int32_t sm) {
  int n = 0;
  if (NVRTC_CALL(nv, nvrtcGetNumSupportedArchs, &n) != NVRTC_SUCCESS || n <= 0 || n > 256) return true;
  int archs[256] = {0};
  if (NVRTC_CALL(nv, nvrtcGetSupportedArchs, archs) != NVRTC_SUCCESS) return true;
  for (int i = 0; i < n; i++)
    if (archs[i] == sm) return true;
  return false;
}

/* Identifies the loaded libnvrtc file (path, size, modification time, inode): a CUBIN
 * cached by one NVRTC build is never served to another, even of the same version. */
static uint64_t cuda_nvrtc_fingerprint(const cuda_nvrtc_api *nv) {
  Dl_info info;
  struct stat st;
  uint64_t h = XXH3_64bits(nv->path, strlen(nv->path));
  if (dladdr(*(void **)&nv->nvrtcVersion, &info) && info.dli_fname && sys_stat(info.dli_fname, &st) == 0) {
    int64_t parts[3] = {(int64_t)st.st_size, (int64_t)st.st_mtime, (int64_t)st.st_ino};
    h = XXH3_64bits_withSeed(parts, sizeof parts, h);
    h = XXH3_64bits_withSeed(info.dli_fname, strlen(info.dli_fname), h);
  }
  return h;
}

static ic_status cuda_open(const backend_env *env, backend_state **out) {
  *out = NULL;
  const char *arch = env->arch && *env->arch ? env->arch : NULL;
  if (!arch)
    return error_set(IC_ERR_NO_DEVICE, "the cuda backend has no target: no GPU here and no arch given (pass "
                     "ic_context_options.arch or set IC_ARCH=sm_90a to compile without a GPU; the ref backend "
                     "needs neither)");
  int32_t sm = cuda_arch_sm(arch);
  if (!sm) return error_set(IC_ERR_INVALID_ARGUMENT, "target arch '%s' is not of the form sm_90a / sm_80", arch);
  if (sm < 80) return error_set(IC_ERR_UNSUPPORTED, "target %s: ic needs sm_80 or newer", arch);
  const cuda_nvrtc_api *nv = cuda_nvrtc_get(env->device ? env->device->drv->driver_version / 1000 : 0);
  if (!nv) {
    error_prefix("the cuda backend needs NVRTC to compile for %s", arch);
    return IC_ERR_NO_NVRTC;
  }
  if (!cuda_nvrtc_supports(nv, sm))
    return error_set(IC_ERR_UNSUPPORTED, "NVRTC %d.%d cannot target %s", nv->major, nv->minor, arch);
  cuda_state *cs = sys_calloc(1, sizeof *cs);
  if (!cs) return error_set(IC_ERR_OUT_OF_MEMORY, "out of memory opening the cuda backend");
  cs->base.vt = &backend_cuda;
  cs->log = env->log;
  cs->kernels = env->kernels;
  cs->dump_dir = env->dump_dir;
  cs->nvrtc = nv;
  cs->device = env->device;
  snprintf(cs->arch, sizeof cs->arch, "%s", arch);
  cs->sm = sm;
  cs->nvrtc_fingerprint = cuda_nvrtc_fingerprint(nv);
  cs->config_hash = cuda_config_compute(cs);
  log_msg(env->log, IC_LOG_INFO, "cuda backend: target %s, %s, NVRTC %d.%d (%s)", cs->arch,
          cs->device ? "device present" : "compile-only", nv->major, nv->minor, nv->path);
  *out = &cs->base;
  return IC_OK;
}

static void cuda_close(backend_state *bs) { free(bs); }

const backend_vtable backend_cuda = {
    .name = "cuda",
    .on_device = true,
    .two_stage_reductions = true,
    .open = cuda_open,
    .close = cuda_close,
    .target = cuda_target,
    .config_hash = cuda_config_hash,
    .enter = cuda_enter,
    .leave = cuda_leave,
    .batch_begin = cuda_batch_begin,
    .batch_end = cuda_batch_end,
    .compile = cuda_compile,
    .launch = cuda_launch,
    .kernel_free = cuda_kernel_free,
    .mem_alloc = cuda_mem_alloc,
    .mem_free = cuda_mem_free,
};
