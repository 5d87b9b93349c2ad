/* The reduction test cases, shared by the CPU test (tests/cpu/test_reduce.c: the ref
 * backend, host memory) and the GPU test (tests/gpu/gpu_reduce.c: the cuda backend,
 * device memory, and the ref backend beside it): every reduction of include/ic/ic.h's
 * "reductions" section, and var, std, softmax, log_softmax, layer_norm and rms_norm,
 * against plain C references.
 *
 * The references follow the documented semantics literally:
 *   - sums, means and products in the documented order (chunks of 8 elements, L = 1024 * G
 *     lanes, G = max(1, ceil(C / 32768)), each lane sequential from the identity, then a
 *     pairwise tree over the lanes padded with the identity to a power of two), computed
 *     in f32 for f16/bf16/fp8/f32 and rounded once, in f64 for f64: checked bit for bit;
 *     and float64 sums checked against the documented error bound;
 *   - integer and bool sums and products in i64, wrapping; max/min/argmax/argmin/any/all
 *     exactly (NaN propagation, the first NaN wins, ties give the first index, -0 == +0);
 *   - var and std as their documented decomposition (mean, sub, mul, mean with the
 *     correction, sqrt), each step rounded to the dtype as the pointwise ops round;
 *   - softmax, log_softmax, layer_norm and rms_norm step by step in float64 with each
 *     step rounded to the dtype, within a bound of a few units in the last place.
 * NaN results of f32-computed reductions must be the canonical NaN (0x7fffffff, stored as
 * 0x7fff or 0x7f); f64 NaNs are only required to be NaNs.
 *
 * The including file defines nothing; it sets rc_ctx and rc_backend in its fixture, and
 * rc_cross_ref when it wants every fused cuda result compared with the ref backend's. */
#ifndef IC_TESTS_REDUCE_CASES_H
#define IC_TESTS_REDUCE_CASES_H

#include <check.h>
#include <ic/ic.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "host_ref.h"

#ifndef IC_OK_OR_FAIL
#define IC_OK_OR_FAIL(call) ck_assert_msg((call) == IC_OK, "%s: %s", #call, ic_last_error())
#endif
#ifndef CHECK_ELEM
/* Reports through Check only when the check fails (Check records every passing assertion). */
#define CHECK_ELEM(cond, ...)               \
  do {                                      \
    if (!(cond)) ck_abort_msg(__VA_ARGS__); \
  } while (0)
#endif

static ic_context *rc_ctx;
static const char *rc_backend; /* "ref" or "cuda" */
static bool rc_cross_ref;      /* cuda: compare every fused result with the ref backend's */
static bool rc_eager = true;   /* also compile and run eager (the GPU test limits it: NVRTC time) */
static uint64_t rc_seed = 0x2545f4914f6cdd1dull;

#define RC_COUNT(a) ((int)(sizeof(a) / sizeof *(a)))

/* ---------------------------------------------------------------- memory per backend */

static inline bool rc_is_cuda(const char *be) { return be && strcmp(be, "cuda") == 0; }

static inline void *rc_upload(const char *be, const void *h, size_t bytes) {
  void *d = NULL;
  if (rc_is_cuda(be)) {
    IC_OK_OR_FAIL(ic_malloc(rc_ctx, bytes ? bytes : 1, &d));
    if (bytes) IC_OK_OR_FAIL(ic_memcpy_htod(rc_ctx, d, h, bytes));
  } else {
    d = malloc(bytes ? bytes : 1);
    ck_assert_ptr_nonnull(d);
    if (bytes) memcpy(d, h, bytes);
  }
  return d;
}

static inline void *rc_poisoned(const char *be, size_t bytes) {
  void *d = NULL;
  if (rc_is_cuda(be)) {
    IC_OK_OR_FAIL(ic_malloc(rc_ctx, bytes ? bytes : 1, &d));
    if (bytes) IC_OK_OR_FAIL(ic_memset_d8(rc_ctx, d, 0xA5, bytes));
  } else {
    d = malloc(bytes ? bytes : 1);
    ck_assert_ptr_nonnull(d);
    memset(d, 0xA5, bytes);
  }
  return d;
}

static inline void *rc_download(const char *be, const void *d, size_t bytes) {
  void *h = malloc(bytes ? bytes : 1);
  ck_assert_ptr_nonnull(h);
  if (!bytes) return h;
  if (rc_is_cuda(be)) IC_OK_OR_FAIL(ic_memcpy_dtoh(rc_ctx, h, d, bytes));
  else memcpy(h, d, bytes);
  return h;
}

static inline void rc_free(const char *be, void *d) {
  if (rc_is_cuda(be)) IC_OK_OR_FAIL(ic_free(rc_ctx, d));
  else free(d);
}

static inline void rc_sync(const char *be) {
  if (rc_is_cuda(be)) IC_OK_OR_FAIL(ic_stream_synchronize(rc_ctx, NULL));
}

/* ---------------------------------------------------------------- host values */

static inline bool rc_f32_computed(ic_dtype dt) { return ref_is_float(dt); }
static inline bool rc_is_floating(ic_dtype dt) { return ref_is_float(dt) || dt == IC_F64; }

/* Stores an f32-computed result rounded to dt; NaN as the canonical NaN. */
static inline void rc_store_f(ic_dtype dt, void *p, int64_t i, float f) {
  unsigned char *q = (unsigned char *)p + i * (int64_t)ic_dtype_size(dt);
  if (isnan(f)) {
    if (dt == IC_F32) {
      uint32_t b = 0x7fffffffu;
      memcpy(q, &b, 4);
    } else if (dt == IC_F16 || dt == IC_BF16) {
      uint16_t b = 0x7fff;
      memcpy(q, &b, 2);
    } else {
      *q = 0x7f;
    }
    return;
  }
  ref_set(dt, p, i, (hv){.f = f});
}

static inline void rc_store_d(void *p, int64_t i, double d) { ref_set(IC_F64, p, i, (hv){.d = d}); }

/* The value as a double (i64 beyond 2^53 rounded; messages and bounds only). */
static inline double rc_dbl(ic_dtype dt, hv v) { return ref_show(dt, v); }

/* Equal storage: bit for bit, except that two f64 NaNs are equal. */
static inline bool rc_same(ic_dtype dt, const void *a, const void *b) {
  size_t es = ic_dtype_size(dt);
  if (memcmp(a, b, es) == 0) return true;
  if (dt == IC_F64) {
    double x, y;
    memcpy(&x, a, 8);
    memcpy(&y, b, 8);
    return isnan(x) && isnan(y);
  }
  return false;
}

static inline uint64_t rc_bits(ic_dtype dt, const void *p) {
  uint64_t b = 0;
  memcpy(&b, p, ic_dtype_size(dt));
  return b;
}

/* ---------------------------------------------------------------- the documented order */

typedef struct rc_order {
  int64_t chunks, groups, lanes, pow2; /* C, G, L and L rounded up to a power of two */
} rc_order;

static inline rc_order rc_order_of(int64_t n) {
  rc_order o;
  o.chunks = (n + 7) / 8;
  o.groups = o.chunks <= 32768 ? 1 : (o.chunks + 32767) / 32768;
  o.lanes = 1024 * o.groups;
  o.pow2 = 1;
  while (o.pow2 < o.lanes) o.pow2 *= 2;
  return o;
}

/* The documented order over v[0..n) (prod: products, identity 1; else sums, identity
 * -0; the sum of nothing is +0). groups_override > 0 forces another G (to show that the
 * data tells orders apart). */
#define RC_ORDER_FN(name, T)                                                                \
  static inline T name(const T *v, int64_t n, bool prod, int64_t groups_override) {         \
    if (n == 0) return prod ? (T)1 : (T)0;                                                  \
    rc_order o = rc_order_of(n);                                                            \
    if (groups_override > 0) {                                                              \
      o.groups = groups_override;                                                           \
      o.lanes = 1024 * o.groups;                                                            \
      o.pow2 = 1;                                                                           \
      while (o.pow2 < o.lanes) o.pow2 *= 2;                                                 \
    }                                                                                       \
    T *lane = malloc((size_t)o.pow2 * sizeof(T));                                           \
    ck_assert_ptr_nonnull(lane);                                                            \
    const T id = prod ? (T)1 : (T)-0.0;                                                     \
    for (int64_t j = 0; j < o.pow2; j++) lane[j] = id;                                      \
    for (int64_t j = 0; j < o.lanes && j < o.chunks; j++) {                                 \
      T acc = id;                                                                           \
      for (int64_t c = j; c < o.chunks; c += o.lanes) {                                     \
        int64_t end = 8 * c + 8 < n ? 8 * c + 8 : n;                                        \
        for (int64_t r = 8 * c; r < end; r++) acc = prod ? (T)(acc * v[r]) : (T)(acc + v[r]); \
      }                                                                                     \
      lane[j] = acc;                                                                        \
    }                                                                                       \
    for (int64_t w = o.pow2; w > 1; w /= 2)                                                 \
      for (int64_t i = 0; i < w / 2; i++)                                                   \
        lane[i] = prod ? (T)(lane[2 * i] * lane[2 * i + 1]) : (T)(lane[2 * i] + lane[2 * i + 1]); \
    T r = lane[0];                                                                          \
    free(lane);                                                                             \
    return r;                                                                               \
  }
RC_ORDER_FN(rc_order_f32, float)
RC_ORDER_FN(rc_order_f64, double)

/* The first-order bound of the header for an f32 (eps 2^-24) or f64 (2^-53) sum of n
 * values whose magnitudes sum to abs_sum, times a safety factor of 2. */
static inline double rc_sum_bound(int64_t n, double abs_sum, double eps) {
  if (n == 0) return 0.0;
  rc_order o = rc_order_of(n);
  int64_t k = 8 * ((o.chunks + o.lanes - 1) / o.lanes);
  if (k > n) k = n;
  return 2.0 * ((double)k + log2((double)o.lanes)) * eps * abs_sum;
}

/* ---------------------------------------------------------------- what is computed */

typedef enum rc_kind { RK_REDUCE, RK_MEAN_CORRECTION, RK_VAR, RK_STD } rc_kind;

typedef struct rc_def {
  const char *name;
  rc_kind kind;
  ic_reduce_op op;
  double correction;
} rc_def;

static const rc_def rc_defs[] = {
    {"sum", RK_REDUCE, IC_REDUCE_SUM, 0},       {"mean", RK_REDUCE, IC_REDUCE_MEAN, 0},
    {"prod", RK_REDUCE, IC_REDUCE_PROD, 0},     {"max", RK_REDUCE, IC_REDUCE_MAX, 0},
    {"min", RK_REDUCE, IC_REDUCE_MIN, 0},       {"argmax", RK_REDUCE, IC_REDUCE_ARGMAX, 0},
    {"argmin", RK_REDUCE, IC_REDUCE_ARGMIN, 0}, {"any", RK_REDUCE, IC_REDUCE_ANY, 0},
    {"all", RK_REDUCE, IC_REDUCE_ALL, 0},       {"mean_c1", RK_MEAN_CORRECTION, IC_REDUCE_MEAN, 1},
    {"var0", RK_VAR, IC_REDUCE_MEAN, 0},        {"var1", RK_VAR, IC_REDUCE_MEAN, 1},
    {"std0", RK_STD, IC_REDUCE_MEAN, 0},        {"std1", RK_STD, IC_REDUCE_MEAN, 1},
};
enum { RC_NDEFS = sizeof rc_defs / sizeof *rc_defs };

static const ic_dtype rc_dtypes[] = {IC_F32, IC_F64, IC_F16, IC_BF16, IC_F8E4M3, IC_I32, IC_I64,
                                     IC_U8,  IC_I8,  IC_BOOL, IC_U16, IC_U32,    IC_U64};
enum { RC_NDTYPES = sizeof rc_dtypes / sizeof *rc_dtypes };

static inline ic_value rc_build(ic_graph *g, const rc_def *d, ic_value x, int32_t naxes, const int32_t *axes, int keepdim) {
  switch (d->kind) {
  case RK_REDUCE: return ic_graph_reduce(g, d->op, x, naxes, axes, keepdim);
  case RK_MEAN_CORRECTION: return ic_graph_mean_correction(g, x, naxes, axes, d->correction, keepdim);
  case RK_VAR: return ic_graph_var(g, x, naxes, axes, d->correction, keepdim);
  case RK_STD: return ic_graph_std(g, x, naxes, axes, d->correction, keepdim);
  }
  return IC_INVALID_VALUE;
}

