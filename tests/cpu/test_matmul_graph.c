/* CPU: ic_graph_matmul at the graph level: torch.matmul's shape rules (1-D, 2-D,
 * batched, broadcast batch dims, symbolic dims, sizes of 0), the dtype rules, the error
 * messages and statuses, sticky errors, the text format and the program cache key. */
#include <check.h>
#include <ic/ic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/graph.h"
#include "program_cache.h"

#include "check_main.h"

#define OK(call) ck_assert_msg((call) == IC_OK, "%s: %s", #call, ic_last_error())

static ic_graph *fresh(void) {
  ic_graph *g = NULL;
  ck_assert_int_eq(ic_graph_create(&g), IC_OK);
  return g;
}

static ic_value input(ic_graph *g, const char *name, ic_dtype dt, int32_t ndim, const ic_dim *dims) {
  ic_value v = ic_graph_input(g, name, dt, ndim, dims, IC_LAYOUT_CONTIGUOUS);
  ck_assert_msg(v != IC_INVALID_VALUE, "input %s: %s", name, ic_last_error());
  return v;
}

static void assert_dims(const ic_graph *g, ic_value v, int32_t ndim, const ic_dim *want) {
  ck_assert_msg(v != IC_INVALID_VALUE, "build failed: %s", ic_last_error());
  ck_assert_int_eq(ic_graph_value_ndim(g, v), ndim);
  ic_dim got[IC_MAX_DIMS];
  OK(ic_graph_value_dims(g, v, got));
  for (int32_t i = 0; i < ndim; i++)
    ck_assert_msg(got[i] == want[i], "dim %d: %lld, want %lld", i, (long long)got[i], (long long)want[i]);
}

/* matmul of fresh inputs of the given shapes (f32): the result's dims, or the failure. */
typedef struct shape {
  int32_t ndim;
  ic_dim dims[IC_MAX_DIMS];
} shape;

static void expect_shape(shape a, shape b, shape want) {
  ic_graph *g = fresh();
  ic_value x = input(g, "a", IC_F32, a.ndim, a.dims), y = input(g, "b", IC_F32, b.ndim, b.dims);
  ic_value r = ic_graph_matmul(g, x, y);
  assert_dims(g, r, want.ndim, want.dims);
  ck_assert_int_eq(ic_graph_value_dtype(g, r), IC_F32);
  ck_assert_int_eq(ic_graph_error(g, NULL), IC_OK);
  /* one node, no views: the operands as given */
  const graph_node *n = graph_node_get(g, r);
  ck_assert_int_eq(r, 2);
  ck_assert_int_eq(n->kind, GRAPH_MATMUL);
  ck_assert_int_eq(n->nargs, 2);
  ck_assert_int_eq(n->args[0], x);
  ck_assert_int_eq(n->args[1], y);
  ic_graph_destroy(g);
}

#define S(...) ((shape){(int32_t)(sizeof((ic_dim[]){__VA_ARGS__}) / sizeof(ic_dim)), {__VA_ARGS__}})
#define S0 ((shape){0, {0}})

START_TEST(test_shapes) {
  expect_shape(S(5), S(5), S0);                        /* dot */
  expect_shape(S(5), S(5, 7), S(7));                   /* [K] x [K, N] */
  expect_shape(S(4, 5), S(5), S(4));                   /* [M, K] x [K] */
  expect_shape(S(4, 5), S(5, 7), S(4, 7));
  expect_shape(S(3, 4, 5), S(3, 5, 7), S(3, 4, 7));    /* batched */
  expect_shape(S(3, 4, 5), S(5, 7), S(3, 4, 7));       /* batched x 2-D */
  expect_shape(S(4, 5), S(3, 5, 7), S(3, 4, 7));       /* 2-D x batched */
  expect_shape(S(1, 4, 5), S(3, 5, 7), S(3, 4, 7));    /* a size 1 broadcasts */
  expect_shape(S(3, 4, 5), S(1, 5, 7), S(3, 4, 7));
  expect_shape(S(2, 1, 4, 5), S(3, 5, 7), S(2, 3, 4, 7)); /* ranks differ */
  expect_shape(S(3, 1, 4, 5), S(1, 6, 5, 7), S(3, 6, 4, 7));
  expect_shape(S(5), S(2, 3, 5, 7), S(2, 3, 7));       /* 1-D x batched: the row dim goes */
  expect_shape(S(2, 3, 4, 5), S(5), S(2, 3, 4));       /* batched x 1-D: the column dim goes */
  expect_shape(S(1, 1, 1, 1, 1, 1, 4, 5), S(2, 2, 2, 2, 2, 2, 5, 7), S(2, 2, 2, 2, 2, 2, 4, 7)); /* 8 dims */
  /* sizes of 0 */
  expect_shape(S(0), S(0), S0);
  expect_shape(S(4, 0), S(0, 7), S(4, 7));             /* K = 0: zeros */
  expect_shape(S(0, 5), S(5, 7), S(0, 7));
  expect_shape(S(4, 5), S(5, 0), S(4, 0));
  expect_shape(S(0, 4, 5), S(5, 7), S(0, 4, 7));
  expect_shape(S(1, 4, 5), S(0, 5, 7), S(0, 4, 7));    /* 1 broadcasts to 0 */
  expect_shape(S(0, 4, 5), S(1, 5, 7), S(0, 4, 7));
}
END_TEST

