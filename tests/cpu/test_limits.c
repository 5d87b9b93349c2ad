/* Every fixed limit refuses with its number in the message (README, "Guarantees"):
 * inputs, symbols and outputs of a graph, dims of a tensor, nesting of a dim expression,
 * inline_asm operands and pack, DLPack ranks, and the bytes a run may span. And sizes
 * never wrap: hostile shapes (sums and pads past INT64_MAX, byte counts, symbols bound to
 * huge values, caller tensors with NULL or short shapes, DLPack byte offsets) are refused
 * with what overflowed, and the largest sizes that fit work. */
#include <check.h>
#include <dlpack/dlpack.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
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

/* ---------------------------------------------------------------- sizes that never wrap */

#define P61 (INT64_C(1) << 61)
#define P62 (INT64_C(1) << 62)

/* The graph's error message, after a builder call that must have failed. */
static const char *graph_message(ic_graph *g) {
  const char *msg = NULL;
  ck_assert_int_ne(ic_graph_error(g, &msg), IC_OK);
  return msg;
}

static ic_value input1(ic_graph *g, const char *name, ic_dtype dt, ic_dim d) {
  ic_value v = ic_graph_input(g, name, dt, 1, &d, IC_LAYOUT_CONTIGUOUS);
  ck_assert_msg(v != IC_INVALID_VALUE, "input %s: %s", name, ic_last_error());
  return v;
}

/* dim 0 of v, a constant */
static int64_t dim0(ic_graph *g, ic_value v) {
  ic_dim d[IC_MAX_DIMS];
  OK(ic_graph_value_dims(g, v, d));
  return d[0];
}

/* Sums of constant sizes (concat, pad) that pass INT64_MAX are refused when built, with
 * the op and the sizes in the message; the largest sums that fit are built exactly. */
