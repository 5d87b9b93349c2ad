/* CPU: the program (wrapper) IR: memory planning (slot reuse), the text dump, the step
 * walk, expression evaluation, and a run on the ref backend that proves the plan. Runs
 * on small stacks and on several threads at once; a compiled program is never written
 * (its sym arena keeps its size while threads dump and run it). */
#include <check.h>
#include <ic/ic.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "program/program.h" /* the program's sym arena, to see that nothing grows it */

#define OK(call) ck_assert_msg((call) == IC_OK, "%s: %s", #call, ic_last_error())

static ic_context *ctx;

static void setup(void) {
  ic_context_options o = {.struct_size = sizeof o, .arch = "sm_90a", .flags = IC_CONTEXT_COMPILE_ONLY};
  OK(ic_context_create(&o, &ctx));
}

static void teardown(void) { ic_context_destroy(ctx); }

/* d = sqrt(permute(exp(permute(neg(permute(relu(x))))))) over x [n, n]. Fused, it is one
 * kernel (each permuted value is recomputed from x); eager (compile_ref), four, with
 * temporaries a, b, c of the same size [n, n]. */
static ic_graph *chain_graph(void) {
  ic_graph *g;
  OK(ic_graph_create(&g));
  ic_dim n = ic_graph_symbol(g, "n");
  ic_value x = ic_graph_input(g, "x", IC_F32, 2, (ic_dim[]){n, n}, IC_LAYOUT_CONTIGUOUS);
  const int32_t tr[2] = {1, 0};
  ic_value a = ic_graph_unary(g, IC_OP_RELU, x);
  ic_value b = ic_graph_unary(g, IC_OP_NEG, ic_graph_permute(g, a, 2, tr));
  ic_value c = ic_graph_unary(g, IC_OP_EXP, ic_graph_permute(g, b, 2, tr));
  ic_value d = ic_graph_unary(g, IC_OP_SQRT, ic_graph_permute(g, c, 2, tr));
  OK(ic_graph_output(g, "d", d));
  return g;
}

static ic_program *compile_ref(ic_graph *g) {
  ic_compile_options o = {.struct_size = sizeof o, .backend = "ref", .mode = IC_MODE_EAGER};
  ic_program *p;
  OK(ic_compile(ctx, g, &o, &p));
  return p;
}

START_TEST(test_memory_plan_reuses_slots) {
  ic_graph *g = chain_graph();
  ic_program *p = compile_ref(g);
  ck_assert_int_eq(ic_program_kernel_count(p), 4);
  /* buffers: x, d, then the temporaries a, b, c; c takes a's slot once a is freed */
  ck_assert_int_eq(ic_program_buffer_count(p), 5);
  ic_buffer_info bi[5];
  for (int i = 0; i < 5; i++) OK(ic_program_buffer(p, i, &bi[i]));
  ck_assert_int_eq(bi[0].kind, IC_BUFFER_INPUT);
  ck_assert_str_eq(bi[0].name, "x");
  ck_assert_int_eq(bi[1].kind, IC_BUFFER_OUTPUT);
  ck_assert_str_eq(bi[1].name, "d");
  ck_assert_int_eq(bi[2].slot, 0);
  ck_assert_int_eq(bi[3].slot, 1);
  ck_assert_int_eq(bi[4].slot, 0);
  ck_assert_int_eq(ic_program_buffer(p, 5, &bi[0]), IC_ERR_INVALID_ARGUMENT);
  char *dump;
  OK(ic_program_dump(p, &dump));
  ck_assert_msg(strstr(dump, "alloc buf4 in slot 0 (reused)") != NULL, "%s", dump);
  ck_assert_msg(strstr(dump, "2 temporary slots") != NULL, "%s", dump);
  /* eager: the first kernel reads x transposed (relu recomputed there), the rest in place */
  ck_assert_msg(strstr(dump, "kernel ic_k0 [n, n]") != NULL, "%s", dump);
  ck_assert_msg(strstr(dump, "kernel ic_k3 [size0]") != NULL, "%s", dump);
  ic_string_free(dump);

  /* the plan is right: run it on ref and compare with a direct computation */
  enum { N = 7 };
  float x[N * N], d[N * N];
  for (int i = 0; i < N * N; i++) x[i] = (float)(i % 11) - 5.0f;
  int64_t shape[2] = {N, N};
  ic_tensor in = {x, IC_F32, 2, shape, NULL}, out = {d, IC_F32, 2, shape, NULL};
  OK(ic_program_run(p, &in, 1, &out, 1, NULL));
  for (int r = 0; r < N; r++)
    for (int c = 0; c < N; c++) {
      float a = x[c * N + r] > 0 ? x[c * N + r] : 0.0f; /* three transposes: one net transpose */
      float want = sqrtf(expf(-a));
      ck_assert_msg(fabsf(d[r * N + c] - want) <= 1e-6f, "[%d,%d] %g vs %g", r, c, (double)d[r * N + c], (double)want);
    }
  ic_program_release(p);
  ic_graph_destroy(g);
}
END_TEST

