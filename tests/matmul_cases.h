/* Shared pieces of the matmul tests (tests/cpu/test_matmul_ref.c on the ref backend,
 * tests/gpu/gpu_matmul.c on cuda against ref): host references written plainly, the error
 * bound of the narrow floats, inputs described as they are run (strides, misaligned
 * bases), and a runner that runs several programs of one graph on the same inputs.
 *
 * References (ic.h, "matmul"): f32 is one fmaf a k in order from +0, f64 the same with
 * fma, i8 an exact i32 sum; bf16 and f16 accumulate in f32 in chunks of 16 and round
 * once, held to |c - exact| <= u |exact| + (ceil(K / 16) + 16) 2^-23 sum|a_k b_k| with u
 * = 2^-8 (bf16), 2^-11 (f16), exact computed in f64 from the rounded inputs. */
#ifndef IC_TESTS_MATMUL_CASES_H
#define IC_TESTS_MATMUL_CASES_H

#include <check.h>
#include <ic/ic.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"

#define MM_OK(call) ck_assert_msg((call) == IC_OK, "%s: %s", #call, ic_last_error())
#define MM_COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

enum { MM_MAX_DIMS = 4, MM_MAX_IN = 8, MM_MAX_OUT = 6, MM_MAX_PROGS = 4 };

/* ---------------------------------------------------------------- host references */

/* An operand as the matmul reads it: a strided view of host data (element strides, any
 * of them 0 for a broadcast), data at its element 0. */
typedef struct mm_view {
  const void *data;
  ic_dtype dt;
  int32_t ndim;
  int64_t shape[MM_MAX_DIMS];
  int64_t strides[MM_MAX_DIMS];
} mm_view;

/* torch.matmul's result of a @ b: batch dims broadcast (right-aligned), M and N, K; a
 * 1-D a has no M dim in the result, a 1-D b no N dim. */
typedef struct mm_plan {
  int32_t nbatch;
  int64_t batch[MM_MAX_DIMS];
  int64_t a_bstride[MM_MAX_DIMS], b_bstride[MM_MAX_DIMS]; /* 0 where broadcast */
  int64_t m, n, k, sam, sak, sbk, sbn;
  int32_t out_ndim;
  int64_t out_shape[MM_MAX_DIMS];
  int64_t count; /* result elements */
} mm_plan;

static inline mm_plan mm_plan_of(const mm_view *a, const mm_view *b) {
  mm_plan p = {0};
  const int32_t na = a->ndim, nb = b->ndim;
  p.m = na >= 2 ? a->shape[na - 2] : 1;
  p.k = a->shape[na - 1];
  p.sam = na >= 2 ? a->strides[na - 2] : 0;
  p.sak = a->strides[na - 1];
  p.n = nb >= 2 ? b->shape[nb - 1] : 1;
  p.sbk = nb >= 2 ? b->strides[nb - 2] : b->strides[0];
  p.sbn = nb >= 2 ? b->strides[nb - 1] : 0;
  ck_assert_int_eq(p.k, nb >= 2 ? b->shape[nb - 2] : b->shape[0]);
  const int32_t ba = na > 2 ? na - 2 : 0, bb = nb > 2 ? nb - 2 : 0;
  p.nbatch = ba > bb ? ba : bb;
  for (int32_t i = 0; i < p.nbatch; i++) {
    const int32_t ia = i - (p.nbatch - ba), ib = i - (p.nbatch - bb);
    const int64_t da = ia >= 0 ? a->shape[ia] : 1, db = ib >= 0 ? b->shape[ib] : 1;
    ck_assert_msg(da == db || da == 1 || db == 1, "batch dims %lld and %lld", (long long)da, (long long)db);
    p.batch[i] = da == 1 ? db : da;
    p.a_bstride[i] = ia >= 0 && da != 1 ? a->strides[ia] : 0;
    p.b_bstride[i] = ib >= 0 && db != 1 ? b->strides[ib] : 0;
    p.out_shape[p.out_ndim++] = p.batch[i];
  }
  if (na >= 2) p.out_shape[p.out_ndim++] = p.m;
  if (nb >= 2) p.out_shape[p.out_ndim++] = p.n;
  p.count = p.m * p.n;
  for (int32_t i = 0; i < p.nbatch; i++) p.count *= p.batch[i];
  return p;
}

static inline double mm_load(ic_dtype dt, const void *base, int64_t i) {
  return ic_element_load(dt, (const char *)base + i * (int64_t)ic_dtype_size(dt));
}

/* The result dtype of a matmul of dt operands. */
static inline ic_dtype mm_result_dtype(ic_dtype dt) { return dt == IC_I8 ? IC_I32 : dt; }

/* Walks the result in row-major order: fn(user, index, a offset, b offset) of each
 * element's row of a and column of b. */
typedef void (*mm_elem_fn)(void *user, int64_t i, int64_t ao, int64_t bo);
static inline void mm_walk(const mm_plan *p, mm_elem_fn fn, void *user) {
  int64_t idx[MM_MAX_DIMS] = {0};
  const int64_t batches = p->m > 0 && p->n > 0 ? p->count / (p->m * p->n) : 0;
  int64_t i = 0;
  for (int64_t bi = 0; bi < batches; bi++) {
    int64_t ab = 0, bbo = 0;
    for (int32_t d = 0; d < p->nbatch; d++) {
      ab += idx[d] * p->a_bstride[d];
      bbo += idx[d] * p->b_bstride[d];
    }
    for (int64_t m = 0; m < p->m; m++)
      for (int64_t n = 0; n < p->n; n++) fn(user, i++, ab + m * p->sam, bbo + n * p->sbn);
    for (int32_t d = p->nbatch - 1; d >= 0; d--) {
      if (++idx[d] < p->batch[d]) break;
      idx[d] = 0;
    }
  }
}

typedef struct mm_ref_ctx {
  const mm_view *a, *b;
  const mm_plan *p;
  void *exact;            /* the documented bits (f32, f64, i32), or NULL */
  double *value, *abssum; /* sum a_k b_k and sum |a_k b_k| in f64, or NULL */
} mm_ref_ctx;

