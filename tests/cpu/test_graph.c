/* CPU: the graph builder: validation and errors, shape and dtype inference,
 * broadcasting, views, sticky errors. */
#include <check.h>
#include <ic/ic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"

#define ASSERT_ERR_CONTAINS(g, text)                                                         \
  do {                                                                                       \
    const char *m_ = NULL;                                                                   \
    ck_assert_int_ne(ic_graph_error((g), &m_), IC_OK);                                       \
    ck_assert_msg(strstr(m_, (text)) != NULL, "error '%s' lacks '%s'", m_, (text));         \
  } while (0)

static ic_graph *fresh(void) {
  ic_graph *g = NULL;
  ck_assert_int_eq(ic_graph_create(&g), IC_OK);
  return g;
}

/* Runs one failing builder call on a fresh graph and checks its first error. */
#define EXPECT_BUILD_ERROR(expr, text)                                   \
  do {                                                                   \
    ic_graph *g = fresh();                                               \
    ic_dim n = ic_graph_symbol(g, "n");                                  \
    ic_dim m = ic_graph_symbol(g, "m");                                  \
    ic_value x = ic_graph_input(g, "x", IC_F32, 2, (ic_dim[]){n, 4}, 0); \
    ic_value i = ic_graph_input(g, "i", IC_I32, 1, (ic_dim[]){4}, 0);    \
    ic_value y = ic_graph_input(g, "y", IC_F32, 1, (ic_dim[]){m}, 0);    \
    (void)x, (void)i, (void)y;                                           \
    ck_assert_int_eq((int)(expr), IC_INVALID_VALUE);                     \
    ck_assert_int_eq(ic_graph_value_ndim(g, 3), -1); /* nothing added */ \
    ASSERT_ERR_CONTAINS(g, text);                                        \
    ck_assert_str_ne(ic_last_error(), "");                               \
    ic_graph_destroy(g);                                                 \
  } while (0)