START_TEST(test_sums_refused_when_built) {
  ic_graph *g = NULL;
  OK(ic_graph_create(&g));
  ic_value a = input1(g, "a", IC_U8, P62), b = input1(g, "b", IC_U8, P62);
  ck_assert_int_eq(ic_graph_concat(g, 2, (ic_value[]){a, b}, 0), IC_INVALID_VALUE);
  const char *msg = graph_message(g);
  SAYS(msg, "concat");
  SAYS(msg, "4611686018427387904 + 4611686018427387904");
  SAYS(msg, "INT64_MAX");
  ck_assert_int_eq(ic_graph_output(g, "a", a), IC_ERR_INVALID_GRAPH);
  ck_assert_int_eq(compile_ref(g), IC_ERR_INVALID_GRAPH); /* the graph holds the error */
  ic_graph_destroy(g);

  /* INT64_MAX - 1 + 1 fits exactly, one more does not; three parts whose partial sum fits */
  OK(ic_graph_create(&g));
  ic_value big = input1(g, "big", IC_U8, INT64_MAX - 1), one = input1(g, "one", IC_U8, 1);
  ic_value two = input1(g, "two", IC_U8, 2), third = input1(g, "third", IC_U8, INT64_MAX / 3);
  ic_value c = ic_graph_concat(g, 2, (ic_value[]){big, one}, 0);
  ck_assert_int_ne(c, IC_INVALID_VALUE);
  ck_assert_int_eq(dim0(g, c), INT64_MAX);
  ic_value t3 = ic_graph_concat(g, 3, (ic_value[]){third, third, third}, 0);
  ck_assert_int_ne(t3, IC_INVALID_VALUE);
  ck_assert_int_eq(dim0(g, t3), INT64_MAX / 3 * 3);
  OK(ic_graph_error(g, NULL));
  ck_assert_int_eq(ic_graph_concat(g, 2, (ic_value[]){big, two}, 0), IC_INVALID_VALUE);
  SAYS(graph_message(g), "9223372036854775806 + 2");
  ic_graph_destroy(g);

  /* a symbolic sum whose constants alone pass INT64_MAX: n + 2^62 + 2^62 */
  OK(ic_graph_create(&g));
  ic_value x = input1(g, "x", IC_U8, ic_graph_symbol(g, "n"));
  a = input1(g, "a", IC_U8, P62);
  ck_assert_int_eq(ic_graph_concat(g, 3, (ic_value[]){x, a, a}, 0), IC_INVALID_VALUE);
  SAYS(graph_message(g), "n + 4611686018427387904 + 4611686018427387904");
  ic_graph_destroy(g);

  /* pad: [INT64_MAX - 5] by 2^61 - 1 (the case), by 6 (one past), by 5 (exact) */
  OK(ic_graph_create(&g));
  x = input1(g, "x", IC_U8, INT64_MAX - 5);
  ic_value p5 = ic_graph_pad(g, x, 1, (int64_t[]){0, 5}, 0);
  ck_assert_int_ne(p5, IC_INVALID_VALUE);
  ck_assert_int_eq(dim0(g, p5), INT64_MAX);
  ic_value crop = ic_graph_pad(g, x, 1, (int64_t[]){-P61, 1}, 0); /* a crop and a pad */
  ck_assert_int_ne(crop, IC_INVALID_VALUE);
  ck_assert_int_eq(dim0(g, crop), INT64_MAX - 5 - P61 + 1);
  ck_assert_int_eq(ic_graph_pad(g, x, 1, (int64_t[]){3, 3}, 0), IC_INVALID_VALUE);
  msg = graph_message(g);
  SAYS(msg, "pad: dim 0 of size [9223372036854775802] padded by 3 and 3");
  SAYS(msg, "overflows");
  ic_graph_destroy(g);
  OK(ic_graph_create(&g));
  x = input1(g, "x", IC_U8, INT64_MAX - 5);
  ck_assert_int_eq(ic_graph_pad(g, x, 1, (int64_t[]){P61 - 1, 0}, 0), IC_INVALID_VALUE);
  SAYS(graph_message(g), "overflows");
  ic_graph_destroy(g);

  /* a symbolic size whose constant part is INT64_MAX: n + INT64_MAX builds (it fits
   * for n = 0), one more does not */
  OK(ic_graph_create(&g));
  x = input1(g, "x", IC_U8, ic_graph_symbol(g, "n"));
  c = ic_graph_concat(g, 2, (ic_value[]){x, input1(g, "big", IC_U8, INT64_MAX)}, 0);
  ck_assert_int_ne(c, IC_INVALID_VALUE);
  ck_assert_int_eq(ic_graph_pad(g, c, 1, (int64_t[]){0, 1}, 0), IC_INVALID_VALUE);
  msg = graph_message(g);
  SAYS(msg, "pad: dim 0 of size [n + 9223372036854775807] padded by 0 and 1");
  SAYS(msg, "overflows 64-bit integers");
  ic_graph_destroy(g);
}
END_TEST

/* Pad amounts: -2^61 to 2^61, both ends inclusive (ic.h, limits.h). */
START_TEST(test_pad_amount_bounds) {
  static const int64_t accepted[] = {P61, -P61, P61 - 1, -(P61 - 1)};
  for (size_t i = 0; i < sizeof accepted / sizeof *accepted; i++) {
    ic_graph *g = NULL;
    OK(ic_graph_create(&g));
    ic_value x = input1(g, "x", IC_U8, P61); /* a crop of -2^61 takes all of it */
    ic_value y = ic_graph_pad(g, x, 1, (int64_t[]){accepted[i], accepted[i] < 0 ? 0 : accepted[i]}, 0);
    ck_assert_msg(y != IC_INVALID_VALUE, "pad by %lld: %s", (long long)accepted[i], ic_last_error());
    ck_assert_int_eq(dim0(g, y), P61 + (accepted[i] < 0 ? accepted[i] : 2 * accepted[i]));
    ic_value s = input1(g, "s", IC_U8, ic_graph_symbol(g, "n")); /* a symbolic dim takes amounts >= 0 */
    if (accepted[i] > 0) ck_assert_int_ne(ic_graph_pad(g, s, 1, (int64_t[]){accepted[i], accepted[i]}, 0), IC_INVALID_VALUE);
    OK(ic_graph_error(g, NULL));
    ic_graph_destroy(g);
  }
  static const int64_t refused[] = {P61 + 1, -(P61 + 1), INT64_MAX, INT64_MIN};
  for (size_t i = 0; i < sizeof refused / sizeof *refused; i++) {
    for (int side = 0; side < 2; side++) {
      ic_graph *g = NULL;
      OK(ic_graph_create(&g));
      ic_value x = input1(g, "x", IC_U8, INT64_MAX);
      int64_t lo_hi[2] = {0, 0};
      lo_hi[side] = refused[i];
      ck_assert_int_eq(ic_graph_pad(g, x, 1, lo_hi, 0), IC_INVALID_VALUE);
      const char *msg = graph_message(g);
      SAYS(msg, "out of range");
      SAYS(msg, "2^61");
      ic_graph_destroy(g);
    }
  }
}
END_TEST

