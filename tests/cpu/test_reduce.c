/* CPU: reductions (issue 12). The shared cases of tests/reduce_cases.h on the ref backend
 * with host memory (every op x axis set x dtype x keepdim against plain C references,
 * the documented summation order bit for bit, special values, empty and symbolic sizes,
 * strided and broadcast operands, the shorthands), and what needs no GPU: the builder's
 * errors, the text format, fusion groupings (one kernel each, on ref and on a
 * compile-only sm_90a context) and NVRTC compiles of the generated reduction kernels for
 * sm_80 and sm_90a. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "program/program.h"
#include "reduce_cases.h"

#include "check_main.h"

static void setup(void) {
  rc_backend = "ref";
  rc_cross_ref = false;
  ic_context_options o = {.struct_size = sizeof o, .arch = "sm_90a", .flags = IC_CONTEXT_COMPILE_ONLY};
  IC_OK_OR_FAIL(ic_context_create(&o, &rc_ctx));
}

static void teardown(void) {
  ic_context_destroy(rc_ctx);
  rc_ctx = NULL;
}

/* ---------------------------------------------------------------- numbers on ref */

START_TEST(test_matrix_f32) { rc_matrix((const ic_dtype[]){IC_F32}, 1); }
END_TEST

START_TEST(test_matrix_f64) { rc_matrix((const ic_dtype[]){IC_F64}, 1); }
END_TEST

START_TEST(test_matrix_f16) { rc_matrix((const ic_dtype[]){IC_F16}, 1); }
END_TEST

START_TEST(test_matrix_bf16) { rc_matrix((const ic_dtype[]){IC_BF16}, 1); }
END_TEST

START_TEST(test_matrix_f8e4m3) { rc_matrix((const ic_dtype[]){IC_F8E4M3}, 1); }
END_TEST

START_TEST(test_matrix_i32) { rc_matrix((const ic_dtype[]){IC_I32}, 1); }
END_TEST

START_TEST(test_matrix_i64) { rc_matrix((const ic_dtype[]){IC_I64}, 1); }
END_TEST

START_TEST(test_matrix_u8) { rc_matrix((const ic_dtype[]){IC_U8}, 1); }
END_TEST

START_TEST(test_matrix_i8) { rc_matrix((const ic_dtype[]){IC_I8}, 1); }
END_TEST

START_TEST(test_matrix_u16) { rc_matrix((const ic_dtype[]){IC_U16}, 1); }
END_TEST

START_TEST(test_matrix_u32) { rc_matrix((const ic_dtype[]){IC_U32}, 1); }
END_TEST

START_TEST(test_matrix_u64) { rc_matrix((const ic_dtype[]){IC_U64}, 1); }
END_TEST

START_TEST(test_matrix_bool) { rc_matrix((const ic_dtype[]){IC_BOOL}, 1); }
END_TEST

/* the two dtypes rc_dtypes leaves out of the other tables (same code paths as i8 / f8e4m3) */
START_TEST(test_matrix_i16) { rc_matrix((const ic_dtype[]){IC_I16}, 1); }
END_TEST

START_TEST(test_matrix_f8e5m2) { rc_matrix((const ic_dtype[]){IC_F8E5M2}, 1); }
END_TEST

/* Symbolic dims, one compile per axis set, run at many shapes up to 140000 elements (a
 * column reduction of [4096, 33], a middle axis of 1000, rows of 16384); the GPU test
 * runs the larger ones too (rows of 262144 and 300000: G = 2, 10^6 elements);
 * test_summation_order_long_rows has single rows up to 600000 here. */
START_TEST(test_matrix_symbolic_large) { rc_sym_matrix((const ic_dtype[]){IC_F32, IC_I32}, 2, 140000); }
END_TEST

START_TEST(test_strided_broadcast_symbolic_operands) { rc_matrix_sources(rc_dtypes, RC_NDTYPES, true); }
END_TEST

START_TEST(test_special_values) { rc_specials(rc_dtypes, RC_NDTYPES); }
END_TEST

START_TEST(test_symbolic_sizes) {
  for (int i = 0; i < RC_NDTYPES; i++) rc_symbolic(rc_dtypes[i]);
}
END_TEST

/* The documented order bit for bit on single long rows: G = 1 at the largest size that
 * has it (262144), G = 2 (262145, 300000) and G = 3 (L = 3072, not a power of two). */
START_TEST(test_summation_order_long_rows) {
  rc_long_row(IC_F32, 262144, true);
  rc_long_row(IC_F32, 262145, true);
  rc_long_row(IC_F32, 300000, true);
  rc_long_row(IC_F32, 600000, true);
  rc_long_row(IC_F16, 300000, false);
  rc_long_row(IC_BF16, 300000, false);
  rc_long_row(IC_F32, 8191, true);
}
END_TEST

START_TEST(test_shorthands) {
  static const ic_dtype dts[] = {IC_F32, IC_F16, IC_BF16, IC_F64};
  for (int i = 0; i < 4; i++) {
    rc_shorthand_case(dts[i], 7, 1000, false);
    rc_shorthand_case(dts[i], 64, 257, true);
    rc_shorthand_case(dts[i], 3, 1, false);
    rc_softmax_axes_case(dts[i]);
    rc_sum_divide_multiply_case(dts[i], 5, 1000);
    rc_sum_divide_multiply_case(dts[i], 33, 7);
    rc_column_prologue_case(dts[i], 9, 36, 3);
    rc_column_prologue_case(dts[i], 5, 30, 3);
    rc_column_prologue_case(dts[i], 9, 36, 1);
    rc_column_prologue_case(dts[i], 5, 30, 2);
  }
  rc_shorthand_case(IC_F32, 2, 5000, false);
  /* rows too long for a lane group: a kernel a pass (kir_passes_wanted) */
  rc_shorthand_case(IC_F32, 2, 300000, false);
  rc_shorthand_case(IC_BF16, 1, 300007, false);
  /* a symbolic length: the passes or the one kernel, chosen at run time */
  rc_passes_case(IC_F32, 2, 300000);
  rc_passes_case(IC_F32, 2, 1000);
  rc_passes_case(IC_F16, 3, 262145);
}
END_TEST

/* ---------------------------------------------------------------- builder errors */

static bool contains_any(const char *msg, const char *const *words) {
  for (; *words; words++) {
    const char *w = *words;
    size_t n = strlen(w);
    for (const char *p = msg; *p; p++) {
      size_t i = 0;
      while (i < n && p[i] && tolower((unsigned char)p[i]) == tolower((unsigned char)w[i])) i++;
      if (i == n) return true;
    }
  }
  return false;
}

typedef struct bad_case {
  const char *what;
  int kind;
  ic_dtype dt;
  const char *words[4];
} bad_case;

static ic_value build_bad(ic_graph *g, int kind, ic_value x) {
  switch (kind) {
  case 0: return ic_graph_reduce(g, IC_REDUCE_SUM, x, 1, (int32_t[]){2}, 0);
  case 1: return ic_graph_reduce(g, IC_REDUCE_MAX, x, 1, (int32_t[]){-3}, 0);
  case 2: return ic_graph_reduce(g, IC_REDUCE_SUM, x, 2, (int32_t[]){1, 1}, 0);
  case 3: return ic_graph_reduce(g, IC_REDUCE_SUM, x, 2, (int32_t[]){0, -2}, 0);
  case 4: return ic_graph_reduce(g, IC_REDUCE_SUM, x, -1, (int32_t[]){0}, 0);
  case 5: return ic_graph_reduce(g, IC_REDUCE_SUM, x, 1, NULL, 0);
  case 6: return ic_graph_reduce(g, (ic_reduce_op)IC_REDUCE_COUNT, x, 0, NULL, 0);
  case 7: return ic_graph_reduce(g, (ic_reduce_op)-1, x, 0, NULL, 0);
  case 8: return ic_graph_layer_norm(g, x, 3, IC_INVALID_VALUE, IC_INVALID_VALUE, 1e-5);
  case 9: return ic_graph_layer_norm(g, x, 0, IC_INVALID_VALUE, IC_INVALID_VALUE, 1e-5);
  case 10: return ic_graph_rms_norm(g, x, -1, IC_INVALID_VALUE, 1e-5);
  case 11: return ic_graph_var(g, x, 1, (int32_t[]){1}, 1, 0);
  case 12: return ic_graph_std(g, x, 0, NULL, 0, 0);
  case 13: return ic_graph_softmax(g, x, 1);
  case 14: return ic_graph_log_softmax(g, x, 1);
  case 15: return ic_graph_reduce(g, IC_REDUCE_MEAN, x, 1, (int32_t[]){1}, 0);
  case 16: return ic_graph_mean_correction(g, x, 1, (int32_t[]){1}, 1, 0);
  case 17: return ic_graph_softmax(g, x, 2);
  case 18: return ic_graph_reduce(g, IC_REDUCE_ARGMAX, x, 0, NULL, 0);
  case 19: return ic_graph_reduce(g, IC_REDUCE_SUM, x, 3, (int32_t[]){0, 1, 0}, 0);
  case 20: return ic_graph_reduce(g, IC_REDUCE_SUM, IC_INVALID_VALUE, 0, NULL, 0);
  case 21: return ic_graph_reduce(g, IC_REDUCE_SUM, x + 100, 0, NULL, 0);
  case 22: return ic_graph_rms_norm(g, x, 1, IC_INVALID_VALUE, 1e-5);
  case 23: return ic_graph_layer_norm(g, x, 1, IC_INVALID_VALUE, IC_INVALID_VALUE, 1e-5);
  case 25: return ic_graph_mean_correction(g, x, 1, (int32_t[]){1}, INFINITY, 0);
  default: return ic_graph_var(g, x, 1, (int32_t[]){7}, 0, 0);
  }
}

START_TEST(test_builder_errors) {
  static const bad_case cases[] = {
      {"axis out of range", 0, IC_F32, {"axis", "2", NULL}},
      {"negative axis out of range", 1, IC_F32, {"axis", "-3", NULL}},
      {"duplicate axes", 2, IC_F32, {"twice", "duplicate", "more than once", "repeated"}},
      {"duplicate axes, one negative", 3, IC_F32, {"twice", "duplicate", "more than once", "repeated"}},
      {"naxes negative", 4, IC_F32, {"axes", NULL}},
      {"axes NULL with naxes 1", 5, IC_F32, {"NULL", "null", NULL}},
      {"invalid op (COUNT)", 6, IC_F32, {"invalid", "reduction", NULL}},
      {"invalid op (-1)", 7, IC_F32, {"invalid", "reduction", NULL}},
      {"layer_norm nlast 3 of 2 dims", 8, IC_F32, {"nlast", "normalized", "dims", NULL}},
      {"layer_norm nlast 0", 9, IC_F32, {"nlast", "normalized", "dims", NULL}},
      {"rms_norm nlast -1", 10, IC_F32, {"nlast", "normalized", "dims", NULL}},
      {"var of i32", 11, IC_I32, {"i32", "dtype", NULL}},
      {"std of i64", 12, IC_I64, {"i64", "dtype", NULL}},
      {"softmax of bool", 13, IC_BOOL, {"bool", NULL}},
      {"log_softmax of u8", 14, IC_U8, {"u8", NULL}},
      {"mean of i32", 15, IC_I32, {"cast", NULL}},
      {"mean_correction of i8", 16, IC_I8, {"cast", NULL}},
      {"softmax axis out of range", 17, IC_F32, {"axis", NULL}},
      {"argmax of bool", 18, IC_BOOL, {"bool", NULL}},
      {"three axes of two dims", 19, IC_F32, {"axes", "axis", NULL}},
      {"invalid operand", 20, IC_F32, {"invalid", "value", "operand", NULL}},
      {"operand out of range", 21, IC_F32, {"invalid", "value", "operand", NULL}},
      {"rms_norm of i32", 22, IC_I32, {"i32", NULL}},
      {"layer_norm of bool", 23, IC_BOOL, {"bool", NULL}},
      {"var axis 7", 24, IC_F32, {"axis", NULL}},
      {"mean_correction inf", 25, IC_F32, {"finite", NULL}},
  };
  for (int i = 0; i < RC_COUNT(cases); i++) {
    const bad_case *c = &cases[i];
    ic_graph *g;
    IC_OK_OR_FAIL(ic_graph_create(&g));
    ic_value x = ic_graph_input(g, "x", c->dt, 2, (ic_dim[]){4, 5}, IC_LAYOUT_CONTIGUOUS);
    IC_OK_OR_FAIL(ic_graph_output(g, "x_out", ic_graph_unary(g, c->dt == IC_BOOL ? IC_OP_LOGICAL_NOT : IC_OP_ABS, x)));
    char *before = NULL;
    IC_OK_OR_FAIL(ic_graph_print(g, &before));
    ic_value v = build_bad(g, c->kind, x);
    ck_assert_msg(v == IC_INVALID_VALUE, "%s: built value %d", c->what, (int)v);
    const char *msg = NULL;
    ic_status s = ic_graph_error(g, &msg);
    ck_assert_msg(s == IC_ERR_INVALID_GRAPH, "%s: ic_graph_error %s", c->what, ic_status_string(s));
    ck_assert_msg(msg && contains_any(msg, c->words), "%s: the message \"%s\" does not name the problem (%s...)", c->what,
                  msg ? msg : "(null)", c->words[0]);
    /* the graph is as it was: nothing was appended (a shorthand rolls back its nodes) */
    char *after = NULL;
    if (ic_graph_print(g, &after) == IC_OK) {
      ck_assert_msg(strcmp(before, after) == 0, "%s: the graph changed:\n--- before\n%s--- after\n%s", c->what, before,
                    after);
      ic_string_free(after);
    }
    /* a graph holding an error does not compile */
    ic_compile_options o = {.struct_size = sizeof o, .backend = "ref"};
    ic_program *p = (ic_program *)1;
    ck_assert_int_ne(ic_compile(rc_ctx, g, &o, &p), IC_OK);
    ic_string_free(before);
    ic_graph_destroy(g);
  }
  /* A NULL graph. */
  ck_assert_int_eq(ic_graph_reduce(NULL, IC_REDUCE_SUM, 0, 0, NULL, 0), IC_INVALID_VALUE);
  ck_assert_int_eq(ic_graph_softmax(NULL, 0, 0), IC_INVALID_VALUE);
  ck_assert_int_eq(ic_graph_var(NULL, 0, 0, NULL, 0, 0), IC_INVALID_VALUE);
  /* ic_reduce_name */
  ck_assert_str_eq(ic_reduce_name(IC_REDUCE_SUM), "sum");
  ck_assert_str_eq(ic_reduce_name(IC_REDUCE_ARGMIN), "argmin");
  ck_assert_str_eq(ic_reduce_name(IC_REDUCE_ALL), "all");
  ck_assert_str_eq(ic_reduce_name(IC_REDUCE_COUNT), "invalid");
  ck_assert_str_eq(ic_reduce_name((ic_reduce_op)-1), "invalid");
}
END_TEST

/* Dtype acceptance and result dtypes as documented, for every dtype (f8e5m2 and i16
 * too). */
