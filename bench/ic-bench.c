/* ic-bench: performance tables measured in one run against the device's own floors.
 *
 *   ic-bench pointwise   y = gelu_tanh(x * w + b), x f32 [8192, 8192], w and b [8192]:
 *                        ic fused and eager against cuMemcpyDtoD of the same bytes, cold
 *                        compile against a raw NVRTC compile of the same source, and host
 *                        cost of ic_program_run against a bare cuLaunchKernel.
 *   ic-bench compile     compile cost: raw NVRTC per kernel of the pointwise graph, ic cold
 *                        (empty kernel cache), ic warm from the disk cache in a new process,
 *                        a program-cache hit for a 10-node graph rebuilt from scratch, and
 *                        separate vs batched NVRTC calls for the eager kernels. Runs
 *                        without a GPU too (compile-only for IC_ARCH or sm_90a).
 *   ic-bench all         every table.
 *
 * Uses ic's internal driver table (it links the static library), so it needs no CUDA
 * runtime. Not a test: it prints what it measured. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "backend/cuda/cuda_backend.h"
#include "program/program.h"
#include "runtime/context.h"

#define BENCH_CHECK(call)                                                                          \
  do {                                                                                             \
    ic_status s_ = (call);                                                                         \
    if (s_ != IC_OK) {                                                                             \
      fprintf(stderr, "ic-bench: %s: %s: %s\n", #call, ic_status_string(s_), ic_last_error()); \
      exit(1);                                                                                     \
    }                                                                                              \
  } while (0)
#define BENCH_CU(call)                                                     \
  do {                                                                     \
    CUresult r_ = (call);                                                  \
    if (r_ != CUDA_SUCCESS) {                                              \
      fprintf(stderr, "ic-bench: %s failed with CUresult %d\n", #call, (int)r_); \
      exit(1);                                                             \
    }                                                                      \
  } while (0)

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

typedef struct bench {
  ic_context *ctx;
  const cuda_driver_api *d;
  CUstream stream;
  CUevent start, stop;
} bench;

/* Median GPU ms of `reps` timed repetitions of fn (after 3 warm-ups), by CUDA events. */
typedef void (*bench_fn)(bench *b, void *arg);
static double bench_gpu_ms(bench *b, bench_fn fn, void *arg, int reps) {
  double t[64];
  if (reps > 64) reps = 64;
  for (int i = 0; i < 3; i++) fn(b, arg);
  for (int i = 0; i < reps; i++) {
    BENCH_CU(b->d->cuEventRecord(b->start, b->stream));
    fn(b, arg);
    BENCH_CU(b->d->cuEventRecord(b->stop, b->stream));
    BENCH_CU(b->d->cuEventSynchronize(b->stop));
    float ms = 0;
    BENCH_CU(b->d->cuEventElapsedTime(&ms, b->start, b->stop));
    t[i] = ms;
  }
  return median(t, reps);
}

/* ---------------------------------------------------------------- pointwise */

enum { PW_ROWS = 8192, PW_COLS = 8192 };

typedef struct pw_run {
  ic_program *prog;
  ic_tensor in[3], out[1];
  int64_t xs[2], vs[1];
} pw_run;

static void pw_launch(bench *b, void *arg) {
  pw_run *r = arg;
  BENCH_CHECK(ic_program_run(r->prog, r->in, 3, r->out, 1, b->stream));
}

typedef struct copy_run {
  CUdeviceptr dst, src;
  size_t bytes;
} copy_run;

static void copy_launch(bench *b, void *arg) {
  copy_run *c = arg;
  BENCH_CU(b->d->cuMemcpyDtoDAsync(c->dst, c->src, c->bytes, b->stream));
}