static inline void mm_ref_elem(void *user, int64_t i, int64_t ao, int64_t bo) {
  const mm_ref_ctx *c = user;
  const mm_plan *p = c->p;
  const ic_dtype dt = c->a->dt;
  float acc32 = 0.0f;
  double acc64 = 0.0, v = 0.0, s = 0.0;
  int64_t acci = 0;
  for (int64_t k = 0; k < p->k; k++) {
    const double x = mm_load(dt, c->a->data, ao + k * p->sak), y = mm_load(dt, c->b->data, bo + k * p->sbk);
    if (dt == IC_F32) acc32 = fmaf((float)x, (float)y, acc32);
    else if (dt == IC_F64) acc64 = fma(x, y, acc64);
    else if (dt == IC_I8) acci += (int64_t)x * (int64_t)y;
    v += x * y; /* exact for 8-, 16- and 32-bit operands: at most 48 significant bits */
    s += fabs(x * y);
  }
  if (c->exact) {
    if (dt == IC_F32) memcpy((float *)c->exact + i, &acc32, 4);
    else if (dt == IC_F64) memcpy((double *)c->exact + i, &acc64, 8);
    else if (dt == IC_I8) ((int32_t *)c->exact)[i] = (int32_t)acci; /* |sum| < 2^31 for K < 2^17 */
  }
  if (c->value) c->value[i] = v;
  if (c->abssum) c->abssum[i] = s;
}

/* The references of a @ b (p from mm_plan_of): any of exact, value, abssum may be NULL. */
static inline void mm_reference(const mm_view *a, const mm_view *b, const mm_plan *p, void *exact, double *value,
                                double *abssum) {
  mm_ref_ctx c = {a, b, p, exact, value, abssum};
  mm_walk(p, mm_ref_elem, &c);
}

/* The unit roundoff of the narrow float result dtypes (bf16 2^-8, f16 2^-11). */
static inline double mm_unit(ic_dtype dt) { return dt == IC_BF16 ? 0x1p-8 : dt == IC_F16 ? 0x1p-11 : 0x1p-24; }

/* ic.h's bound for a bf16 or f16 result. */
static inline double mm_bound(ic_dtype dt, int64_t k, double exact, double abssum) {
  return mm_unit(dt) * fabs(exact) + (double)((k + 15) / 16 + 16) * 0x1p-23 * abssum;
}

/* TF32: both operands rounded (or truncated) to 10 mantissa bits, relative 2^-10 each,
 * then f32 accumulation as above. */
static inline double mm_bound_tf32(int64_t k, double exact, double abssum) {
  return 0x1p-24 * fabs(exact) + (0x1p-9 + (double)((k + 15) / 16 + 16) * 0x1p-23) * abssum;
}

/* Every element of got (dtype dt) within the bound of the references (tf32: the TF32
 * bound). */
static inline void mm_check_bound(const char *what, ic_dtype dt, const void *got, const double *value,
                                  const double *abssum, int64_t count, int64_t k, bool tf32) {
  for (int64_t i = 0; i < count; i++) {
    const double g = mm_load(dt, got, i);
    const double tol = tf32 ? mm_bound_tf32(k, value[i], abssum[i]) : mm_bound(dt, k, value[i], abssum[i]);
    ck_assert_msg(fabs(g - value[i]) <= tol, "%s: element %lld is %.9g, exact %.9g, bound %.3g (K %lld)", what,
                  (long long)i, g, value[i], tol, (long long)k);
  }
}

/* got and want, element by element, bit for bit. */
static inline void mm_check_bits(const char *what, ic_dtype dt, const void *got, const void *want, int64_t count) {
  const size_t es = ic_dtype_size(dt);
  for (int64_t i = 0; i < count; i++)
    if (memcmp((const char *)got + (size_t)i * es, (const char *)want + (size_t)i * es, es) != 0)
      ck_abort_msg("%s: element %lld is %.17g, expected %.17g (%s, bit for bit)", what, (long long)i,
                   mm_load(dt, got, i), mm_load(dt, want, i), ic_dtype_name(dt));
}

/* ---------------------------------------------------------------- inputs */

/* An input as a run passes it: shape, element strides (NULL-equivalent when !strided),
 * data `offset` elements into an allocation of `alloc` elements (misaligned bases). */
typedef struct mm_input {
  const char *name;
  ic_dtype dt;
  int32_t ndim;
  int64_t shape[MM_MAX_DIMS];
  bool strided;
  int64_t strides[MM_MAX_DIMS];
  int64_t offset;
  int64_t alloc;
  void *host; /* alloc elements */
} mm_input;

/* A contiguous input of the given shape. */
static inline mm_input mm_in(const char *name, ic_dtype dt, int32_t ndim, const int64_t *shape) {
  mm_input in = {.name = name, .dt = dt, .ndim = ndim};
  in.alloc = 1;
  for (int32_t d = 0; d < ndim; d++) {
    in.shape[d] = shape[d];
    in.alloc *= shape[d];
  }
  return in;
}

/* An input with explicit element strides, its data `offset` elements in (the allocation
 * holds its furthest element). */
static inline mm_input mm_in_strided(const char *name, ic_dtype dt, int32_t ndim, const int64_t *shape,
                                     const int64_t *strides, int64_t offset) {
  mm_input in = {.name = name, .dt = dt, .ndim = ndim, .strided = true, .offset = offset};
  int64_t last = 0;
  bool empty = false;
  for (int32_t d = 0; d < ndim; d++) {
    in.shape[d] = shape[d];
    in.strides[d] = strides[d];
    last += (shape[d] - 1) * strides[d];
    empty = empty || shape[d] == 0;
  }
  in.alloc = offset + (empty ? 0 : last + 1);
  return in;
}

static inline uint64_t mm_next(uint64_t *s) {
  uint64_t z = (*s += UINT64_C(0x9e3779b97f4a7c15));
  z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
  return z ^ (z >> 31);
}

/* Random values over the whole allocation: floats uniform in [-1, 1] rounded to the dtype
 * (one in 16 exactly 0), i8 over its whole range. */
static inline void mm_fill(mm_input *in, uint64_t seed) {
  const size_t es = ic_dtype_size(in->dt);
  in->host = malloc((size_t)(in->alloc ? in->alloc : 1) * es);
  ck_assert_ptr_nonnull(in->host);
  for (int64_t i = 0; i < in->alloc; i++) {
    const uint64_t z = mm_next(&seed);
    double v = in->dt == IC_I8 ? (double)(int64_t)(z % 256) - 128.0 : (double)(z >> 11) * 0x1p-52 - 1.0;
    if (in->dt != IC_I8 && (z & 15) == 0) v = 0.0;
    MM_OK(ic_element_store(in->dt, v, (char *)in->host + (size_t)i * es));
  }
}