START_TEST(test_dtypes_accepted_and_results) {
  for (size_t di = 0; di < sizeof ref_all_dtypes / sizeof *ref_all_dtypes; di++) {
    ic_dtype dt = ref_all_dtypes[di];
    for (int k = 0; k < RC_NDEFS; k++) {
      const rc_def *d = &rc_defs[k];
      ck_assert_msg(rc_accepts(d, dt) == rc_documented_accepts(d, dt), "%s of %s: accepted %d", d->name,
                    ic_dtype_name(dt), (int)rc_accepts(d, dt));
      if (!rc_accepts(d, dt)) continue;
      ic_graph *g;
      IC_OK_OR_FAIL(ic_graph_create(&g));
      ic_value x = ic_graph_input(g, "x", dt, 3, (ic_dim[]){2, 3, 4}, IC_LAYOUT_CONTIGUOUS);
      ic_value y = rc_build(g, d, x, 1, (int32_t[]){1}, 0);
      ck_assert_int_eq(ic_graph_value_dtype(g, y), rc_result_dtype(d, dt));
      ic_graph_destroy(g);
    }
    /* the shorthands take FLOAT */
    ic_graph *g;
    IC_OK_OR_FAIL(ic_graph_create(&g));
    ic_value x = ic_graph_input(g, "x", dt, 2, (ic_dim[]){2, 3}, IC_LAYOUT_CONTIGUOUS);
    bool fl = rc_is_floating(dt);
    ck_assert_int_eq(ic_graph_softmax(g, x, 1) != IC_INVALID_VALUE, fl);
    ck_assert_int_eq(ic_graph_log_softmax(g, x, 0) != IC_INVALID_VALUE, fl);
    ck_assert_int_eq(ic_graph_layer_norm(g, x, 1, IC_INVALID_VALUE, IC_INVALID_VALUE, 1e-5) != IC_INVALID_VALUE, fl);
    ck_assert_int_eq(ic_graph_rms_norm(g, x, 2, IC_INVALID_VALUE, 1e-5) != IC_INVALID_VALUE, fl);
    ic_graph_destroy(g);
  }
  /* integer sums are i64 (and argmax), whatever the width */
  ic_graph *g;
  IC_OK_OR_FAIL(ic_graph_create(&g));
  ic_value x = ic_graph_input(g, "x", IC_U8, 1, (ic_dim[]){9}, IC_LAYOUT_CONTIGUOUS);
  ck_assert_int_eq(ic_graph_value_dtype(g, ic_graph_reduce(g, IC_REDUCE_SUM, x, 0, NULL, 0)), IC_I64);
  ck_assert_int_eq(ic_graph_value_dtype(g, ic_graph_reduce(g, IC_REDUCE_PROD, x, 0, NULL, 0)), IC_I64);
  ck_assert_int_eq(ic_graph_value_dtype(g, ic_graph_reduce(g, IC_REDUCE_MAX, x, 0, NULL, 0)), IC_U8);
  ck_assert_int_eq(ic_graph_value_dtype(g, ic_graph_reduce(g, IC_REDUCE_ARGMIN, x, 0, NULL, 0)), IC_I64);
  ck_assert_int_eq(ic_graph_value_dtype(g, ic_graph_reduce(g, IC_REDUCE_ALL, x, 0, NULL, 0)), IC_BOOL);
  ic_graph_destroy(g);
}
END_TEST

/* Shapes of results: keepdim, full reductions (naxes 0, axes NULL), a scalar, symbolic
 * dims kept and dropped. */
START_TEST(test_result_shapes) {
  ic_graph *g;
  IC_OK_OR_FAIL(ic_graph_create(&g));
  ic_dim n = ic_graph_symbol(g, "n");
  ic_value x = ic_graph_input(g, "x", IC_F32, 3, (ic_dim[]){n, 5, 7}, IC_LAYOUT_CONTIGUOUS);
  ic_value s0 = ic_graph_input(g, "s0", IC_F32, 0, NULL, IC_LAYOUT_CONTIGUOUS);
  ic_dim d[IC_MAX_DIMS];
  ic_value v = ic_graph_reduce(g, IC_REDUCE_SUM, x, 1, (int32_t[]){-2}, 1);
  ck_assert_int_eq(ic_graph_value_ndim(g, v), 3);
  IC_OK_OR_FAIL(ic_graph_value_dims(g, v, d));
  ck_assert(d[0] == n && d[1] == 1 && d[2] == 7);
  v = ic_graph_reduce(g, IC_REDUCE_MAX, x, 2, (int32_t[]){2, 0}, 0);
  ck_assert_int_eq(ic_graph_value_ndim(g, v), 1);
  IC_OK_OR_FAIL(ic_graph_value_dims(g, v, d));
  ck_assert_int_eq(d[0], 5);
  v = ic_graph_reduce(g, IC_REDUCE_ANY, x, 0, NULL, 0);
  ck_assert_int_eq(ic_graph_value_ndim(g, v), 0);
  v = ic_graph_reduce(g, IC_REDUCE_ALL, x, 0, NULL, 1);
  ck_assert_int_eq(ic_graph_value_ndim(g, v), 3);
  IC_OK_OR_FAIL(ic_graph_value_dims(g, v, d));
  ck_assert(d[0] == 1 && d[1] == 1 && d[2] == 1);
  v = ic_graph_reduce(g, IC_REDUCE_SUM, s0, 0, NULL, 0);
  ck_assert_int_eq(ic_graph_value_ndim(g, v), 0);
  v = ic_graph_var(g, x, 2, (int32_t[]){1, 2}, 1, 0);
  ck_assert_int_eq(ic_graph_value_ndim(g, v), 1);
  IC_OK_OR_FAIL(ic_graph_value_dims(g, v, d));
  ck_assert(d[0] == n);
  v = ic_graph_std(g, x, 1, (int32_t[]){0}, 0, 1);
  IC_OK_OR_FAIL(ic_graph_value_dims(g, v, d));
  ck_assert(ic_graph_value_ndim(g, v) == 3 && d[0] == 1 && d[1] == 5 && d[2] == 7);
  v = ic_graph_softmax(g, x, 0);
  IC_OK_OR_FAIL(ic_graph_value_dims(g, v, d));
  ck_assert(ic_graph_value_ndim(g, v) == 3 && d[0] == n && d[1] == 5 && d[2] == 7);
  v = ic_graph_layer_norm(g, x, 2, IC_INVALID_VALUE, IC_INVALID_VALUE, 1e-5);
  IC_OK_OR_FAIL(ic_graph_value_dims(g, v, d));
  ck_assert(ic_graph_value_ndim(g, v) == 3 && d[0] == n && d[1] == 5 && d[2] == 7);
  ck_assert_int_eq(ic_graph_error(g, NULL), IC_OK);
  ic_graph_destroy(g);
}
END_TEST

/* Empty reductions: sum 0, prod 1, mean NaN, any false, all true (the matrix checks their
 * numbers); max/min/argmax/argmin over a constant size 0 fail when built, and over a
 * symbolic size bound to 0 fail in ic_program_run (rc_symbolic). */
START_TEST(test_empty_reductions) {
  static const ic_reduce_op needs[] = {IC_REDUCE_MAX, IC_REDUCE_MIN, IC_REDUCE_ARGMAX, IC_REDUCE_ARGMIN};
  for (int i = 0; i < 4; i++) {
    for (int shape = 0; shape < 3; shape++) {
      ic_graph *g;
      IC_OK_OR_FAIL(ic_graph_create(&g));
      ic_value x = ic_graph_input(g, "x", IC_F32, 2, (ic_dim[]){shape == 1 ? 0 : 3, shape == 1 ? 3 : 0}, 0);
      int32_t axis = shape == 1 ? 0 : 1;
      ic_value v = shape == 2 ? ic_graph_reduce(g, needs[i], x, 0, NULL, 1) : ic_graph_reduce(g, needs[i], x, 1, &axis, 0);
      ck_assert_msg(v == IC_INVALID_VALUE, "%s over nothing was built", ic_reduce_name(needs[i]));
      const char *msg = NULL;
      ck_assert_int_eq(ic_graph_error(g, &msg), IC_ERR_INVALID_GRAPH);
      ck_assert_ptr_nonnull(msg);
      ck_assert_str_ne(msg, "");
      ic_graph_destroy(g);
    }
    /* over the non-empty dim of an empty tensor: fine (no rows) */
    ic_graph *g;
    IC_OK_OR_FAIL(ic_graph_create(&g));
    ic_value x = ic_graph_input(g, "x", IC_F32, 2, (ic_dim[]){0, 3}, 0);
    ck_assert_int_ne(ic_graph_reduce(g, needs[i], x, 1, (int32_t[]){1}, 0), IC_INVALID_VALUE);
    ck_assert_int_eq(ic_graph_error(g, NULL), IC_OK);
    ic_graph_destroy(g);
  }
  /* the others build over nothing; softmax over a size-0 axis builds its max: refused */
  for (int k = 0; k < RC_NDEFS; k++) {
    if (rc_needs_elements(&rc_defs[k])) continue;
    ic_graph *g;
    IC_OK_OR_FAIL(ic_graph_create(&g));
    ic_value x = ic_graph_input(g, "x", IC_F32, 2, (ic_dim[]){3, 0}, 0);
    ck_assert_msg(rc_build(g, &rc_defs[k], x, 1, (int32_t[]){1}, 0) != IC_INVALID_VALUE, "%s over nothing refused",
                  rc_defs[k].name);
    ic_graph_destroy(g);
  }
}
END_TEST

/* ---------------------------------------------------------------- text format */

static char *print_ok(const ic_graph *g) {
  char *t = NULL;
  ck_assert_msg(ic_graph_print(g, &t) == IC_OK, "print: %s", ic_last_error());
  return t;
}

static ic_graph *parse_ok(const char *text) {
  ic_graph *g = NULL;
  ck_assert_msg(ic_graph_parse(text, &g) == IC_OK, "parse: %s\n--- text:\n%s", ic_last_error(), text);
  return g;
}

static void assert_round_trip(const ic_graph *g) {
  char *a = print_ok(g);
  ic_graph *back = parse_ok(a);
  char *b = print_ok(back);
  ck_assert_msg(strcmp(a, b) == 0, "round trip differs\n--- first\n%s--- second\n%s", a, b);
  ic_string_free(b);
  ic_string_free(a);
  ic_graph_destroy(back);
}

START_TEST(test_text_round_trip) {
  ic_graph *g;
  IC_OK_OR_FAIL(ic_graph_create(&g));
  ic_dim n = ic_graph_symbol(g, "n");
  ic_value x = ic_graph_input(g, "x", IC_F32, 3, (ic_dim[]){n, 6, 7}, IC_LAYOUT_CONTIGUOUS);
  ic_value xi = ic_graph_input(g, "xi", IC_I32, 2, (ic_dim[]){n, 6}, IC_LAYOUT_STRIDED);
  ic_value xs = ic_graph_input(g, "xs", IC_F16, 0, NULL, IC_LAYOUT_CONTIGUOUS);
  ic_value w = ic_graph_input(g, "w", IC_F32, 1, (ic_dim[]){7}, IC_LAYOUT_CONTIGUOUS);
  int outs = 0;
  char name[32];
  for (int op = 0; op < IC_REDUCE_COUNT; op++) {
    for (int keep = 0; keep < 2; keep++) {
      snprintf(name, sizeof name, "%s_%d_a", ic_reduce_name((ic_reduce_op)op), keep);
      ic_value v = ic_graph_reduce(g, (ic_reduce_op)op, x, 2, (int32_t[]){-1, 0}, keep);
      IC_OK_OR_FAIL(ic_graph_output(g, name, v));
      snprintf(name, sizeof name, "%s_%d_b", ic_reduce_name((ic_reduce_op)op), keep);
      IC_OK_OR_FAIL(ic_graph_output(g, name, ic_graph_reduce(g, (ic_reduce_op)op, x, 0, NULL, keep)));
      if (op != IC_REDUCE_MEAN) {
        snprintf(name, sizeof name, "%s_%d_i", ic_reduce_name((ic_reduce_op)op), keep);
        IC_OK_OR_FAIL(ic_graph_output(g, name, ic_graph_reduce(g, (ic_reduce_op)op, xi, 1, (int32_t[]){1}, keep)));
      }
      snprintf(name, sizeof name, "%s_%d_s", ic_reduce_name((ic_reduce_op)op), keep);
      IC_OK_OR_FAIL(ic_graph_output(g, name, ic_graph_reduce(g, (ic_reduce_op)op, xs, 0, NULL, keep)));
      outs += 4;
    }
  }
  IC_OK_OR_FAIL(ic_graph_output(g, "mc1", ic_graph_mean_correction(g, x, 1, (int32_t[]){-2}, 1, 1)));
  IC_OK_OR_FAIL(ic_graph_output(g, "mc_half", ic_graph_mean_correction(g, x, 2, (int32_t[]){1, 2}, 0.5, 0)));
  IC_OK_OR_FAIL(ic_graph_output(g, "mc0", ic_graph_mean_correction(g, x, 1, (int32_t[]){1}, 0, 0)));
  IC_OK_OR_FAIL(ic_graph_output(g, "var", ic_graph_var(g, x, 1, (int32_t[]){-1}, 1, 0)));
  IC_OK_OR_FAIL(ic_graph_output(g, "std", ic_graph_std(g, x, 2, (int32_t[]){0, 2}, 0, 1)));
  IC_OK_OR_FAIL(ic_graph_output(g, "softmax", ic_graph_softmax(g, x, -2)));
  IC_OK_OR_FAIL(ic_graph_output(g, "log_softmax", ic_graph_log_softmax(g, x, 0)));
  IC_OK_OR_FAIL(ic_graph_output(g, "ln", ic_graph_layer_norm(g, x, 1, w, w, 1e-5)));
  IC_OK_OR_FAIL(ic_graph_output(g, "ln2", ic_graph_layer_norm(g, x, 2, IC_INVALID_VALUE, IC_INVALID_VALUE, 1e-6)));
  IC_OK_OR_FAIL(ic_graph_output(g, "rms", ic_graph_rms_norm(g, x, 1, w, 1e-6)));
  const char *msg = NULL;
  ck_assert_msg(ic_graph_error(g, &msg) == IC_OK, "%s", msg);
  assert_round_trip(g);
  char *text = print_ok(g);
  /* negative axes print as the dims they name; keepdim and the correction are spelled */
  ck_assert_msg(strstr(text, "sum(x, [0, 2], keepdim)") != NULL, "%s", text);
  ck_assert_msg(strstr(text, "sum(x, [0, 2])") != NULL, "%s", text);
  ck_assert_msg(strstr(text, "argmin(xi, [1], keepdim)") != NULL, "%s", text);
  ck_assert_msg(strstr(text, "mean(x, [1], keepdim, correction=1)") != NULL, "%s", text);
  ck_assert_msg(strstr(text, "correction=0.5") != NULL, "%s", text);
  ck_assert_msg(strstr(text, "max(xs, [])") != NULL || strstr(text, "max(xs, [], keepdim)") != NULL, "%s", text);
  ic_string_free(text);
  ic_graph_destroy(g);
  (void)outs;
}
END_TEST