static ic_graph *pw_graph(ic_dim rows, ic_dim cols) {
  ic_graph *g;
  BENCH_CHECK(ic_graph_create(&g));
  ic_value x = ic_graph_input(g, "x", IC_F32, 2, (ic_dim[]){rows, cols}, IC_LAYOUT_CONTIGUOUS);
  ic_value w = ic_graph_input(g, "w", IC_F32, 1, (ic_dim[]){cols}, IC_LAYOUT_CONTIGUOUS);
  ic_value bb = ic_graph_input(g, "b", IC_F32, 1, (ic_dim[]){cols}, IC_LAYOUT_CONTIGUOUS);
  ic_value y = ic_graph_unary(g, IC_OP_GELU_TANH, ic_graph_binary(g, IC_OP_ADD, ic_graph_binary(g, IC_OP_MUL, x, w), bb));
  BENCH_CHECK(ic_graph_output(g, "y", y));
  return g;
}

/* A compile that bypasses the caches: what a first compile of this graph costs. */
static ic_program *pw_compile(bench *b, ic_compile_mode mode, double *ms) {
  ic_graph *g = pw_graph(PW_ROWS, PW_COLS);
  ic_compile_options o = {.struct_size = sizeof o, .mode = mode, .flags = IC_COMPILE_NO_CACHE};
  ic_program *p;
  double t0 = now_ms();
  BENCH_CHECK(ic_compile(b->ctx, g, &o, &p));
  if (ms) *ms = now_ms() - t0;
  ic_graph_destroy(g);
  return p;
}

static double raw_nvrtc_ms(bench *b, const char *name, const char *source) {
  void *cubin;
  size_t size;
  double t0 = now_ms();
  BENCH_CHECK(cuda_nvrtc_compile(b->ctx, name, source, &cubin, &size));
  double ms = now_ms() - t0;
  free(cubin);
  return ms;
}

/* Host microseconds per call of `calls` back-to-back launches, synchronized at the end. */
static double host_us_per_call(bench *b, bench_fn fn, void *arg, int calls) {
  for (int i = 0; i < 100; i++) fn(b, arg);
  BENCH_CU(b->d->cuStreamSynchronize(b->stream));
  double t0 = now_ms();
  for (int i = 0; i < calls; i++) fn(b, arg);
  double t1 = now_ms();
  BENCH_CU(b->d->cuStreamSynchronize(b->stream));
  return (t1 - t0) * 1e3 / calls;
}

typedef struct bare_run {
  CUfunction fn;
  uint32_t blocks;
  void *args[8];
} bare_run;

static void bare_launch(bench *b, void *arg) {
  bare_run *r = arg;
  BENCH_CU(b->d->cuLaunchKernel(r->fn, r->blocks, 1, 1, CUDA_BLOCK, 1, 1, 0, b->stream, r->args, NULL));
}