/* Whether d takes dt (asked of the builder on a one-element input). */
static inline bool rc_accepts(const rc_def *d, ic_dtype dt) {
  ic_graph *g;
  IC_OK_OR_FAIL(ic_graph_create(&g));
  ic_value x = ic_graph_input(g, "x", dt, 1, (ic_dim[]){1}, IC_LAYOUT_CONTIGUOUS);
  bool ok = rc_build(g, d, x, 0, NULL, 0) != IC_INVALID_VALUE;
  ic_graph_destroy(g);
  return ok;
}

/* The documented result dtype. */
static inline ic_dtype rc_result_dtype(const rc_def *d, ic_dtype dt) {
  if (d->kind != RK_REDUCE) return dt;
  switch (d->op) {
  case IC_REDUCE_SUM:
  case IC_REDUCE_PROD: return rc_is_floating(dt) ? dt : IC_I64;
  case IC_REDUCE_ARGMAX:
  case IC_REDUCE_ARGMIN: return IC_I64;
  case IC_REDUCE_ANY:
  case IC_REDUCE_ALL: return IC_BOOL;
  default: return dt;
  }
}

/* The documented acceptance: FLOAT for mean, var, std; NUM for argmax/argmin; ANY else. */
static inline bool rc_documented_accepts(const rc_def *d, ic_dtype dt) {
  if (d->kind != RK_REDUCE || d->op == IC_REDUCE_MEAN) return rc_is_floating(dt);
  if (d->op == IC_REDUCE_ARGMAX || d->op == IC_REDUCE_ARGMIN) return dt != IC_BOOL;
  return true;
}

static inline bool rc_needs_elements(const rc_def *d) {
  return d->kind == RK_REDUCE && (d->op == IC_REDUCE_MAX || d->op == IC_REDUCE_MIN || d->op == IC_REDUCE_ARGMAX ||
                                  d->op == IC_REDUCE_ARGMIN);
}

static inline bool rc_truthy(ic_dtype dt, hv v) {
  if (dt == IC_BOOL) return v.b;
  if (ref_is_int(dt)) return v.i != 0;
  return dt == IC_F64 ? v.d != 0.0 : v.f != 0.0f; /* NaN != 0 */
}

/* v "beats" best for argmax (sign 1) or argmin (-1): NaN beats every number, the first
 * NaN wins, ties keep the first. */
static inline bool rc_beats(ic_dtype dt, hv v, hv best, int sign) {
  if (dt == IC_U64) return sign > 0 ? (uint64_t)v.i > (uint64_t)best.i : (uint64_t)v.i < (uint64_t)best.i;
  if (ref_is_int(dt)) return sign > 0 ? v.i > best.i : v.i < best.i;
  double a = dt == IC_F64 ? v.d : v.f, b = dt == IC_F64 ? best.d : best.f;
  if (isnan(b)) return false;
  if (isnan(a)) return true;
  return sign > 0 ? a > b : a < b;
}

/* The count a mean divides by: max(N - correction, 0). */
static inline double rc_count(int64_t n, double correction) {
  double c = (double)n - correction;
  return c > 0 ? c : 0;
}

/* The mean of v (f32-computed dtypes: in f32, rounded to dt; f64 in f64) in the order. */
static inline float rc_mean_f32(ic_dtype dt, const float *v, int64_t n, double correction) {
  float s = rc_order_f32(v, n, false, 0);
  return ref_round(dt, s / (float)rc_count(n, correction));
}

static inline double rc_mean_f64(const double *v, int64_t n, double correction) {
  return rc_order_f64(v, n, false, 0) / rc_count(n, correction);
}

/* The expected result of d over the row v[0..n) of dtype dt: its storage at out[i] (odt),
 * and for float sums and means a float64 value and a bound (*bounded). */
static inline void rc_expect_row(const rc_def *d, ic_dtype dt, ic_dtype odt, const hv *v, int64_t n, void *out, int64_t i,
                          double *exact, double *tol, bool *bounded) {
  *bounded = false;
  bool f32c = rc_f32_computed(dt), f64 = dt == IC_F64;
  float *vf = NULL;
  double *vd = NULL;
  if (f32c) {
    vf = calloc((size_t)(n ? n : 1), sizeof *vf);
    for (int64_t r = 0; r < n; r++) vf[r] = v[r].f;
  } else if (f64) {
    vd = calloc((size_t)(n ? n : 1), sizeof *vd);
    for (int64_t r = 0; r < n; r++) vd[r] = v[r].d;
  }
  if (d->kind == RK_VAR || d->kind == RK_STD) {
    /* m = mean(a, keepdim); q = (a - m) * (a - m), each rounded; mean_correction(q) */
    if (f32c) {
      float m = rc_mean_f32(dt, vf, n, 0);
      for (int64_t r = 0; r < n; r++) {
        float dd = ref_round(dt, vf[r] - m);
        vf[r] = ref_round(dt, dd * dd);
      }
      float var = rc_mean_f32(dt, vf, n, d->correction);
      rc_store_f(odt, out, i, d->kind == RK_STD ? ref_round(dt, sqrtf(var)) : var);
    } else {
      double m = rc_mean_f64(vd, n, 0);
      for (int64_t r = 0; r < n; r++) vd[r] = (vd[r] - m) * (vd[r] - m);
      double var = rc_mean_f64(vd, n, d->correction);
      rc_store_d(out, i, d->kind == RK_STD ? sqrt(var) : var);
    }
  } else {
    ic_reduce_op op = d->op;
    switch (op) {
    case IC_REDUCE_SUM:
    case IC_REDUCE_PROD:
    case IC_REDUCE_MEAN: {
      bool prod = op == IC_REDUCE_PROD;
      if (f32c || f64) {
        /* float64 (Neumaier-compensated in long double, so f64 sums have a reference) */
        long double acc = 0, comp = 0;
        double abs_sum = 0.0;
        bool finite = true;
        for (int64_t r = 0; r < n; r++) {
          double x = f64 ? vd[r] : vf[r];
          finite = finite && isfinite(x);
          abs_sum += fabs(x);
          long double t = acc + x;
          comp += fabsl(acc) >= fabsl((long double)x) ? (acc - t) + x : ((long double)x - t) + acc;
          acc = t;
        }
        double s64 = (double)(acc + comp);
        double cnt = op == IC_REDUCE_MEAN ? rc_count(n, d->correction) : 1.0;
        double result;
        if (f32c) {
          float s = rc_order_f32(vf, n, prod, 0);
          float res = op == IC_REDUCE_MEAN ? s / (float)cnt : s;
          res = ref_round(dt, res);
          rc_store_f(odt, out, i, res);
          result = res;
        } else {
          double s = rc_order_f64(vd, n, prod, 0);
          result = op == IC_REDUCE_MEAN ? s / cnt : s;
          rc_store_d(out, i, result);
        }
        if (!prod && finite && cnt > 0 && isfinite(result)) {
          *bounded = true;
          *exact = s64 / cnt;
          double b = rc_sum_bound(n, abs_sum, f64 ? ldexp(1.0, -53) : ldexp(1.0, -24)) / cnt;
          /* the division and the final rounding to dt: an ulp of dt each */
          *tol = b + 2.0 * ref_ulp(dt, fabs(*exact) + b);
        }
      } else {
        /* integers and bool: i64, wrapping */
        uint64_t acc = prod ? 1 : 0;
        for (int64_t r = 0; r < n; r++) {
          uint64_t x = dt == IC_BOOL ? (uint64_t)v[r].b : (uint64_t)v[r].i;
          acc = prod ? acc * x : acc + x;
        }
        ref_set(IC_I64, out, i, (hv){.i = (int64_t)acc});
      }
      break;
    }
    case IC_REDUCE_MAX:
    case IC_REDUCE_MIN: {
      bool mx = op == IC_REDUCE_MAX;
      if (dt == IC_BOOL) {
        bool acc = v[0].b;
        for (int64_t r = 1; r < n; r++) acc = mx ? (acc || v[r].b) : (acc && v[r].b);
        ref_set(IC_BOOL, out, i, (hv){.b = acc});
      } else if (ref_is_int(dt)) {
        int64_t acc = v[0].i;
        for (int64_t r = 1; r < n; r++) acc = rc_beats(dt, v[r], (hv){.i = acc}, mx ? 1 : -1) ? v[r].i : acc;
        ref_set(dt, out, i, (hv){.i = acc});
      } else if (f64) {
        double acc = vd[0];
        for (int64_t r = 1; r < n; r++) acc = mx ? ref_max_f64(acc, vd[r]) : ref_min_f64(acc, vd[r]);
        rc_store_d(out, i, acc);
      } else {
        float acc = vf[0];
        for (int64_t r = 1; r < n; r++) acc = mx ? ref_max_f32(acc, vf[r]) : ref_min_f32(acc, vf[r]);
        rc_store_f(odt, out, i, acc);
      }
      break;
    }
    case IC_REDUCE_ARGMAX:
    case IC_REDUCE_ARGMIN: {
      int sign = op == IC_REDUCE_ARGMAX ? 1 : -1;
      int64_t best = 0;
      for (int64_t r = 1; r < n; r++)
        if (rc_beats(dt, v[r], v[best], sign)) best = r;
      ref_set(IC_I64, out, i, (hv){.i = best});
      break;
    }
    case IC_REDUCE_ANY:
    case IC_REDUCE_ALL: {
      bool acc = op == IC_REDUCE_ALL;
      for (int64_t r = 0; r < n; r++) acc = op == IC_REDUCE_ANY ? (acc || rc_truthy(dt, v[r])) : (acc && rc_truthy(dt, v[r]));
      ref_set(IC_BOOL, out, i, (hv){.b = acc});
      break;
    }
    default: ck_abort_msg("no reference for reduction %d", (int)op);
    }
  }
  free(vf);
  free(vd);
}

/* ---------------------------------------------------------------- tensors */

/* An operand as the reduction sees it: ndim dims over host storage h with strides (in
 * elements; 0 for broadcast dims). */
typedef struct rc_view {
  ic_dtype dt;
  int32_t ndim;
  int64_t dims[IC_MAX_DIMS];
  int64_t strides[IC_MAX_DIMS];
  const void *h;
} rc_view;

static inline int64_t rc_numel(int32_t ndim, const int64_t *dims) {
  int64_t n = 1;
  for (int32_t d = 0; d < ndim; d++) n *= dims[d];
  return n;
}

static inline void rc_contiguous_strides(int32_t ndim, const int64_t *dims, int64_t *strides) {
  int64_t s = 1;
  for (int32_t d = ndim - 1; d >= 0; d--) {
    strides[d] = s;
    s *= dims[d];
  }
}

/* The rows of v reduced over `mask`: rows[row * n + r] for row-major rows over the kept
 * dims and r over the reduced dims in the order of v's dims. */
static inline hv *rc_gather(const rc_view *v, uint32_t mask, int64_t *nrows, int64_t *n) {
  int64_t kd[IC_MAX_DIMS], ks[IC_MAX_DIMS], rd[IC_MAX_DIMS], rs[IC_MAX_DIMS];
  int32_t nk = 0, nr = 0;
  for (int32_t d = 0; d < v->ndim; d++) {
    if (mask & (1u << d)) {
      rd[nr] = v->dims[d];
      rs[nr++] = v->strides[d];
    } else {
      kd[nk] = v->dims[d];
      ks[nk++] = v->strides[d];
    }
  }
  *nrows = rc_numel(nk, kd);
  *n = rc_numel(nr, rd);
  int64_t *roff = malloc((size_t)(*n ? *n : 1) * sizeof *roff);
  for (int64_t r = 0; r < *n; r++) {
    int64_t rem = r, off = 0;
    for (int32_t d = nr - 1; d >= 0; d--) {
      off += (rem % rd[d]) * rs[d];
      rem /= rd[d];
    }
    roff[r] = off;
  }
  int64_t total = *nrows * *n;
  hv *out = malloc((size_t)(total > 0 ? total : 1) * sizeof *out);
  ck_assert_ptr_nonnull(out);
  for (int64_t row = 0; row < *nrows; row++) {
    int64_t rem = row, off = 0;
    for (int32_t d = nk - 1; d >= 0; d--) {
      off += (rem % kd[d]) * ks[d];
      rem /= kd[d];
    }
    for (int64_t r = 0; r < *n; r++) out[row * *n + r] = ref_get(v->dt, v->h, off + roff[r]);
  }
  free(roff);
  return out;
}

