/* lib/sym: hash-consed symbolic integer expressions (see sym.h).
 *
 * Every node is interned: constructors build the canonical operand list and look it up
 * in an open-addressing table, so equal canonical expressions share one id. Operands live
 * in one int32 pool. Sums are kept as a linear combination (coefficient per base term
 * plus a constant) while they are being simplified; see `lin` below.
 *
 * Operand order: a product is [coefficient (only when != 1)] + factors, a sum is terms +
 * [constant (only when != 0)]. Factors and terms are sorted by a structural order (not by
 * id), so the canonical form and its printed text do not depend on construction order.
 */
#include "sym/sym.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

typedef struct sym_node {
  int64_t value;  /* constant value or leaf index */
  uint64_t hash;  /* kept so the table can grow without rehashing operands */
  int32_t first;  /* first operand in the pool */
  int32_t nops;
  sym_kind kind;
} sym_node;

struct sym_arena {
  struct { sym_node *items; int32_t count, cap; } nodes;
  struct { sym_id *items; int32_t count, cap; } pool;
  sym_id *table;  /* SYM_NONE marks an empty slot; size is a power of two */
  uint32_t table_cap;
  bool failed;
  uint64_t wraps; /* constant folds that overflowed int64 (sym_arena_wraps) */
};

/* ---- small helpers */

/* Wrapping arithmetic of constant folds: int64 overflow wraps (never UB) and is counted
 * in the arena, so callers that need exact sizes can refuse what wrapped. */
static int64_t wadd(sym_arena *a, int64_t x, int64_t y) {
  int64_t r;
  if (__builtin_add_overflow(x, y, &r)) a->wraps++;
  return r;
}
static int64_t wmul(sym_arena *a, int64_t x, int64_t y) {
  int64_t r;
  if (__builtin_mul_overflow(x, y, &r)) a->wraps++;
  return r;
}
static int64_t wneg(int64_t x) { return (int64_t)(0 - (uint64_t)x); }

/* Floor (Python) division and modulo; y != 0. y == -1 is special-cased because
 * INT64_MIN / -1 traps (it wraps to INT64_MIN: callers that fold count it). */
static int64_t floor_div(int64_t x, int64_t y) {
  if (y == -1) return wneg(x);
  int64_t q = x / y;
  return (x % y != 0 && ((x < 0) != (y < 0))) ? q - 1 : q;
}
static int64_t floor_mod(int64_t x, int64_t y) {
  if (y == -1) return 0;
  int64_t r = x % y;
  return (r != 0 && ((r < 0) != (y < 0))) ? r + y : r;
}
static int64_t ceil_div(int64_t x, int64_t y) {
  if (y == -1) return wneg(x);
  int64_t q = x / y;
  return (x % y != 0 && ((x < 0) == (y < 0))) ? q + 1 : q;
}

static uint64_t mix(uint64_t h) {
  h ^= h >> 30; h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 27; h *= 0x94d049bb133111ebull;
  return h ^ (h >> 31);
}

static bool valid(const sym_arena *a, sym_id e) { return a && e >= 0 && e < a->nodes.count; }
static const sym_node *node(const sym_arena *a, sym_id e) { return &a->nodes.items[e]; }
static sym_kind kind_of(const sym_arena *a, sym_id e) { return node(a, e)->kind; }
static int32_t nops_of(const sym_arena *a, sym_id e) { return node(a, e)->nops; }
/* Reads through the pool every time: constructors may move it. */
static sym_id op_of(const sym_arena *a, sym_id e, int32_t i) {
  return a->pool.items[node(a, e)->first + i];
}
static bool const_of(const sym_arena *a, sym_id e, int64_t *v) {
  if (kind_of(a, e) != SYM_CONST) return false;
  *v = node(a, e)->value;
  return true;
}

static sym_id fail(sym_arena *a) {
  a->failed = true;
  return SYM_NONE;
}

/* True when x and y may be combined: arena healthy and both ids valid. */
static bool usable2(const sym_arena *a, sym_id x, sym_id y) {
  return a && !a->failed && valid(a, x) && valid(a, y);
}

/* ---- interning */

static uint64_t hash_node(sym_kind kind, int64_t value, const sym_id *ops, int32_t n) {
  uint64_t h = mix((uint64_t)kind + 0x9e3779b97f4a7c15ull);
  h = mix(h ^ (uint64_t)value);
  for (int32_t i = 0; i < n; i++) h = mix(h ^ (uint32_t)ops[i]);
  return h;
}

static bool grow_table(sym_arena *a) {
  uint32_t cap = a->table_cap ? a->table_cap * 2 : 256;
  if (cap == 0 || cap > (1u << 30)) return false;
  sym_id *t = sys_malloc(cap * sizeof *t);
  if (!t) return false;
  memset(t, 0xff, cap * sizeof *t); /* all SYM_NONE */
  for (int32_t id = 0; id < a->nodes.count; id++) {
    uint32_t i = (uint32_t)a->nodes.items[id].hash & (cap - 1);
    while (t[i] != SYM_NONE) i = (i + 1) & (cap - 1);
    t[i] = id;
  }
  free(a->table);
  a->table = t;
  a->table_cap = cap;
  return true;
}

/* Appends n operands. `ops` may point into the pool itself (an operand run of an
 * existing node), so a grown pool is filled before the old block is freed. */