static void bench_pointwise(bench *b) {
  const cuda_driver_api *d = b->d;
  size_t nx = (size_t)PW_ROWS * PW_COLS, xbytes = nx * 4, vbytes = PW_COLS * 4;
  CUdeviceptr x, w, bb, y, y2;
  BENCH_CU(d->cuMemAlloc(&x, xbytes));
  BENCH_CU(d->cuMemAlloc(&y, xbytes));
  BENCH_CU(d->cuMemAlloc(&y2, xbytes));
  BENCH_CU(d->cuMemAlloc(&w, vbytes));
  BENCH_CU(d->cuMemAlloc(&bb, vbytes));
  BENCH_CU(d->cuMemsetD8(x, 0x3c, xbytes)); /* ~0.0115f everywhere */
  BENCH_CU(d->cuMemsetD8(w, 0x3f, vbytes));
  BENCH_CU(d->cuMemsetD8(bb, 0x3c, vbytes));

  /* Compile: ic cold (no cache yet, so every compile is cold) vs raw NVRTC, medians of 5. */
  double ic_ms[5], raw_ms[5];
  ic_program *fused = NULL;
  for (int i = 0; i < 5; i++) {
    ic_program *p = pw_compile(b, IC_MODE_FUSED, &ic_ms[i]);
    raw_ms[i] = raw_nvrtc_ms(b, "ic_k0", ic_program_kernel_source(p, 0));
    if (fused) ic_program_release(fused);
    fused = p;
  }
  double ic_compile_ms = median(ic_ms, 5), nvrtc_ms = median(raw_ms, 5);
  ic_program *eager = pw_compile(b, IC_MODE_EAGER, NULL);

  pw_run r = {.xs = {PW_ROWS, PW_COLS}, .vs = {PW_COLS}};
  r.in[0] = (ic_tensor){(void *)(uintptr_t)x, IC_F32, 2, r.xs, NULL};
  r.in[1] = (ic_tensor){(void *)(uintptr_t)w, IC_F32, 1, r.vs, NULL};
  r.in[2] = (ic_tensor){(void *)(uintptr_t)bb, IC_F32, 1, r.vs, NULL};
  r.out[0] = (ic_tensor){(void *)(uintptr_t)y, IC_F32, 2, r.xs, NULL};
  r.prog = fused;
  double fused_ms = bench_gpu_ms(b, pw_launch, &r, 20);
  r.prog = eager;
  r.out[0].data = (void *)(uintptr_t)y2;
  double eager_ms = bench_gpu_ms(b, pw_launch, &r, 20);
  copy_run c = {y2, x, xbytes};
  double copy_ms = bench_gpu_ms(b, copy_launch, &c, 20);

  /* Bitwise check: eager and fused agree (a benchmark of wrong results is worthless). */
  float *h1 = malloc(xbytes), *h2 = malloc(xbytes);
  r.prog = eager;
  pw_launch(b, &r);
  BENCH_CU(d->cuStreamSynchronize(b->stream));
  BENCH_CU(d->cuMemcpyDtoH(h1, y, xbytes));
  BENCH_CU(d->cuMemcpyDtoH(h2, y2, xbytes));
  bool same = h1 && h2 && memcmp(h1, h2, xbytes) == 0;
  free(h1);
  free(h2);

  /* Host cost per run: a 1-kernel program over 4096 elements vs a bare launch of the
   * same CUBIN with the same arguments. */
  ic_graph *g = pw_graph(1, 4096);
  ic_program *small;
  BENCH_CHECK(ic_compile(b->ctx, g, NULL, &small));
  ic_graph_destroy(g);
  pw_run rs = {.prog = small, .xs = {1, 4096}, .vs = {4096}};
  rs.in[0] = (ic_tensor){(void *)(uintptr_t)x, IC_F32, 2, rs.xs, NULL};
  rs.in[1] = (ic_tensor){(void *)(uintptr_t)w, IC_F32, 1, rs.vs, NULL};
  rs.in[2] = (ic_tensor){(void *)(uintptr_t)bb, IC_F32, 1, rs.vs, NULL};
  rs.out[0] = (ic_tensor){(void *)(uintptr_t)y, IC_F32, 2, rs.xs, NULL};
  const backend_kernel *bk = small->kernels.items[0].compiled;
  CUmodule mod;
  bare_run bare = {.blocks = (uint32_t)((4096 + CUDA_BLOCK * bk->per_thread - 1) / (CUDA_BLOCK * bk->per_thread))};
  BENCH_CU(d->cuModuleLoadData(&mod, bk->binary));
  BENCH_CU(d->cuModuleGetFunction(&bare.fn, mod, bk->name));
  CUdeviceptr ptrs[4] = {x, w, bb, y};
  for (int i = 0; i < 4; i++) bare.args[i] = &ptrs[i];
  double run_us[5], bare_us[5];
  for (int i = 0; i < 5; i++) {
    run_us[i] = host_us_per_call(b, pw_launch, &rs, 20000);
    bare_us[i] = host_us_per_call(b, bare_launch, &bare, 20000);
  }
  double run_host = median(run_us, 5), bare_host = median(bare_us, 5);

  double moved = 2.0 * (double)xbytes + 2.0 * (double)vbytes; /* x in, y out, w and b */
  double copy_gbs = 2.0 * (double)xbytes / copy_ms / 1e6;
  double fused_gbs = moved / fused_ms / 1e6;
  double eager_moved = moved + 4.0 * (double)xbytes; /* two intermediates written and read */
  double eager_gbs = eager_moved / eager_ms / 1e6;
  printf("\n## pointwise: y = gelu_tanh(x * w + b), x f32 [%d, %d], w, b f32 [%d] (%s)\n\n", PW_ROWS, PW_COLS, PW_COLS,
         b->ctx->arch);
  printf("| what | time | achieved | vs floor |\n|---|---|---|---|\n");
  printf("| cuMemcpyDtoD, same bytes (floor) | %.3f ms | %.0f GB/s | 100%% |\n", copy_ms, copy_gbs);
  printf("| ic fused (%d kernel) | %.3f ms | %.0f GB/s | %.1f%% of copy |\n", (int)ic_program_kernel_count(fused),
         fused_ms, fused_gbs, 100.0 * fused_gbs / copy_gbs);
  printf("| ic eager (%d kernels) | %.3f ms | %.0f GB/s moved | fused is %.2fx faster |\n",
         (int)ic_program_kernel_count(eager), eager_ms, eager_gbs, eager_ms / fused_ms);
  printf("| raw NVRTC compile of the fused source (floor) | %.2f ms | | 1.00x |\n", nvrtc_ms);
  printf("| ic cold compile, caches bypassed (graph -> loaded kernel) | %.2f ms | | %.2fx NVRTC |\n", ic_compile_ms,
         ic_compile_ms / nvrtc_ms);
  printf("| bare cuLaunchKernel, host (floor) | %.2f us | | 1.00x |\n", bare_host);
  printf("| ic_program_run of a 1-kernel program, host | %.2f us | | %.2fx bare launch |\n", run_host,
         run_host / bare_host);
  printf("\neager == fused bitwise: %s\n", same ? "yes" : "NO");

  d->cuModuleUnload(mod);
  ic_program_release(small);
  ic_program_release(fused);
  ic_program_release(eager);
  d->cuMemFree(x);
  d->cuMemFree(y);
  d->cuMemFree(y2);
  d->cuMemFree(w);
  d->cuMemFree(bb);
}