/* A random value: small numbers and ties often, values of assorted magnitude, and (at
 * rate special) NaN, +inf and -inf; integers over their whole range now and then. */
static inline hv rc_random(ic_dtype dt, double special) {
  hv v = {0};
  uint64_t r = ref_rand(&rc_seed);
  double u = (double)(r >> 11) / 9007199254740992.0;
  if (dt == IC_BOOL) {
    v.b = (r >> 7) & 1;
    return v;
  }
  if (ref_is_int(dt)) {
    int64_t lo, hi;
    ref_range(dt, &lo, &hi);
    int pick = (int)((r >> 3) % 10);
    if (pick < 5) v.i = (int64_t)((r >> 20) % 201) - 100;
    else if (pick < 6) v.i = ((r >> 20) & 1) ? hi : lo;
    else v.i = (int64_t)ref_rand(&rc_seed);
    v.i = ref_wrap(dt, v.i);
    return v;
  }
  double x;
  if (u < special / 3) x = NAN;
  else if (u < 2 * special / 3) x = INFINITY;
  else if (u < special) x = -INFINITY;
  else {
    static const double small[] = {-2.0, -1.0, -0.0, 0.0, 0.5, 1.0, 2.0, 3.0};
    uint64_t s = ref_rand(&rc_seed);
    if ((s & 3) == 0) x = small[(s >> 8) % 8];
    else x = ((double)(int64_t)(s >> 11) / 9007199254740992.0 * 2.0 - 1.0) * ldexp(1.0, (int)((s >> 3) % 9) - 4);
  }
  if (dt == IC_F64) v.d = x;
  else v.f = ref_round(dt, (float)x);
  return v;
}

/* n random elements of dt (malloc'd storage). */
static inline void *rc_random_storage(ic_dtype dt, int64_t n, double special) {
  void *h = malloc((size_t)(n ? n : 1) * ic_dtype_size(dt));
  ck_assert_ptr_nonnull(h);
  for (int64_t i = 0; i < n; i++) ref_set(dt, h, i, rc_random(dt, special));
  return h;
}

/* ---------------------------------------------------------------- running and checking */

/* A program input: storage (host) of `storage` elements, shape and strides (NULL:
 * contiguous). */
typedef struct rc_input {
  ic_dtype dt;
  int32_t ndim;
  int64_t shape[IC_MAX_DIMS];
  const int64_t *strides;
  const void *h;
  int64_t storage;
} rc_input;

/* An expected output: its name, dtype, shape, expected storage (bits; NULL: none), and
 * optionally float64 values with bounds (exact, tol; NaN exact = no bound there). */
typedef struct rc_output {
  const char *name;
  ic_dtype dt;
  int32_t ndim;
  int64_t shape[IC_MAX_DIMS];
  int64_t n;
  void *bits;
  double *exact, *tol;
} rc_output;

/* The expected results of d over nrows rows of n values each (rows, row-major) into
 * output o: its bits, and the float64 bounds where rc_expect_row gives them. */
static inline void rc_expect_rows(const rc_def *d, ic_dtype dt, rc_output *o, const hv *rows, int64_t n, int64_t nrows) {
  for (int64_t row = 0; row < nrows; row++) {
    bool bounded;
    double ex = NAN, tol = 0;
    rc_expect_row(d, dt, o->dt, rows + row * n, n, o->bits, row, &ex, &tol, &bounded);
    if (bounded) {
      o->exact[row] = ex;
      o->tol[row] = tol;
    }
  }
}

static inline void rc_output_init(rc_output *o, const char *name, ic_dtype dt, int32_t ndim, const int64_t *shape, bool bits,
                           bool bounds) {
  memset(o, 0, sizeof *o);
  o->name = name;
  o->dt = dt;
  o->ndim = ndim;
  if (ndim) memcpy(o->shape, shape, (size_t)ndim * sizeof *shape);
  o->n = rc_numel(ndim, shape);
  size_t m = (size_t)(o->n ? o->n : 1);
  if (bits) o->bits = calloc(m, ic_dtype_size(dt));
  if (bounds) {
    o->exact = malloc(m * sizeof(double));
    o->tol = malloc(m * sizeof(double));
    for (size_t i = 0; i < m; i++) o->exact[i] = NAN;
  }
}

static inline void rc_output_free(rc_output *o) {
  free(o->bits);
  free(o->exact);
  free(o->tol);
}

/* Runs p on backend be: inputs uploaded, outputs poisoned first; returns the outputs'
 * storage (host copies, out[k] for outs[k]). */
static inline void rc_run(ic_program *p, const char *be, const rc_input *ins, int32_t nin, const rc_output *outs, int32_t nout,
                   void **got) {
  ic_tensor ti[8], to[48];
  void *dins[8], *douts[48];
  ck_assert_int_le(nin, 8);
  ck_assert_int_le(nout, 48);
  ck_assert_int_eq(ic_program_input_count(p), nin);
  ck_assert_int_eq(ic_program_output_count(p), nout);
  for (int32_t k = 0; k < nin; k++) {
    int32_t idx = k; /* inputs bind by position: the order of ic_graph_input calls */
    dins[k] = rc_upload(be, ins[k].h, (size_t)ins[k].storage * ic_dtype_size(ins[k].dt));
    ti[idx] = (ic_tensor){dins[k], ins[k].dt, ins[k].ndim, ins[k].shape, ins[k].strides};
  }
  for (int32_t k = 0; k < nout; k++) {
    int32_t idx = ic_program_output_index(p, outs[k].name);
    ck_assert_msg(idx >= 0, "no output %s", outs[k].name);
    douts[idx] = rc_poisoned(be, (size_t)outs[k].n * ic_dtype_size(outs[k].dt));
    to[idx] = (ic_tensor){douts[idx], outs[k].dt, outs[k].ndim, outs[k].shape, NULL};
  }
  ic_status s = ic_program_run(p, ti, nin, to, nout, NULL);
  ck_assert_msg(s == IC_OK, "ic_program_run (%s): %s: %s", be, ic_status_string(s), ic_last_error());
  rc_sync(be);
  for (int32_t k = 0; k < nout; k++) {
    int32_t idx = ic_program_output_index(p, outs[k].name);
    got[k] = rc_download(be, douts[idx], (size_t)outs[k].n * ic_dtype_size(outs[k].dt));
    rc_free(be, douts[idx]);
  }
  for (int32_t k = 0; k < nin; k++) rc_free(be, dins[k]);
}

static inline ic_program *rc_compile(const ic_graph *g, const char *be, ic_compile_mode mode) {
  ic_compile_options o = {.struct_size = sizeof o, .mode = mode, .backend = be};
  ic_program *p = NULL;
  ic_status s = ic_compile(rc_ctx, g, &o, &p);
  ck_assert_msg(s == IC_OK, "ic_compile (%s, %s): %s: %s", be, mode == IC_MODE_EAGER ? "eager" : "fused",
                ic_status_string(s), ic_last_error());
  return p;
}

/* The full check of a graph: fused and eager on rc_backend, each output against its
 * expected bits and bounds, eager == fused bit for bit; on cuda a second fused run gives
 * the same bits, and with rc_cross_ref the ref backend gives the same bits too. */
static inline void rc_check(const ic_graph *g, const rc_input *ins, int32_t nin, const rc_output *outs, int32_t nout,
                     const char *what) {
  const char *msg = NULL;
  ck_assert_msg(ic_graph_error(g, &msg) == IC_OK, "%s: graph error: %s", what, msg ? msg : "");
  ic_program *fused = rc_compile(g, rc_backend, IC_MODE_FUSED);
  ic_program *eager = rc_eager ? rc_compile(g, rc_backend, IC_MODE_EAGER) : NULL;
  void *gf[48], *ge[48] = {0}, *g2[48] = {0}, *gr[48] = {0};
  rc_run(fused, rc_backend, ins, nin, outs, nout, gf);
  if (eager) rc_run(eager, rc_backend, ins, nin, outs, nout, ge);
  bool twice = rc_is_cuda(rc_backend);
  if (twice) rc_run(fused, rc_backend, ins, nin, outs, nout, g2);
  bool cross = rc_cross_ref && rc_is_cuda(rc_backend);
  if (cross) {
    ic_program *r = rc_compile(g, "ref", IC_MODE_FUSED);
    rc_run(r, "ref", ins, nin, outs, nout, gr);
    ic_program_release(r);
  }
  for (int32_t k = 0; k < nout; k++) {
    const rc_output *o = &outs[k];
    size_t es = ic_dtype_size(o->dt);
    for (int64_t i = 0; i < o->n; i++) {
      const unsigned char *f = (const unsigned char *)gf[k] + i * (int64_t)es;
      hv fv = ref_get(o->dt, f, 0);
      if (o->bits) {
        const unsigned char *w = (const unsigned char *)o->bits + i * (int64_t)es;
        CHECK_ELEM(rc_same(o->dt, f, w), "%s: %s (%s) element %lld: got %.17g (0x%llx), want %.17g (0x%llx)", what,
                   o->name, ic_dtype_name(o->dt), (long long)i, rc_dbl(o->dt, fv),
                   (unsigned long long)rc_bits(o->dt, f), rc_dbl(o->dt, ref_get(o->dt, w, 0)),
                   (unsigned long long)rc_bits(o->dt, w));
      }
      if (o->exact && !isnan(o->exact[i])) {
        double x = rc_dbl(o->dt, fv);
        CHECK_ELEM(fabs(x - o->exact[i]) <= o->tol[i], "%s: %s (%s) element %lld: got %.17g, float64 %.17g, bound %.3g",
                   what, o->name, ic_dtype_name(o->dt), (long long)i, x, o->exact[i], o->tol[i]);
      }
      const unsigned char *e = eager ? (const unsigned char *)ge[k] + i * (int64_t)es : f;
      CHECK_ELEM(rc_same(o->dt, f, e), "%s: %s (%s) element %lld: eager 0x%llx != fused 0x%llx", what, o->name,
                 ic_dtype_name(o->dt), (long long)i, (unsigned long long)rc_bits(o->dt, e),
                 (unsigned long long)rc_bits(o->dt, f));
      if (twice) {
        const unsigned char *t = (const unsigned char *)g2[k] + i * (int64_t)es;
        CHECK_ELEM(rc_same(o->dt, f, t), "%s: %s element %lld: a second run gave 0x%llx, the first 0x%llx", what,
                   o->name, (long long)i, (unsigned long long)rc_bits(o->dt, t), (unsigned long long)rc_bits(o->dt, f));
      }
      if (cross) {
        const unsigned char *rr = (const unsigned char *)gr[k] + i * (int64_t)es;
        CHECK_ELEM(rc_same(o->dt, f, rr), "%s: %s (%s) element %lld: cuda 0x%llx != ref 0x%llx", what, o->name,
                   ic_dtype_name(o->dt), (long long)i, (unsigned long long)rc_bits(o->dt, f),
                   (unsigned long long)rc_bits(o->dt, rr));
      }
    }
    free(gf[k]);
    free(ge[k]);
    free(g2[k]);
    free(gr[k]);
  }
  ic_program_release(fused);
  if (eager) ic_program_release(eager);
}

/* ---------------------------------------------------------------- the op matrix */

/* One reduction case: an operand shape, the axes as given to the builder (naxes 0: all),
 * and keepdim. */
typedef struct rc_axes {
  int32_t naxes;
  int32_t axes[IC_MAX_DIMS];
} rc_axes;

static inline uint32_t rc_mask(int32_t ndim, const rc_axes *a) {
  if (a->naxes == 0) return ndim ? (1u << ndim) - 1u : 0;
  uint32_t m = 0;
  for (int32_t i = 0; i < a->naxes; i++) m |= 1u << (a->axes[i] < 0 ? a->axes[i] + ndim : a->axes[i]);
  return m;
}

static inline int rc_axes_text(const rc_axes *a, char *buf, size_t size) {
  if (a->naxes == 0) return snprintf(buf, size, "all");
  int len = snprintf(buf, size, "[");
  for (int32_t i = 0; i < a->naxes; i++)
    len += snprintf(buf + len, size - (size_t)len, "%s%d", i ? "," : "", (int)a->axes[i]);
  return len + snprintf(buf + len, size - (size_t)len, "]");
}