START_TEST(test_symbolic_shapes) {
  ic_graph *g = fresh();
  ic_dim n = ic_graph_symbol(g, "n"), k = ic_graph_symbol(g, "k"), bt = ic_graph_symbol(g, "b");
  ic_value a = input(g, "a", IC_F32, 3, (ic_dim[]){bt, n, k});
  ic_value w = input(g, "w", IC_F32, 2, (ic_dim[]){k, 64});
  ic_value b1 = input(g, "b1", IC_F32, 3, (ic_dim[]){1, k, n});
  ic_value v = input(g, "v", IC_F32, 1, (ic_dim[]){k});
  assert_dims(g, ic_graph_matmul(g, a, w), 3, (ic_dim[]){bt, n, 64});
  assert_dims(g, ic_graph_matmul(g, a, b1), 3, (ic_dim[]){bt, n, n}); /* 1 broadcasts against b */
  assert_dims(g, ic_graph_matmul(g, b1, a), 3, (ic_dim[]){bt, k, k});
  assert_dims(g, ic_graph_matmul(g, a, v), 2, (ic_dim[]){bt, n});
  assert_dims(g, ic_graph_matmul(g, v, w), 1, (ic_dim[]){64});
  assert_dims(g, ic_graph_matmul(g, v, v), 0, NULL);
  /* a K that is an expression: the same expression matches */
  ic_value f = ic_graph_flatten(g, a, 1, 2); /* [b, n * k] */
  ic_value nk = input(g, "nk", IC_F32, 2, (ic_dim[]){n, k});
  ic_value flat = ic_graph_flatten(g, nk, 0, 1); /* [n * k] */
  assert_dims(g, ic_graph_matmul(g, f, flat), 1, (ic_dim[]){bt});
  ck_assert_int_eq(ic_graph_error(g, NULL), IC_OK);
  /* symbols that differ are no match, even where they could be equal at run time */
  ck_assert_int_eq(ic_graph_matmul(g, a, input(g, "w2", IC_F32, 2, (ic_dim[]){n, 64})), IC_INVALID_VALUE);
  const char *msg = NULL;
  ck_assert_int_eq(ic_graph_error(g, &msg), IC_ERR_INVALID_GRAPH);
  ck_assert_str_eq(msg, "matmul: a f32[b, n, k] and b f32[n, 64]: K differs (k vs n)");
  ic_graph_destroy(g);

  g = fresh();
  n = ic_graph_symbol(g, "n");
  ic_dim m = ic_graph_symbol(g, "m");
  a = input(g, "a", IC_F32, 3, (ic_dim[]){n, 4, 5});
  ic_value b = input(g, "b", IC_F32, 3, (ic_dim[]){m, 5, 7});
  ck_assert_int_eq(ic_graph_matmul(g, a, b), IC_INVALID_VALUE);
  ck_assert_int_eq(ic_graph_error(g, &msg), IC_ERR_INVALID_GRAPH);
  ck_assert_str_eq(msg,
                   "matmul: a f32[n, 4, 5] and b f32[m, 5, 7]: batch dims do not broadcast (result dim 0: n vs m)");
  ic_graph_destroy(g);
}
END_TEST