START_TEST(test_builder_errors) {
  EXPECT_BUILD_ERROR(ic_graph_input(g, "", IC_F32, 0, NULL, 0), "empty name");
  EXPECT_BUILD_ERROR(ic_graph_input(g, "x", IC_F32, 0, NULL, 0), "duplicate input name 'x'");
  EXPECT_BUILD_ERROR(ic_graph_input(g, "z", (ic_dtype)99, 0, NULL, 0), "invalid dtype");
  EXPECT_BUILD_ERROR(ic_graph_input(g, "z", IC_F32, 9, (ic_dim[9]){0}, 0), "outside 0..8");
  EXPECT_BUILD_ERROR(ic_graph_input(g, "z", IC_F32, 2, NULL, 0), "dims is NULL");
  EXPECT_BUILD_ERROR(ic_graph_input(g, "z", IC_F32, 1, (ic_dim[]){-7}, 0), "neither a size nor a symbol");
  EXPECT_BUILD_ERROR(ic_graph_input(g, "z", IC_F32, 1, (ic_dim[]){4}, (ic_layout)7), "invalid layout");
  EXPECT_BUILD_ERROR(ic_graph_constant(g, NAN, IC_I32), "NaN is not a value of i32");
  EXPECT_BUILD_ERROR(ic_graph_binary(g, IC_OP_ADD, x, i), "dtype mismatch: f32 vs i32: add: operand dtypes differ");
  EXPECT_BUILD_ERROR(ic_graph_binary(g, IC_OP_ADD, x, 77), "not a value of this graph");
  EXPECT_BUILD_ERROR(ic_graph_binary(g, IC_OP_ADD, x, IC_INVALID_VALUE), "not a value of this graph");
  EXPECT_BUILD_ERROR(ic_graph_unary(g, IC_OP_EXP, i), "dtype i32 not accepted (takes f16, bf16, f32, f64, f8e4m3, f8e5m2)");
  EXPECT_BUILD_ERROR(ic_graph_binary(g, IC_OP_DIV, i, i), "dtype i32 not accepted");
  EXPECT_BUILD_ERROR(ic_graph_unary(g, IC_OP_ADD, x), "takes 2 arguments, got 1");
  EXPECT_BUILD_ERROR(ic_graph_op(g, (ic_op)999, 1, &x), "invalid op");
  EXPECT_BUILD_ERROR(ic_graph_unary(g, IC_OP_CAST, x), "use ic_graph_cast");
  EXPECT_BUILD_ERROR(ic_graph_where(g, x, x, x), "dtype mismatch: f32 vs bool: where: condition must be bool");
  EXPECT_BUILD_ERROR(ic_graph_binary(g, IC_OP_ADD, x, y), "do not broadcast");
  EXPECT_BUILD_ERROR(ic_graph_cast(g, x, (ic_dtype)42), "cast: invalid dtype 42");
  EXPECT_BUILD_ERROR(ic_graph_unary(g, IC_OP_CAST_SATURATE, x), "use ic_graph_cast_saturate");
  EXPECT_BUILD_ERROR(ic_graph_unary(g, IC_OP_BITCAST, x), "use ic_graph_bitcast");
  EXPECT_BUILD_ERROR(ic_graph_bitcast(g, x, IC_F16), "f32 and f16 differ in width (4 and 2 bytes)");
  EXPECT_BUILD_ERROR(ic_graph_bitcast(g, x, IC_BOOL), "bool has no bit pattern");
  EXPECT_BUILD_ERROR(ic_graph_cast_saturate(g, 55, IC_I8), "not a value of this graph");
  EXPECT_BUILD_ERROR(ic_graph_reshape(g, x, 1, (ic_dim[]){5}), "same number of elements");
  EXPECT_BUILD_ERROR(ic_graph_reshape(g, x, 2, (ic_dim[]){IC_DIM_INFER, IC_DIM_INFER}), "more than one dim");
  EXPECT_BUILD_ERROR(ic_graph_reshape(g, x, 2, (ic_dim[]){IC_DIM_INFER, 3}), "cannot infer");
  EXPECT_BUILD_ERROR(ic_graph_permute(g, x, 2, (int32_t[]){0, 0}), "makes no permutation");
  EXPECT_BUILD_ERROR(ic_graph_permute(g, x, 1, (int32_t[]){0}), "1 entries for a tensor of 2 dims");
  EXPECT_BUILD_ERROR(ic_graph_expand(g, x, 2, (ic_dim[]){n, 5}), "cannot expand");
  EXPECT_BUILD_ERROR(ic_graph_expand(g, x, 1, (ic_dim[]){4}), "cannot hold");
  EXPECT_BUILD_ERROR(ic_graph_squeeze(g, x, 1), "does not have the constant size 1");
  EXPECT_BUILD_ERROR(ic_graph_squeeze(g, x, 2), "outside a tensor of 2 dims");
  EXPECT_BUILD_ERROR(ic_graph_unsqueeze(g, x, 3), "outside a result of 3 dims");
  EXPECT_BUILD_ERROR(ic_graph_flatten(g, x, 1, 0), "no range");
}
END_TEST

/* The type rules of ic.h's table, every op against every dtype: the dtype classes as the
 * header lists them, written out here independently of the library's op table. */
static const ic_dtype all_dtypes[] = {IC_BOOL, IC_U8,  IC_I8,  IC_I16,    IC_I32,    IC_I64,  IC_F16, IC_BF16,
                                      IC_F32,  IC_F64, IC_F8E4M3, IC_F8E5M2, IC_U16, IC_U32, IC_U64};

static bool class_has(const char *cls, ic_dtype dt) {
  bool is_float = dt == IC_F16 || dt == IC_BF16 || dt == IC_F32 || dt == IC_F64 || dt == IC_F8E4M3 || dt == IC_F8E5M2;
  bool is_int = dt == IC_U8 || dt == IC_U16 || dt == IC_U32 || dt == IC_U64 || dt == IC_I8 || dt == IC_I16 ||
                dt == IC_I32 || dt == IC_I64;
  if (!strcmp(cls, "FLOAT")) return is_float;
  if (!strcmp(cls, "INT")) return is_int;
  if (!strcmp(cls, "NUM")) return is_float || is_int;
  if (!strcmp(cls, "ANY")) return true;
  if (!strcmp(cls, "BITS")) return is_int || dt == IC_BOOL;
  ck_abort_msg("unknown class %s", cls);
  return false;
}