START_TEST(test_text_parse) {
  const char *text = "symbol n\n"
                     "input x : f32[n, 4, 6]\n"
                     "input s : f32[]\n"
                     "input b : bool[n, 4]\n"
                     "a = sum(x, [-1], keepdim)\n"
                     "m = mean(x, [0, -1], correction=1)\n"
                     "k = mean(x, [2], keepdim, correction=1)\n"
                     "t = argmax(x, [1])\n"
                     "e = max(s, [])\n"
                     "y = all(b, [0, 1])\n"
                     "c = sum(b, [1])\n"
                     "output a\noutput m\noutput k\noutput t\noutput e\noutput y\noutput c\n";
  ic_graph *g = parse_ok(text);
  ck_assert_int_eq(ic_graph_error(g, NULL), IC_OK);
  char *p = print_ok(g);
  ck_assert_msg(strstr(p, "a = sum(x, [2], keepdim)") != NULL, "%s", p);
  ck_assert_msg(strstr(p, "m = mean(x, [0, 2], correction=1)") != NULL, "%s", p);
  ck_assert_msg(strstr(p, "t = argmax(x, [1])") != NULL, "%s", p);
  ck_assert_msg(strstr(p, "e = max(s, [])") != NULL, "%s", p);
  ic_graph *back = parse_ok(p);
  char *p2 = print_ok(back);
  ck_assert_str_eq(p, p2);
  ic_string_free(p2);
  ic_graph_destroy(back);
  ic_string_free(p);
  /* run it on ref: the parsed graph computes what its C-built twin computes */
  ic_compile_options o = {.struct_size = sizeof o, .backend = "ref"};
  ic_program *prog;
  IC_OK_OR_FAIL(ic_compile(rc_ctx, g, &o, &prog));
  ic_graph_destroy(g);
  float xv[2 * 4 * 6], sv = -2.5f;
  uint8_t bv[8] = {1, 1, 1, 1, 1, 0, 1, 1};
  for (int i = 0; i < 48; i++) xv[i] = (float)((i * 37) % 11) - 5.0f;
  int64_t xs[3] = {2, 4, 6}, bs[2] = {2, 4};
  ic_tensor in[3] = {{xv, IC_F32, 3, xs, NULL}, {&sv, IC_F32, 0, NULL, NULL}, {bv, IC_BOOL, 2, bs, NULL}};
  /* outputs in the order of the output statements; ic allocates them (shape NULL) */
  ic_tensor out[7] = {{NULL, IC_F32, 3, NULL, NULL}, {NULL, IC_F32, 1, NULL, NULL}, {NULL, IC_F32, 3, NULL, NULL},
                      {NULL, IC_I64, 2, NULL, NULL}, {NULL, IC_F32, 0, NULL, NULL}, {NULL, IC_BOOL, 0, NULL, NULL},
                      {NULL, IC_I64, 1, NULL, NULL}};
  static const char *names[7] = {"a", "m", "k", "t", "e", "y", "c"};
  for (int i = 0; i < 7; i++) ck_assert_int_eq(ic_program_output_index(prog, names[i]), i);
  IC_OK_OR_FAIL(ic_program_run(prog, in, 3, out, 7, NULL));
  /* a[0, 0, 0] = the sum of x[0, 0, :] */
  float a00 = -0.0f;
  for (int i = 0; i < 6; i++) a00 += xv[i];
  int ia = ic_program_output_index(prog, "a"), ie = ic_program_output_index(prog, "e"),
      iy = ic_program_output_index(prog, "y"), ic = ic_program_output_index(prog, "c");
  ck_assert_int_eq(out[ia].ndim, 3);
  ck_assert_float_eq(((float *)out[ia].data)[0], a00);
  ck_assert_float_eq(*(float *)out[ie].data, -2.5f);
  ck_assert_int_eq(*(uint8_t *)out[iy].data, 0);
  ck_assert_int_eq(out[ic].dtype, IC_I64);
  ck_assert_int_eq(((int64_t *)out[ic].data)[0], 4);
  ck_assert_int_eq(((int64_t *)out[ic].data)[1], 3);
  for (int i = 0; i < 7; i++) free(out[i].data);
  ic_program_release(prog);
}
END_TEST

/* A statement the parser refuses, and a part of its message ("" for any). */
typedef struct refused_case {
  const char *stmt, *what;
} refused_case;

/* prelude (line - 1 lines), stmt, "output y": refused at line `line`, the message naming
 * `what` ("" for any message). */
static void assert_statement_refused(const char *prelude, int line, const char *stmt, const char *what) {
  char text[512], at[32];
  snprintf(text, sizeof text, "%s%s\noutput y\n", prelude, stmt);
  snprintf(at, sizeof at, "line %d", line);
  ic_graph *g = (ic_graph *)1;
  ic_status s = ic_graph_parse(text, &g);
  ck_assert_msg(s == IC_ERR_INVALID_GRAPH, "'%s' parsed (%s)", stmt, ic_status_string(s));
  ck_assert_ptr_null(g);
  const char *msg = ic_last_error();
  ck_assert_msg(strstr(msg, at) != NULL, "'%s': the error does not name %s: %s", stmt, at, msg);
  ck_assert_msg(strstr(msg, what) != NULL, "'%s': the error does not mention '%s': %s", stmt, what, msg);
}

START_TEST(test_text_parse_errors) {
  static const refused_case bad[] = {
      {"y = sum(x, [1], keepdims)", ""},
      {"y = sum(x, [1], correction=1)", "correction"},
      {"y = max(x, [0], keepdim, correction=1)", "correction"},
      {"y = sum(x, [1, 1])", "twice"},
      {"y = sum(x, [1, -1])", "twice"},
      {"y = sum(x, [2])", "axis"},
      {"y = sum(x, [-3])", "axis"},
      {"y = sum(x, [1], keepdim, keepdim)", "keepdim"},
      {"y = sum(x)", ""},
      {"y = sum(x, 1)", ""},
      {"y = mean(i, [1])", "cast"},
      {"y = sum(x, [1],)", ""},
      {"y = summ(x, [1])", "summ"}, /* as every unknown op */
      {"y = mean(x, [1], correction=)", ""},
      {"y = mean(x, [1], correction=1, correction=2)", ""},
      {"y = argmax(x, [0])", ""},
  };
  /* x has size 0 along dim 0: the last case is an empty argmax */
  for (int i = 0; i < RC_COUNT(bad); i++)
    assert_statement_refused("input x : f32[0, 5]\ninput i : i32[3, 5]\n", 3, bad[i].stmt,
                             strcmp(bad[i].what, "twice") != 0 ? bad[i].what : "");
}
END_TEST

/* The shorthands in the text format build what their C builders build (the same printed
 * decomposition, node for node), with the documented defaults; each bad call is refused
 * with its line. */
START_TEST(test_text_shorthands) {
  const char *text = "symbol n\n"
                     "input x : f32[n, 6, 7]\n"
                     "input w : f32[7]\n"
                     "input s : f64[]\n"
                     "a = softmax(x, -2)\n"
                     "b = log_softmax(x, 0)\n"
                     "c = var(x, [-1])\n"
                     "d = std(x, [0, 2], keepdim, correction=0)\n"
                     "e = var(s, [])\n"
                     "f = layer_norm(x, 1, bias=w, weight=w, eps=1e-3)\n"
                     "g = layer_norm(x, 2)\n"
                     "h = rms_norm(x, 1, weight=w)\n"
                     "k = rms_norm(x, 3, eps=0.5)\n"
                     "output a\noutput b\noutput c\noutput d\noutput e\noutput f\noutput g\noutput h\noutput k\n";
  ic_graph *parsed = parse_ok(text);
  ck_assert_int_eq(ic_graph_error(parsed, NULL), IC_OK);
  ic_graph *g;
  IC_OK_OR_FAIL(ic_graph_create(&g));
  ic_dim n = ic_graph_symbol(g, "n");
  ic_value x = ic_graph_input(g, "x", IC_F32, 3, (ic_dim[]){n, 6, 7}, IC_LAYOUT_CONTIGUOUS);
  ic_value w = ic_graph_input(g, "w", IC_F32, 1, (ic_dim[]){7}, IC_LAYOUT_CONTIGUOUS);
  ic_value sc = ic_graph_input(g, "s", IC_F64, 0, NULL, IC_LAYOUT_CONTIGUOUS);
  ic_value v[9] = {
      ic_graph_softmax(g, x, -2),
      ic_graph_log_softmax(g, x, 0),
      ic_graph_var(g, x, 1, (int32_t[]){-1}, 1, 0), /* correction 1 unless given */
      ic_graph_std(g, x, 2, (int32_t[]){0, 2}, 0, 1),
      ic_graph_var(g, sc, 0, NULL, 1, 0),
      ic_graph_layer_norm(g, x, 1, w, w, 1e-3),
      ic_graph_layer_norm(g, x, 2, IC_INVALID_VALUE, IC_INVALID_VALUE, 1e-5), /* eps 1e-5 unless given */
      ic_graph_rms_norm(g, x, 1, w, 1e-6),                                    /* eps 1e-6 unless given */
      ic_graph_rms_norm(g, x, 3, IC_INVALID_VALUE, 0.5),
  };
  static const char *names[9] = {"a", "b", "c", "d", "e", "f", "g", "h", "k"};
  for (int i = 0; i < 9; i++) {
    IC_OK_OR_FAIL(ic_graph_name_value(g, v[i], names[i]));
    IC_OK_OR_FAIL(ic_graph_output(g, names[i], v[i]));
  }
  char *want = print_ok(g), *got = print_ok(parsed);
  ck_assert_msg(strcmp(want, got) == 0, "parsed shorthands differ from the builders'\n--- built\n%s--- parsed\n%s", want,
                got);
  /* the text shows the decomposition, which parses back to itself */
  ck_assert_msg(strstr(got, "softmax") == NULL && strstr(got, "a = div(") != NULL, "%s", got);
  assert_round_trip(parsed);
  ic_string_free(want);
  ic_string_free(got);
  ic_graph_destroy(g);
  ic_graph_destroy(parsed);

  static const refused_case bad[] = {
      {"y = softmax(x)", "softmax takes 2 arguments (a value and an axis), got 1"},
      {"y = softmax(x, 1, 2)", "got more"},
      {"y = softmax(x, 2)", "axis 2"},
      {"y = log_softmax(x, 9)", "dim 9 is not a dim"},
      {"y = softmax(i, 1)", "dtype i32"},
      {"y = log_softmax(x, 1", "unterminated"},
      {"y = var(x)", "got fewer"},
      {"y = var(x, [])", "list the axes"},
      {"y = std(x, [1], keepdim, keepdim)", "each at most once"},
      {"y = std(x, [1], correction=1, correction=1)", "each at most once"},
      {"y = var(x, [1], correction=)", "bad number"},
      {"y = var(i, [1])", "dtype i32"},
      {"y = var(x, [1, 1])", ""},
      {"y = layer_norm(x)", "got fewer"},
      {"y = layer_norm(x, 1, weight=q)", "unknown name 'q'"},
      {"y = layer_norm(x, 1, weight=w, weight=w)", "each at most once"},
      {"y = layer_norm(x, 1, weight w)", "expected '='"},
      {"y = layer_norm(x, 1, eps=)", "bad number"},
      {"y = layer_norm(x, 3)", "normalized dims"},
      {"y = layer_norm(x, 0)", "normalized dims"},
      {"y = layer_norm(x, 1, weight=w, bias=i)", "i32"},
      {"y = rms_norm(x, 1, bias=w)", "expected weight=W or eps=NUMBER"},
      {"y = rms_norm(x, 1,)", "expected weight=W or eps=NUMBER"},
      {"y = rms_norm(x, 1, eps=1, eps=2)", "each at most once"},
      {"y = rms_norm(x, 1.5)", "an integer is expected"},
      {"y = rms_norm(x, 1, weight=i)", "i32"},
  };
  for (int i = 0; i < RC_COUNT(bad); i++)
    assert_statement_refused("input x : f32[0, 5]\ninput i : i32[3, 5]\ninput w : f32[5]\n", 4, bad[i].stmt, bad[i].what);
}
END_TEST

/* ---------------------------------------------------------------- fusion groupings */

typedef struct grouping {
  const char *name;
  int ops;    /* the nodes the documented decomposition builds: eager kernels */
  int passes; /* fused over one row too long for a lane group: a kernel a pass (kir_passes_wanted) */
} grouping;

static ic_graph *grouping_graph(int which, ic_dtype dt, int64_t rows, int64_t cols) {
  ic_graph *g;
  IC_OK_OR_FAIL(ic_graph_create(&g));
  ic_dim r = rows < 0 ? ic_graph_symbol(g, "rows") : rows;
  ic_value x = ic_graph_input(g, "x", dt, 2, (ic_dim[]){r, cols}, IC_LAYOUT_CONTIGUOUS);
  ic_value w = IC_INVALID_VALUE, b = IC_INVALID_VALUE;
  if (which >= 3 && which != 7) w = ic_graph_input(g, "w", dt, 1, (ic_dim[]){cols}, IC_LAYOUT_CONTIGUOUS);
  if (which == 4) b = ic_graph_input(g, "b", dt, 1, (ic_dim[]){cols}, IC_LAYOUT_CONTIGUOUS);
  ic_value y;
  switch (which) {
  case 0: y = ic_graph_softmax(g, x, -1); break;
  case 1: y = ic_graph_log_softmax(g, x, 1); break;
  case 2: y = ic_graph_layer_norm(g, x, 1, IC_INVALID_VALUE, IC_INVALID_VALUE, 1e-5); break;
  case 3: y = ic_graph_layer_norm(g, x, 1, w, IC_INVALID_VALUE, 1e-5); break;
  case 4: y = ic_graph_layer_norm(g, x, 1, w, b, 1e-5); break;
  case 5: y = ic_graph_rms_norm(g, x, 1, w, 1e-6); break;
  case 6: {
    ic_value s = ic_graph_reduce(g, IC_REDUCE_SUM, x, 1, (int32_t[]){1}, 1);
    y = ic_graph_binary(g, IC_OP_MUL, x, ic_graph_binary(g, IC_OP_DIV, s, ic_graph_constant(g, (double)cols, IC_DTYPE_AUTO)));
    break;
  }
  case 7: y = ic_graph_rms_norm(g, x, 1, IC_INVALID_VALUE, 1e-6); break;
  case 8: y = ic_graph_softmax(g, x, 0); break; /* a column reduction with its epilogue */
  /* without keepdim: the last mean drops the dims itself (a reshape after it was a copy kernel) */
  case 9: y = ic_graph_var(g, x, 1, (int32_t[]){1}, 1.0, 0); break;
  default: y = ic_graph_std(g, x, 1, (int32_t[]){-1}, 0.0, 0); break;
  }
  IC_OK_OR_FAIL(ic_graph_output(g, "y", y));
  return g;
}

static const grouping groupings[] = {
    {"softmax", 5, 3},       /* max, sub, exp, sum, div; passes: max, sum, the elements */
    {"log_softmax", 6, 3},   /* max, sub, exp, sum, log, sub */
    {"layer_norm", 7, 3},    /* mean, sub, mul, mean, add, rsqrt, mul */
    {"layer_norm_w", 8, 3},  /* + mul */
    {"layer_norm_wb", 9, 3}, /* + mul, add */
    {"rms_norm_w", 6, 2},    /* mul, mean, add, rsqrt, mul, mul */
    {"sum_div_mul", 3, 2},   /* sum, div, mul */
    {"rms_norm", 5, 2},      /* mul, mean, add, rsqrt, mul */
    {"softmax_axis0", 5, 1}, /* columns: no passes */
    {"var", 4, 2},           /* mean, sub, mul, mean (correction 1, keepdim off); no element stores */
    {"std", 5, 2},           /* + sqrt */
};

static void check_groupings(ic_context *ctx, const char *be) {
  static const ic_dtype dts[] = {IC_F32, IC_BF16, IC_F16, IC_F64};
  static const int64_t shapes[][2] = {{64, 4096}, {7, 1000}, {-1, 768}, {1, 300000}};
  for (int gi = 0; gi < RC_COUNT(groupings); gi++)
    for (int di = 0; di < 4; di++)
      for (int si = 0; si < 4; si++) {
        ic_graph *g = grouping_graph(gi, dts[di], shapes[si][0], shapes[si][1]);
        for (int mode = 0; mode < 2; mode++) {
          /* NVRTC time: on cuda, f32 for every grouping, bf16 for some (ref checks f16 and
           * f64), and the eager kernel count of f32 softmax (ref checks them all) */
          if (be == NULL && (di >= 2 || (di == 1 && gi % 2 == 1))) continue;
          if (mode && be == NULL && (dts[di] != IC_F32 || gi != 0)) continue;
          ic_compile_options o = {.struct_size = sizeof o, .mode = mode ? IC_MODE_EAGER : IC_MODE_FUSED,
                                  .flags = IC_COMPILE_STRICT, .backend = be};
          ic_program *p;
          ic_status s = ic_compile(ctx, g, &o, &p);
          ck_assert_msg(s == IC_OK, "%s %s %s [%lld, %lld]: %s", groupings[gi].name, be ? be : "cuda",
                        ic_dtype_name(dts[di]), (long long)shapes[si][0], (long long)shapes[si][1], ic_last_error());
          int32_t want = mode ? groupings[gi].ops : shapes[si][1] > 262144 ? groupings[gi].passes : 1;
          ck_assert_msg(ic_program_kernel_count(p) == want, "%s (%s, %s, %s, [%lld, %lld]): %d kernels, want %d",
                        groupings[gi].name, mode ? "eager" : "fused", be ? be : "cuda", ic_dtype_name(dts[di]),
                        (long long)shapes[si][0], (long long)shapes[si][1], (int)ic_program_kernel_count(p), (int)want);
          ic_program_release(p);
        }
        ic_graph_destroy(g);
        if (be == NULL && si > 0) break; /* NVRTC: one shape is enough */
      }
}

