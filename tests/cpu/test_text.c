/* CPU: the graph text format: golden prints, parsing, round trips (hand-built and random
 * graphs), every parse error with its line and column, fuzzing, and value names. */
#include <check.h>
#include <ic/ic.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/graph.h" /* graph_print, which IC_DUMP uses, must agree with ic_graph_print */

#include "check_main.h"

static char *copy_string(const char *s) { /* strdup is POSIX, not C11 */
  char *c = malloc(strlen(s) + 1);
  ck_assert_ptr_nonnull(c);
  return strcpy(c, s);
}

static ic_graph *fresh(void) {
  ic_graph *g = NULL;
  ck_assert_int_eq(ic_graph_create(&g), IC_OK);
  return g;
}

/* ic_graph_print, which must succeed, and must agree with the internal graph_print. */
static char *print_graph(const ic_graph *g) {
  char *text = NULL;
  ck_assert_msg(ic_graph_print(g, &text) == IC_OK, "print failed: %s", ic_last_error());
  ck_assert_ptr_nonnull(text);
  sbuf sb = {0};
  graph_print(g, &sb);
  ck_assert_str_eq(sb.data ? sb.data : "", text);
  sbuf_free(&sb);
  return text;
}

static ic_graph *parse_ok(const char *text) {
  ic_graph *g = NULL;
  ck_assert_msg(ic_graph_parse(text, &g) == IC_OK, "parse failed: %s\n--- text:\n%s", ic_last_error(), text);
  ck_assert_ptr_nonnull(g);
  ck_assert_int_eq(ic_graph_error(g, NULL), IC_OK);
  return g;
}

/* print(parse(print(g))) == print(g); returns print(g). */
static char *assert_round_trip(const ic_graph *g) {
  char *text = print_graph(g);
  ic_graph *back = parse_ok(text);
  char *again = print_graph(back);
  ck_assert_msg(strcmp(text, again) == 0, "round trip differs\n--- first:\n%s--- second:\n%s", text, again);
  ic_string_free(again);
  ic_graph_destroy(back);
  return text;
}

static void assert_dims(const ic_graph *g, ic_value v, int32_t ndim, const ic_dim *want) {
  ck_assert_int_eq(ic_graph_value_ndim(g, v), ndim);
  ic_dim got[IC_MAX_DIMS];
  ck_assert_int_eq(ic_graph_value_dims(g, v, got), IC_OK);
  for (int32_t i = 0; i < ndim; i++) ck_assert_int_eq(got[i], want[i]);
}

/* ---------------------------------------------------------------- golden prints */

START_TEST(test_golden_print) {
  ic_graph *g = fresh();
  ic_dim n = ic_graph_symbol(g, "n");
  ic_value x = ic_graph_input(g, "x", IC_F32, 2, (ic_dim[]){n, 4096}, IC_LAYOUT_CONTIGUOUS);
  ic_value w = ic_graph_input(g, "w", IC_F32, 1, (ic_dim[]){4096}, IC_LAYOUT_STRIDED);
  ic_value c = ic_graph_constant(g, 0.5, IC_DTYPE_AUTO);
  ck_assert_int_eq(ic_graph_name_value(g, c, "c"), IC_OK);
  ic_value h = ic_graph_binary(g, IC_OP_MUL, x, w); /* inserts expand(w) */
  ck_assert_int_eq(ic_graph_name_value(g, h, "h"), IC_OK);
  ic_value s = ic_graph_cast(g, h, IC_F16);
  ck_assert_int_eq(ic_graph_name_value(g, s, "s"), IC_OK);
  ic_value y = ic_graph_binary(g, IC_OP_ADD, s, c); /* adopts c as f16, expands it */
  ic_value r = ic_graph_reshape(g, x, 3, (ic_dim[]){n, 64, IC_DIM_INFER});
  ck_assert_int_eq(ic_graph_name_value(g, r, "r"), IC_OK);
  ic_value p = ic_graph_permute(g, r, 3, (int32_t[]){0, 2, 1});
  ck_assert_int_eq(ic_graph_name_value(g, p, "p"), IC_OK);
  ck_assert_int_eq(ic_graph_output(g, "y", y), IC_OK);
  ck_assert_int_eq(ic_graph_output(g, "h", h), IC_OK);
  ck_assert_int_eq(ic_graph_output(g, "perm", p), IC_OK);
  const char *want =
      "symbol n\n"
      "input x : f32[n, 4096]\n"
      "input w : f32[4096] strided\n"
      "c = const 0.5\n"
      "%3 = expand(w, [n, 4096])\n"
      "h = mul(x, %3)\n"
      "s = cast(h, f16)\n"
      "%6 = const 0.5 : f16\n"
      "%7 = expand(%6, [n, 4096])\n"
      "%8 = add(s, %7)\n"
      "r = reshape(x, [n, 64, 64])\n"
      "p = permute(r, [0, 2, 1])\n"
      "output y = %8\n"
      "output h\n"
      "output perm = p\n";
  char *text = assert_round_trip(g);
  ck_assert_str_eq(text, want);
  ic_string_free(text);
  ic_graph_destroy(g);
}
END_TEST

/* Expression dims, every layout, special constants, where, comparisons, 0-d values. */
START_TEST(test_golden_print_dims_and_constants) {
  ic_graph *g = fresh();
  ic_dim n = ic_graph_symbol(g, "n"), m = ic_graph_symbol(g, "m");
  ic_graph_symbol(g, "unused");
  ic_value a = ic_graph_input(g, "a", IC_BF16, 2, (ic_dim[]){n, m}, IC_LAYOUT_INNER_CONTIGUOUS);
  ic_value b = ic_graph_input(g, "b", IC_I32, 2, (ic_dim[]){n, 8}, IC_LAYOUT_CONTIGUOUS);
  ic_value flat = ic_graph_reshape(g, a, 1, (ic_dim[]){IC_DIM_INFER});          /* [n * m] */
  ic_value pairs = ic_graph_reshape(g, b, 2, (ic_dim[]){IC_DIM_INFER, 2});      /* [4 * n, 2] */
  ic_value col = ic_graph_reshape(g, flat, 2, (ic_dim[]){IC_DIM_INFER, 1});     /* [n * m, 1] */
  ic_value grid = ic_graph_binary(g, IC_OP_ADD, col, flat);                      /* both expand */
  ic_value lt = ic_graph_binary(g, IC_OP_LT, pairs, ic_graph_constant(g, 7, IC_I32));
  ic_value sel = ic_graph_where(g, lt, pairs, ic_graph_constant(g, -3, IC_DTYPE_AUTO));
  /* (built one by one: the order of an initializer list's calls is unspecified) */
  static const struct {
    double value;
    ic_dtype dtype;
  } consts[] = {{INFINITY, IC_F32}, {-INFINITY, IC_DTYPE_AUTO}, {NAN, IC_F16}, {-NAN, IC_DTYPE_AUTO},
                {-0.0, IC_F32},     {0.1, IC_DTYPE_AUTO},       {0.1, IC_BF16}, {1e300, IC_DTYPE_AUTO},
                {2.5, IC_BOOL},     {5e-324, IC_DTYPE_AUTO}};
  ic_value first_const = IC_INVALID_VALUE;
  for (size_t i = 0; i < sizeof consts / sizeof *consts; i++) {
    ic_value v = ic_graph_constant(g, consts[i].value, consts[i].dtype);
    if (i == 0) first_const = v;
  }
  ck_assert_int_eq(ic_graph_output(g, "grid", grid), IC_OK);
  ck_assert_int_eq(ic_graph_output(g, "sel", sel), IC_OK);
  ck_assert_int_eq(ic_graph_output(g, "inf", first_const), IC_OK);
  ck_assert_int_eq(ic_graph_error(g, NULL), IC_OK);
  const char *want =
      "symbol n\n"
      "symbol m\n"
      "symbol unused\n"
      "input a : bf16[n, m] inner_contiguous\n"
      "input b : i32[n, 8]\n"
      "%2 = reshape(a, [n * m])\n"
      "%3 = reshape(b, [4 * n, 2])\n"
      "%4 = reshape(%2, [n * m, 1])\n"
      "%5 = expand(%4, [n * m, n * m])\n"
      "%6 = expand(%2, [n * m, n * m])\n"
      "%7 = add(%5, %6)\n"
      "%8 = const 7 : i32\n"
      "%9 = expand(%8, [4 * n, 2])\n"
      "%10 = lt(%3, %9)\n"
      "%11 = const -3\n"
      "%12 = const -3 : i32\n"
      "%13 = expand(%12, [4 * n, 2])\n"
      "%14 = where(%10, %3, %13)\n"
      "%15 = const inf : f32\n"
      "%16 = const -inf\n"
      "%17 = const nan : f16\n"
      "%18 = const nan\n"
      "%19 = const -0 : f32\n"
      "%20 = const 0.10000000000000001\n"
      "%21 = const 0.10009765625 : bf16\n"
      "%22 = const 1.0000000000000001e+300\n"
      "%23 = const 1 : bool\n"
      "%24 = const 4.9406564584124654e-324\n"
      "output grid = %7\n"
      "output sel = %14\n"
      "output inf = %15\n";
  char *text = assert_round_trip(g);
  ck_assert_str_eq(text, want);
  ic_string_free(text);
  ic_graph_destroy(g);
}
END_TEST