static const struct {
  const char *cls, *result;
} op_rules[] = {
#define RULE_(name, spelling, arity, types, result) {#types, #result},
    IC_OP_LIST(RULE_)
#undef RULE_
};

START_TEST(test_type_rules) {
  for (int op = 0; op < IC_OP_COUNT; op++) {
    if (!strcmp(op_rules[op].result, "TARGET")) continue;
    for (size_t d = 0; d < (sizeof all_dtypes / sizeof *all_dtypes); d++) {
      ic_dtype dt = all_dtypes[d];
      ic_graph *g;
      ck_assert_int_eq(ic_graph_create(&g), IC_OK);
      ic_dim n = 5;
      ic_value args[3] = {ic_graph_input(g, "a", op == IC_OP_WHERE ? IC_BOOL : dt, 1, &n, 0),
                          ic_graph_input(g, "b", dt, 1, &n, 0), ic_graph_input(g, "c", dt, 1, &n, 0)};
      ic_value v = ic_graph_op(g, (ic_op)op, ic_op_arity((ic_op)op), args);
      bool want = class_has(op_rules[op].cls, dt);
      ck_assert_msg((v != IC_INVALID_VALUE) == want, "%s on %s: built %d, rule says %d", ic_op_name((ic_op)op),
                    ic_dtype_name(dt), v != IC_INVALID_VALUE, want);
      if (want) {
        ic_dtype r = !strcmp(op_rules[op].result, "BOOL") ? IC_BOOL : dt;
        ck_assert_int_eq(ic_graph_value_dtype(g, v), r);
      } else {
        char expect[64];
        snprintf(expect, sizeof expect, "%s: dtype %s not accepted", ic_op_name((ic_op)op), ic_dtype_name(dt));
        const char *msg = NULL;
        ck_assert_int_eq(ic_graph_error(g, &msg), IC_ERR_INVALID_GRAPH);
        ck_assert_msg(msg && strstr(msg, expect), "%s: '%s'", expect, msg ? msg : "(null)");
      }
      ic_graph_destroy(g);
    }
  }
  {
    ic_graph *g;
    ck_assert_int_eq(ic_graph_create(&g), IC_OK);
    ck_assert_int_eq(ic_graph_bitcast(g, ic_graph_constant(g, 1.0, IC_DTYPE_AUTO), IC_I32), IC_INVALID_VALUE);
    ck_assert_ptr_nonnull(strstr(ic_last_error(), "untyped constant"));
    ic_graph_destroy(g);
  }
  /* conversions: cast and cast_saturate between any two dtypes; bitcast between equal
   * widths without bool */
  for (size_t f = 0; f < (sizeof all_dtypes / sizeof *all_dtypes); f++)
    for (size_t t = 0; t < (sizeof all_dtypes / sizeof *all_dtypes); t++) {
      ic_dtype from = all_dtypes[f], to = all_dtypes[t];
      ic_graph *g;
      ck_assert_int_eq(ic_graph_create(&g), IC_OK);
      ic_dim n = 3;
      ic_value a = ic_graph_input(g, "a", from, 1, &n, 0);
      ck_assert_int_eq(ic_graph_value_dtype(g, ic_graph_cast(g, a, to)), to);
      ck_assert_int_eq(ic_graph_value_dtype(g, ic_graph_cast_saturate(g, a, to)), to);
      bool bit_ok = from != IC_BOOL && to != IC_BOOL && ic_dtype_size(from) == ic_dtype_size(to);
      ic_value b = ic_graph_bitcast(g, a, to);
      ck_assert_msg((b != IC_INVALID_VALUE) == bit_ok, "bitcast %s -> %s", ic_dtype_name(from), ic_dtype_name(to));
      if (bit_ok) ck_assert_int_eq(ic_graph_value_dtype(g, b), to);
      ic_graph_destroy(g);
    }
}
END_TEST