/* One failing matmul on a fresh graph: the status, the whole message, nothing added. */
static void expect_error(shape a, ic_dtype adt, shape b, ic_dtype bdt, ic_status want, const char *message) {
  ic_graph *g = fresh();
  ic_value x = input(g, "a", adt, a.ndim, a.dims), y = input(g, "b", bdt, b.ndim, b.dims);
  ck_assert_int_eq(ic_graph_matmul(g, x, y), IC_INVALID_VALUE);
  ck_assert_int_eq(ic_graph_value_ndim(g, 2), -1); /* nothing added */
  const char *msg = NULL;
  ck_assert_int_eq(ic_graph_error(g, &msg), want);
  ck_assert_str_eq(msg, message);
  ck_assert_str_eq(ic_last_error(), message);
  ic_graph_destroy(g);
}

START_TEST(test_shape_errors) {
  expect_error(S(4, 5), IC_F32, S(6, 7), IC_F32, IC_ERR_INVALID_GRAPH,
               "matmul: a f32[4, 5] and b f32[6, 7]: K differs (5 vs 6)");
  expect_error(S(5), IC_F32, S(6), IC_F32, IC_ERR_INVALID_GRAPH, "matmul: a f32[5] and b f32[6]: K differs (5 vs 6)");
  expect_error(S(4, 5), IC_F32, S(6), IC_F32, IC_ERR_INVALID_GRAPH,
               "matmul: a f32[4, 5] and b f32[6]: K differs (5 vs 6)");
  expect_error(S(5), IC_BF16, S(2, 6, 7), IC_BF16, IC_ERR_INVALID_GRAPH,
               "matmul: a bf16[5] and b bf16[2, 6, 7]: K differs (5 vs 6)");
  /* a K of 1 does not broadcast (torch refuses it too) */
  expect_error(S(4, 1), IC_F32, S(6, 7), IC_F32, IC_ERR_INVALID_GRAPH,
               "matmul: a f32[4, 1] and b f32[6, 7]: K differs (1 vs 6)");
  expect_error(S(2, 4, 5), IC_F32, S(3, 5, 7), IC_F32, IC_ERR_INVALID_GRAPH,
               "matmul: a f32[2, 4, 5] and b f32[3, 5, 7]: batch dims do not broadcast (result dim 0: 2 vs 3)");
  expect_error(S(2, 3, 4, 5), IC_F16, S(3, 3, 5, 7), IC_F16, IC_ERR_INVALID_GRAPH,
               "matmul: a f16[2, 3, 4, 5] and b f16[3, 3, 5, 7]: batch dims do not broadcast (result dim 0: 2 vs 3)");
  expect_error(S(2, 4, 5), IC_F32, S(9, 3, 5, 7), IC_F32, IC_ERR_INVALID_GRAPH,
               "matmul: a f32[2, 4, 5] and b f32[9, 3, 5, 7]: batch dims do not broadcast (result dim 1: 2 vs 3)");
  expect_error(S0, IC_F32, S(4, 5), IC_F32, IC_ERR_INVALID_GRAPH,
               "matmul: a f32[] and b f32[4, 5]: a is 0-dim (operands have 1 dim or more; mul scales by a scalar)");
  expect_error(S(4, 5), IC_F32, S0, IC_F32, IC_ERR_INVALID_GRAPH,
               "matmul: a f32[4, 5] and b f32[]: b is 0-dim (operands have 1 dim or more; mul scales by a scalar)");
}
END_TEST