/* The view of input `in` as it is run (its data, shape and strides). */
static inline mm_view mm_view_of(const mm_input *in) {
  mm_view v = {.data = (const char *)in->host + (size_t)in->offset * ic_dtype_size(in->dt), .dt = in->dt,
               .ndim = in->ndim};
  int64_t st = 1;
  for (int32_t d = in->ndim - 1; d >= 0; d--) {
    v.shape[d] = in->shape[d];
    v.strides[d] = in->strided ? in->strides[d] : st;
    st *= in->shape[d];
  }
  return v;
}

/* A view's dims permuted (view dim i is dim perm[i]), as ic_graph_permute. */
static inline mm_view mm_permute(mm_view v, const int32_t *perm) {
  mm_view r = v;
  for (int32_t i = 0; i < v.ndim; i++) {
    r.shape[i] = v.shape[perm[i]];
    r.strides[i] = v.strides[perm[i]];
  }
  return r;
}

/* Python's v[start:stop:step] along dim (non-negative start, positive step). */
static inline mm_view mm_slice(mm_view v, int32_t dim, int64_t start, int64_t stop, int64_t step) {
  if (stop > v.shape[dim]) stop = v.shape[dim];
  const int64_t len = stop > start ? (stop - start + step - 1) / step : 0;
  v.data = (const char *)v.data + (size_t)(start * v.strides[dim]) * ic_dtype_size(v.dt);
  v.shape[dim] = len;
  v.strides[dim] *= step;
  return v;
}

/* A view broadcast to ndim dims of `shape` (numpy rules; broadcast dims have stride 0). */
static inline mm_view mm_expand(mm_view v, int32_t ndim, const int64_t *shape) {
  mm_view r = {.data = v.data, .dt = v.dt, .ndim = ndim};
  for (int32_t i = 0; i < ndim; i++) {
    const int32_t j = i - (ndim - v.ndim);
    r.shape[i] = shape[i];
    r.strides[i] = j >= 0 && v.shape[j] == shape[i] ? v.strides[j] : 0;
  }
  return r;
}

/* ---------------------------------------------------------------- runs */

/* Where programs run: ctx, and for each program whether it is the ref backend (host
 * memory) or cuda (device memory). */
typedef struct mm_env {
  ic_context *ctx;
} mm_env;

/* One output of a run of several programs: the shape of the first program, each
 * program's result in host memory (poisoned with 0xA5 before the run). */
typedef struct mm_output {
  ic_dtype dt;
  int32_t ndim;
  int64_t shape[IC_MAX_DIMS];
  int64_t count;
  void *got[MM_MAX_PROGS];
} mm_output;

/* Runs each of progs[0..nprogs) (ref[i]: the ref backend) on the same inputs (bound by
 * name), every output poisoned first; fills out[0..noutput count). Inputs must be filled. */
static inline int32_t mm_run(const mm_env *env, ic_program *const *progs, const bool *ref, int32_t nprogs,
                             const mm_input *in, int32_t nin, mm_output *out) {
  const int32_t nout = ic_program_output_count(progs[0]);
  ck_assert_int_le(nout, MM_MAX_OUT);
  ck_assert_int_le(nin, MM_MAX_IN);
  void *dev[MM_MAX_IN] = {0};
  for (int32_t pi = 0; pi < nprogs; pi++) {
    ic_program *p = progs[pi];
    ck_assert_int_eq(ic_program_input_count(p), nin);
    ic_tensor tin[MM_MAX_IN];
    for (int32_t i = 0; i < nin; i++) {
      const int32_t at = ic_program_input_index(p, in[i].name);
      ck_assert_msg(at >= 0 && at < nin, "no input '%s'", in[i].name);
      const size_t es = ic_dtype_size(in[i].dt), bytes = (size_t)in[i].alloc * es;
      char *base = in[i].host;
      if (!ref[pi]) {
        if (!dev[i]) {
          MM_OK(ic_malloc(env->ctx, bytes ? bytes : 1, &dev[i]));
          if (bytes) MM_OK(ic_memcpy_htod(env->ctx, dev[i], in[i].host, bytes));
        }
        base = dev[i];
      }
      tin[at] = (ic_tensor){base + (size_t)in[i].offset * es, in[i].dt, in[i].ndim, in[i].shape,
                            in[i].strided ? in[i].strides : NULL};
    }
    ic_tensor tout[MM_MAX_OUT];
    for (int32_t o = 0; o < nout; o++) {
      mm_output *r = &out[o];
      if (pi == 0) {
        int32_t nd = 0;
        MM_OK(ic_program_output_shape(p, o, tin, &nd, r->shape));
        r->ndim = nd;
        r->count = 1;
        for (int32_t d = 0; d < nd; d++) r->count *= r->shape[d];
        for (int32_t b = 0; b < ic_program_buffer_count(p); b++) {
          ic_buffer_info bi;
          MM_OK(ic_program_buffer(p, b, &bi));
          if (bi.kind == IC_BUFFER_OUTPUT && bi.index == o) r->dt = bi.dtype;
        }
      }
      const size_t bytes = (size_t)r->count * ic_dtype_size(r->dt);
      void *data;
      if (ref[pi]) {
        data = malloc(bytes ? bytes : 1);
        ck_assert_ptr_nonnull(data);
      } else {
        MM_OK(ic_malloc(env->ctx, bytes ? bytes : 1, &data));
      }
      if (bytes) {
        if (ref[pi]) memset(data, 0xA5, bytes);
        else MM_OK(ic_memset_d8(env->ctx, data, 0xA5, bytes));
      }
      tout[o] = (ic_tensor){data, r->dt, r->ndim, r->shape, NULL};
    }
    MM_OK(ic_program_run(p, tin, nin, tout, nout, NULL));
    if (!ref[pi]) MM_OK(ic_stream_synchronize(env->ctx, NULL));
    for (int32_t o = 0; o < nout; o++) {
      const size_t bytes = (size_t)out[o].count * ic_dtype_size(out[o].dt);
      if (ref[pi]) {
        out[o].got[pi] = tout[o].data;
      } else {
        out[o].got[pi] = malloc(bytes ? bytes : 1);
        ck_assert_ptr_nonnull(out[o].got[pi]);
        if (bytes) MM_OK(ic_memcpy_dtoh(env->ctx, out[o].got[pi], tout[o].data, bytes));
        MM_OK(ic_free(env->ctx, tout[o].data));
      }
    }
  }
  for (int32_t i = 0; i < nin; i++)
    if (dev[i]) MM_OK(ic_free(env->ctx, dev[i]));
  return nout;
}

