/* Every fixed limit refuses with its number in the message (README, "Guarantees"):
 * inputs, symbols and outputs of a graph, dims of a tensor, nesting of a dim expression,
 * inline_asm operands and pack, DLPack ranks, and the bytes a run may span. */
#include <check.h>
#include <dlpack/dlpack.h>
#include <stdio.h>
#include <string.h>

#include "check_main.h"
#include "ic/ic.h"
#include "ic/ic_dlpack.h"

#define OK(call) ck_assert_msg((call) == IC_OK, "%s: %s", #call, ic_last_error())

/* The message (ic_last_error or a graph's) must hold `number`. */
#define SAYS(msg, number)                                                                  \
  do {                                                                                     \
    const char *m_ = (msg);                                                                \
    ck_assert_msg(m_ && strstr(m_, number), "the message does not say %s: %s", number, m_); \
  } while (0)

static ic_context *ref_context(void) {
  ic_context *ctx = NULL;
  ic_context_options o = {.struct_size = sizeof o, .flags = IC_CONTEXT_NO_DISK_CACHE};
  OK(ic_context_create(&o, &ctx));
  return ctx;
}

/* Compiles g on ref and returns the status; the message is ic_last_error(). */
static ic_status compile_ref(ic_graph *g) {
  ic_context *ctx = ref_context();
  ic_compile_options co = {.struct_size = sizeof co, .backend = "ref"};
  ic_program *p = NULL;
  ic_status s = ic_compile(ctx, g, &co, &p);
  ic_program_release(p);
  ic_context_destroy(ctx);
  return s;
}

START_TEST(test_graph_counts) {
  /* 129 inputs (limit 128) */
  ic_graph *g = NULL;
  OK(ic_graph_create(&g));
  ic_dim one = 1;
  ic_value acc = IC_INVALID_VALUE;
  for (int i = 0; i < 129; i++) {
    char name[16];
    snprintf(name, sizeof name, "x%d", i);
    ic_value x = ic_graph_input(g, name, IC_F32, 1, &one, IC_LAYOUT_CONTIGUOUS);
    acc = i ? ic_graph_binary(g, IC_OP_ADD, acc, x) : x;
  }
  OK(ic_graph_output(g, "y", acc));
  ck_assert_int_eq(compile_ref(g), IC_ERR_UNSUPPORTED);
  SAYS(ic_last_error(), "129 inputs");
  SAYS(ic_last_error(), "at most 128");
  ic_graph_destroy(g);

  /* 65 symbols (limit 64) */
  OK(ic_graph_create(&g));
  ic_dim dims[1];
  acc = IC_INVALID_VALUE;
  for (int i = 0; i < 65; i++) {
    char name[16];
    snprintf(name, sizeof name, "n%d", i);
    dims[0] = ic_graph_symbol(g, name);
    snprintf(name, sizeof name, "x%d", i);
    ic_value x = ic_graph_input(g, name, IC_F32, 1, dims, IC_LAYOUT_CONTIGUOUS);
    char out[16];
    snprintf(out, sizeof out, "y%d", i);
    OK(ic_graph_output(g, out, x));
  }
  ck_assert_int_eq(compile_ref(g), IC_ERR_UNSUPPORTED);
  SAYS(ic_last_error(), "65 symbols");
  SAYS(ic_last_error(), "64");
  ic_graph_destroy(g);

  /* 129 outputs (limit 128) */
  OK(ic_graph_create(&g));
  ic_value x = ic_graph_input(g, "x", IC_F32, 1, &one, IC_LAYOUT_CONTIGUOUS);
  for (int i = 0; i < 129; i++) {
    char out[16];
    snprintf(out, sizeof out, "y%d", i);
    OK(ic_graph_output(g, out, ic_graph_binary(g, IC_OP_ADD, x, ic_graph_constant(g, i, IC_DTYPE_AUTO))));
  }
  ck_assert_int_eq(compile_ref(g), IC_ERR_UNSUPPORTED);
  SAYS(ic_last_error(), "129");
  SAYS(ic_last_error(), "128");
  ic_graph_destroy(g);
}
END_TEST