/* Dims past 32 bits print as plain integers (no C LL suffix) and parse back; a dim
 * expression holding such a constant as well. */
START_TEST(test_print_large_dims_round_trip) {
  ic_graph *g = fresh();
  ic_dim n = ic_graph_symbol(g, "n");
  ic_value x = ic_graph_input(g, "x", IC_F32, 1, (ic_dim[]){3000000000}, IC_LAYOUT_CONTIGUOUS);
  ic_value y = ic_graph_input(g, "y", IC_F32, 2, (ic_dim[]){n, INT64_C(1) << 40}, IC_LAYOUT_CONTIGUOUS);
  ic_value flat = ic_graph_reshape(g, y, 1, (ic_dim[]){IC_DIM_INFER}); /* [1099511627776 * n] */
  ck_assert_int_eq(ic_graph_output(g, "xx", ic_graph_binary(g, IC_OP_MUL, x, x)), IC_OK);
  ck_assert_int_eq(ic_graph_output(g, "f", flat), IC_OK);
  char *text = assert_round_trip(g);
  ck_assert_msg(strstr(text, "input x : f32[3000000000]\n") != NULL, "%s", text);
  ck_assert_msg(strstr(text, "1099511627776 * n") != NULL, "%s", text);
  ck_assert_msg(strstr(text, "LL") == NULL, "%s", text);
  ic_string_free(text);
  ic_graph_destroy(g);
}
END_TEST

START_TEST(test_print_empty_and_bad_arguments) {
  ic_graph *g = fresh();
  char *text = NULL;
  ck_assert_int_eq(ic_graph_print(g, &text), IC_OK);
  ck_assert_str_eq(text, "");
  ic_string_free(text);
  ck_assert_int_eq(ic_graph_print(NULL, &text), IC_ERR_INVALID_ARGUMENT);
  ck_assert_ptr_null(text);
  ck_assert_int_eq(ic_graph_print(g, NULL), IC_ERR_INVALID_ARGUMENT);
  ic_graph_destroy(g);
  g = (ic_graph *)1;
  ck_assert_int_eq(ic_graph_parse(NULL, &g), IC_ERR_INVALID_ARGUMENT);
  ck_assert_ptr_null(g);
  ck_assert_int_eq(ic_graph_parse("", NULL), IC_ERR_INVALID_ARGUMENT);
  ic_string_free(NULL);
  /* an empty text, and one of comments only, is an empty graph */
  g = parse_ok("");
  ic_graph_destroy(g);
  g = parse_ok("# nothing\n\n   # still nothing\r\n");
  ck_assert_int_eq(ic_graph_value_ndim(g, 0), -1);
  ic_graph_destroy(g);
}
END_TEST

/* The builder takes any string as a symbol, input or output name; ic_graph_print refuses
 * the ones the format cannot carry, while the dump printer still writes them. */
START_TEST(test_print_unprintable_names) {
  const char *bad[] = {"a b", "%3", "9x", "x-y", ""};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    for (int where = 0; where < 3; where++) {
      ic_graph *g = fresh();
      ic_value x = ic_graph_input(g, where == 1 ? bad[i] : "x", IC_F32, 1, (ic_dim[]){4}, 0);
      if (where == 0) ic_graph_symbol(g, bad[i]);
      if (where == 2) ic_graph_output(g, bad[i], x);
      if (ic_graph_error(g, NULL) != IC_OK) { /* "" is refused by the builder itself */
        ic_graph_destroy(g);
        continue;
      }
      char *text = (char *)1;
      ck_assert_int_eq(ic_graph_print(g, &text), IC_ERR_UNSUPPORTED);
      ck_assert_ptr_null(text);
      ck_assert_ptr_nonnull(strstr(ic_last_error(), "cannot be written in the text format"));
      sbuf sb = {0};
      graph_print(g, &sb);
      ck_assert_ptr_nonnull(strstr(sb.data, bad[i]));
      sbuf_free(&sb);
      ic_graph_destroy(g);
    }
  }
}
END_TEST

/* ---------------------------------------------------------------- parsing */

static const char *hand_written =
    "# a hand-written graph: comments, blank lines, odd spacing, every statement\n"
    "symbol n   # trailing comment\n"
    "symbol m\n"
    "\n"
    "input x : f32[n, 4096]\n"
    "input w : f32[4096] strided\n"
    "\tinput  b:bf16[m,n]   inner_contiguous\r\n"
    "input flag : bool[n, 1] contiguous\n"
    "c = const 0.5\n"
    "k = const -3 : i32\n"
    "big = const 1e300\n"
    "pinf = const inf\n"
    "ninf = const -inf : f16\n"
    "q = const nan : bf16\n"
    "e = expand(w, [n, 4096])\n"
    "h = mul(x, e)\n"
    "hc = add(h, c)          # c is weak: f32, expanded\n"
    "s = cast(hc, f16)\n"
    "r = reshape(x, [n, 64, ?])\n"
    "p = permute(r, [0, 2, 1])\n"
    "f = reshape(x, [4096 * n])\n"
    "g.2 = reshape(f, [(n * 64), 8 * (4 + 4)])\n"
    "w2 = where(flag, x, h)\n"
    "%t = neg(x)\n"
    "u = exp(%t)\n"
    "input = sigmoid(u)      # a value may be called input\n"
    "alias = expand(x, [n, 4096])  # x's own shape: no node, just a name\n"
    "output y = s\n"
    "output u\n"
    "output p2 = p\n"
    "output a = alias\n"
    "   # done";