static inline void mm_outputs_free(mm_output *out, int32_t nout, int32_t nprogs) {
  for (int32_t o = 0; o < nout; o++)
    for (int32_t pi = 0; pi < nprogs; pi++) {
      free(out[o].got[pi]);
      out[o].got[pi] = NULL;
    }
}

static inline void mm_inputs_free(mm_input *in, int32_t nin) {
  for (int32_t i = 0; i < nin; i++) {
    free(in[i].host);
    in[i].host = NULL;
  }
}

/* Checks one matmul result (dtype of a's) against the references of a @ b: the
 * documented bits for f32, f64 and i8 operands, the bound for bf16 and f16 (tf32: the
 * TF32 bound for f32). The output's shape must be the plan's. */
static inline void mm_check_result(const char *what, const mm_view *a, const mm_view *b, const mm_output *o,
                                   const void *got, bool tf32) {
  const mm_plan p = mm_plan_of(a, b);
  ck_assert_msg(o->ndim == p.out_ndim, "%s: result of %d dims, expected %d", what, (int)o->ndim, (int)p.out_ndim);
  for (int32_t d = 0; d < p.out_ndim; d++)
    ck_assert_msg(o->shape[d] == p.out_shape[d], "%s: result dim %d is %lld, expected %lld", what, (int)d,
                  (long long)o->shape[d], (long long)p.out_shape[d]);
  ck_assert_int_eq(o->dt, mm_result_dtype(a->dt));
  const size_t n = (size_t)(p.count ? p.count : 1);
  if (!tf32 && (a->dt == IC_F32 || a->dt == IC_F64 || a->dt == IC_I8)) {
    void *want = malloc(n * ic_dtype_size(o->dt));
    ck_assert_ptr_nonnull(want);
    mm_reference(a, b, &p, want, NULL, NULL);
    mm_check_bits(what, o->dt, got, want, p.count);
    free(want);
  } else {
    double *v = malloc(n * sizeof *v), *s = malloc(n * sizeof *s);
    ck_assert(v && s);
    mm_reference(a, b, &p, NULL, v, s);
    mm_check_bound(what, o->dt, got, v, s, p.count, p.k, tf32);
    free(v);
    free(s);
  }
}

/* got[0] and got[i] of an output bit for bit (fused == eager, two runs). */
static inline void mm_check_same(const char *what, const mm_output *o, int32_t x, int32_t y) {
  mm_check_bits(what, o->dt, o->got[x], o->got[y], o->count);
}

/* ---------------------------------------------------------------- cases
 *
 * Each case builds one graph (sizes symbolic where a matmul allows), compiles it once on
 * mm_backend fused and eager (strict), and on cuda also on the ref backend (the oracle),
 * then runs every program at each size on the same random inputs: every result against
 * the host references, fused == eager bit for bit, and on cuda the fused result equal to
 * the ref backend's bit for bit for f32, f64 and i8 and the fused program run twice
 * giving the same bits. */

static const char *mm_backend = "ref";
static mm_env mm_e;

typedef struct mm_progs {
  ic_program *p[MM_MAX_PROGS];
  bool ref[MM_MAX_PROGS];
  int32_t n;
  bool cuda; /* p[2] is ref, p[3] the fused program again */
} mm_progs;

static inline mm_progs mm_compile(const ic_graph *g, uint32_t flags) {
  mm_progs r = {.cuda = strcmp(mm_backend, "cuda") == 0};
  const char *err = NULL;
  ck_assert_msg(ic_graph_error(g, &err) == IC_OK, "graph: %s", err ? err : "");
  const ic_compile_options o[3] = {
      {.struct_size = sizeof(ic_compile_options), .flags = IC_COMPILE_STRICT | flags, .backend = mm_backend},
      {.struct_size = sizeof(ic_compile_options), .mode = IC_MODE_EAGER, .flags = IC_COMPILE_STRICT | flags,
       .backend = mm_backend},
      {.struct_size = sizeof(ic_compile_options), .flags = flags, .backend = "ref"}};
  r.n = r.cuda ? 3 : 2;
  for (int32_t i = 0; i < r.n; i++) {
    MM_OK(ic_compile(mm_e.ctx, g, &o[i], &r.p[i]));
    r.ref[i] = i == 2 || !r.cuda;
  }
  if (r.cuda) {
    ic_program_retain(r.p[0]);
    r.p[3] = r.p[0];
    r.ref[3] = false;
    r.n = 4;
  }
  return r;
}

static inline void mm_release(mm_progs *r) {
  for (int32_t i = 0; i < r->n; i++) ic_program_release(r->p[i]);
  r->n = 0;
}

/* The programs of an output against each other: fused == eager, and on cuda the second
 * fused run == the first, and (exact: the dtype's results are specified to the bit)
 * fused == ref. */
static inline void mm_check_extra(const char *what, const mm_progs *r, const mm_output *o, bool exact) {
  char msg[256];
  snprintf(msg, sizeof msg, "%s: eager == fused", what);
  mm_check_same(msg, o, 1, 0);
  if (!r->cuda) return;
  snprintf(msg, sizeof msg, "%s: two runs", what);
  mm_check_same(msg, o, 3, 0);
  if (!exact) return;
  snprintf(msg, sizeof msg, "%s: cuda == ref", what);
  mm_check_same(msg, o, 2, 0);
}

static const char *const mm_prog_names[MM_MAX_PROGS] = {"fused", "eager", "ref", "fused again"};

/* A matmul result of every program against the references of a @ b, and the programs
 * against each other (see above). */
static inline void mm_check_all(const char *what, const mm_progs *r, const mm_view *a, const mm_view *b,
                                const mm_output *o, bool tf32) {
  char msg[256];
  for (int32_t i = 0; i < r->n; i++) {
    snprintf(msg, sizeof msg, "%s (%s %s)", what, i == 2 ? "ref" : mm_backend, mm_prog_names[i]);
    mm_check_result(msg, a, b, o, o->got[i], tf32); /* the exact sum is within the TF32 bound too */
  }
  mm_check_extra(what, r, o, !tf32 && (a->dt == IC_F32 || a->dt == IC_F64 || a->dt == IC_I8));
}

/* a [m, k] @ b [k, n] of symbolic sizes: one compile, every size of sizes ({m, k, n}, 0
 * included). flags: IC_COMPILE_ALLOW_TF32 holds f32 to the TF32 bound. */
