/* Tests for lib/sym: folding, canonical forms, division rules, evaluation, affine
 * decomposition, substitution, import, printing, and a randomized property test that
 * checks canonical expressions against direct evaluation with Python floor semantics. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "sym/sym.h"

static sym_arena *A;

static void setup(void) {
  A = sym_arena_create();
  ck_assert_ptr_nonnull(A);
}

static void teardown(void) {
  ck_assert(!sym_arena_failed(A));
  sym_arena_destroy(A);
  A = NULL;
}

/* Shorthands over the global arena. */
static sym_id C(int64_t v) { return sym_const(A, v); }
static sym_id V(int32_t k) { return sym_var(A, k); }
static sym_id S(int32_t k) { return sym_symbol(A, k); }
static sym_id add(sym_id x, sym_id y) { return sym_add(A, x, y); }
static sym_id sub(sym_id x, sym_id y) { return sym_sub(A, x, y); }
static sym_id mul(sym_id x, sym_id y) { return sym_mul(A, x, y); }
static sym_id t_fdiv(sym_id x, sym_id y) { return sym_floordiv(A, x, y); }
static sym_id mod(sym_id x, sym_id y) { return sym_mod(A, x, y); }
static sym_id cdiv(sym_id x, sym_id y) { return sym_ceildiv(A, x, y); }

static int64_t const_value(sym_id e) {
  int64_t v = 0;
  ck_assert_msg(sym_is_const(A, e, &v), "expression is not a constant");
  return v;
}

/* Python semantics, written independently of the library. */
static int64_t py_floordiv(int64_t x, int64_t y) {
  int64_t q = x / y;
  if (q * y != x && ((x < 0) != (y < 0))) q--;
  return q;
}
static int64_t py_mod(int64_t x, int64_t y) { return x - py_floordiv(x, y) * y; }
static int64_t py_ceildiv(int64_t x, int64_t y) { return -py_floordiv(-x, y); }

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint32_t rnd(uint32_t n) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return (uint32_t)(rng_state % n);
}
static int64_t rnd_range(int64_t lo, int64_t hi) { return lo + (int64_t)rnd((uint32_t)(hi - lo + 1)); }

static char *print_str(sym_id e, const sym_names *names) {
  sbuf sb = {0};
  sym_print(A, e, names, &sb);
  char *s = sbuf_take(&sb);
  ck_assert_ptr_nonnull(s);
  return s;
}

#define ck_assert_prints(e, names, expected)          \
  do {                                                \
    char *s_ = print_str((e), (names));               \
    ck_assert_str_eq(s_, (expected));                 \
    free(s_);                                         \
  } while (0)

START_TEST(test_const_fold) {
  ck_assert_int_eq(const_value(add(C(2), C(3))), 5);
  ck_assert_int_eq(const_value(sub(C(2), C(3))), -1);
  ck_assert_int_eq(const_value(mul(C(4), C(-3))), -12);
  ck_assert_int_eq(const_value(t_fdiv(C(-7), C(2))), -4);
  ck_assert_int_eq(const_value(mod(C(-7), C(2))), 1);
  ck_assert_int_eq(const_value(t_fdiv(C(7), C(-2))), -4);
  ck_assert_int_eq(const_value(mod(C(7), C(-2))), -1);
  ck_assert_int_eq(const_value(cdiv(C(7), C(2))), 4);
  ck_assert_int_eq(const_value(cdiv(C(-7), C(2))), -3);
  ck_assert_int_eq(const_value(sym_min(A, C(3), C(5))), 3);
  ck_assert_int_eq(const_value(sym_max(A, C(3), C(5))), 5);
  ck_assert_int_eq(const_value(t_fdiv(C(INT64_MIN), C(-1))), INT64_MIN); /* wraps, no trap */
  ck_assert_int_eq(C(7), C(7));
  /* Division by a zero constant is kept for sym_eval to reject. */
  ck_assert_int_eq(sym_kind_of(A, t_fdiv(C(5), C(0))), SYM_FLOORDIV);
}
END_TEST