static bool pool_append(sym_arena *a, const sym_id *ops, int32_t n) {
  if (n > INT32_MAX - a->pool.count) return false;
  int32_t need = a->pool.count + n;
  if (need > a->pool.cap) {
    int32_t cap = a->pool.cap ? a->pool.cap : 256;
    while (cap < need) cap = cap > INT32_MAX / 2 ? INT32_MAX : cap * 2;
    sym_id *p = sys_malloc((size_t)cap * sizeof *p);
    if (!p) return false;
    if (a->pool.count) memcpy(p, a->pool.items, (size_t)a->pool.count * sizeof *p);
    if (n) memcpy(p + a->pool.count, ops, (size_t)n * sizeof *p);
    free(a->pool.items);
    a->pool.items = p;
    a->pool.cap = cap;
  } else if (n) {
    memmove(a->pool.items + a->pool.count, ops, (size_t)n * sizeof *ops);
  }
  a->pool.count = need;
  return true;
}

/* Returns the node with exactly this kind, value and operands, creating it if needed.
 * Callers pass operands already in canonical form and order. */
static sym_id intern(sym_arena *a, sym_kind kind, int64_t value, const sym_id *ops,
                     int32_t n) {
  if (a->failed) return SYM_NONE;
  if ((uint64_t)a->nodes.count * 2 + 2 > a->table_cap && !grow_table(a)) return fail(a);
  uint64_t h = hash_node(kind, value, ops, n);
  uint32_t mask = a->table_cap - 1, slot = (uint32_t)h & mask;
  for (;; slot = (slot + 1) & mask) {
    sym_id id = a->table[slot];
    if (id == SYM_NONE) break;
    const sym_node *nd = node(a, id);
    if (nd->hash == h && nd->kind == kind && nd->value == value && nd->nops == n &&
        (n == 0 || memcmp(a->pool.items + nd->first, ops, (size_t)n * sizeof *ops) == 0))
      return id;
  }
  int32_t first = a->pool.count;
  if (a->nodes.count == INT32_MAX || !pool_append(a, ops, n)) return fail(a);
  sym_node nd = {value, h, first, n, kind};
  if (!VEC_PUSH(a->nodes, nd)) return fail(a);
  a->table[slot] = a->nodes.count - 1;
  return a->nodes.count - 1;
}

/* ---- arena */

sym_arena *sym_arena_create(void) { return sys_calloc(1, sizeof(sym_arena)); }

void sym_arena_destroy(sym_arena *a) {
  if (!a) return;
  free(a->nodes.items);
  free(a->pool.items);
  free(a->table);
  free(a);
}

bool sym_arena_failed(const sym_arena *a) { return !a || a->failed; }

int32_t sym_arena_size(const sym_arena *a) { return a ? a->nodes.count : 0; }

uint64_t sym_arena_wraps(const sym_arena *a) { return a ? a->wraps : 0; }

sym_id sym_const(sym_arena *a, int64_t value) {
  return a ? intern(a, SYM_CONST, value, NULL, 0) : SYM_NONE;
}

static sym_id leaf(sym_arena *a, sym_kind kind, int32_t index) {
  return a && index >= 0 ? intern(a, kind, index, NULL, 0) : SYM_NONE;
}
sym_id sym_symbol(sym_arena *a, int32_t index) { return leaf(a, SYM_SYMBOL, index); }
sym_id sym_var(sym_arena *a, int32_t index) { return leaf(a, SYM_VAR, index); }
sym_id sym_param(sym_arena *a, int32_t index) { return leaf(a, SYM_PARAM, index); }

/* ---- structural order used to sort operands */

static int order(const sym_arena *a, sym_id x, sym_id y) {
  if (x == y) return 0;
  const sym_node *nx = node(a, x), *ny = node(a, y);
  if (nx->kind != ny->kind) return nx->kind < ny->kind ? -1 : 1;
  if (nx->value != ny->value) return nx->value < ny->value ? -1 : 1;
  if (nx->nops != ny->nops) return nx->nops < ny->nops ? -1 : 1;
  for (int32_t i = 0; i < nx->nops; i++) {
    int c = order(a, op_of(a, x, i), op_of(a, y, i));
    if (c) return c;
  }
  return 0; /* unreachable for distinct interned nodes */
}

typedef struct id_vec { sym_id *items; int32_t count, cap; } id_vec;

static void sort_ids(const sym_arena *a, sym_id *v, int32_t n) {
  /* Insertion sort: lists are short and usually an already sorted list plus one. */
  for (int32_t i = 1; i < n; i++) {
    sym_id x = v[i];
    int32_t j = i;
    for (; j > 0 && order(a, v[j - 1], x) > 0; j--) v[j] = v[j - 1];
    v[j] = x;
  }
}

/* ---- linear combinations: sum of coef * base plus a constant */

typedef struct term { sym_id base; int64_t coef; } term;
typedef struct lin {
  struct { term *items; int32_t count, cap; } terms;
  int64_t konst;
} lin;

static void lin_free(lin *l) {
  free(l->terms.items);
  memset(l, 0, sizeof *l);
}

/* Splits a non-constant, non-sum expression into coefficient and base (the expression
 * without its constant factor). */
static sym_id split_coef(sym_arena *a, sym_id e, int64_t *coef) {
  *coef = 1;
  if (kind_of(a, e) != SYM_MUL || !const_of(a, op_of(a, e, 0), coef)) return e;
  int32_t n = nops_of(a, e);
  if (n == 2) return op_of(a, e, 1);
  return intern(a, SYM_MUL, 0, a->pool.items + node(a, e)->first + 1, n - 1);
}

static bool lin_push(sym_arena *a, lin *l, sym_id base, int64_t coef) {
  term t = {base, coef};
  if (VEC_PUSH(l->terms, t)) return true;
  a->failed = true;
  return false;
}