START_TEST(test_step_walk) {
  ic_graph *g = chain_graph();
  ic_program *p = compile_ref(g);
  ck_assert_int_eq(ic_program_symbol_count(p), 1);
  ck_assert_str_eq(ic_program_symbol_name(p, 0), "n");
  ck_assert_ptr_null(ic_program_symbol_name(p, 1));
  int launches = 0, allocs = 0, frees = 0, reused = 0;
  int64_t n = 1000;
  for (int32_t i = 0; i < ic_program_step_count(p); i++) {
    ic_step st;
    OK(ic_program_step(p, i, &st));
    if (st.kind == IC_STEP_LAUNCH) {
      launches++;
      ck_assert_ptr_nonnull(st.kernel_name);
      ck_assert_ptr_null(st.source); /* ref has no source */
      ck_assert_int_gt(st.block, 0);
      int64_t blocks;
      OK(ic_program_eval(p, st.grid_expr, &n, &blocks));
      /* the transposed first kernel is tiled: its launch covers 64 x 64 tiles */
      int64_t tiles = (n + 63) / 64, points = launches == 1 ? tiles * tiles * 4096 : n * n;
      ck_assert_int_eq(blocks, (points + st.block - 1) / st.block);
      /* args: the buffers it reads and writes, then the symbol n (the transposed first
       * kernel) or the size n * n (the others, coalesced to one dim) */
      ck_assert_int_eq(st.nargs, 3);
      ck_assert_int_eq(st.args[0].kind, IC_ARG_BUFFER);
      if (launches == 1) {
        ck_assert_int_eq(st.args[2].kind, IC_ARG_SYMBOL);
        ck_assert_int_eq(st.args[2].index, 0);
      } else {
        ck_assert_int_eq(st.args[2].kind, IC_ARG_SIZE);
        int64_t size;
        OK(ic_program_eval(p, st.args[2].index, &n, &size));
        ck_assert_int_eq(size, n * n);
      }
    } else if (st.kind == IC_STEP_ALLOC) {
      allocs++;
      ic_buffer_info bi;
      OK(ic_program_buffer(p, st.buffer, &bi));
      ck_assert_int_eq(bi.kind, IC_BUFFER_TEMP);
      int64_t bytes, dim;
      OK(ic_program_eval(p, bi.bytes_expr, &n, &bytes));
      ck_assert_int_eq(bytes, 4 * n * n);
      ck_assert_int_eq(bi.ndim, 2);
      OK(ic_program_eval(p, bi.dims_expr[1], &n, &dim));
      ck_assert_int_eq(dim, n);
      reused += bi.slot == 0 && st.buffer == 4;
    } else if (st.kind == IC_STEP_FREE) {
      frees++;
    }
  }
  ck_assert_int_eq(launches, 4);
  ck_assert_int_eq(allocs, 3);
  ck_assert_int_eq(frees, 3);
  ck_assert_int_eq(reused, 1);
  ic_step st;
  ck_assert_int_eq(ic_program_step(p, -1, &st), IC_ERR_INVALID_ARGUMENT);
  int64_t v;
  ck_assert_int_eq(ic_program_eval(p, 12345, &n, &v), IC_ERR_INVALID_ARGUMENT);
  ic_program_release(p);
  ic_graph_destroy(g);
}
END_TEST

/* The cuda backend's steps carry source and CUBIN; the step walk is all another runtime
 * needs to launch them. */