START_TEST(test_fusion_groupings_ref) { check_groupings(rc_ctx, "ref"); }
END_TEST

START_TEST(test_fusion_groupings_cuda_sm90a) {
  ic_context_options o = {.struct_size = sizeof o, .arch = "sm_90a", .flags = IC_CONTEXT_COMPILE_ONLY};
  ic_context *ctx;
  IC_OK_OR_FAIL(ic_context_create(&o, &ctx));
  check_groupings(ctx, NULL);
  ic_context_destroy(ctx);
}
END_TEST

/* The one launch of a program of one kernel and one size symbol, and its blocks for
 * the symbol's value n. */
static ic_step only_launch(const ic_program *p, int64_t n, int64_t *blocks) {
  ic_step launch = {0};
  int32_t launches = 0;
  for (int32_t s = 0; s < ic_program_step_count(p); s++) {
    ic_step st;
    IC_OK_OR_FAIL(ic_program_step(p, s, &st));
    if (st.kind != IC_STEP_LAUNCH) continue;
    launch = st;
    launches++;
  }
  ck_assert_int_eq(launches, 1);
  IC_OK_OR_FAIL(ic_program_eval(p, launch.grid_expr, &n, blocks));
  return launch;
}

/* Threads a row from the row's bytes (kir_reduce_strategy_of): a thread holds 128 bytes
 * of a row of 4096 (f32: 128 threads of 4 lanes; bf16: 64 of 8, kept as storage words),
 * and a bf16 row of 8192 stays at 128 threads of 8 lanes (16 would not fit the registers).
 * The summation order is the lanes' and does not change (the ref backend's bits). */
START_TEST(test_row_threads_from_bytes) {
  /* scattered: the lane blocks combine by scattering (8 or more a thread); copy: the
   * stores pass has its copy for aligned rows of whole chunks (a vector load of 1- or
   * 2-byte elements in it: the weight) */
  static const struct {
    ic_dtype dt;
    int64_t len;
    const char *strategy;
    int64_t rows_a_block;
    bool scattered, copy;
  } cases[] = {
      {IC_F32, 4096, "strategy rows: 128 threads a row, 4 lanes a thread", 1, false, false},
      {IC_BF16, 4096, "strategy rows: 64 threads a row, 8 lanes a thread", 1, true, true},
      {IC_BF16, 8192, "strategy rows: 128 threads a row, 8 lanes a thread", 1, true, true},
      {IC_F8E4M3, 1000, "strategy rows: 64 threads a row, 2 lanes a thread", 1, false, true},
      {IC_F32, 300, "strategy rows: 64 threads a row\n", 1, false, false},
      {IC_F32, 200, "strategy rows: 32 threads a row\n", 4, false, false},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    ic_graph *g;
    IC_OK_OR_FAIL(ic_graph_create(&g));
    ic_value x = ic_graph_input(g, "x", cases[i].dt, 2, (ic_dim[]){ic_graph_symbol(g, "n"), cases[i].len}, IC_LAYOUT_CONTIGUOUS);
    ic_value w = ic_graph_input(g, "w", cases[i].dt, 1, (ic_dim[]){cases[i].len}, IC_LAYOUT_CONTIGUOUS);
    IC_OK_OR_FAIL(ic_graph_output(g, "y", ic_graph_rms_norm(g, x, 1, w, 1e-6)));
    ic_compile_options o = {.struct_size = sizeof o, .flags = IC_COMPILE_STRICT};
    ic_program *p;
    IC_OK_OR_FAIL(ic_compile(rc_ctx, g, &o, &p));
    ck_assert_int_eq(ic_program_kernel_count(p), 1);
    ck_assert_msg(strstr(ic_program_kernel_ir(p, 0), cases[i].strategy) != NULL, "%s [n, %lld]: want '%s' in\n%s",
                  ic_dtype_name(cases[i].dt), (long long)cases[i].len, cases[i].strategy, ic_program_kernel_ir(p, 0));
    const char *src = ic_program_kernel_source(p, 0);
    ck_assert_int_eq(strstr(src, "const bool up = (lane & 1) != 0;") != NULL, cases[i].scattered);
    ck_assert_int_eq(strstr(src, "  if (vec_ok && R % 8 == 0) {") != NULL, cases[i].copy);
    /* a row of more than a warp is a block of its own (its combine uses the block's shared
     * memory); rows of a warp or less share blocks of 128 threads */
    int64_t blocks = 0;
    (void)only_launch(p, 40, &blocks);
    ck_assert_int_eq(blocks, 40 / cases[i].rows_a_block);
    ic_program_release(p);
    ic_graph_destroy(g);
  }
}
END_TEST

/* The cache of a long row by target. A row of one block of 512 threads whose registers
 * would leave room for one block a multiprocessor keeps its first chunks in registers and
 * the others in dynamic shared memory, two blocks where they fit (rows of 32000 f32 on
 * sm_90a: 4 chunks of 8), else one with 64 values in registers (rows of 50000, 14
 * chunks). Rows of 16384 (4 chunks, 32 values) keep registers alone, and so do rows whose
 * registers hold every load where the tier would leave one block too (f64 rows of 20000;
 * sm_86's 100 KB and rows of 32000 f32); sm_86 holds one block of rows of 50000. Rows of
 * 1024 threads (65537 to 262144 elements) become clusters of 2 to 8 CTAs on sm_90a (launch
 * blocks: rows times the cluster), and stay as they were on sm_80. Each kernel goes through
 * NVRTC and ptxas for its target (strict compiles). */
/* The shared bytes a block in a cache comment of test_row_cache_tiers ("(N bytes a block"). */
static int shared_of(const char *cache) {
  int shared = 0;
  const char *bytes = cache ? strstr(cache, "(") : NULL;
  if (bytes && sscanf(bytes, "(%d bytes a block", &shared) != 1) shared = -1;
  return shared;
}

START_TEST(test_row_cache_tiers) {
  static const char *const rows512 = "strategy rows: 512 threads a row, 2 lanes a thread", *const rows1024 = "strategy rows: 1024 threads a row\n";
  static const struct {
    const char *arch;
    ic_dtype dt;
    int64_t len;
    const char *strategy;
    const char *cache; /* the source's comment on the cache; NULL: none (registers alone) */
    const char *head;  /* the entry point's attributes */
    int64_t blocks;    /* blocks for 40 rows */
  } cases[] = {
      {"sm_90a", IC_F32, 32000, rows512, "4 .. 7 in shared memory (65536 bytes a block, 2 blocks a multiprocessor)", "__launch_bounds__(512, 2)", 40},
      {"sm_90a", IC_F32, 50000, rows512, "8 .. 13 in shared memory (98304 bytes a block, 1 block a multiprocessor)", "__launch_bounds__(512)", 40},
      {"sm_90a", IC_BF16, 65531, rows512, "8 .. 15 in shared memory (65536 bytes a block, 2 blocks a multiprocessor)", "__launch_bounds__(512, 2)", 40},
      {"sm_90a", IC_F64, 20000, rows512, NULL, "__launch_bounds__(512)", 40},
      {"sm_90a", IC_F64, 40000, rows512, "4 .. 9 in shared memory (196608 bytes a block, 1 block a multiprocessor)", "__launch_bounds__(512)", 40},
      {"sm_90a", IC_F32, 16384, rows512, NULL, "__launch_bounds__(512)", 40},
      {"sm_86", IC_F32, 32000, rows512, NULL, "__launch_bounds__(512)", 40},
      {"sm_86", IC_F32, 50000, rows512, "8 .. 13 in shared memory (98304 bytes a block, 1 block a multiprocessor)", "__launch_bounds__(512)", 40},
      {"sm_80", IC_F32, 65536, rows512, "8 .. 15 in shared memory (131072 bytes a block, 1 block a multiprocessor)", "__launch_bounds__(512)", 40},
      {"sm_90a", IC_F32, 262144, rows1024, "8 .. 31 in shared memory (98304 bytes a block, 2 blocks a multiprocessor)",
       "__cluster_dims__(8, 1, 1) __launch_bounds__(128, 2)", 320},
      {"sm_90a", IC_F32, 100003, rows1024, "8 .. 12 in shared memory (40960 bytes a block, 2 blocks a multiprocessor)",
       "__cluster_dims__(4, 1, 1) __launch_bounds__(256, 2)", 160},
      {"sm_90a", IC_BF16, 262144, rows1024, "16 .. 31 in shared memory (65536 bytes a block, 2 blocks a multiprocessor)",
       "__cluster_dims__(4, 1, 1) __launch_bounds__(256, 2)", 160},
      {"sm_80", IC_F32, 262144, rows1024, NULL, "__launch_bounds__(1024)", 40},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    char what[64];
    snprintf(what, sizeof what, "%s %s [n, %lld]", cases[i].arch, ic_dtype_name(cases[i].dt), (long long)cases[i].len);
    ic_context_options co = {.struct_size = sizeof co, .arch = cases[i].arch, .flags = IC_CONTEXT_COMPILE_ONLY};
    ic_context *ctx;
    IC_OK_OR_FAIL(ic_context_create(&co, &ctx));
    ic_graph *g;
    IC_OK_OR_FAIL(ic_graph_create(&g));
    ic_value x = ic_graph_input(g, "x", cases[i].dt, 2, (ic_dim[]){ic_graph_symbol(g, "n"), cases[i].len}, IC_LAYOUT_CONTIGUOUS);
    IC_OK_OR_FAIL(ic_graph_output(g, "y", ic_graph_log_softmax(g, x, -1)));
    ic_compile_options o = {.struct_size = sizeof o, .flags = IC_COMPILE_STRICT};
    ic_program *p;
    ic_status st = ic_compile(ctx, g, &o, &p);
    ck_assert_msg(st == IC_OK, "%s: %s", what, ic_last_error());
    ck_assert_int_eq(ic_program_kernel_count(p), 1);
    const char *src = ic_program_kernel_source(p, 0);
    ck_assert_msg(strstr(ic_program_kernel_ir(p, 0), cases[i].strategy) != NULL, "%s: %s", what, ic_program_kernel_ir(p, 0));
    if (cases[i].cache)
      ck_assert_msg(strstr(src, cases[i].cache) != NULL, "%s: want '%s'", what, cases[i].cache);
    else
      ck_assert_msg(strstr(src, "ic_tier") == NULL, "%s: a shared-memory tier", what);
    char head[96];
    snprintf(head, sizeof head, "void %s ic_", cases[i].head);
    ck_assert_msg(strstr(src, head) != NULL, "%s: want '%s'", what, head);
    int64_t blocks = 0;
    const ic_step step = only_launch(p, 40, &blocks);
    ck_assert_msg(blocks == cases[i].blocks, "%s: %lld blocks for 40 rows", what, (long long)blocks);
    /* what a launch needs besides the grid, as ic_step says it (and --dump program) */
    ck_assert_int_eq(step.shared_bytes, shared_of(cases[i].cache));
    ck_assert_int_eq(step.cluster, cases[i].blocks / 40);
    char *dump = NULL;
    IC_OK_OR_FAIL(ic_program_dump(p, &dump));
    char launch[64];
    snprintf(launch, sizeof launch, " shared %d bytes\n", shared_of(cases[i].cache));
    ck_assert_msg((strstr(dump, launch) != NULL) == (cases[i].cache != NULL), "%s: %s", what, dump);
    ck_assert_msg((strstr(dump, " clusters of ") != NULL) == (cases[i].blocks > 40), "%s: %s", what, dump);
    ic_string_free(dump);
    ic_program_release(p);
    ic_graph_destroy(g);
    ic_context_destroy(ctx);
  }
}
END_TEST

/* Rows whose chunks are contiguous but not aligned: a constant odd length (every row but
 * the first starts off a 16-byte boundary), in every dtype. Their whole chunks move as the
 * aligned vectors around them (ic_ld_shift; a softmax's stores ic_st_shift), the row
 * tests say so at run time (vrow_ok), and the aligned copy of a pass is left out (vec_ok
 * is the constant false). Strict compiles (NVRTC and ptxas) for sm_80 and sm_90a; the
 * sums over such rows on the ref backend match the documented order bit for bit. */
START_TEST(test_misaligned_rows) {
  static const ic_dtype dts[] = {IC_F32, IC_F64, IC_F16, IC_BF16, IC_F8E4M3, IC_I32, IC_I64, IC_U8, IC_I8, IC_BOOL};
  static const char *const archs[] = {"sm_80", "sm_90a"};
  static const int64_t lens[] = {1031, 4095};
  for (size_t ai = 0; ai < sizeof archs / sizeof *archs; ai++) {
    ic_context_options co = {.struct_size = sizeof co, .arch = archs[ai], .flags = IC_CONTEXT_COMPILE_ONLY};
    ic_context *ctx;
    IC_OK_OR_FAIL(ic_context_create(&co, &ctx));
    for (size_t di = 0; di < sizeof dts / sizeof *dts; di++) {
      const ic_dtype dt = dts[di];
      const int64_t len = lens[di % 2];
      const bool is_float = dt == IC_F32 || dt == IC_F64 || dt == IC_F16 || dt == IC_BF16;
      ic_graph *g;
      IC_OK_OR_FAIL(ic_graph_create(&g));
      ic_value x = ic_graph_input(g, "x", dt, 2, (ic_dim[]){ic_graph_symbol(g, "n"), len}, IC_LAYOUT_CONTIGUOUS);
      IC_OK_OR_FAIL(ic_graph_output(g, "s", ic_graph_reduce(g, IC_REDUCE_SUM, x, 1, (int32_t[]){1}, 1)));
      if (is_float) IC_OK_OR_FAIL(ic_graph_output(g, "y", ic_graph_softmax(g, x, -1)));
      ic_compile_options o = {.struct_size = sizeof o, .flags = IC_COMPILE_STRICT};
      ic_program *p;
      ic_status st = ic_compile(ctx, g, &o, &p);
      ck_assert_msg(st == IC_OK, "%s %s: %s", archs[ai], ic_dtype_name(dt), ic_last_error());
      for (int32_t kk = 0; kk < ic_program_kernel_count(p); kk++) {
        const char *src = ic_program_kernel_source(p, kk);
        ck_assert_msg(strstr(src, "ic_ld_shift(b0 + ") != NULL, "%s %s: no shifted loads\n%s", archs[ai], ic_dtype_name(dt), src);
        ck_assert_msg(strstr(src, "const bool vec_ok = false;") != NULL, "%s %s: vec_ok", archs[ai], ic_dtype_name(dt));
        ck_assert_msg(strstr(src, "const bool shifted = !full && vrow_ok && ") != NULL, "%s %s", archs[ai], ic_dtype_name(dt));
        if (is_float && strstr(src, "ic_st_s") != NULL)
          ck_assert_msg(strstr(src, "ic_st_shift(b") != NULL, "%s %s: no shifted stores", archs[ai], ic_dtype_name(dt));
      }
      ic_program_release(p);
      ic_graph_destroy(g);
    }
    ic_context_destroy(ctx);
  }
  for (size_t di = 0; di < sizeof dts / sizeof *dts; di++)
    rc_matrix_case(dts[di], 2, (const int64_t[]){3, lens[di % 2]}, &(const rc_axes){1, {1}}, 1, RS_CONTIGUOUS, 1u);
  /* the shifted copy only where rows may be misaligned for more than their pointers:
   * symbolic lengths (ic_ld_shift beside the aligned loads), not rows of 4096 (aligned
   * unless a view's pointer is not) nor rows shorter than 256 elements */
  static const struct {
    int64_t len; /* 0: symbolic */
    bool shifted;
  } kinds[] = {{0, true}, {4096, false}, {37, false}, {255, false}, {257, true}};
  for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++) {
    ic_graph *g;
    IC_OK_OR_FAIL(ic_graph_create(&g));
    ic_dim len = kinds[i].len ? kinds[i].len : ic_graph_symbol(g, "m");
    ic_value x = ic_graph_input(g, "x", IC_F32, 2, (ic_dim[]){5, len}, IC_LAYOUT_CONTIGUOUS);
    IC_OK_OR_FAIL(ic_graph_output(g, "y", ic_graph_layer_norm(g, x, 1, IC_INVALID_VALUE, IC_INVALID_VALUE, 1e-5)));
    ic_compile_options o = {.struct_size = sizeof o};
    ic_program *p;
    IC_OK_OR_FAIL(ic_compile(rc_ctx, g, &o, &p));
    const char *src = ic_program_kernel_source(p, ic_program_kernel_count(p) - 1);
    ck_assert_msg((strstr(src, "ic_ld_shift(b0 + ") != NULL) == kinds[i].shifted, "rows of %lld:\n%s", (long long)kinds[i].len, src);
    ck_assert_msg((strstr(src, "const bool vrow_ok = ") != NULL) == kinds[i].shifted, "rows of %lld", (long long)kinds[i].len);
    ic_program_release(p);
    ic_graph_destroy(g);
  }
}
END_TEST

