/* CPU: matmul (issue 41) on the ref backend against plain C loops (tests/matmul_cases.h):
 * the documented bits for f32 (one fmaf a k, in order), f64 (fma) and i8 (exact i32),
 * the error bound for bf16 and f16 against f64; every dtype; 1-D forms, broadcast
 * batches, views and strided inputs, sizes of 0, 1 and primes from symbolic graphs;
 * fused epilogues and a dequantizing prologue, fused == eager bit for bit. Then fusion
 * on the cuda backend compile-only (sm_90a): linear + bias + GELU is one kernel, an MLP
 * (examples/graphs/mlp.icg too) two. */
#include "matmul_cases.h"

static void setup(void) {
  mm_backend = "ref";
  MM_OK(ic_context_create(NULL, &mm_e.ctx));
}

static void teardown(void) {
  ic_context_destroy(mm_e.ctx);
  mm_e.ctx = NULL;
}

static const ic_dtype all_dtypes[] = {IC_F32, IC_F64, IC_I8, IC_BF16, IC_F16};

/* {m, k, n}: 1s, odd and prime sizes, K past a chunk of 16 and not a multiple, and 0 in
 * each place. */
static const int64_t sizes_2d[][3] = {{1, 1, 1}, {7, 13, 1}, {1, 17, 7}, {13, 7, 17}, {17, 33, 13},
                                      {5, 129, 3}, {0, 5, 7}, {5, 0, 7}, {5, 7, 0}, {0, 0, 0}};

START_TEST(test_every_dtype_2d) {
  for (int i = 0; i < MM_COUNT(all_dtypes); i++) mm_case_2d(all_dtypes[i], sizes_2d, MM_COUNT(sizes_2d), 0);
}
END_TEST

START_TEST(test_vectors) {
  static const int64_t sizes[][3] = {{1, 1, 1}, {7, 13, 5}, {3, 129, 2}, {2, 0, 3}};
  for (int i = 0; i < MM_COUNT(all_dtypes); i++) mm_case_vectors(all_dtypes[i], sizes, MM_COUNT(sizes));
}
END_TEST

START_TEST(test_batched_broadcast) {
  static const int64_t sizes[][4] = {{1, 1, 1, 1}, {3, 7, 13, 5}, {2, 5, 17, 3}, {0, 3, 4, 5}, {2, 3, 0, 4}};
  static const ic_dtype dts[] = {IC_F32, IC_BF16, IC_I8, IC_F64};
  for (int i = 0; i < MM_COUNT(dts); i++) mm_case_batched(dts[i], sizes, MM_COUNT(sizes));
}
END_TEST

START_TEST(test_views_and_strides) {
  static const int64_t sizes[][3] = {{1, 1, 1}, {7, 13, 5}, {4, 17, 3}};
  static const ic_dtype dts[] = {IC_F32, IC_BF16, IC_I8};
  for (int i = 0; i < MM_COUNT(dts); i++) mm_case_views(dts[i], sizes, MM_COUNT(sizes));
}
END_TEST

START_TEST(test_epilogues_and_prologue) {
  static const int64_t sizes[][3] = {{1, 1, 1}, {7, 13, 5}, {5, 33, 17}, {0, 4, 3}, {3, 0, 4}};
  mm_case_epilogue(IC_F32, sizes, MM_COUNT(sizes));
  mm_case_epilogue(IC_BF16, sizes, MM_COUNT(sizes));
  mm_case_dequant(IC_BF16, sizes, MM_COUNT(sizes));
  mm_case_dequant(IC_F16, sizes, MM_COUNT(sizes));
}
END_TEST

/* The ref backend under IC_COMPILE_ALLOW_TF32 stays within the TF32 bound (it may
 * compute exactly). */
START_TEST(test_tf32_flag) {
  static const int64_t sizes[][3] = {{7, 13, 5}, {3, 129, 4}};
  mm_case_2d(IC_F32, sizes, MM_COUNT(sizes), IC_COMPILE_ALLOW_TF32);
}
END_TEST

/* ---------------------------------------------------------------- fusion (cuda, compile-only) */