/* ---------------------------------------------------------------- compile */

static ic_context *compile_ctx(const char *cache_dir) {
  ic_context_options o = {.struct_size = sizeof o, .cache_dir = cache_dir};
  ic_context *ctx;
  if (ic_context_create(&o, &ctx) == IC_OK) return ctx;
  o.arch = getenv("IC_ARCH") ? getenv("IC_ARCH") : "sm_90a";
  o.flags = IC_CONTEXT_COMPILE_ONLY;
  BENCH_CHECK(ic_context_create(&o, &ctx));
  return ctx;
}

/* A 10-node graph: inputs, a chain of ops, a broadcast, a cast. */
static ic_graph *ten_node_graph(void) {
  ic_graph *g;
  BENCH_CHECK(ic_graph_create(&g));
  ic_dim n = ic_graph_symbol(g, "n");
  ic_value x = ic_graph_input(g, "x", IC_F16, 2, (ic_dim[]){n, 1024}, IC_LAYOUT_CONTIGUOUS);
  ic_value w = ic_graph_input(g, "w", IC_F16, 1, (ic_dim[]){1024}, IC_LAYOUT_CONTIGUOUS);
  ic_value t = ic_graph_binary(g, IC_OP_MUL, x, w);
  t = ic_graph_binary(g, IC_OP_ADD, t, ic_graph_constant(g, 0.5, IC_DTYPE_AUTO));
  t = ic_graph_unary(g, IC_OP_SIGMOID, t);
  t = ic_graph_binary(g, IC_OP_MAXIMUM, t, x);
  BENCH_CHECK(ic_graph_output(g, "y", ic_graph_cast(g, t, IC_F32)));
  return g;
}

/* Milliseconds of one fused compile of the pointwise graph in a fresh process (which
 * finds the kernel on disk). */
