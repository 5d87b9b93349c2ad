/* How a pointwise kernel's threads cover its points (kir_pointwise_strategy_of) and how
 * each of its accesses moves memory (kir_access_of): decided from the kernel alone, so
 * the kernel IR dump can say why a kernel is fast or slow. */
#include "kir/kir.h"

#include <stdlib.h>
#include <string.h>

/* Bytes of one vector access; the most a thread loads of one tensor (two vectors: the
 * second half-sector read hits L2) and stores (one vector: a warp's store then writes
 * whole 32-byte sectors; two 16-byte stores a thread leave every sector half written per
 * instruction, measured at 60% of copy for i8 -> f32 against 96% with one). */
enum { KIR_VECTOR_BYTES = 16, KIR_LOAD_BYTES = 32, KIR_STORE_BYTES = 16 };

const char *kir_access_name(kir_access a) {
  switch (a) {
  case KIR_ACCESS_VECTOR: return "vector";
  case KIR_ACCESS_SPLAT: return "splat";
  case KIR_ACCESS_ELEMENT: return "element";
  case KIR_ACCESS_TILED: return "tiled";
  }
  return "?";
}

static bool kir_reads_last(const kir_kernel *k, sym_id offset) {
  return k->ndim > 0 && sym_depends_on(k->syms, offset, SYM_VAR, k->ndim - 1);
}

/* offset = sum of coeff[d] * i<d> + rest, every coefficient and rest free of vars; false
 * when offset is not of that form. */
static bool kir_affine_coeffs(const kir_kernel *k, sym_id offset, sym_id *coeff, sym_id *rest) {
  *rest = offset;
  for (int32_t d = k->ndim - 1; d >= 0; d--) {
    sym_id r;
    if (!sym_affine_in_var(k->syms, *rest, d, &coeff[d], &r) || sym_depends_on(k->syms, coeff[d], SYM_VAR, -1)) return false;
    *rest = r;
  }
  return true;
}

bool kir_contiguous_along(const kir_kernel *k, sym_id offset, int32_t dim, int64_t m, sym_id *checks, int32_t *nchecks) {
  sym_arena *a = k->syms;
  *nchecks = 0;
  sym_id coeff[IC_MAX_DIMS], rest;
  int64_t c;
  if (!kir_affine_coeffs(k, offset, coeff, &rest) || !sym_is_const(a, coeff[dim], &c) || c != 1) return false;
  for (int32_t d = 0; d <= k->ndim; d++) {
    if (d == dim) continue;
    const sym_id e = d == k->ndim ? rest : coeff[d];
    if (!sym_is_const(a, e, &c)) checks[(*nchecks)++] = e;
    else if (c % m != 0) return false;
  }
  return true;
}

kir_access kir_access_of(const kir_kernel *k, int32_t vec, sym_id offset, size_t elem, sym_id *checks,
                         int32_t *nchecks) {
  const int32_t last = k->ndim - 1;
  *nchecks = 0;
  if (last < 0 || vec == 1) return KIR_ACCESS_ELEMENT;
  if (!kir_reads_last(k, offset)) return KIR_ACCESS_SPLAT;
  if ((size_t)vec * elem < 4) return KIR_ACCESS_ELEMENT; /* vectors move whole 32-bit words */
  /* every other coefficient and the constant part multiples of V: at the slot's first
   * point (a multiple of V along the last dim) the address is vector aligned */
  return kir_contiguous_along(k, offset, last, vec, checks, nchecks) ? KIR_ACCESS_VECTOR : KIR_ACCESS_ELEMENT;
}

/* Whether range instruction i is the same at every point of a slot whenever its two ends
 * agree: its index is affine in the last var with a constant coefficient (monotone along
 * the slot), or free of it; and so is its parent's. */
static bool kir_range_slot_uniform(const kir_kernel *k, int32_t i) {
  const kir_instr *in = &k->instrs.items[i];
  if (in->nargs == 1 && !kir_range_slot_uniform(k, in->args[0])) return false;
  if (!kir_reads_last(k, in->offset)) return true;
  sym_id coeff, rest;
  int64_t c;
  return sym_affine_in_var(k->syms, in->offset, k->ndim - 1, &coeff, &rest) && sym_is_const(k->syms, coeff, &c);
}

/* The dim (not the last) along which load i is contiguous, when it also reads the last
 * var with another stride (a transposed read), or may be (strides that are run-time
 * parameters for both: the innermost such dim; the tile's load order is then chosen at
 * run time, kir_tile_order); -1 otherwise. */