START_TEST(test_step_walk_cuda) {
  ic_graph *g = chain_graph();
  ic_program *p;
  OK(ic_compile(ctx, g, NULL, &p));
  ck_assert_int_eq(ic_program_kernel_count(p), 1); /* fused: the permuted values recomputed */
  ic_program_release(p);
  ic_compile_options eager = {.struct_size = sizeof eager, .mode = IC_MODE_EAGER};
  OK(ic_compile(ctx, g, &eager, &p));
  int launches = 0;
  for (int32_t i = 0; i < ic_program_step_count(p); i++) {
    ic_step st;
    OK(ic_program_step(p, i, &st));
    if (st.kind != IC_STEP_LAUNCH) continue;
    launches++;
    ck_assert_ptr_nonnull(strstr(st.source, st.kernel_name));
    ck_assert_ptr_nonnull(st.binary);
    ck_assert_int_gt(st.binary_size, 64);
    ck_assert_int_eq(memcmp(st.binary, "\x7f" "ELF", 4), 0);
    ck_assert_int_eq(st.block, launches == 1 ? 256 : 128); /* the first: a tiled transpose */
  }
  ck_assert_int_eq(launches, 4);
  ic_program_release(p);
  ic_graph_destroy(g);
}
END_TEST

/* Runs the chain program on an n x n input and checks d; 0 when every value is right,
 * else the status of the run (or -1 for a wrong value). Heap buffers: it runs on small
 * stacks. */
static int run_chain(ic_program *p, int n) {
  float *x = malloc(sizeof(float) * (size_t)(n * n)), *d = malloc(sizeof(float) * (size_t)(n * n));
  if (!x || !d) {
    free(x);
    free(d);
    return -2;
  }
  for (int i = 0; i < n * n; i++) x[i] = (float)((i * 7 + n) % 13) - 6.0f;
  int64_t shape[2] = {n, n};
  ic_tensor in = {x, IC_F32, 2, shape, NULL}, out = {d, IC_F32, 2, shape, NULL};
  int result = (int)ic_program_run(p, &in, 1, &out, 1, NULL);
  for (int r = 0; r < n && result == 0; r++)
    for (int c = 0; c < n && result == 0; c++) {
      float a = x[c * n + r] > 0 ? x[c * n + r] : 0.0f;
      if (fabsf(d[r * n + c] - sqrtf(expf(-a))) > 1e-6f) result = -1;
    }
  int32_t ndim = 0;
  int64_t oshape[IC_MAX_DIMS] = {0};
  if (result == 0 && (ic_program_output_shape(p, 0, &in, &ndim, oshape) != IC_OK || ndim != 2 || oshape[0] != n ||
                      oshape[1] != n))
    result = -3;
  free(x);
  free(d);
  return result;
}

typedef struct run_job {
  ic_program *p;
  int n, iterations;
  int failures;      /* runs with a wrong status or value */
  int first_failure; /* what the first of them returned */
  char error[256];
  int32_t arena_size; /* the arena's size must stay this */
  uintptr_t top;      /* an address near the top of the thread's stack */
  bool fail_shape;    /* run with a wrong input shape (the error path) instead */
} run_job;

static void job_record(run_job *j, int result) {
  if (result == 0) return;
  if (j->failures++ == 0) {
    j->first_failure = result;
    snprintf(j->error, sizeof j->error, "%s", ic_last_error());
  }
}

static void *run_thread(void *arg) {
  run_job *j = arg;
  volatile char here = 0;
  j->top = (uintptr_t)&here;
  for (int i = 0; i < j->iterations; i++) {
    if (j->fail_shape) {
      float x[4] = {0};
      int64_t shape[2] = {1, 4}; /* [n, n] wants a square */
      ic_tensor in = {x, IC_F32, 2, shape, NULL}, out = {NULL, IC_F32, 2, NULL, NULL};
      job_record(j, ic_program_run(j->p, &in, 1, &out, 1, NULL) == IC_ERR_SHAPE_MISMATCH ? 0 : -4);
    } else {
      job_record(j, run_chain(j->p, j->n));
    }
    if (j->arena_size && sym_arena_size(j->p->syms) != j->arena_size) job_record(j, -5);
  }
  return NULL;
}

static void check_job(const run_job *j) {
  ck_assert_msg(j->failures == 0, "n=%d: %d failed runs, the first returned %d: %s", j->n, j->failures,
                j->first_failure, j->error);
}

/* A thread with a 64 KB stack runs the program: a run keeps its state off the stack. */
START_TEST(test_run_on_small_stack) {
  ic_graph *g = chain_graph();
  ic_program *p = compile_ref(g);
  pthread_attr_t attr;
  ck_assert_int_eq(pthread_attr_init(&attr), 0);
  ck_assert_int_eq(pthread_attr_setstacksize(&attr, 64 * 1024), 0);
  run_job j = {.p = p, .n = 23, .iterations = 3};
  pthread_t t;
  ck_assert_int_eq(pthread_create(&t, &attr, run_thread, &j), 0);
  ck_assert_int_eq(pthread_join(t, NULL), 0);
  pthread_attr_destroy(&attr);
  check_job(&j);
  ic_program_release(p);
  ic_graph_destroy(g);
}
END_TEST

