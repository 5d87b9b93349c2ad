/* lib/sym: symbolic integer expressions for shapes, strides, index maps and grid sizes.
 *
 * Expressions live in an arena and are hash-consed into canonical form, so two
 * expressions are equal exactly when their ids are equal. Leaves:
 *   const    a 64-bit integer
 *   symbol   a named size symbol of the graph ("n"), index k
 *   var      an iteration variable of a kernel (i0, i1, ...), index k
 *   param    a run-time kernel parameter such as a stride (p0, ...), index k
 * Operations: add, mul, floordiv, mod, ceildiv, min, max. Division and modulo follow
 * floor semantics (Python's) on the host; generated C assumes non-negative operands,
 * which every index, size and stride in ic is.
 *
 * Canonical forms: constants fold; add and mul are flattened n-ary nodes with their
 * operands sorted and the constant kept apart; like terms of a sum are collected
 * (2*x + 3*x = 5*x); a constant factor distributes over a sum; x+0, x*1, x*0, x/1, x%1,
 * (k*b*x + y)/b = k*x + y/b, (k*b*x + y)%b = y%b, (x/b)*b + x%b = x, (x/a)/b = x/(a*b)
 * for constants a, b > 0, min/max of equal operands, (k*d*x + y)/d = k*x + y/d and
 * (k*d*x + y)%d = y%d for a symbolic leaf d (taken to be nonzero). Also: a constant dividend part
 * splits so 0 <= r < b remains ((x + 5)/4 = (x + 1)/4 + 1), (x%a)%b = x%b when b divides
 * a, ceildiv follows floordiv's rules, and a sum that is one of several factors carries
 * no constant content (2*((x + 1)*y) = (2*x + 2)*y = 2*(x + 1)*y). Operand layout: a
 * sum's constant is its last operand, a product's coefficient its first; the others are
 * sorted by a structural order that does not depend on construction order.
 *
 * Out of memory is sticky: every constructor then returns SYM_NONE, and so does any
 * constructor given SYM_NONE, so callers check once (sym_arena_failed) at the end.
 */
#ifndef IC_SYM_H
#define IC_SYM_H

#include <stdbool.h>
#include <stdint.h>

#include "base/base.h"

typedef int32_t sym_id;
#define SYM_NONE ((sym_id)-1)

typedef enum sym_kind {
  SYM_CONST,
  SYM_SYMBOL,
  SYM_VAR,
  SYM_PARAM,
  SYM_ADD,
  SYM_MUL,
  SYM_FLOORDIV,
  SYM_MOD,
  SYM_CEILDIV,
  SYM_MIN,
  SYM_MAX
} sym_kind;

typedef struct sym_arena sym_arena;

sym_arena *sym_arena_create(void);
void sym_arena_destroy(sym_arena *a);
bool sym_arena_failed(const sym_arena *a);
/* The number of expressions interned so far (0 for NULL): it grows only when a
 * constructor makes a new one, so tests can check that readers leave an arena alone. */
int32_t sym_arena_size(const sym_arena *a);
/* How many constant folds so far overflowed int64 and wrapped (two's complement): a
 * caller that builds sizes compares it before and after, and refuses an expression whose
 * constants wrapped (it no longer means the exact integer). */
uint64_t sym_arena_wraps(const sym_arena *a);

/* Leaves. */
sym_id sym_const(sym_arena *a, int64_t value);
sym_id sym_symbol(sym_arena *a, int32_t index);
sym_id sym_var(sym_arena *a, int32_t index);
sym_id sym_param(sym_arena *a, int32_t index);

/* Operations (any operand SYM_NONE gives SYM_NONE). */
sym_id sym_add(sym_arena *a, sym_id x, sym_id y);
sym_id sym_sub(sym_arena *a, sym_id x, sym_id y);
sym_id sym_mul(sym_arena *a, sym_id x, sym_id y);
sym_id sym_floordiv(sym_arena *a, sym_id x, sym_id y);
sym_id sym_mod(sym_arena *a, sym_id x, sym_id y);
sym_id sym_ceildiv(sym_arena *a, sym_id x, sym_id y);
sym_id sym_min(sym_arena *a, sym_id x, sym_id y);
sym_id sym_max(sym_arena *a, sym_id x, sym_id y);