START_TEST(test_parse_hand_written) {
  ic_graph *g = parse_ok(hand_written);
  ic_dim n = -1, m = -2;
  assert_dims(g, 0, 2, (ic_dim[]){n, 4096});
  assert_dims(g, 2, 2, (ic_dim[]){m, n});
  ck_assert_int_eq(ic_graph_value_dtype(g, 2), IC_BF16);
  ck_assert_int_eq(ic_graph_value_dtype(g, 5), IC_I32);
  assert_dims(g, 15, 3, (ic_dim[]){n, 64, 64});
  assert_dims(g, 16, 3, (ic_dim[]){n, 64, 64});
  assert_dims(g, 17, 1, (ic_dim[]){IC_DIM_INFER}); /* 4096 * n */
  assert_dims(g, 18, 2, (ic_dim[]){IC_DIM_INFER, 64});
  const char *want =
      "symbol n\n"
      "symbol m\n"
      "input x : f32[n, 4096]\n"
      "input w : f32[4096] strided\n"
      "input b : bf16[m, n] inner_contiguous\n"
      "input flag : bool[n, 1]\n"
      "c = const 0.5\n"
      "k = const -3 : i32\n"
      "big = const 1.0000000000000001e+300\n"
      "pinf = const inf\n"
      "ninf = const -inf : f16\n"
      "q = const nan : bf16\n"
      "e = expand(w, [n, 4096])\n"
      "h = mul(x, e)\n"
      "%12 = expand(c, [n, 4096])\n"
      "hc = add(h, %12)\n"
      "s = cast(hc, f16)\n"
      "r = reshape(x, [n, 64, 64])\n"
      "p = permute(r, [0, 2, 1])\n"
      "f = reshape(x, [4096 * n])\n"
      "g.2 = reshape(f, [64 * n, 64])\n"
      "%19 = expand(flag, [n, 4096])\n"
      "w2 = where(%19, x, h)\n"
      "%21 = neg(x)\n"
      "u = exp(%21)\n"
      "input = sigmoid(u)\n"
      "output y = s\n"
      "output u\n"
      "output p2 = p\n"
      "output a = x\n";
  char *text = assert_round_trip(g);
  ck_assert_str_eq(text, want);
  ic_string_free(text);
  ic_graph_destroy(g);
}
END_TEST

/* The unsigned dtypes in the text: input types, typed constants at their extremes (u64's
 * top is no double: it prints as 2^64, the value the builder saturates it to), casts,
 * saturating casts, bitcasts and a reduction, parsed, printed and parsed again. */
START_TEST(test_unsigned_dtypes_text) {
  const char *text =
      "input a : u16[5]\n"
      "input b : u32[5]\n"
      "input c : u64[5]\n"
      "top = const 18446744073709551615 : u64\n"
      "m32 = const 4294967295 : u32\n"
      "neg = const -3 : u16\n"
      "d = floor_divide(c, top)\n"
      "e = shift_right(b, m32)\n"
      "f = cast_saturate(c, u16)\n"
      "g = add(a, f)\n"
      "h = bitcast(c, f64)\n"
      "k = cast(h, u32)\n"
      "s = sum(b, [0])\n"
      "mx = max(c, [0], keepdim)\n"
      "n = add(a, neg)\n"
      "output d\noutput e\noutput g\noutput k\noutput s\noutput mx\noutput n\n";
  ic_graph *g = parse_ok(text);
  ck_assert_int_eq(ic_graph_value_dtype(g, 0), IC_U16);
  ck_assert_int_eq(ic_graph_value_dtype(g, 1), IC_U32);
  ck_assert_int_eq(ic_graph_value_dtype(g, 2), IC_U64);
  ck_assert_int_eq(ic_graph_value_dtype(g, 7), IC_U64);  /* d */
  ck_assert_int_eq(ic_graph_value_dtype(g, 10), IC_U16); /* f */
  ck_assert_int_eq(ic_graph_value_dtype(g, 12), IC_F64); /* h */
  ck_assert_int_eq(ic_graph_value_dtype(g, 14), IC_I64); /* sum of an integer dtype */
  ck_assert_int_eq(ic_graph_value_dtype(g, 15), IC_U64); /* max keeps the dtype */
  const char *want =
      "input a : u16[5]\n"
      "input b : u32[5]\n"
      "input c : u64[5]\n"
      "top = const 1.8446744073709552e+19 : u64\n"
      "m32 = const 4294967295 : u32\n"
      "neg = const 0 : u16\n"
      "%6 = expand(top, [5])\n"
      "d = floor_divide(c, %6)\n"
      "%8 = expand(m32, [5])\n"
      "e = shift_right(b, %8)\n"
      "f = cast_saturate(c, u16)\n"
      "g = add(a, f)\n"
      "h = bitcast(c, f64)\n"
      "k = cast(h, u32)\n"
      "s = sum(b, [0])\n"
      "mx = max(c, [0], keepdim)\n"
      "%16 = expand(neg, [5])\n"
      "n = add(a, %16)\n"
      "output d\n"
      "output e\n"
      "output g\n"
      "output k\n"
      "output s\n"
      "output mx\n"
      "output n\n";
  char *printed = assert_round_trip(g);
  ck_assert_str_eq(printed, want);
  ic_string_free(printed);
  ic_graph_destroy(g);
  /* the names of the dtypes are words of their own */
  ic_graph *bad = NULL;
  ck_assert_int_eq(ic_graph_parse("input a : u128[5]\n", &bad), IC_ERR_INVALID_GRAPH);
  ck_assert_ptr_null(bad);
  ck_assert_msg(strstr(ic_last_error(), "unknown dtype 'u128'"), "%s", ic_last_error());
}
END_TEST

/* slice, concat and pad: their statements, int64 extremes as open slice ends, dims of
 * symbolic slices (min/max expressions) printed and read back. */