static int32_t kir_transposed_dim(const kir_kernel *k, int32_t i) {
  const kir_instr *in = &k->instrs.items[i];
  if (in->kind != KIR_LOAD || kir_is_guarded_load(in) || !kir_reads_last(k, in->offset)) return -1;
  sym_arena *a = k->syms;
  sym_id coeff[IC_MAX_DIMS], rest;
  if (!kir_affine_coeffs(k, in->offset, coeff, &rest)) return -1;
  int64_t c;
  const bool last_const = sym_is_const(a, coeff[k->ndim - 1], &c);
  if (last_const && c == 1) return -1;
  for (int32_t d = k->ndim - 2; d >= 0; d--)
    if (sym_is_const(a, coeff[d], &c) && c == 1) return d;
  for (int32_t d = k->ndim - 2; d >= 0 && !last_const; d--)
    if (!sym_is_const(a, coeff[d], &c)) return d;
  return -1;
}

sym_id kir_tile_order(const kir_kernel *k, int32_t i) {
  sym_id coeff, rest;
  int64_t c;
  const kir_instr *in = &k->instrs.items[i];
  if (!sym_affine_in_var(k->syms, in->offset, k->ndim - 1, &coeff, &rest) || sym_is_const(k->syms, coeff, &c)) return -1;
  return coeff;
}

int32_t kir_tile_load_width(const kir_kernel *k, int32_t i, int32_t tile_dim) {
  const kir_instr *in = &k->instrs.items[i];
  sym_id coeff, rest;
  int64_t c;
  size_t size = ic_dtype_size(in->dtype);
  if (size > 2 || kir_tile_order(k, i) >= 0 || !sym_affine_in_var(k->syms, in->offset, tile_dim, &coeff, &rest) ||
      !sym_is_const(k->syms, coeff, &c) || c != 1)
    return 1;
  return (int32_t)(16 / size);
}

/* Whether a dim may be tiled: symbolic, or a constant of at least half a tile. */
static bool kir_tile_worth(const kir_kernel *k, int32_t d) {
  int64_t c;
  return !sym_is_const(k->syms, k->dims[d], &c) || c >= KIR_TILE / 2;
}

/* The shared memory of the tiles of a kernel tiled along p, tile_last wide: a load read
 * in vectors along p (kir_tile_load_width > 1) keeps T x tile_last storage elements; any
 * other (T + 1) x tile_last (padded against bank conflicts) of its compute type, at most
 * max(4, size) bytes an element. */
static int64_t kir_tile_bytes(const kir_kernel *k, int32_t p, int32_t tile_last) {
  int64_t bytes = 0;
  for (int32_t i = 0; i < k->instrs.count; i++) {
    if (kir_transposed_dim(k, i) != p) continue;
    int64_t size = (int64_t)ic_dtype_size(k->instrs.items[i].dtype);
    if (kir_tile_load_width(k, i, p) > 1) bytes += (int64_t)KIR_TILE * tile_last * size;
    else bytes += (int64_t)(KIR_TILE + 1) * tile_last * (size > 4 ? size : 4);
  }
  return bytes;
}

static int32_t kir_tile_dim_of(const kir_kernel *k) {
  if (k->ndim < 2 || k->reduces || kir_pack(k) > 1) return -1;
  for (int32_t i = 0; i < k->instrs.count; i++)
    if (k->instrs.items[i].kind == KIR_RANGE) return -1;
  for (int32_t i = 0; i < k->instrs.count; i++) {
    int32_t p = kir_transposed_dim(k, i);
    /* tiles beyond a block's static shared memory: the vector path instead (slower, as
     * its transposed loads are not coalesced, but within what every device launches) */
    if (p >= 0 && kir_tile_worth(k, p) && kir_tile_worth(k, k->ndim - 1))
      return kir_tile_bytes(k, p, KIR_TILE) <= KIR_TILE_SMEM ? p : -1;
  }
  return -1;
}

sym_id kir_tile_points(const kir_kernel *k, const kir_pointwise_strategy *ps) {
  sym_arena *a = k->syms;
  sym_id points = sym_const(a, 1);
  for (int32_t d = 0; d < k->ndim; d++) {
    const int32_t t = d == ps->tile_dim ? KIR_TILE : d == k->ndim - 1 ? ps->tile_last : 0;
    points = sym_mul(a, points, t ? sym_mul(a, sym_ceildiv(a, k->dims[d], sym_const(a, t)), sym_const(a, t)) : k->dims[d]);
  }
  return points;
}

/* The bytes load i spans: its dtype times the dims its offset depends on; -1 when one of
 * them is not a constant. */
