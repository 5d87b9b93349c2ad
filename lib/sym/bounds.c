/* Simplification under known ranges of the vars: an index expression of a kernel's vars,
 * each var k in [0, end[k]), loses the divisions and modulos that cannot change its value
 * there (x / b = 0 and x % b = x for 0 <= x < b). Reshapes and merged dims write indices
 * as (flat / b) % k; within the iteration space they are often the plain vars again. */
#include "sym/sym.h"

/* Largest value of e over the ranges; false when unbounded or not known non-negative. */
static bool sym_max_in_range(const sym_arena *a, sym_id e, int32_t nvars, const int64_t *end, int64_t *out) {
  const int64_t limit = (int64_t)1 << 60;
  int64_t v = 0, m = 0;
  int32_t n = sym_operand_count(a, e);
  switch (sym_kind_of(a, e)) {
  case SYM_CONST:
    sym_is_const(a, e, &v);
    *out = v;
    return v >= 0;
  case SYM_VAR: {
    int32_t k = sym_leaf_index(a, e);
    if (k < 0 || k >= nvars || end[k] <= 0) return false;
    *out = end[k] - 1;
    return true;
  }
  case SYM_ADD:
  case SYM_MUL: {
    bool add = sym_kind_of(a, e) == SYM_ADD;
    int64_t acc = add ? 0 : 1;
    for (int32_t i = 0; i < n; i++) {
      if (!sym_max_in_range(a, sym_operand(a, e, i), nvars, end, &m)) return false;
      if (add) acc += m;
      else acc = m == 0 ? 0 : (acc > limit / m ? limit : acc * m);
      if (acc >= limit) return false;
    }
    *out = acc;
    return true;
  }
  case SYM_FLOORDIV:
  case SYM_CEILDIV:
  case SYM_MOD: {
    int64_t b = 0;
    if (!sym_is_const(a, sym_operand(a, e, 1), &b) || b <= 0) return false;
    bool bounded = sym_max_in_range(a, sym_operand(a, e, 0), nvars, end, &m);
    if (sym_kind_of(a, e) == SYM_MOD) {
      if (!sym_nonneg(a, sym_operand(a, e, 0))) return false;
      *out = bounded && m < b - 1 ? m : b - 1;
      return true;
    }
    if (!bounded) return false;
    *out = sym_kind_of(a, e) == SYM_FLOORDIV ? m / b : (m + b - 1) / b;
    return true;
  }
  default: return false;
  }
}

sym_id sym_simplify_in_range(sym_arena *a, sym_id e, int32_t nvars, const int64_t *end) {
  if (e == SYM_NONE) return e;
  sym_kind kind = sym_kind_of(a, e);
  int32_t n = sym_operand_count(a, e);
  if (n == 0) return e;
  sym_id ops[2] = {SYM_NONE, SYM_NONE};
  if (kind == SYM_ADD || kind == SYM_MUL) {
    sym_id acc = sym_const(a, kind == SYM_ADD ? 0 : 1);
    for (int32_t i = 0; i < n; i++) {
      sym_id x = sym_simplify_in_range(a, sym_operand(a, e, i), nvars, end);
      acc = kind == SYM_ADD ? sym_add(a, acc, x) : sym_mul(a, acc, x);
    }
    return acc;
  }
  if (n != 2) return e;
  for (int32_t i = 0; i < 2; i++) ops[i] = sym_simplify_in_range(a, sym_operand(a, e, i), nvars, end);
  int64_t b = 0, m = 0;
  bool in_range = (kind == SYM_FLOORDIV || kind == SYM_MOD) && sym_is_const(a, ops[1], &b) && b > 0 &&
                  sym_max_in_range(a, ops[0], nvars, end, &m) && m < b && sym_nonneg(a, ops[0]);
  switch (kind) {
  case SYM_FLOORDIV: return in_range ? sym_const(a, 0) : sym_floordiv(a, ops[0], ops[1]);
  case SYM_MOD: return in_range ? ops[0] : sym_mod(a, ops[0], ops[1]);
  case SYM_CEILDIV: return sym_ceildiv(a, ops[0], ops[1]);
  case SYM_MIN: return sym_min(a, ops[0], ops[1]);
  case SYM_MAX: return sym_max(a, ops[0], ops[1]);
  default: return e;
  }
}