START_TEST(test_canonical) {
  sym_id x = V(0), y = V(1), z = S(0);
  ck_assert_int_eq(add(x, y), add(y, x));
  ck_assert_int_eq(add(mul(C(2), x), mul(C(3), x)), mul(C(5), x));
  ck_assert_int_eq(mul(add(x, C(1)), C(2)), add(mul(C(2), x), C(2)));
  ck_assert_int_eq(mul(x, C(0)), C(0));
  ck_assert_int_eq(sub(x, x), C(0));
  ck_assert_int_eq(add(x, C(0)), x);
  ck_assert_int_eq(mul(x, C(1)), x);
  ck_assert_int_eq(add(add(x, y), z), add(x, add(z, y)));
  ck_assert_int_eq(mul(mul(x, y), z), mul(z, mul(y, x)));
  ck_assert_int_eq(sub(add(x, y), y), x);
  /* Constant factors commute with non-constant products of sums. */
  sym_id x1 = add(x, C(1));
  ck_assert_int_eq(mul(mul(C(2), x1), y), mul(C(2), mul(x1, y)));
  ck_assert_int_eq(mul(mul(C(-3), x1), mul(C(2), add(y, C(1)))),
                   mul(C(-6), mul(x1, add(y, C(1)))));
  /* A product of two sums stays a product. */
  sym_id p = mul(x1, add(y, C(2)));
  ck_assert_int_eq(sym_kind_of(A, p), SYM_MUL);
  ck_assert_int_eq(sym_operand_count(A, p), 2);
  /* Operand layout: a sum's constant last, a product's coefficient first. */
  sym_id s = add(mul(C(3), y), add(x, C(4)));
  ck_assert_int_eq(sym_kind_of(A, s), SYM_ADD);
  ck_assert_int_eq(sym_operand_count(A, s), 3);
  ck_assert_int_eq(sym_operand(A, s, 0), x);
  ck_assert_int_eq(sym_operand(A, s, 2), C(4));
  sym_id t = sym_operand(A, s, 1);
  ck_assert_int_eq(sym_operand(A, t, 0), C(3));
  ck_assert_int_eq(sym_operand(A, t, 1), y);
  ck_assert_int_eq(sym_operand(A, s, 3), SYM_NONE);
  ck_assert_int_eq(sym_leaf_index(A, y), 1);
  ck_assert_int_eq(sym_leaf_index(A, s), -1);
  /* min/max */
  ck_assert_int_eq(sym_min(A, x, y), sym_min(A, y, x));
  ck_assert_int_eq(sym_max(A, x, x), x);
  ck_assert_int_ne(sym_min(A, x, y), sym_max(A, x, y));
  /* Distinct leaf kinds with the same index stay distinct. */
  ck_assert_int_ne(V(0), S(0));
  ck_assert_int_ne(V(0), sym_param(A, 0));
  ck_assert(sym_depends_on(A, s, SYM_VAR, 1));
  ck_assert(!sym_depends_on(A, s, SYM_VAR, 2));
  ck_assert(sym_depends_on(A, s, SYM_VAR, -1));
  ck_assert(!sym_depends_on(A, s, SYM_SYMBOL, -1));
}
END_TEST