/* l += scale * e */
static bool lin_add(sym_arena *a, lin *l, sym_id e, int64_t scale) {
  if (!valid(a, e) || a->failed) return false;
  int64_t v;
  if (const_of(a, e, &v)) {
    l->konst = wadd(a, l->konst, wmul(a, v, scale));
    return true;
  }
  if (kind_of(a, e) == SYM_ADD) {
    for (int32_t i = 0; i < nops_of(a, e); i++)
      if (!lin_add(a, l, op_of(a, e, i), scale)) return false;
    return true;
  }
  int64_t coef;
  sym_id base = split_coef(a, e, &coef);
  return base != SYM_NONE && lin_push(a, l, base, wmul(a, coef, scale));
}

/* coef * base as a canonical node (base is never a constant or a sum). */
static sym_id make_term(sym_arena *a, int64_t coef, sym_id base) {
  if (coef == 1) return base;
  id_vec ops = {0};
  sym_id c = sym_const(a, coef), r = SYM_NONE;
  if (c != SYM_NONE && VEC_PUSH(ops, c)) {
    bool ok = true;
    if (kind_of(a, base) == SYM_MUL) {
      for (int32_t i = 0; ok && i < nops_of(a, base); i++) ok = VEC_PUSH(ops, op_of(a, base, i));
    } else {
      ok = VEC_PUSH(ops, base);
    }
    if (ok) r = intern(a, SYM_MUL, 0, ops.items, ops.count);
  }
  free(ops.items);
  return r == SYM_NONE ? fail(a) : r;
}

/* Sorts terms by base, adds up like terms and drops the ones that cancel. */
static void lin_collect(sym_arena *a, lin *l) {
  term *t = l->terms.items;
  int32_t n = l->terms.count, out = 0;
  for (int32_t i = 1; i < n; i++) {
    term x = t[i];
    int32_t j = i;
    for (; j > 0 && order(a, t[j - 1].base, x.base) > 0; j--) t[j] = t[j - 1];
    t[j] = x;
  }
  for (int32_t i = 0; i < n; i++) {
    if (out > 0 && t[out - 1].base == t[i].base)
      t[out - 1].coef = wadd(a, t[out - 1].coef, t[i].coef);
    else
      t[out++] = t[i];
    if (t[out - 1].coef == 0) out--;
  }
  l->terms.count = out;
}

static int32_t lin_find(const lin *l, sym_id base, int64_t coef) {
  for (int32_t i = 0; i < l->terms.count; i++)
    if (l->terms.items[i].base == base && l->terms.items[i].coef == coef) return i;
  return -1;
}

static void lin_remove(lin *l, int32_t i) {
  memmove(l->terms.items + i, l->terms.items + i + 1,
          (size_t)(l->terms.count - i - 1) * sizeof *l->terms.items);
  l->terms.count--;
}

/* Folds k*(x % d) + k*d*(x / d) into k*x. Returns 1 when it rewrote l, 0 when there was
 * nothing to fold, -1 on failure. */
static int lin_fold_divmod(sym_arena *a, lin *l) {
  for (int32_t i = 0; i < l->terms.count; i++) {
    sym_id m = l->terms.items[i].base;
    if (kind_of(a, m) != SYM_MOD) continue;
    int64_t k = l->terms.items[i].coef, coef;
    sym_id x = op_of(a, m, 0), d = op_of(a, m, 1);
    sym_id want = sym_mul(a, sym_const(a, k), sym_mul(a, d, sym_floordiv(a, x, d)));
    if (want == SYM_NONE) return -1;
    if (kind_of(a, want) == SYM_CONST || kind_of(a, want) == SYM_ADD) continue;
    sym_id base = split_coef(a, want, &coef);
    if (base == SYM_NONE) return -1;
    int32_t j = lin_find(l, base, coef);
    if (j < 0) continue;
    lin_remove(l, i > j ? i : j);
    lin_remove(l, i > j ? j : i);
    return lin_add(a, l, x, k) ? 1 : -1;
  }
  return 0;
}

/* Builds the canonical node of a linear combination; frees l. */
static sym_id lin_build(sym_arena *a, lin *l) {
  sym_id r = SYM_NONE;
  id_vec ops = {0};
  int folded;
  do {
    lin_collect(a, l);
    folded = a->failed ? -1 : lin_fold_divmod(a, l);
  } while (folded == 1);
  if (folded < 0) goto done;
  int32_t n = l->terms.count;
  if (n == 0) {
    r = sym_const(a, l->konst);
  } else if (n == 1 && l->konst == 0) {
    r = make_term(a, l->terms.items[0].coef, l->terms.items[0].base);
  } else {
    for (int32_t i = 0; i < n; i++) {
      sym_id t = make_term(a, l->terms.items[i].coef, l->terms.items[i].base);
      if (t == SYM_NONE || !VEC_PUSH(ops, t)) goto done;
    }
    if (l->konst != 0) {
      sym_id c = sym_const(a, l->konst);
      if (c == SYM_NONE || !VEC_PUSH(ops, c)) goto done;
    }
    r = intern(a, SYM_ADD, 0, ops.items, ops.count);
  }
done:
  free(ops.items);
  lin_free(l);
  return r == SYM_NONE ? fail(a) : r;
}

/* ---- operations */

static sym_id add_scaled(sym_arena *a, sym_id x, sym_id y, int64_t scale) {
  if (!usable2(a, x, y)) return SYM_NONE;
  lin l = {0};
  if (!lin_add(a, &l, x, 1) || !lin_add(a, &l, y, scale)) {
    lin_free(&l);
    return fail(a);
  }
  return lin_build(a, &l);
}