static int64_t kir_load_span(const kir_kernel *k, const kir_instr *in) {
  int64_t span = (int64_t)ic_dtype_size(in->dtype), c;
  for (int32_t d = 0; d < k->ndim; d++) {
    if (!sym_depends_on(k->syms, in->offset, SYM_VAR, d)) continue;
    if (!sym_is_const(k->syms, k->dims[d], &c)) return -1;
    span = c > 0 && span > INT64_MAX / c ? INT64_MAX : span * c;
  }
  return span;
}

/* The row dim (kir.h), -1 for none. A candidate is a dim but the last that some load is
 * broadcast along (its offset free of the dim's var) and that no range tests. The
 * innermost candidate is taken when the kernel is write-dominated (every load broadcast
 * along some candidate, or one element a slot), else the innermost along which a load
 * spanning more than KIR_ROW_SPAN bytes is broadcast: more than an SM's L1 keeps, so each
 * row would read it from L2 again (RoPE's cos and sin for every batch row). */
static int32_t kir_row_dim_of(const kir_kernel *k, int32_t vec) {
  if (k->ndim < 2 || vec < 2 || kir_pack(k) > 1) return -1;
  bool candidate[IC_MAX_DIMS] = {false}, big[IC_MAX_DIMS] = {false}, loads = false, cheap = true;
  for (int32_t i = 0; i < k->instrs.count; i++) {
    const kir_instr *in = &k->instrs.items[i];
    if (in->kind == KIR_ASM) return -1;
    if (in->kind != KIR_LOAD) continue;
    bool some = !kir_reads_last(k, in->offset);
    int64_t span = kir_load_span(k, in);
    for (int32_t d = 0; d < k->ndim - 1; d++)
      if (!sym_depends_on(k->syms, in->offset, SYM_VAR, d)) {
        candidate[d] = some = true;
        big[d] = big[d] || span > KIR_ROW_SPAN;
      }
    cheap = cheap && some; /* else a load of every point: read-write */
    loads = true;
  }
  for (int32_t i = 0; i < k->instrs.count; i++) /* rows share the slot's ranges */
    for (int32_t d = 0; k->instrs.items[i].kind == KIR_RANGE && d < k->ndim - 1; d++)
      if (sym_depends_on(k->syms, k->instrs.items[i].offset, SYM_VAR, d)) candidate[d] = false;
  for (int32_t d = k->ndim - 2; loads && d >= 0; d--)
    if (candidate[d] && (cheap || big[d])) return d;
  return -1;
}

sym_id kir_row_points(const kir_kernel *k, const kir_pointwise_strategy *ps) {
  sym_arena *a = k->syms;
  sym_id points = sym_const(a, 1);
  for (int32_t d = 0; d < k->ndim; d++)
    points = sym_mul(a, points, d == ps->row_dim ? sym_ceildiv(a, k->dims[d], sym_const(a, ps->rows)) : k->dims[d]);
  return points;
}

void kir_plan_pointwise_launch(kir_kernel *k) {
  kir_pointwise_strategy ps;
  kir_pointwise_strategy_of(k, &ps);
  if (ps.tile_dim >= 0) k->launch_numel = kir_tile_points(k, &ps);
  if (ps.row_dim >= 0) k->launch_numel = kir_row_points(k, &ps);
  k->rows_fixed = true;
  k->rows_dim = ps.row_dim;
}