START_TEST(test_dims_and_nesting) {
  ic_graph *g = NULL;
  OK(ic_graph_create(&g));
  ic_dim dims[IC_MAX_DIMS + 1];
  for (int i = 0; i <= IC_MAX_DIMS; i++) dims[i] = 1;
  ck_assert_int_eq(ic_graph_input(g, "x", IC_F32, IC_MAX_DIMS + 1, dims, IC_LAYOUT_CONTIGUOUS), IC_INVALID_VALUE);
  const char *msg = NULL;
  ck_assert_int_ne(ic_graph_error(g, &msg), IC_OK);
  SAYS(msg, "0..8");
  ic_graph_destroy(g);

  OK(ic_graph_create(&g));
  ic_value x = ic_graph_input(g, "x", IC_F32, IC_MAX_DIMS, dims, IC_LAYOUT_CONTIGUOUS);
  ck_assert_int_eq(ic_graph_unsqueeze(g, x, 0), IC_INVALID_VALUE);
  ic_graph_error(g, &msg);
  SAYS(msg, "8 dims");
  ic_graph_destroy(g);

  /* a dim expression nested 65 deep (limit 64) */
  char text[512] = "symbol n\ninput x : f32[";
  for (int i = 0; i < 70; i++) strcat(text, "(");
  strcat(text, "n");
  for (int i = 0; i < 70; i++) strcat(text, ")");
  strcat(text, "]\noutput x\n");
  ck_assert_int_eq(ic_graph_parse(text, &g), IC_ERR_INVALID_GRAPH);
  SAYS(ic_last_error(), "at most 64");

  /* constant dims whose product passes INT64_MAX (the size arithmetic would wrap: a
   * reshape then inferred a negative dim; found by fuzz_text, kept in its corpus), from
   * the builder, from the text, and from an op's broadcast result */
  OK(ic_graph_create(&g));
  ck_assert_int_eq(ic_graph_input(g, "x", IC_BF16, 3, (ic_dim[]){INT64_C(9999999999999990), INT64_C(899999999990), 8},
                                  IC_LAYOUT_CONTIGUOUS),
                   IC_INVALID_VALUE);
  ic_graph_error(g, &msg);
  SAYS(msg, "more than INT64_MAX elements");
  ic_graph_destroy(g);
  ck_assert_int_eq(ic_graph_parse("symbol n\ninput x : bf16[n, 9999999999999990, 899999999990, 8]\n"
                                  "big = reshape(x, [n, ?])\noutput big\n",
                                  &g),
                   IC_ERR_INVALID_GRAPH);
  SAYS(ic_last_error(), "more than INT64_MAX elements");
  OK(ic_graph_create(&g));
  ic_value a = ic_graph_input(g, "a", IC_F32, 2, (ic_dim[]){INT64_C(4294967296), 1}, IC_LAYOUT_CONTIGUOUS);
  ic_value b = ic_graph_input(g, "b", IC_F32, 2, (ic_dim[]){1, INT64_C(4294967296)}, IC_LAYOUT_CONTIGUOUS);
  ck_assert_int_ne(a, IC_INVALID_VALUE);
  ck_assert_int_ne(b, IC_INVALID_VALUE);
  ck_assert_int_eq(ic_graph_binary(g, IC_OP_ADD, a, b), IC_INVALID_VALUE);
  ic_graph_error(g, &msg);
  SAYS(msg, "more than INT64_MAX elements");
  ic_graph_destroy(g);

  /* DLPack: 9 dims */
  int64_t shape[IC_MAX_DIMS + 1] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
  float v = 0;
  DLTensor t = {.data = &v, .device = {kDLCPU, 0}, .ndim = IC_MAX_DIMS + 1, .dtype = {kDLFloat, 32, 1}, .shape = shape};
  ic_tensor it;
  ck_assert_int_eq(ic_tensor_from_dlpack(&t, &it), IC_ERR_UNSUPPORTED);
  SAYS(ic_last_error(), "0 to 8");
}
END_TEST

START_TEST(test_inline_asm_limits) {
  ic_graph *g = NULL;
  OK(ic_graph_create(&g));
  ic_dim one = 4;
  ic_value x = ic_graph_input(g, "x", IC_F32, 1, &one, IC_LAYOUT_CONTIGUOUS);
  ic_value ins[IC_ASM_MAX_OPERANDS + 1], outs[IC_ASM_MAX_OPERANDS + 1];
  for (int i = 0; i <= IC_ASM_MAX_OPERANDS; i++) ins[i] = x;
  ic_dtype dt[IC_ASM_MAX_OPERANDS + 1];
  for (int i = 0; i <= IC_ASM_MAX_OPERANDS; i++) dt[i] = IC_F32;
  ic_inline_asm_desc d = {.struct_size = sizeof d, .asm_text = "mov.b32 $0, $1;", .constraints = "=f,f",
                          .output_dtypes = dt, .is_pure = 1, .pack = 1};
  ck_assert_int_ne(ic_graph_inline_asm(g, &d, IC_ASM_MAX_OPERANDS + 1, ins, 1, outs), IC_OK);
  const char *msg = NULL;
  ic_graph_error(g, &msg);
  SAYS(msg, "8");
  ic_graph_destroy(g);

  OK(ic_graph_create(&g));
  x = ic_graph_input(g, "x", IC_F32, 1, &one, IC_LAYOUT_CONTIGUOUS);
  d.pack = 32;
  ck_assert_int_ne(ic_graph_inline_asm(g, &d, 1, &x, 1, outs), IC_OK);
  ic_graph_error(g, &msg);
  SAYS(msg, "16");
  ic_graph_destroy(g);
}
END_TEST

START_TEST(test_run_bytes) {
  ic_graph *g = NULL;
  ic_dim dims[2];
  OK(ic_graph_create(&g));
  dims[0] = ic_graph_symbol(g, "n");
  dims[1] = 4;
  ic_value x = ic_graph_input(g, "x", IC_F32, 2, dims, IC_LAYOUT_CONTIGUOUS);
  OK(ic_graph_output(g, "y", ic_graph_binary(g, IC_OP_MUL, x, x)));
  ic_context *ctx = ref_context();
  ic_compile_options co = {.struct_size = sizeof co, .backend = "ref"};
  ic_program *p = NULL;
  OK(ic_compile(ctx, g, &co, &p));
  float v[4] = {0};
  int64_t shape[2] = {INT64_MAX / 8, 4};
  ic_tensor in = {v, IC_F32, 2, shape, NULL}, out = {NULL, IC_F32, 2, NULL, NULL};
  ck_assert_int_eq(ic_program_run(p, &in, 1, &out, 1, NULL), IC_ERR_INVALID_ARGUMENT);
  SAYS(ic_last_error(), "2^62 bytes");
  ck_assert_ptr_null(out.data);
  ic_program_release(p);
  ic_graph_destroy(g);
  ic_context_destroy(ctx);
}
END_TEST

int main(int argc, char **argv) {
  Suite *s = suite_create("limits");
  CHECK_CASE(s, test_graph_counts, NULL, NULL);
  CHECK_CASE(s, test_dims_and_nesting, NULL, NULL);
  CHECK_CASE(s, test_inline_asm_limits, NULL, NULL);
  CHECK_CASE(s, test_run_bytes, NULL, NULL);
  if (check_list_cases(argc, argv, s)) return 0;
  return check_run_suite(s);
}