sym_id sym_add(sym_arena *a, sym_id x, sym_id y) { return add_scaled(a, x, y, 1); }
sym_id sym_sub(sym_arena *a, sym_id x, sym_id y) { return add_scaled(a, x, y, -1); }

/* Adds the factors of e to f, multiplying constants into *coef. */
static bool gather_factors(sym_arena *a, sym_id e, id_vec *f, int64_t *coef) {
  int64_t v;
  if (const_of(a, e, &v)) {
    *coef = wmul(a, *coef, v);
    return true;
  }
  if (kind_of(a, e) != SYM_MUL) return VEC_PUSH(*f, e);
  for (int32_t i = 0; i < nops_of(a, e); i++) {
    sym_id op = op_of(a, e, i);
    if (const_of(a, op, &v)) *coef = wmul(a, *coef, v);
    else if (!VEC_PUSH(*f, op)) return false;
  }
  return true;
}

static uint64_t uabs(int64_t v) { return v < 0 ? 0 - (uint64_t)v : (uint64_t)v; }

/* Moves the content of a sum (gcd of its coefficients and constant, signed so the first
 * term's coefficient is positive) into *coef: 2 * ((x + 1) * y) and (2*x + 2) * y must
 * give the same product, although a constant alone distributes over a sum. */
static sym_id primitive_sum(sym_arena *a, sym_id s, int64_t *coef) {
  lin l = {0};
  if (!lin_add(a, &l, s, 1)) return lin_free(&l), SYM_NONE;
  uint64_t g = uabs(l.konst);
  for (int32_t i = 0; i < l.terms.count; i++) {
    uint64_t x = uabs(l.terms.items[i].coef);
    while (x) {
      uint64_t t = g % x;
      g = x, x = t;
    }
  }
  if (g > INT64_MAX || (g == 1 && l.terms.items[0].coef > 0)) return lin_free(&l), s;
  int64_t d = l.terms.items[0].coef < 0 ? -(int64_t)g : (int64_t)g;
  for (int32_t i = 0; i < l.terms.count; i++) {
    if (d == -1 && l.terms.items[i].coef == INT64_MIN) a->wraps++;
    l.terms.items[i].coef = floor_div(l.terms.items[i].coef, d);
  }
  if (d == -1 && l.konst == INT64_MIN) a->wraps++;
  l.konst = floor_div(l.konst, d); /* exact but for INT64_MIN / -1 (counted); floor_div avoids its trap */
  *coef = wmul(a, *coef, d);
  return lin_build(a, &l);
}

sym_id sym_mul(sym_arena *a, sym_id x, sym_id y) {
  if (!usable2(a, x, y)) return SYM_NONE;
  id_vec f = {0};
  int64_t coef = 1;
  sym_id r = SYM_NONE;
  if (!gather_factors(a, x, &f, &coef) || !gather_factors(a, y, &f, &coef)) goto done;
  if (coef == 0 || f.count == 0) {
    r = sym_const(a, coef);
  } else if (f.count == 1 && coef == 1) {
    r = f.items[0];
  } else if (f.count == 1 && kind_of(a, f.items[0]) == SYM_ADD) {
    lin l = {0}; /* a constant distributes over a sum */
    r = lin_add(a, &l, f.items[0], coef) ? lin_build(a, &l) : (lin_free(&l), SYM_NONE);
  } else {
    for (int32_t i = 0; i < f.count; i++) {
      if (kind_of(a, f.items[i]) == SYM_ADD && f.count > 1)
        f.items[i] = primitive_sum(a, f.items[i], &coef);
      if (f.items[i] == SYM_NONE) goto done;
    }
    sort_ids(a, f.items, f.count);
    if (coef != 1) {
      sym_id c = sym_const(a, coef);
      if (c == SYM_NONE || !VEC_PUSH(f, c)) goto done;
      memmove(f.items + 1, f.items, (size_t)(f.count - 1) * sizeof *f.items);
      f.items[0] = c;
    }
    r = intern(a, SYM_MUL, 0, f.items, f.count);
  }
done:
  free(f.items);
  return r == SYM_NONE ? fail(a) : r;
}

static sym_id divide(sym_arena *a, sym_kind kind, sym_id x, sym_id y);

/* base without one factor f (1 when base is f), SYM_NONE when f is not a factor. */
static sym_id remove_factor(sym_arena *a, sym_id base, sym_id f) {
  if (base == f) return sym_const(a, 1);
  if (kind_of(a, base) != SYM_MUL) return SYM_NONE;
  for (int32_t i = 0; i < nops_of(a, base); i++) {
    if (op_of(a, base, i) != f) continue;
    sym_id r = sym_const(a, 1);
    for (int32_t j = 0; j < nops_of(a, base); j++)
      if (j != i) r = sym_mul(a, r, op_of(a, base, j));
    return r;
  }
  return SYM_NONE;
}

/* floordiv/mod/ceildiv of a sum x by y, split into the part that leaves the division
 * (k*y*t + r)/y = k*t + r/y (and vanishes in mod) and the part that stays. y is the
 * constant b > 0 (then terms whose coefficient is a multiple of b, and the multiple of b
 * in the constant, move out), or, with b == 0, a symbolic leaf (terms with y as a factor
 * move out; taken to be nonzero: a zero divisor has no defined result either way, and ic
 * never evaluates one since its tensor is empty). All rewrites are integer identities. */