/* The stack a run really uses, measured on a painted stack: the thread's deepest point
 * below the top of its function. */
static size_t stack_used(run_job *j) {
  enum { STACK = 64 * 1024, PAINT = 0xa5 };
  unsigned char *stack = aligned_alloc(4096, STACK);
  ck_assert_ptr_nonnull(stack);
  memset(stack, PAINT, STACK);
  pthread_attr_t attr;
  ck_assert_int_eq(pthread_attr_init(&attr), 0);
  ck_assert_int_eq(pthread_attr_setstack(&attr, stack, STACK), 0);
  pthread_t t;
  ck_assert_int_eq(pthread_create(&t, &attr, run_thread, j), 0);
  ck_assert_int_eq(pthread_join(t, NULL), 0);
  pthread_attr_destroy(&attr);
  size_t lowest = 0;
  while (lowest < STACK && stack[lowest] == PAINT) lowest++;
  uintptr_t deepest = (uintptr_t)stack + lowest;
  free(stack);
  return j->top > deepest ? (size_t)(j->top - deepest) : 0;
}

START_TEST(test_run_stack_usage) {
#if defined(__SANITIZE_THREAD__)
  return; /* TSan refuses threads on stacks this small */
#endif
  ic_graph *g = chain_graph();
  ic_program *p = compile_ref(g);
  run_job ok = {.p = p, .n = 9, .iterations = 2}, bad = {.p = p, .n = 1, .iterations = 1, .fail_shape = true};
  size_t used = stack_used(&ok), used_on_error = stack_used(&bad);
  check_job(&ok);
  check_job(&bad);
  printf("test_run_stack_usage: a ref run uses %zu bytes of stack, a refused run %zu\n", used, used_on_error);
  ck_assert_int_gt(used, 0);
#if !defined(__SANITIZE_ADDRESS__)
  /* ic_program_run down to the ref backend's kernel loop and malloc, or down to the
   * formatting of its error: under 4 KB. */
  ck_assert_msg(used < 4096, "a run used %zu bytes of stack", used);
  ck_assert_msg(used_on_error < 4096, "a refused run used %zu bytes of stack", used_on_error);
#endif
  ic_program_release(p);
  ic_graph_destroy(g);
}
END_TEST

/* One program, four threads, four sizes at once: every result right. */
START_TEST(test_run_concurrent) {
  ic_graph *g = chain_graph();
  ic_program *p = compile_ref(g);
  enum { THREADS = 4 };
  const int sizes[THREADS] = {5, 12, 17, 31};
  run_job jobs[THREADS];
  pthread_t t[THREADS];
  int32_t arena_size = sym_arena_size(p->syms);
  for (int i = 0; i < THREADS; i++) {
    jobs[i] = (run_job){.p = p, .n = sizes[i], .iterations = 40, .arena_size = arena_size};
    ck_assert_int_eq(pthread_create(&t[i], NULL, run_thread, &jobs[i]), 0);
  }
  for (int i = 0; i < THREADS; i++) ck_assert_int_eq(pthread_join(t[i], NULL), 0);
  for (int i = 0; i < THREADS; i++) check_job(&jobs[i]);
  ck_assert_int_eq(sym_arena_size(p->syms), arena_size);
  ic_program_release(p);
  ic_graph_destroy(g);
}
END_TEST

typedef struct dump_job {
  const ic_program *p;
  const char *want;
  int32_t arena_size;
  int iterations;
  int mismatches, resized;
} dump_job;

static void *dump_thread(void *arg) {
  dump_job *j = arg;
  for (int i = 0; i < j->iterations; i++) {
    char *text = NULL;
    if (ic_program_dump(j->p, &text) != IC_OK || strcmp(text, j->want) != 0) j->mismatches++;
    ic_string_free(text);
    for (int32_t s = 0; s < ic_program_step_count(j->p); s++) { /* the accessors only read too */
      ic_step st;
      int64_t n = 6, v = 0;
      if (ic_program_step(j->p, s, &st) != IC_OK ||
          (st.kind == IC_STEP_LAUNCH && ic_program_eval(j->p, st.grid_expr, &n, &v) != IC_OK))
        j->mismatches++;
    }
    if (sym_arena_size(j->p->syms) != j->arena_size) j->resized++;
  }
  return NULL;
}