START_TEST(test_views_text) {
  const char *text =
      "symbol n\n"
      "input x : f32[n, 4]\n"
      "input y : f32[3, 4]\n"
      "a = slice(x, -2, 1, 9223372036854775807, 2)\n"
      "b = slice(y, 1, 9223372036854775807, -9223372036854775808, -1)\n"
      "c = concat([x, y, x], 0)\n"
      "d = concat([b], -1)   # one value: the value itself, named d here only\n"
      "p = pad(c, [1, 2, 0, 3], -0.5)\n"
      "q = pad(y, [-1, 0], nan)\n"
      "r = reshape(a, [?])\n"
      "t = slice(x, 0, -3, 5, 1)\n"
      "u = reshape(t, [?])\n"
      "v = pad(y, [], 1)\n"
      "output r\n"
      "output u\n"
      "output p\n"
      "output q\n"
      "output d\n";
  const char *want =
      "symbol n\n"
      "input x : f32[n, 4]\n"
      "input y : f32[3, 4]\n"
      "a = slice(x, 0, 1, 9223372036854775807, 2)\n"
      "b = slice(y, 1, 9223372036854775807, -9223372036854775808, -1)\n"
      "c = concat([x, y, x], 0)\n"
      "p = pad(c, [1, 2, 0, 3], -0.5)\n"
      "q = pad(y, [-1, 0], nan)\n"
      "r = reshape(a, [4 * ((ic_max(0, n - ic_min(1, n)) + 1) / 2)])\n"
      "t = slice(x, 0, -3, 5, 1)\n"
      "u = reshape(t, [4 * ic_max(0, ic_min(5, n) - ic_max(0, n - 3))])\n"
      "output r\n"
      "output u\n"
      "output p\n"
      "output q\n"
      "output d = b\n";
  ic_graph *g = parse_ok(text);
  char *printed = assert_round_trip(g);
  ck_assert_str_eq(printed, want);
  ic_string_free(printed);
  assert_dims(g, 4, 2, (ic_dim[]){IC_DIM_INFER, 4}); /* c: 2n + 3 */
  assert_dims(g, 5, 2, (ic_dim[]){IC_DIM_INFER, 7}); /* p */
  assert_dims(g, 6, 2, (ic_dim[]){3, 3});            /* q */
  ic_graph_destroy(g);

  /* built through the API: the same text */
  g = fresh();
  ic_dim n = ic_graph_symbol(g, "n");
  ic_value x = ic_graph_input(g, "x", IC_F32, 2, (ic_dim[]){n, 4}, IC_LAYOUT_CONTIGUOUS);
  ic_value y = ic_graph_input(g, "y", IC_F32, 2, (ic_dim[]){3, 4}, IC_LAYOUT_CONTIGUOUS);
  ic_value a = ic_graph_slice(g, x, -2, 1, INT64_MAX, 2);
  ic_value b = ic_graph_slice(g, y, 1, INT64_MAX, INT64_MIN, -1);
  ic_value c = ic_graph_concat(g, 3, (ic_value[]){x, y, x}, 0);
  ic_value p = ic_graph_pad(g, c, 2, (int64_t[]){1, 2, 0, 3}, -0.5);
  ic_value q = ic_graph_pad(g, y, 1, (int64_t[]){-1, 0}, NAN);
  ic_value r = ic_graph_reshape(g, a, 1, (ic_dim[]){IC_DIM_INFER});
  ic_value u = ic_graph_reshape(g, ic_graph_slice(g, x, 0, -3, 5, 1), 1, (ic_dim[]){IC_DIM_INFER});
  const char *names[] = {"a", "b", "c", "p", "q", "r", "u"};
  ic_value values[] = {a, b, c, p, q, r, u};
  for (int i = 0; i < 7; i++) ck_assert_int_eq(ic_graph_name_value(g, values[i], names[i]), IC_OK);
  ck_assert_int_eq(ic_graph_name_value(g, u - 1, "t"), IC_OK);
  ck_assert_int_eq(ic_graph_output(g, "r", r), IC_OK);
  ck_assert_int_eq(ic_graph_output(g, "u", u), IC_OK);
  ck_assert_int_eq(ic_graph_output(g, "p", p), IC_OK);
  ck_assert_int_eq(ic_graph_output(g, "q", q), IC_OK);
  ck_assert_int_eq(ic_graph_output(g, "d", ic_graph_concat(g, 1, &b, 1)), IC_OK);
  printed = assert_round_trip(g);
  ck_assert_str_eq(printed, want);
  ic_string_free(printed);
  ic_graph_destroy(g);
}
END_TEST

/* ---------------------------------------------------------------- errors */

typedef struct error_case {
  const char *text;
  int line, column;
  const char *message; /* a part of the message after "line L, column C: " */
} error_case;

#define P3 "symbol n\ninput x : f32[n, 4]\ninput i : i32[4]\n" /* three good lines */