static double warm_compile_in_child(const char *cache_dir) {
  int fd[2];
  if (pipe(fd) != 0) return -1;
  pid_t pid = fork();
  if (pid == 0) {
    close(fd[0]);
    ic_context *ctx = compile_ctx(cache_dir);
    ic_graph *g = pw_graph(PW_ROWS, PW_COLS);
    ic_program *p;
    double t0 = now_ms();
    BENCH_CHECK(ic_compile(ctx, g, NULL, &p));
    double ms = now_ms() - t0;
    ic_cache_stats st = {.struct_size = sizeof st};
    ic_cache_stats_get(ctx, &st);
    if (st.disk_hits != 1) ms = -ms; /* not from disk: report it as invalid */
    if (write(fd[1], &ms, sizeof ms) != (ssize_t)sizeof ms) _exit(1);
    _exit(0);
  }
  close(fd[1]);
  double ms = -1;
  if (read(fd[0], &ms, sizeof ms) != (ssize_t)sizeof ms) ms = -1;
  close(fd[0]);
  waitpid(pid, NULL, 0);
  return ms;
}

static void bench_compile(void) {
  char dir[] = "/tmp/ic-bench-cache-XXXXXX";
  if (!mkdtemp(dir)) {
    perror("mkdtemp");
    exit(1);
  }
  ic_context *ctx = compile_ctx(dir);
  /* raw NVRTC of each kernel (fused, then the eager ones), medians of 5 */
  ic_graph *g = pw_graph(PW_ROWS, PW_COLS);
  ic_compile_options nc = {.struct_size = sizeof nc, .flags = IC_COMPILE_NO_CACHE};
  ic_compile_options enc = nc;
  enc.mode = IC_MODE_EAGER;
  ic_program *fused, *eager;
  BENCH_CHECK(ic_compile(ctx, g, &nc, &fused));
  BENCH_CHECK(ic_compile(ctx, g, &enc, &eager));
  bench b = {.ctx = ctx};
  double raw[5], t[5];
  int32_t ne = ic_program_kernel_count(eager);
  double raw_eager_sum = 0;
  for (int32_t k = 0; k < ne; k++) {
    for (int i = 0; i < 5; i++) raw[i] = raw_nvrtc_ms(&b, "eager", ic_program_kernel_source(eager, k));
    raw_eager_sum += median(raw, 5);
  }
  /* the eager kernels in one NVRTC call: one prelude, several entry points */
  sbuf batch = {0};
  for (int32_t k = 0; k < ne; k++) {
    const char *src = ic_program_kernel_source(eager, k);
    const char *kernel = strstr(src, CUDA_KERNEL_MARK);
    sbuf_puts(&batch, k == 0 || !kernel ? src : kernel);
  }
  for (int i = 0; i < 5; i++) raw[i] = raw_nvrtc_ms(&b, "batch", batch.data);
  double raw_batch = median(raw, 5);
  sbuf_free(&batch);

  /* ic cold: an empty cache directory each time (a fresh context, no program cache),
   * interleaved with raw NVRTC compiles of the same source so both see the same load */
  for (int i = 0; i < 5; i++) {
    raw[i] = raw_nvrtc_ms(&b, "fused", ic_program_kernel_source(fused, 0));
    char cold[] = "/tmp/ic-bench-cold-XXXXXX";
    if (!mkdtemp(cold)) exit(1);
    ic_context *c = compile_ctx(cold);
    ic_program *p;
    double t0 = now_ms();
    BENCH_CHECK(ic_compile(c, g, NULL, &p));
    t[i] = now_ms() - t0;
    ic_program_release(p);
    ic_context_destroy(c);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", cold);
    if (system(cmd) != 0) fprintf(stderr, "ic-bench: could not remove %s\n", cold);
  }
  double cold_ms = median(t, 5), raw_fused = median(raw, 5);
  /* fill the shared directory, then warm compiles in new processes */
  ic_program *p;
  BENCH_CHECK(ic_compile(ctx, g, NULL, &p));
  ic_program_release(p);
  for (int i = 0; i < 5; i++) t[i] = warm_compile_in_child(dir);
  double warm_ms = median(t, 5);

  /* program cache: rebuild a 10-node graph from scratch and compile it, many times */
  ic_graph *g10 = ten_node_graph();
  BENCH_CHECK(ic_compile(ctx, g10, NULL, &p));
  ic_program_release(p);
  ic_graph_destroy(g10);
  enum { REBUILDS = 20000 };
  double t0 = now_ms();
  for (int i = 0; i < REBUILDS; i++) {
    ic_graph *gi = ten_node_graph();
    BENCH_CHECK(ic_compile(ctx, gi, NULL, &p));
    ic_program_release(p);
    ic_graph_destroy(gi);
  }
  double rebuild_us = (now_ms() - t0) * 1e3 / REBUILDS;
  ic_cache_stats st = {.struct_size = sizeof st};
  BENCH_CHECK(ic_cache_stats_get(ctx, &st));

  printf("\n## compile: y = gelu_tanh(x * w + b) (%s, %s)\n\n", ctx->arch, ctx->drv ? "GPU present" : "compile-only");
  printf("| what | time | vs floor |\n|---|---|---|\n");
  printf("| raw NVRTC, fused kernel (floor) | %.2f ms | 1.00x |\n", raw_fused);
  printf("| ic cold compile, empty cache | %.2f ms | %.2fx raw NVRTC |\n", cold_ms, cold_ms / raw_fused);
  printf("| ic warm compile, new process, from disk | %.3f ms | %.3f ms per kernel (%s) |\n", warm_ms, warm_ms,
         warm_ms > 0 ? "disk hit" : "NOT a disk hit");
  printf("| rebuild 10-node graph + ic_compile (program-cache hit) | %.2f us | %llu hits |\n", rebuild_us,
         (unsigned long long)st.program_hits);
  printf("| raw NVRTC, %d eager kernels, one call each | %.2f ms | 1.00x |\n", (int)ne, raw_eager_sum);
  printf("| raw NVRTC, the same %d kernels in one call | %.2f ms | %.2fx |\n", (int)ne, raw_batch,
         raw_batch / raw_eager_sum);
  ic_program_release(fused);
  ic_program_release(eager);
  ic_graph_destroy(g);
  ic_context_destroy(ctx);
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) fprintf(stderr, "ic-bench: could not remove %s\n", dir);
}