/* Column reductions that read an earlier one (var and std over dim 0: the squares about
 * the mean) run a kernel a pass where the column split may be, each pass one light column
 * reduction that the split serves: var over dim 0 of f32 [n, 1000] is the mean's partials
 * and combine, then the squares'; the one kernel is there too (n small: few rounds), and
 * short constant columns (var over 7 rows) stay one kernel, as do independent column
 * reductions (sum and argmax). The values on ref: test_column_lengths and
 * the matrix (var and std over dim 0 against the references). */
START_TEST(test_column_passes) {
  for (int var = 0; var < 2; var++) {
    ic_graph *g;
    IC_OK_OR_FAIL(ic_graph_create(&g));
    ic_value x = ic_graph_input(g, "x", IC_F32, 2, (ic_dim[]){ic_graph_symbol(g, "n"), 1000}, IC_LAYOUT_CONTIGUOUS);
    if (var) {
      IC_OK_OR_FAIL(ic_graph_output(g, "v", ic_graph_var(g, x, 1, (int32_t[]){0}, 1.0, 0)));
    } else {
      IC_OK_OR_FAIL(ic_graph_output(g, "s", ic_graph_reduce(g, IC_REDUCE_SUM, x, 1, (int32_t[]){0}, 0)));
      IC_OK_OR_FAIL(ic_graph_output(g, "a", ic_graph_reduce(g, IC_REDUCE_ARGMAX, x, 1, (int32_t[]){0}, 0)));
    }
    if (var) { /* over 7 rows: one kernel */
      ic_value s7 = ic_graph_input(g, "s", IC_F32, 2, (ic_dim[]){7, 1000}, IC_LAYOUT_CONTIGUOUS);
      IC_OK_OR_FAIL(ic_graph_output(g, "v7", ic_graph_var(g, s7, 1, (int32_t[]){0}, 1.0, 0)));
    }
    ic_compile_options o = {.struct_size = sizeof o, .flags = IC_COMPILE_STRICT};
    ic_program *p;
    IC_OK_OR_FAIL(ic_compile(rc_ctx, g, &o, &p));
    char *dump = NULL;
    IC_OK_OR_FAIL(ic_program_dump(p, &dump));
    const bool passes = strstr(dump, "_p0_partial grid") && strstr(dump, "_p0_combine grid") &&
                        strstr(dump, "_p1_partial grid") && strstr(dump, "_p1_combine grid");
    ck_assert_msg(passes == (var == 1), "%s", dump);
    /* var: each pass split or whole, the one kernel where n is short; v7's kernel */
    ck_assert_int_eq(ic_program_kernel_count(p), var ? 8 : 1);
    ic_string_free(dump);
    ic_program_release(p);
    ic_graph_destroy(g);
  }
  /* on ref, the passes (at n = 65536 the split runs) against eager's kernels of the
   * decomposition (mean, sub, mul, mean), bit for bit, f32 and bf16, 37 columns */
  static const ic_dtype dts[] = {IC_F32, IC_BF16};
  enum { N = 65536, COLS = 37 };
  uint64_t seed = 0x243f6a8885a308d3ull;
  for (int di = 0; di < 2; di++) {
    const ic_dtype dt = dts[di];
    const size_t es = ic_dtype_size(dt);
    unsigned char *hx = malloc(es * N * COLS), *got[2];
    for (size_t i = 0; i < (size_t)N * COLS; i++) {
      seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
      float f = (float)((double)(seed >> 11) * 0x1p-53 * 6.0 - 2.0 + (double)(i % COLS));
      uint32_t b;
      memcpy(&b, &f, 4);
      uint16_t h = (uint16_t)(b >> 16);
      if (dt == IC_F32) memcpy(hx + 4 * i, &b, 4);
      else memcpy(hx + 2 * i, &h, 2);
    }
    ic_graph *g;
    IC_OK_OR_FAIL(ic_graph_create(&g));
    ic_value x = ic_graph_input(g, "x", dt, 2, (ic_dim[]){ic_graph_symbol(g, "n"), COLS}, IC_LAYOUT_CONTIGUOUS);
    IC_OK_OR_FAIL(ic_graph_output(g, "v", ic_graph_var(g, x, 1, (int32_t[]){0}, 1.0, 0)));
    for (int mode = 0; mode < 2; mode++) {
      ic_compile_options o = {.struct_size = sizeof o, .backend = "ref", .mode = mode ? IC_MODE_EAGER : IC_MODE_FUSED};
      ic_program *p;
      IC_OK_OR_FAIL(ic_compile(rc_ctx, g, &o, &p));
      if (mode == 0) ck_assert_int_gt(ic_program_kernel_count(p), 1);
      got[mode] = malloc(es * COLS);
      memset(got[mode], 0xA5, es * COLS);
      int64_t xs[2] = {N, COLS}, ys[1] = {COLS};
      ic_tensor in = {hx, dt, 2, xs, NULL}, out = {got[mode], dt, 1, ys, NULL};
      IC_OK_OR_FAIL(ic_program_run(p, &in, 1, &out, 1, NULL));
      ic_program_release(p);
    }
    ck_assert_msg(memcmp(got[0], got[1], es * COLS) == 0, "var over dim 0, %s: passes and eager differ", ic_dtype_name(dt));
    free(got[0]);
    free(got[1]);
    free(hx);
    ic_graph_destroy(g);
  }
}
END_TEST

/* Statistics over dim 0 of tall matrices on ref (sum, mean, var and std with corrections
 * 0 and 1; the var and std as a kernel a pass where the column split may be) against the
 * C references, bit for bit: symbolic and constant sizes, f32 and bf16. */
START_TEST(test_tall_column_statistics_ref) {
  static const ic_dtype dts[] = {IC_F32, IC_BF16};
  static const int64_t shapes[][2] = {{65536, 7}, {3001, 1000}};
  static const rc_axes dim0 = {1, {0}};
  const uint32_t stats = 1u << 0 | 1u << 1 | 1u << 10 | 1u << 11 | 1u << 12 | 1u << 13;
  for (int di = 0; di < RC_COUNT(dts); di++)
    for (int si = 0; si < RC_COUNT(shapes); si++)
      rc_matrix_case(dts[di], 2, shapes[si], &dim0, si, si == 0 ? RS_SYMBOLIC : RS_CONTIGUOUS, stats);
}
END_TEST

/* Column kernels read a warp's lanes 8 at a time, 64 loads a round. Rounds start at
 * multiples of 8 chunks, so a column of a constant length that is a multiple of 64 has no
 * ragged round: its kernel has no guarded copy of the round, light (a sum) and heavy (sum
 * and argmax) alike; other lengths, and symbolic ones, keep it. Light kernels' warps take
 * the rounds side by side (as many warps as the first round fills), the warps of heavy
 * kernels and of those that store elements (the mean subtracted back) contiguous shares.
 * Either kernel declares one block a multiprocessor. Strict compiles
 * (NVRTC and ptxas) for sm_90a. */
START_TEST(test_column_rounds) {
  static const struct {
    int64_t len; /* 0: symbolic */
    bool ragged, heavy, centre; /* centre: the sum's mean subtracted back (element stores: shares) */
    int warps; /* a group: rounds as many as their first round of 8 lanes a warp fills; shares 4 (8 heavy) */
  } cases[] = {{4096, false, false, false, 4}, {4160, false, false, false, 4}, {64, false, false, false, 1},
               {100, true, false, false, 2},   {16384, false, false, false, 4}, {4100, true, false, false, 4},
               {4040, true, false, false, 4},  {0, true, false, false, 4},      {4096, false, true, false, 8},
               {4100, true, true, false, 8},   {4096, false, false, true, 4},   {100, true, false, true, 4},
               {64, false, false, true, 4}};
  ic_context_options co = {.struct_size = sizeof co, .arch = "sm_90a", .flags = IC_CONTEXT_COMPILE_ONLY};
  ic_context *ctx;
  IC_OK_OR_FAIL(ic_context_create(&co, &ctx));
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    const bool heavy = cases[i].heavy, shares = heavy || cases[i].centre;
    ic_graph *g;
    IC_OK_OR_FAIL(ic_graph_create(&g));
    ic_dim len = cases[i].len ? cases[i].len : ic_graph_symbol(g, "r");
    ic_value x = ic_graph_input(g, "x", IC_F32, 2, (ic_dim[]){len, ic_graph_symbol(g, "n")}, IC_LAYOUT_CONTIGUOUS);
    ic_value s = ic_graph_reduce(g, IC_REDUCE_SUM, x, 1, (int32_t[]){0}, cases[i].centre);
    IC_OK_OR_FAIL(ic_graph_output(g, "s", cases[i].centre ? ic_graph_binary(g, IC_OP_SUB, x, s) : s));
    if (heavy) IC_OK_OR_FAIL(ic_graph_output(g, "a", ic_graph_reduce(g, IC_REDUCE_ARGMAX, x, 1, (int32_t[]){0}, 0)));
    ic_compile_options o = {.struct_size = sizeof o, .flags = IC_COMPILE_STRICT};
    ic_program *p;
    ic_status st = ic_compile(ctx, g, &o, &p);
    ck_assert_msg(st == IC_OK, "[%lld, n]: %s", (long long)cases[i].len, ic_last_error());
    /* light rounds of at least 4 rounds may split at run time (the columns are a symbol):
     * the stages, then the one kernel (w) */
    const int32_t w = !shares && (cases[i].len == 0 || cases[i].len > 768) ? 2 : 0;
    ck_assert_int_eq(ic_program_kernel_count(p), w + 1);
    char strategy[96];
    snprintf(strategy, sizeof strategy, "strategy columns: %d warps a row, %d rows a block", cases[i].warps, heavy ? 64 : 256);
    ck_assert_msg(strstr(ic_program_kernel_ir(p, w), strategy) != NULL, "[%lld, n]: %s", (long long)cases[i].len,
                  ic_program_kernel_ir(p, w));
    ck_assert_int_eq(strstr(ic_program_kernel_ir(p, w), ", warps in rounds") != NULL, !shares);
    const char *src = ic_program_kernel_source(p, w);
    /* every round reads 8 lanes' chunks (the whole-round copy is always there) */
    const char *round = shares ? "    for (ic_i64 c0 = j; c0 < C; c0 += L)\n" : "    for (ic_i64 c0 = live ? j : C; c0 < C; c0 += L)\n";
    ck_assert_ptr_nonnull(strstr(src, round));
    ck_assert_msg((strstr(src, "    if (c0 + k < C) {") != NULL) == cases[i].ragged, "[%lld, n]%s: ragged round %s",
                  (long long)cases[i].len, heavy ? " heavy" : "", cases[i].ragged ? "missing" : "emitted");
    ck_assert_int_eq(strstr(src, "    if ((c0 + 8) * 8 <= R) {") != NULL, cases[i].ragged);
    /* one block a multiprocessor: ptxas keeps the round's loads in flight */
    char bounds[64];
    snprintf(bounds, sizeof bounds, "void __launch_bounds__(%d, 1) ic_", 32 * cases[i].warps * (heavy ? 2 : 8));
    ck_assert_ptr_nonnull(strstr(src, bounds));
    /* light kernels join a round's warps through shared memory, heavy ones their shares at the end */
    ck_assert_int_eq(strstr(src, "xa[buf + cbase + coly][cp * 32 + colx] = am[cp][0];") != NULL, !shares && cases[i].warps > 1);
    ck_assert_int_eq(strstr(src, "    sa[cbase + coly][colx] = a;") != NULL, shares);
    ic_program_release(p);
    ic_graph_destroy(g);
  }
  ic_context_destroy(ctx);
}
END_TEST

/* Several reductions over the same axes of the same operand are one kernel; over other
 * axes, or of a reduction's result, more. */
START_TEST(test_sibling_reductions_fuse) {
  ic_graph *g;
  IC_OK_OR_FAIL(ic_graph_create(&g));
  ic_value x = ic_graph_input(g, "x", IC_F32, 2, (ic_dim[]){33, 513}, IC_LAYOUT_CONTIGUOUS);
  IC_OK_OR_FAIL(ic_graph_output(g, "s", ic_graph_reduce(g, IC_REDUCE_SUM, x, 1, (int32_t[]){1}, 0)));
  IC_OK_OR_FAIL(ic_graph_output(g, "m", ic_graph_reduce(g, IC_REDUCE_MAX, x, 1, (int32_t[]){-1}, 1)));
  IC_OK_OR_FAIL(ic_graph_output(g, "a", ic_graph_reduce(g, IC_REDUCE_ARGMIN, x, 1, (int32_t[]){1}, 0)));
  IC_OK_OR_FAIL(ic_graph_output(g, "q", ic_graph_reduce(g, IC_REDUCE_SUM, ic_graph_binary(g, IC_OP_MUL, x, x), 1, (int32_t[]){1}, 0)));
  ic_compile_options fo = {.struct_size = sizeof fo, .backend = "ref"}, eo = fo;
  eo.mode = IC_MODE_EAGER;
  ic_program *p;
  IC_OK_OR_FAIL(ic_compile(rc_ctx, g, &fo, &p));
  ck_assert_int_eq(ic_program_kernel_count(p), 1);
  ic_program_release(p);
  IC_OK_OR_FAIL(ic_compile(rc_ctx, g, &eo, &p));
  ck_assert_int_eq(ic_program_kernel_count(p), 5);
  ic_program_release(p);
  ic_graph_destroy(g);
}
END_TEST

/* ---------------------------------------------------------------- two stages */

/* The two-stage cases on ref (the same graphs the GPU test splits): every kind of op. */
START_TEST(test_two_stage_cases_ref) {
  static const struct { ic_dtype dt; ic_reduce_op op; } cases[] = {
      {IC_F32, IC_REDUCE_SUM}, {IC_BF16, IC_REDUCE_MEAN}, {IC_F64, IC_REDUCE_PROD}, {IC_I32, IC_REDUCE_SUM},
      {IC_F32, IC_REDUCE_ARGMAX}, {IC_I32, IC_REDUCE_ARGMIN}, {IC_F16, IC_REDUCE_MAX}, {IC_BOOL, IC_REDUCE_ANY},
      {IC_U8, IC_REDUCE_ALL}, {IC_U64, IC_REDUCE_MAX}, {IC_U32, IC_REDUCE_ARGMIN}};
  for (int c = 0; c < RC_COUNT(cases); c++) {
    rc_two_stage_case(cases[c].dt, cases[c].op, 3, 1);
    rc_two_stage_case(cases[c].dt, cases[c].op, 3, 1001);
    rc_two_stage_case(cases[c].dt, cases[c].op, 1, 300001);
  }
}
END_TEST

/* Which reductions a cuda program splits (kir.h: one REDUCE, row stores only, at most 256
 * rows, more than one lane group possible), and how: a workspace of U = 4 G partials a
 * row (values, and indices for the arg reductions) allocated before the two launches and
 * freed after them, a block a partial and then a block a row. The ref backend never
 * splits. */