START_TEST(test_divmod_rules) {
  sym_id x = V(0), y = V(1), n = S(0);
  ck_assert_int_eq(t_fdiv(add(mul(C(4), x), C(3)), C(4)), x);
  ck_assert_int_eq(mod(add(mul(C(4), x), C(3)), C(4)), C(3));
  ck_assert_int_eq(add(mul(t_fdiv(x, C(4)), C(4)), mod(x, C(4))), x);
  ck_assert_int_eq(add(mod(x, C(4)), mul(C(4), t_fdiv(x, C(4)))), x);
  ck_assert_int_eq(add(mul(C(12), t_fdiv(x, C(4))), mul(C(3), mod(x, C(4)))), mul(C(3), x));
  /* with a sum inside: ((x + y) / 4) * 4 + (x + y) % 4 = x + y */
  sym_id xy = add(x, y);
  ck_assert_int_eq(add(add(mul(t_fdiv(xy, C(4)), C(4)), C(7)), mod(xy, C(4))), add(xy, C(7)));
  /* (8x + 4y + 2) / 4 = 2x + y; the remainder folds to 0 */
  sym_id e = add(add(mul(C(8), x), mul(C(4), y)), C(2));
  ck_assert_int_eq(t_fdiv(e, C(4)), add(mul(C(2), x), y));
  ck_assert_int_eq(mod(e, C(4)), C(2));
  /* constants split around the divisor: (x + 5) / 4 = (x + 1) / 4 + 1 */
  ck_assert_int_eq(t_fdiv(add(x, C(5)), C(4)), add(t_fdiv(add(x, C(1)), C(4)), C(1)));
  ck_assert_int_eq(t_fdiv(sub(x, C(1)), C(4)), sub(t_fdiv(add(x, C(3)), C(4)), C(1)));
  ck_assert_int_eq(mod(add(x, C(5)), C(4)), mod(add(x, C(1)), C(4)));
  ck_assert_int_eq(mod(add(x, mul(C(-8), y)), C(4)), mod(x, C(4)));
  /* nested */
  ck_assert_int_eq(t_fdiv(t_fdiv(x, C(2)), C(3)), t_fdiv(x, C(6)));
  ck_assert_int_eq(cdiv(cdiv(x, C(2)), C(3)), cdiv(x, C(6)));
  ck_assert_int_eq(mod(mod(x, C(4)), C(4)), mod(x, C(4)));
  ck_assert_int_eq(mod(mod(x, C(8)), C(4)), mod(x, C(4)));
  ck_assert_int_ne(mod(mod(x, C(4)), C(8)), mod(x, C(8)));
  ck_assert_int_eq(cdiv(add(mul(C(4), x), C(1)), C(4)), add(x, C(1)));
  /* identities */
  ck_assert_int_eq(t_fdiv(x, C(1)), x);
  ck_assert_int_eq(cdiv(x, C(1)), x);
  ck_assert_int_eq(mod(x, C(1)), C(0));
  ck_assert_int_eq(t_fdiv(C(0), n), C(0));
  ck_assert_int_eq(mod(C(0), n), C(0));
  /* a symbolic leaf divisor is taken to be nonzero: its multiples leave the division */
  ck_assert_int_eq(t_fdiv(n, n), C(1));
  ck_assert_int_eq(mod(n, n), C(0));
  ck_assert_int_eq(t_fdiv(add(mul(C(3), mul(n, x)), C(2)), n), add(mul(C(3), x), t_fdiv(C(2), n)));
  ck_assert_int_eq(mod(add(mul(n, x), x), n), mod(x, n));
  /* a divisor that is not a leaf is left alone */
  ck_assert_int_eq(sym_kind_of(A, t_fdiv(add(n, C(1)), add(n, C(1)))), SYM_FLOORDIV);
  /* symbolic divisor */
  ck_assert_int_eq(add(mul(t_fdiv(x, n), n), mod(x, n)), x);
  ck_assert_int_eq(add(mod(x, n), mul(n, t_fdiv(x, n))), x);
  sym_id n1 = add(n, C(1));
  ck_assert_int_eq(add(add(y, mul(t_fdiv(x, n1), n1)), mod(x, n1)), add(x, y));
  ck_assert_int_eq(t_fdiv(add(mul(n, x), y), n), add(x, t_fdiv(y, n)));
}
END_TEST

START_TEST(test_eval_reference) {
  sym_id x = V(0), y = V(1);
  sym_id f = t_fdiv(x, y), m = mod(x, y), c = cdiv(x, y);
  sym_id f3 = t_fdiv(add(x, C(5)), C(3)), m3 = mod(sub(C(1), x), C(3));
  for (int it = 0; it < 2000; it++) {
    int64_t vx = rnd_range(-100, 100), vy = rnd_range(-9, 9);
    int64_t vars[2] = {vx, vy}, got;
    sym_env env = {.vars = vars, .nvars = 2};
    if (vy == 0) {
      ck_assert(!sym_eval(A, f, &env, &got));
      ck_assert(!sym_eval(A, m, &env, &got));
      continue;
    }
    ck_assert(sym_eval(A, f, &env, &got));
    ck_assert_int_eq(got, py_floordiv(vx, vy));
    ck_assert(sym_eval(A, m, &env, &got));
    ck_assert_int_eq(got, py_mod(vx, vy));
    ck_assert(sym_eval(A, c, &env, &got));
    ck_assert_int_eq(got, py_ceildiv(vx, vy));
    ck_assert(sym_eval(A, f3, &env, &got));
    ck_assert_int_eq(got, py_floordiv(vx + 5, 3));
    ck_assert(sym_eval(A, m3, &env, &got));
    ck_assert_int_eq(got, py_mod(1 - vx, 3));
  }
}
END_TEST

START_TEST(test_eval_failure) {
  sym_id x = V(0), n = S(0);
  int64_t out, vars[1] = {3}, syms[1] = {0};
  sym_env no_syms = {.vars = vars, .nvars = 1};
  ck_assert(!sym_eval(A, add(x, n), &no_syms, &out));
  ck_assert(!sym_eval(A, x, NULL, &out));
  ck_assert(!sym_eval(A, V(1), &no_syms, &out));
  ck_assert(!sym_eval(A, sym_param(A, 0), &no_syms, &out));
  ck_assert(sym_eval(A, C(4), NULL, &out));
  ck_assert_int_eq(out, 4);
  sym_env env = {.symbols = syms, .nsymbols = 1, .vars = vars, .nvars = 1};
  ck_assert(!sym_eval(A, t_fdiv(x, n), &env, &out));
  ck_assert(!sym_eval(A, mod(x, n), &env, &out));
  ck_assert(!sym_eval(A, cdiv(x, n), &env, &out));
  ck_assert(!sym_eval(A, t_fdiv(C(5), C(0)), &env, &out));
  ck_assert(sym_eval(A, add(x, n), &env, &out));
  ck_assert_int_eq(out, 3);
  ck_assert(!sym_eval(A, SYM_NONE, &env, &out));
}
END_TEST