void kir_pointwise_strategy_of(const kir_kernel *k, kir_pointwise_strategy *out) {
  *out = (kir_pointwise_strategy){.vec = 1, .uniform_ranges = false, .tile_dim = -1, .tile_last = 0, .row_dim = -1, .rows = 1};
  if (k->ndim == 0 || k->reduces) return;
  if ((out->tile_dim = kir_tile_dim_of(k)) >= 0) {
    size_t wide = 1;
    for (int32_t b = 0; b < k->buffers.count; b++) {
      size_t s = ic_dtype_size(k->buffers.items[b].dtype);
      wide = s > wide ? s : wide;
    }
    out->vec = (int32_t)(KIR_VECTOR_BYTES / wide); /* one vector of the widest a slot */
    out->tile_last = wide <= 2 && kir_tile_bytes(k, out->tile_dim, 2 * KIR_TILE) <= KIR_TILE_SMEM ? 2 * KIR_TILE : KIR_TILE;
    return;
  }
  /* V from the tensors that move along the slot: 16 bytes of the narrowest, at most 32
   * of the widest load and 16 of the widest store; per-row (splat) operands read one
   * element a slot and do not count */
  size_t narrow = KIR_VECTOR_BYTES, wide_load = 1, wide_store = 1;
  bool any = false;
  for (int32_t i = 0; i < k->instrs.count; i++) {
    const kir_instr *in = &k->instrs.items[i];
    if ((in->kind != KIR_LOAD && in->kind != KIR_STORE) || !kir_reads_last(k, in->offset)) continue;
    size_t s = ic_dtype_size(in->dtype), *wide = in->kind == KIR_STORE ? &wide_store : &wide_load;
    narrow = s < narrow ? s : narrow;
    *wide = s > *wide ? s : *wide;
    any = true;
  }
  if (!any) { /* every access a splat: 16 bytes of the widest buffer */
    for (int32_t b = 0; b < k->buffers.count; b++) {
      size_t s = ic_dtype_size(k->buffers.items[b].dtype);
      wide_store = s > wide_store ? s : wide_store;
    }
    narrow = wide_store;
  }
  int32_t vec = (int32_t)(KIR_VECTOR_BYTES / narrow);
  while (vec > 1 && ((size_t)vec * wide_load > KIR_LOAD_BYTES || (size_t)vec * wide_store > KIR_STORE_BYTES)) vec /= 2;
  /* a slot lies in one row of the last dim: V divides a constant last dim */
  int64_t last = 0;
  if (k->ndim > 1 && sym_is_const(k->syms, k->dims[k->ndim - 1], &last) && last > 0)
    while (vec > 1 && last % vec != 0) vec /= 2;
  const int32_t pack = kir_pack(k);
  out->vec = vec < pack ? pack : vec;
  /* concat and pad: a slot whose ranges hold at both of its ends (or at neither, on one
   * side) takes them once for the slot, and its guarded loads stay vectors */
  bool ranges = false, uniform = true;
  for (int32_t i = 0; i < k->instrs.count; i++) {
    if (k->instrs.items[i].kind != KIR_RANGE) continue;
    ranges = true;
    uniform = uniform && kir_range_slot_uniform(k, i);
  }
  out->uniform_ranges = ranges && uniform && out->vec > 1 && pack == 1;
  out->row_dim = k->rows_fixed ? k->rows_dim : kir_row_dim_of(k, out->vec);
  if (out->row_dim >= 0) out->rows = KIR_ROWS;
}

kir_access kir_instr_access(const kir_kernel *k, const kir_pointwise_strategy *ps, int32_t i, sym_id *checks,
                            int32_t *nchecks) {
  const kir_instr *in = &k->instrs.items[i];
  *nchecks = 0;
  if (ps->tile_dim >= 0 && kir_transposed_dim(k, i) == ps->tile_dim) return KIR_ACCESS_TILED;
  /* a guarded load under ranges taken point by point reads each point under its own */
  if (kir_is_guarded_load(in) && !ps->uniform_ranges) return KIR_ACCESS_ELEMENT;
  return kir_access_of(k, ps->vec, in->offset, ic_dtype_size(in->dtype), checks, nchecks);
}

/* ---------------------------------------------------------------- shared loads, exact ops */

/* Whether value v is seen only on arm `arm` (1: true, 2: false) of where instruction w:
 * everything computed from it is an op, and reaches the kernel's results only through
 * that operand of w. from: scratch, count flags. */
static bool kir_seen_only_on_arm(const kir_kernel *k, int32_t v, int32_t w, int32_t arm, bool *from) {
  memset(from, 0, (size_t)k->instrs.count * sizeof *from);
  from[v] = true;
  for (int32_t j = v + 1; j < k->instrs.count; j++) {
    const kir_instr *in = &k->instrs.items[j];
    bool uses = false;
    for (int32_t a = 0; a < in->nargs; a++) uses |= from[in->args[a]];
    if (!uses) continue;
    if (j == w) {
      if (from[in->args[0]] || from[in->args[3 - arm]]) return false;
    } else if (in->kind == KIR_OP) {
      from[j] = true;
    } else {
      return false; /* a store, a reduction, an asm: seen, or not an op */
    }
  }
  return true;
}

/* A guarded load that kir_shared_loads may pair: one vector of at most 16 bytes. */
static bool kir_shareable_load(const kir_kernel *k, const kir_pointwise_strategy *ps, int32_t i) {
  const kir_instr *in = &k->instrs.items[i];
  sym_id checks[IC_MAX_DIMS + 1];
  int32_t n;
  return kir_is_guarded_load(in) && ps->vec * (int32_t)ic_dtype_size(in->dtype) <= KIR_VECTOR_BYTES &&
         kir_instr_access(k, ps, i, checks, &n) == KIR_ACCESS_VECTOR;
}