static inline void mm_case_2d(ic_dtype dt, const int64_t (*sizes)[3], int32_t nsizes, uint32_t flags) {
  ic_graph *g;
  MM_OK(ic_graph_create(&g));
  const ic_dim m = ic_graph_symbol(g, "m"), k = ic_graph_symbol(g, "k"), n = ic_graph_symbol(g, "n");
  ic_value a = ic_graph_input(g, "a", dt, 2, (ic_dim[]){m, k}, IC_LAYOUT_CONTIGUOUS);
  ic_value b = ic_graph_input(g, "b", dt, 2, (ic_dim[]){k, n}, IC_LAYOUT_CONTIGUOUS);
  ic_graph_output(g, "c", ic_graph_matmul(g, a, b));
  mm_progs r = mm_compile(g, flags);
  const bool tf32 = (flags & IC_COMPILE_ALLOW_TF32) && dt == IC_F32;
  for (int32_t si = 0; si < nsizes; si++) {
    const int64_t *z = sizes[si];
    mm_input in[2] = {mm_in("a", dt, 2, (int64_t[]){z[0], z[1]}), mm_in("b", dt, 2, (int64_t[]){z[1], z[2]})};
    for (int i = 0; i < 2; i++) mm_fill(&in[i], UINT64_C(0x2545f4914f6cdd1d) * (uint64_t)(si * 2 + i + 1) + dt);
    mm_output out[MM_MAX_OUT];
    const int32_t nout = mm_run(&mm_e, r.p, r.ref, r.n, in, 2, out);
    const mm_view va = mm_view_of(&in[0]), vb = mm_view_of(&in[1]);
    char what[128];
    snprintf(what, sizeof what, "%s [%lld, %lld] @ [%lld, %lld]%s", ic_dtype_name(dt), (long long)z[0],
             (long long)z[1], (long long)z[1], (long long)z[2], tf32 ? " tf32" : "");
    mm_check_all(what, &r, &va, &vb, &out[0], tf32);
    mm_outputs_free(out, nout, r.n);
    mm_inputs_free(in, 2);
  }
  mm_release(&r);
  ic_graph_destroy(g);
}

/* The 1-D forms in one graph of symbolic sizes: v [k] @ w [k] (a 0-d dot), v @ b [k, n]
 * ([n]) and a [m, k] @ v ([m]); sizes {m, k, n}. */
static inline void mm_case_vectors(ic_dtype dt, const int64_t (*sizes)[3], int32_t nsizes) {
  ic_graph *g;
  MM_OK(ic_graph_create(&g));
  const ic_dim m = ic_graph_symbol(g, "m"), k = ic_graph_symbol(g, "k"), n = ic_graph_symbol(g, "n");
  ic_value v = ic_graph_input(g, "v", dt, 1, (ic_dim[]){k}, IC_LAYOUT_CONTIGUOUS);
  ic_value w = ic_graph_input(g, "w", dt, 1, (ic_dim[]){k}, IC_LAYOUT_CONTIGUOUS);
  ic_value a = ic_graph_input(g, "a", dt, 2, (ic_dim[]){m, k}, IC_LAYOUT_CONTIGUOUS);
  ic_value b = ic_graph_input(g, "b", dt, 2, (ic_dim[]){k, n}, IC_LAYOUT_CONTIGUOUS);
  ic_graph_output(g, "dot", ic_graph_matmul(g, v, w));
  ic_graph_output(g, "vb", ic_graph_matmul(g, v, b));
  ic_graph_output(g, "av", ic_graph_matmul(g, a, v));
  mm_progs r = mm_compile(g, 0);
  for (int32_t si = 0; si < nsizes; si++) {
    const int64_t *z = sizes[si];
    mm_input in[4] = {mm_in("v", dt, 1, (int64_t[]){z[1]}), mm_in("w", dt, 1, (int64_t[]){z[1]}),
                      mm_in("a", dt, 2, (int64_t[]){z[0], z[1]}), mm_in("b", dt, 2, (int64_t[]){z[1], z[2]})};
    for (int i = 0; i < 4; i++) mm_fill(&in[i], UINT64_C(0x9e3779b97f4a7c15) * (uint64_t)(si * 4 + i + 1) + dt);
    mm_output out[MM_MAX_OUT];
    const int32_t nout = mm_run(&mm_e, r.p, r.ref, r.n, in, 4, out);
    ck_assert_int_eq(nout, 3);
    mm_view vv = mm_view_of(&in[0]), vw = mm_view_of(&in[1]), va = mm_view_of(&in[2]), vb = mm_view_of(&in[3]);
    char what[128];
    snprintf(what, sizeof what, "%s dot of [%lld]", ic_dtype_name(dt), (long long)z[1]);
    mm_check_all(what, &r, &vv, &vw, &out[0], false);
    snprintf(what, sizeof what, "%s [%lld] @ [%lld, %lld]", ic_dtype_name(dt), (long long)z[1], (long long)z[1],
             (long long)z[2]);
    mm_check_all(what, &r, &vv, &vb, &out[1], false);
    snprintf(what, sizeof what, "%s [%lld, %lld] @ [%lld]", ic_dtype_name(dt), (long long)z[0], (long long)z[1],
             (long long)z[1]);
    mm_check_all(what, &r, &va, &vv, &out[2], false);
    mm_outputs_free(out, nout, r.n);
    mm_inputs_free(in, 4);
  }
  mm_release(&r);
  ic_graph_destroy(g);
}

/* Batched matmuls with broadcast batch dims, one graph of symbolic sizes {bt, m, k, n}:
 * a [bt, m, k] @ b [k, n] (2-D against batched), a @ b1 [1, k, n] (a batch of 1),
 * a4 [2, 1, m, k] @ b3 [3, k, n] (batch [2, 3]), a @ expand(b, [bt, k, n]) (batch stride
 * 0), and b3 @ permute(b3) ([3, k, k], both operands batched). */