int main(int argc, char **argv) {
  const char *what = argc > 1 ? argv[1] : "all";
  bool all = strcmp(what, "all") == 0;
  if (strcmp(what, "pointwise") != 0 && strcmp(what, "compile") != 0 && !all) {
    fprintf(stderr, "usage: ic-bench [pointwise|compile|all]\n");
    return 2;
  }
  if (strcmp(what, "compile") == 0 || all) bench_compile();
  if (strcmp(what, "compile") == 0) return 0;
  bench b = {0};
  ic_status s = ic_context_create(NULL, &b.ctx);
  if (s == IC_ERR_NO_DEVICE) {
    fprintf(stderr, "ic-bench pointwise needs a GPU: %s\n", ic_last_error());
    return 77;
  }
  BENCH_CHECK(s);
  b.d = b.ctx->drv;
  BENCH_CHECK(ctx_enter(b.ctx));
  BENCH_CU(b.d->cuStreamCreate(&b.stream, CU_STREAM_NON_BLOCKING));
  BENCH_CU(b.d->cuEventCreate(&b.start, CU_EVENT_DEFAULT));
  BENCH_CU(b.d->cuEventCreate(&b.stop, CU_EVENT_DEFAULT));
  char name[128] = "?";
  b.d->cuDeviceGetName(name, sizeof name, b.ctx->device);
  printf("# ic-bench on %s (%s), ic %s, NVRTC %d.%d\n", name, b.ctx->arch, IC_VERSION_STRING, b.ctx->nvrtc->major,
         b.ctx->nvrtc->minor);
  bench_pointwise(&b);
  b.d->cuEventDestroy(b.start);
  b.d->cuEventDestroy(b.stop);
  b.d->cuStreamDestroy(b.stream);
  ctx_leave(b.ctx);
  ic_context_destroy(b.ctx);
  return 0;
}