/* The temporaries of a program (workspaces, row values, materialized nodes). */
static int32_t program_temps(const ic_program *p) {
  int32_t temps = 0;
  for (int32_t b = 0; b < ic_program_buffer_count(p); b++) {
    ic_buffer_info bi;
    IC_OK_OR_FAIL(ic_program_buffer(p, b, &bi));
    temps += bi.kind == IC_BUFFER_TEMP;
  }
  return temps;
}

static int32_t kernels_of(ic_context *ctx, const char *be, const char *text, ic_program **keep) {
  ic_graph *g;
  IC_OK_OR_FAIL(ic_graph_parse(text, &g));
  ic_compile_options o = {.struct_size = sizeof o, .backend = be, .flags = IC_COMPILE_STRICT};
  ic_program *p;
  ic_status s = ic_compile(ctx, g, &o, &p);
  ck_assert_msg(s == IC_OK, "%s: %s", text, ic_last_error());
  ic_graph_destroy(g);
  int32_t n = ic_program_kernel_count(p);
  if (keep) *keep = p;
  else ic_program_release(p);
  return n;
}

/* A compile-only context for arch (the NVRTC tests). */
static ic_context *compile_only_ctx(const char *arch) {
  ic_context_options co = {.struct_size = sizeof co, .arch = arch, .flags = IC_CONTEXT_COMPILE_ONLY};
  ic_context *ctx;
  IC_OK_OR_FAIL(ic_context_create(&co, &ctx));
  return ctx;
}

START_TEST(test_two_stage_split) {
  ic_context_options co = {.struct_size = sizeof co, .arch = "sm_90a", .flags = IC_CONTEXT_COMPILE_ONLY};
  ic_context *ctx;
  IC_OK_OR_FAIL(ic_context_create(&co, &ctx));
  ic_program *p;
  ck_assert_int_eq(kernels_of(ctx, NULL, "symbol n\ninput x : f32[n]\ny = sum(x, [0])\noutput y\n", &p), 2);
  int64_t n = (int64_t)1 << 28;
  int32_t launches = 0, temps = 0, kinds[8], nsteps = ic_program_step_count(p);
  ck_assert_int_le(nsteps, 8);
  for (int32_t i = 0; i < nsteps; i++) {
    ic_step st;
    IC_OK_OR_FAIL(ic_program_step(p, i, &st));
    kinds[i] = st.kind;
    if (st.kind != IC_STEP_LAUNCH) continue;
    int64_t grid;
    IC_OK_OR_FAIL(ic_program_eval(p, st.grid_expr, &n, &grid));
    ck_assert_int_eq(grid, launches++ == 0 ? 4096 : 1); /* G = 1024 at 2^28 elements */
    ck_assert_int_eq(st.block, 256);
  }
  ck_assert_int_eq(launches, 2);
  ck_assert_int_eq(nsteps, 5);
  ck_assert(kinds[0] == IC_STEP_OUTPUT && kinds[1] == IC_STEP_ALLOC && kinds[2] == IC_STEP_LAUNCH &&
            kinds[3] == IC_STEP_LAUNCH && kinds[4] == IC_STEP_FREE);
  for (int32_t b = 0; b < ic_program_buffer_count(p); b++) {
    ic_buffer_info bi;
    IC_OK_OR_FAIL(ic_program_buffer(p, b, &bi));
    if (bi.kind != IC_BUFFER_TEMP) continue;
    temps++;
    ck_assert_int_eq(bi.dtype, IC_F32);
    int64_t bytes;
    IC_OK_OR_FAIL(ic_program_eval(p, bi.bytes_expr, &n, &bytes));
    ck_assert_int_eq(bytes, 4096 * 4);
    n = 5; /* G = 1 for short rows: U = 4 */
    IC_OK_OR_FAIL(ic_program_eval(p, bi.bytes_expr, &n, &bytes));
    ck_assert_int_eq(bytes, 4 * 4);
  }
  ck_assert_int_eq(temps, 1);
  /* a stage kernel is the cuda backend's: ref refuses one that reaches it */
  backend_state *ref = NULL;
  backend_env env = {0};
  ck_assert_int_eq(backend_ref.open(&env, &ref), IC_OK);
  backend_kernel *bk = NULL;
  ck_assert_int_eq(p->kernels.items[0].kir.stage, KIR_STAGE_PARTIAL);
  ck_assert_int_eq(backend_ref.compile(ref, &p->kernels.items[0].kir, 0, NULL, &bk), IC_ERR_INTERNAL);
  ck_assert_ptr_nonnull(strstr(ic_last_error(), "a stage of a two-stage reduction"));
  ck_assert_ptr_null(bk);
  backend_ref.close(ref);
  char *dump = NULL;
  IC_OK_OR_FAIL(ic_program_dump(p, &dump));
  ck_assert_ptr_nonnull(strstr(dump, "strategy partials: 256 threads a block"));
  ck_assert_ptr_nonnull(strstr(dump, "strategy combine: 256 threads a row"));
  ic_string_free(dump);
  ic_program_release(p);
  /* argmax: values and indices */
  ck_assert_int_eq(kernels_of(ctx, NULL, "symbol n\ninput x : bf16[3, n]\ny = argmax(x, [1])\noutput y\n", &p), 2);
  temps = 0;
  for (int32_t b = 0; b < ic_program_buffer_count(p); b++) {
    ic_buffer_info bi;
    IC_OK_OR_FAIL(ic_program_buffer(p, b, &bi));
    if (bi.kind == IC_BUFFER_TEMP) ck_assert_int_eq(bi.dtype, temps++ == 0 ? IC_F32 : IC_I64);
  }
  ck_assert_int_eq(temps, 2);
  ic_program_release(p);
  /* prologue and epilogue with row values: still two */
  ck_assert_int_eq(kernels_of(ctx, NULL,
                              "symbol n\ninput x : f32[4, n]\ninput s : f32[4, 1]\nq = mul(x, s)\nr = sum(q, [1], keepdim)\n"
                              "y = mul(r, s)\noutput y\n", NULL), 2);
  ck_assert_int_eq(kernels_of(ctx, NULL, "input x : f32[1, 300000]\ny = max(x, [1])\noutput y\n", NULL), 2);
  /* one stage: a constant row of one lane group, many rows, two reductions, element
   * stores, the ref backend */
  ck_assert_int_eq(kernels_of(ctx, NULL, "input x : f32[1, 262144]\ny = sum(x, [1])\noutput y\n", NULL), 1);
  ck_assert_int_eq(kernels_of(ctx, NULL, "symbol n\ninput x : f32[257, n]\ny = sum(x, [1])\noutput y\n", NULL), 1);
  ck_assert_int_eq(kernels_of(ctx, NULL, "symbol n\ninput x : f32[n, 64]\ny = sum(x, [1])\noutput y\n", NULL), 1);
  /* a kernel a pass (kir_passes_wanted), each REDUCE's in two stages: two reductions
   * side by side (nothing read back); a sum divided back (its partial, combine and the
   * pointwise divide); softmax of a vector (max, then the sum of exp(x - max) reading the
   * max back, then the divide reading both); std over everything (the mean read back).
   * A symbolic length holds the one kernel too, last, and the length bound at run time
   * launches one side (kir_passes_when) */
  ck_assert_int_eq(kernels_of(ctx, NULL, "symbol n\ninput x : f32[2, n]\ny = sum(x, [1])\nz = max(x, [1])\noutput y\noutput z\n", &p), 5);
  ck_assert_int_eq(program_temps(p), 2);
  ic_program_release(p);
  ck_assert_int_eq(kernels_of(ctx, NULL, "symbol n\ninput x : f32[2, n]\ny = sum(x, [1], keepdim)\nz = div(x, y)\noutput z\n", &p), 4);
  ck_assert_int_eq(program_temps(p), 2); /* the workspace and the sums */
  ck_assert_int_eq(p->kernels.items[2].kir.reduces, false);
  ic_program_release(p);
  ck_assert_int_eq(kernels_of(ctx, NULL, "symbol n\ninput x : f32[n]\ny = softmax(x, 0)\noutput y\n", &p), 6);
  ck_assert_int_eq(program_temps(p), 4);
  IC_OK_OR_FAIL(ic_program_dump(p, &dump));
  ck_assert_ptr_nonnull(strstr(dump, "ic_k0_p1_partial"));
  ck_assert_ptr_nonnull(strstr(dump, "kernel ic_k0_p2 [n]\n  strategy vector"));
  ic_string_free(dump);
  /* the launches: max partial, combine, sum partial, combine, divide, the one kernel */
  static const int64_t lengths[] = {1000, 262144, 262145, 1 << 26};
  for (int li = 0; li < RC_COUNT(lengths); li++) {
    const bool passes = lengths[li] > 262144;
    const int64_t u = 4 * ((lengths[li] + 262143) / 262144);
    const int64_t want[6] = {passes ? u : 0, passes, passes ? u : 0, passes, passes ? (lengths[li] + 511) / 512 : 0, !passes};
    for (int32_t i = 0, l = 0; i < ic_program_step_count(p); i++) {
      ic_step st;
      IC_OK_OR_FAIL(ic_program_step(p, i, &st));
      if (st.kind != IC_STEP_LAUNCH) continue;
      int64_t grid;
      IC_OK_OR_FAIL(ic_program_eval(p, st.grid_expr, &lengths[li], &grid));
      ck_assert_msg(grid == want[l], "softmax of f32[%lld]: launch %d grid %lld, want %lld", (long long)lengths[li], (int)l,
                    (long long)grid, (long long)want[l]);
      l++;
    }
  }
  ic_program_release(p);
  ck_assert_int_eq(kernels_of(ctx, NULL, "input x : f32[1000, 1000]\ny = std(x, [0, 1])\noutput y\n", NULL), 4);
  ck_assert_int_eq(kernels_of(rc_ctx, "ref", "symbol n\ninput x : f32[n]\ny = softmax(x, 0)\noutput y\n", NULL), 4);
  ck_assert_int_eq(kernels_of(rc_ctx, "ref", "input x : f32[300000]\ny = softmax(x, 0)\noutput y\n", NULL), 3);
  /* not for rows of one lane group, nor for many rows */
  ck_assert_int_eq(kernels_of(ctx, NULL, "input x : f32[2, 262144]\ny = softmax(x, 1)\noutput y\n", NULL), 1);
  ck_assert_int_eq(kernels_of(ctx, NULL, "symbol n\ninput x : f32[257, n]\ny = softmax(x, 1)\noutput y\n", NULL), 1);
  /* columns of a symbolic length split by rounds instead, chosen at run time (test_column_split) */
  ck_assert_int_eq(kernels_of(ctx, NULL, "symbol n\ninput x : f32[n, 8]\ny = sum(x, [0])\noutput y\n", NULL), 3);
  ck_assert_int_eq(kernels_of(rc_ctx, "ref", "symbol n\ninput x : f32[n]\ny = sum(x, [0])\noutput y\n", NULL), 1);
  ic_context_destroy(ctx);
}
END_TEST

START_TEST(test_two_stage_split_passes_nvrtc) {
  ic_context *ctx = compile_only_ctx("sm_90a");
  ic_program *p;
  /* NVRTC: the passes of every shorthand over two rows of a symbolic length, f16, bf16,
   * f64 (f32: test_two_stage_split) */
  static const ic_dtype pass_dts[] = {IC_F16, IC_BF16, IC_F64};
  for (int di = 0; di < RC_COUNT(pass_dts); di++) {
    ic_graph *g;
    IC_OK_OR_FAIL(ic_graph_create(&g));
    ic_dim len = ic_graph_symbol(g, "n");
    ic_value x = ic_graph_input(g, "x", pass_dts[di], 2, (ic_dim[]){2, len}, IC_LAYOUT_CONTIGUOUS);
    ic_value w = ic_graph_input(g, "w", pass_dts[di], 1, (ic_dim[]){len}, IC_LAYOUT_CONTIGUOUS);
    for (int k = 0; k < RC_NSHORTHANDS; k++)
      IC_OK_OR_FAIL(ic_graph_output(g, rc_shorthand_names[k], rc_build_shorthand(g, k, x, w, w, 1, 1e-5)));
    ic_compile_options o = {.struct_size = sizeof o, .flags = IC_COMPILE_STRICT};
    ic_status s = ic_compile(ctx, g, &o, &p);
    ck_assert_msg(s == IC_OK, "passes of %s: %s", ic_dtype_name(pass_dts[di]), ic_last_error());
    ck_assert_int_gt(ic_program_kernel_count(p), 8);
    ic_program_release(p);
    ic_graph_destroy(g);
  }
  ic_context_destroy(ctx);
}
END_TEST

START_TEST(test_two_stage_split_stages_nvrtc) {
  ic_context *ctx = compile_only_ctx("sm_90a");
  /* NVRTC: the stages of every accepted reduction of every dtype (eager: a kernel each) */
  for (int di = 0; di < RC_NDTYPES; di++) {
    ic_graph *g;
    IC_OK_OR_FAIL(ic_graph_create(&g));
    ic_value x = ic_graph_input(g, "x", rc_dtypes[di], 1, (ic_dim[]){ic_graph_symbol(g, "n")}, IC_LAYOUT_CONTIGUOUS);
    for (int k = 0; k < RC_NDEFS; k++)
      if (rc_accepts(&rc_defs[k], rc_dtypes[di]))
        IC_OK_OR_FAIL(ic_graph_output(g, rc_defs[k].name, rc_build(g, &rc_defs[k], x, 0, NULL, 0)));
    ic_compile_options o = {.struct_size = sizeof o, .mode = IC_MODE_EAGER, .flags = IC_COMPILE_STRICT};
    ic_program *pe;
    ic_status s = ic_compile(ctx, g, &o, &pe);
    ck_assert_msg(s == IC_OK, "two stages of %s: %s", ic_dtype_name(rc_dtypes[di]), ic_last_error());
    ic_program_release(pe);
    ic_graph_destroy(g);
  }
  ic_context_destroy(ctx);
}
END_TEST

START_TEST(test_two_stage_split_sm80) {
  ic_context *ctx = compile_only_ctx("sm_80");
  /* NVRTC for sm_80 too: row stages (f32 sum, f64 argmax, i64 prod), column stages (f32,
   * bf16 two columns a thread, u8 four), the one kernel in rounds beside them, and a kernel
   * a pass (f32 softmax of a vector, bf16 std) */
  static const struct { const char *text; int32_t kernels; } sm80[] = {
      {"symbol n\ninput x : f32[n]\ny = sum(x, [0])\noutput y\n", 2},
      {"symbol n\ninput x : f64[3, n]\ny = argmax(x, [1])\noutput y\n", 2},
      {"symbol n\ninput x : i64[n]\ny = prod(x, [0])\noutput y\n", 2},
      {"symbol n\ninput x : f32[n, 256]\ny = sum(x, [0])\noutput y\n", 3},
      {"symbol n\ninput x : bf16[n, 4096]\ny = mean(x, [0])\noutput y\n", 3},
      {"symbol n\ninput x : u8[n, 512]\ny = max(x, [0])\noutput y\n", 3},
      {"symbol n\ninput x : f32[n]\ny = softmax(x, 0)\noutput y\n", 6},
      {"symbol n\ninput x : bf16[2, n]\ny = std(x, [1])\noutput y\n", 5},
  };
  for (int i = 0; i < RC_COUNT(sm80); i++)
    ck_assert_int_eq(kernels_of(ctx, NULL, sm80[i].text, NULL), sm80[i].kernels);
  ic_context_destroy(ctx);
}
END_TEST

/* Light column reductions of few columns over many rows split by rounds (kir.h): the
 * partial stage a block a column block of 128 and round (512 threads), the combine a
 * thread a column (256); U = the rounds over the lanes in use. Where a size is symbolic the program
 * also holds the one kernel (1024 threads), launched last, and the sizes bound at run
 * time launch either it (whole_grid > 0, the stages' grids and the workspace 0) or the
 * stages; whole_grid < 0: no such kernel. Not split: 3 rounds, an index (heavy), 64
 * column blocks, element stores. r: the value of the graph's one symbol, if it has one. */