START_TEST(test_dtypes) {
  for (int d = IC_BOOL; d < IC_DTYPE_COUNT; d++) {
    ic_dtype dt = (ic_dtype)d;
    ic_graph *g = fresh();
    ic_value a = input(g, "a", dt, 2, (ic_dim[]){4, 5}), b = input(g, "b", dt, 2, (ic_dim[]){5, 7});
    ic_value r = ic_graph_matmul(g, a, b);
    bool takes = dt == IC_BF16 || dt == IC_F16 || dt == IC_F32 || dt == IC_F64 || dt == IC_I8;
    if (takes) {
      assert_dims(g, r, 2, (ic_dim[]){4, 7});
      ck_assert_int_eq(ic_graph_value_dtype(g, r), dt == IC_I8 ? IC_I32 : dt);
      ck_assert_int_eq(ic_graph_error(g, NULL), IC_OK);
    } else {
      ck_assert_int_eq(r, IC_INVALID_VALUE);
      const char *msg = NULL;
      ck_assert_int_eq(ic_graph_error(g, &msg), IC_ERR_UNSUPPORTED);
      char want[128];
      snprintf(want, sizeof want, "matmul: dtype %s is not supported (takes f16, bf16, f32, f64, i8)",
               ic_dtype_name(dt));
      ck_assert_str_eq(msg, want);
    }
    ic_graph_destroy(g);
  }
  /* operands of two dtypes: the binary ops' mismatch, a's dtype first */
  expect_error(S(4, 5), IC_F16, S(5, 7), IC_BF16, IC_ERR_INVALID_GRAPH,
               "dtype mismatch: f16 vs bf16: matmul: operand dtypes differ (cast one of them)");
  expect_error(S(4, 5), IC_I8, S(5, 7), IC_I32, IC_ERR_INVALID_GRAPH,
               "dtype mismatch: i8 vs i32: matmul: operand dtypes differ (cast one of them)");
  /* a mismatch is reported before the shapes are looked at, as the binary ops do */
  expect_error(S(4, 5), IC_F32, S(6, 7), IC_F64, IC_ERR_INVALID_GRAPH,
               "dtype mismatch: f32 vs f64: matmul: operand dtypes differ (cast one of them)");
  /* a scalar constant, typed or not, is a 0-dim operand */
  ic_graph *g = fresh();
  ic_value x = input(g, "x", IC_F16, 1, (ic_dim[]){4});
  ck_assert_int_eq(ic_graph_matmul(g, x, ic_graph_constant(g, 2, IC_DTYPE_AUTO)), IC_INVALID_VALUE);
  ck_assert_ptr_nonnull(strstr(ic_last_error(), "b is 0-dim"));
  ic_graph_destroy(g);
}
END_TEST

START_TEST(test_arguments_and_sticky_errors) {
  ck_assert_int_eq(ic_graph_matmul(NULL, 0, 1), IC_INVALID_VALUE);
  ic_graph *g = fresh();
  ic_value a = input(g, "a", IC_F32, 2, (ic_dim[]){4, 5}), b = input(g, "b", IC_F32, 2, (ic_dim[]){5, 7});
  ck_assert_int_eq(ic_graph_matmul(g, a, 42), IC_INVALID_VALUE);
  const char *msg = NULL;
  ck_assert_int_eq(ic_graph_error(g, &msg), IC_ERR_INVALID_GRAPH);
  ck_assert_str_eq(msg, "matmul: argument 42 is not a value of this graph");
  ck_assert_int_eq(ic_graph_matmul(g, IC_INVALID_VALUE, b), IC_INVALID_VALUE);
  ck_assert_str_eq(ic_last_error(), "matmul: argument -1 is not a value of this graph");
  /* the first error sticks; later good calls still build */
  ck_assert_int_eq(ic_graph_matmul(g, a, a), IC_INVALID_VALUE);
  ck_assert_ptr_nonnull(strstr(ic_last_error(), "K differs (5 vs 4)"));
  ic_value r = ic_graph_matmul(g, a, b);
  assert_dims(g, r, 2, (ic_dim[]){4, 7});
  ck_assert_int_eq(ic_graph_error(g, &msg), IC_ERR_INVALID_GRAPH);
  ck_assert_str_eq(msg, "matmul: argument 42 is not a value of this graph");
  ck_assert_int_eq(ic_graph_output(g, "y", r), IC_ERR_INVALID_GRAPH);
  /* a graph holding an error does not compile (nothing reaches lowering) */
  ic_context_options o = {.struct_size = sizeof o, .arch = "sm_90a", .flags = IC_CONTEXT_COMPILE_ONLY};
  ic_context *ctx;
  OK(ic_context_create(&o, &ctx));
  ic_program *p = (ic_program *)1;
  ck_assert_int_eq(ic_compile(ctx, g, NULL, &p), IC_ERR_INVALID_GRAPH);
  ck_assert_ptr_null(p);
  ic_context_destroy(ctx);
  ic_graph_destroy(g);
  /* an inline_asm node is no value; its results are */
  g = fresh();
  a = input(g, "a", IC_F32, 2, (ic_dim[]){4, 4});
  ic_value out = IC_INVALID_VALUE;
  ic_inline_asm_desc desc = {.struct_size = sizeof desc, .asm_text = "mov.b32 $0, $1;", .constraints = "=r,r",
                             .output_dtypes = (ic_dtype[]){IC_F32}, .is_pure = 1, .pack = 1};
  OK(ic_graph_inline_asm(g, &desc, 1, &a, 1, &out));
  ck_assert_int_eq(ic_graph_matmul(g, a, out - 1), IC_INVALID_VALUE);
  ck_assert_ptr_nonnull(strstr(ic_last_error(), "is an inline_asm node, not a value"));
  ic_graph_destroy(g);
  g = fresh();
  a = input(g, "a", IC_F32, 2, (ic_dim[]){4, 4});
  ck_assert_int_ge(ic_graph_matmul(g, a, a), 0); /* one value as both operands */
  ic_graph_destroy(g);
}
END_TEST