/* Values past INT64_MAX bytes (the program's byte counts would wrap), views of the
 * largest sizes, and dim expressions of the text format that overflow. */
START_TEST(test_bytes_and_views_when_built) {
  ic_graph *g = NULL;
  OK(ic_graph_create(&g));
  ck_assert_int_ne(ic_graph_input(g, "u", IC_U8, 1, (ic_dim[]){INT64_MAX}, IC_LAYOUT_CONTIGUOUS), IC_INVALID_VALUE);
  ck_assert_int_ne(ic_graph_input(g, "f", IC_F32, 1, (ic_dim[]){INT64_MAX / 4}, IC_LAYOUT_CONTIGUOUS), IC_INVALID_VALUE);
  OK(ic_graph_error(g, NULL));
  ck_assert_int_eq(ic_graph_input(g, "w", IC_F32, 1, (ic_dim[]){P61}, IC_LAYOUT_CONTIGUOUS), IC_INVALID_VALUE);
  const char *msg = graph_message(g);
  SAYS(msg, "f32[2305843009213693952]");
  SAYS(msg, "INT64_MAX bytes");
  ic_graph_destroy(g);

  /* i64[n, 2^60]: 2^63 bytes for every n, a coefficient that would wrap */
  OK(ic_graph_create(&g));
  ic_dim n = ic_graph_symbol(g, "n");
  ck_assert_int_eq(ic_graph_input(g, "x", IC_I64, 2, (ic_dim[]){n, INT64_C(1) << 60}, IC_LAYOUT_CONTIGUOUS),
                   IC_INVALID_VALUE);
  SAYS(graph_message(g), "INT64_MAX bytes");
  ic_graph_destroy(g);

  /* expand, cast and slice at the largest sizes; past them, refused */
  OK(ic_graph_create(&g));
  ic_value one = input1(g, "one", IC_U8, 1);
  ic_value e = ic_graph_expand(g, one, 1, (ic_dim[]){INT64_MAX});
  ck_assert_int_ne(e, IC_INVALID_VALUE);
  ic_value s = ic_graph_slice(g, e, 0, INT64_MIN + 1, INT64_MAX - 1, 1);
  ck_assert_int_ne(s, IC_INVALID_VALUE);
  ck_assert_int_eq(dim0(g, s), INT64_MAX - 1);
  s = ic_graph_slice(g, e, 0, 0, INT64_MAX, INT64_MAX);
  ck_assert_int_eq(dim0(g, s), 1);
  s = ic_graph_slice(g, e, 0, INT64_MAX, INT64_MIN, -2);
  ck_assert_int_eq(dim0(g, s), INT64_MAX / 2 + 1);
  OK(ic_graph_error(g, NULL));
  ck_assert_int_eq(ic_graph_cast(g, e, IC_I16), IC_INVALID_VALUE);
  SAYS(graph_message(g), "cast");
  ic_graph_destroy(g);
  OK(ic_graph_create(&g));
  one = input1(g, "one", IC_U8, 1);
  ck_assert_int_eq(ic_graph_expand(g, one, 2, (ic_dim[]){P62, 4}), IC_INVALID_VALUE);
  SAYS(graph_message(g), "INT64_MAX elements");
  ic_graph_destroy(g);

  /* the text format: the same checks, and dim expressions whose constants wrap */
  ck_assert_int_eq(ic_graph_parse("input a : u8[4611686018427387904]\ninput b : u8[4611686018427387904]\n"
                                  "c = concat([a, b], 0)\noutput c\n",
                                  &g),
                   IC_ERR_INVALID_GRAPH);
  SAYS(ic_last_error(), "add up past INT64_MAX");
  ck_assert_int_eq(ic_graph_parse("input x : u8[9223372036854775802]\np = pad(x, [0, 2305843009213693951], 0)\noutput p\n", &g),
                   IC_ERR_INVALID_GRAPH);
  SAYS(ic_last_error(), "overflows");
  ck_assert_int_eq(ic_graph_parse("input x : u8[4]\np = pad(x, [0, 2305843009213693953], 0)\noutput p\n", &g),
                   IC_ERR_INVALID_GRAPH);
  SAYS(ic_last_error(), "2^61");
  static const char *const wrapping[] = {
      "symbol n\ninput x : u8[n]\nr = expand(x, [9223372036854775807 + 1, n])\noutput r\n",
      "symbol n\ninput x : u8[n]\nr = expand(x, [4611686018427387904 * 4, n])\noutput r\n", /* wraps to 0 */
      "symbol n\ninput x : u8[n]\nr = expand(x, [n + 4611686018427387904 + 4611686018427387904])\noutput r\n",
  };
  for (size_t i = 0; i < sizeof wrapping / sizeof *wrapping; i++) {
    g = NULL;
    ck_assert_int_eq(ic_graph_parse(wrapping[i], &g), IC_ERR_INVALID_GRAPH);
    ck_assert_ptr_null(g);
    SAYS(ic_last_error(), "overflows 64-bit integers");
  }
}
END_TEST