static inline void mm_case_batched(ic_dtype dt, const int64_t (*sizes)[4], int32_t nsizes) {
  ic_graph *g;
  MM_OK(ic_graph_create(&g));
  const ic_dim bt = ic_graph_symbol(g, "bt"), m = ic_graph_symbol(g, "m"), k = ic_graph_symbol(g, "k"),
               n = ic_graph_symbol(g, "n");
  ic_value a = ic_graph_input(g, "a", dt, 3, (ic_dim[]){bt, m, k}, IC_LAYOUT_CONTIGUOUS);
  ic_value b = ic_graph_input(g, "b", dt, 2, (ic_dim[]){k, n}, IC_LAYOUT_CONTIGUOUS);
  ic_value b1 = ic_graph_input(g, "b1", dt, 3, (ic_dim[]){1, k, n}, IC_LAYOUT_CONTIGUOUS);
  ic_value a4 = ic_graph_input(g, "a4", dt, 4, (ic_dim[]){2, 1, m, k}, IC_LAYOUT_CONTIGUOUS);
  ic_value b3 = ic_graph_input(g, "b3", dt, 3, (ic_dim[]){3, k, n}, IC_LAYOUT_CONTIGUOUS);
  ic_graph_output(g, "y0", ic_graph_matmul(g, a, b));
  ic_graph_output(g, "y1", ic_graph_matmul(g, a, b1));
  ic_graph_output(g, "y2", ic_graph_matmul(g, a4, b3));
  ic_graph_output(g, "y3", ic_graph_matmul(g, a, ic_graph_expand(g, b, 3, (ic_dim[]){bt, k, n})));
  ic_graph_output(g, "y4", ic_graph_matmul(g, b3, ic_graph_permute(g, b3, 3, (int32_t[]){0, 2, 1})));
  mm_progs r = mm_compile(g, 0);
  for (int32_t si = 0; si < nsizes; si++) {
    const int64_t *z = sizes[si];
    mm_input in[5] = {mm_in("a", dt, 3, (int64_t[]){z[0], z[1], z[2]}), mm_in("b", dt, 2, (int64_t[]){z[2], z[3]}),
                      mm_in("b1", dt, 3, (int64_t[]){1, z[2], z[3]}),
                      mm_in("a4", dt, 4, (int64_t[]){2, 1, z[1], z[2]}),
                      mm_in("b3", dt, 3, (int64_t[]){3, z[2], z[3]})};
    for (int i = 0; i < 5; i++) mm_fill(&in[i], UINT64_C(0xd1b54a32d192ed03) * (uint64_t)(si * 5 + i + 1) + dt);
    mm_output out[MM_MAX_OUT];
    const int32_t nout = mm_run(&mm_e, r.p, r.ref, r.n, in, 5, out);
    ck_assert_int_eq(nout, 5);
    const mm_view va = mm_view_of(&in[0]), vb = mm_view_of(&in[1]), vb1 = mm_view_of(&in[2]),
                  va4 = mm_view_of(&in[3]), vb3 = mm_view_of(&in[4]);
    const mm_view vbe = mm_expand(vb, 3, (int64_t[]){z[0], z[2], z[3]});
    const mm_view vb3t = mm_permute(vb3, (int32_t[]){0, 2, 1});
    char what[160];
    const char *names[5] = {"[bt, m, k] @ [k, n]", "[bt, m, k] @ [1, k, n]", "[2, 1, m, k] @ [3, k, n]",
                            "[bt, m, k] @ expand([k, n])", "[3, k, n] @ permute([3, k, n])"};
    const mm_view *ops[5][2] = {{&va, &vb}, {&va, &vb1}, {&va4, &vb3}, {&va, &vbe}, {&vb3, &vb3t}};
    for (int o = 0; o < 5; o++) {
      snprintf(what, sizeof what, "%s %s, bt %lld m %lld k %lld n %lld", ic_dtype_name(dt), names[o], (long long)z[0],
               (long long)z[1], (long long)z[2], (long long)z[3]);
      mm_check_all(what, &r, ops[o][0], ops[o][1], &out[o], false);
    }
    mm_outputs_free(out, nout, r.n);
    mm_inputs_free(in, 5);
  }
  mm_release(&r);
  ic_graph_destroy(g);
}

/* Operands that are views and strided inputs, one graph, sizes {m, k, n}:
 *   t0 = permute(xt [k, m]) @ permute(yt [n, k])         both transposed
 *   t1 = xs[1::2, :] @ ys[:, 2::3]   (xs [2m + 1, k], ys [k, 3n + 2]): steps and offsets
 *   t2 = xp @ yq: xp [m, k] inner-contiguous, rows k + 3 apart, data 1 element past an
 *        aligned address; yq [k, n] strided, run column-major (strides 1, k)
 *   t3 = xk[:, 1::2] @ yk (xk [m, 255], yk [127, n]): K of 127 read with a step of 2 from
 *        an odd offset (every load misaligned). */