START_TEST(test_eval_status_kinds) {
  sym_id n = S(0), m = S(1);
  int64_t out = 0, syms[2] = {1, 0};
  sym_env env = {.symbols = syms, .nsymbols = 2};
  /* overflow, not a division by zero: sums, products, INT64_MIN / -1 */
  ck_assert_int_eq(sym_eval_checked(A, add(n, C(INT64_MAX)), &env, &out), SYM_EVAL_OVERFLOW);
  ck_assert_int_eq(sym_eval_checked(A, mul(add(n, C(1)), C(INT64_C(1) << 62)), &env, &out), SYM_EVAL_OVERFLOW);
  ck_assert_int_eq(sym_eval_checked(A, t_fdiv(sub(C(0), add(n, C(INT64_MAX))), sub(C(0), n)), &env, &out),
                   SYM_EVAL_OVERFLOW);
  ck_assert_str_eq(sym_eval_status_text(SYM_EVAL_OVERFLOW), "overflows 64-bit integers");
  ck_assert_int_eq(sym_eval_checked(A, t_fdiv(n, m), &env, &out), SYM_EVAL_DIVIDES_BY_ZERO);
  ck_assert_str_eq(sym_eval_status_text(SYM_EVAL_DIVIDES_BY_ZERO), "divides by zero");
  ck_assert_int_eq(sym_eval_checked(A, S(2), &env, &out), SYM_EVAL_UNBOUND);
  /* the largest values that fit; a zero factor makes a product 0 whatever the others */
  ck_assert_int_eq(sym_eval_checked(A, add(n, C(INT64_MAX - 1)), &env, &out), SYM_EVAL_OK);
  ck_assert_int_eq(out, INT64_MAX);
  syms[0] = INT64_C(1) << 40;
  ck_assert_int_eq(sym_eval_checked(A, mul(mul(n, n), m), &env, &out), SYM_EVAL_OK);
  ck_assert_int_eq(out, 0);
  syms[1] = 1;
  ck_assert_int_eq(sym_eval_checked(A, mul(mul(n, n), m), &env, &out), SYM_EVAL_OVERFLOW);
}
END_TEST

/* Constant folds that overflow int64 wrap and are counted; folds that fit are not. */
START_TEST(test_wraps_counted) {
  sym_id n = S(0);
  uint64_t w = sym_arena_wraps(A);
  ck_assert_int_eq(add(C(INT64_MAX - 1), C(1)), C(INT64_MAX));
  add(n, C(INT64_C(1) << 62));
  mul(n, C(INT64_C(1) << 62));
  t_fdiv(C(INT64_MIN + 1), C(-1));
  ck_assert_uint_eq(sym_arena_wraps(A), w);
  sym_id big = add(add(n, C(INT64_C(1) << 62)), C(INT64_C(1) << 62)); /* n + 2^63 */
  ck_assert_uint_eq(sym_arena_wraps(A), w + 1);
  int64_t konst = 0;
  ck_assert(sym_is_const(A, sym_operand(A, big, 1), &konst));
  ck_assert_int_eq(konst, INT64_MIN); /* wrapped, as counted */
  mul(C(INT64_C(1) << 32), C(INT64_C(1) << 32));
  ck_assert_uint_eq(sym_arena_wraps(A), w + 2);
  mul(mul(n, C(INT64_C(1) << 40)), C(INT64_C(1) << 40)); /* a coefficient */
  ck_assert_uint_eq(sym_arena_wraps(A), w + 3);
  t_fdiv(C(INT64_MIN), C(-1));
  ck_assert_uint_eq(sym_arena_wraps(A), w + 4);
  sub(C(0), C(INT64_MIN));
  ck_assert_uint_eq(sym_arena_wraps(A), w + 5);
  ck_assert_uint_eq(sym_arena_wraps(NULL), 0);
}
END_TEST