static inline int rc_shape_text(int32_t ndim, const int64_t *dims, char *buf, size_t size) {
  int len = snprintf(buf, size, "[");
  for (int32_t i = 0; i < ndim; i++) len += snprintf(buf + len, size - (size_t)len, "%s%lld", i ? "," : "", (long long)dims[i]);
  return len + snprintf(buf + len, size - (size_t)len, "]");
}

/* The result dims of a reduction over mask (keepdim or not). */
static inline int32_t rc_result_dims(int32_t ndim, const int64_t *dims, uint32_t mask, bool keepdim, int64_t *out) {
  int32_t n = 0;
  for (int32_t d = 0; d < ndim; d++) {
    if (!(mask & (1u << d))) out[n++] = dims[d];
    else if (keepdim) out[n++] = 1;
  }
  return n;
}

/* How the operand reaches the reduction. */
typedef enum rc_source {
  RS_CONTIGUOUS, /* a contiguous input */
  RS_TRANSPOSED, /* an IC_LAYOUT_STRIDED input whose strides are reversed (a transposed view) */
  RS_EXPANDED,   /* an input with size-1 dims (every other dim of the operand) expanded */
  RS_SYMBOLIC    /* a contiguous input whose every dim is a symbol */
} rc_source;

/* Every accepted op of rc_defs (ops_mask: which; bit i = rc_defs[i]) over the operand
 * dims (constant), reduced over `a` with keepdim, all outputs of one graph: checked by
 * rc_check. Ops that need elements are left out when the reduction is empty. */
static inline void rc_matrix_case(ic_dtype dt, int32_t ndim, const int64_t *dims, const rc_axes *a, bool keepdim,
                           rc_source src, uint32_t ops_mask) {
  uint32_t mask = rc_mask(ndim, a);
  int64_t nred = 1;
  for (int32_t d = 0; d < ndim; d++)
    if (mask & (1u << d)) nred *= dims[d];
  double special = nred ? 1.0 / (2.0 * (double)nred) : 0.0;
  if (dt == IC_F8E4M3 || dt == IC_BF16 || dt == IC_F16) special = nred ? 1.0 / (4.0 * (double)nred) : 0.0;

  /* the input and the operand view of it */
  rc_input in = {.dt = dt, .ndim = ndim};
  rc_view view = {.dt = dt, .ndim = ndim};
  memcpy(view.dims, dims, (size_t)ndim * sizeof *dims);
  int64_t strides[IC_MAX_DIMS];
  memcpy(in.shape, dims, (size_t)ndim * sizeof *dims);
  if (src == RS_EXPANDED) {
    for (int32_t d = 0; d < ndim; d++) in.shape[d] = (d % 2 == 1) ? 1 : dims[d];
  }
  in.storage = rc_numel(ndim, in.shape);
  void *h = rc_random_storage(dt, in.storage, special);
  in.h = h;
  rc_contiguous_strides(ndim, in.shape, strides);
  if (src == RS_TRANSPOSED) {
    /* storage is the reversed shape, contiguous; the input's strides are its transpose */
    int64_t rev[IC_MAX_DIMS], rs[IC_MAX_DIMS];
    for (int32_t d = 0; d < ndim; d++) rev[d] = dims[ndim - 1 - d];
    rc_contiguous_strides(ndim, rev, rs);
    for (int32_t d = 0; d < ndim; d++) strides[d] = rs[ndim - 1 - d];
    in.strides = strides;
  }
  for (int32_t d = 0; d < ndim; d++) view.strides[d] = (src == RS_EXPANDED && d % 2 == 1) ? 0 : strides[d];
  view.h = h;

  ic_graph *g;
  IC_OK_OR_FAIL(ic_graph_create(&g));
  ic_dim gd[IC_MAX_DIMS];
  for (int32_t d = 0; d < ndim; d++) {
    char sname[16];
    snprintf(sname, sizeof sname, "s%d", (int)d);
    gd[d] = src == RS_SYMBOLIC ? ic_graph_symbol(g, sname) : in.shape[d];
  }
  ic_value x = ic_graph_input(g, "x", dt, ndim, gd, src == RS_TRANSPOSED ? IC_LAYOUT_STRIDED : IC_LAYOUT_CONTIGUOUS);
  if (src == RS_EXPANDED) x = ic_graph_expand(g, x, ndim, dims);

  int64_t nrows, n;
  hv *rows = rc_gather(&view, mask, &nrows, &n);
  ck_assert_int_eq(n, nred);
  int64_t odims[IC_MAX_DIMS];
  int32_t ondim = rc_result_dims(ndim, dims, mask, keepdim, odims);
  rc_output outs[RC_NDEFS];
  int32_t nout = 0;
  for (int k = 0; k < RC_NDEFS; k++) {
    const rc_def *d = &rc_defs[k];
    if (!(ops_mask & (1u << k)) || !rc_accepts(d, dt)) continue;
    if (n == 0 && rc_needs_elements(d)) continue;
    ic_value y = rc_build(g, d, x, a->naxes, a->axes, keepdim);
    const char *gmsg = NULL;
    ck_assert_msg(y != IC_INVALID_VALUE, "%s.%s: %s", d->name, ic_dtype_name(dt),
                  (ic_graph_error(g, &gmsg), gmsg ? gmsg : ""));
    ic_dtype odt = rc_result_dtype(d, dt);
    ck_assert_msg(ic_graph_value_dtype(g, y) == odt, "%s of %s: result dtype %s, want %s", d->name, ic_dtype_name(dt),
                  ic_dtype_name(ic_graph_value_dtype(g, y)), ic_dtype_name(odt));
    ck_assert_int_eq(ic_graph_value_ndim(g, y), ondim);
    if (src != RS_SYMBOLIC) {
      ic_dim vd[IC_MAX_DIMS];
      IC_OK_OR_FAIL(ic_graph_value_dims(g, y, vd));
      for (int32_t i = 0; i < ondim; i++) ck_assert_int_eq(vd[i], odims[i]);
    }
    IC_OK_OR_FAIL(ic_graph_output(g, d->name, y));
    rc_output *o = &outs[nout++];
    rc_output_init(o, d->name, odt, ondim, odims, true, true);
    ck_assert_int_eq(o->n, nrows);
    rc_expect_rows(d, dt, o, rows, n, nrows);
  }
  char what[160], at[48], sh[64];
  rc_axes_text(a, at, sizeof at);
  rc_shape_text(ndim, dims, sh, sizeof sh);
  static const char *srcs[] = {"contiguous", "transposed", "expanded", "symbolic"};
  snprintf(what, sizeof what, "%s %s axes %s%s (%s)", ic_dtype_name(dt), sh, at, keepdim ? " keepdim" : "", srcs[src]);
  if (nout) rc_check(g, &in, 1, outs, nout, what);
  for (int32_t k = 0; k < nout; k++) rc_output_free(&outs[k]);
  free(rows);
  free(h);
  ic_graph_destroy(g);
}

typedef struct rc_shape_case {
  int32_t ndim;
  int64_t dims[IC_MAX_DIMS];
  int32_t naxes_sets;
  rc_axes sets[8];
} rc_shape_case;

/* Shapes and axis sets of the matrix: one dim (sizes 0, 1, odd), 2-d (inner, outer,
 * negative, all), 3-d (single inner/outer/middle, several, all, negative, given out of
 * order), 4-d, a scalar, and empty dims. */
static const rc_shape_case rc_shapes[] = {
    {0, {0}, 1, {{0, {0}}}},
    {1, {0}, 2, {{0, {0}}, {1, {-1}}}},
    {1, {1}, 1, {{1, {0}}}},
    {1, {3}, 1, {{0, {0}}}},
    {1, {127}, 1, {{1, {-1}}}},
    {1, {4097}, 1, {{0, {0}}}},
    {1, {100003}, 1, {{1, {0}}}},
    {2, {3, 127}, 5, {{1, {1}}, {1, {0}}, {1, {-1}}, {0, {0}}, {2, {-2, -1}}}},
    {2, {127, 3}, 2, {{1, {1}}, {1, {0}}}},
    {2, {0, 5}, 2, {{1, {1}}, {1, {0}}}},
    {2, {4, 0}, 3, {{1, {1}}, {1, {0}}, {0, {0}}}},
    {2, {1, 1}, 2, {{1, {1}}, {0, {0}}}},
    {3, {5, 6, 7}, 8, {{1, {2}}, {1, {0}}, {1, {1}}, {2, {0, 2}}, {2, {1, 2}}, {2, {2, 0}}, {0, {0}}, {2, {-3, -1}}}},
    {3, {3, 33, 9}, 3, {{1, {1}}, {2, {0, 1}}, {1, {-1}}}},
    {4, {2, 3, 4, 5}, 4, {{2, {0, 2}}, {2, {3, 1}}, {3, {1, 2, 3}}, {0, {0}}}},
};

static inline uint32_t rc_all_ops(void) { return (1u << RC_NDEFS) - 1u; }

/* The matrix: every dtype x shape x axes x keepdim (contiguous), all ops in one graph. */
static inline void rc_matrix(const ic_dtype *dts, int ndts) {
  for (int di = 0; di < ndts; di++)
    for (int si = 0; si < RC_COUNT(rc_shapes); si++) {
      const rc_shape_case *sc = &rc_shapes[si];
      for (int ai = 0; ai < sc->naxes_sets; ai++)
        for (int kd = 0; kd < 2; kd++)
          rc_matrix_case(dts[di], sc->ndim, sc->dims, &sc->sets[ai], kd, RS_CONTIGUOUS, rc_all_ops());
    }
}

/* Strided (transposed), expanded (broadcast) and symbolic operands. */
static inline void rc_matrix_sources(const ic_dtype *dts, int ndts, bool symbolic) {
  static const rc_shape_case cases[] = {
      {2, {19, 65}, 3, {{1, {1}}, {1, {0}}, {0, {0}}}},
      {3, {4, 9, 33}, 3, {{1, {2}}, {1, {1}}, {2, {0, 2}}}},
      {2, {0, 7}, 2, {{1, {1}}, {1, {0}}}},
  };
  for (int di = 0; di < ndts; di++)
    for (int ci = 0; ci < RC_COUNT(cases); ci++)
      for (int ai = 0; ai < cases[ci].naxes_sets; ai++)
        for (int src = RS_TRANSPOSED; src <= (symbolic ? RS_SYMBOLIC : RS_EXPANDED); src++)
          rc_matrix_case(dts[di], cases[ci].ndim, cases[ci].dims, &cases[ci].sets[ai], ai & 1, (rc_source)src,
                         rc_all_ops());
}

/* The matrix over symbolic dims: one graph (one compile) per dtype and axis set, run at
 * every shape of its list, large ones included (rows of 16384, 262144 and 300000 (G = 2)
 * elements, column reductions of [4096, 33], [4096, 36], [9, 64] (the block's 256 columns
 * partly past the end) and [17, 4], a middle axis of 1000, a full reduction of 10^6
 * elements). max_numel skips shapes beyond it. */
typedef struct rc_sym_case {
  int32_t ndim;
  rc_axes axes;
  int keepdim;
  int nshapes;
  int64_t shapes[10][4];
} rc_sym_case;

static const rc_sym_case rc_sym_cases[] = {
    {1, {0, {0}}, 0, 9, {{0}, {1}, {3}, {127}, {4097}, {100003}, {16384}, {300000}, {1000000}}},
    {2, {1, {1}}, 1, 9, {{3, 127}, {127, 3}, {0, 5}, {4, 0}, {1, 1}, {4, 16384}, {2, 262144}, {1, 300000}, {3, 300001}}},
    {2, {1, {0}}, 0, 9, {{3, 127}, {127, 3}, {4096, 33}, {0, 5}, {1, 1}, {100003, 2}, {9, 64}, {4096, 36}, {17, 4}}},
    {2, {0, {0}}, 1, 3, {{3, 127}, {1, 1}, {1000, 1000}}},
    {3, {1, {1}}, 0, 4, {{5, 6, 7}, {8, 1000, 16}, {3, 33, 9}, {2, 4097, 3}}},
    {3, {2, {0, 2}}, 1, 3, {{5, 6, 7}, {3, 33, 9}, {0, 4, 2}}},
    {4, {2, {3, 1}}, 0, 2, {{2, 3, 4, 5}, {3, 5, 7, 9}}},
};