START_TEST(test_first_error_sticks) {
  ic_graph *g = fresh();
  ic_value x = ic_graph_input(g, "x", IC_F32, 1, (ic_dim[]){4}, 0);
  ck_assert_int_eq(ic_graph_error(g, NULL), IC_OK);
  ck_assert_int_eq(ic_graph_unary(g, IC_OP_EXP, 42), IC_INVALID_VALUE);
  ck_assert_int_eq(ic_graph_cast(g, x, (ic_dtype)50), IC_INVALID_VALUE);
  ASSERT_ERR_CONTAINS(g, "exp: argument 42");
  /* later good calls still build (so a host can keep going and report once) */
  ck_assert_int_ge(ic_graph_unary(g, IC_OP_EXP, x), 0);
  /* an output is recorded, but ic_graph_output reports the graph's first error */
  ck_assert_int_eq(ic_graph_output(g, "y", x), IC_ERR_INVALID_GRAPH);
  ASSERT_ERR_CONTAINS(g, "exp: argument 42");
  ic_context_options o = {.struct_size = sizeof o, .arch = "sm_90a", .flags = IC_CONTEXT_COMPILE_ONLY};
  ic_context *ctx;
  ck_assert_int_eq(ic_context_create(&o, &ctx), IC_OK);
  ic_program *p = (ic_program *)1;
  ck_assert_int_eq(ic_compile(ctx, g, NULL, &p), IC_ERR_INVALID_GRAPH);
  ck_assert_ptr_null(p);
  ck_assert_ptr_nonnull(strstr(ic_last_error(), "graph holds an error"));
  ic_context_destroy(ctx);
  ic_graph_destroy(g);
  ic_graph_destroy(NULL);
}
END_TEST

/* A graph past ic's limits is refused with its own counts and the limits (the message
 * once printed the limits where the counts belong). */
START_TEST(test_limits_error_names_counts) {
  ic_graph *g = fresh();
  ic_value first = IC_INVALID_VALUE;
  for (int i = 0; i < 129; i++) {
    char name[16];
    snprintf(name, sizeof name, "x%d", i);
    ic_value x = ic_graph_input(g, name, IC_F32, 1, (ic_dim[]){4}, 0);
    if (i == 0) first = x;
  }
  ck_assert_int_eq(ic_graph_output(g, "y", ic_graph_unary(g, IC_OP_NEG, first)), IC_OK);
  ic_context_options o = {.struct_size = sizeof o, .flags = IC_CONTEXT_COMPILE_ONLY};
  ic_context *ctx;
  ck_assert_int_eq(ic_context_create(&o, &ctx), IC_OK);
  ic_compile_options co = {.struct_size = sizeof co, .backend = "ref"};
  ic_program *p = (ic_program *)1;
  ck_assert_int_eq(ic_compile(ctx, g, &co, &p), IC_ERR_UNSUPPORTED);
  ck_assert_ptr_null(p);
  ck_assert_msg(strstr(ic_last_error(), "129 inputs, 0 symbols and 1 outputs") &&
                    strstr(ic_last_error(), "at most 128, 64 and 128"),
                "%s", ic_last_error());
  ic_context_destroy(ctx);
  ic_graph_destroy(g);
}
END_TEST

static void assert_dims(ic_graph *g, ic_value v, int32_t ndim, const ic_dim *want) {
  ck_assert_int_eq(ic_graph_value_ndim(g, v), ndim);
  ic_dim got[IC_MAX_DIMS];
  ck_assert_int_eq(ic_graph_value_dims(g, v, got), IC_OK);
  for (int32_t i = 0; i < ndim; i++) ck_assert_int_eq(got[i], want[i]);
}

