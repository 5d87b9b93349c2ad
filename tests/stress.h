/* The stress and soak workloads of test_stress (CPU, ref backend and compile-only cuda)
 * and gpu_stress (cuda, one stream a thread): threads sharing one context build the
 * same few graphs over and over (overlapping program and kernel cache keys), compile
 * them fused or eager, cached or not, run them with a size that changes every time and
 * check every result against the host. */
#ifndef IC_TESTS_STRESS_H
#define IC_TESTS_STRESS_H

#include <check.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ic/ic.h"

enum { STRESS_TEMPLATES = 3, STRESS_MAX_ROWS = 300, STRESS_COLS = 33 };

/* Where a worker's tensors live and how it runs: the ref backend with host memory, or
 * cuda with device memory and a stream of its own. The hooks are NULL for ref. */
typedef struct stress_device {
  void *(*stream_create)(void);
  void (*stream_destroy)(void *stream);
} stress_device;

typedef struct stress_shared {
  ic_context *ctx;
  const char *backend;          /* "ref" or "cuda" */
  const char *compile_only;     /* a second backend only compiled, never run ("cuda" on a CPU), or NULL */
  const stress_device *device;  /* NULL: host memory */
  double seconds;
  atomic_long runs, compiles, failures;
  char first_failure[512];
  pthread_mutex_t mu;
} stress_shared;

typedef struct stress_worker {
  stress_shared *sh;
  unsigned seed;
} stress_worker;

static inline double stress_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Counts a failure; the first one's words are kept for the test's message. */
static inline void stress_fail(stress_shared *sh, const char *what, const char *detail) {
  if (atomic_fetch_add(&sh->failures, 1) == 0) {
    pthread_mutex_lock(&sh->mu);
    snprintf(sh->first_failure, sizeof sh->first_failure, "%s: %s", what, detail);
    pthread_mutex_unlock(&sh->mu);
  }
}

/* Template t over x [n, 33] (and w [33]): 0: x * w + 1; 1: softmax over the row; 2: the
 * row sums of exp(x) (keepdim). Built from scratch every time. */
static inline ic_graph *stress_graph(int t) {
  ic_graph *g = NULL;
  if (ic_graph_create(&g) != IC_OK) return NULL;
  ic_dim dims[2] = {ic_graph_symbol(g, "n"), STRESS_COLS};
  ic_value x = ic_graph_input(g, "x", IC_F32, 2, dims, IC_LAYOUT_CONTIGUOUS), y;
  if (t == 0) {
    ic_value w = ic_graph_input(g, "w", IC_F32, 1, &dims[1], IC_LAYOUT_CONTIGUOUS);
    y = ic_graph_binary(g, IC_OP_ADD, ic_graph_binary(g, IC_OP_MUL, x, w), ic_graph_constant(g, 1.0, IC_DTYPE_AUTO));
  } else if (t == 1) {
    y = ic_graph_softmax(g, x, 1);
  } else {
    int32_t axis = 1;
    y = ic_graph_reduce(g, IC_REDUCE_SUM, ic_graph_unary(g, IC_OP_EXP, x), 1, &axis, 1);
  }
  ic_graph_output(g, "y", y);
  return g;
}