static sym_id divide_split(sym_arena *a, sym_kind kind, sym_id x, sym_id y, int64_t b) {
  lin l = {0}, in = {0}, out = {0};
  sym_id r = SYM_NONE;
  if (!lin_add(a, &l, x, 1)) goto done;
  for (int32_t i = 0; i < l.terms.count; i++) {
    term t = l.terms.items[i];
    sym_id q = b ? SYM_NONE : remove_factor(a, t.base, y);
    bool ok = b && t.coef % b == 0 ? lin_push(a, &out, t.base, t.coef / b)
              : q != SYM_NONE      ? lin_add(a, &out, q, t.coef)
                                   : lin_push(a, &in, t.base, t.coef);
    if (!ok) goto done;
  }
  if (b) { /* the constant's multiple of b leaves too */
    out.konst = floor_div(l.konst, b);
    in.konst = floor_mod(l.konst, b);
  } else {
    in.konst = l.konst; /* out.konst holds what the moved terms brought */
  }
  if (out.terms.count == 0 && out.konst == 0) {
    sym_id ops[2] = {x, y};
    r = intern(a, kind, 0, ops, 2);
    goto done;
  }
  r = divide(a, kind, lin_build(a, &in), y);
  if (kind != SYM_MOD) r = lin_add(a, &out, r, 1) ? lin_build(a, &out) : SYM_NONE;
done:
  lin_free(&l);
  lin_free(&in);
  lin_free(&out);
  return r == SYM_NONE ? fail(a) : r;
}

/* By a constant b > 0: nested divisions by constants merge, then divide_split. */
static sym_id divide_by_const(sym_arena *a, sym_kind kind, sym_id x, sym_id y, int64_t b) {
  int64_t inner_b;
  if (kind_of(a, x) == kind && const_of(a, op_of(a, x, 1), &inner_b) && inner_b > 0) {
    sym_id z = op_of(a, x, 0);
    if (kind == SYM_MOD && inner_b % b == 0) return divide(a, kind, z, y);
    if (kind != SYM_MOD && inner_b <= INT64_MAX / b)
      return divide(a, kind, z, sym_const(a, inner_b * b));
  }
  return divide_split(a, kind, x, y, b);
}

static sym_id divide(sym_arena *a, sym_kind kind, sym_id x, sym_id y) {
  if (!usable2(a, x, y)) return SYM_NONE;
  int64_t xv = 0, b = 0;
  bool xc = const_of(a, x, &xv), bc = const_of(a, y, &b);
  if (bc && b != 0) {
    if (xc) {
      if (b == -1 && xv == INT64_MIN && kind != SYM_MOD) a->wraps++;
      int64_t v = kind == SYM_FLOORDIV ? floor_div(xv, b)
                  : kind == SYM_MOD    ? floor_mod(xv, b)
                                       : ceil_div(xv, b);
      return sym_const(a, v);
    }
    if (b == 1) return kind == SYM_MOD ? sym_const(a, 0) : x;
    if (b > 0) return divide_by_const(a, kind, x, y, b);
  }
  /* 0 / y is 0 for every y except 0, whose division is left for sym_eval to reject. */
  if (xc && xv == 0 && !(bc && b == 0)) return x;
  sym_kind yk = kind_of(a, y);
  if (!xc && (yk == SYM_SYMBOL || yk == SYM_VAR || yk == SYM_PARAM)) return divide_split(a, kind, x, y, 0);
  sym_id ops[2] = {x, y};
  return intern(a, kind, 0, ops, 2);
}

sym_id sym_floordiv(sym_arena *a, sym_id x, sym_id y) { return divide(a, SYM_FLOORDIV, x, y); }
sym_id sym_mod(sym_arena *a, sym_id x, sym_id y) { return divide(a, SYM_MOD, x, y); }
sym_id sym_ceildiv(sym_arena *a, sym_id x, sym_id y) { return divide(a, SYM_CEILDIV, x, y); }

static sym_id min_max(sym_arena *a, sym_kind kind, sym_id x, sym_id y) {
  if (!usable2(a, x, y)) return SYM_NONE;
  int64_t xv, yv;
  if (const_of(a, x, &xv) && const_of(a, y, &yv))
    return (kind == SYM_MIN) == (xv < yv) ? x : y;
  if (x == y) return x;
  sym_id ops[2] = {x, y};
  if (order(a, x, y) > 0) ops[0] = y, ops[1] = x;
  return intern(a, kind, 0, ops, 2);
}

sym_id sym_min(sym_arena *a, sym_id x, sym_id y) { return min_max(a, SYM_MIN, x, y); }
sym_id sym_max(sym_arena *a, sym_id x, sym_id y) { return min_max(a, SYM_MAX, x, y); }

/* ---- inspection */

sym_kind sym_kind_of(const sym_arena *a, sym_id e) {
  return valid(a, e) ? kind_of(a, e) : SYM_CONST;
}

bool sym_is_const(const sym_arena *a, sym_id e, int64_t *value) {
  int64_t v;
  if (!valid(a, e) || !const_of(a, e, &v)) return false;
  if (value) *value = v;
  return true;
}

int32_t sym_leaf_index(const sym_arena *a, sym_id e) {
  if (!valid(a, e)) return -1;
  sym_kind k = kind_of(a, e);
  return k == SYM_SYMBOL || k == SYM_VAR || k == SYM_PARAM ? (int32_t)node(a, e)->value : -1;
}

int32_t sym_operand_count(const sym_arena *a, sym_id e) { return valid(a, e) ? nops_of(a, e) : 0; }

sym_id sym_operand(const sym_arena *a, sym_id e, int32_t i) {
  return valid(a, e) && i >= 0 && i < nops_of(a, e) ? op_of(a, e, i) : SYM_NONE;
}