static bool kir_per_row(const kir_kernel *k, const kir_pointwise_strategy *ps, int32_t i) {
  return ps->rows > 1 && sym_depends_on(k->syms, k->instrs.items[i].offset, SYM_VAR, ps->row_dim);
}

bool kir_shared_loads(const kir_kernel *k, const kir_pointwise_strategy *ps, int32_t *partner, bool *true_arm) {
  const int32_t count = k->instrs.count;
  for (int32_t i = 0; i < count; i++) {
    partner[i] = -1;
    true_arm[i] = false;
  }
  if (k->reduces || ps->tile_dim >= 0 || !ps->uniform_ranges) return true;
  bool *from = sys_calloc((size_t)count + 1, sizeof *from);
  if (!from) return false;
  for (int32_t w = 0; w < count; w++) {
    const kir_instr *wi = &k->instrs.items[w];
    if (wi->kind != KIR_OP || wi->op != IC_OP_WHERE) continue;
    for (int32_t a = 0; a < w; a++) {
      const kir_instr *la = &k->instrs.items[a];
      if (partner[a] >= 0 || !kir_shareable_load(k, ps, a) || la->args[0] != wi->args[0] ||
          !kir_seen_only_on_arm(k, a, w, 1, from))
        continue;
      for (int32_t b = 0; b < w; b++) {
        const kir_instr *lb = &k->instrs.items[b];
        if (b == a || partner[b] >= 0 || !kir_shareable_load(k, ps, b) || lb->buffer != la->buffer ||
            lb->dtype != la->dtype || kir_per_row(k, ps, a) != kir_per_row(k, ps, b) ||
            !kir_seen_only_on_arm(k, b, w, 2, from))
          continue;
        partner[a] = b;
        partner[b] = a;
        true_arm[a] = true;
        break;
      }
    }
  }
  free(from);
  return true;
}

/* Ops whose result is the canonical NaN whatever NaN an operand holds, for operands of
 * a narrow float (computed in f32): f32 arithmetic (GPU arithmetic makes the canonical
 * NaN, ic.h), maximum, minimum and clamp (max.NaN / min.NaN make it), relu (its NaN is
 * the canonical one) and comparisons (NaN-ness only). */
static bool kir_op_canonicalizes(ic_op op) {
  switch (op) {
  case IC_OP_ADD: case IC_OP_SUB: case IC_OP_MUL: case IC_OP_DIV:
  case IC_OP_MAXIMUM: case IC_OP_MINIMUM: case IC_OP_CLAMP: case IC_OP_RELU:
  case IC_OP_EQ: case IC_OP_NE: case IC_OP_LT: case IC_OP_LE: case IC_OP_GT: case IC_OP_GE:
    return true;
  default:
    return false;
  }
}

bool kir_exact_unrounded(const kir_kernel *k, bool *unrounded) {
  const int32_t count = k->instrs.count;
  /* from the last instruction back: every use of v comes after v, so when v is reached
   * each use has said whether it sees v's NaN bits */
  bool *used = sys_calloc((size_t)count + 1, sizeof *used), *seen = sys_calloc((size_t)count + 1, sizeof *seen);
  for (int32_t i = 0; i < count; i++) unrounded[i] = false;
  if (!used || !seen) {
    free(used);
    free(seen);
    return false;
  }
  for (int32_t v = count - 1; v >= 0; v--) {
    const kir_instr *in = &k->instrs.items[v];
    const bool unseen = used[v] && !seen[v]; /* no use sees v's NaN bits */
    unrounded[v] = unseen && in->kind == KIR_OP && dtype_is_narrow_float(in->dtype) &&
                   (in->op == IC_OP_NEG || in->op == IC_OP_ABS || in->op == IC_OP_RELU);
    for (int32_t a = 0; a < in->nargs; a++) {
      const int32_t x = in->args[a];
      used[x] = true;
      /* a reduction's result is the canonical NaN (sum, prod, mean, var: arithmetic; max,
       * min: max.NaN / min.NaN) or sees NaN-ness only (argmax, argmin, any, all) */
      if (in->kind == KIR_REDUCE) continue;
      if (in->kind != KIR_OP) seen[x] = true;
      else if (in->op == IC_OP_WHERE) seen[x] |= a == 0 || !unseen;
      else seen[x] |= !kir_op_canonicalizes(in->op);
    }
  }
  free(used);
  free(seen);
  return true;
}