START_TEST(test_shapes_and_broadcasting) {
  ic_graph *g = fresh();
  ic_dim n = ic_graph_symbol(g, "n"), m = ic_graph_symbol(g, "m");
  ck_assert_int_lt(n, 0);
  ck_assert_int_eq(ic_graph_symbol(g, "n"), n);
  ck_assert_int_ne(m, n);
  /* the symbols in order of creation: symbol i is the dim -(i + 1) */
  ck_assert_int_eq(ic_graph_symbol_count(g), 2);
  ck_assert_str_eq(ic_graph_symbol_name(g, (int32_t)(-n - 1)), "n");
  ck_assert_str_eq(ic_graph_symbol_name(g, (int32_t)(-m - 1)), "m");
  ck_assert_ptr_null(ic_graph_symbol_name(g, 2));
  ck_assert_ptr_null(ic_graph_symbol_name(g, -1));
  ck_assert_int_eq(ic_graph_symbol_count(NULL), 0);
  ck_assert_ptr_null(ic_graph_symbol_name(NULL, 0));
  ic_value x = ic_graph_input(g, "x", IC_F16, 2, (ic_dim[]){n, 4}, 0);
  ic_value r = ic_graph_input(g, "r", IC_F16, 2, (ic_dim[]){n, 1}, 0);
  ic_value c = ic_graph_input(g, "c", IC_F16, 3, (ic_dim[]){1, 1, m}, 0);
  ic_value w = ic_graph_input(g, "w", IC_F16, 1, (ic_dim[]){4}, 0);
  assert_dims(g, ic_graph_binary(g, IC_OP_MUL, x, w), 2, (ic_dim[]){n, 4});
  assert_dims(g, ic_graph_binary(g, IC_OP_ADD, r, c), 3, (ic_dim[]){1, n, m});
  ic_value cmp = ic_graph_binary(g, IC_OP_LT, x, r);
  ck_assert_int_eq(ic_graph_value_dtype(g, cmp), IC_BOOL);
  assert_dims(g, cmp, 2, (ic_dim[]){n, 4});
  ic_value wh = ic_graph_where(g, cmp, x, ic_graph_constant(g, 0.0, IC_DTYPE_AUTO));
  ck_assert_int_eq(ic_graph_value_dtype(g, wh), IC_F16);
  assert_dims(g, wh, 2, (ic_dim[]){n, 4});
  /* a weak constant adopts the tensor's dtype; a typed one must match */
  ck_assert_int_eq(ic_graph_value_dtype(g, ic_graph_binary(g, IC_OP_ADD, ic_graph_constant(g, 2, IC_DTYPE_AUTO), x)), IC_F16);
  ck_assert_int_eq(ic_graph_binary(g, IC_OP_ADD, x, ic_graph_constant(g, 2, IC_F32)), IC_INVALID_VALUE);
  ck_assert_int_eq(ic_graph_value_dtype(g, ic_graph_cast(g, x, IC_I32)), IC_I32);
  ic_graph_destroy(g);
}
END_TEST