/* A cached program is dumped by three threads while a fourth runs it: every dump is the
 * same text and the program's sym arena does not grow (printing reads only). */
START_TEST(test_dump_cached_program_concurrently) {
  ic_graph *g = chain_graph();
  ic_program *p = compile_ref(g), *again = compile_ref(g);
  ck_assert_ptr_eq(p, again); /* the program cache's */
  ic_program_release(again);
  char *want = NULL;
  OK(ic_program_dump(p, &want));
  ck_assert_msg(strstr(want, "launch ic_k0 grid") && strstr(want, ", n)"), "%s", want); /* a symbol param */
  int32_t arena_size = sym_arena_size(p->syms);
  enum { DUMPERS = 3 };
  dump_job dumps[DUMPERS];
  pthread_t t[DUMPERS + 1];
  run_job runner = {.p = p, .n = 11, .iterations = 30, .arena_size = arena_size};
  for (int i = 0; i < DUMPERS; i++) {
    dumps[i] = (dump_job){.p = p, .want = want, .arena_size = arena_size, .iterations = 200};
    ck_assert_int_eq(pthread_create(&t[i], NULL, dump_thread, &dumps[i]), 0);
  }
  ck_assert_int_eq(pthread_create(&t[DUMPERS], NULL, run_thread, &runner), 0);
  for (int i = 0; i <= DUMPERS; i++) ck_assert_int_eq(pthread_join(t[i], NULL), 0);
  for (int i = 0; i < DUMPERS; i++) {
    ck_assert_int_eq(dumps[i].mismatches, 0);
    ck_assert_int_eq(dumps[i].resized, 0);
  }
  check_job(&runner);
  ck_assert_int_eq(sym_arena_size(p->syms), arena_size);
  ic_string_free(want);
  ic_program_release(p);
  ic_graph_destroy(g);
}
END_TEST

/* Shapes near INT64_MAX are refused with a clear error, never wrapped: an input whose
 * element count overflows, one whose strides reach past 2^62 bytes, an output whose size
 * (a product of input dims) overflows, an input dim computed from a symbol that
 * overflows. */