static const error_case error_cases[] = {
    {P3 "inptu y : f32[4]\n", 4, 1, "unknown statement 'inptu'"},
    {P3 "(x)\n", 4, 1, "unknown statement: expected symbol, input, output or NAME =, found '('"},
    {P3 "h = mull(x, x)\n", 4, 5, "unknown op 'mull'"},
    {P3 "h = add(x, q)\n", 4, 12, "unknown name 'q'"},
    {P3 "x = neg(x)\n", 4, 1, "duplicate name 'x'"},
    {P3 "input x : f32[4]\n", 4, 7, "duplicate name 'x'"},
    {P3 "symbol n\n", 4, 8, "duplicate symbol 'n'"},
    {P3 "h = add(x)\n", 4, 5, "add takes 2 arguments, got 1"},
    {P3 "h = where(x, x, x, x)\n", 4, 5, "where takes 3 arguments, got 4"},
    {P3 "h = neg()\n", 4, 5, "neg takes 1 argument, got 0"},
    {P3 "h = cast(x)\n", 4, 5, "cast takes 2 arguments (a value and a dtype), got 1"},
    {P3 "h = reshape(x, [4, n], [1])\n", 4, 5, "reshape takes 2 arguments (a value and a dim list), got more"},
    {P3 "h = cast(x, f33)\n", 4, 13, "unknown dtype 'f33'"},
    {P3 "input y : f33[4]\n", 4, 11, "unknown dtype 'f33'"},
    {P3 "input y : f32[4] stried\n", 4, 18, "unknown layout 'stried'"},
    {P3 "c = const 1.5.3\n", 4, 11, "bad number '1.5.3'"},
    {P3 "c = const 0x10\n", 4, 11, "bad number '0x10'"},
    {P3 "c = const\n", 4, 10, "bad number: expected a number, inf or nan, found end of line"},
    {P3 "c = const 1e999\n", 4, 11, "number '1e999' is out of range"},
    {P3 "input y : f32[1.5]\n", 4, 15, "bad number '1.5' (an integer is expected)"},
    {P3 "input y : f32[99999999999999999999]\n", 4, 15, "number '99999999999999999999' is too large"},
    {P3 "input y : f32[4, n\n", 4, 19, "unterminated list: expected ',' or ']', found end of line"},
    {P3 "input y : f32[4, n", 4, 19, "unterminated list: expected ',' or ']', found end of input"},
    {P3 "h = neg(x\n", 4, 10, "unterminated list: expected ',' or ')', found end of line"},
    {P3 "h = cast(x, f16\n", 4, 16, "unterminated argument list: expected ')', found end of line"},
    {P3 "input y : f32[4 4]\n", 4, 17, "expected ',' or ']', found '4'"},
    {P3 "h = neg(x) x\n", 4, 12, "unexpected 'x' after the statement"},
    {P3 "symbol k k\n", 4, 10, "unexpected 'k' after the statement"},
    {P3 "h := neg(x)\n", 4, 3, "expected '=' after 'h', found ':'"},
    {P3 "h\n", 4, 2, "expected '=' after 'h', found end of line"},
    {P3 "h = 1\n", 4, 5, "expected an op or 'const', found '1'"},
    {P3 "input y f32[4]\n", 4, 9, "expected ':', found 'f32'"},
    {P3 "h = neg x\n", 4, 9, "expected '(', found 'x'"},
    {P3 "h = add(x, i)\n", 4, 1, "dtype mismatch: f32 vs i32: add: operand dtypes differ (cast one of them)"},
    {P3 "h = exp(i)\n", 4, 1, "exp: dtype i32 not accepted"},
    {P3 "p = permute(x, [0, 0])\n", 4, 1, "permute: entry 1 (0) makes no permutation"},
    {P3 "p = permute(x, [0, 9])\n", 4, 20, "permute entry 9 is not a dim"},
    {P3 "r = reshape(x, [5])\n", 4, 1, "do not provably have the same number of elements"},
    {P3 "e = expand(x, [n, 5])\n", 4, 1, "cannot expand"},
    {P3 "c = const nan : i32\n", 4, 1, "NaN is not a value of i32"},
    {P3 "b = bitcast(x, i16)\n", 4, 1, "bitcast: f32 and i16 differ in width"},
    {P3 "b = cast_saturate(x)\n", 4, 5, "cast_saturate takes 2 arguments (a value and a dtype), got 1"},
    {P3 "output y = x\noutput y = i\n", 5, 1, "duplicate output name 'y'"},
    {P3 "input : f32[4]\n", 4, 7, "expected an input name, found ':'"},
    {P3 "symbol\n", 4, 7, "expected a symbol name, found end of line"},
    {P3 "output = \n", 4, 10, "expected an op or 'const', found end of line"},
    {P3 "input y : f32[1, 1, 1, 1, 1, 1, 1, 1, 1]\n", 4, 39, "too many dims (at most 8)"},
    {P3 "h = add(x, x, x, x, x, x, x, x, x)\n", 4, 33, "too many arguments (at most 8)"},
    {P3 "input y : f32[m]\n", 4, 15, "unknown symbol 'm'"},
    {P3 "input y : f32[2 * n]\n", 4, 15, "an input dim must be a size or a symbol"},
    {P3 "e = expand(x, [?, n, 4])\n", 4, 16, "'?' (an inferred dim) is only allowed in reshape"},
    {P3 "r = reshape(x, [n - 5, 4])\n", 4, 17, "dim 0 may be negative"},
    {P3 "r = reshape(x, [4, -n])\n", 4, 20, "dim 1 may be negative"},
    {P3 "r = reshape(x, [n / 0, 4])\n", 4, 21, "division by zero"},
    {P3 "r = reshape(x, [n / (1 - 3), 4])\n", 4, 21, "division by a negative number"},
    {P3 "r = reshape(x, [n + , 4])\n", 4, 21, "expected a dim (an integer, a symbol or '('), found ','"},
    {P3 "r = reshape(x, [(n * 4, 4])\n", 4, 23, "expected ')', found ','"},
    {P3 "h = neg(@)\n", 4, 9, "expected a value name, found '@'"},
    {P3 "h = neg(x) \x01\n", 4, 12, "unexpected '\\x01' after the statement"},
    {P3 "input %y : f32[4]\n", 4, 7, "an input name '%y' has a '%' (reserved for unnamed values, as in %3)"},
    {P3 "output %3 = x\n", 4, 8, "an output name '%3' has a '%'"},
    {P3 "a%b = neg(x)\n", 4, 1, "value name 'a%b' has a '%'"},
    {P3 "output zz\n", 4, 8, "unknown name 'zz'"},
    {P3 "s = slice(x, 0, 1, 2)\n", 4, 5, "slice takes 5 arguments (a value, dim, start, stop and step), got fewer"},
    {P3 "s = slice(x, 0, 1, 2, 1, 1)\n", 4, 5, "slice takes 5 arguments (a value, dim, start, stop and step), got more"},
    {P3 "s = slice(x, 0, 0, 4, 0)\n", 4, 1, "slice: step is 0"},
    {P3 "s = slice(x, 9, 0, 4, 1)\n", 4, 14, "dim 9 is not a dim (at most 8 dims)"},
    {P3 "s = slice(x, 1, 0, 4, 1.5)\n", 4, 23, "bad number '1.5' (an integer is expected)"},
    {P3 "s = slice(x, 1, 0, 9223372036854775808, 1)\n", 4, 20, "number '9223372036854775808' is out of range"},
    {P3 "s = slice(x, 1, -9223372036854775809, 4, 1)\n", 4, 18, "number '9223372036854775809' is out of range"},
    {P3 "s = slice(x, 1, 0, 4, -)\n", 4, 24, "expected an integer, found ')'"},
    {P3 "s = slice(x, 1, 0, 4, 1\n", 4, 24, "unterminated argument list: expected ')', found end of line"},
    {P3 "c = concat(x, 0)\n", 4, 12, "expected '[', found 'x'"},
    {P3 "c = concat([x, i], 0)\n", 4, 1, "concat: value 1 is i32, value 0 is f32"},
    {P3 "c = concat([], 0)\n", 4, 1, "concat: no values"},
    {P3 "c = concat([x, x])\n", 4, 5, "concat takes 2 arguments (a value and a dim), got 1"},
    {P3 "c = concat([x, y], 0)\n", 4, 16, "unknown name 'y'"},
    {P3 "p = pad(x, [1], 0)\n", 4, 5, "pad takes amounts in (before, after) pairs, got 1 amounts"},
    {P3 "p = pad(x, [1, 1])\n", 4, 5, "pad takes 3 arguments (a value, a list of amounts and the pad value), got fewer"},
    {P3 "p = pad(x, [1, 1], 0, 0)\n", 4, 5, "pad takes 3 arguments (a value, a list of amounts and the pad value), got more"},
    {P3 "p = pad(x, [1, 1, 1, 1, 1, 1], 0)\n", 4, 1, "pad: 3 pairs of amounts for a tensor of 2 dims"},
    {P3 "p = pad(x, [0, 0, -1, 0], 0)\n", 4, 1, "pad: dim 0 is symbolic"},
    {P3 "p = pad(i, [1, 1], nan)\n", 4, 1, "pad: NaN is not a value of i32"},
    {P3 "p = pad(x, [a, 1], 0)\n", 4, 13, "expected an integer, found 'a'"},
    {P3 "r = reshape(x, [ic_min(n, 4, 4])\n", 4, 28, "expected ')', found ','"},
    {P3 "r = reshape(x, [ic_max(n - 9, -1), 4])\n", 4, 17, "dim 0 may be negative"},
    {"  foo = bar(x)", 1, 9, "unknown op 'bar'"},
    {"# hi\n\n  \nh = 1\n", 4, 5, "expected an op or 'const', found '1'"},
    {"symbol n\r\ninput x : f32[n]\r\nh = neg(y)\r\n", 3, 9, "unknown name 'y'"},
};

START_TEST(test_parse_errors) {
  for (size_t i = 0; i < sizeof error_cases / sizeof *error_cases; i++) {
    const error_case *c = &error_cases[i];
    ic_graph *g = (ic_graph *)1;
    ic_status st = ic_graph_parse(c->text, &g);
    ck_assert_msg(st == IC_ERR_INVALID_GRAPH, "case %zu: status %d (%s)", i, (int)st, ic_last_error());
    ck_assert_ptr_null(g);
    /* the position exactly; the message may carry the builder's prefix ("permute: ") */
    char where[64];
    snprintf(where, sizeof where, "line %d, column %d: ", c->line, c->column);
    const char *got = ic_last_error();
    ck_assert_msg(strncmp(got, where, strlen(where)) == 0 && strstr(got + strlen(where), c->message),
                  "case %zu:\n  got  %s\n  want %s%s", i, got, where, c->message);
  }
}
END_TEST

/* Nesting that would exhaust the C stack is refused; long lines and names are fine. */
START_TEST(test_parse_deep_and_long) {
  size_t depth = 100000;
  char *text = malloc(depth * 2 + 64);
  size_t o = (size_t)sprintf(text, "input y : f32[");
  memset(text + o, '(', depth);
  o += depth;
  strcpy(text + o, "1");
  ic_graph *g = (ic_graph *)1;
  ck_assert_int_eq(ic_graph_parse(text, &g), IC_ERR_INVALID_GRAPH);
  ck_assert_ptr_null(g);
  ck_assert_str_eq(ic_last_error(), "line 1, column 80: dim expression nested too deeply (at most 64 levels)");
  /* 60 levels are fine */
  o = (size_t)sprintf(text, "input y : f32[");
  for (int i = 0; i < 60; i++) text[o++] = '(';
  text[o++] = '4';
  for (int i = 0; i < 60; i++) text[o++] = ')';
  strcpy(text + o, "]\n");
  g = parse_ok(text);
  assert_dims(g, 0, 1, (ic_dim[]){4});
  ic_graph_destroy(g);
  /* a 100000-byte name */
  o = (size_t)sprintf(text, "input ");
  memset(text + o, 'a', depth);
  o += depth;
  strcpy(text + o, " : f32[4]\noutput o = ");
  o += strlen(text + o);
  memset(text + o, 'a', depth);
  text[o + depth] = '\0';
  g = parse_ok(text);
  char *printed = assert_round_trip(g);
  ck_assert_uint_eq(strlen(printed), 2 * depth + strlen("input  : f32[4]\noutput o = \n"));
  ic_string_free(printed);
  ic_graph_destroy(g);
  free(text);
}
END_TEST