START_TEST(test_views) {
  ic_graph *g = fresh();
  ic_dim n = ic_graph_symbol(g, "n");
  ic_value x = ic_graph_input(g, "x", IC_F32, 3, (ic_dim[]){n, 4, 6}, IC_LAYOUT_STRIDED);
  assert_dims(g, ic_graph_permute(g, x, 3, (int32_t[]){2, 0, 1}), 3, (ic_dim[]){6, n, 4});
  assert_dims(g, ic_graph_reshape(g, x, 2, (ic_dim[]){n, 24}), 2, (ic_dim[]){n, 24});
  assert_dims(g, ic_graph_reshape(g, x, 3, (ic_dim[]){IC_DIM_INFER, 2, 12}), 3, (ic_dim[]){n, 2, 12});
  assert_dims(g, ic_graph_reshape(g, x, 2, (ic_dim[]){n, IC_DIM_INFER}), 2, (ic_dim[]){n, 24});
  /* n*24 is an expression: reported as IC_DIM_INFER */
  assert_dims(g, ic_graph_reshape(g, x, 1, (ic_dim[]){IC_DIM_INFER}), 1, (ic_dim[]){IC_DIM_INFER});
  ic_value flat = ic_graph_reshape(g, x, 2, (ic_dim[]){IC_DIM_INFER, 6});
  assert_dims(g, ic_graph_reshape(g, flat, 3, (ic_dim[]){n, 4, 6}), 3, (ic_dim[]){n, 4, 6});
  ic_value one = ic_graph_input(g, "one", IC_F32, 1, (ic_dim[]){1}, 0);
  assert_dims(g, ic_graph_expand(g, one, 3, (ic_dim[]){2, n, 5}), 3, (ic_dim[]){2, n, 5});
  ck_assert_int_eq(ic_graph_expand(g, x, 3, (ic_dim[]){n, 4, 6}), x); /* no-op expand */
  ic_value u = ic_graph_unsqueeze(g, x, -1);
  assert_dims(g, u, 4, (ic_dim[]){n, 4, 6, 1});
  assert_dims(g, ic_graph_unsqueeze(g, x, 0), 4, (ic_dim[]){1, n, 4, 6});
  assert_dims(g, ic_graph_squeeze(g, u, 3), 3, (ic_dim[]){n, 4, 6});
  assert_dims(g, ic_graph_flatten(g, x, 1, 2), 2, (ic_dim[]){n, 24});
  assert_dims(g, ic_graph_flatten(g, x, 0, -1), 1, (ic_dim[]){IC_DIM_INFER}); /* 24 n */
  assert_dims(g, ic_graph_flatten(g, ic_graph_constant(g, 1, IC_F32), 0, 0), 1, (ic_dim[]){1});
  ck_assert_int_eq(ic_graph_error(g, NULL), IC_OK);
  ic_graph_destroy(g);
}
END_TEST

START_TEST(test_outputs_and_compile_checks) {
  ic_context_options o = {.struct_size = sizeof o, .arch = "sm_90a", .flags = IC_CONTEXT_COMPILE_ONLY};
  ic_context *ctx;
  ck_assert_int_eq(ic_context_create(&o, &ctx), IC_OK);
  ic_program *p = NULL;

  ic_graph *g = fresh();
  ic_value x = ic_graph_input(g, "x", IC_F32, 1, (ic_dim[]){4}, 0);
  ck_assert_int_eq(ic_compile(ctx, g, NULL, &p), IC_ERR_INVALID_GRAPH);
  ck_assert_ptr_nonnull(strstr(ic_last_error(), "no outputs"));
  ck_assert_int_eq(ic_graph_output(g, "y", x), IC_OK);
  ck_assert_int_eq(ic_graph_output(g, "y", x), IC_ERR_INVALID_GRAPH);
  ic_graph_destroy(g);

  g = fresh();
  ic_dim k = ic_graph_symbol(g, "k");
  ic_value one = ic_graph_input(g, "one", IC_F32, 1, (ic_dim[]){1}, 0);
  ck_assert_int_eq(ic_graph_output(g, "y", ic_graph_expand(g, one, 1, (ic_dim[]){k})), IC_OK);
  ck_assert_int_eq(ic_compile(ctx, g, NULL, &p), IC_ERR_INVALID_GRAPH);
  ck_assert_ptr_nonnull(strstr(ic_last_error(), "symbol 'k' is not a dim of any input"));
  ic_graph_destroy(g);

  ck_assert_int_eq(ic_compile(ctx, NULL, NULL, &p), IC_ERR_INVALID_ARGUMENT);
  ic_compile_options bad = {.struct_size = 3};
  g = fresh();
  ck_assert_int_eq(ic_graph_output(g, "c", ic_graph_constant(g, 1, IC_F32)), IC_OK);
  ck_assert_int_eq(ic_compile(ctx, g, &bad, &p), IC_ERR_INVALID_ARGUMENT);
  ic_compile_options mode = {.struct_size = sizeof mode, .mode = (ic_compile_mode)5};
  ck_assert_int_eq(ic_compile(ctx, g, &mode, &p), IC_ERR_INVALID_ARGUMENT);
  ic_compile_options flags = {.struct_size = sizeof flags, .flags = IC_COMPILE_STRICT | (1u << 7)};
  ck_assert_int_eq(ic_compile(ctx, g, &flags, &p), IC_ERR_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(ic_last_error(), "unknown flag bits 0x80"));
  ck_assert_int_eq(ic_compile(ctx, g, NULL, &p), IC_OK); /* a constant output: a copy kernel */
  ck_assert_int_eq(ic_program_kernel_count(p), 1);
  ic_program_release(p);
  ic_graph_destroy(g);
  ic_context_destroy(ctx);
}
END_TEST