static inline void rc_sym_matrix(const ic_dtype *dts, int ndts, int64_t max_numel) {
  for (int di = 0; di < ndts; di++)
    for (int ci = 0; ci < RC_COUNT(rc_sym_cases); ci++) {
      const rc_sym_case *c = &rc_sym_cases[ci];
      for (int si = 0; si < c->nshapes; si++) {
        if (rc_numel(c->ndim, c->shapes[si]) > max_numel) continue;
        rc_matrix_case(dts[di], c->ndim, c->shapes[si], &c->axes, c->keepdim, RS_SYMBOLIC, rc_all_ops());
      }
    }
}

/* ---------------------------------------------------------------- special values */

/* Hand-made rows of n elements (n >= 1) that pin the exact semantics: all -0 (sums to
 * -0), -0/+0 mixed (max +0, min -0, argmax/argmin the first), two NaNs (the first wins,
 * NaN propagates, any/all true), ties (the first index), +-inf (sum NaN), a lone nonzero
 * or zero at the end (any/all), and values near the dtype's largest finite value whose
 * sum overflows only when accumulated in the narrow dtype. */
enum { RC_SPECIAL_ROWS = 9 };

static inline hv rc_special_value(ic_dtype dt, int row, int64_t r, int64_t n) {
  hv v = {0};
  if (ref_is_int(dt) || dt == IC_BOOL) {
    int64_t lo = 0, hi = 1, x;
    if (ref_is_int(dt)) ref_range(dt, &lo, &hi);
    switch (row) {
    case 0: x = 0; break;
    case 1: x = (r % 2 == 0) ? 0 : 1; break;
    case 2: x = (r == n / 2 || r == n - 1) ? hi : 1; break;
    case 3: x = r == n - 1 ? 3 : 2; break;
    case 4: x = r == n / 3 ? hi : r == n - 1 ? lo : 1; break;
    case 5: x = r == n - 1 ? 1 : 0; break;
    case 6: x = r == n - 1 ? 0 : -1; break; /* unsigned: the largest value */
    case 7: x = (r % 4 < 2) ? hi : lo; break; /* wraps a narrow sum, not an i64 one */
    default: x = (r * 7) % 5 - 2; break;
    }
    if (dt == IC_BOOL) v.b = x != 0;
    else v.i = ref_wrap(dt, x);
    return v;
  }
  double x;
  switch (row) {
  case 0: x = -0.0; break;
  case 1: x = (r % 2 == 0) ? -0.0 : 0.0; break;
  case 2: x = (r == n / 2 || r == n - 1) ? NAN : 1.0; break;
  case 3: x = r == n - 1 ? 3.0 : 2.0; break;
  case 4: x = r == n / 3 ? INFINITY : r == n - 1 ? -INFINITY : 0.5; break;
  case 5: x = r == n - 1 ? 1.0 : 0.0; break;
  case 6: x = r == n - 1 ? 0.0 : -1.0; break;
  case 7: { /* overflows only when accumulated in the narrow dtype */
    double big = dt == IC_F8E4M3 ? 448.0 : 65504.0; /* f16's largest */
    x = (r % 4 < 2) ? big : -big;
    break;
  }
  default: x = (double)((r * 7) % 5) - 2.0; break; /* ties at -2 and 2 */
  }
  if (dt == IC_F64) v.d = x;
  else v.f = ref_round(dt, (float)x);
  return v;
}

static inline void rc_special_case(ic_dtype dt, int64_t n) {
  void *h = malloc((size_t)(RC_SPECIAL_ROWS * n) * ic_dtype_size(dt));
  for (int row = 0; row < RC_SPECIAL_ROWS; row++)
    for (int64_t r = 0; r < n; r++) ref_set(dt, h, row * n + r, rc_special_value(dt, row, r, n));
  rc_view view = {.dt = dt, .ndim = 2, .dims = {RC_SPECIAL_ROWS, n}, .strides = {n, 1}, .h = h};
  int64_t nrows, nn;
  hv *rows = rc_gather(&view, 2u, &nrows, &nn);
  ic_graph *g;
  IC_OK_OR_FAIL(ic_graph_create(&g));
  /* n is a symbol: one compile serves every n */
  ic_value x = ic_graph_input(g, "x", dt, 2, (ic_dim[]){RC_SPECIAL_ROWS, ic_graph_symbol(g, "n")}, IC_LAYOUT_CONTIGUOUS);
  rc_output outs[RC_NDEFS];
  int32_t nout = 0;
  for (int k = 0; k < RC_NDEFS; k++) {
    const rc_def *d = &rc_defs[k];
    if (!rc_accepts(d, dt)) continue;
    IC_OK_OR_FAIL(ic_graph_output(g, d->name, rc_build(g, d, x, 1, (int32_t[]){1}, 0)));
    ic_dtype odt = rc_result_dtype(d, dt);
    rc_output *o = &outs[nout++];
    rc_output_init(o, d->name, odt, 1, (int64_t[]){RC_SPECIAL_ROWS}, true, true);
    rc_expect_rows(d, dt, o, rows, nn, nrows);
  }
  rc_input in = {.dt = dt, .ndim = 2, .shape = {RC_SPECIAL_ROWS, n}, .h = h, .storage = RC_SPECIAL_ROWS * n};
  char what[64];
  snprintf(what, sizeof what, "special rows %s n=%lld", ic_dtype_name(dt), (long long)n);
  rc_check(g, &in, 1, outs, nout, what);
  for (int32_t k = 0; k < nout; k++) rc_output_free(&outs[k]);
  free(rows);
  free(h);
  ic_graph_destroy(g);
}

static inline void rc_specials(const ic_dtype *dts, int ndts) {
  static const int64_t ns[] = {1, 2, 3, 9, 127, 4097};
  for (int di = 0; di < ndts; di++)
    for (int i = 0; i < RC_COUNT(ns); i++) rc_special_case(dts[di], ns[i]);
}

/* ---------------------------------------------------------------- symbolic sizes */

/* One compile of [n, m] reduced over m (and a full reduction), run at several sizes,
 * empty ones included; max/argmax of an empty run-time reduction fail with
 * IC_ERR_SHAPE_MISMATCH before anything is written. */
static inline void rc_symbolic(ic_dtype dt) {
  static const int64_t sizes[][2] = {{3, 5}, {1, 1}, {7, 0}, {0, 9}, {2, 4097}, {64, 33}, {1, 0}};
  ic_graph *g, *gm;
  IC_OK_OR_FAIL(ic_graph_create(&g));
  IC_OK_OR_FAIL(ic_graph_create(&gm));
  ic_dim sn = ic_graph_symbol(g, "n"), sm = ic_graph_symbol(g, "m");
  ic_value x = ic_graph_input(g, "x", dt, 2, (ic_dim[]){sn, sm}, IC_LAYOUT_CONTIGUOUS);
  ic_dim mn = ic_graph_symbol(gm, "n"), mm = ic_graph_symbol(gm, "m");
  ic_value xm = ic_graph_input(gm, "x", dt, 2, (ic_dim[]){mn, mm}, IC_LAYOUT_CONTIGUOUS);
  /* outputs: every op over [1] keepdim (g: no max-like ops; gm: only those), and a full
   * sum */
  const rc_def *defs[RC_NDEFS], *mdefs[RC_NDEFS];
  int nd = 0, nmd = 0;
  for (int k = 0; k < RC_NDEFS; k++) {
    const rc_def *d = &rc_defs[k];
    if (!rc_accepts(d, dt)) continue;
    if (rc_needs_elements(d)) {
      mdefs[nmd++] = d;
      IC_OK_OR_FAIL(ic_graph_output(gm, d->name, rc_build(gm, d, xm, 1, (int32_t[]){1}, 1)));
    } else {
      defs[nd++] = d;
      IC_OK_OR_FAIL(ic_graph_output(g, d->name, rc_build(g, d, x, 1, (int32_t[]){-1}, 1)));
    }
  }
  IC_OK_OR_FAIL(ic_graph_output(g, "total", ic_graph_reduce(g, IC_REDUCE_SUM, x, 0, NULL, 0)));
  ic_program *pf = rc_compile(g, rc_backend, IC_MODE_FUSED), *pe = rc_compile(g, rc_backend, IC_MODE_EAGER);
  ic_program *mf = rc_compile(gm, rc_backend, IC_MODE_FUSED), *me = rc_compile(gm, rc_backend, IC_MODE_EAGER);
  for (int si = 0; si < RC_COUNT(sizes); si++) {
    int64_t rows = sizes[si][0], cols = sizes[si][1];
    void *h = rc_random_storage(dt, rows * cols, cols ? 1.0 / (3.0 * (double)cols) : 0);
    rc_input in = {.dt = dt, .ndim = 2, .shape = {rows, cols}, .h = h, .storage = rows * cols};
    rc_view view = {.dt = dt, .ndim = 2, .dims = {rows, cols}, .strides = {cols, 1}, .h = h};
    for (int which = 0; which < 2; which++) {
      const rc_def **ds = which ? mdefs : defs;
      int cnt = which ? nmd : nd;
      if (which && cnt == 0) continue;
      rc_output outs[RC_NDEFS + 1];
      int64_t nrows, n;
      hv *rr = rc_gather(&view, 2u, &nrows, &n);
      for (int k = 0; k < cnt; k++) {
        ic_dtype odt = rc_result_dtype(ds[k], dt);
        rc_output_init(&outs[k], ds[k]->name, odt, 2, (int64_t[]){rows, 1}, true, false);
        for (int64_t row = 0; row < nrows && !(which && n == 0); row++) {
          bool b;
          double e, t;
          rc_expect_row(ds[k], dt, odt, rr + row * n, n, outs[k].bits, row, &e, &t, &b);
        }
      }
      int nout = cnt;
      if (!which) {
        int64_t tr, tn;
        hv *all = rc_gather(&view, 3u, &tr, &tn);
        rc_output_init(&outs[nout], "total", rc_result_dtype(&rc_defs[0], dt), 0, NULL, true, false);
        bool b;
        double e, t;
        rc_expect_row(&rc_defs[0], dt, outs[nout].dt, all, tn, outs[nout].bits, 0, &e, &t, &b);
        free(all);
        nout++;
      }
      char what[96];
      snprintf(what, sizeof what, "symbolic %s [%lld, %lld]%s", ic_dtype_name(dt), (long long)rows, (long long)cols,
               which ? " (max-like)" : "");
      if (which && cols == 0 && rows > 0) {
        /* an empty max: refused at run time, nothing written */
        for (int m = 0; m < 2; m++) {
          ic_program *p = m ? me : mf;
          void *dx = rc_upload(rc_backend, h, (size_t)(rows * cols) * ic_dtype_size(dt));
          ic_tensor ti = {dx, dt, 2, in.shape, NULL};
          ic_tensor to[RC_NDEFS];
          void *dd[RC_NDEFS];
          for (int k = 0; k < nout; k++) {
            int32_t idx = ic_program_output_index(p, outs[k].name);
            dd[idx] = rc_poisoned(rc_backend, (size_t)rows * 8);
            to[idx] = (ic_tensor){dd[idx], outs[k].dt, 2, outs[k].shape, NULL};
          }
          ic_status s = ic_program_run(p, &ti, 1, to, nout, NULL);
          ck_assert_msg(s == IC_ERR_SHAPE_MISMATCH, "%s %s: got %s (%s)", what, m ? "eager" : "fused",
                        ic_status_string(s), ic_last_error());
          ck_assert_str_ne(ic_last_error(), "");
          rc_sync(rc_backend);
          for (int k = 0; k < nout; k++) {
            unsigned char *hb = rc_download(rc_backend, dd[k], (size_t)rows * 8);
            for (int64_t b = 0; b < rows * 8; b++) CHECK_ELEM(hb[b] == 0xA5, "%s: output byte %lld written", what, (long long)b);
            free(hb);
            rc_free(rc_backend, dd[k]);
          }
          rc_free(rc_backend, dx);
        }
      } else {
        /* run both programs (compiled once) and compare */
        void *gf[RC_NDEFS + 1], *ge[RC_NDEFS + 1];
        rc_run(which ? mf : pf, rc_backend, &in, 1, outs, nout, gf);
        rc_run(which ? me : pe, rc_backend, &in, 1, outs, nout, ge);
        for (int k = 0; k < nout; k++) {
          size_t es = ic_dtype_size(outs[k].dt);
          for (int64_t i = 0; i < outs[k].n; i++) {
            const unsigned char *f = (unsigned char *)gf[k] + i * (int64_t)es, *e = (unsigned char *)ge[k] + i * (int64_t)es,
                                *w = (unsigned char *)outs[k].bits + i * (int64_t)es;
            CHECK_ELEM(rc_same(outs[k].dt, f, w), "%s: %s element %lld: got 0x%llx, want 0x%llx", what, outs[k].name,
                       (long long)i, (unsigned long long)rc_bits(outs[k].dt, f), (unsigned long long)rc_bits(outs[k].dt, w));
            CHECK_ELEM(rc_same(outs[k].dt, f, e), "%s: %s element %lld: eager 0x%llx != fused 0x%llx", what,
                       outs[k].name, (long long)i, (unsigned long long)rc_bits(outs[k].dt, e),
                       (unsigned long long)rc_bits(outs[k].dt, f));
          }
          free(gf[k]);
          free(ge[k]);
        }
      }
      for (int k = 0; k < nout; k++) rc_output_free(&outs[k]);
      free(rr);
    }
    free(h);
  }
  ic_program_release(pf);
  ic_program_release(pe);
  ic_program_release(mf);
  ic_program_release(me);
  ic_graph_destroy(g);
  ic_graph_destroy(gm);
}