/* ---------------------------------------------------------------- random graphs */

typedef struct rng {
  uint64_t s;
} rng;

static uint64_t rng_next(rng *r) { /* xorshift64* */
  r->s ^= r->s >> 12;
  r->s ^= r->s << 25;
  r->s ^= r->s >> 27;
  return r->s * 2685821657736338717ull;
}

static uint32_t rng_below(rng *r, uint32_t n) { return (uint32_t)(rng_next(r) >> 33) % n; }

static const ic_dtype random_dtypes[] = {IC_BOOL, IC_I32, IC_F16, IC_BF16, IC_F32};

static ic_dtype random_dtype(rng *r) { return random_dtypes[rng_below(r, 5)]; }

static double random_constant(rng *r) {
  static const double values[] = {0.5, -2, 0, -0.0, 1, 3, 0.1, 1e300, 1e-300, 65504, 7.25, INFINITY, -INFINITY, NAN,
                                  2147483647.0, 5e-324, -1e-5, 3.0e38};
  return values[rng_below(r, sizeof values / sizeof *values)];
}

typedef struct random_graph {
  ic_graph *g;
  int32_t top;       /* the highest value id so far (values 0..top exist) */
  char *names[4096]; /* names given to values (ours, for outputs) */
  int calls, ok;     /* builder calls made and those that succeeded */
} random_graph;

static void record(random_graph *rg, ic_value v) {
  rg->calls++;
  if (v == IC_INVALID_VALUE) return;
  rg->ok++;
  if (v > rg->top) rg->top = v;
}

static ic_value pick(random_graph *rg, rng *r) { return (ic_value)rng_below(r, (uint32_t)rg->top + 1); }

/* A value of dtype dt, or any value after a few misses. */
static ic_value pick_dtype(random_graph *rg, rng *r, ic_dtype dt) {
  ic_value v = pick(rg, r);
  for (int tries = 0; tries < 12 && ic_graph_value_dtype(rg->g, v) != dt; tries++) v = pick(rg, r);
  return v;
}

static void random_view(random_graph *rg, rng *r, const ic_dim *pool, int npool) {
  ic_value a = pick(rg, r);
  int32_t nd = ic_graph_value_ndim(rg->g, a);
  ic_dim dims[IC_MAX_DIMS], out[IC_MAX_DIMS];
  ck_assert_int_eq(ic_graph_value_dims(rg->g, a, dims), IC_OK);
  int nexpr = 0;
  for (int32_t i = 0; i < nd; i++) nexpr += dims[i] == IC_DIM_INFER;
  static const int64_t bounds[] = {0, 1, 2, -1, -3, 5, INT64_MAX, INT64_MIN};
  switch (rng_below(r, 7)) {
  case 4: { /* slice, negative steps too */
    int64_t step = (int64_t)rng_below(r, 3) + 1;
    record(rg, ic_graph_slice(rg->g, a, (int32_t)rng_below(r, (uint32_t)nd + 1) - 1, bounds[rng_below(r, 8)],
                              bounds[rng_below(r, 8)], rng_below(r, 2) ? step : -step));
    break;
  }
  case 5: { /* concat with itself or another value (which may not fit) */
    ic_value b = rng_below(r, 2) ? a : pick(rg, r);
    record(rg, ic_graph_concat(rg->g, 2 + (int32_t)rng_below(r, 2), (ic_value[]){a, b, a}, (int32_t)rng_below(r, 3) - 1));
    break;
  }
  case 6: { /* pad, crops too (which symbolic dims refuse) */
    int64_t lo_hi[4] = {(int64_t)rng_below(r, 4) - 1, (int64_t)rng_below(r, 3), (int64_t)rng_below(r, 3), 0};
    record(rg, ic_graph_pad(rg->g, a, (int32_t)rng_below(r, 3), lo_hi, random_constant(r)));
    break;
  }
  case 0: /* flatten */
    record(rg, ic_graph_reshape(rg->g, a, 1, (ic_dim[]){IC_DIM_INFER}));
    break;
  case 1: { /* add a 1 (an expression dim, if one, is inferred) */
    if (nd == IC_MAX_DIMS || nexpr > 1) break;
    int32_t at = (int32_t)rng_below(r, (uint32_t)nd + 1);
    for (int32_t i = 0, j = 0; i <= nd; i++) out[i] = i == at ? 1 : dims[j++];
    record(rg, ic_graph_reshape(rg->g, a, nd + 1, out));
    break;
  }
  case 2: { /* permute */
    int32_t perm[IC_MAX_DIMS];
    for (int32_t i = 0; i < nd; i++) perm[i] = i;
    for (int32_t i = nd - 1; i > 0; i--) {
      int32_t j = (int32_t)rng_below(r, (uint32_t)i + 1), t = perm[i];
      perm[i] = perm[j], perm[j] = t;
    }
    record(rg, ic_graph_permute(rg->g, a, nd, perm));
    break;
  }
  default: { /* expand: size-1 dims and maybe a new leading one */
    if (nexpr > 0 || nd == IC_MAX_DIMS) break;
    int32_t lead = (int32_t)rng_below(r, 2), k = 0;
    if (lead) out[k++] = pool[rng_below(r, (uint32_t)npool)];
    for (int32_t i = 0; i < nd; i++) out[k++] = dims[i] == 1 ? pool[rng_below(r, (uint32_t)npool)] : dims[i];
    record(rg, ic_graph_expand(rg->g, a, k, out));
    break;
  }
  }
}

/* A random graph from every op, dtype, view, layout and kind of constant. Shapes come
 * from one broadcast-compatible universe so most ops succeed; the calls that fail leave
 * the graph as it was (so the graph equals one built from the good calls alone). */