/* Neighbouring columns a thread (kir_column_pack_of): light column kernels whose loads
 * along the columns are narrower than 4 bytes read them a word at a time, 2 columns of
 * 16-bit values and 4 of bytes (a warp's load 128 bytes of a row), whole kernels in rounds
 * and a split's partial stage alike; a column-at-a-time copy serves odd and misaligned
 * launches (pack_ok); the rows' values after the REDUCE are computed a column at a time.
 * Kernels whose columns differ otherwise (a value a column before the REDUCE, a load
 * across the columns, element stores, an index) and 4-byte loads keep a column a thread.
 * Strict compiles for sm_90a and sm_80 (NVRTC and ptxas). */
/* The column pack's cases, compiled for one arch (a test an arch: each stays short). */
static void column_pack_cases(const char *arch) {
  static const struct {
    const char *text;
    int32_t pack;  /* 1: a column a thread */
    const char *word; /* the load of a packed thread's columns */
  } cases[] = {
      {"symbol n\ninput x : bf16[4096, n]\ny = sum(x, [0])\noutput y\n", 2, "ic_ld_na_s32("},
      {"symbol n\ninput x : f16[n, 64]\ny = max(x, [0])\noutput y\n", 2, "ic_ld_na_s32("},
      {"symbol n\ninput x : f8e4m3[4096, n]\ny = min(x, [0])\noutput y\n", 4, "ic_ld_na_s32("},
      {"symbol n\ninput x : bool[4096, n]\ny = any(x, [0])\noutput y\n", 4, "ic_ld_na_s32("},
      /* bytes beside 16-bit values: 2 columns, the bytes' word 2 bytes */
      {"symbol n\ninput x : bf16[4096, n]\ninput m : u8[4096, n]\nf = cast(m, bf16)\nq = mul(x, f)\ny = sum(q, [0])\noutput y\n", 2,
       "ic_ld_na_s16("},
      /* a middle axis: runs of 34 columns pack, of 33 not (pack_ok would never hold);
       * bytes in runs of 34: 2 columns, 2-byte words */
      {"symbol n\ninput x : bf16[n, 7, 34]\ny = sum(x, [1])\noutput y\n", 2, "ic_ld_na_s32("},
      {"symbol n\ninput x : bf16[n, 7, 33]\ny = sum(x, [1])\noutput y\n", 1, NULL},
      {"symbol n\ninput x : u8[n, 7, 34]\ny = max(x, [1])\noutput y\n", 2, "ic_ld_na_s16("},
      {"symbol n\ninput x : u16[4096, n]\ny = max(x, [0])\noutput y\n", 2, "ic_ld_na_s32("},
      /* a load free of the columns (one a row of x), an epilogue of column values */
      {"symbol n\ninput x : bf16[4096, n]\ninput s : bf16[4096, 1]\nq = mul(x, s)\nr = mean(q, [0], keepdim)\ninput w : f32[1, n]\n"
       "c = cast(r, f32)\ny = mul(c, w)\noutput y\n",
       2, "ic_ld_na_s32("},
      {"symbol n\ninput x : f32[4096, n]\ny = sum(x, [0])\noutput y\n", 1, NULL},
      /* a value a column before the REDUCE */
      {"symbol n\ninput x : bf16[4096, n]\ninput w : bf16[1, n]\nq = mul(x, w)\ny = sum(q, [0])\noutput y\n", 1, NULL},
      /* a transposed read: the columns are not contiguous */
      {"symbol n\ninput x : bf16[n, 4096]\nt = permute(x, [1, 0])\ny = sum(t, [0])\noutput y\n", 1, NULL},
      {"symbol n\ninput x : bf16[4096, n]\ny = argmax(x, [0])\noutput y\n", 1, NULL},
      /* asm in the epilogue (a column at a time, it would define its names twice) */
      {"symbol n\ninput x : bf16[4096, n]\ny = sum(x, [0])\nf = cast(y, f32)\n"
       "q = inline_asm(\".reg .pred p; setp.gt.f32 p, $1, 0f00000000; selp.f32 $0, $1, 0f00000000, p;\", \"=f,f\", [f], [f32])\n"
       "output q\n",
       1, NULL},
      {"symbol n\ninput x : bf16[4096, n]\nm = mean(x, [0], keepdim)\ny = sub(x, m)\noutput y\n", 1, NULL},
  };
  ic_context *ctx = compile_only_ctx(arch);
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    ic_program *p;
    const int32_t kernels = kernels_of(ctx, NULL, cases[i].text, &p);
    /* the reduction is the last kernel (a symbolic column count: the one kernel beside
     * the split's stages) */
    const int32_t w = kernels - 1;
    const char *ir = ic_program_kernel_ir(p, w), *src = ic_program_kernel_source(p, w);
    ck_assert_msg(strstr(ir, "strategy columns") != NULL, "%s: %s", cases[i].text, ir);
    char says[64];
    snprintf(says, sizeof says, ", %d neighbouring rows a thread", (int)cases[i].pack);
    ck_assert_msg((strstr(ir, says) != NULL) == (cases[i].pack > 1), "%s: %s", cases[i].text, ir);
    ck_assert_int_eq(strstr(src, "const bool pack_ok = ") != NULL, cases[i].pack > 1);
    if (cases[i].pack > 1) {
      char first[96];
      snprintf(first, sizeof first, " + colg * 32 + colx) * %d;", (int)cases[i].pack);
      ck_assert_msg(strstr(src, first) != NULL, "%s", cases[i].text);
      ck_assert_msg(strstr(src, cases[i].word) != NULL, "%s: no %s", cases[i].text, cases[i].word);
      ck_assert_ptr_nonnull(strstr(src, "    if (pack_ok) {\n"));
      ck_assert_ptr_nonnull(strstr(src, "if (row_in + cp < rows) {"));
      for (int32_t k = 0; k + 1 < kernels; k++) /* the split's partial stage packs too */
        if (strstr(ic_program_kernel_ir(p, k), "strategy column partials"))
          ck_assert_msg(strstr(ic_program_kernel_ir(p, k), says) != NULL, "%s: %s", cases[i].text, ic_program_kernel_ir(p, k));
    }
    ic_program_release(p);
  }
  ic_context_destroy(ctx);
}

START_TEST(test_column_pack_sm90a) { column_pack_cases("sm_90a"); }
END_TEST

START_TEST(test_column_pack_sm80) { column_pack_cases("sm_80"); }
END_TEST

/* pack: the columns a thread of the partial stage (kir_column_pack_of) */
static void column_split_launches(ic_context *ctx, const char *text, int64_t r, int64_t whole_grid, int64_t partial_grid,
                                  int64_t combine_grid, int64_t temp_bytes, int32_t pack) {
  ic_program *p;
  const int64_t grids[3] = {partial_grid, combine_grid, whole_grid};
  const int32_t blocks[3] = {512, 256, 1024};
  ck_assert_int_eq(kernels_of(ctx, NULL, text, &p), whole_grid < 0 ? 2 : 3);
  int32_t launches = 0;
  for (int32_t i = 0; i < ic_program_step_count(p); i++) {
    ic_step st;
    IC_OK_OR_FAIL(ic_program_step(p, i, &st));
    if (st.kind != IC_STEP_LAUNCH) continue;
    int64_t grid;
    IC_OK_OR_FAIL(ic_program_eval(p, st.grid_expr, &r, &grid));
    ck_assert_msg(grid == grids[launches], "%s, %lld: launch %d grid %lld", text, (long long)r, (int)launches, (long long)grid);
    ck_assert_int_eq(st.block, blocks[launches++]);
  }
  ck_assert_int_eq(launches, whole_grid < 0 ? 2 : 3);
  for (int32_t b = 0; b < ic_program_buffer_count(p); b++) {
    ic_buffer_info bi;
    IC_OK_OR_FAIL(ic_program_buffer(p, b, &bi));
    if (bi.kind != IC_BUFFER_TEMP) continue;
    int64_t bytes;
    IC_OK_OR_FAIL(ic_program_eval(p, bi.bytes_expr, &r, &bytes));
    ck_assert_int_eq(bytes, temp_bytes);
  }
  char *dump = NULL;
  IC_OK_OR_FAIL(ic_program_dump(p, &dump));
  char strategy[128];
  snprintf(strategy, sizeof strategy, "strategy column partials: 4 warps a row, %d rows a block, round u (lanes [32 u, 32 u + 32))",
           128 * (int)pack);
  ck_assert_ptr_nonnull(strstr(dump, strategy));
  ck_assert_int_eq(strstr(dump, "into partial u of U a row, 2 neighbouring rows a thread") != NULL, pack == 2);
  ck_assert_ptr_nonnull(strstr(dump, "strategy column combine: a thread a row over its U partials"));
  ic_string_free(dump);
  ic_program_release(p);
}

START_TEST(test_column_split) {
  ic_context_options co = {.struct_size = sizeof co, .arch = "sm_90a", .flags = IC_CONTEXT_COMPILE_ONLY};
  ic_context *ctx;
  IC_OK_OR_FAIL(ic_context_create(&co, &ctx));
  /* 2048 chunks: 1024 lanes, 32 rounds; 3 partial column blocks, 2 combine blocks */
  column_split_launches(ctx, "input x : f32[16384, 300]\ny = sum(x, [0])\noutput y\n", 0, -1, 96, 2, 300 * 32 * 4, 1);
  /* the same rows as a symbol r: split at r = 16384 (U from r); r = 1024 is 4 rounds (split),
   * r = 768 3 and r = 100 one (the one kernel, no workspace) */
  const char *rows_r = "symbol r\ninput x : f32[r, 300]\ny = sum(x, [0])\noutput y\n";
  column_split_launches(ctx, rows_r, 16384, 0, 96, 2, 300 * 32 * 4, 1);
  column_split_launches(ctx, rows_r, 1024, 0, 12, 2, 300 * 4 * 4, 1);
  column_split_launches(ctx, rows_r, 768, 2, 0, 0, 0, 1);
  column_split_launches(ctx, rows_r, 100, 2, 0, 0, 0, 1);
  /* the columns a symbol c: 63 column blocks (of the one kernel's 256) split, 64 launch the
   * one kernel */
  const char *cols_c = "symbol c\ninput x : f32[4096, c]\ny = sum(x, [0])\noutput y\n";
  column_split_launches(ctx, cols_c, 16128, 0, 126 * 16, 63, 16128 * 16 * 4, 1);
  column_split_launches(ctx, cols_c, 16384, 64, 0, 0, 0, 1);
  /* bf16: blocks of 256 columns (2 a thread), 2 partial column blocks where f32 has 3 */
  column_split_launches(ctx, "input x : bf16[16384, 300]\ny = sum(x, [0])\noutput y\n", 0, -1, 64, 2, 300 * 32 * 4, 2);
  /* 37501 chunks: G = 2, 2048 lanes, 64 rounds (the last ragged) */
  column_split_launches(ctx, "input x : bf16[300001, 33]\ny = max(x, [0])\noutput y\n", 0, -1, 64, 1, 33 * 64 * 4, 1);
  /* 4 rounds, with a prologue and an epilogue of column values */
  column_split_launches(ctx,
                        "input x : f32[1024, 40]\ninput s : f32[1, 40]\nq = mul(x, s)\nr = mean(q, [0], keepdim)\n"
                        "y = mul(r, s)\noutput y\n",
                        0, -1, 4, 1, 40 * 4 * 4, 1);
  static const struct { const char *text; int32_t kernels; } plans[] = {
      /* 63 column blocks split, 64 do not */
      {"input x : f32[4096, 16128]\ny = sum(x, [0])\noutput y\n", 2},
      {"input x : f32[4096, 16384]\ny = sum(x, [0])\noutput y\n", 1},
      {"input x : f32[768, 40]\ny = sum(x, [0])\noutput y\n", 1}, /* 3 rounds */
      {"input x : f32[16384, 300]\ny = argmax(x, [0])\noutput y\n", 1},
      {"input x : f64[16384, 300]\ny = sum(x, [0])\noutput y\n", 1},
      /* symbolic sizes: both sides, unless a constant one rules the split out */
      {"symbol r\ninput x : bf16[r, 16128]\ny = max(x, [0])\noutput y\n", 3},
      {"symbol r\ninput x : f32[r, 16384]\ny = sum(x, [0])\noutput y\n", 1},
      {"symbol c\ninput x : f32[768, c]\ny = sum(x, [0])\noutput y\n", 1},
      {"symbol r\nsymbol c\ninput x : f32[r, c]\ny = sum(x, [0])\noutput y\n", 3},
      {"symbol r\ninput x : f32[r, 300]\ny = argmax(x, [0])\noutput y\n", 1},
      {"input x : f32[16384, 300]\nm = mean(x, [0], keepdim)\ny = sub(x, m)\noutput y\n", 1}, /* element stores */
  };
  for (size_t i = 0; i < sizeof plans / sizeof *plans; i++)
    ck_assert_msg(kernels_of(ctx, NULL, plans[i].text, NULL) == plans[i].kernels, "%s", plans[i].text);
  ic_context_destroy(ctx);
}
END_TEST

/* The column split's cases on ref (the graphs the GPU test splits, smaller). */
START_TEST(test_column_split_cases_ref) {
  static const struct { ic_dtype dt; ic_reduce_op op; } cases[] = {
      {IC_F32, IC_REDUCE_SUM}, {IC_BF16, IC_REDUCE_MEAN}, {IC_F16, IC_REDUCE_MAX}, {IC_F8E4M3, IC_REDUCE_MIN},
      {IC_I32, IC_REDUCE_MAX}, {IC_BOOL, IC_REDUCE_ANY}, {IC_U64, IC_REDUCE_MIN}};
  for (int c = 0; c < RC_COUNT(cases); c++) {
    rc_column_split_case(cases[c].dt, cases[c].op, 1024, 40, 0, 2);
    rc_column_split_case(cases[c].dt, cases[c].op, 300001, 3, 0, 2);
    rc_column_split_case(cases[c].dt, cases[c].op, 5, 40, RC_SYM_ROWS, 3);
    rc_column_split_case(cases[c].dt, cases[c].op, 70001, 3, RC_SYM_ROWS, 3);
    rc_column_split_case(cases[c].dt, cases[c].op, 2048, 5, RC_SYM_ROWS | RC_SYM_COLS, 3);
    if (cases[c].op == IC_REDUCE_SUM || cases[c].op == IC_REDUCE_ANY) /* an empty max is refused at run time */
      rc_column_split_case(cases[c].dt, cases[c].op, 0, 40, RC_SYM_ROWS, 3);
  }
}
END_TEST

/* ---------------------------------------------------------------- NVRTC */

/* Every accepted reduction (and mean_correction, var, std) of every matrix dtype over
 * [n, 7, 33] compiled fused, strict, so that every generated reduction kernel goes
 * through NVRTC: a graph per dtype and axis set (all its ops: one kernel; f8e4m3 on
 * sm_80: two, of half the ops each), the axis sets split between the two archs to keep
 * the cold compile time down (sm_90a: inner for
 * every dtype, all and a strided operand for some; sm_80: outer for every dtype, middle
 * and several for some); single-op kernels (eager) of f32 and bool; a prologue and an
 * epilogue; the shorthands (test_fusion_groupings_cuda_sm90a compiles them for sm_90a). */
/* rc_dtypes: f32 f64 f16 bf16 f8e4m3 i32 i64 u8 i8 bool u16 u32 u64 */
enum {
  DT_F32 = 1u << 0, DT_F64 = 1u << 1, DT_F16 = 1u << 2, DT_BF16 = 1u << 3, DT_F8E4M3 = 1u << 4,
  DT_I32 = 1u << 5, DT_I64 = 1u << 6, DT_U8 = 1u << 7, DT_I8 = 1u << 8, DT_BOOL = 1u << 9, DT_U16 = 1u << 10,
  DT_U32 = 1u << 11, DT_U64 = 1u << 12
};