static ic_context *compile_only_ctx(void) {
  ic_context_options o = {.struct_size = sizeof o, .arch = "sm_90a", .flags = IC_CONTEXT_COMPILE_ONLY};
  ic_context *ctx = NULL;
  MM_OK(ic_context_create(&o, &ctx));
  return ctx;
}

static int32_t kernels_of(ic_context *ctx, const ic_graph *g, ic_compile_mode mode) {
  const char *err = NULL;
  ck_assert_msg(ic_graph_error(g, &err) == IC_OK, "graph: %s", err ? err : "");
  ic_compile_options o = {.struct_size = sizeof o, .mode = mode, .flags = IC_COMPILE_STRICT};
  ic_program *p = NULL;
  MM_OK(ic_compile(ctx, g, &o, &p));
  int32_t launches = 0;
  for (int32_t i = 0; i < ic_program_step_count(p); i++) {
    ic_step s;
    MM_OK(ic_program_step(p, i, &s));
    launches += s.kind == IC_STEP_LAUNCH;
  }
  const int32_t n = ic_program_kernel_count(p);
  ck_assert_int_eq(launches, n); /* one launch a kernel: no hidden pass */
  ic_program_release(p);
  return n;
}

/* y = act(x [n, 1024] @ w [1024, 4096] + b), bf16: the first layer of an MLP. */
static ic_value linear(ic_graph *g, ic_value x, const char *w_name, const char *b_name, int64_t k, int64_t n_out) {
  ic_value w = ic_graph_input(g, w_name, IC_BF16, 2, (ic_dim[]){k, n_out}, IC_LAYOUT_CONTIGUOUS);
  ic_value b = ic_graph_input(g, b_name, IC_BF16, 1, (ic_dim[]){n_out}, IC_LAYOUT_CONTIGUOUS);
  return ic_graph_binary(g, IC_OP_ADD, ic_graph_matmul(g, x, w), b);
}

START_TEST(test_fusion_counts) {
  ic_context *ctx = compile_only_ctx();
  /* linear + bias + GELU: one kernel fused, three eager (matmul, add, gelu) */
  ic_graph *g;
  MM_OK(ic_graph_create(&g));
  ic_dim n = ic_graph_symbol(g, "n");
  ic_value x = ic_graph_input(g, "x", IC_BF16, 2, (ic_dim[]){n, 1024}, IC_LAYOUT_CONTIGUOUS);
  ic_value h = ic_graph_unary(g, IC_OP_GELU_TANH, linear(g, x, "w1", "b1", 1024, 4096));
  MM_OK(ic_graph_output(g, "h", h));
  ck_assert_int_eq(kernels_of(ctx, g, IC_MODE_FUSED), 1);
  ck_assert_int_eq(kernels_of(ctx, g, IC_MODE_EAGER), 3);
  ic_graph_destroy(g);

  /* the MLP: linear + bias + GELU + linear + bias, two kernels */
  MM_OK(ic_graph_create(&g));
  n = ic_graph_symbol(g, "n");
  x = ic_graph_input(g, "x", IC_BF16, 2, (ic_dim[]){n, 1024}, IC_LAYOUT_CONTIGUOUS);
  h = ic_graph_unary(g, IC_OP_GELU_TANH, linear(g, x, "w1", "b1", 1024, 4096));
  MM_OK(ic_graph_output(g, "y", linear(g, h, "w2", "b2", 4096, 1024)));
  ck_assert_int_eq(kernels_of(ctx, g, IC_MODE_FUSED), 2);
  ic_graph_destroy(g);

  /* the dequantizing prologue: cast(w i8) * s [n] in the matmul's kernel */
  MM_OK(ic_graph_create(&g));
  n = ic_graph_symbol(g, "n");
  x = ic_graph_input(g, "x", IC_BF16, 2, (ic_dim[]){n, 4096}, IC_LAYOUT_CONTIGUOUS);
  ic_value wq = ic_graph_input(g, "wq", IC_I8, 2, (ic_dim[]){4096, 4096}, IC_LAYOUT_CONTIGUOUS);
  ic_value s = ic_graph_input(g, "s", IC_BF16, 1, (ic_dim[]){4096}, IC_LAYOUT_CONTIGUOUS);
  MM_OK(ic_graph_output(g, "y", ic_graph_matmul(g, x, ic_graph_binary(g, IC_OP_MUL, ic_graph_cast(g, wq, IC_BF16), s))));
  ck_assert_int_eq(kernels_of(ctx, g, IC_MODE_FUSED), 1);
  ic_graph_destroy(g);

  /* examples/graphs/mlp.icg, as the ic tool compiles it */
  FILE *f = fopen(IC_SOURCE_DIR "/examples/graphs/mlp.icg", "rb");
  ck_assert_ptr_nonnull(f);
  char text[4096];
  size_t len = fread(text, 1, sizeof text - 1, f);
  fclose(f);
  text[len] = '\0';
  MM_OK(ic_graph_parse(text, &g));
  ck_assert_int_eq(kernels_of(ctx, g, IC_MODE_FUSED), 2);
  ic_graph_destroy(g);
  ic_context_destroy(ctx);
}
END_TEST