START_TEST(test_run_refuses_overflowing_shapes) {
  static float cell[4];
  ic_compile_options o = {.struct_size = sizeof o, .backend = "ref"};
  ic_graph *g;
  OK(ic_graph_create(&g));
  ic_dim n = ic_graph_symbol(g, "n"), m;
  ic_value x = ic_graph_input(g, "x", IC_F32, 2, (ic_dim[]){n, 4}, IC_LAYOUT_STRIDED);
  OK(ic_graph_output(g, "y", ic_graph_binary(g, IC_OP_MUL, x, x)));
  ic_program *p;
  OK(ic_compile(ctx, g, &o, &p));
  const int64_t huge[2] = {INT64_MAX, 4}, small[2] = {2, 4}, wild[2] = {INT64_C(1) << 61, 1};
  ic_tensor in = {cell, IC_F32, 2, huge, NULL}, out = {NULL, IC_F32, 2, NULL, NULL};
  ck_assert_int_eq(ic_program_run(p, &in, 1, &out, 1, NULL), IC_ERR_INVALID_ARGUMENT);
  ck_assert_msg(strstr(ic_last_error(), "2^62 bytes") != NULL, "%s", ic_last_error());
  in = (ic_tensor){cell, IC_F32, 2, small, wild}; /* two rows, 2^63 bytes apart */
  ck_assert_int_eq(ic_program_run(p, &in, 1, &out, 1, NULL), IC_ERR_INVALID_ARGUMENT);
  ic_program_release(p);
  ic_graph_destroy(g);

  /* [n, 1] + [1, m]: inputs of 2^32 elements each, an output of 2^64 */
  OK(ic_graph_create(&g));
  n = ic_graph_symbol(g, "n");
  m = ic_graph_symbol(g, "m");
  ic_value a = ic_graph_input(g, "a", IC_F32, 2, (ic_dim[]){n, 1}, IC_LAYOUT_CONTIGUOUS);
  ic_value b = ic_graph_input(g, "b", IC_F32, 2, (ic_dim[]){1, m}, IC_LAYOUT_CONTIGUOUS);
  OK(ic_graph_output(g, "y", ic_graph_binary(g, IC_OP_ADD, a, b)));
  OK(ic_compile(ctx, g, &o, &p));
  const int64_t as[2] = {INT64_C(1) << 32, 1}, bs[2] = {1, INT64_C(1) << 32};
  ic_tensor ins[2] = {{cell, IC_F32, 2, as, NULL}, {cell, IC_F32, 2, bs, NULL}};
  ck_assert_int_eq(ic_program_run(p, ins, 2, &out, 1, NULL), IC_ERR_INVALID_ARGUMENT);
  ck_assert_msg(strstr(ic_last_error(), "output 0 'y'") != NULL, "%s", ic_last_error());
  ic_program_release(p);
  ic_graph_destroy(g);

  /* eager sum(a + b, 1): a small output, an overflowing temporary */
  OK(ic_graph_create(&g));
  n = ic_graph_symbol(g, "n");
  m = ic_graph_symbol(g, "m");
  a = ic_graph_input(g, "a", IC_F32, 2, (ic_dim[]){n, 1}, IC_LAYOUT_CONTIGUOUS);
  b = ic_graph_input(g, "b", IC_F32, 2, (ic_dim[]){1, m}, IC_LAYOUT_CONTIGUOUS);
  OK(ic_graph_output(g, "s", ic_graph_reduce(g, IC_REDUCE_SUM, ic_graph_binary(g, IC_OP_ADD, a, b), 1, (int32_t[]){1}, 0)));
  ic_compile_options eo = {.struct_size = sizeof eo, .backend = "ref", .mode = IC_MODE_EAGER};
  OK(ic_compile(ctx, g, &eo, &p));
  const int64_t sa[2] = {4, 1}, sb[2] = {1, INT64_C(1) << 59}; /* b: 2^61 bytes; a + b: 2^63 */
  ic_tensor tins[2] = {{cell, IC_F32, 2, sa, NULL}, {cell, IC_F32, 2, sb, NULL}};
  ic_tensor sums = {NULL, IC_F32, 1, NULL, NULL};
  ic_status ts = ic_program_run(p, tins, 2, &sums, 1, NULL);
  ck_assert_msg(ts == IC_ERR_INVALID_ARGUMENT && strstr(ic_last_error(), "temporary"), "%s: %s", ic_status_string(ts),
                ic_last_error());
  ic_program_release(p);
  ic_graph_destroy(g);

  /* an input dim 2 * n: n bound near INT64_MAX by the first input */
  OK(ic_graph_create(&g));
  n = ic_graph_symbol(g, "n");
  ic_value u = ic_graph_input(g, "u", IC_U8, 1, (ic_dim[]){n}, IC_LAYOUT_STRIDED);
  ic_value v = ic_graph_input(g, "v", IC_U8, 2, (ic_dim[]){2, n}, IC_LAYOUT_STRIDED);
  ic_value vr = ic_graph_reshape(g, v, 1, (ic_dim[]){IC_DIM_INFER});
  OK(ic_graph_output(g, "y", ic_graph_binary(g, IC_OP_ADD, ic_graph_concat(g, 2, (ic_value[]){u, u}, 0), vr)));
  OK(ic_compile(ctx, g, &o, &p));
  const int64_t us[1] = {INT64_MAX / 2 + 1}, vs[2] = {2, INT64_MAX / 2 + 1}, zero1[1] = {0}, zero2[2] = {0, 0};
  ic_tensor uv[2] = {{cell, IC_U8, 1, us, zero1}, {cell, IC_U8, 2, vs, zero2}};
  ic_status st = ic_program_run(p, uv, 2, &out, 1, NULL);
  ck_assert_msg(st == IC_ERR_INVALID_ARGUMENT, "%s: %s", ic_status_string(st), ic_last_error());
  ic_program_release(p);
  ic_graph_destroy(g);
}
END_TEST

int main(void) {
  Suite *s = suite_create("program");
  TCase *tc = check_tcase("program");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, test_memory_plan_reuses_slots);
  tcase_add_test(tc, test_step_walk);
  tcase_add_test(tc, test_step_walk_cuda);
  tcase_add_test(tc, test_run_on_small_stack);
  tcase_add_test(tc, test_run_stack_usage);
  tcase_add_test(tc, test_run_concurrent);
  tcase_add_test(tc, test_dump_cached_program_concurrently);
  tcase_add_test(tc, test_run_refuses_overflowing_shapes);
  suite_add_tcase(s, tc);
  return check_run_suite(s);
}