START_TEST(test_none_propagates) {
  sym_id x = V(0);
  ck_assert_int_eq(add(x, SYM_NONE), SYM_NONE);
  ck_assert_int_eq(mul(SYM_NONE, x), SYM_NONE);
  ck_assert_int_eq(t_fdiv(x, SYM_NONE), SYM_NONE);
  ck_assert_int_eq(sym_min(A, SYM_NONE, x), SYM_NONE);
  ck_assert_int_eq(sym_var(A, -1), SYM_NONE);
  sym_id repl[1] = {SYM_NONE};
  ck_assert_int_eq(sym_subst_vars(A, x, 1, repl), SYM_NONE);
  ck_assert(!sym_arena_failed(A)); /* bad operands are not out of memory */
}
END_TEST

START_TEST(test_affine) {
  sym_id i0 = V(0), i1 = V(1), s = S(0), c, r;
  sym_id e = add(mul(i0, s), i1);
  ck_assert(sym_affine_in_var(A, e, 1, &c, &r));
  ck_assert_int_eq(c, C(1));
  ck_assert_int_eq(r, mul(i0, s));
  ck_assert(sym_affine_in_var(A, e, 0, &c, &r));
  ck_assert_int_eq(c, s);
  ck_assert_int_eq(r, i1);
  ck_assert(sym_affine_in_var(A, e, 2, &c, &r));
  ck_assert_int_eq(c, C(0));
  ck_assert_int_eq(r, e);
  sym_id q = add(t_fdiv(i1, C(4)), i0);
  ck_assert(!sym_affine_in_var(A, q, 1, &c, &r));
  ck_assert(sym_affine_in_var(A, q, 0, &c, &r));
  ck_assert_int_eq(c, C(1));
  ck_assert_int_eq(r, t_fdiv(i1, C(4)));
  ck_assert(!sym_affine_in_var(A, mul(i0, i0), 0, &c, &r));
  ck_assert(!sym_affine_in_var(A, sym_min(A, i0, s), 0, &c, &r));
  /* 2 * (i0 + s) * i1 = (2*i1) * i0 + 2*s*i1 */
  sym_id p = mul(mul(C(2), add(i0, s)), i1);
  ck_assert(sym_affine_in_var(A, p, 0, &c, &r));
  ck_assert_int_eq(c, mul(C(2), i1));
  ck_assert_int_eq(r, mul(mul(C(2), s), i1));
  ck_assert(!sym_affine_in_var(A, p, 1, &c, &r) || c == mul(C(2), add(i0, s)));
  ck_assert(sym_affine_in_var(A, add(mul(C(3), i0), C(7)), 0, &c, &r));
  ck_assert_int_eq(c, C(3));
  ck_assert_int_eq(r, C(7));
}
END_TEST

START_TEST(test_subst) {
  sym_id i0 = V(0), i1 = V(1), i2 = V(2), i3 = V(3);
  sym_id e = add(mul(i0, C(4)), i1);
  sym_id repl[2] = {add(i2, C(1)), C(3)};
  ck_assert_int_eq(sym_subst_vars(A, e, 2, repl), add(mul(C(4), i2), C(7)));
  /* re-canonicalizes: (4*i2 + i3) / 4 = i2 + i3 / 4 */
  sym_id d = t_fdiv(add(i0, i1), C(4));
  sym_id repl2[2] = {mul(C(4), i2), i3};
  ck_assert_int_eq(sym_subst_vars(A, d, 2, repl2), add(i2, t_fdiv(i3, C(4))));
  /* vars at or beyond nvars are kept */
  sym_id repl3[1] = {C(5)};
  ck_assert_int_eq(sym_subst_vars(A, e, 1, repl3), add(i1, C(20)));
  ck_assert_int_eq(sym_subst_vars(A, e, 0, NULL), e);
  /* to constants: everything folds */
  sym_id f = add(mul(t_fdiv(i0, S(0)), i1), sym_max(A, i0, i1));
  sym_id repl4[2] = {C(17), C(-3)};
  sym_id g = sym_subst_vars(A, f, 2, repl4);
  ck_assert(sym_depends_on(A, g, SYM_SYMBOL, 0));
  ck_assert(!sym_depends_on(A, g, SYM_VAR, -1));
}
END_TEST