/* A program of one output whose sizes come from input shapes, compiled on ref. */
static ic_program *compile_on_ref(ic_context *ctx, ic_graph *g) {
  ic_compile_options co = {.struct_size = sizeof co, .backend = "ref"};
  ic_program *p = NULL;
  OK(ic_compile(ctx, g, &co, &p));
  return p;
}

/* Symbolic sizes that overflow only for the symbols' values: ic_program_output_shape,
 * ic_program_run (ic's memory and the caller's, with and without a shape) and
 * ic_program_eval say "overflows"; the largest values that fit work. Symbols are bound
 * from empty inputs ([v, 0]), which may carry any size. */
START_TEST(test_symbols_bound_to_huge_values) {
  ic_context *ctx = ref_context();
  ic_graph *g = NULL;
  OK(ic_graph_create(&g));
  ic_dim n = ic_graph_symbol(g, "n"), m = ic_graph_symbol(g, "m"), k = ic_graph_symbol(g, "k");
  ic_value x = ic_graph_input(g, "x", IC_U8, 2, (ic_dim[]){n, k}, IC_LAYOUT_CONTIGUOUS);
  ic_value y = ic_graph_input(g, "y", IC_U8, 2, (ic_dim[]){m, k}, IC_LAYOUT_CONTIGUOUS);
  OK(ic_graph_output(g, "c", ic_graph_concat(g, 2, (ic_value[]){x, y}, 0)));           /* [n + m, k] */
  OK(ic_graph_output(g, "p", ic_graph_pad(g, x, 2, (int64_t[]){0, 0, P61, P61}, 0))); /* [n + 2^62, k] */
  ic_program *p = compile_on_ref(ctx, g);
  unsigned char cell[8] = {0}, out_cell[8];
  int64_t xs[2] = {P62, 0}, ys[2] = {P62, 0};
  ic_tensor in[2] = {{cell, IC_U8, 2, xs, NULL}, {cell, IC_U8, 2, ys, NULL}};
  int32_t ndim = -1;
  int64_t shape[IC_MAX_DIMS] = {0};

  /* n + m = 2^63 and n + 2^62 = 2^63 */
  for (int32_t o = 0; o < 2; o++) {
    ck_assert_int_eq(ic_program_output_shape(p, o, in, &ndim, shape), IC_ERR_INVALID_ARGUMENT);
    SAYS(ic_last_error(), o == 0 ? "output 0 'c': dim 0" : "output 1 'p': dim 0");
    SAYS(ic_last_error(), "overflows 64-bit integers");
  }
  ck_assert_int_eq(ndim, -1); /* nothing written on failure */
  int64_t given[2][2] = {{0, 0}, {0, 0}};
  ic_tensor outs[4][2] = {
      {{NULL, IC_U8, 2, NULL, NULL}, {NULL, IC_U8, 2, NULL, NULL}},            /* ic allocates */
      {{out_cell, IC_U8, 2, NULL, NULL}, {out_cell + 4, IC_U8, 2, NULL, NULL}}, /* caller's, no shape */
      {{out_cell, IC_U8, 2, given[0], NULL}, {out_cell + 4, IC_U8, 2, given[1], NULL}},
      {{out_cell, IC_U8, 1, given[0], NULL}, {out_cell + 4, IC_U8, 1, given[1], NULL}}, /* short */
  };
  for (int i = 0; i < 4; i++) {
    ic_status st = ic_program_run(p, in, 2, outs[i], 2, NULL);
    ck_assert_msg(st == IC_ERR_INVALID_ARGUMENT, "outputs %d: %s: %s", i, ic_status_string(st), ic_last_error());
    SAYS(ic_last_error(), "overflows 64-bit integers");
  }
  ck_assert_ptr_null(outs[0][0].data);

  /* ic_program_eval of the same dims */
  ic_buffer_info info;
  int64_t symbols[3] = {P62, P62, 0}, value = 0;
  for (int32_t b = 0; b < ic_program_buffer_count(p); b++) {
    OK(ic_program_buffer(p, b, &info));
    if (info.kind != IC_BUFFER_OUTPUT) continue;
    ck_assert_int_eq(ic_program_eval(p, info.dims_expr[0], symbols, &value), IC_ERR_INVALID_ARGUMENT);
    SAYS(ic_last_error(), "overflows");
    ck_assert_ptr_null(strstr(ic_last_error(), "zero"));
    OK(ic_program_eval(p, info.dims_expr[1], symbols, &value));
    ck_assert_int_eq(value, 0);
  }
  ck_assert_int_eq(ic_program_symbol_count(p), 3);
  ck_assert_str_eq(ic_program_symbol_name(p, 0), "n");

  /* one less: INT64_MAX exactly, and an empty run with the caller's outputs */
  xs[0] = P62 - 1; /* n + m and n + 2^62: 2^63 - 1 */
  for (int32_t o = 0; o < 2; o++) {
    OK(ic_program_output_shape(p, o, in, &ndim, shape));
    ck_assert_int_eq(ndim, 2);
    ck_assert_int_eq(shape[0], INT64_MAX);
    ck_assert_int_eq(shape[1], 0);
  }
  given[0][0] = given[1][0] = INT64_MAX;
  OK(ic_program_run(p, in, 2, outs[2], 2, NULL));
  ic_program_release(p);
  ic_graph_destroy(g);
  ic_context_destroy(ctx);
}
END_TEST