static inline void mm_case_views(ic_dtype dt, const int64_t (*sizes)[3], int32_t nsizes) {
  ic_graph *g;
  MM_OK(ic_graph_create(&g));
  const ic_dim m = ic_graph_symbol(g, "m"), k = ic_graph_symbol(g, "k"), n = ic_graph_symbol(g, "n"),
               ms = ic_graph_symbol(g, "ms"), ns = ic_graph_symbol(g, "ns");
  ic_value xt = ic_graph_input(g, "xt", dt, 2, (ic_dim[]){k, m}, IC_LAYOUT_CONTIGUOUS);
  ic_value yt = ic_graph_input(g, "yt", dt, 2, (ic_dim[]){n, k}, IC_LAYOUT_CONTIGUOUS);
  ic_value xs = ic_graph_input(g, "xs", dt, 2, (ic_dim[]){ms, k}, IC_LAYOUT_CONTIGUOUS);
  ic_value ys = ic_graph_input(g, "ys", dt, 2, (ic_dim[]){k, ns}, IC_LAYOUT_CONTIGUOUS);
  ic_value xp = ic_graph_input(g, "xp", dt, 2, (ic_dim[]){m, k}, IC_LAYOUT_INNER_CONTIGUOUS);
  ic_value yq = ic_graph_input(g, "yq", dt, 2, (ic_dim[]){k, n}, IC_LAYOUT_STRIDED);
  ic_value xk = ic_graph_input(g, "xk", dt, 2, (ic_dim[]){m, 255}, IC_LAYOUT_CONTIGUOUS);
  ic_value yk = ic_graph_input(g, "yk", dt, 2, (ic_dim[]){127, n}, IC_LAYOUT_CONTIGUOUS);
  const int32_t swap[2] = {1, 0};
  ic_graph_output(g, "t0", ic_graph_matmul(g, ic_graph_permute(g, xt, 2, swap), ic_graph_permute(g, yt, 2, swap)));
  ic_graph_output(g, "t1", ic_graph_matmul(g, ic_graph_slice(g, xs, 0, 1, INT64_MAX, 2),
                                           ic_graph_slice(g, ys, 1, 2, INT64_MAX, 3)));
  ic_graph_output(g, "t2", ic_graph_matmul(g, xp, yq));
  ic_graph_output(g, "t3", ic_graph_matmul(g, ic_graph_slice(g, xk, 1, 1, INT64_MAX, 2), yk));
  mm_progs r = mm_compile(g, 0);
  for (int32_t si = 0; si < nsizes; si++) {
    const int64_t M = sizes[si][0], K = sizes[si][1], N = sizes[si][2];
    mm_input in[8] = {
        mm_in("xt", dt, 2, (int64_t[]){K, M}),
        mm_in("yt", dt, 2, (int64_t[]){N, K}),
        mm_in("xs", dt, 2, (int64_t[]){2 * M + 1, K}),
        mm_in("ys", dt, 2, (int64_t[]){K, 3 * N + 2}),
        mm_in_strided("xp", dt, 2, (int64_t[]){M, K}, (int64_t[]){K + 3, 1}, 1),
        mm_in_strided("yq", dt, 2, (int64_t[]){K, N}, (int64_t[]){1, K}, 0),
        mm_in("xk", dt, 2, (int64_t[]){M, 255}),
        mm_in("yk", dt, 2, (int64_t[]){127, N}),
    };
    for (int i = 0; i < 8; i++) mm_fill(&in[i], UINT64_C(0xa0761d6478bd642f) * (uint64_t)(si * 8 + i + 1) + dt);
    mm_output out[MM_MAX_OUT];
    const int32_t nout = mm_run(&mm_e, r.p, r.ref, r.n, in, 8, out);
    ck_assert_int_eq(nout, 4);
    const int32_t sw[2] = {1, 0};
    const mm_view a0 = mm_permute(mm_view_of(&in[0]), sw), b0 = mm_permute(mm_view_of(&in[1]), sw);
    const mm_view a1 = mm_slice(mm_view_of(&in[2]), 0, 1, INT64_MAX, 2), b1 = mm_slice(mm_view_of(&in[3]), 1, 2, INT64_MAX, 3);
    const mm_view a2 = mm_view_of(&in[4]), b2 = mm_view_of(&in[5]);
    const mm_view a3 = mm_slice(mm_view_of(&in[6]), 1, 1, INT64_MAX, 2), b3 = mm_view_of(&in[7]);
    const mm_view *ops[4][2] = {{&a0, &b0}, {&a1, &b1}, {&a2, &b2}, {&a3, &b3}};
    const char *names[4] = {"transposed operands", "sliced operands (steps, offsets)",
                            "strided inputs (padded misaligned rows, column-major)", "K sliced with a step of 2"};
    for (int o = 0; o < 4; o++) {
      char what[160];
      snprintf(what, sizeof what, "%s %s, m %lld k %lld n %lld", ic_dtype_name(dt), names[o], (long long)M,
               (long long)K, (long long)N);
      mm_check_all(what, &r, ops[o][0], ops[o][1], &out[o], false);
    }
    mm_outputs_free(out, nout, r.n);
    mm_inputs_free(in, 8);
  }
  mm_release(&r);
  ic_graph_destroy(g);
}

/* The fused program's kernel count (on cuda: its launches; the ref backend has kernels
 * too, one a fused group). */
static inline void mm_expect_kernels(const mm_progs *r, int32_t fused, const char *what) {
  ck_assert_msg(ic_program_kernel_count(r->p[0]) == fused, "%s: %d fused kernels, expected %d", what,
                (int)ic_program_kernel_count(r->p[0]), (int)fused);
}