/* ---------------------------------------------------------------- one long row */

/* f32 sum and mean of one row of n elements, bit for bit in the documented order (and,
 * as a check of the data, not in some other: G = 1 or a sequential sum would differ). */
static inline void rc_long_row(ic_dtype dt, int64_t n, bool check_discriminates) {
  float *v = malloc((size_t)n * sizeof *v);
  void *h = malloc((size_t)n * ic_dtype_size(dt));
  /* data on which other orders (G = 1 instead of the right G; a sequential sum) give other
   * bits, so that the bitwise check tells the documented order from them */
  bool discriminates = false;
  for (int attempt = 0; attempt < 16 && !discriminates; attempt++) {
    for (int64_t i = 0; i < n; i++) {
      uint64_t s = ref_rand(&rc_seed);
      double x = ((double)(int64_t)(s >> 11) / 9007199254740992.0 * 2.0 - 0.9) * ldexp(1.0, (int)((s >> 3) % 31) - 15);
      hv hx = {.f = ref_round(dt, (float)x), .d = x};
      ref_set(dt, h, i, hx);
      v[i] = ref_get(dt, h, i).f;
    }
    if (!check_discriminates || dt != IC_F32) break;
    rc_order o = rc_order_of(n);
    float canon = rc_order_f32(v, n, false, 0), seq = -0.0f;
    for (int64_t i = 0; i < n; i++) seq += v[i];
    discriminates = memcmp(&canon, &seq, 4) != 0;
    if (o.groups > 1) {
      float g1 = rc_order_f32(v, n, false, 1);
      discriminates = discriminates && memcmp(&canon, &g1, 4) != 0;
    }
  }
  if (check_discriminates && dt == IC_F32) ck_assert_msg(discriminates, "no test data tells the orders apart (n %lld)", (long long)n);
  ic_graph *g;
  IC_OK_OR_FAIL(ic_graph_create(&g));
  ic_value x = ic_graph_input(g, "x", dt, 2, (ic_dim[]){1, ic_graph_symbol(g, "n")}, IC_LAYOUT_CONTIGUOUS);
  const rc_def *sum = &rc_defs[0], *mean = &rc_defs[1];
  IC_OK_OR_FAIL(ic_graph_output(g, "sum", ic_graph_reduce(g, IC_REDUCE_SUM, x, 1, (int32_t[]){1}, 0)));
  IC_OK_OR_FAIL(ic_graph_output(g, "mean", ic_graph_reduce(g, IC_REDUCE_MEAN, x, 1, (int32_t[]){-1}, 0)));
  IC_OK_OR_FAIL(ic_graph_output(g, "argmax", ic_graph_reduce(g, IC_REDUCE_ARGMAX, x, 0, NULL, 0)));
  rc_output outs[3];
  hv *row = malloc((size_t)n * sizeof *row);
  for (int64_t i = 0; i < n; i++) row[i] = ref_get(dt, h, i);
  const rc_def *defs[3] = {sum, mean, &rc_defs[5]};
  for (int k = 0; k < 3; k++) {
    ic_dtype odt = rc_result_dtype(defs[k], dt);
    rc_output_init(&outs[k], defs[k]->name, odt, k == 2 ? 0 : 1, (int64_t[]){1}, true, true);
    bool b;
    double e = NAN, t = 0;
    rc_expect_row(defs[k], dt, odt, row, n, outs[k].bits, 0, &e, &t, &b);
    if (b) {
      outs[k].exact[0] = e;
      outs[k].tol[0] = t;
    }
  }
  rc_input in = {.dt = dt, .ndim = 2, .shape = {1, n}, .h = h, .storage = n};
  char what[64];
  snprintf(what, sizeof what, "one row of %lld %s", (long long)n, ic_dtype_name(dt));
  rc_check(g, &in, 1, outs, 3, what);
  for (int k = 0; k < 3; k++) rc_output_free(&outs[k]);
  free(row);
  free(v);
  free(h);
  ic_graph_destroy(g);
}

/* ---------------------------------------------------------------- two stages */

/* v as a value of any dtype (small integers are exact in every one). */
static inline hv rc_small(int v) {
  hv h = {.f = (float)v, .d = v, .i = v, .b = v != 0};
  return h;
}

/* rc_check of a graph of two inputs and one output whose fused cuda program must have
 * `kernels` kernels (the stages of a split reduction, or one). */
static inline void rc_check_stages(const ic_graph *g, const rc_input *ins, const rc_output *out, const char *what, int32_t kernels) {
  if (rc_is_cuda(rc_backend)) {
    ic_program *p = rc_compile(g, rc_backend, IC_MODE_FUSED);
    ck_assert_msg(ic_program_kernel_count(p) == kernels, "%s: %d kernels, not %d", what, (int)ic_program_kernel_count(p), (int)kernels);
    ic_program_release(p);
  }
  rc_check(g, ins, 2, out, 1, what);
}

/* Few long rows, which the cuda backend splits into a partial and a combine kernel
 * (kir.h, "two-stage reductions"): op over the rows of x * s (`and` for bool; s a per-row
 * value that the partial stage reads), then times s again (read by the combine stage)
 * when the result has x's dtype. The row's largest value is planted twice, in different
 * partials (at n/3 and 2n/3), and the smallest at n/2 and 3n/4, so the arg reductions
 * must keep the first of each. Checked by rc_check (eager == fused, two runs, ref == cuda
 * bit for bit with rc_cross_ref; argmax and argmin against the planted index); on cuda
 * the fused program must be the two stages. */
static inline void rc_two_stage_case(ic_dtype dt, ic_reduce_op op, int64_t nrows, int64_t n) {
  ic_graph *g;
  IC_OK_OR_FAIL(ic_graph_create(&g));
  ic_dim nd = ic_graph_symbol(g, "n");
  ic_value x = ic_graph_input(g, "x", dt, 2, (ic_dim[]){nrows, nd}, IC_LAYOUT_CONTIGUOUS);
  ic_value sv = ic_graph_input(g, "s", dt, 2, (ic_dim[]){nrows, 1}, IC_LAYOUT_CONTIGUOUS);
  ic_op times = dt == IC_BOOL ? IC_OP_LOGICAL_AND : IC_OP_MUL;
  ic_value r = ic_graph_reduce(g, op, ic_graph_binary(g, times, x, sv), 1, (int32_t[]){1}, 1);
  ic_dtype rdt = ic_graph_value_dtype(g, r);
  IC_OK_OR_FAIL(ic_graph_output(g, "y", rdt == dt ? ic_graph_binary(g, times, r, sv) : r));
  bool arg = op == IC_REDUCE_ARGMAX || op == IC_REDUCE_ARGMIN;
  void *h = rc_random_storage(dt, nrows * n, 0.0), *sh = rc_random_storage(dt, nrows, 0.0);
  for (int64_t row = 0; row < nrows; row++) {
    if (arg || op == IC_REDUCE_PROD) ref_set(dt, sh, row, rc_small(1)); /* exact: the planted order stays */
    if (op == IC_REDUCE_PROD) /* ones, minus ones (signed) and two twos: no overflow to inf or 0 */
      for (int64_t i = 0; i < n; i++)
        ref_set(dt, h, row * n + i, rc_small(i == 7 || i == 1000 ? 2 : i % 997 == 5 && !ref_is_unsigned(dt) ? -1 : 1));
    if (arg) /* values between the planted extremes */
      for (int64_t i = 0; i < n; i++) ref_set(dt, h, row * n + i, rc_small(ref_is_unsigned(dt) ? 1 + (int)(i % 17) : (int)(i % 17) - 8));
    if (n >= 4 && dt != IC_BOOL && op != IC_REDUCE_PROD) {
      ref_set(dt, h, row * n + n / 3, rc_small(100));
      ref_set(dt, h, row * n + 2 * n / 3, rc_small(100));
      ref_set(dt, h, row * n + n / 2, rc_small(ref_is_unsigned(dt) ? 0 : -100));
      ref_set(dt, h, row * n + 3 * n / 4, rc_small(ref_is_unsigned(dt) ? 0 : -100));
    }
  }
  rc_output out;
  rc_output_init(&out, "y", rdt, 2, (int64_t[]){nrows, 1}, arg && n >= 4 && dt != IC_BOOL, false);
  for (int64_t row = 0; out.bits && row < nrows; row++)
    ((int64_t *)out.bits)[row] = op == IC_REDUCE_ARGMAX ? n / 3 : n / 2;
  rc_input ins[2] = {{.dt = dt, .ndim = 2, .shape = {nrows, n}, .h = h, .storage = nrows * n},
                     {.dt = dt, .ndim = 2, .shape = {nrows, 1}, .h = sh, .storage = nrows}};
  char what[96];
  snprintf(what, sizeof what, "two stages: %s of %s over %lld rows of %lld", ic_reduce_name(op), ic_dtype_name(dt),
           (long long)nrows, (long long)n);
  rc_check_stages(g, ins, &out, what, 2);
  rc_output_free(&out);
  free(h);
  free(sh);
  ic_graph_destroy(g);
}

/* Few columns over many rows (kir.h: a light column reduction of at least 4 rounds over
 * fewer than 64 column blocks) as two kernels on cuda, a partial stage a round and a
 * combine a column: x * s reduced over dim 0 and multiplied by s again (a prologue and an
 * epilogue with column values), checked as rc_check checks (on cuda: against the ref
 * backend bit for bit, twice, eager == fused where rc_eager). symbolic: RC_SYM_ROWS and
 * RC_SYM_COLS make those dims symbols bound at run time (the program then holds the one
 * kernel and the two stages, kir_split_when choosing). kernels: what cuda must compile
 * (1, 2 or 3; test_reduce.test_column_split checks which of them the sizes launch). */
enum { RC_SYM_ROWS = 1, RC_SYM_COLS = 2 };
static inline void rc_column_split_case(ic_dtype dt, ic_reduce_op op, int64_t rows, int64_t ncols, int symbolic, int32_t kernels) {
  ic_graph *g;
  IC_OK_OR_FAIL(ic_graph_create(&g));
  ic_dim rd = symbolic & RC_SYM_ROWS ? ic_graph_symbol(g, "r") : rows, cd = symbolic & RC_SYM_COLS ? ic_graph_symbol(g, "c") : ncols;
  ic_value x = ic_graph_input(g, "x", dt, 2, (ic_dim[]){rd, cd}, IC_LAYOUT_CONTIGUOUS);
  ic_value sv = ic_graph_input(g, "s", dt, 2, (ic_dim[]){1, cd}, IC_LAYOUT_CONTIGUOUS);
  ic_op times = dt == IC_BOOL ? IC_OP_LOGICAL_AND : IC_OP_MUL;
  ic_value r = ic_graph_reduce(g, op, ic_graph_binary(g, times, x, sv), 1, (int32_t[]){0}, 1);
  ic_dtype rdt = ic_graph_value_dtype(g, r);
  IC_OK_OR_FAIL(ic_graph_output(g, "y", rdt == dt ? ic_graph_binary(g, times, r, sv) : r));
  void *h = rc_random_storage(dt, rows * ncols, 0.0), *sh = rc_random_storage(dt, ncols, 0.0);
  rc_output out;
  rc_output_init(&out, "y", rdt, 2, (int64_t[]){1, ncols}, false, false);
  rc_input ins[2] = {{.dt = dt, .ndim = 2, .shape = {rows, ncols}, .h = h, .storage = rows * ncols},
                     {.dt = dt, .ndim = 2, .shape = {1, ncols}, .h = sh, .storage = ncols}};
  char what[96];
  snprintf(what, sizeof what, "column split: %s of %s over [%s%lld, %s%lld]", ic_reduce_name(op), ic_dtype_name(dt),
           symbolic & RC_SYM_ROWS ? "r = " : "", (long long)rows, symbolic & RC_SYM_COLS ? "c = " : "", (long long)ncols);
  rc_check_stages(g, ins, &out, what, kernels);
  rc_output_free(&out);
  free(h);
  free(sh);
  ic_graph_destroy(g);
}