/* Inspection. */
sym_kind sym_kind_of(const sym_arena *a, sym_id e);
/* True and *value when e is a constant. */
bool sym_is_const(const sym_arena *a, sym_id e, int64_t *value);
/* The index of a symbol/var/param leaf, -1 otherwise. */
int32_t sym_leaf_index(const sym_arena *a, sym_id e);
/* Operand count and operands of an operation node (0 for leaves). */
int32_t sym_operand_count(const sym_arena *a, sym_id e);
sym_id sym_operand(const sym_arena *a, sym_id e, int32_t i);
/* True when a leaf of `kind` with `index` occurs in e (index -1: any of that kind). */
bool sym_depends_on(const sym_arena *a, sym_id e, sym_kind kind, int32_t index);
/* Whether e >= 0 for every value of its leaves (sizes, indices and strides, which are
 * >= 0), judged conservatively from its canonical form. */
bool sym_nonneg(const sym_arena *a, sym_id e);

/* Writes e = coeff * var_k + rest with coeff and rest free of var k and returns true;
 * false when e is not affine in var k (it occurs inside a floordiv, mod, min, ... or in a
 * product with another occurrence of itself). */
bool sym_affine_in_var(sym_arena *a, sym_id e, int32_t k, sym_id *coeff, sym_id *rest);

/* Replaces every var k (k < nvars) by repl[k] and re-canonicalizes. */
sym_id sym_subst_vars(sym_arena *a, sym_id e, int32_t nvars, const sym_id *repl);

/* e with the floordivs and modulos that cannot change its value removed, given var k in
 * [0, end[k]) for k < nvars (end[k] <= 0: no bound known): x / b = 0 and x % b = x for
 * 0 <= x < b, b a constant (lib/sym/bounds.c). */
sym_id sym_simplify_in_range(sym_arena *a, sym_id e, int32_t nvars, const int64_t *end);

/* Copies an expression of another arena into this one. */
sym_id sym_import(sym_arena *dst, const sym_arena *src, sym_id e);

/* Visits e's canonical form in prefix order: a node's kind, its value (a constant's value,
 * a leaf's index, 0 for an operation) and operand count, then its operands in canonical
 * order. Equal expressions give equal visits, so hashing the visits hashes the canonical
 * form (the program cache key does, naming symbols by name). Nothing for SYM_NONE. */
typedef void (*sym_visit_fn)(void *user, sym_kind kind, int64_t value, int32_t nops);
void sym_visit(const sym_arena *a, sym_id e, sym_visit_fn visit, void *user);

/* Evaluation. */
typedef struct sym_env {
  const int64_t *symbols; int32_t nsymbols;
  const int64_t *vars;    int32_t nvars;
  const int64_t *params;  int32_t nparams;
} sym_env;
/* Why an evaluation failed: every step is checked (an int64 overflow, INT64_MIN / -1
 * included, is an error, never a wrapped value). */
typedef enum sym_eval_status {
  SYM_EVAL_OK,
  SYM_EVAL_UNBOUND,          /* a leaf has no value in env (or e is not an expression) */
  SYM_EVAL_DIVIDES_BY_ZERO,
  SYM_EVAL_OVERFLOW
} sym_eval_status;
sym_eval_status sym_eval_checked(const sym_arena *a, sym_id e, const sym_env *env, int64_t *out);
/* sym_eval_checked(...) == SYM_EVAL_OK. */
bool sym_eval(const sym_arena *a, sym_id e, const sym_env *env, int64_t *out);
/* "overflows 64-bit integers", "divides by zero", ...: completes "the expression ...". */
const char *sym_eval_status_text(sym_eval_status s);

/* Printing, as C (int64 arithmetic, fully parenthesized where needed). A name table entry
 * NULL or a NULL table prints the default s<k>, i<k>, p<k>. Division and modulo print as
 * C's / and % when dividend and divisor are known non-negative (leaves are taken to be),
 * else in a longer form exact for any sign: simplification can leave a dividend such as
 * 3 - i. min/max print as ic_min/ic_max, which the generated source must define. */
typedef struct sym_names {
  const char *const *symbols; int32_t nsymbols;
  const char *const *vars;    int32_t nvars;
  const char *const *params;  int32_t nparams;
  bool plain_ints; /* integers without C's LL suffix (ic's text format) */
} sym_names;
void sym_print(const sym_arena *a, sym_id e, const sym_names *names, sbuf *out);
/* "[e0, e1, ...]": a list of dims. */
void sym_print_list(const sym_arena *a, int32_t n, const sym_id *es, const sym_names *names, sbuf *out);

#endif