static void build_random_graph(random_graph *rg, uint64_t seed) {
  rng r = {seed * 0x9E3779B97F4A7C15ull + 12345};
  memset(rg, 0, sizeof *rg);
  rg->g = fresh();
  rg->top = -1;
  ic_dim n = ic_graph_symbol(rg->g, "n"), m = ic_graph_symbol(rg->g, "m");
  if (rng_below(&r, 4) == 0) ic_graph_symbol(rg->g, "k.unused");
  const ic_dim universe[4] = {2, n, m, 4}, pool[] = {1, 2, 3, 4, n, m};
  int npool = (int)(sizeof pool / sizeof *pool);
  int32_t ninputs = 1 + (int32_t)rng_below(&r, 4);
  for (int32_t i = 0; i < ninputs; i++) {
    int32_t nd = (int32_t)rng_below(&r, 5);
    ic_dim dims[4];
    for (int32_t j = 0; j < nd; j++) dims[j] = rng_below(&r, 10) < 3 ? 1 : universe[4 - nd + j];
    char name[16];
    snprintf(name, sizeof name, "in%d", (int)i);
    ic_value v = ic_graph_input(rg->g, name, random_dtype(&r), nd, dims, (ic_layout)rng_below(&r, 3));
    record(rg, v);
    ck_assert_int_ge(v, 0);
    rg->names[v] = copy_string(name);
  }
  int32_t steps = 3 + (int32_t)rng_below(&r, 30);
  for (int32_t s = 0; s < steps && rg->top < 4000; s++) {
    switch (rng_below(&r, 12)) {
    case 0:
      record(rg, ic_graph_constant(rg->g, random_constant(&r), rng_below(&r, 2) ? IC_DTYPE_AUTO : random_dtype(&r)));
      break;
    case 1:
    case 2:
      record(rg, ic_graph_unary(rg->g, (ic_op)rng_below(&r, IC_OP_GELU_TANH + 1), pick(rg, &r)));
      break;
    case 3:
    case 4:
    case 5: {
      ic_value a = pick(rg, &r);
      ic_value b = pick_dtype(rg, &r, ic_graph_value_dtype(rg->g, a));
      ic_op op = (ic_op)(IC_OP_ADD + rng_below(&r, IC_OP_GE - IC_OP_ADD + 1));
      record(rg, rng_below(&r, 2) ? ic_graph_binary(rg->g, op, a, b) : ic_graph_binary(rg->g, op, b, a));
      break;
    }
    case 6: {
      ic_value c = pick_dtype(rg, &r, IC_BOOL), a = pick(rg, &r);
      ic_value b = rng_below(&r, 3) ? pick_dtype(rg, &r, ic_graph_value_dtype(rg->g, a))
                                    : ic_graph_constant(rg->g, random_constant(&r), IC_DTYPE_AUTO);
      record(rg, b);
      record(rg, ic_graph_where(rg->g, c, a, b));
      break;
    }
    case 7: record(rg, ic_graph_cast(rg->g, pick(rg, &r), random_dtype(&r))); break;
    case 8:
    case 9:
    case 10: random_view(rg, &r, pool, npool); break;
    default: {
      ic_value v = pick(rg, &r);
      char name[32];
      snprintf(name, sizeof name, rng_below(&r, 2) ? "v%d" : "layer.%d_out", (int)s);
      rg->calls++;
      if (ic_graph_name_value(rg->g, v, name) == IC_OK) {
        rg->ok++;
        rg->names[v] = copy_string(name);
      }
      break;
    }
    }
  }
  int32_t nout = 1 + (int32_t)rng_below(&r, 3);
  for (int32_t i = 0; i < nout; i++) {
    ic_value v = pick(rg, &r);
    char name[16];
    snprintf(name, sizeof name, "out%d", (int)i);
    const char *use = rg->names[v] && rng_below(&r, 2) ? rg->names[v] : name;
    rg->calls++;
    rg->ok += ic_graph_output(rg->g, use, v) == IC_OK;
  }
}

static void free_random_graph(random_graph *rg) {
  for (int i = 0; i < 4096; i++) free(rg->names[i]);
  ic_graph_destroy(rg->g);
}

START_TEST(test_round_trip_random) {
  int calls = 0, ok = 0;
  int seen_expr_expand = 0, seen_reshape = 0, seen_permute = 0, seen_expand = 0, seen_where = 0, seen_cast = 0,
      seen_nan = 0, seen_weak = 0, seen_named_output = 0, seen_slice = 0, seen_negative_step = 0, seen_concat = 0,
      seen_pad = 0, seen_min_max_dim = 0;
  for (uint64_t seed = 1; seed <= 500; seed++) {
    random_graph rg;
    build_random_graph(&rg, seed);
    calls += rg.calls;
    ok += rg.ok;
    char *text = assert_round_trip(rg.g);
    for (const char *line = text; *line; line = strchr(line, '\n') + 1) {
      char buf[256];
      size_t len = (size_t)(strchr(line, '\n') - line);
      snprintf(buf, sizeof buf, "%.*s", (int)len, line);
      seen_expr_expand += strstr(buf, "= expand(") && strchr(buf, '*');
      seen_negative_step += strstr(buf, "= slice(") && strstr(buf, ", -1)");
      seen_min_max_dim += (strstr(buf, "= reshape(") || strstr(buf, "= expand(")) && strstr(buf, "ic_m");
    }
    seen_slice += strstr(text, "slice(") != NULL;
    seen_concat += strstr(text, "concat(") != NULL;
    seen_pad += strstr(text, "pad(") != NULL;
    seen_reshape += strstr(text, "reshape(") != NULL;
    seen_permute += strstr(text, "permute(") != NULL;
    seen_expand += strstr(text, "expand(") != NULL;
    seen_where += strstr(text, "where(") != NULL;
    seen_cast += strstr(text, "cast(") != NULL;
    seen_nan += strstr(text, "const nan") != NULL;
    seen_weak += strstr(text, "const 0.5\n") != NULL;
    seen_named_output += strstr(text, "\noutput v") != NULL || strstr(text, "\noutput layer") != NULL;
    ic_string_free(text);
    free_random_graph(&rg);
  }
  /* the generator reaches what it should */
  ck_assert_msg(ok * 2 > calls, "only %d of %d builder calls succeeded", ok, calls);
  ck_assert_int_gt(seen_expr_expand, 0);
  ck_assert_int_gt(seen_reshape, 50);
  ck_assert_int_gt(seen_permute, 50);
  ck_assert_int_gt(seen_expand, 50);
  ck_assert_int_gt(seen_where, 20);
  ck_assert_int_gt(seen_cast, 50);
  ck_assert_int_gt(seen_nan, 5);
  ck_assert_int_gt(seen_weak, 5);
  ck_assert_int_gt(seen_named_output, 5);
  ck_assert_int_gt(seen_slice, 50);
  ck_assert_int_gt(seen_negative_step, 5);
  ck_assert_int_gt(seen_concat, 50);
  ck_assert_int_gt(seen_pad, 50);
  ck_assert_int_gt(seen_min_max_dim, 5);
}
END_TEST

/* ---------------------------------------------------------------- fuzz */

static int fuzz_ok, fuzz_errors;

/* Never crashes; OK (and then a canonical text that round-trips) or a positioned error. */
static void check_parse_any(const char *text) {
  ic_graph *g = (ic_graph *)1;
  ic_status st = ic_graph_parse(text, &g);
  if (st != IC_OK) {
    fuzz_errors++;
    ck_assert_msg(st == IC_ERR_INVALID_GRAPH, "status %d for:\n%s", (int)st, text);
    ck_assert_ptr_null(g);
    ck_assert_msg(strncmp(ic_last_error(), "line ", 5) == 0, "unpositioned error '%s'", ic_last_error());
    return;
  }
  fuzz_ok++;
  ck_assert_int_eq(ic_graph_error(g, NULL), IC_OK);
  char *printed = assert_round_trip(g);
  ic_string_free(printed);
  ic_graph_destroy(g);
}

static const char *const fuzz_tokens[] = {
    "(", ")", "[", "]", ",", "=", ":", "?", "*", "/", "-", "+", "%", "#", "\n", " ", "\t", "x", "n", "m", "f16", "bool",
    "0", "1", "4", "99999999999999999999", "1e999", "1e", "0.5", "nan", "inf", "const", "input", "output", "symbol",
    "expand", "reshape", "permute", "cast", "where", "add", "@", "\xff", "%3", "(((((", "-(", "strided", "\r", "?]"};