/* Resident set size of the process in KiB (/proc/self/statm), for the soaks. */
static inline long stress_rss_kib(void) {
  FILE *f = fopen("/proc/self/statm", "r");
  long pages = 0, resident = 0;
  if (f) {
    if (fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
    fclose(f);
  }
  return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

static inline float stress_x(unsigned seed, int64_t i) { return (float)((i * 7919 + seed) % 1000) / 250.0f - 2.0f; }

/* Checks output y of template t against the host (t 0 exactly, the others to 1e-5). */
static inline bool stress_check(int t, unsigned seed, int64_t n, const float *w, const float *y) {
  for (int64_t r = 0; r < n; r++) {
    double sum = 0, mx = -INFINITY;
    for (int c = 0; c < STRESS_COLS; c++) {
      float x = stress_x(seed, r * STRESS_COLS + c);
      mx = fmax(mx, x);
      sum += t == 1 ? 0 : exp((double)x);
    }
    if (t == 1)
      for (int c = 0; c < STRESS_COLS; c++) sum += exp((double)stress_x(seed, r * STRESS_COLS + c) - mx);
    if (t == 2) {
      if (fabs(y[r] - sum) > 1e-5 * sum) return false;
      continue;
    }
    for (int c = 0; c < STRESS_COLS; c++) {
      float x = stress_x(seed, r * STRESS_COLS + c);
      if (t == 0 && y[r * STRESS_COLS + c] != x * w[c] + 1.0f) return false;
      if (t == 1 && fabs(y[r * STRESS_COLS + c] - exp((double)x - mx) / sum) > 1e-5) return false;
    }
  }
  return true;
}

/* One iteration: build, compile (fused or eager, cached or not), run with n rows on the
 * worker's stream, check. Returns false after recording a failure. */
static inline bool stress_iteration(stress_worker *wk, void *stream, float *hx, float *hw, float *hy) {
  stress_shared *sh = wk->sh;
  unsigned r = (unsigned)rand_r(&wk->seed);
  int t = (int)(r % STRESS_TEMPLATES);
  int64_t n = 1 + (int64_t)((r >> 4) % STRESS_MAX_ROWS);
  unsigned seed = r >> 12;
  ic_graph *g = stress_graph(t);
  if (!g) {
    stress_fail(sh, "graph", ic_last_error());
    return false;
  }
  ic_compile_options o = {.struct_size = sizeof o, .mode = (r >> 8) & 1 ? IC_MODE_EAGER : IC_MODE_FUSED,
                          .flags = (r >> 9) % 8 == 0 ? IC_COMPILE_NO_CACHE : 0, .backend = sh->backend};
  ic_program *p = NULL;
  ic_status s = ic_compile(sh->ctx, g, &o, &p);
  if (!s && sh->compile_only && (r >> 10) % 4 == 0) {
    ic_compile_options oc = o;
    oc.backend = sh->compile_only;
    ic_program *pc = NULL;
    s = ic_compile(sh->ctx, g, &oc, &pc);
    ic_program_release(pc);
    atomic_fetch_add(&sh->compiles, 1);
  }
  ic_graph_destroy(g);
  atomic_fetch_add(&sh->compiles, 1);
  if (s) {
    stress_fail(sh, "compile", ic_last_error());
    ic_program_release(p);
    return false;
  }
  for (int64_t i = 0; i < n * STRESS_COLS; i++) hx[i] = stress_x(seed, i);
  for (int c = 0; c < STRESS_COLS; c++) hw[c] = 0.25f * (float)c - 3.0f;
  int64_t xs[2] = {n, STRESS_COLS}, ws[1] = {STRESS_COLS};
  size_t xbytes = sizeof(float) * (size_t)(n * STRESS_COLS), ybytes = t == 2 ? sizeof(float) * (size_t)n : xbytes;
  void *dx = hx, *dw = hw;
  if (sh->device) {
    dx = dw = NULL;
    s = ic_malloc(sh->ctx, xbytes, &dx);
    if (!s) s = ic_malloc(sh->ctx, sizeof(float) * STRESS_COLS, &dw);
    if (!s) s = ic_memcpy_htod(sh->ctx, dx, hx, xbytes);
    if (!s) s = ic_memcpy_htod(sh->ctx, dw, hw, sizeof(float) * STRESS_COLS);
  }
  ic_tensor in[2] = {{dx, IC_F32, 2, xs, NULL}, {dw, IC_F32, 1, ws, NULL}};
  ic_tensor out[1] = {{NULL, IC_F32, 2, NULL, NULL}};
  if (!s) s = ic_program_run(p, in, t == 0 ? 2 : 1, out, 1, stream);
  if (!s && sh->device) s = ic_stream_synchronize(sh->ctx, stream);
  if (!s && sh->device) s = ic_memcpy_dtoh(sh->ctx, hy, out[0].data, ybytes);
  if (!s && !sh->device) memcpy(hy, out[0].data, ybytes);
  bool ok = !s && stress_check(t, seed, n, hw, hy);
  if (s) stress_fail(sh, "run", ic_last_error());
  else if (!ok) stress_fail(sh, "wrong result", t == 0 ? "x*w+1" : t == 1 ? "softmax" : "row sum");
  if (sh->device) {
    ic_free(sh->ctx, out[0].data);
    ic_free(sh->ctx, dx);
    ic_free(sh->ctx, dw);
  } else {
    free(out[0].data);
  }
  ic_program_release(p);
  atomic_fetch_add(&sh->runs, 1);
  return ok;
}

static inline void *stress_thread(void *arg) {
  stress_worker *wk = arg;
  stress_shared *sh = wk->sh;
  void *stream = sh->device ? sh->device->stream_create() : NULL;
  float *hx = malloc(sizeof(float) * STRESS_MAX_ROWS * STRESS_COLS), *hw = malloc(sizeof(float) * STRESS_COLS),
        *hy = malloc(sizeof(float) * STRESS_MAX_ROWS * STRESS_COLS);
  double end = stress_now() + sh->seconds;
  while (hx && hw && hy && stress_now() < end && atomic_load(&sh->failures) == 0)
    if (!stress_iteration(wk, stream, hx, hw, hy)) break;
  free(hx);
  free(hw);
  free(hy);
  if (stream) sh->device->stream_destroy(stream);
  return NULL;
}

/* Runs `threads` workers for sh->seconds and checks that every iteration succeeded. */
static inline void stress_run(stress_shared *sh, int threads) {
  pthread_t tid[64];
  stress_worker wk[64];
  pthread_mutex_init(&sh->mu, NULL);
  for (int i = 0; i < threads && i < 64; i++) {
    wk[i] = (stress_worker){sh, 1234u + 77u * (unsigned)i};
    ck_assert_int_eq(pthread_create(&tid[i], NULL, stress_thread, &wk[i]), 0);
  }
  for (int i = 0; i < threads && i < 64; i++) pthread_join(tid[i], NULL);
  pthread_mutex_destroy(&sh->mu);
  printf("stress: %d threads, %.0f s: %ld runs, %ld compiles, %ld failures\n", threads, sh->seconds,
         atomic_load(&sh->runs), atomic_load(&sh->compiles), atomic_load(&sh->failures));
  ck_assert_msg(atomic_load(&sh->failures) == 0, "first failure: %s", sh->first_failure);
  ck_assert_int_gt(atomic_load(&sh->runs), threads);
}

#endif