/* ---------------------------------------------------------------- shorthands */

static inline double rc_round_d(ic_dtype dt, double x) { return dt == IC_F64 ? x : (double)ref_round(dt, (float)x); }

/* A few units in the last place of dt at |x| (f32 and f64: more, for the sums in the
 * way), for the shorthands. */
static inline double rc_ulps(ic_dtype dt, double x, double k_narrow, double k_wide) {
  return (dt == IC_F32 || dt == IC_F64 ? k_wide : k_narrow) * ref_ulp(dt, fabs(x));
}

/* kind: 0 softmax, 1 log_softmax, 2 layer_norm, 3 layer_norm with weight, 4 layer_norm
 * with weight and bias, 5 rms_norm, 6 rms_norm with weight. Over [rows, cols] (axis /
 * nlast 1), the float64 reference rounded step by step to dt. */
static const char *const rc_shorthand_names[] = {"softmax", "log_softmax", "layer_norm", "layer_norm_w",
                                                 "layer_norm_wb", "rms_norm", "rms_norm_w"};
enum { RC_NSHORTHANDS = 7 };

static inline ic_value rc_build_shorthand(ic_graph *g, int kind, ic_value x, ic_value w, ic_value b, int32_t axis, double eps) {
  switch (kind) {
  case 0: return ic_graph_softmax(g, x, axis);
  case 1: return ic_graph_log_softmax(g, x, axis);
  case 2: return ic_graph_layer_norm(g, x, 1, IC_INVALID_VALUE, IC_INVALID_VALUE, eps);
  case 3: return ic_graph_layer_norm(g, x, 1, w, IC_INVALID_VALUE, eps);
  case 4: return ic_graph_layer_norm(g, x, 1, w, b, eps);
  case 5: return ic_graph_rms_norm(g, x, 1, IC_INVALID_VALUE, eps);
  default: return ic_graph_rms_norm(g, x, 1, w, eps);
  }
}

/* The reference of a shorthand over one row x[0..n) (wv, bv: the weight and bias), into
 * exact/tol at [i0, i0 + n). */
static inline void rc_shorthand_row(int kind, ic_dtype dt, const double *x, const double *wv, const double *bv, int64_t n,
                             double eps, double *exact, double *tol) {
  const double e32 = dt == IC_F64 ? ldexp(1.0, -53) : ldexp(1.0, -24);
  const double ks = 2.0 * (8.0 + 10.0 + (double)(n > 2048 ? n / 1024 : 0)); /* sum error, in units of e32 */
  if (kind <= 1) {
    double m = -INFINITY;
    for (int64_t i = 0; i < n; i++) m = x[i] > m ? x[i] : m;
    double s = 0;
    double *sh = malloc((size_t)n * sizeof *sh), *e = malloc((size_t)n * sizeof *e);
    for (int64_t i = 0; i < n; i++) {
      sh[i] = rc_round_d(dt, x[i] - m);
      e[i] = rc_round_d(dt, exp(sh[i]));
      s += e[i];
    }
    double sr = rc_round_d(dt, s);
    for (int64_t i = 0; i < n; i++) {
      if (kind == 0) {
        exact[i] = rc_round_d(dt, e[i] / sr);
        /* e within a few ulp (exp), s within the sum bound, then rounding */
        tol[i] = rc_ulps(dt, exact[i], 4, 8) + (ks + 8) * e32 * fabs(exact[i]);
      } else {
        double ls = rc_round_d(dt, log(sr));
        exact[i] = rc_round_d(dt, sh[i] - ls);
        /* ls: the sum's relative error (the bound; narrow dtypes: its rounding) and log's */
        tol[i] = rc_ulps(dt, exact[i], 2, 4) + rc_ulps(dt, ls, 2, 4) + (ks + 8) * e32 +
                 (dt == IC_F32 || dt == IC_F64 ? 0.0 : 2.0 * ref_ulp(dt, 1.0));
      }
    }
    free(sh);
    free(e);
    return;
  }
  bool rms = kind >= 5;
  double abs_mean = 0, sum = 0;
  for (int64_t i = 0; i < n; i++) {
    abs_mean += fabs(x[i]);
    sum += x[i];
  }
  abs_mean /= (double)n;
  double m = rms ? 0.0 : rc_round_d(dt, sum / (double)n);
  double *d = malloc((size_t)n * sizeof *d);
  double q = 0, qabs = 0;
  for (int64_t i = 0; i < n; i++) {
    d[i] = rms ? x[i] : rc_round_d(dt, x[i] - m);
    double sq = rc_round_d(dt, d[i] * d[i]);
    q += sq;
    qabs += sq;
  }
  double var = rc_round_d(dt, q / (double)n);
  double inv = rc_round_d(dt, 1.0 / rc_round_d(dt, sqrt(rc_round_d(dt, var + rc_round_d(dt, eps)))));
  /* error of m (the mean: sum bound, then an ulp of dt), carried through d * inv */
  double err_m = rms ? 0.0 : (ks * e32 * abs_mean + ref_ulp(dt, fabs(m)));
  for (int64_t i = 0; i < n; i++) {
    double y = rc_round_d(dt, d[i] * inv);
    double t = rc_ulps(dt, y, 4, 16) + err_m * inv * 2.0 + (ks * e32) * fabs(y);
    if (kind == 3 || kind == 4 || kind == 6) {
      double yw = rc_round_d(dt, y * wv[i]);
      t = t * fabs(wv[i]) + rc_ulps(dt, yw, 1, 1);
      y = yw;
    }
    if (kind == 4) {
      double yb = rc_round_d(dt, y + bv[i]);
      t += rc_ulps(dt, yb, 1, 1) + rc_ulps(dt, y, 1, 1);
      y = yb;
    }
    exact[i] = y;
    tol[i] = t;
  }
  (void)qabs;
  free(d);
}

/* Each shorthand of dt over [rows, cols] along the last dim: against the reference, eager
 * == fused; the fused program is one kernel (where one_kernel). */
static inline void rc_shorthand_case(ic_dtype dt, int64_t rows, int64_t cols, bool symbolic_rows) {
  const double eps = 1e-5;
  int64_t n = rows * cols;
  void *hx = malloc((size_t)(n ? n : 1) * ic_dtype_size(dt)), *hw = malloc((size_t)cols * ic_dtype_size(dt)),
       *hb = malloc((size_t)cols * ic_dtype_size(dt));
  double *x = malloc((size_t)(n ? n : 1) * sizeof *x), *w = malloc((size_t)cols * sizeof *w),
         *b = malloc((size_t)cols * sizeof *b);
  for (int64_t i = 0; i < n; i++) {
    uint64_t s = ref_rand(&rc_seed);
    double v = ((double)(int64_t)(s >> 11) / 9007199254740992.0 * 8.0 - 3.0);
    hv hvv = {.f = ref_round(dt, (float)v), .d = v};
    ref_set(dt, hx, i, hvv);
    x[i] = rc_dbl(dt, ref_get(dt, hx, i));
  }
  for (int64_t i = 0; i < cols; i++) {
    uint64_t s = ref_rand(&rc_seed);
    double wv = 0.5 + (double)(s >> 40) / 16777216.0, bv = (double)((s >> 8) & 0xffff) / 65536.0 - 0.5;
    ref_set(dt, hw, i, (hv){.f = ref_round(dt, (float)wv), .d = wv});
    ref_set(dt, hb, i, (hv){.f = ref_round(dt, (float)bv), .d = bv});
    w[i] = rc_dbl(dt, ref_get(dt, hw, i));
    b[i] = rc_dbl(dt, ref_get(dt, hb, i));
  }
  ic_graph *g;
  IC_OK_OR_FAIL(ic_graph_create(&g));
  ic_dim r = symbolic_rows ? ic_graph_symbol(g, "rows") : rows;
  ic_value gx = ic_graph_input(g, "x", dt, 2, (ic_dim[]){r, cols}, IC_LAYOUT_CONTIGUOUS);
  ic_value gw = ic_graph_input(g, "w", dt, 1, (ic_dim[]){cols}, IC_LAYOUT_CONTIGUOUS);
  ic_value gb = ic_graph_input(g, "b", dt, 1, (ic_dim[]){cols}, IC_LAYOUT_CONTIGUOUS);
  rc_output outs[RC_NSHORTHANDS];
  for (int k = 0; k < RC_NSHORTHANDS; k++) {
    ic_value y = rc_build_shorthand(g, k, gx, gw, gb, k == 1 ? -1 : 1, eps);
    IC_OK_OR_FAIL(ic_graph_output(g, rc_shorthand_names[k], y));
    ck_assert_int_eq(ic_graph_value_dtype(g, y), dt);
    rc_output_init(&outs[k], rc_shorthand_names[k], dt, 2, (int64_t[]){rows, cols}, false, true);
    for (int64_t row = 0; row < rows; row++)
      rc_shorthand_row(k, dt, x + row * cols, w, b, cols, eps, outs[k].exact + row * cols, outs[k].tol + row * cols);
  }
  rc_input ins[3] = {{.dt = dt, .ndim = 2, .shape = {rows, cols}, .h = hx, .storage = n},
                     {.dt = dt, .ndim = 1, .shape = {cols}, .h = hw, .storage = cols},
                     {.dt = dt, .ndim = 1, .shape = {cols}, .h = hb, .storage = cols}};
  char what[80];
  snprintf(what, sizeof what, "shorthands %s [%lld, %lld]", ic_dtype_name(dt), (long long)rows, (long long)cols);
  rc_check(g, ins, 3, outs, RC_NSHORTHANDS, what);
  for (int k = 0; k < RC_NSHORTHANDS; k++) rc_output_free(&outs[k]);
  ic_graph_destroy(g);
  free(hx);
  free(hw);
  free(hb);
  free(x);
  free(w);
  free(b);
}

/* Few rows of a symbolic length n (kir_passes_wanted): x - max(x), x / sum(x) and std(x)
 * over the rows of x [rows, n] in one fused kernel, which runs as a kernel a pass where
 * the n bound at run time is more than a lane group (262144) and as the one kernel where it
 * is not (kir_passes_when): eager == fused bit for bit either way (and on cuda, with
 * rc_cross_ref, the ref backend's bits: no transcendental op). */
static inline void rc_passes_case(ic_dtype dt, int64_t rows, int64_t n) {
  const int64_t numel = rows * n;
  void *hx = rc_random_storage(dt, numel, 0);
  ic_graph *g;
  IC_OK_OR_FAIL(ic_graph_create(&g));
  ic_value x = ic_graph_input(g, "x", dt, 2, (ic_dim[]){rows, ic_graph_symbol(g, "n")}, IC_LAYOUT_CONTIGUOUS);
  ic_value m = ic_graph_reduce(g, IC_REDUCE_MAX, x, 1, (int32_t[]){1}, 1);
  ic_value s = ic_graph_reduce(g, IC_REDUCE_SUM, x, 1, (int32_t[]){1}, 1);
  IC_OK_OR_FAIL(ic_graph_output(g, "shifted", ic_graph_binary(g, IC_OP_SUB, x, m)));
  IC_OK_OR_FAIL(ic_graph_output(g, "share", ic_graph_binary(g, IC_OP_DIV, x, s)));
  IC_OK_OR_FAIL(ic_graph_output(g, "std", ic_graph_std(g, x, 1, (int32_t[]){1}, 1.0, 0)));
  rc_output outs[3];
  rc_output_init(&outs[0], "shifted", dt, 2, (int64_t[]){rows, n}, false, false);
  rc_output_init(&outs[1], "share", dt, 2, (int64_t[]){rows, n}, false, false);
  rc_output_init(&outs[2], "std", dt, 1, (int64_t[]){rows}, false, false);
  rc_input in = {.dt = dt, .ndim = 2, .shape = {rows, n}, .h = hx, .storage = numel};
  char what[80];
  snprintf(what, sizeof what, "a kernel a pass, %s [%lld, n = %lld]", ic_dtype_name(dt), (long long)rows, (long long)n);
  rc_check(g, &in, 1, outs, 3, what);
  for (int k = 0; k < 3; k++) rc_output_free(&outs[k]);
  ic_graph_destroy(g);
  free(hx);
}