static size_t mutate(rng *r, char *buf, size_t len, size_t cap) {
  int nmut = 1 + (int)rng_below(r, 3);
  for (int k = 0; k < nmut; k++) {
    size_t at = len ? rng_below(r, (uint32_t)len + 1) : 0;
    switch (rng_below(r, 6)) {
    case 0: { /* delete a few bytes */
      size_t n = 1 + rng_below(r, 5);
      if (at + n > len) n = len - at;
      memmove(buf + at, buf + at + n, len - at - n);
      len -= n;
      break;
    }
    case 1: { /* insert a token */
      const char *t = fuzz_tokens[rng_below(r, sizeof fuzz_tokens / sizeof *fuzz_tokens)];
      size_t n = strlen(t);
      if (len + n >= cap) break;
      memmove(buf + at + n, buf + at, len - at);
      memcpy(buf + at, t, n);
      len += n;
      break;
    }
    case 2: /* replace a byte (never by NUL, which would just end the text) */
      if (at < len) buf[at] = (char)(1 + rng_below(r, 255));
      break;
    case 3: /* truncate */
      len = at;
      break;
    case 4: { /* duplicate the line at `at` */
      size_t s = at, e = at;
      while (s > 0 && buf[s - 1] != '\n') s--;
      while (e < len && buf[e] != '\n') e++;
      if (e < len) e++;
      if (len + (e - s) >= cap) break;
      memmove(buf + e + (e - s), buf + e, len - e);
      memcpy(buf + e, buf + s, e - s);
      len += e - s;
      break;
    }
    default: { /* swap a byte with a later one (reorders tokens and lines) */
      if (len < 2) break;
      size_t b = rng_below(r, (uint32_t)len);
      if (at >= len) at = len - 1;
      char t = buf[at];
      buf[at] = buf[b], buf[b] = t;
      break;
    }
    }
  }
  buf[len] = '\0';
  return len;
}

START_TEST(test_fuzz) {
  rng r = {0x5eed5eed5eedull};
  char buf[8192];
  /* random bytes, over a grammar-heavy alphabet and all of 1..255 */
  static const char alphabet[] = "abxnm_%.0123456789 ()[],=:?*+-/#\n\tconstinputoutputsymbolf16f32";
  for (int i = 0; i < 2000; i++) {
    size_t len = rng_below(&r, 200);
    for (size_t j = 0; j < len; j++)
      buf[j] = i % 2 ? (char)(1 + rng_below(&r, 255)) : alphabet[rng_below(&r, sizeof alphabet - 1)];
    buf[len] = '\0';
    check_parse_any(buf);
  }
  /* mutations of valid texts: the hand-written file, goldens and random graphs */
  char *corpus[16];
  int ncorpus = 0;
  corpus[ncorpus++] = copy_string(hand_written);
  for (uint64_t seed = 1000; seed < 1012; seed++) {
    random_graph rg;
    build_random_graph(&rg, seed);
    corpus[ncorpus++] = print_graph(rg.g);
    free_random_graph(&rg);
  }
  for (int i = 0; i < 4000; i++) {
    const char *src = corpus[i % ncorpus];
    size_t len = strlen(src);
    if (len >= sizeof buf / 2) len = sizeof buf / 2 - 1;
    memcpy(buf, src, len);
    buf[len] = '\0';
    mutate(&r, buf, len, sizeof buf);
    check_parse_any(buf);
  }
  for (int i = 0; i < ncorpus; i++) free(corpus[i]);
  /* both outcomes were exercised */
  ck_assert_int_gt(fuzz_ok, 100);
  ck_assert_int_gt(fuzz_errors, 1000);
}
END_TEST

/* ---------------------------------------------------------------- value names */

START_TEST(test_name_value) {
  ic_graph *g = fresh();
  ic_value x = ic_graph_input(g, "x", IC_F32, 1, (ic_dim[]){4}, 0);
  ic_value e = ic_graph_unary(g, IC_OP_EXP, x);
  ic_value t = ic_graph_unary(g, IC_OP_TANH, x);
  ck_assert_int_eq(ic_graph_name_value(g, e, "e"), IC_OK);
  ck_assert_int_eq(ic_graph_error(g, NULL), IC_OK);
  ck_assert_int_eq(ic_graph_name_value(NULL, e, "z"), IC_ERR_INVALID_ARGUMENT);

  struct {
    ic_value v;
    const char *name;
    const char *message;
  } cases[] = {
      {t, "x", "name 'x' is already the name of value 0"},
      {t, "e", "name 'e' is already the name of value 1"},
      {x, "y", "value 0 is already named 'x'"},
      {e, "e2", "value 1 is already named 'e'"},
      {t, "", "empty name"},
      {t, NULL, "empty name"},
      {t, "%2", "'%2' is not a name"},
      {t, "2t", "'2t' is not a name"},
      {t, "a b", "'a b' is not a name"},
      {t, "a%b", "'a%b' is not a name"},
      {t, "a-b", "'a-b' is not a name"},
      {99, "t", "argument 99 is not a value of this graph"},
      {IC_INVALID_VALUE, "t", "is not a value of this graph"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    ic_graph *h = fresh();
    ic_value hx = ic_graph_input(h, "x", IC_F32, 1, (ic_dim[]){4}, 0);
    ic_value he = ic_graph_unary(h, IC_OP_EXP, hx);
    ic_graph_unary(h, IC_OP_TANH, hx);
    ck_assert_int_eq(ic_graph_name_value(h, he, "e"), IC_OK);
    ck_assert_int_eq(ic_graph_name_value(h, cases[i].v, cases[i].name), IC_ERR_INVALID_GRAPH);
    const char *msg = NULL;
    ck_assert_int_eq(ic_graph_error(h, &msg), IC_ERR_INVALID_GRAPH);
    ck_assert_msg(strstr(msg, cases[i].message) != NULL, "case %zu: '%s' lacks '%s'", i, msg, cases[i].message);
    ck_assert_ptr_nonnull(strstr(ic_last_error(), cases[i].message));
    ic_graph_destroy(h);
  }

  /* names with '.' and '_' are fine; an input cannot take a value's name */
  ck_assert_int_eq(ic_graph_name_value(g, t, "_layer.0.t_"), IC_OK);
  ck_assert_int_eq(ic_graph_input(g, "e", IC_F32, 0, NULL, 0), IC_INVALID_VALUE);
  const char *msg = NULL;
  ic_graph_error(g, &msg);
  ck_assert_str_eq(msg, "ic_graph_input: name 'e' is already the name of value 1");
  ic_graph_destroy(g);

  /* A named weak constant keeps its name; its adopted copy is a new, unnamed value. */
  g = fresh();
  x = ic_graph_input(g, "x", IC_F16, 1, (ic_dim[]){4}, 0);
  ic_value c = ic_graph_constant(g, 2, IC_DTYPE_AUTO);
  ck_assert_int_eq(ic_graph_name_value(g, c, "two"), IC_OK);
  ic_value y = ic_graph_binary(g, IC_OP_MUL, x, c);
  ck_assert_int_eq(ic_graph_name_value(g, y, "y"), IC_OK);
  ck_assert_int_eq(ic_graph_output(g, "y", y), IC_OK);
  char *text = assert_round_trip(g);
  ck_assert_str_eq(text,
                   "input x : f16[4]\n"
                   "two = const 2\n"
                   "%2 = const 2 : f16\n"
                   "%3 = expand(%2, [4])\n"
                   "y = mul(x, %3)\n"
                   "output y\n");
  ic_string_free(text);
  ic_graph_destroy(g);
}
END_TEST

int main(void) {
  Suite *s = suite_create("text");
  TCase *tc = check_tcase("text");
  tcase_add_test(tc, test_golden_print);
  tcase_add_test(tc, test_unsigned_dtypes_text);
  tcase_add_test(tc, test_golden_print_dims_and_constants);
  tcase_add_test(tc, test_print_empty_and_bad_arguments);
  tcase_add_test(tc, test_print_large_dims_round_trip);
  tcase_add_test(tc, test_print_unprintable_names);
  tcase_add_test(tc, test_parse_hand_written);
  tcase_add_test(tc, test_views_text);
  tcase_add_test(tc, test_parse_errors);
  tcase_add_test(tc, test_parse_deep_and_long);
  tcase_add_test(tc, test_round_trip_random);
  tcase_add_test(tc, test_fuzz);
  tcase_add_test(tc, test_name_value);
  suite_add_tcase(s, tc);
  return check_run_suite(s);
}