/* Outputs in the caller's memory must give their shape, and inputs theirs; descriptors
 * that do not fit are refused before anything runs, with what is wrong. */
START_TEST(test_caller_tensors) {
  ic_context *ctx = ref_context();
  ic_graph *g = NULL;
  OK(ic_graph_create(&g));
  ic_dim n = ic_graph_symbol(g, "n");
  ic_value x = ic_graph_input(g, "x", IC_F32, 1, &n, IC_LAYOUT_CONTIGUOUS);
  OK(ic_graph_output(g, "y", ic_graph_binary(g, IC_OP_MUL, x, x)));
  ic_program *p = compile_on_ref(ctx, g);
  float xv[5] = {1, 2, 3, -4, 0.5f}, yv[5] = {0};
  int64_t five[1] = {5}, four[1] = {4};
  ic_tensor in = {xv, IC_F32, 1, five, NULL};
  ic_tensor out = {yv, IC_F32, 1, NULL, NULL};
  ck_assert_int_eq(ic_program_run(p, &in, 1, &out, 1, NULL), IC_ERR_INVALID_ARGUMENT);
  SAYS(ic_last_error(), "output 0 'y'");
  SAYS(ic_last_error(), "shape is NULL");
  for (int i = 0; i < 5; i++) ck_assert(yv[i] == 0); /* nothing ran */
  out.shape = four;
  ck_assert_int_eq(ic_program_run(p, &in, 1, &out, 1, NULL), IC_ERR_SHAPE_MISMATCH);
  SAYS(ic_last_error(), "is 4, the program makes 5");
  out.ndim = 0;
  ck_assert_int_eq(ic_program_run(p, &in, 1, &out, 1, NULL), IC_ERR_SHAPE_MISMATCH);
  SAYS(ic_last_error(), "0 dims");
  out = (ic_tensor){yv, IC_F32, 1, five, NULL};
  OK(ic_program_run(p, &in, 1, &out, 1, NULL));
  for (int i = 0; i < 5; i++) ck_assert(yv[i] == xv[i] * xv[i]);
  /* ic's memory: no shape needed */
  ic_tensor mine = {NULL, IC_F32, 1, NULL, NULL};
  OK(ic_program_run(p, &in, 1, &mine, 1, NULL));
  ck_assert_ptr_nonnull(mine.data);
  ck_assert(((float *)mine.data)[3] == 16);
  free(mine.data); /* the ref backend's memory is malloc's */

  /* inputs: NULL shape, NULL array, wrong rank, negative dims */
  in.shape = NULL;
  ck_assert_int_eq(ic_program_run(p, &in, 1, &out, 1, NULL), IC_ERR_INVALID_ARGUMENT);
  SAYS(ic_last_error(), "shape is NULL");
  ck_assert_int_eq(ic_program_output_shape(p, 0, &in, &(int32_t){0}, (int64_t[IC_MAX_DIMS]){0}), IC_ERR_INVALID_ARGUMENT);
  ck_assert_int_eq(ic_program_run(p, NULL, 1, &out, 1, NULL), IC_ERR_INVALID_ARGUMENT);
  ck_assert_int_eq(ic_program_output_shape(p, 0, NULL, &(int32_t){0}, (int64_t[IC_MAX_DIMS]){0}), IC_ERR_INVALID_ARGUMENT);
  in = (ic_tensor){xv, IC_F32, 2, five, NULL};
  ck_assert_int_eq(ic_program_run(p, &in, 1, &out, 1, NULL), IC_ERR_SHAPE_MISMATCH);
  int64_t negative[1] = {-1};
  in = (ic_tensor){xv, IC_F32, 1, negative, NULL};
  ck_assert_int_eq(ic_program_run(p, &in, 1, &out, 1, NULL), IC_ERR_INVALID_ARGUMENT);
  SAYS(ic_last_error(), "negative");
  ic_program_release(p);
  ic_graph_destroy(g);

  /* strides whose last element lies at INT64_MAX (one past it: no int64), or past 2^62 bytes */
  ic_graph *sg = NULL;
  OK(ic_graph_create(&sg));
  ic_value su = ic_graph_input(sg, "su", IC_U8, 1, (ic_dim[]){ic_graph_symbol(sg, "n")}, IC_LAYOUT_STRIDED);
  OK(ic_graph_output(sg, "sy", ic_graph_binary(sg, IC_OP_ADD, su, su)));
  ic_program *sp = compile_on_ref(ctx, sg);
  unsigned char bytes2[2] = {0}, sum2[2];
  int64_t two[1] = {2};
  const int64_t far[] = {INT64_MAX, INT64_MAX - 1, P62, INT64_MIN + 1};
  for (size_t i = 0; i < sizeof far / sizeof *far; i++) {
    ic_tensor su_in = {bytes2, IC_U8, 1, two, &far[i]}, sy_out = {sum2, IC_U8, 1, two, NULL};
    ic_status st = ic_program_run(sp, &su_in, 1, &sy_out, 1, NULL);
    ck_assert_msg(st == IC_ERR_INVALID_ARGUMENT || st == IC_ERR_SHAPE_MISMATCH, "stride %lld: %s: %s", (long long)far[i],
                  ic_status_string(st), ic_last_error());
    SAYS(ic_last_error(), far[i] < 0 ? "negative stride" : "2^62 bytes");
  }
  /* a dim of size 1 takes any stride >= 0: its only point is at offset 0 */
  for (size_t i = 0; i < 3; i++) {
    int64_t one1[1] = {1};
    bytes2[0] = (unsigned char)(7 + i);
    sum2[0] = 0;
    ic_tensor su_in = {bytes2, IC_U8, 1, one1, &far[i]}, sy_out = {sum2, IC_U8, 1, one1, NULL};
    OK(ic_program_run(sp, &su_in, 1, &sy_out, 1, NULL));
    ck_assert_int_eq(sum2[0], 2 * (7 + i));
  }
  ic_program_release(sp);
  ic_graph_destroy(sg);

  /* an empty input whose other dims multiply past INT64_MAX: its contiguous strides are
   * never formed (they would overflow), its output is empty too */
  OK(ic_graph_create(&g));
  ic_dim d3[3] = {ic_graph_symbol(g, "a"), ic_graph_symbol(g, "b"), ic_graph_symbol(g, "c")};
  x = ic_graph_input(g, "x", IC_U8, 3, d3, IC_LAYOUT_CONTIGUOUS);
  OK(ic_graph_output(g, "y", ic_graph_binary(g, IC_OP_ADD, x, x)));
  p = compile_on_ref(ctx, g);
  const int64_t hostile[2][3] = {{0, INT64_C(1) << 40, INT64_C(1) << 40}, {INT64_C(1) << 40, INT64_C(1) << 40, 0}};
  for (int i = 0; i < 2; i++) {
    int64_t got[IC_MAX_DIMS];
    unsigned char cell = 0, out_cell = 0;
    in = (ic_tensor){&cell, IC_U8, 3, hostile[i], NULL};
    ic_tensor out3 = {&out_cell, IC_U8, 3, hostile[i], NULL};
    OK(ic_program_run(p, &in, 1, &out3, 1, NULL));
    int32_t nd = 0;
    OK(ic_program_output_shape(p, 0, &in, &nd, got));
    ck_assert_int_eq(nd, 3);
    for (int d = 0; d < 3; d++) ck_assert_int_eq(got[d], hostile[i][d]);
  }
  ic_program_release(p);
  ic_graph_destroy(g);

  /* sums over empty inputs whose other reduced dims multiply past INT64_MAX: 0 for each
   * of the rows, fused and eager, contiguous (dims merged) and strided */
  for (int mode = 0; mode < 4; mode++) {
    int eager = mode & 1;
    OK(ic_graph_create(&g));
    ic_dim d4[4] = {ic_graph_symbol(g, "r"), ic_graph_symbol(g, "a"), ic_graph_symbol(g, "b"), ic_graph_symbol(g, "c")};
    x = ic_graph_input(g, "x", IC_F32, 4, d4, mode & 2 ? IC_LAYOUT_STRIDED : IC_LAYOUT_CONTIGUOUS);
    OK(ic_graph_output(g, "s", ic_graph_reduce(g, IC_REDUCE_SUM, x, 3, (int32_t[]){1, 2, 3}, 0)));
    ic_compile_options co = {.struct_size = sizeof co, .backend = "ref", .mode = eager ? IC_MODE_EAGER : IC_MODE_FUSED};
    OK(ic_compile(ctx, g, &co, &p));
    const int64_t empty4[4] = {3, INT64_C(1) << 40, INT64_C(1) << 40, 0};
    float cell4 = 1, sums[3] = {-1, -1, -1};
    int64_t three[1] = {3};
    in = (ic_tensor){&cell4, IC_F32, 4, empty4, NULL};
    ic_tensor so = {sums, IC_F32, 1, three, NULL};
    OK(ic_program_run(p, &in, 1, &so, 1, NULL));
    for (int i = 0; i < 3; i++) ck_assert(sums[i] == 0);
    ic_program_release(p);
    ic_graph_destroy(g);
  }
  ic_context_destroy(ctx);
}
END_TEST