START_TEST(test_import) {
  sym_arena *B = sym_arena_create();
  ck_assert_ptr_nonnull(B);
  /* Different construction histories, so ids differ between the arenas. */
  for (int k = 0; k < 10; k++) sym_const(B, 1000 + k);
  sym_id x = V(0), y = V(1), n = S(0);
  sym_id e1 = add(mul(t_fdiv(add(x, C(5)), C(4)), n), sym_min(A, y, sym_param(A, 2)));
  sym_id e2 = add(sym_min(A, sym_param(A, 2), y), mul(n, add(t_fdiv(add(x, C(1)), C(4)), C(1))));
  ck_assert_int_eq(e1, e2);
  sym_id b1 = sym_import(B, A, e1);
  sym_id b2 = sym_import(B, A, e2);
  ck_assert_int_ne(b1, SYM_NONE);
  ck_assert_int_eq(b1, b2);
  sym_id bx = sym_var(B, 0), bn = sym_symbol(B, 0);
  sym_id direct = sym_add(B, sym_mul(B, bn, sym_floordiv(B, sym_add(B, bx, sym_const(B, 5)), sym_const(B, 4))),
                          sym_min(B, sym_param(B, 2), sym_var(B, 1)));
  ck_assert_int_eq(b1, direct);
  sbuf sa = {0}, sb = {0};
  sym_print(A, e1, NULL, &sa);
  sym_print(B, b1, NULL, &sb);
  char *ta = sbuf_take(&sa), *tb = sbuf_take(&sb);
  ck_assert_str_eq(ta, tb);
  free(ta);
  free(tb);
  ck_assert(!sym_arena_failed(B));
  sym_arena_destroy(B);
}
END_TEST

START_TEST(test_print) {
  static const char *const vars[] = {"a", "b"};
  sym_names nm = {.vars = vars, .nvars = 2};
  sym_id a = V(0), b = V(1), n = S(0);
  ck_assert_prints(add(add(a, mul(C(3), b)), C(1)), &nm, "a + 3 * b + 1");
  ck_assert_prints(sub(a, mul(C(3), b)), &nm, "a - 3 * b");
  ck_assert_prints(sub(sub(b, a), C(2)), &nm, "-a + b - 2");
  ck_assert_prints(sub(a, b), &nm, "a - b");
  ck_assert_prints(mul(mul(C(3), a), b), &nm, "3 * a * b");
  ck_assert_prints(mul(C(-1), a), &nm, "-a");
  ck_assert_prints(C(4294967296LL), &nm, "4294967296LL");
  ck_assert_prints(C(-2147483649LL), &nm, "-2147483649LL");
  ck_assert_prints(C(-5), &nm, "-5");
  ck_assert_prints(C(INT32_MAX), &nm, "2147483647");
  ck_assert_prints(mul(C(4294967296LL), a), &nm, "4294967296LL * a");
  ck_assert_prints(t_fdiv(add(a, C(1)), C(4)), &nm, "((a + 1) / 4)");
  ck_assert_prints(mod(a, C(4)), &nm, "(a % 4)");
  ck_assert_prints(cdiv(a, C(4)), &nm, "((a + 3) / 4)");
  ck_assert_prints(cdiv(a, n), &nm, "((a + s0 - 1) / s0)");
  ck_assert_prints(t_fdiv(a, mul(C(2), n)), &nm, "(a / (2 * s0))");
  ck_assert_prints(mod(mul(C(3), a), add(n, C(1))), &nm, "(3 * a % (s0 + 1))");
  ck_assert_prints(mul(add(a, C(1)), add(b, C(2))), &nm, "(a + 1) * (b + 2)");
  ck_assert_prints(sym_min(A, a, C(4)), &nm, "ic_min(4, a)");
  ck_assert_prints(sym_max(A, add(a, C(1)), b), &nm, "ic_max(b, a + 1)");
  ck_assert_prints(add(mul(C(2), t_fdiv(a, C(4))), C(1)), &nm, "2 * (a / 4) + 1");
  ck_assert_prints(sub(C(1), t_fdiv(a, C(4))), &nm, "-(a / 4) + 1");
  ck_assert_prints(add(V(0), sym_param(A, 1)), NULL, "i0 + p1");
  /* Dividends that may be negative get forms exact for any sign. */
  ck_assert_prints(t_fdiv(sub(C(3), a), C(4)), &nm, "(((-a + 3) - ((-a + 3) % 4 + 4) % 4) / 4)");
  ck_assert_prints(mod(sub(C(3), a), C(4)), &nm, "(((-a + 3) % 4 + 4) % 4)");
  ck_assert_prints(cdiv(sub(C(3), a), C(4)), &nm, "(-((-(-a + 3) - (-(-a + 3) % 4 + 4) % 4) / 4))");
}
END_TEST

/* ---- randomized property test */

enum { T_V0, T_V1, T_S0, T_CONST, T_ADD, T_SUB, T_MUL, T_FDIV, T_MOD, T_CDIV, T_MIN, T_MAX,
       T_FDIV_SYM, T_MOD_SYM, T_COUNT };

typedef struct tnode {
  int op;
  int64_t c; /* constant, or the divisor (constant, or added to s0 for *_SYM) */
  int l, r;
} tnode;

