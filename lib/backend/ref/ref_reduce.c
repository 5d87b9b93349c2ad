/* The reference backend's reductions: identities, the combine step and the final value
 * of each IC_REDUCE_LIST op, as ic.h's "reductions" section states them. A lane's
 * accumulator starts at the identity and takes one element at a time (ref_reduce_lift,
 * then ref_reduce_combine); lanes combine in the canonical tree (ref_backend.c). */
#include <math.h>
#include <string.h>

#include "backend/ref/ref.h"
#include "base/dtype.h"

typedef enum ref_acc_kind { ACC_F32, ACC_F64, ACC_INT, ACC_BOOL } ref_acc_kind;

static ref_acc_kind ref_acc_kind_of(ic_dtype dt) {
  if (dt == IC_BOOL) return ACC_BOOL;
  if (dtype_is_integer(dt)) return ACC_INT;
  return dt == IC_F64 ? ACC_F64 : ACC_F32;
}

static bool ref_is_nan(ref_acc_kind k, ref_value v) {
  return (k == ACC_F32 && isnan(v.f)) || (k == ACC_F64 && isnan(v.d));
}

static bool ref_is_arith(ic_reduce_op op) {
  return op == IC_REDUCE_SUM || op == IC_REDUCE_MEAN || op == IC_REDUCE_PROD;
}

/* The accumulator of op over dt: the element's kind, but sums and products of bool
 * accumulate as integers. */
static ref_acc_kind ref_acc_kind_for(ic_reduce_op op, ic_dtype dt) {
  ref_acc_kind k = ref_acc_kind_of(dt);
  return ref_is_arith(op) && k == ACC_BOOL ? ACC_INT : k;
}

ref_acc ref_reduce_identity(ic_reduce_op op, ic_dtype dt) {
  ref_acc a = {.index = INT64_MAX};
  ref_acc_kind k = ref_acc_kind_for(op, dt);
  switch (op) {
  case IC_REDUCE_SUM: case IC_REDUCE_MEAN:
    /* -0: the exact identity of IEEE addition (-0 + x is x, -0 + -0 is -0) */
    if (k == ACC_F32) a.v.f = -0.0f;
    else if (k == ACC_F64) a.v.d = -0.0;
    else a.v.i = 0;
    break;
  case IC_REDUCE_PROD:
    if (k == ACC_F32) a.v.f = 1.0f;
    else if (k == ACC_F64) a.v.d = 1.0;
    else a.v.i = 1;
    break;
  case IC_REDUCE_MAX: case IC_REDUCE_ARGMAX: case IC_REDUCE_MIN: case IC_REDUCE_ARGMIN: {
    bool hi = op == IC_REDUCE_MIN || op == IC_REDUCE_ARGMIN;
    if (k == ACC_F32) a.v.f = hi ? INFINITY : -INFINITY;
    else if (k == ACC_F64) a.v.d = hi ? INFINITY : -INFINITY;
    else if (k == ACC_INT && dtype_is_unsigned(dt)) a.v.i = hi ? (int64_t)UINT64_MAX : 0; /* compared as uint64 */
    else if (k == ACC_INT) a.v.i = hi ? INT64_MAX : INT64_MIN;
    else a.v.b = hi;
    break;
  }
  case IC_REDUCE_ANY: a.v.b = false; break;
  case IC_REDUCE_ALL: a.v.b = true; break;
  default: break;
  }
  return a;
}

ref_acc ref_reduce_lift(ic_reduce_op op, ic_dtype dt, ref_value x, int64_t r) {
  ref_acc a = {.v = x, .index = r};
  ref_acc_kind k = ref_acc_kind_of(dt);
  if (op == IC_REDUCE_ANY || op == IC_REDUCE_ALL) {
    a.v.b = k == ACC_F32 ? x.f != 0 || isnan(x.f) : k == ACC_F64 ? x.d != 0 || isnan(x.d) : k == ACC_INT ? x.i != 0 : x.b;
  } else if (ref_is_arith(op) && k == ACC_BOOL) {
    a.v.i = x.b ? 1 : 0;
  }
  return a;
}