static inline double mm_gelu_tanh(double x) {
  return 0.5 * x * (1.0 + tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
}

/* A linear layer with epilogues in the matmul's kernel, sizes {m, k, n}:
 *   c = x [m, k] @ w [k, n];  h = c + bias [n]
 *   y = gelu_tanh(h)                  (bias + activation)
 *   z = cast(h + r [m, n], zt)        (a residual add and a cast: a second output)
 * f32 (zt bf16): z bit for bit from the documented f32 c, y within 2^-18 (|h| + 1) of
 * gelu_tanh(h) in f64 (device math and libm differ by a few ulp); bf16 (zt f32): both
 * against f64 references of c within the matmul bound plus a rounding an op. One fused
 * kernel; eager == fused bit for bit. */
static inline void mm_case_epilogue(ic_dtype dt, const int64_t (*sizes)[3], int32_t nsizes) {
  const ic_dtype zt = dt == IC_F32 ? IC_BF16 : IC_F32;
  ic_graph *g;
  MM_OK(ic_graph_create(&g));
  const ic_dim m = ic_graph_symbol(g, "m"), n = ic_graph_symbol(g, "n");
  const ic_dim k = ic_graph_symbol(g, "k");
  ic_value x = ic_graph_input(g, "x", dt, 2, (ic_dim[]){m, k}, IC_LAYOUT_CONTIGUOUS);
  ic_value w = ic_graph_input(g, "w", dt, 2, (ic_dim[]){k, n}, IC_LAYOUT_CONTIGUOUS);
  ic_value bias = ic_graph_input(g, "bias", dt, 1, (ic_dim[]){n}, IC_LAYOUT_CONTIGUOUS);
  ic_value res = ic_graph_input(g, "r", dt, 2, (ic_dim[]){m, n}, IC_LAYOUT_CONTIGUOUS);
  ic_value h = ic_graph_binary(g, IC_OP_ADD, ic_graph_matmul(g, x, w), bias);
  ic_graph_output(g, "y", ic_graph_unary(g, IC_OP_GELU_TANH, h));
  ic_graph_output(g, "z", ic_graph_cast(g, ic_graph_binary(g, IC_OP_ADD, h, res), zt));
  mm_progs r = mm_compile(g, 0);
  mm_expect_kernels(&r, 1, "linear + bias + gelu, residual + cast");
  const double u = mm_unit(dt);
  for (int32_t si = 0; si < nsizes; si++) {
    const int64_t M = sizes[si][0], K = sizes[si][1], N = sizes[si][2];
    mm_input in[4] = {mm_in("x", dt, 2, (int64_t[]){M, K}), mm_in("w", dt, 2, (int64_t[]){K, N}),
                      mm_in("bias", dt, 1, (int64_t[]){N}), mm_in("r", dt, 2, (int64_t[]){M, N})};
    for (int i = 0; i < 4; i++) mm_fill(&in[i], UINT64_C(0xe7037ed1a0b428db) * (uint64_t)(si * 4 + i + 1) + dt);
    mm_output out[MM_MAX_OUT];
    const int32_t nout = mm_run(&mm_e, r.p, r.ref, r.n, in, 4, out);
    ck_assert_int_eq(nout, 2);
    const mm_view vx = mm_view_of(&in[0]), vw = mm_view_of(&in[1]);
    const mm_plan p = mm_plan_of(&vx, &vw);
    const size_t cnt = (size_t)(p.count ? p.count : 1);
    float *c32 = malloc(cnt * 4);
    double *cv = malloc(cnt * 8), *cs = malloc(cnt * 8);
    ck_assert(c32 && cv && cs);
    mm_reference(&vx, &vw, &p, dt == IC_F32 ? c32 : NULL, cv, cs);
    char what[160];
    snprintf(what, sizeof what, "%s linear epilogues, m %lld k %lld n %lld", ic_dtype_name(dt), (long long)M,
             (long long)K, (long long)N);
    for (int32_t o = 0; o < 2; o++) mm_check_extra(what, &r, &out[o], false);
    for (int32_t pi = 0; pi < r.n; pi++)
      for (int64_t i = 0; i < p.count; i++) {
        const int64_t col = i % N;
        const double bv = mm_load(dt, in[2].host, col), rv = mm_load(dt, in[3].host, i);
        const double y = mm_load(dt, out[0].got[pi], i), z = mm_load(zt, out[1].got[pi], i);
        if (dt == IC_F32) {
          const float hf = c32[i] + (float)bv, zf = hf + (float)rv;
          unsigned char want[4];
          MM_OK(ic_element_store(zt, zf, want));
          ck_assert_msg(memcmp(want, (char *)out[1].got[pi] + 2 * i, 2) == 0, "%s (%s): z[%lld] %.9g, expected %.9g",
                        what, mm_prog_names[pi], (long long)i, z, mm_load(zt, want, 0));
          ck_assert_msg(fabs(y - mm_gelu_tanh(hf)) <= 0x1p-18 * (fabs(hf) + 1.0), "%s (%s): y[%lld] %.9g, gelu %.9g",
                        what, mm_prog_names[pi], (long long)i, y, mm_gelu_tanh(hf));
        } else {
          const double he = cv[i] + bv, bound = mm_bound(dt, K, cv[i], cs[i]);
          const double tol_h = bound + u * (fabs(cv[i]) + fabs(he));
          const double tol_y = 1.2 * tol_h + u * fabs(mm_gelu_tanh(he)) + 0x1p-18;
          const double tol_z = tol_h + u * fabs(he + rv) + 0x1p-24;
          ck_assert_msg(fabs(y - mm_gelu_tanh(he)) <= tol_y, "%s (%s): y[%lld] %.9g, f64 %.9g, bound %.3g", what,
                        mm_prog_names[pi], (long long)i, y, mm_gelu_tanh(he), tol_y);
          ck_assert_msg(fabs(z - (he + rv)) <= tol_z, "%s (%s): z[%lld] %.9g, f64 %.9g, bound %.3g", what,
                        mm_prog_names[pi], (long long)i, z, he + rv, tol_z);
        }
      }
    free(c32);
    free(cv);
    free(cs);
    mm_outputs_free(out, nout, r.n);
    mm_inputs_free(in, 4);
  }
  mm_release(&r);
  ic_graph_destroy(g);
}

/* A dequantizing prologue: y = x [m, k] @ (cast(wq [k, n] i8, dt) * s [n]), the i8 weight
 * cast and scaled a column in the matmul's kernel; against the references of x @ w' with
 * w' = round_dt(wq * s) formed on the host. One fused kernel; eager == fused. */
static inline void mm_case_dequant(ic_dtype dt, const int64_t (*sizes)[3], int32_t nsizes) {
  ic_graph *g;
  MM_OK(ic_graph_create(&g));
  const ic_dim m = ic_graph_symbol(g, "m"), k = ic_graph_symbol(g, "k"), n = ic_graph_symbol(g, "n");
  ic_value x = ic_graph_input(g, "x", dt, 2, (ic_dim[]){m, k}, IC_LAYOUT_CONTIGUOUS);
  ic_value wq = ic_graph_input(g, "wq", IC_I8, 2, (ic_dim[]){k, n}, IC_LAYOUT_CONTIGUOUS);
  ic_value s = ic_graph_input(g, "s", dt, 1, (ic_dim[]){n}, IC_LAYOUT_CONTIGUOUS);
  ic_value w = ic_graph_binary(g, IC_OP_MUL, ic_graph_cast(g, wq, dt), s);
  ic_graph_output(g, "y", ic_graph_matmul(g, x, w));
  mm_progs r = mm_compile(g, 0);
  mm_expect_kernels(&r, 1, "i8 weight cast and scaled a column, then matmul");
  for (int32_t si = 0; si < nsizes; si++) {
    const int64_t M = sizes[si][0], K = sizes[si][1], N = sizes[si][2];
    mm_input in[3] = {mm_in("x", dt, 2, (int64_t[]){M, K}), mm_in("wq", IC_I8, 2, (int64_t[]){K, N}),
                      mm_in("s", dt, 1, (int64_t[]){N})};
    for (int i = 0; i < 3; i++) mm_fill(&in[i], UINT64_C(0x8ebc6af09c88c6e3) * (uint64_t)(si * 3 + i + 1) + dt);
    for (int64_t j = 0; j < N; j++) /* scales about 1/64, as a quantized weight's are */
      MM_OK(ic_element_store(dt, mm_load(dt, in[2].host, j) / 64.0, (char *)in[2].host + (size_t)j * ic_dtype_size(dt)));
    mm_input wd = mm_in("w'", dt, 2, (int64_t[]){K, N});
    wd.host = malloc((size_t)(K > 0 && N > 0 ? K * N : 1) * ic_dtype_size(dt));
    ck_assert_ptr_nonnull(wd.host);
    for (int64_t i = 0; i < K * N; i++) /* the product is exact in f64: one rounding, as the f32 op's */
      MM_OK(ic_element_store(dt, mm_load(IC_I8, in[1].host, i) * mm_load(dt, in[2].host, i % N),
                             (char *)wd.host + (size_t)i * ic_dtype_size(dt)));
    mm_output out[MM_MAX_OUT];
    const int32_t nout = mm_run(&mm_e, r.p, r.ref, r.n, in, 3, out);
    const mm_view vx = mm_view_of(&in[0]), vw = mm_view_of(&wd);
    char what[160];
    snprintf(what, sizeof what, "%s x @ (cast(i8 w) * s), m %lld k %lld n %lld", ic_dtype_name(dt), (long long)M,
             (long long)K, (long long)N);
    mm_check_all(what, &r, &vx, &vw, &out[0], false);
    free(wd.host);
    mm_outputs_free(out, nout, r.n);
    mm_inputs_free(in, 3);
  }
  mm_release(&r);
  ic_graph_destroy(g);
}

#endif