/* Operands no tensor-core load reads in place get a copy kernel the dump explains; those
 * it reads in place (a transposed bf16 weight) get none. */
static void expect_copies(ic_context *ctx, const char *text, int32_t kernels, const char *note) {
  ic_graph *g;
  MM_OK(ic_graph_parse(text, &g));
  ck_assert_int_eq(kernels_of(ctx, g, IC_MODE_FUSED), kernels);
  ic_compile_options o = {.struct_size = sizeof o, .flags = IC_COMPILE_STRICT};
  ic_program *p = NULL;
  MM_OK(ic_compile(ctx, g, &o, &p));
  char *dump = NULL;
  MM_OK(ic_program_dump(p, &dump));
  if (note) ck_assert_msg(strstr(dump, note) != NULL, "no '%s' in:\n%s", note, dump);
  else ck_assert_msg(strstr(dump, "note: a copy of matmul") == NULL, "a copy planned:\n%s", dump);
  ic_string_free(dump);
  ic_program_release(p);
  ic_graph_destroy(g);
}

START_TEST(test_planned_copies) {
  ic_context *ctx = compile_only_ctx();
  /* bf16 b stored [K, N] or [N, K] (transposed): read in place */
  expect_copies(ctx, "symbol n\ninput x : bf16[n, 64]\ninput w : bf16[64, 96]\ny = matmul(x, w)\noutput y\n", 1, NULL);
  expect_copies(ctx,
                "symbol n\ninput x : bf16[n, 64]\ninput w : bf16[96, 64]\nt = permute(w, [1, 0])\ny = matmul(x, t)\noutput y\n",
                1, NULL);
  /* every other row and column of a: neither contiguous */
  expect_copies(ctx,
                "input x : bf16[64, 128]\ninput w : bf16[64, 96]\nr = slice(x, 0, 0, 64, 2)\n"
                "a = slice(r, 1, 0, 128, 2)\ny = matmul(a, w)\noutput y\n",
                2, "note: a copy of matmul operand a: neither its rows nor its columns are contiguous");
  /* i8: b [K, N] goes to K-major order; a transposed a too */
  expect_copies(ctx, "symbol n\ninput x : i8[n, 64]\ninput w : i8[64, 96]\ny = matmul(x, w)\noutput y\n", 2,
                "note: a copy of matmul operand b, transposed");
  expect_copies(ctx,
                "symbol n\ninput x : i8[64, n]\ninput w : i8[96, 64]\na = permute(x, [1, 0])\nb = permute(w, [1, 0])\n"
                "y = matmul(a, b)\noutput y\n",
                2, "note: a copy of matmul operand a with its rows contiguous");
  ic_context_destroy(ctx);
}
END_TEST

/* Runs text (inputs a and b, output c) on ref in mode over host data; c's bytes to out. */
static void run_text(const char *text, ic_compile_mode mode, const ic_tensor *in, int32_t nin, ic_tensor *out) {
  ic_graph *g;
  MM_OK(ic_graph_parse(text, &g));
  ic_compile_options o = {.struct_size = sizeof o, .mode = mode, .backend = "ref", .flags = IC_COMPILE_STRICT};
  ic_program *p = NULL;
  MM_OK(ic_compile(mm_e.ctx, g, &o, &p));
  MM_OK(ic_program_run(p, in, nin, out, 1, NULL));
  ic_program_release(p);
  ic_graph_destroy(g);
}