bool sym_depends_on(const sym_arena *a, sym_id e, sym_kind kind, int32_t index) {
  if (!valid(a, e)) return false;
  if (kind_of(a, e) == kind && kind != SYM_CONST && nops_of(a, e) == 0)
    return index < 0 || node(a, e)->value == index;
  for (int32_t i = 0; i < nops_of(a, e); i++)
    if (sym_depends_on(a, op_of(a, e, i), kind, index)) return true;
  return false;
}

bool sym_affine_in_var(sym_arena *a, sym_id e, int32_t k, sym_id *coeff, sym_id *rest) {
  if (!valid(a, e) || a->failed || k < 0) return false;
  sym_id c = SYM_NONE, r = SYM_NONE;
  if (!sym_depends_on(a, e, SYM_VAR, k)) {
    c = sym_const(a, 0), r = e;
  } else if (kind_of(a, e) == SYM_VAR) {
    c = sym_const(a, 1), r = sym_const(a, 0);
  } else if (kind_of(a, e) == SYM_ADD) {
    c = r = sym_const(a, 0);
    for (int32_t i = 0; i < nops_of(a, e); i++) {
      sym_id ci, ri;
      if (!sym_affine_in_var(a, op_of(a, e, i), k, &ci, &ri)) return false;
      c = sym_add(a, c, ci), r = sym_add(a, r, ri);
    }
  } else if (kind_of(a, e) == SYM_MUL) {
    /* (fc*v + fr) * others, where exactly one factor f mentions v */
    int32_t f = -1;
    sym_id others = sym_const(a, 1), fc, fr;
    for (int32_t i = 0; i < nops_of(a, e); i++) {
      sym_id op = op_of(a, e, i);
      if (!sym_depends_on(a, op, SYM_VAR, k)) others = sym_mul(a, others, op);
      else if (f >= 0) return false;
      else f = i;
    }
    if (!sym_affine_in_var(a, op_of(a, e, f), k, &fc, &fr)) return false;
    c = sym_mul(a, fc, others), r = sym_mul(a, fr, others);
  } else {
    return false; /* inside a division, min or max */
  }
  if (c == SYM_NONE || r == SYM_NONE) return false;
  *coeff = c, *rest = r;
  return true;
}

/* ---- rebuilding: substitution and import share one memoized copy */

typedef struct copier {
  sym_arena *dst;
  const sym_arena *src;
  sym_id *memo; /* src id -> dst id */
  int32_t nvars;
  const sym_id *repl;
} copier;

static sym_id copy_rec(copier *c, sym_id e) {
  if (c->memo[e] != SYM_NONE) return c->memo[e];
  const sym_arena *s = c->src;
  sym_arena *d = c->dst;
  sym_kind kind = kind_of(s, e);
  int64_t value = node(s, e)->value;
  sym_id r = SYM_NONE;
  if (kind == SYM_VAR && c->repl && value < c->nvars) {
    r = c->repl[value];
  } else if (nops_of(s, e) == 0) {
    r = intern(d, kind, value, NULL, 0);
  } else if (kind == SYM_ADD) {
    lin l = {0};
    bool ok = true;
    for (int32_t i = 0; ok && i < nops_of(s, e); i++) ok = lin_add(d, &l, copy_rec(c, op_of(s, e, i)), 1);
    r = ok ? lin_build(d, &l) : (lin_free(&l), SYM_NONE);
  } else if (kind == SYM_MUL) {
    r = sym_const(d, 1);
    for (int32_t i = 0; i < nops_of(s, e); i++) r = sym_mul(d, r, copy_rec(c, op_of(s, e, i)));
  } else {
    sym_id x = copy_rec(c, op_of(s, e, 0)), y = copy_rec(c, op_of(s, e, 1));
    r = kind == SYM_MIN || kind == SYM_MAX ? min_max(d, kind, x, y) : divide(d, kind, x, y);
  }
  if (r == SYM_NONE) return fail(d);
  return c->memo[e] = r;
}

static sym_id copy_expr(sym_arena *dst, const sym_arena *src, sym_id e, int32_t nvars,
                        const sym_id *repl) {
  if (!dst || dst->failed || !valid(src, e)) return SYM_NONE;
  for (int32_t i = 0; i < nvars; i++)
    if (!valid(dst, repl[i])) return SYM_NONE;
  /* Only ids up to e are reachable from e; new nodes (src == dst) come after them. */
  copier c = {dst, src, sys_malloc(((size_t)e + 1) * sizeof(sym_id)), nvars, repl};
  if (!c.memo) return fail(dst);
  memset(c.memo, 0xff, ((size_t)e + 1) * sizeof(sym_id));
  sym_id r = copy_rec(&c, e);
  free(c.memo);
  return r;
}

sym_id sym_subst_vars(sym_arena *a, sym_id e, int32_t nvars, const sym_id *repl) {
  return copy_expr(a, a, e, repl ? nvars : 0, repl);
}

sym_id sym_import(sym_arena *dst, const sym_arena *src, sym_id e) {
  return copy_expr(dst, src, e, 0, NULL);
}

/* ---- evaluation */

static bool eval_leaf(const int64_t *vals, int32_t n, int64_t index, int64_t *out) {
  if (!vals || index >= n) return false;
  *out = vals[index];
  return true;
}