START_TEST(test_size_overflow) {
  /* the result may hold more elements than either operand: refused past INT64_MAX */
  ic_graph *g = fresh();
  ic_value a = input(g, "a", IC_F32, 2, (ic_dim[]){(ic_dim)1 << 40, 1});
  ic_value b = input(g, "b", IC_F32, 2, (ic_dim[]){1, (ic_dim)1 << 40});
  ck_assert_int_eq(ic_graph_matmul(g, a, b), IC_INVALID_VALUE);
  const char *msg = NULL;
  ck_assert_int_eq(ic_graph_error(g, &msg), IC_ERR_INVALID_GRAPH);
  ck_assert_ptr_nonnull(strstr(msg, "matmul: a value of shape [1099511627776, 1099511627776] would hold more than"));
  ic_graph_destroy(g);
}
END_TEST

static char *print_ok(const ic_graph *g) {
  char *text = NULL;
  ck_assert_msg(ic_graph_print(g, &text) == IC_OK, "print: %s", ic_last_error());
  return text;
}

START_TEST(test_text_round_trip) {
  ic_graph *g = fresh();
  ic_dim n = ic_graph_symbol(g, "n");
  ic_value x = input(g, "x", IC_BF16, 3, (ic_dim[]){n, 4, 8});
  ic_value w = input(g, "w", IC_BF16, 2, (ic_dim[]){16, 8});
  ic_value v = input(g, "v", IC_BF16, 1, (ic_dim[]){4});
  ic_value q = input(g, "q", IC_I8, 2, (ic_dim[]){3, 0});
  ic_value y = ic_graph_matmul(g, x, ic_graph_permute(g, w, 2, (int32_t[]){1, 0})); /* [n, 4, 16] */
  OK(ic_graph_name_value(g, y, "y"));
  ic_value z = ic_graph_matmul(g, v, y); /* [n, 16] */
  ic_value d = ic_graph_matmul(g, v, v); /* [] */
  ic_value i = ic_graph_matmul(g, q, ic_graph_permute(g, q, 2, (int32_t[]){1, 0})); /* i32[3, 3] */
  OK(ic_graph_output(g, "y", y));
  OK(ic_graph_output(g, "z", ic_graph_binary(g, IC_OP_ADD, z, d)));
  OK(ic_graph_output(g, "i", i));
  char *text = print_ok(g);
  ck_assert_msg(strstr(text, "y = matmul(x, %4)\n") != NULL, "%s", text);
  ck_assert_msg(strstr(text, " = matmul(v, y)\n") != NULL, "%s", text);
  ck_assert_msg(strstr(text, " = matmul(v, v)\n") != NULL, "%s", text);
  ic_graph *back = NULL;
  ck_assert_msg(ic_graph_parse(text, &back) == IC_OK, "parse: %s\n%s", ic_last_error(), text);
  char *again = print_ok(back);
  ck_assert_str_eq(text, again);
  ck_assert_int_eq(ic_graph_value_dtype(back, 9), IC_I32);
  /* the parsed graph is the same program */
  ic_compile_options o = {.struct_size = sizeof o};
  key128 k1, k2;
  ck_assert(program_cache_key(g, &o, "cuda", 90, &k1));
  ck_assert(program_cache_key(back, &o, "cuda", 90, &k2));
  ck_assert(key_equal(k1, k2));
  ic_string_free(again);
  ic_string_free(text);
  ic_graph_destroy(back);
  ic_graph_destroy(g);
}
END_TEST