typedef struct nvrtc_set {
  rc_axes axes;
  int keepdim;
  bool strided; /* a STRIDED [n, 5] operand, reduced over dim 0 (naxes 1) or all */
  uint32_t dtypes; /* bit per rc_dtypes entry; 0: all */
} nvrtc_set;

static void compile_strict(ic_context *ctx, const ic_graph *g, ic_compile_mode mode, const char *what) {
  const char *msg = NULL;
  ck_assert_msg(ic_graph_error(g, &msg) == IC_OK, "%s: %s", what, msg);
  ic_compile_options o = {.struct_size = sizeof o, .mode = mode, .flags = IC_COMPILE_STRICT};
  ic_program *p;
  ic_status s = ic_compile(ctx, g, &o, &p);
  ck_assert_msg(s == IC_OK, "%s (%s): %s: %s", what, mode ? "eager" : "fused", ic_status_string(s), ic_last_error());
  for (int32_t k = 0; k < ic_program_kernel_count(p); k++) ck_assert_ptr_nonnull(ic_program_kernel_source(p, k));
  ic_program_release(p);
}

/* The dtypes of one test of compile_reductions: each arch's sets in several tests, so
 * that each stays short (the heaviest kernels, every reduction of an f32 or f8e4m3 tensor
 * over its middle axis, take NVRTC seconds each: sm_80's sets, which have them, in more). */
enum { DT_FLOATS = 0x1f, DT_INTS = 0x3e0, DT_WIDE_UNSIGNED = 0x1c00 };

static void compile_reductions_of(const char *arch, const nvrtc_set *sets, int nsets, uint32_t eager_dtypes,
                                  uint32_t prologue_dtypes, uint32_t dtypes, int def_first, int def_end) {
  ic_context *ctx = compile_only_ctx(arch);
  for (int di = 0; di < RC_NDTYPES; di++) {
    if (!(dtypes & (1u << di))) continue;
    ic_dtype dt = rc_dtypes[di];
    for (int si = 0; si < nsets; si++) {
      const nvrtc_set *set = &sets[si];
      if (set->dtypes && !(set->dtypes & (1u << di))) continue;
      ic_graph *g;
      IC_OK_OR_FAIL(ic_graph_create(&g));
      ic_dim n = ic_graph_symbol(g, "n");
      ic_value x = set->strided ? ic_graph_input(g, "x", dt, 2, (ic_dim[]){n, 5}, IC_LAYOUT_STRIDED)
                                : ic_graph_input(g, "x", dt, 3, (ic_dim[]){n, 7, 33}, IC_LAYOUT_CONTIGUOUS);
      for (int k = def_first; k < def_end; k++) {
        if (!rc_accepts(&rc_defs[k], dt)) continue;
        IC_OK_OR_FAIL(ic_graph_output(g, rc_defs[k].name,
                                      rc_build(g, &rc_defs[k], x, set->axes.naxes, set->axes.axes, set->keepdim)));
      }
      char what[96], at[32];
      rc_axes_text(&set->axes, at, sizeof at);
      snprintf(what, sizeof what, "%s: every reduction of %s over %s%s", arch, ic_dtype_name(dt), at,
               set->strided ? " (strided)" : "");
      compile_strict(ctx, g, IC_MODE_FUSED, what);
      if (si == 0 && (eager_dtypes & (1u << di))) compile_strict(ctx, g, IC_MODE_EAGER, what);
      ic_graph_destroy(g);
    }
    /* a prologue and an epilogue around a reduction (some dtypes) */
    if (!(prologue_dtypes & (1u << di))) continue;
    ic_graph *g;
    IC_OK_OR_FAIL(ic_graph_create(&g));
    ic_dim n = ic_graph_symbol(g, "n");
    ic_value x = ic_graph_input(g, "x", dt, 2, (ic_dim[]){n, 33}, IC_LAYOUT_CONTIGUOUS);
    if (rc_is_floating(dt)) {
      ic_value s = ic_graph_reduce(g, IC_REDUCE_SUM, ic_graph_unary(g, IC_OP_EXP, x), 1, (int32_t[]){1}, 1);
      IC_OK_OR_FAIL(ic_graph_output(g, "epi", ic_graph_binary(g, IC_OP_MUL, x, ic_graph_unary(g, IC_OP_RECIPROCAL, s))));
    } else {
      ic_value xi = dt == IC_BOOL ? ic_graph_cast(g, x, IC_I32) : x;
      ic_value s = ic_graph_reduce(g, IC_REDUCE_SUM, ic_graph_binary(g, IC_OP_MUL, xi, xi), 1, (int32_t[]){1}, 1);
      IC_OK_OR_FAIL(ic_graph_output(g, "epi", ic_graph_binary(g, IC_OP_ADD, ic_graph_cast(g, x, IC_I64), s)));
    }
    char what[64];
    snprintf(what, sizeof what, "%s: prologue/epilogue %s", arch, ic_dtype_name(dt));
    compile_strict(ctx, g, IC_MODE_FUSED, what);
    ic_graph_destroy(g);
  }
  ic_context_destroy(ctx);
}


/* Every reduction (rc_defs) of each dtype of `dtypes`. */
static void compile_reductions(const char *arch, const nvrtc_set *sets, int nsets, uint32_t eager_dtypes,
                               uint32_t prologue_dtypes, uint32_t dtypes) {
  compile_reductions_of(arch, sets, nsets, eager_dtypes, prologue_dtypes, dtypes, 0, RC_NDEFS);
}

static const nvrtc_set sm80_sets[] = {
    {{1, {0}}, 0, false, 0},
    {{1, {1}}, 1, false, DT_F32 | DT_F8E4M3 | DT_U8},
    {{2, {0, 2}}, 0, false, DT_BF16 | DT_BOOL},
};

START_TEST(test_nvrtc_sm80_f32_f16) {
  compile_reductions("sm_80", sm80_sets, RC_COUNT(sm80_sets), DT_BOOL, DT_F32 | DT_BOOL, DT_F32 | DT_F16);
}
END_TEST

/* f8e4m3 on sm_80 converts in software: its sets' kernels are the heaviest (every
 * reduction in one kernel takes NVRTC 20 s on 2 cores, 80 s under ASan), so each set's
 * reductions come in two halves, a test each (no eager or prologue compile takes f8e4m3
 * on sm_80) */
enum { RC_HALF = RC_NDEFS / 2 };
START_TEST(test_nvrtc_sm80_f8e4m3_axis0_first) {
  compile_reductions_of("sm_80", sm80_sets, 1, 0, 0, DT_F8E4M3, 0, RC_HALF);
}
END_TEST

START_TEST(test_nvrtc_sm80_f8e4m3_axis0_second) {
  compile_reductions_of("sm_80", sm80_sets, 1, 0, 0, DT_F8E4M3, RC_HALF, RC_NDEFS);
}
END_TEST

START_TEST(test_nvrtc_sm80_f8e4m3_axis1_first) {
  compile_reductions_of("sm_80", sm80_sets + 1, 1, 0, 0, DT_F8E4M3, 0, RC_HALF);
}
END_TEST

START_TEST(test_nvrtc_sm80_f8e4m3_axis1_second) {
  compile_reductions_of("sm_80", sm80_sets + 1, 1, 0, 0, DT_F8E4M3, RC_HALF, RC_NDEFS);
}
END_TEST

START_TEST(test_nvrtc_sm80_f64_bf16) {
  compile_reductions("sm_80", sm80_sets, RC_COUNT(sm80_sets), DT_BOOL, DT_F32 | DT_BOOL, DT_F64 | DT_BF16);
}
END_TEST

START_TEST(test_nvrtc_sm80_ints) {
  compile_reductions("sm_80", sm80_sets, RC_COUNT(sm80_sets), DT_BOOL, DT_F32 | DT_BOOL, DT_INTS);
}
END_TEST

/* u16, u32 and u64 (the older sets name the older dtypes only): rows of the middle axis
 * each, a strided column (sm_80) or a full reduction (sm_90a) for one dtype */
static const nvrtc_set unsigned_sets_sm80[] = {
    {{1, {1}}, 1, false, 0},
    {{1, {0}}, 0, true, DT_U64},
};
static const nvrtc_set unsigned_sets_sm90a[] = {
    {{1, {2}}, 1, false, 0},
    {{0, {0}}, 0, false, DT_U32},
};

START_TEST(test_nvrtc_sm80_unsigned) {
  compile_reductions("sm_80", unsigned_sets_sm80, RC_COUNT(unsigned_sets_sm80), DT_U64, DT_WIDE_UNSIGNED, DT_WIDE_UNSIGNED);
}
END_TEST

/* the shorthands for sm_80 (sm_90a: test_fusion_groupings_cuda_sm90a) */
START_TEST(test_nvrtc_sm80_shorthands) {
  ic_context *ctx = compile_only_ctx("sm_80");
  ic_graph *g;
  IC_OK_OR_FAIL(ic_graph_create(&g));
  ic_dim n = ic_graph_symbol(g, "n");
  ic_value x = ic_graph_input(g, "x", IC_F32, 2, (ic_dim[]){n, 1000}, IC_LAYOUT_CONTIGUOUS);
  ic_value w = ic_graph_input(g, "w", IC_F32, 1, (ic_dim[]){1000}, IC_LAYOUT_CONTIGUOUS);
  IC_OK_OR_FAIL(ic_graph_output(g, "softmax", ic_graph_softmax(g, x, -1)));
  IC_OK_OR_FAIL(ic_graph_output(g, "log_softmax", ic_graph_log_softmax(g, x, 0)));
  IC_OK_OR_FAIL(ic_graph_output(g, "ln", ic_graph_layer_norm(g, x, 1, w, w, 1e-5)));
  IC_OK_OR_FAIL(ic_graph_output(g, "rms", ic_graph_rms_norm(g, x, 1, w, 1e-6)));
  compile_strict(ctx, g, IC_MODE_FUSED, "sm_80 shorthands");
  ic_graph_destroy(g);
  ic_context_destroy(ctx);
}
END_TEST

static const nvrtc_set sm90a_sets[] = {
    {{1, {2}}, 1, false, 0},
    {{0, {0}}, 0, false, DT_F16 | DT_F8E4M3 | DT_I64 | DT_BOOL},
    {{1, {0}}, 0, true, DT_F64 | DT_I32 | DT_I8},
};

START_TEST(test_nvrtc_sm90a_floats) {
  compile_reductions("sm_90a", sm90a_sets, RC_COUNT(sm90a_sets), DT_F32, DT_BF16 | DT_I32, DT_FLOATS);
}
END_TEST

START_TEST(test_nvrtc_sm90a_ints) {
  compile_reductions("sm_90a", sm90a_sets, RC_COUNT(sm90a_sets), DT_F32, DT_BF16 | DT_I32, DT_INTS);
}
END_TEST

START_TEST(test_nvrtc_sm90a_unsigned) {
  compile_reductions("sm_90a", unsigned_sets_sm90a, RC_COUNT(unsigned_sets_sm90a), DT_U32, DT_WIDE_UNSIGNED,
                     DT_WIDE_UNSIGNED);
}
END_TEST

int main(int argc, char **argv) {
  Suite *s = suite_create("reduce");
  CHECK_CASE(s, test_builder_errors, setup, teardown);
  CHECK_CASE(s, test_dtypes_accepted_and_results, setup, teardown);
  CHECK_CASE(s, test_result_shapes, setup, teardown);
  CHECK_CASE(s, test_empty_reductions, setup, teardown);
  CHECK_CASE(s, test_text_round_trip, setup, teardown);
  CHECK_CASE(s, test_text_parse, setup, teardown);
  CHECK_CASE(s, test_text_parse_errors, setup, teardown);
  CHECK_CASE(s, test_text_shorthands, setup, teardown);
  CHECK_CASE(s, test_matrix_f32, setup, teardown);
  CHECK_CASE(s, test_matrix_f64, setup, teardown);
  CHECK_CASE(s, test_matrix_f16, setup, teardown);
  CHECK_CASE(s, test_matrix_bf16, setup, teardown);
  CHECK_CASE(s, test_matrix_f8e4m3, setup, teardown);
  CHECK_CASE(s, test_matrix_i32, setup, teardown);
  CHECK_CASE(s, test_matrix_i64, setup, teardown);
  CHECK_CASE(s, test_matrix_u8, setup, teardown);
  CHECK_CASE(s, test_matrix_i8, setup, teardown);
  CHECK_CASE(s, test_matrix_bool, setup, teardown);
  CHECK_CASE(s, test_matrix_u16, setup, teardown);
  CHECK_CASE(s, test_matrix_u32, setup, teardown);
  CHECK_CASE(s, test_matrix_u64, setup, teardown);
  CHECK_CASE(s, test_matrix_i16, setup, teardown);
  CHECK_CASE(s, test_matrix_f8e5m2, setup, teardown);
  CHECK_CASE(s, test_matrix_symbolic_large, setup, teardown);
  CHECK_CASE(s, test_strided_broadcast_symbolic_operands, setup, teardown);
  CHECK_CASE(s, test_special_values, setup, teardown);
  CHECK_CASE(s, test_symbolic_sizes, setup, teardown);
  CHECK_CASE(s, test_summation_order_long_rows, setup, teardown);
  CHECK_CASE(s, test_two_stage_cases_ref, setup, teardown);
  CHECK_CASE(s, test_two_stage_split, setup, teardown);
  CHECK_CASE(s, test_two_stage_split_passes_nvrtc, setup, teardown);
  CHECK_CASE(s, test_two_stage_split_stages_nvrtc, setup, teardown);
  CHECK_CASE(s, test_two_stage_split_sm80, setup, teardown);
  CHECK_CASE(s, test_column_split, setup, teardown);
  CHECK_CASE(s, test_column_split_cases_ref, setup, teardown);
  CHECK_CASE(s, test_shorthands, setup, teardown);
  CHECK_CASE(s, test_sibling_reductions_fuse, setup, teardown);
  CHECK_CASE(s, test_row_threads_from_bytes, setup, teardown);
  CHECK_CASE(s, test_row_cache_tiers, setup, teardown);
  CHECK_CASE(s, test_column_rounds, setup, teardown);
  CHECK_CASE(s, test_column_pack_sm90a, setup, teardown);
  CHECK_CASE(s, test_column_pack_sm80, setup, teardown);
  CHECK_CASE(s, test_fusion_groupings_ref, setup, teardown);
  CHECK_CASE(s, test_fusion_groupings_cuda_sm90a, setup, teardown);
  CHECK_CASE(s, test_nvrtc_sm80_f32_f16, setup, teardown);
  CHECK_CASE(s, test_nvrtc_sm80_f8e4m3_axis0_first, setup, teardown);
  CHECK_CASE(s, test_nvrtc_sm80_f8e4m3_axis0_second, setup, teardown);
  CHECK_CASE(s, test_nvrtc_sm80_f8e4m3_axis1_first, setup, teardown);
  CHECK_CASE(s, test_nvrtc_sm80_f8e4m3_axis1_second, setup, teardown);
  CHECK_CASE(s, test_nvrtc_sm80_f64_bf16, setup, teardown);
  CHECK_CASE(s, test_nvrtc_sm80_ints, setup, teardown);
  CHECK_CASE(s, test_nvrtc_sm80_shorthands, setup, teardown);
  CHECK_CASE(s, test_nvrtc_sm90a_floats, setup, teardown);
  CHECK_CASE(s, test_nvrtc_sm90a_ints, setup, teardown);
  CHECK_CASE(s, test_misaligned_rows, setup, teardown);
  CHECK_CASE(s, test_column_passes, setup, teardown);
  CHECK_CASE(s, test_tall_column_statistics_ref, setup, teardown);
  CHECK_CASE(s, test_nvrtc_sm80_unsigned, setup, teardown);
  CHECK_CASE(s, test_nvrtc_sm90a_unsigned, setup, teardown);
  if (check_list_cases(argc, argv, s)) return 0;
  return check_run_suite(s);
}