sym_eval_status sym_eval_checked(const sym_arena *a, sym_id e, const sym_env *env, int64_t *out) {
  if (!valid(a, e)) return SYM_EVAL_UNBOUND;
  const sym_node *nd = node(a, e);
  int64_t x, y;
  sym_eval_status s;
  switch (nd->kind) {
  case SYM_CONST: *out = nd->value; return SYM_EVAL_OK;
  case SYM_SYMBOL: return env && eval_leaf(env->symbols, env->nsymbols, nd->value, out) ? SYM_EVAL_OK : SYM_EVAL_UNBOUND;
  case SYM_VAR: return env && eval_leaf(env->vars, env->nvars, nd->value, out) ? SYM_EVAL_OK : SYM_EVAL_UNBOUND;
  case SYM_PARAM: return env && eval_leaf(env->params, env->nparams, nd->value, out) ? SYM_EVAL_OK : SYM_EVAL_UNBOUND;
  case SYM_ADD:
    x = 0;
    for (int32_t i = 0; i < nd->nops; i++) {
      if ((s = sym_eval_checked(a, op_of(a, e, i), env, &y)) != SYM_EVAL_OK) return s;
      if (__builtin_add_overflow(x, y, &x)) return SYM_EVAL_OVERFLOW;
    }
    *out = x;
    return SYM_EVAL_OK;
  case SYM_MUL: {
    /* A zero factor makes the product 0 whatever the others multiply to (the element
     * count of an empty tensor whose other dims are huge): an overflow counts only
     * without one. */
    bool overflow = false, zero = false;
    x = 1;
    for (int32_t i = 0; i < nd->nops; i++) {
      if ((s = sym_eval_checked(a, op_of(a, e, i), env, &y)) != SYM_EVAL_OK) return s;
      zero |= y == 0;
      overflow |= __builtin_mul_overflow(x, y, &x);
    }
    if (zero) x = 0;
    else if (overflow) return SYM_EVAL_OVERFLOW;
    *out = x;
    return SYM_EVAL_OK;
  }
  default: break;
  }
  if ((s = sym_eval_checked(a, op_of(a, e, 0), env, &x)) != SYM_EVAL_OK ||
      (s = sym_eval_checked(a, op_of(a, e, 1), env, &y)) != SYM_EVAL_OK)
    return s;
  switch (nd->kind) {
  case SYM_MIN: *out = x < y ? x : y; return SYM_EVAL_OK;
  case SYM_MAX: *out = x > y ? x : y; return SYM_EVAL_OK;
  default: break;
  }
  if (y == 0) return SYM_EVAL_DIVIDES_BY_ZERO;
  if (y == -1 && x == INT64_MIN && nd->kind != SYM_MOD) return SYM_EVAL_OVERFLOW; /* -INT64_MIN */
  *out = nd->kind == SYM_FLOORDIV ? floor_div(x, y) : nd->kind == SYM_MOD ? floor_mod(x, y)
                                                                            : ceil_div(x, y);
  return SYM_EVAL_OK;
}

bool sym_eval(const sym_arena *a, sym_id e, const sym_env *env, int64_t *out) {
  return sym_eval_checked(a, e, env, out) == SYM_EVAL_OK;
}

const char *sym_eval_status_text(sym_eval_status s) {
  switch (s) {
  case SYM_EVAL_OK: return "is defined";
  case SYM_EVAL_OVERFLOW: return "overflows 64-bit integers";
  case SYM_EVAL_DIVIDES_BY_ZERO: return "divides by zero";
  case SYM_EVAL_UNBOUND: break;
  }
  return "has an unbound leaf";
}

/* ---- printing */

typedef struct printer {
  const sym_arena *a;
  const sym_names *names;
  sbuf *out;
} printer;

static void print_expr(printer *p, sym_id e);

/* C needs the LL suffix past 32 bits; ic's text format (names->plain_ints) has none. */
static void print_const_as(sbuf *out, int64_t v, bool plain) {
  const char *ll = plain ? "" : "LL";
  if (v == INT64_MIN) sbuf_printf(out, "(-9223372036854775807%s - 1)", ll); /* no literal for it */
  else if (v < INT32_MIN || v > INT32_MAX) sbuf_printf(out, "%lld%s", (long long)v, ll);
  else sbuf_printf(out, "%lld", (long long)v);
}
#define print_const(out, v) print_const_as((out), (v), p->names && p->names->plain_ints)

static void print_leaf(printer *p, sym_kind kind, int64_t index) {
  const sym_names *nm = p->names;
  const char *const *table = NULL;
  int32_t n = 0;
  char prefix = kind == SYM_SYMBOL ? 's' : kind == SYM_VAR ? 'i' : 'p';
  if (nm && kind == SYM_SYMBOL) table = nm->symbols, n = nm->nsymbols;
  if (nm && kind == SYM_VAR) table = nm->vars, n = nm->nvars;
  if (nm && kind == SYM_PARAM) table = nm->params, n = nm->nparams;
  if (table && index < n && table[index]) sbuf_puts(p->out, table[index]);
  else sbuf_printf(p->out, "%c%lld", prefix, (long long)index);
}

/* Sums always, and products too where a following operator would bind wrongly (as a
 * divisor), are parenthesized. */
static void print_operand(printer *p, sym_id e, bool wrap_product) {
  sym_kind k = kind_of(p->a, e);
  bool wrap = k == SYM_ADD || (wrap_product && k == SYM_MUL);
  if (wrap) sbuf_puts(p->out, "(");
  print_expr(p, e);
  if (wrap) sbuf_puts(p->out, ")");
}

/* A product; `negate` prints it with its (negative) coefficient's sign flipped. */
static void print_product(printer *p, sym_id e, bool negate) {
  int64_t c = 1;
  int32_t i = const_of(p->a, op_of(p->a, e, 0), &c) ? 1 : 0;
  if (negate) c = wneg(c);
  if (c == -1) sbuf_puts(p->out, "-");
  else if (c != 1) print_const(p->out, c), sbuf_puts(p->out, " * ");
  for (int32_t first = i; i < nops_of(p->a, e); i++) {
    if (i > first) sbuf_puts(p->out, " * ");
    print_operand(p, op_of(p->a, e, i), false);
  }
}