/* DLPack byte offsets: up to 2^62 from a real pointer; past it, wrapping, or from NULL data
 * refused (the pointer addition would overflow). */
START_TEST(test_dlpack_byte_offsets) {
  int64_t shape[1] = {1};
  DLTensor t = {.data = (void *)64, .device = {kDLCPU, 0}, .ndim = 1, .dtype = {kDLFloat, 32, 1}, .shape = shape};
  ic_tensor it;
  t.byte_offset = (uint64_t)P62;
  OK(ic_tensor_from_dlpack(&t, &it));
  ck_assert(it.data == (void *)((uintptr_t)64 + (uintptr_t)P62));
  static const uint64_t refused[] = {(uint64_t)P62 + 1, UINT64_C(1) << 63, UINT64_MAX - 63, UINT64_MAX};
  for (size_t i = 0; i < sizeof refused / sizeof *refused; i++) {
    t.byte_offset = refused[i];
    it.data = (void *)1;
    ck_assert_int_eq(ic_tensor_from_dlpack(&t, &it), IC_ERR_INVALID_ARGUMENT);
    SAYS(ic_last_error(), "byte_offset");
    ck_assert(it.data == (void *)1); /* untouched */
  }
  t.byte_offset = UINT64_C(1) << 63;
  ck_assert_int_eq(ic_tensor_from_dlpack(&t, &it), IC_ERR_INVALID_ARGUMENT);
  SAYS(ic_last_error(), "more than 2^62");
  t.data = NULL;
  t.byte_offset = 16;
  ck_assert_int_eq(ic_tensor_from_dlpack(&t, &it), IC_ERR_INVALID_ARGUMENT);
  SAYS(ic_last_error(), "NULL data");
  t.byte_offset = 0;
  OK(ic_tensor_from_dlpack(&t, &it));
  ck_assert_ptr_null(it.data);
  t.data = (void *)64;
  t.shape = NULL; /* a NULL shape with dims */
  ck_assert_int_ne(ic_tensor_from_dlpack(&t, &it), IC_OK);
}
END_TEST

int main(int argc, char **argv) {
  Suite *s = suite_create("limits");
  CHECK_CASE(s, test_graph_counts, NULL, NULL);
  CHECK_CASE(s, test_dims_and_nesting, NULL, NULL);
  CHECK_CASE(s, test_inline_asm_limits, NULL, NULL);
  CHECK_CASE(s, test_run_bytes, NULL, NULL);
  CHECK_CASE(s, test_sums_refused_when_built, NULL, NULL);
  CHECK_CASE(s, test_pad_amount_bounds, NULL, NULL);
  CHECK_CASE(s, test_bytes_and_views_when_built, NULL, NULL);
  CHECK_CASE(s, test_symbols_bound_to_huge_values, NULL, NULL);
  CHECK_CASE(s, test_caller_tensors, NULL, NULL);
  CHECK_CASE(s, test_dlpack_byte_offsets, NULL, NULL);
  if (check_list_cases(argc, argv, s)) return 0;
  return check_run_suite(s);
}