/* argmax / argmin: the first NaN, else the larger (smaller) value, the first on ties. */
static ref_acc ref_arg_combine(bool max, ref_acc_kind k, bool is_unsigned, ref_acc a, ref_acc b) {
  bool na = ref_is_nan(k, a.v), nb = ref_is_nan(k, b.v);
  if (na || nb) return na && nb ? (a.index <= b.index ? a : b) : na ? a : b;
  int c;
  if (k == ACC_F32) c = a.v.f < b.v.f ? -1 : a.v.f > b.v.f;
  else if (k == ACC_F64) c = a.v.d < b.v.d ? -1 : a.v.d > b.v.d;
  else if (is_unsigned) c = (uint64_t)a.v.i < (uint64_t)b.v.i ? -1 : (uint64_t)a.v.i > (uint64_t)b.v.i;
  else c = a.v.i < b.v.i ? -1 : a.v.i > b.v.i;
  if (c == 0) return a.index <= b.index ? a : b;
  return (c > 0) == max ? a : b;
}

ref_acc ref_reduce_combine(ic_reduce_op op, ic_dtype dt, ref_acc a, ref_acc b) {
  ref_acc_kind k = ref_acc_kind_for(op, dt);
  ref_acc r = a;
  switch (op) {
  case IC_REDUCE_SUM: case IC_REDUCE_MEAN:
    if (k == ACC_F32) r.v.f = a.v.f + b.v.f;
    else if (k == ACC_F64) r.v.d = a.v.d + b.v.d;
    else r.v.i = (int64_t)((uint64_t)a.v.i + (uint64_t)b.v.i); /* wraps modulo 2^64 */
    break;
  case IC_REDUCE_PROD:
    if (k == ACC_F32) r.v.f = a.v.f * b.v.f;
    else if (k == ACC_F64) r.v.d = a.v.d * b.v.d;
    else r.v.i = (int64_t)((uint64_t)a.v.i * (uint64_t)b.v.i);
    break;
  case IC_REDUCE_MAX: case IC_REDUCE_MIN: {
    bool max = op == IC_REDUCE_MAX;
    if (k == ACC_BOOL) {
      r.v.b = max ? a.v.b || b.v.b : a.v.b && b.v.b;
    } else {
      /* maximum / minimum of the op table: NaN-propagating, +0 over -0 (max); in the
       * wide compute type, where the identities (+-inf, the int64 or uint64 extremes)
       * exist: the results are elements, exact in dt */
      ref_value args[3] = {a.v, b.v, {0}};
      ic_dtype wide = k == ACC_F32 ? IC_F32 : k == ACC_F64 ? IC_F64 : dtype_is_unsigned(dt) ? IC_U64 : IC_I64;
      r.v = ref_apply(max ? IC_OP_MAXIMUM : IC_OP_MINIMUM, wide, wide, args);
    }
    break;
  }
  case IC_REDUCE_ARGMAX: case IC_REDUCE_ARGMIN: return ref_arg_combine(op == IC_REDUCE_ARGMAX, k, dtype_is_unsigned(dt), a, b);
  case IC_REDUCE_ANY: r.v.b = a.v.b || b.v.b; break;
  case IC_REDUCE_ALL: r.v.b = a.v.b && b.v.b; break;
  default: break;
  }
  return r;
}

ref_value ref_reduce_finish(ic_reduce_op op, ic_dtype dt, ic_dtype result_dt, ref_acc acc, int64_t count,
                            double correction) {
  ref_acc_kind k = ref_acc_kind_of(dt);
  ref_value r = acc.v;
  switch (op) {
  case IC_REDUCE_ARGMAX: case IC_REDUCE_ARGMIN: r.i = acc.index; return r;
  case IC_REDUCE_SUM:
    if (count == 0) memset(&r, 0, sizeof r); /* +0, not the identity -0 */
    break;
  case IC_REDUCE_MEAN: {
    double divisor = fmax((double)count - correction, 0.0);
    if (k == ACC_F32) r.f = r.f / (float)divisor;
    else r.d = r.d / divisor;
    break;
  }
  default: break;
  }
  if (k == ACC_F32 && (op == IC_REDUCE_MAX || op == IC_REDUCE_MIN) && result_dt != IC_F32) {
    /* exact but for a NaN's bits: the narrow dtype's canonical NaN, as a stored row's */
    ref_value args[3] = {r, {0}, {0}};
    return ref_apply(IC_OP_CAST, IC_F32, result_dt, args);
  }
  if (k == ACC_F32 && ref_is_arith(op)) {
    /* one rounding to the result dtype; NaN results are the canonical NaN, as GPU
     * arithmetic gives them */
    r = ref_canonical(IC_F32, r);
    if (result_dt != IC_F32) {
      ref_value args[3] = {r, {0}, {0}};
      r = ref_apply(IC_OP_CAST, IC_F32, result_dt, args);
    }
  }
  return r;
}