typedef struct tree {
  tnode n[64];
  int count;
} tree;

static int gen(tree *t, int depth) {
  int i = t->count++;
  tnode *nd = &t->n[i];
  static const int64_t divisors[] = {1, 2, 3, 4, 5, 8, -1, -2, -3};
  if (depth == 0 || rnd(4) == 0) {
    nd->op = (int)rnd(4);
    nd->c = rnd_range(-9, 9);
    return i;
  }
  int op = T_ADD + (int)rnd(T_COUNT - T_ADD);
  int l = gen(t, depth - 1), r = op <= T_MAX && op != T_FDIV && op != T_MOD && op != T_CDIV
                                     ? gen(t, depth - 1)
                                     : -1;
  nd = &t->n[i];
  nd->op = op, nd->l = l, nd->r = r;
  nd->c = op >= T_FDIV_SYM ? rnd_range(1, 3) : divisors[rnd(ARRAY_LEN(divisors))];
  return i;
}

static int64_t ref_eval(const tree *t, int i, const int64_t *v) {
  const tnode *nd = &t->n[i];
  int64_t x = nd->l >= 0 && nd->op >= T_ADD ? ref_eval(t, nd->l, v) : 0;
  int64_t y = nd->r >= 0 && nd->op >= T_ADD ? ref_eval(t, nd->r, v) : 0;
  switch (nd->op) {
  case T_V0: return v[0];
  case T_V1: return v[1];
  case T_S0: return v[2];
  case T_CONST: return nd->c;
  case T_ADD: return x + y;
  case T_SUB: return x - y;
  case T_MUL: return x * y;
  case T_FDIV: return py_floordiv(x, nd->c);
  case T_MOD: return py_mod(x, nd->c);
  case T_CDIV: return py_ceildiv(x, nd->c);
  case T_MIN: return x < y ? x : y;
  case T_MAX: return x > y ? x : y;
  case T_FDIV_SYM: return py_floordiv(x, v[2] + nd->c);
  default: return py_mod(x, v[2] + nd->c);
  }
}

/* Builds the tree; `alt` swaps commutative operands and reassociates sums and products,
 * which must give the same canonical id. */
static sym_id build(const tree *t, int i, bool alt) {
  const tnode *nd = &t->n[i];
  switch (nd->op) {
  case T_V0: return V(0);
  case T_V1: return V(1);
  case T_S0: return S(0);
  case T_CONST: return C(nd->c);
  default: break;
  }
  const tnode *ln = &t->n[nd->l];
  if (alt && (nd->op == T_ADD || nd->op == T_MUL) && ln->op == nd->op) {
    sym_id (*f)(sym_id, sym_id) = nd->op == T_ADD ? add : mul;
    return f(build(t, ln->l, alt), f(build(t, nd->r, alt), build(t, ln->r, alt)));
  }
  sym_id x = build(t, nd->l, alt), y = nd->r >= 0 ? build(t, nd->r, alt) : SYM_NONE;
  sym_id d = nd->op >= T_FDIV_SYM ? add(S(0), C(nd->c)) : C(nd->c);
  switch (nd->op) {
  case T_ADD: return alt ? add(y, x) : add(x, y);
  case T_SUB: return sub(x, y);
  case T_MUL: return alt ? mul(y, x) : mul(x, y);
  case T_FDIV: case T_FDIV_SYM: return t_fdiv(x, d);
  case T_MOD: case T_MOD_SYM: return mod(x, d);
  case T_CDIV: return cdiv(x, d);
  case T_MIN: return alt ? sym_min(A, y, x) : sym_min(A, x, y);
  default: return alt ? sym_max(A, y, x) : sym_max(A, x, y);
  }
}

START_TEST(test_random_property) {
  sym_arena *B = sym_arena_create();
  ck_assert_ptr_nonnull(B);
  for (int it = 0; it < 2000; it++) {
    tree t = {.count = 0};
    int root = gen(&t, 1 + (int)rnd(4));
    sym_id e = build(&t, root, false);
    ck_assert_int_ne(e, SYM_NONE);
    ck_assert_int_eq(build(&t, root, true), e);
    sym_id be = sym_import(B, A, e);
    ck_assert_int_ne(be, SYM_NONE);
    for (int k = 0; k < 20; k++) {
      int64_t v[3] = {rnd_range(-12, 12), rnd_range(-12, 12), rnd_range(0, 12)}, got;
      sym_env env = {.symbols = v + 2, .nsymbols = 1, .vars = v, .nvars = 2};
      int64_t want = ref_eval(&t, root, v);
      ck_assert_msg(sym_eval(A, e, &env, &got), "tree %d: eval failed", it);
      ck_assert_msg(got == want, "tree %d, v=(%lld,%lld,%lld): got %lld want %lld", it,
                    (long long)v[0], (long long)v[1], (long long)v[2], (long long)got,
                    (long long)want);
      ck_assert(sym_eval(B, be, &env, &got));
      ck_assert_int_eq(got, want);
      /* Substituting constants for the vars re-canonicalizes to the same value. */
      sym_id repl[2] = {C(v[0]), C(v[1])};
      sym_id s = sym_subst_vars(A, e, 2, repl);
      ck_assert(!sym_depends_on(A, s, SYM_VAR, -1));
      ck_assert(sym_eval(A, s, &env, &got));
      ck_assert_int_eq(got, want);
    }
  }
  ck_assert(!sym_arena_failed(B));
  sym_arena_destroy(B);
}
END_TEST