/* A parse that fails, with its whole message. */
static void expect_parse_error(const char *text, const char *message) {
  ic_graph *g = (ic_graph *)1;
  ck_assert_int_eq(ic_graph_parse(text, &g), IC_ERR_INVALID_GRAPH);
  ck_assert_ptr_null(g);
  ck_assert_str_eq(ic_last_error(), message);
}

START_TEST(test_text_errors) {
  const char *head = "input a : f32[4, 5]\ninput b : f32[6, 7]\n";
  char text[256];
  snprintf(text, sizeof text, "%sy = matmul(a, b)\n", head);
  expect_parse_error(text, "line 3, column 1: matmul: a f32[4, 5] and b f32[6, 7]: K differs (5 vs 6)");
  snprintf(text, sizeof text, "%sy = matmul(a)\n", head);
  expect_parse_error(text, "line 3, column 5: matmul takes 2 arguments (the values a and b), got fewer");
  snprintf(text, sizeof text, "%sy = matmul(a, b, a)\n", head);
  expect_parse_error(text, "line 3, column 5: matmul takes 2 arguments (the values a and b), got more");
  snprintf(text, sizeof text, "%sy = matmul(a, c)\n", head);
  expect_parse_error(text, "line 3, column 15: unknown name 'c'");
  expect_parse_error("input a : f16[4, 5]\ninput b : f32[5, 7]\ny = matmul(a, b)\n",
                     "line 3, column 1: dtype mismatch: f16 vs f32: matmul: operand dtypes differ (cast one of them)");
  expect_parse_error("input a : u8[4, 5]\ny = matmul(a, a)\n",
                     "line 2, column 1: matmul: dtype u8 is not supported (takes f16, bf16, f32, f64, i8)");
}
END_TEST

/* matmul(a, b) and matmul(b, a) of square inputs have one shape and different keys. */
static key128 matmul_key(bool swap, uint32_t flags) {
  ic_graph *g = fresh();
  ic_value a = input(g, "a", IC_F32, 2, (ic_dim[]){8, 8}), b = input(g, "b", IC_F32, 2, (ic_dim[]){8, 8});
  OK(ic_graph_output(g, "y", swap ? ic_graph_matmul(g, b, a) : ic_graph_matmul(g, a, b)));
  ic_compile_options o = {.struct_size = sizeof o, .flags = flags};
  key128 k;
  ck_assert(program_cache_key(g, &o, "cuda", 90, &k));
  ic_graph_destroy(g);
  return k;
}

START_TEST(test_program_key) {
  key128 ab = matmul_key(false, 0), ba = matmul_key(true, 0);
  ck_assert(key_equal(ab, matmul_key(false, 0)));
  ck_assert(!key_equal(ab, ba));
  ck_assert(!key_equal(ab, matmul_key(false, IC_COMPILE_ALLOW_TF32)));
  /* a matmul is not the elementwise mul of the same operands */
  ic_graph *g = fresh();
  ic_value a = input(g, "a", IC_F32, 2, (ic_dim[]){8, 8}), b = input(g, "b", IC_F32, 2, (ic_dim[]){8, 8});
  OK(ic_graph_output(g, "y", ic_graph_binary(g, IC_OP_MUL, a, b)));
  ic_compile_options o = {.struct_size = sizeof o};
  key128 k;
  ck_assert(program_cache_key(g, &o, "cuda", 90, &k));
  ck_assert(!key_equal(ab, k));
  ic_graph_destroy(g);
}
END_TEST

int main(void) {
  Suite *s = suite_create("matmul_graph");
  TCase *tc = check_tcase("builder");
  tcase_add_test(tc, test_shapes);
  tcase_add_test(tc, test_symbolic_shapes);
  tcase_add_test(tc, test_shape_errors);
  tcase_add_test(tc, test_dtypes);
  tcase_add_test(tc, test_arguments_and_sticky_errors);
  tcase_add_test(tc, test_size_overflow);
  tcase_add_test(tc, test_text_round_trip);
  tcase_add_test(tc, test_text_errors);
  tcase_add_test(tc, test_program_key);
  suite_add_tcase(s, tc);
  return check_run_suite(s);
}