/* A NaN that reaches a matmul's result comes out as the canonical NaN, as GPU arithmetic
 * gives it (fma would keep an input's payload); and a bf16 max or min row holds bf16's
 * canonical NaN whether it is stored and reloaded (eager) or read in its kernel (fused). */
START_TEST(test_nan_bits) {
  const uint32_t payload = 0x7fc01234u;
  float a[4], b[4] = {1, 2, 3, 4}, c[4];
  memcpy(&a[0], &payload, 4);
  a[1] = a[2] = a[3] = 1;
  const int64_t sa[2] = {2, 2}, sb[2] = {2, 2};
  const ic_tensor in[2] = {{a, IC_F32, 2, sa, NULL}, {b, IC_F32, 2, sb, NULL}};
  for (int mode = 0; mode < 2; mode++) {
    memset(c, 0, sizeof c);
    ic_tensor out = {c, IC_F32, 2, sa, NULL};
    run_text("input a : f32[2, 2]\ninput b : f32[2, 2]\nc = matmul(a, b)\noutput c\n",
             mode ? IC_MODE_EAGER : IC_MODE_FUSED, in, 2, &out);
    uint32_t bits;
    memcpy(&bits, &c[0], 4);
    ck_assert_msg(bits == 0x7fffffffu, "mode %d: c[0, 0] bits 0x%08x, not the canonical NaN", mode, bits);
  }
  const uint16_t x = 0x7fc1; /* a bf16 NaN with a payload */
  const int64_t sx[2] = {1, 1}, sc[1] = {1};
  const ic_tensor xin = {(void *)&x, IC_BF16, 2, sx, NULL};
  uint64_t got[2];
  for (int mode = 0; mode < 2; mode++) {
    ic_tensor out = {&got[mode], IC_F64, 1, sc, NULL};
    run_text("input a : bf16[1, 1]\nm = min(a, [0])\nc = cast(m, f64)\noutput c\n", mode ? IC_MODE_EAGER : IC_MODE_FUSED,
             &xin, 1, &out);
  }
  ck_assert_msg(got[0] == got[1], "bf16 min of a NaN: fused 0x%016llx, eager 0x%016llx", (unsigned long long)got[0],
                (unsigned long long)got[1]);
}
END_TEST

/* The text format: matmul(a, b) parses, prints back as written, and builds the node
 * ic_graph_matmul builds (the same result shape). */
START_TEST(test_text_format) {
  const char *text = "symbol n\ninput a : f32[n, 8]\ninput b : f32[8, 3]\nc = matmul(a, b)\noutput c\n";
  ic_graph *g;
  MM_OK(ic_graph_parse(text, &g));
  char *printed = NULL;
  MM_OK(ic_graph_print(g, &printed));
  ck_assert_ptr_nonnull(strstr(printed, "c = matmul(a, b)"));
  ic_graph *g2;
  MM_OK(ic_graph_parse(printed, &g2));
  char *again = NULL;
  MM_OK(ic_graph_print(g2, &again));
  ck_assert_str_eq(printed, again);
  ic_string_free(printed);
  ic_string_free(again);
  ic_graph_destroy(g2);
  ic_graph_destroy(g);
}
END_TEST

int main(int argc, char **argv) {
  (void)argc;
  (void)argv;
  Suite *s = suite_create("test_matmul_ref");
  CHECK_CASE(s, test_every_dtype_2d, setup, teardown);
  CHECK_CASE(s, test_planned_copies, setup, teardown);
  CHECK_CASE(s, test_nan_bits, setup, teardown);
  CHECK_CASE(s, test_vectors, setup, teardown);
  CHECK_CASE(s, test_batched_broadcast, setup, teardown);
  CHECK_CASE(s, test_views_and_strides, setup, teardown);
  CHECK_CASE(s, test_epilogues_and_prologue, setup, teardown);
  CHECK_CASE(s, test_tf32_flag, setup, teardown);
  CHECK_CASE(s, test_fusion_counts, NULL, NULL);
  CHECK_CASE(s, test_text_format, NULL, NULL);
  return check_run_suite(s);
}
