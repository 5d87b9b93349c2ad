/* CPU: the program (wrapper) IR: memory planning (slot reuse), the text dump, the step
 * walk, expression evaluation, and a run on the ref backend that proves the plan. */
#include <check.h>
#include <ic/ic.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"

#define OK(call) ck_assert_msg((call) == IC_OK, "%s: %s", #call, ic_last_error())

static ic_context *ctx;

static void setup(void) {
  ic_context_options o = {.struct_size = sizeof o, .arch = "sm_90a", .flags = IC_CONTEXT_COMPILE_ONLY};
  OK(ic_context_create(&o, &ctx));
}

static void teardown(void) { ic_context_destroy(ctx); }

/* d = sqrt(permute(exp(permute(neg(permute(relu(x))))))) over x [n, n]: every permute
 * reads a computed value, so a, b, c are temporaries of the same size [n, n]. */
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
  ic_compile_options o = {.struct_size = sizeof o, .backend = "ref"};
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
  ck_assert_msg(strstr(dump, "kernel ic_k3 [n, n]") != NULL, "%s", dump);
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
      ck_assert_int_eq(blocks, (n * n + st.block - 1) / st.block);
      /* args: the buffers it reads and writes, then the symbol n */
      ck_assert_int_eq(st.nargs, 3);
      ck_assert_int_eq(st.args[0].kind, IC_ARG_BUFFER);
      ck_assert_int_eq(st.args[2].kind, IC_ARG_SYMBOL);
      ck_assert_int_eq(st.args[2].index, 0);
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
    ck_assert_int_eq(st.block, 128);
  }
  ck_assert_int_eq(launches, 4);
  ic_program_release(p);
  ic_graph_destroy(g);
}
END_TEST

int main(void) {
  Suite *s = suite_create("program");
  TCase *tc = tcase_create("program");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_memory_plan_reuses_slots);
  tcase_add_test(tc, test_step_walk);
  tcase_add_test(tc, test_step_walk_cuda);
  suite_add_tcase(s, tc);
  return check_run_suite(s);
}