/* softmax along axis 0 of [cols, rows] (a column softmax) and along the middle of a 3-d
 * tensor: against the same reference through a gather. */
static inline void rc_softmax_axes_case(ic_dtype dt) {
  static const int64_t dims[3] = {5, 37, 8};
  int64_t n = rc_numel(3, dims);
  void *hx = rc_random_storage(dt, n, 0);
  for (int axis = 0; axis < 3; axis++) {
    for (int lg = 0; lg < 2; lg++) {
      ic_graph *g;
      IC_OK_OR_FAIL(ic_graph_create(&g));
      ic_value x = ic_graph_input(g, "x", dt, 3, (ic_dim[]){dims[0], dims[1], dims[2]}, IC_LAYOUT_CONTIGUOUS);
      IC_OK_OR_FAIL(ic_graph_output(g, "y", lg ? ic_graph_log_softmax(g, x, axis - 3) : ic_graph_softmax(g, x, axis)));
      rc_output o;
      rc_output_init(&o, "y", dt, 3, dims, false, true);
      rc_view view = {.dt = dt, .ndim = 3, .dims = {dims[0], dims[1], dims[2]}, .h = hx};
      rc_contiguous_strides(3, dims, view.strides);
      int64_t nrows, nn;
      hv *rows = rc_gather(&view, 1u << axis, &nrows, &nn);
      double *xr = malloc((size_t)nn * sizeof *xr), *ex = malloc((size_t)nn * sizeof *ex), *tl = malloc((size_t)nn * sizeof *tl);
      int64_t st = view.strides[axis];
      for (int64_t row = 0; row < nrows; row++) {
        for (int64_t i = 0; i < nn; i++) xr[i] = rc_dbl(dt, rows[row * nn + i]);
        rc_shorthand_row(lg, dt, xr, NULL, NULL, nn, 0, ex, tl);
        /* the row's base offset: row-major over the kept dims */
        int64_t kd[2], ks[2], nk = 0;
        for (int d = 0; d < 3; d++)
          if (d != axis) {
            kd[nk] = dims[d];
            ks[nk++] = view.strides[d];
          }
        int64_t base = (row / kd[1]) * ks[0] + (row % kd[1]) * ks[1];
        for (int64_t i = 0; i < nn; i++) {
          o.exact[base + i * st] = ex[i];
          o.tol[base + i * st] = tl[i];
        }
      }
      rc_input in = {.dt = dt, .ndim = 3, .shape = {dims[0], dims[1], dims[2]}, .h = hx, .storage = n};
      char what[64];
      snprintf(what, sizeof what, "%s %s axis %d", lg ? "log_softmax" : "softmax", ic_dtype_name(dt), axis);
      rc_check(g, &in, 1, &o, 1, what);
      rc_output_free(&o);
      free(rows);
      free(xr);
      free(ex);
      free(tl);
      ic_graph_destroy(g);
    }
  }
  free(hx);
}

/* The expected results of one line of n values (x in vf/vd, the weighted products in
 * pf/pd) of the sum/divide/multiply cases: y = x * (sum / n) at first + i * step of o[0],
 * the weighted sum at `line` of o[1]; f32-computed dtypes round every step, f64 none. */
static inline void rc_expect_scaled_line(ic_dtype dt, const float *vf, const double *vd, const float *pf, const double *pd,
                                         int64_t n, rc_output o[2], int64_t line, int64_t first, int64_t step) {
  if (dt == IC_F64) {
    double t = rc_order_f64(vd, n, false, 0) / (double)n;
    for (int64_t i = 0; i < n; i++) rc_store_d(o[0].bits, first + i * step, vd[i] * t);
    rc_store_d(o[1].bits, line, rc_order_f64(pd, n, false, 0));
  } else {
    float sr = ref_round(dt, rc_order_f32(vf, n, false, 0));
    float t = ref_round(dt, sr / ref_round(dt, (float)n));
    for (int64_t i = 0; i < n; i++) rc_store_f(dt, o[0].bits, first + i * step, ref_round(dt, vf[i] * t));
    rc_store_f(dt, o[1].bits, line, ref_round(dt, rc_order_f32(pf, n, false, 0)));
  }
}

/* The sum/divide/multiply cases' check of g's outputs o[first .. first + nout), then g and
 * both outputs freed. */
static inline void rc_check_scaled(ic_graph *g, const rc_input *ins, int32_t nin, rc_output o[2], int32_t first,
                                   int32_t nout, const char *what) {
  rc_check(g, ins, nin, o + first, nout, what);
  rc_output_free(&o[0]);
  rc_output_free(&o[1]);
  ic_graph_destroy(g);
}

/* y = x * (sum(x, 1, keepdim) / cols): one kernel fused; bit for bit (every step is an
 * IEEE op in the documented order). Also a prologue: sum(x * w) with w broadcast. */
static inline void rc_sum_divide_multiply_case(ic_dtype dt, int64_t rows, int64_t cols) {
  int64_t n = rows * cols;
  void *hx = rc_random_storage(dt, n, 0), *hw = rc_random_storage(dt, cols, 0);
  ic_graph *g;
  IC_OK_OR_FAIL(ic_graph_create(&g));
  ic_value x = ic_graph_input(g, "x", dt, 2, (ic_dim[]){rows, cols}, IC_LAYOUT_CONTIGUOUS);
  ic_value w = ic_graph_input(g, "w", dt, 1, (ic_dim[]){cols}, IC_LAYOUT_CONTIGUOUS);
  ic_value s = ic_graph_reduce(g, IC_REDUCE_SUM, x, 1, (int32_t[]){1}, 1);
  ic_value y = ic_graph_binary(g, IC_OP_MUL, x, ic_graph_binary(g, IC_OP_DIV, s, ic_graph_constant(g, (double)cols, IC_DTYPE_AUTO)));
  IC_OK_OR_FAIL(ic_graph_output(g, "y", y));
  IC_OK_OR_FAIL(ic_graph_output(g, "p", ic_graph_reduce(g, IC_REDUCE_SUM, ic_graph_binary(g, IC_OP_MUL, x, w), 1, (int32_t[]){1}, 0)));
  rc_output o[2];
  rc_output_init(&o[0], "y", dt, 2, (int64_t[]){rows, cols}, true, false);
  rc_output_init(&o[1], "p", dt, 1, (int64_t[]){rows}, true, false);
  for (int64_t r = 0; r < rows; r++) {
    float *vf = malloc((size_t)cols * 4), *pf = malloc((size_t)cols * 4);
    double *vd = malloc((size_t)cols * 8), *pd = malloc((size_t)cols * 8);
    for (int64_t c = 0; c < cols; c++) {
      hv a = ref_get(dt, hx, r * cols + c), b = ref_get(dt, hw, c);
      vf[c] = a.f;
      vd[c] = a.d;
      pf[c] = ref_round(dt, a.f * b.f);
      pd[c] = a.d * b.d;
    }
    rc_expect_scaled_line(dt, vf, vd, pf, pd, cols, o, r, r * cols, 1);
    free(vf);
    free(pf);
    free(vd);
    free(pd);
  }
  rc_input ins[2] = {{.dt = dt, .ndim = 2, .shape = {rows, cols}, .h = hx, .storage = n},
                     {.dt = dt, .ndim = 1, .shape = {cols}, .h = hw, .storage = cols}};
  char what[80];
  snprintf(what, sizeof what, "sum/divide/multiply %s [%lld, %lld]", ic_dtype_name(dt), (long long)rows, (long long)cols);
  rc_check_scaled(g, ins, 2, o, 0, 2, what);
  free(hx);
  free(hw);
}

/* The same over the columns: y = x * (sum(x, 0, keepdim) / rows) (element stores of a
 * column kernel) and p = sum(x * w * v, 0) with w [rows, 1] (one value a reduced index,
 * the same for every column) and v [cols] (a value a column, read as a row value).
 * outputs: 1 y alone, 2 p alone (one reduction a kernel: the light column layout), 3
 * both (two reductions in one kernel: the heavy one). */
static inline void rc_column_prologue_case(ic_dtype dt, int64_t rows, int64_t cols, int outputs) {
  int64_t n = rows * cols;
  void *hx = rc_random_storage(dt, n, 0), *hw = rc_random_storage(dt, rows, 0), *hv_ = rc_random_storage(dt, cols, 0);
  ic_graph *g;
  IC_OK_OR_FAIL(ic_graph_create(&g));
  ic_value x = ic_graph_input(g, "x", dt, 2, (ic_dim[]){rows, cols}, IC_LAYOUT_CONTIGUOUS);
  if (outputs & 1) {
    ic_value s = ic_graph_reduce(g, IC_REDUCE_SUM, x, 1, (int32_t[]){0}, 1);
    ic_value y = ic_graph_binary(g, IC_OP_MUL, x, ic_graph_binary(g, IC_OP_DIV, s, ic_graph_constant(g, (double)rows, IC_DTYPE_AUTO)));
    IC_OK_OR_FAIL(ic_graph_output(g, "y", y));
  }
  if (outputs & 2) {
    ic_value w = ic_graph_input(g, "w", dt, 2, (ic_dim[]){rows, 1}, IC_LAYOUT_CONTIGUOUS);
    ic_value v = ic_graph_input(g, "v", dt, 1, (ic_dim[]){cols}, IC_LAYOUT_CONTIGUOUS);
    ic_value xwv = ic_graph_binary(g, IC_OP_MUL, ic_graph_binary(g, IC_OP_MUL, x, w), v);
    IC_OK_OR_FAIL(ic_graph_output(g, "p", ic_graph_reduce(g, IC_REDUCE_SUM, xwv, 1, (int32_t[]){0}, 0)));
  }
  rc_output o[2];
  rc_output_init(&o[0], "y", dt, 2, (int64_t[]){rows, cols}, true, false);
  rc_output_init(&o[1], "p", dt, 1, (int64_t[]){cols}, true, false);
  float *vf = malloc((size_t)rows * 4), *pf = malloc((size_t)rows * 4);
  double *vd = malloc((size_t)rows * 8), *pd = malloc((size_t)rows * 8);
  for (int64_t c = 0; c < cols; c++) {
    hv b = ref_get(dt, hv_, c);
    for (int64_t r = 0; r < rows; r++) {
      hv a = ref_get(dt, hx, r * cols + c), m = ref_get(dt, hw, r);
      vf[r] = a.f;
      vd[r] = a.d;
      pf[r] = ref_round(dt, ref_round(dt, a.f * m.f) * b.f);
      pd[r] = a.d * m.d * b.d;
    }
    rc_expect_scaled_line(dt, vf, vd, pf, pd, rows, o, c, c, cols);
  }
  free(vf);
  free(pf);
  free(vd);
  free(pd);
  rc_input ins[3] = {{.dt = dt, .ndim = 2, .shape = {rows, cols}, .h = hx, .storage = n},
                     {.dt = dt, .ndim = 2, .shape = {rows, 1}, .h = hw, .storage = rows},
                     {.dt = dt, .ndim = 1, .shape = {cols}, .h = hv_, .storage = cols}};
  char what[80];
  snprintf(what, sizeof what, "column sum/divide/multiply %s [%lld, %lld] (outputs %d)", ic_dtype_name(dt), (long long)rows,
           (long long)cols, outputs);
  rc_check_scaled(g, ins, outputs & 2 ? 3 : 1, o, outputs & 1 ? 0 : 1, outputs == 3 ? 2 : 1, what);
  free(hx);
  free(hw);
  free(hv_);
}

#endif