/* Dtype mismatches lead with "dtype mismatch: A vs B: " (ic.h, ic_last_error): in the
 * builder (IC_ERR_INVALID_GRAPH, and the graph's first error), in the parser (after its
 * position) and in a run (IC_ERR_SHAPE_MISMATCH); a dtype an op does not take has no
 * such prefix. Bindings classify errors by it. */
static void expect_prefix(const char *message, const char *prefix) {
  ck_assert_msg(strncmp(message, prefix, strlen(prefix)) == 0, "'%s' does not begin with '%s'", message, prefix);
}

START_TEST(test_dtype_mismatch_prefix) {
  ic_graph *g = fresh();
  ic_value x = ic_graph_input(g, "x", IC_F32, 1, (ic_dim[]){4}, 0);
  ic_value h = ic_graph_input(g, "h", IC_F16, 1, (ic_dim[]){4}, 0);
  ic_value b = ic_graph_input(g, "b", IC_BOOL, 1, (ic_dim[]){4}, 0);
  const char *m = NULL;
  ck_assert_int_eq(ic_graph_binary(g, IC_OP_ADD, x, h), IC_INVALID_VALUE);
  expect_prefix(ic_last_error(), "dtype mismatch: f32 vs f16: add: ");
  ck_assert_int_eq(ic_graph_error(g, &m), IC_ERR_INVALID_GRAPH);
  expect_prefix(m, "dtype mismatch: f32 vs f16: add: ");
  ck_assert_int_eq(ic_graph_binary(g, IC_OP_MUL, h, x), IC_INVALID_VALUE);
  expect_prefix(ic_last_error(), "dtype mismatch: f16 vs f32: mul: ");
  ck_assert_int_eq(ic_graph_op(g, IC_OP_CLAMP, 3, (ic_value[]){x, x, h}), IC_INVALID_VALUE);
  expect_prefix(ic_last_error(), "dtype mismatch: f32 vs f16: clamp: ");
  ck_assert_int_eq(ic_graph_where(g, b, x, h), IC_INVALID_VALUE);
  expect_prefix(ic_last_error(), "dtype mismatch: f32 vs f16: where: ");
  ck_assert_int_eq(ic_graph_where(g, x, x, x), IC_INVALID_VALUE);
  expect_prefix(ic_last_error(), "dtype mismatch: f32 vs bool: where: ");
  ck_assert_int_eq(ic_graph_concat(g, 2, (ic_value[]){x, h}, 0), IC_INVALID_VALUE);
  expect_prefix(ic_last_error(), "dtype mismatch: f16 vs f32: concat: value 1 is f16");
  ck_assert_int_eq(ic_graph_layer_norm(g, x, 1, h, IC_INVALID_VALUE, 1e-5), IC_INVALID_VALUE);
  expect_prefix(ic_last_error(), "dtype mismatch: f32 vs f16: ");
  /* Not a mismatch: a dtype the op does not take. */
  ck_assert_int_eq(ic_graph_unary(g, IC_OP_EXP, b), IC_INVALID_VALUE);
  ck_assert_ptr_null(strstr(ic_last_error(), "dtype mismatch"));
  ck_assert_ptr_nonnull(strstr(ic_last_error(), "dtype bool not accepted"));
  ic_graph_destroy(g);

  ic_graph *parsed = NULL;
  ck_assert_int_eq(ic_graph_parse("input x : f32[4]\ninput h : f16[4]\ny = add(x, h)\noutput y\n", &parsed),
                   IC_ERR_INVALID_GRAPH);
  ck_assert_ptr_null(parsed);
  expect_prefix(ic_last_error(), "line 3, column 1: dtype mismatch: f32 vs f16: add: ");

  /* A run (ref backend, no GPU): inputs and outputs of another dtype than compiled. */
  ic_context *ctx;
  ck_assert_int_eq(ic_context_create(NULL, &ctx), IC_OK);
  g = fresh();
  x = ic_graph_input(g, "x", IC_F32, 1, (ic_dim[]){4}, 0);
  ck_assert_int_eq(ic_graph_output(g, "y", ic_graph_unary(g, IC_OP_NEG, x)), IC_OK);
  ic_compile_options co = {.struct_size = sizeof co, .backend = "ref"};
  ic_program *p = NULL;
  ck_assert_int_eq(ic_compile(ctx, g, &co, &p), IC_OK);
  float fx[4] = {1, 2, 3, 4}, fy[4] = {0};
  double dx[4] = {1, 2, 3, 4};
  int64_t shape[1] = {4};
  ic_tensor in = {dx, IC_F64, 1, shape, NULL}, out = {fy, IC_F32, 1, shape, NULL};
  ck_assert_int_eq(ic_program_run(p, &in, 1, &out, 1, NULL), IC_ERR_SHAPE_MISMATCH);
  expect_prefix(ic_last_error(), "dtype mismatch: f64 vs f32: input 0 'x': got f64, compiled for f32");
  int32_t ndim = 0;
  int64_t oshape[IC_MAX_DIMS];
  ck_assert_int_eq(ic_program_output_shape(p, 0, &in, &ndim, oshape), IC_ERR_SHAPE_MISMATCH);
  expect_prefix(ic_last_error(), "dtype mismatch: f64 vs f32: input 0 'x'");
  in = (ic_tensor){fx, IC_F32, 1, shape, NULL};
  out = (ic_tensor){dx, IC_F64, 1, shape, NULL};
  ck_assert_int_eq(ic_program_run(p, &in, 1, &out, 1, NULL), IC_ERR_SHAPE_MISMATCH);
  expect_prefix(ic_last_error(), "dtype mismatch: f64 vs f32: output 0 'y': got f64, the program makes f32");
  /* A rank mismatch of the right dtype is a shape mismatch without the prefix. */
  in = (ic_tensor){fx, IC_F32, 0, NULL, NULL};
  out = (ic_tensor){fy, IC_F32, 1, shape, NULL};
  ck_assert_int_eq(ic_program_run(p, &in, 1, &out, 1, NULL), IC_ERR_SHAPE_MISMATCH);
  ck_assert_ptr_null(strstr(ic_last_error(), "dtype mismatch"));
  in = (ic_tensor){fx, IC_F32, 1, shape, NULL};
  ck_assert_int_eq(ic_program_run(p, &in, 1, &out, 1, NULL), IC_OK);
  ck_assert(fy[3] == -4.0f);
  ic_program_release(p);
  ic_graph_destroy(g);
  ic_context_destroy(ctx);
}
END_TEST

int main(void) {
  Suite *s = suite_create("graph");
  TCase *tc = check_tcase("builder");
  tcase_add_test(tc, test_builder_errors);
  tcase_add_test(tc, test_first_error_sticks);
  tcase_add_test(tc, test_type_rules);
  tcase_add_test(tc, test_shapes_and_broadcasting);
  tcase_add_test(tc, test_views);
  tcase_add_test(tc, test_outputs_and_compile_checks);
  tcase_add_test(tc, test_limits_error_names_counts);
  tcase_add_test(tc, test_dtype_mismatch_prefix);
  suite_add_tcase(s, tc);
  return check_run_suite(s);
}