static void print_sum(printer *p, sym_id e) {
  for (int32_t i = 0; i < nops_of(p->a, e); i++) {
    sym_id t = op_of(p->a, e, i);
    int64_t c = 1;
    if (kind_of(p->a, t) == SYM_MUL) const_of(p->a, op_of(p->a, t, 0), &c);
    else const_of(p->a, t, &c);
    bool neg = c < 0 && c != INT64_MIN;
    if (i == 0) {
      print_expr(p, t);
    } else if (!neg) {
      sbuf_puts(p->out, " + ");
      print_expr(p, t);
    } else {
      sbuf_puts(p->out, " - ");
      if (kind_of(p->a, t) == SYM_CONST) print_const(p->out, -c);
      else print_product(p, t, true);
    }
  }
}

bool sym_nonneg(const sym_arena *a, sym_id e) {
  int64_t v;
  if (!valid(a, e)) return false;
  switch (kind_of(a, e)) {
  case SYM_CONST: return const_of(a, e, &v) && v >= 0;
  case SYM_SYMBOL: case SYM_VAR: case SYM_PARAM: return true;
  case SYM_MOD: return sym_nonneg(a, op_of(a, e, 1));
  case SYM_MAX: return sym_nonneg(a, op_of(a, e, 0)) || sym_nonneg(a, op_of(a, e, 1));
  default:
    for (int32_t i = 0; i < nops_of(a, e); i++)
      if (!sym_nonneg(a, op_of(a, e, i))) return false;
    return true;
  }
}

/* C's / and % truncate; they agree with floor semantics for a >= 0, b > 0. When the
 * dividend (or divisor) is not known to be non-negative, which simplification can cause
 * ((4*n - 1 - i) / 4 = n - 1 + (3 - i) / 4), print a form that is exact for any signs:
 * floor_mod(a, b) = (a % b + b) % b, floor_div(a, b) = (a - floor_mod(a, b)) / b and
 * ceildiv(a, b) = -floor_div(-a, b). */
static void print_division(printer *p, sym_id e) {
  const sym_arena *a = p->a;
  sym_kind k = kind_of(a, e);
  sym_id x = op_of(a, e, 0), y = op_of(a, e, 1);
  int64_t b;
  sbuf *o = p->out;
  if (sym_nonneg(a, x) && sym_nonneg(a, y)) {
    sbuf_puts(o, k == SYM_CEILDIV ? "((" : "(");
    print_operand(p, x, false);
    if (k == SYM_CEILDIV && const_of(a, y, &b)) {
      sbuf_puts(o, " + "), print_const(o, b - 1), sbuf_puts(o, ")");
    } else if (k == SYM_CEILDIV) {
      sbuf_puts(o, " + "), print_operand(p, y, true), sbuf_puts(o, " - 1)");
    }
    sbuf_puts(o, k == SYM_MOD ? " % " : " / ");
    print_operand(p, y, true);
    sbuf_puts(o, ")");
    return;
  }
  /* Exact forms; X and N stand for the dividend (N where it is already parenthesized),
   * Y for the divisor. */
  const char *form = k == SYM_MOD      ? "((X % Y + Y) % Y)"
                     : k == SYM_FLOORDIV ? "((X - (X % Y + Y) % Y) / Y)"
                                         : "(-((-(N) - (-(N) % Y + Y) % Y) / Y))";
  for (const char *s = form; *s; s++) {
    if (*s == 'X') print_operand(p, x, false);
    else if (*s == 'N') print_expr(p, x); /* already inside parentheses */
    else if (*s == 'Y') print_operand(p, y, true);
    else sbuf_printf(o, "%c", *s);
  }
}

static void print_expr(printer *p, sym_id e) {
  const sym_node *nd = node(p->a, e);
  switch (nd->kind) {
  case SYM_CONST: print_const(p->out, nd->value); break;
  case SYM_SYMBOL: case SYM_VAR: case SYM_PARAM: print_leaf(p, nd->kind, nd->value); break;
  case SYM_ADD: print_sum(p, e); break;
  case SYM_MUL: print_product(p, e, false); break;
  case SYM_MIN: case SYM_MAX:
    sbuf_puts(p->out, nd->kind == SYM_MIN ? "ic_min(" : "ic_max(");
    print_expr(p, op_of(p->a, e, 0));
    sbuf_puts(p->out, ", ");
    print_expr(p, op_of(p->a, e, 1));
    sbuf_puts(p->out, ")");
    break;
  default: print_division(p, e); break;
  }
}

void sym_visit(const sym_arena *a, sym_id e, sym_visit_fn visit, void *user) {
  if (!valid(a, e)) return;
  const sym_node *nd = node(a, e);
  bool leaf = nd->kind <= SYM_PARAM;
  visit(user, nd->kind, leaf ? nd->value : 0, nd->nops);
  for (int32_t i = 0; i < nops_of(a, e); i++) sym_visit(a, op_of(a, e, i), visit, user);
}

void sym_print(const sym_arena *a, sym_id e, const sym_names *names, sbuf *out) {
  if (!out) return;
  if (!valid(a, e)) {
    sbuf_puts(out, "<SYM_NONE>");
    return;
  }
  printer p = {a, names, out};
  print_expr(&p, e);
}

void sym_print_list(const sym_arena *a, int32_t n, const sym_id *es, const sym_names *names, sbuf *out) {
  sbuf_puts(out, "[");
  for (int32_t i = 0; i < n; i++) {
    if (i) sbuf_puts(out, ", ");
    sym_print(a, es[i], names, out);
  }
  sbuf_puts(out, "]");
}