/* Within known var ranges, divisions and modulos that cannot change a value go, and
 * nothing else changes value: explicit cases, then random trees against evaluation at
 * every point of small ranges. */
START_TEST(test_simplify_in_range) {
  const int64_t end[2] = {24, 4};
  /* i0 / 24 = 0, i0 % 24 = i0, (4 * i1 + i0 / 24) % 4 = 0, and a flat index below 96 */
  ck_assert_int_eq(sym_simplify_in_range(A, t_fdiv(V(0), C(24)), 2, end), C(0));
  ck_assert_int_eq(sym_simplify_in_range(A, mod(V(0), C(24)), 2, end), V(0));
  ck_assert_int_eq(sym_simplify_in_range(A, mod(add(mul(C(4), V(1)), t_fdiv(V(0), C(24))), C(4)), 2, end), C(0));
  sym_id flat = add(mul(C(24), V(1)), V(0)); /* < 96 */
  ck_assert_int_eq(sym_simplify_in_range(A, t_fdiv(flat, C(96)), 2, end), C(0));
  ck_assert_int_eq(sym_simplify_in_range(A, mod(flat, C(96)), 2, end), flat);
  /* not provably in range: kept */
  ck_assert_int_eq(sym_simplify_in_range(A, t_fdiv(flat, C(95)), 2, end), t_fdiv(flat, C(95)));
  ck_assert_int_eq(sym_simplify_in_range(A, mod(V(0), C(24)), 1, (int64_t[]){0}), mod(V(0), C(24)));
  ck_assert_int_eq(sym_simplify_in_range(A, t_fdiv(add(V(0), S(0)), C(24)), 2, end), t_fdiv(add(V(0), S(0)), C(24)));
  ck_assert_int_eq(sym_simplify_in_range(A, mod(sub(V(0), C(1)), C(24)), 2, end), mod(sub(V(0), C(1)), C(24)));
  for (int it = 0; it < 1000; it++) {
    tree t = {.count = 0};
    int root = gen(&t, 1 + (int)rnd(4));
    sym_id e = build(&t, root, false);
    int64_t ends[2] = {1 + rnd(12), 1 + rnd(12)};
    sym_id s = sym_simplify_in_range(A, e, 2, ends);
    for (int64_t a = 0; a < ends[0]; a++)
      for (int64_t b = 0; b < ends[1]; b++) {
        int64_t v[3] = {a, b, rnd_range(0, 12)}, want = 0, got = 0;
        sym_env env = {.symbols = v + 2, .nsymbols = 1, .vars = v, .nvars = 2};
        bool ok = sym_eval(A, e, &env, &want);
        ck_assert_int_eq(sym_eval(A, s, &env, &got), ok);
        ck_assert_msg(!ok || got == want, "tree %d at (%lld, %lld): %lld, simplified %lld", it, (long long)a,
                      (long long)b, (long long)want, (long long)got);
      }
  }
}
END_TEST

static Suite *sym_suite(void) {
  Suite *s = suite_create("sym");
  TCase *tc = check_tcase("core");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, test_const_fold);
  tcase_add_test(tc, test_canonical);
  tcase_add_test(tc, test_divmod_rules);
  tcase_add_test(tc, test_eval_reference);
  tcase_add_test(tc, test_eval_failure);
  tcase_add_test(tc, test_eval_status_kinds);
  tcase_add_test(tc, test_wraps_counted);
  tcase_add_test(tc, test_none_propagates);
  tcase_add_test(tc, test_affine);
  tcase_add_test(tc, test_subst);
  tcase_add_test(tc, test_import);
  tcase_add_test(tc, test_simplify_in_range);
  tcase_add_test(tc, test_print);
  tcase_add_test(tc, test_random_property);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(sym_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed != 0;
}
