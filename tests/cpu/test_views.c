/* CPU: slice, concat and pad, alone and with reshape, permute and expand (views of
 * views, negative steps, odd and zero sizes, broadcast, symbolic sizes), run on the ref
 * backend fused and eager and compared index by index against plain C references
 * computed here; the same graphs compiled for the cuda backend (compile-only: NVRTC
 * compiles every generated kernel); every error of the three builder calls; the program
 * cache telling their parameters apart. Empty inputs are passed with NULL data, so a read
 * of one crashes the test. */
#include <check.h>
#include <ic/ic.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"

#define OK(call) ck_assert_msg((call) == IC_OK, "%s: %s", #call, ic_last_error())

static ic_context *ref_ctx, *cuda_ctx;

static void setup(void) {
  ic_context_options o = {.struct_size = sizeof o, .arch = "sm_90a", .flags = IC_CONTEXT_COMPILE_ONLY};
  OK(ic_context_create(&o, &ref_ctx));
  OK(ic_context_create(&o, &cuda_ctx));
}

static void teardown(void) {
  ic_context_destroy(ref_ctx);
  ic_context_destroy(cuda_ctx);
  ref_ctx = cuda_ctx = NULL;
}

/* ---------------------------------------------------------------- host tensors */

/* A contiguous f32 host tensor. */
typedef struct ht {
  int32_t ndim;
  int64_t shape[IC_MAX_DIMS];
  float *data;
} ht;

static int64_t ht_numel(const ht *t) {
  int64_t n = 1;
  for (int32_t d = 0; d < t->ndim; d++) n *= t->shape[d];
  return n;
}

static ht ht_new(int32_t ndim, const int64_t *shape) {
  ht t = {.ndim = ndim};
  memcpy(t.shape, shape, sizeof(int64_t) * (size_t)ndim);
  t.data = malloc(sizeof(float) * (size_t)(ht_numel(&t) ? ht_numel(&t) : 1));
  ck_assert_ptr_nonnull(t.data);
  return t;
}

/* Distinct values base, base + 1, ... (exact in f32). */
static ht ht_iota(int32_t ndim, const int64_t *shape, float base) {
  ht t = ht_new(ndim, shape);
  for (int64_t i = 0; i < ht_numel(&t); i++) t.data[i] = base + (float)i;
  return t;
}

static void ht_unravel(const ht *t, int64_t flat, int64_t *idx) {
  for (int32_t d = t->ndim - 1; d >= 0; d--) {
    idx[d] = t->shape[d] ? flat % t->shape[d] : 0;
    flat = t->shape[d] ? flat / t->shape[d] : 0;
  }
}

static int64_t ht_flat(const ht *t, const int64_t *idx) {
  int64_t f = 0;
  for (int32_t d = 0; d < t->ndim; d++) f = f * t->shape[d] + idx[d];
  return f;
}

/* CPython's PySlice_AdjustIndices: the clamped start and the length. */
static int64_t py_slice(int64_t n, int64_t start, int64_t stop, int64_t step, int64_t *first) {
  if (start < 0) {
    start += n;
    if (start < 0) start = step < 0 ? -1 : 0;
  } else if (start >= n) {
    start = step < 0 ? n - 1 : n;
  }
  if (stop < 0) {
    stop += n;
    if (stop < 0) stop = step < 0 ? -1 : 0;
  } else if (stop >= n) {
    stop = step < 0 ? n - 1 : n;
  }
  *first = start;
  if (step < 0) return stop < start ? (start - stop - 1) / -step + 1 : 0;
  return start < stop ? (stop - start - 1) / step + 1 : 0;
}

static ht ht_slice(const ht *x, int32_t dim, int64_t start, int64_t stop, int64_t step) {
  int64_t shape[IC_MAX_DIMS], first = 0, idx[IC_MAX_DIMS] = {0};
  memcpy(shape, x->shape, sizeof shape);
  shape[dim] = py_slice(x->shape[dim], start, stop, step, &first);
  ht r = ht_new(x->ndim, shape);
  for (int64_t i = 0; i < ht_numel(&r); i++) {
    ht_unravel(&r, i, idx);
    idx[dim] = first + idx[dim] * step;
    r.data[i] = x->data[ht_flat(x, idx)];
  }
  return r;
}

static ht ht_concat(int32_t n, const ht *parts, int32_t dim) {
  int64_t shape[IC_MAX_DIMS], idx[IC_MAX_DIMS] = {0};
  memcpy(shape, parts[0].shape, sizeof shape);
  shape[dim] = 0;
  for (int32_t k = 0; k < n; k++) shape[dim] += parts[k].shape[dim];
  ht r = ht_new(parts[0].ndim, shape);
  for (int64_t i = 0; i < ht_numel(&r); i++) {
    ht_unravel(&r, i, idx);
    int32_t k = 0;
    while (idx[dim] >= parts[k].shape[dim]) idx[dim] -= parts[k++].shape[dim];
    r.data[i] = parts[k].data[ht_flat(&parts[k], idx)];
  }
  return r;
}

/* F.pad's order: pairs for the last dim first. */
static ht ht_pad(const ht *x, int32_t npads, const int64_t *lo_hi, float value) {
  int64_t shape[IC_MAX_DIMS], lo[IC_MAX_DIMS] = {0}, idx[IC_MAX_DIMS] = {0};
  memcpy(shape, x->shape, sizeof shape);
  for (int32_t i = 0; i < npads; i++) {
    int32_t d = x->ndim - 1 - i;
    lo[d] = lo_hi[2 * i];
    shape[d] += lo_hi[2 * i] + lo_hi[2 * i + 1];
  }
  ht r = ht_new(x->ndim, shape);
  for (int64_t i = 0; i < ht_numel(&r); i++) {
    ht_unravel(&r, i, idx);
    bool inside = true;
    for (int32_t d = 0; d < x->ndim; d++) {
      idx[d] -= lo[d];
      inside = inside && idx[d] >= 0 && idx[d] < x->shape[d];
    }
    r.data[i] = inside ? x->data[ht_flat(x, idx)] : value;
  }
  return r;
}

static ht ht_permute(const ht *x, const int32_t *perm) {
  int64_t shape[IC_MAX_DIMS], idx[IC_MAX_DIMS] = {0}, src[IC_MAX_DIMS] = {0};
  for (int32_t d = 0; d < x->ndim; d++) shape[d] = x->shape[perm[d]];
  ht r = ht_new(x->ndim, shape);
  for (int64_t i = 0; i < ht_numel(&r); i++) {
    ht_unravel(&r, i, idx);
    for (int32_t d = 0; d < x->ndim; d++) src[perm[d]] = idx[d];
    r.data[i] = x->data[ht_flat(x, src)];
  }
  return r;
}

static ht ht_reshape(const ht *x, int32_t ndim, const int64_t *shape) {
  ht r = ht_new(ndim, shape);
  ck_assert_int_eq(ht_numel(&r), ht_numel(x));
  if (ht_numel(x)) memcpy(r.data, x->data, sizeof(float) * (size_t)ht_numel(x));
  return r;
}

/* Broadcast to shape (same rank; size-1 dims repeat). */
static ht ht_expand(const ht *x, const int64_t *shape) {
  int64_t idx[IC_MAX_DIMS] = {0};
  ht r = ht_new(x->ndim, shape);
  for (int64_t i = 0; i < ht_numel(&r); i++) {
    ht_unravel(&r, i, idx);
    for (int32_t d = 0; d < x->ndim; d++)
      if (x->shape[d] == 1) idx[d] = 0;
    r.data[i] = x->data[ht_flat(x, idx)];
  }
  return r;
}

static ht ht_scale(ht x, float s) { /* in place, returns x */
  for (int64_t i = 0; i < ht_numel(&x); i++) x.data[i] *= s;
  return x;
}

/* ---------------------------------------------------------------- running */

static ic_value times_two(ic_graph *g, ic_value v) {
  return ic_graph_binary(g, IC_OP_MUL, v, ic_graph_constant(g, 2, IC_DTYPE_AUTO));
}

static ic_tensor tensor_of(const ht *t) {
  ic_tensor x = {ht_numel(t) ? t->data : NULL, IC_F32, t->ndim, t->shape, NULL};
  return x;
}

/* Output 0 of g, run on the ref backend fused and eager with inputs in, must equal want
 * element for element (NaN matching NaN); the same graph must compile for the cuda
 * backend in both modes. Returns the fused program's kernel count. */
static int32_t check_graph(const ic_graph *g, int32_t nin, const ht *in, const ht *want, const char *what) {
  ic_tensor inputs[8];
  ck_assert_int_le(nin, 8);
  for (int32_t i = 0; i < nin; i++) inputs[i] = tensor_of(&in[i]);
  int32_t kernels = -1;
  for (int mode = 0; mode < 2; mode++) {
    ic_compile_options o = {.struct_size = sizeof o, .mode = mode ? IC_MODE_EAGER : IC_MODE_FUSED, .backend = "ref"};
    ic_program *p = NULL;
    ck_assert_msg(ic_compile(ref_ctx, g, &o, &p) == IC_OK, "%s: compile: %s", what, ic_last_error());
    if (!mode) kernels = ic_program_kernel_count(p);
    int32_t ndim = -1;
    int64_t shape[IC_MAX_DIMS];
    OK(ic_program_output_shape(p, 0, inputs, &ndim, shape));
    ck_assert_int_eq(ndim, want->ndim);
    for (int32_t d = 0; d < ndim; d++)
      ck_assert_msg(shape[d] == want->shape[d], "%s: dim %d is %lld, want %lld", what, d, (long long)shape[d],
                    (long long)want->shape[d]);
    ic_tensor out = {NULL, IC_F32, want->ndim, NULL, NULL};
    ck_assert_msg(ic_program_run(p, inputs, nin, &out, 1, NULL) == IC_OK, "%s: run: %s", what, ic_last_error());
    const float *got = out.data;
    for (int64_t i = 0; i < ht_numel(want); i++) {
      float w = want->data[i], v = got[i];
      ck_assert_msg(v == w || (isnan(v) && isnan(w)), "%s (%s): element %lld is %g, want %g", what,
                    mode ? "eager" : "fused", (long long)i, (double)v, (double)w);
    }
    free(out.data);
    ic_program_release(p);
    o.backend = NULL;
    ck_assert_msg(ic_compile(cuda_ctx, g, &o, &p) == IC_OK, "%s: cuda compile: %s", what, ic_last_error());
    ic_program_release(p);
  }
  return kernels;
}

static void ht_free(ht *t) {
  free(t->data);
  t->data = NULL;
}

static ic_graph *new_graph(void) {
  ic_graph *g = NULL;
  OK(ic_graph_create(&g));
  return g;
}

static ic_value input_of(ic_graph *g, const char *name, const ht *t) {
  ic_dim dims[IC_MAX_DIMS];
  for (int32_t d = 0; d < t->ndim; d++) dims[d] = t->shape[d];
  return ic_graph_input(g, name, IC_F32, t->ndim, dims, IC_LAYOUT_CONTIGUOUS);
}

/* ---------------------------------------------------------------- slice */

typedef struct slice_args {
  int32_t dim;
  int64_t start, stop, step;
} slice_args;

static const slice_args slice_cases[] = {
    {1, 2, 8, 1},   {1, 1, 10, 3},  {1, -3, INT64_MAX, 1}, {1, INT64_MAX, INT64_MIN, -1}, {1, 8, 2, -2},
    {1, -1, -11, -3}, {1, 5, 5, 1}, {1, 20, 30, 1},        {1, -100, 100, 4},             {1, 3, 0, 1},
    {1, 0, 10, INT64_MAX}, {1, 9, -100, INT64_MAX - 1}, {-1, 7, 3, -1}, {0, 1, 6, 2},     {0, INT64_MAX, INT64_MIN, -2},
    {-2, -2, -8, -1}, {0, INT64_MIN, INT64_MAX, 1},
};

START_TEST(test_slice) {
  int64_t shape[2] = {7, 10};
  ht x = ht_iota(2, shape, 1);
  for (size_t i = 0; i < sizeof slice_cases / sizeof *slice_cases; i++) {
    const slice_args *s = &slice_cases[i];
    ic_graph *g = new_graph();
    ic_value xv = input_of(g, "x", &x);
    ic_value v = ic_graph_slice(g, xv, s->dim, s->start, s->stop, s->step);
    ck_assert_msg(v != IC_INVALID_VALUE, "slice %zu: %s", i, ic_last_error());
    OK(ic_graph_output(g, "y", times_two(g, v)));
    ht want = ht_scale(ht_slice(&x, s->dim < 0 ? s->dim + 2 : s->dim, s->start, s->stop, s->step), 2);
    char what[96];
    snprintf(what, sizeof what, "slice(x, %d, %lld, %lld, %lld)", (int)s->dim, (long long)s->start,
             (long long)s->stop, (long long)s->step);
    ck_assert_int_eq(check_graph(g, 1, &x, &want, what), 1); /* the slice fuses into the mul */
    ht_free(&want);
    ic_graph_destroy(g);
  }
  /* a slice that keeps every point in order is its operand */
  ic_graph *g = new_graph();
  ic_value xv = input_of(g, "x", &x);
  ck_assert_int_eq(ic_graph_slice(g, xv, 1, 0, 10, 1), xv);
  ck_assert_int_eq(ic_graph_slice(g, xv, 0, INT64_MIN, INT64_MAX, 1), xv);
  ck_assert_int_eq(ic_graph_slice(g, xv, 0, -7, 100, 1), xv);
  ck_assert_int_ne(ic_graph_slice(g, xv, 0, 0, 7, 2), xv);
  ic_graph_destroy(g);
  ht_free(&x);
}
END_TEST

/* Slices of permutes, reshapes, expands and slices; expands of slices. */
START_TEST(test_slice_of_views) {
  int64_t shape[3] = {4, 5, 6};
  ht x = ht_iota(3, shape, 0);
  char what[64];
  for (int variant = 0; variant < 5; variant++) {
    ic_graph *g = new_graph();
    ic_value xv = input_of(g, "x", &x), v = IC_INVALID_VALUE;
    ht want = {0}, t1 = {0}, t2 = {0};
    switch (variant) {
    case 0: { /* slice(permute(x), 0, ...) with a negative step */
      int32_t perm[3] = {2, 0, 1};
      v = ic_graph_slice(g, ic_graph_permute(g, xv, 3, perm), 0, 5, 0, -2);
      t1 = ht_permute(&x, perm);
      want = ht_slice(&t1, 0, 5, 0, -2);
      break;
    }
    case 1: { /* slice of slice, both backwards */
      v = ic_graph_slice(g, ic_graph_slice(g, xv, 2, INT64_MAX, INT64_MIN, -1), 2, 4, INT64_MIN, -3);
      t1 = ht_slice(&x, 2, INT64_MAX, INT64_MIN, -1);
      want = ht_slice(&t1, 2, 4, INT64_MIN, -3);
      break;
    }
    case 2: { /* slice of a reshape that merges dims: a non-affine source index */
      int64_t rs[2] = {4, 30};
      v = ic_graph_slice(g, ic_graph_reshape(g, xv, 2, (ic_dim[]){4, 30}), 1, 29, 1, -4);
      t1 = ht_reshape(&x, 2, rs);
      want = ht_slice(&t1, 1, 29, 1, -4);
      break;
    }
    case 3: { /* expand of a size-1 slice: broadcast */
      int64_t es[3] = {4, 5, 6};
      v = ic_graph_expand(g, ic_graph_slice(g, xv, 1, 3, 4, 1), 3, (ic_dim[]){4, 5, 6});
      t1 = ht_slice(&x, 1, 3, 4, 1);
      want = ht_expand(&t1, es);
      break;
    }
    case 4: { /* reshape (flatten) of a slice of a permute */
      int32_t perm[3] = {1, 2, 0};
      v = ic_graph_flatten(g, ic_graph_slice(g, ic_graph_permute(g, xv, 3, perm), 1, 1, 6, 2), 0, 1);
      t1 = ht_permute(&x, perm);
      t2 = ht_slice(&t1, 1, 1, 6, 2);
      want = ht_reshape(&t2, 2, (int64_t[]){t2.shape[0] * t2.shape[1], t2.shape[2]});
      break;
    }
    }
    ck_assert_msg(v != IC_INVALID_VALUE, "variant %d: %s", variant, ic_last_error());
    OK(ic_graph_output(g, "y", v));
    snprintf(what, sizeof what, "slice of views, variant %d", variant);
    check_graph(g, 1, &x, &want, what);
    ht_free(&want);
    ht_free(&t1);
    ht_free(&t2);
    ic_graph_destroy(g);
  }
  ht_free(&x);
}
END_TEST

/* Slices of a symbolic dim: one program for every size, sizes as min/max expressions. */
START_TEST(test_slice_symbolic) {
  static const slice_args cases[] = {
      {0, 1, INT64_MAX, 1}, {0, INT64_MAX, INT64_MIN, -1}, {0, -3, INT64_MAX, 2}, {0, 2, 5, 1},
      {0, -2, -1, 1},       {0, 6, 1, -2},                 {0, -1, -5, -1},       {0, 3, 3, 1},
  };
  static const int64_t sizes[] = {0, 1, 2, 5, 11};
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    const slice_args *s = &cases[i];
    ic_graph *g = new_graph();
    ic_dim n = ic_graph_symbol(g, "n");
    ic_value xv = ic_graph_input(g, "x", IC_F32, 2, (ic_dim[]){n, 3}, IC_LAYOUT_CONTIGUOUS);
    ic_value v = ic_graph_slice(g, xv, s->dim, s->start, s->stop, s->step);
    ck_assert_msg(v != IC_INVALID_VALUE, "case %zu: %s", i, ic_last_error());
    /* the same slice twice broadcasts against itself: its size is one expression */
    ic_value v2 = ic_graph_slice(g, xv, s->dim, s->start, s->stop, s->step);
    OK(ic_graph_output(g, "y", ic_graph_binary(g, IC_OP_ADD, v, v2)));
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
      ht x = ht_iota(2, (int64_t[]){sizes[k], 3}, 1);
      ht want = ht_scale(ht_slice(&x, s->dim, s->start, s->stop, s->step), 2);
      char what[96];
      snprintf(what, sizeof what, "n = %lld: slice(x, %d, %lld, %lld, %lld)", (long long)sizes[k], (int)s->dim,
               (long long)s->start, (long long)s->stop, (long long)s->step);
      check_graph(g, 1, &x, &want, what);
      ht_free(&want);
      ht_free(&x);
    }
    ic_graph_destroy(g);
  }
}
END_TEST

/* ---------------------------------------------------------------- pad */

typedef struct pad_args {
  int32_t npads;
  int64_t lo_hi[6];
  double value;
} pad_args;

START_TEST(test_pad) {
  static const pad_args cases[] = {
      {1, {1, 2}, 0},          {2, {0, 0, 3, 1}, -1.5},  {2, {2, 2, 2, 2}, 7},  {1, {-1, 2}, 0.25},
      {2, {-2, -3, 1, 0}, 3},  {2, {0, 5, -4, -1}, 9},   {1, {-7, 0}, 1},       {2, {1, -1, 0, 0}, NAN},
      {1, {0, 1}, INFINITY},   {2, {-3, -4, 0, 0}, 4},
  };
  int64_t shape[2] = {5, 7};
  ht x = ht_iota(2, shape, 1);
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    const pad_args *c = &cases[i];
    ic_graph *g = new_graph();
    ic_value v = ic_graph_pad(g, input_of(g, "x", &x), c->npads, c->lo_hi, c->value);
    ck_assert_msg(v != IC_INVALID_VALUE, "pad %zu: %s", i, ic_last_error());
    OK(ic_graph_output(g, "y", times_two(g, v)));
    ht want = ht_scale(ht_pad(&x, c->npads, c->lo_hi, (float)c->value), 2);
    char what[64];
    snprintf(what, sizeof what, "pad case %zu", i);
    ck_assert_int_eq(check_graph(g, 1, &x, &want, what), 1);
    ht_free(&want);
    ic_graph_destroy(g);
  }
  /* no padding at all is the operand itself */
  ic_graph *g = new_graph();
  ic_value xv = input_of(g, "x", &x);
  ck_assert_int_eq(ic_graph_pad(g, xv, 2, (int64_t[]){0, 0, 0, 0}, 1), xv);
  ck_assert_int_eq(ic_graph_pad(g, xv, 0, NULL, 1), xv);
  ic_graph_destroy(g);
  ht_free(&x);
}
END_TEST

/* Padding an empty tensor (never read), a symbolic dim, a computed value, a broadcast. */
START_TEST(test_pad_more) {
  int64_t empty_shape[2] = {0, 3};
  ht e = ht_iota(2, empty_shape, 0);
  ic_graph *g = new_graph();
  int64_t lohi[4] = {1, 1, 2, 0};
  OK(ic_graph_output(g, "y", ic_graph_pad(g, input_of(g, "x", &e), 2, lohi, 5)));
  ht want = ht_pad(&e, 2, lohi, 5);
  ck_assert_int_eq(want.shape[0], 2);
  check_graph(g, 1, &e, &want, "pad of an empty tensor");
  ht_free(&want);
  ic_graph_destroy(g);
  ht_free(&e);

  /* symbolic: [n, 3] padded in both dims */
  g = new_graph();
  ic_dim n = ic_graph_symbol(g, "n");
  ic_value xv = ic_graph_input(g, "x", IC_F32, 2, (ic_dim[]){n, 3}, IC_LAYOUT_CONTIGUOUS);
  int64_t sym_lohi[4] = {1, 0, 2, 3};
  OK(ic_graph_output(g, "y", times_two(g, ic_graph_pad(g, xv, 2, sym_lohi, -2))));
  for (int64_t size = 0; size < 5; size++) {
    ht x = ht_iota(2, (int64_t[]){size, 3}, 1);
    want = ht_scale(ht_pad(&x, 2, sym_lohi, -2), 2);
    check_graph(g, 1, &x, &want, "symbolic pad");
    ht_free(&want);
    ht_free(&x);
  }
  ic_graph_destroy(g);

  /* a computed value is recomputed in the pad's kernel, its loads under the guard */
  int64_t shape[2] = {3, 4};
  ht x = ht_iota(2, shape, 1);
  g = new_graph();
  xv = input_of(g, "x", &x);
  ic_value t = ic_graph_unary(g, IC_OP_NEG, ic_graph_unary(g, IC_OP_NEG, xv));
  int64_t c_lohi[4] = {2, 1, 1, 1};
  OK(ic_graph_output(g, "y", ic_graph_pad(g, t, 2, c_lohi, 0.5)));
  want = ht_pad(&x, 2, c_lohi, 0.5f);
  ck_assert_int_eq(check_graph(g, 1, &x, &want, "pad of a computed value"), 1);
  ht_free(&want);
  ic_graph_destroy(g);

  /* pad of a broadcast row, and a broadcast (expand) of a padded column */
  g = new_graph();
  ic_value row = ic_graph_input(g, "r", IC_F32, 2, (ic_dim[]){1, 4}, IC_LAYOUT_CONTIGUOUS);
  ht r = ht_iota(2, (int64_t[]){1, 4}, 10);
  ic_value padded = ic_graph_pad(g, ic_graph_expand(g, row, 2, (ic_dim[]){3, 4}), 2, (int64_t[]){1, 0, 0, 2}, -1);
  ic_value col = ic_graph_pad(g, ic_graph_slice(g, row, 1, 0, 1, 1), 2, (int64_t[]){0, 0, 2, 2}, 8); /* [5, 1] */
  OK(ic_graph_output(g, "y", ic_graph_binary(g, IC_OP_ADD, padded, col)));
  ht rb = ht_expand(&r, (int64_t[]){3, 4}), p1 = ht_pad(&rb, 2, (int64_t[]){1, 0, 0, 2}, -1);
  ht c0 = ht_slice(&r, 1, 0, 1, 1), c1 = ht_pad(&c0, 2, (int64_t[]){0, 0, 2, 2}, 8);
  ht cb = ht_expand(&c1, p1.shape);
  for (int64_t i = 0; i < ht_numel(&p1); i++) p1.data[i] += cb.data[i];
  check_graph(g, 1, &r, &p1, "pad with broadcasts");
  ht_free(&rb);
  ht_free(&p1);
  ht_free(&c0);
  ht_free(&c1);
  ht_free(&cb);
  ht_free(&r);
  ic_graph_destroy(g);
  ht_free(&x);
}
END_TEST

/* The pad value is rounded to the dtype as ic_graph_constant rounds it. */
START_TEST(test_pad_dtypes) {
  ic_graph *g = new_graph();
  ic_value xi = ic_graph_input(g, "x", IC_I32, 1, (ic_dim[]){3}, IC_LAYOUT_CONTIGUOUS);
  ic_value xb = ic_graph_input(g, "b", IC_BOOL, 1, (ic_dim[]){2}, IC_LAYOUT_CONTIGUOUS);
  OK(ic_graph_output(g, "yi", ic_graph_pad(g, xi, 1, (int64_t[]){1, 2}, 2.7)));
  OK(ic_graph_output(g, "yb", ic_graph_pad(g, xb, 1, (int64_t[]){2, 0}, 0.5)));
  ic_program *p = NULL;
  ic_compile_options o = {.struct_size = sizeof o, .backend = "ref"};
  OK(ic_compile(ref_ctx, g, &o, &p));
  int32_t hx[3] = {-4, 5, 6};
  bool hb[2] = {false, true};
  int64_t s3[1] = {3}, s2[1] = {2};
  ic_tensor in[2] = {{hx, IC_I32, 1, s3, NULL}, {hb, IC_BOOL, 1, s2, NULL}};
  int32_t yi[6];
  bool yb[4];
  int64_t s6[1] = {6}, s4[1] = {4};
  ic_tensor out[2] = {{yi, IC_I32, 1, s6, NULL}, {yb, IC_BOOL, 1, s4, NULL}};
  OK(ic_program_run(p, in, 2, out, 2, NULL));
  const int32_t want_i[6] = {2, -4, 5, 6, 2, 2};
  const bool want_b[4] = {true, true, false, true};
  for (int i = 0; i < 6; i++) ck_assert_int_eq(yi[i], want_i[i]);
  for (int i = 0; i < 4; i++) ck_assert_int_eq(yb[i], want_b[i]);
  ic_program_release(p);
  o.backend = NULL;
  OK(ic_compile(cuda_ctx, g, &o, &p));
  ic_program_release(p);
  ic_graph_destroy(g);
}
END_TEST

/* ---------------------------------------------------------------- concat */

START_TEST(test_concat) {
  ht a = ht_iota(2, (int64_t[]){2, 5}, 100), b = ht_iota(2, (int64_t[]){3, 5}, 200), e = ht_iota(2, (int64_t[]){0, 5}, 0);
  ht c = ht_iota(2, (int64_t[]){2, 1}, 300), d = ht_iota(2, (int64_t[]){2, 3}, 400), f = ht_iota(2, (int64_t[]){2, 0}, 0);
  /* along dim 0 with an empty operand in the middle and at the ends */
  {
    ic_graph *g = new_graph();
    ic_value av = input_of(g, "a", &a), bv = input_of(g, "b", &b), ev = input_of(g, "e", &e);
    ic_value parts[5] = {ev, av, ev, bv, ev};
    ic_value v = ic_graph_concat(g, 5, parts, 0);
    ck_assert_msg(v != IC_INVALID_VALUE, "%s", ic_last_error());
    OK(ic_graph_output(g, "y", times_two(g, v)));
    ht in[3] = {a, b, e}, hp[5] = {e, a, e, b, e};
    ht want = ht_scale(ht_concat(5, hp, 0), 2);
    ck_assert_int_eq(check_graph(g, 3, in, &want, "concat along 0"), 1);
    ht_free(&want);
    ic_graph_destroy(g);
  }
  /* along dim 1 (the innermost), dim given as -1, with a value concatenated with itself */
  {
    ic_graph *g = new_graph();
    ic_value cv = input_of(g, "c", &c), dv = input_of(g, "d", &d), fv = input_of(g, "f", &f);
    ic_value parts[4] = {dv, cv, fv, dv};
    OK(ic_graph_output(g, "y", ic_graph_concat(g, 4, parts, -1)));
    ht in[3] = {c, d, f}, hp[4] = {d, c, f, d};
    ht want = ht_concat(4, hp, 1);
    check_graph(g, 3, in, &want, "concat along -1");
    ht_free(&want);
    ic_graph_destroy(g);
  }
  /* every operand empty: an empty result */
  {
    ic_graph *g = new_graph();
    ic_value ev = input_of(g, "e", &e);
    OK(ic_graph_output(g, "y", ic_graph_concat(g, 2, (ic_value[]){ev, ev}, 0)));
    ht hp[2] = {e, e};
    ht want = ht_concat(2, hp, 0);
    check_graph(g, 1, &e, &want, "concat of empty tensors");
    ht_free(&want);
    ic_graph_destroy(g);
  }
  /* one operand: itself */
  {
    ic_graph *g = new_graph();
    ic_value av = input_of(g, "a", &a);
    ck_assert_int_eq(ic_graph_concat(g, 1, &av, 0), av);
    ic_graph_destroy(g);
  }
  /* computed operands, a broadcast and a constant: materialized ones are loaded guarded */
  {
    ic_graph *g = new_graph();
    ic_value av = input_of(g, "a", &a), bv = input_of(g, "b", &b);
    ic_value ta = ic_graph_unary(g, IC_OP_NEG, ic_graph_unary(g, IC_OP_NEG, av));
    ic_value row = ic_graph_slice(g, bv, 0, 2, 3, 1); /* [1, 5] */
    ic_value wide = ic_graph_expand(g, row, 2, (ic_dim[]){4, 5});
    ic_value k = ic_graph_expand(g, ic_graph_constant(g, -3, IC_F32), 2, (ic_dim[]){1, 5});
    ic_value parts[4] = {ta, wide, k, bv};
    OK(ic_graph_output(g, "y", ic_graph_concat(g, 4, parts, 0)));
    ht hb_row = ht_slice(&b, 0, 2, 3, 1), hwide = ht_expand(&hb_row, (int64_t[]){4, 5});
    ht hk = ht_new(2, (int64_t[]){1, 5});
    for (int i = 0; i < 5; i++) hk.data[i] = -3;
    ht hp[4] = {a, hwide, hk, b}, in[2] = {a, b};
    ht want = ht_concat(4, hp, 0);
    ck_assert_int_eq(check_graph(g, 2, in, &want, "concat of computed, broadcast and constant"), 1);
    ht_free(&want);
    ht_free(&hb_row);
    ht_free(&hwide);
    ht_free(&hk);
    ic_graph_destroy(g);
  }
  ht_free(&a);
  ht_free(&b);
  ht_free(&c);
  ht_free(&d);
  ht_free(&e);
  ht_free(&f);
}
END_TEST

START_TEST(test_concat_symbolic) {
  static const int64_t sizes[][2] = {{0, 0}, {0, 3}, {2, 0}, {1, 1}, {5, 7}};
  ic_graph *g = new_graph();
  ic_dim n = ic_graph_symbol(g, "n"), m = ic_graph_symbol(g, "m");
  ic_value a = ic_graph_input(g, "a", IC_F32, 2, (ic_dim[]){n, 4}, IC_LAYOUT_CONTIGUOUS);
  ic_value b = ic_graph_input(g, "b", IC_F32, 2, (ic_dim[]){m, 4}, IC_LAYOUT_CONTIGUOUS);
  ic_value c = ic_graph_concat(g, 3, (ic_value[]){a, b, a}, 0); /* [2n + m, 4] */
  /* reversed along the concat dim, then transposed */
  ic_value r = ic_graph_permute(g, ic_graph_slice(g, c, 0, INT64_MAX, INT64_MIN, -1), 2, (int32_t[]){1, 0});
  OK(ic_graph_output(g, "y", times_two(g, r)));
  for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
    ht ha = ht_iota(2, (int64_t[]){sizes[k][0], 4}, 1), hb = ht_iota(2, (int64_t[]){sizes[k][1], 4}, 500);
    ht hp[3] = {ha, hb, ha}, in[2] = {ha, hb};
    ht hc = ht_concat(3, hp, 0), hs = ht_slice(&hc, 0, INT64_MAX, INT64_MIN, -1);
    ht want = ht_scale(ht_permute(&hs, (int32_t[]){1, 0}), 2);
    char what[64];
    snprintf(what, sizeof what, "symbolic concat n = %lld, m = %lld", (long long)sizes[k][0], (long long)sizes[k][1]);
    check_graph(g, 2, in, &want, what);
    ht_free(&ha);
    ht_free(&hb);
    ht_free(&hc);
    ht_free(&hs);
    ht_free(&want);
  }
  ic_graph_destroy(g);
}
END_TEST

/* ---------------------------------------------------------------- combinations */

/* slice(permute(concat)), pad(concat), concat(pad, slice), reshape(pad), pad(pad(slice)),
 * concat of concats, with odd sizes. */
START_TEST(test_combinations) {
  ht a = ht_iota(3, (int64_t[]){3, 2, 5}, 1), b = ht_iota(3, (int64_t[]){3, 3, 5}, 1000);
  for (int variant = 0; variant < 6; variant++) {
    ic_graph *g = new_graph();
    ic_value av = input_of(g, "a", &a), bv = input_of(g, "b", &b), v = IC_INVALID_VALUE;
    ht hp[2] = {a, b}, in[2] = {a, b}, want = {0}, t[4] = {{0}};
    switch (variant) {
    case 0: { /* slice(permute(concat along 1), ...) backwards along the former concat dim */
      int32_t perm[3] = {1, 2, 0};
      v = ic_graph_slice(g, ic_graph_permute(g, ic_graph_concat(g, 2, (ic_value[]){av, bv}, 1), 3, perm), 0, -1, 0, -2);
      t[0] = ht_concat(2, hp, 1);
      t[1] = ht_permute(&t[0], perm);
      want = ht_slice(&t[1], 0, -1, 0, -2);
      break;
    }
    case 1: { /* pad of a concat, padding the concat dim and another */
      int64_t lohi[6] = {1, 2, 2, 1, 0, 1};
      v = ic_graph_pad(g, ic_graph_concat(g, 2, (ic_value[]){av, bv}, 1), 3, lohi, -9);
      t[0] = ht_concat(2, hp, 1);
      want = ht_pad(&t[0], 3, lohi, -9);
      break;
    }
    case 2: { /* concat of a pad and a slice */
      int64_t lohi[4] = {0, 0, 1, 0};
      ic_value pa = ic_graph_pad(g, av, 2, lohi, 4); /* [3, 3, 5] */
      ic_value sb = ic_graph_slice(g, bv, 2, INT64_MAX, INT64_MIN, -1);
      v = ic_graph_concat(g, 2, (ic_value[]){pa, sb}, 2);
      t[0] = ht_pad(&a, 2, lohi, 4);
      t[1] = ht_slice(&b, 2, INT64_MAX, INT64_MIN, -1);
      ht parts[2] = {t[0], t[1]};
      want = ht_concat(2, parts, 2);
      break;
    }
    case 3: { /* reshape (flatten) of a pad of a crop */
      int64_t lohi[4] = {-1, 2, 1, -1};
      v = ic_graph_flatten(g, ic_graph_pad(g, av, 2, lohi, 6), 0, -1);
      t[0] = ht_pad(&a, 2, lohi, 6);
      want = ht_reshape(&t[0], 1, (int64_t[]){ht_numel(&t[0])});
      break;
    }
    case 4: { /* pad of a pad of a reversed slice */
      int64_t l1[2] = {2, 0}, l2[4] = {1, 1, 1, 1};
      v = ic_graph_pad(g, ic_graph_pad(g, ic_graph_slice(g, av, 2, 3, INT64_MIN, -1), 1, l1, 1), 2, l2, 2);
      t[0] = ht_slice(&a, 2, 3, INT64_MIN, -1);
      t[1] = ht_pad(&t[0], 1, l1, 1);
      want = ht_pad(&t[1], 2, l2, 2);
      break;
    }
    case 5: { /* concat of concats along different dims, then a permute */
      ic_value ab = ic_graph_concat(g, 2, (ic_value[]){av, bv}, 1);     /* [3, 5, 5] */
      ic_value abab = ic_graph_concat(g, 2, (ic_value[]){ab, ab}, 0);   /* [6, 5, 5] */
      v = ic_graph_permute(g, abab, 3, (int32_t[]){2, 1, 0});
      t[0] = ht_concat(2, hp, 1);
      ht again[2] = {t[0], t[0]};
      t[1] = ht_concat(2, again, 0);
      want = ht_permute(&t[1], (int32_t[]){2, 1, 0});
      break;
    }
    }
    ck_assert_msg(v != IC_INVALID_VALUE, "variant %d: %s", variant, ic_last_error());
    OK(ic_graph_output(g, "y", times_two(g, v)));
    want = ht_scale(want, 2);
    char what[64];
    snprintf(what, sizeof what, "combination %d", variant);
    ck_assert_int_eq(check_graph(g, 2, in, &want, what), 1);
    ht_free(&want);
    for (int i = 0; i < 4; i++) ht_free(&t[i]);
    ic_graph_destroy(g);
  }
  ht_free(&a);
  ht_free(&b);
}
END_TEST

/* ---------------------------------------------------------------- kernel IR and source */

static char *kernel_ir_of(ic_context *ctx, const ic_graph *g, const char *backend, bool source) {
  ic_compile_options o = {.struct_size = sizeof o, .backend = backend};
  ic_program *p = NULL;
  OK(ic_compile(ctx, g, &o, &p));
  ck_assert_int_eq(ic_program_kernel_count(p), 1);
  const char *s = source ? ic_program_kernel_source(p, 0) : ic_program_kernel_ir(p, 0);
  char *copy = malloc(strlen(s) + 1);
  strcpy(copy, s);
  ic_program_release(p);
  return copy;
}

START_TEST(test_kernel_ir) {
  /* concat along dim 0 of [n, 8] and [m, 8]: the dims stay apart (a range reads i0), the
   * loads are guarded, and a where picks; the innermost dim keeps the vector path for
   * the store */
  ic_graph *g = new_graph();
  ic_dim n = ic_graph_symbol(g, "n"), m = ic_graph_symbol(g, "m");
  ic_value a = ic_graph_input(g, "a", IC_F32, 2, (ic_dim[]){n, 8}, IC_LAYOUT_CONTIGUOUS);
  ic_value b = ic_graph_input(g, "b", IC_F32, 2, (ic_dim[]){m, 8}, IC_LAYOUT_CONTIGUOUS);
  OK(ic_graph_output(g, "y", ic_graph_concat(g, 2, (ic_value[]){a, b}, 0)));
  char *ir = kernel_ir_of(ref_ctx, g, "ref", false);
  ck_assert_msg(strstr(ir, "kernel ic_k0 [n + m, 8]"), "%s", ir);
  ck_assert_msg(strstr(ir, "range 0 <= i0 < n\n"), "%s", ir);
  ck_assert_msg(strstr(ir, "range n <= i0 < n + m\n"), "%s", ir);
  ck_assert_msg(strstr(ir, "] if v"), "%s", ir);
  ck_assert_msg(strstr(ir, "where.f32"), "%s", ir);
  free(ir);
  char *src = kernel_ir_of(cuda_ctx, g, NULL, true);
  ck_assert_msg(strstr(src, " ? ic_unpack_f32(ic_ld_s32("), "%s", src);
  ck_assert_msg(strstr(src, "ic_st_w4("), "%s", src); /* the unguarded store stays vectorized */
  free(src);
  ic_graph_destroy(g);

  /* a forward slice of step 1 is a plain, unguarded, vectorizable load */
  g = new_graph();
  a = ic_graph_input(g, "a", IC_F32, 2, (ic_dim[]){4, 64}, IC_LAYOUT_CONTIGUOUS);
  OK(ic_graph_output(g, "y", ic_graph_slice(g, a, 1, 8, 40, 1)));
  ir = kernel_ir_of(ref_ctx, g, "ref", false);
  ck_assert_msg(!strstr(ir, "range") && !strstr(ir, " if v"), "%s", ir);
  free(ir);
  src = kernel_ir_of(cuda_ctx, g, NULL, true);
  ck_assert_msg(strstr(src, "ic_ld_w4("), "%s", src);
  free(src);
  ic_graph_destroy(g);

  /* a pad only on the outer dim guards by the outer var alone */
  g = new_graph();
  a = ic_graph_input(g, "a", IC_F32, 2, (ic_dim[]){3, 16}, IC_LAYOUT_CONTIGUOUS);
  OK(ic_graph_output(g, "y", ic_graph_pad(g, a, 2, (int64_t[]){0, 0, 1, 1}, 0)));
  ir = kernel_ir_of(ref_ctx, g, "ref", false);
  ck_assert_msg(strstr(ir, "kernel ic_k0 [5, 16]") && strstr(ir, "range 1 <= i0 < 4\n"), "%s", ir);
  free(ir);
  ic_graph_destroy(g);
}
END_TEST

/* ---------------------------------------------------------------- program cache */

static uint64_t misses_after(ic_graph *g) {
  ic_compile_options o = {.struct_size = sizeof o, .backend = "ref"};
  ic_program *p = NULL;
  OK(ic_compile(ref_ctx, g, &o, &p));
  ic_program_release(p);
  ic_graph_destroy(g);
  ic_cache_stats st = {.struct_size = sizeof st};
  OK(ic_cache_stats_get(ref_ctx, &st));
  return st.program_misses;
}

/* variant: which parameter differs from variant 0 */
static ic_graph *cache_graph(int variant) {
  ic_graph *g = new_graph();
  ic_value x = ic_graph_input(g, "x", IC_F32, 2, (ic_dim[]){6, 6}, IC_LAYOUT_CONTIGUOUS);
  ic_value s = ic_graph_slice(g, x, variant == 1 ? 0 : 1, 1, 5, variant == 2 ? 2 : 1);
  ic_value p = ic_graph_pad(g, x, 1, (int64_t[]){variant == 3 ? 0 : 1, variant == 3 ? 1 : 0}, variant == 4 ? 2 : 1);
  ic_value c = ic_graph_concat(g, 2, (ic_value[]){variant == 5 ? p : x, variant == 5 ? x : p}, 1);
  ic_value t = ic_graph_slice(g, c, 1, variant == 6 ? 1 : 0, 4, 1);
  OK(ic_graph_output(g, "s", s));
  OK(ic_graph_output(g, "t", t));
  return g;
}

START_TEST(test_program_cache_tells_views_apart) {
  uint64_t before = misses_after(cache_graph(0));
  ck_assert_uint_eq(misses_after(cache_graph(0)), before); /* rebuilt: a hit */
  for (int variant = 1; variant <= 6; variant++)
    ck_assert_msg(misses_after(cache_graph(variant)) == before + (uint64_t)variant, "variant %d hit the cache", variant);
}
END_TEST

/* ---------------------------------------------------------------- errors */

/* A fresh graph with x: f32[4, n] and w: i32[4, 1]. */
static ic_graph *error_graph(ic_value *x, ic_value *w) {
  ic_graph *g = new_graph();
  ic_dim n = ic_graph_symbol(g, "n");
  *x = ic_graph_input(g, "x", IC_F32, 2, (ic_dim[]){4, n}, IC_LAYOUT_CONTIGUOUS);
  *w = ic_graph_input(g, "w", IC_I32, 2, (ic_dim[]){4, 1}, IC_LAYOUT_CONTIGUOUS);
  return g;
}

/* The call's result was IC_INVALID_VALUE, the graph holds status with message text. */
static void expect_error(ic_graph *g, ic_value v, ic_status status, const char *text) {
  ck_assert_int_eq(v, IC_INVALID_VALUE);
  const char *msg = NULL;
  ck_assert_int_eq(ic_graph_error(g, &msg), status);
  ck_assert_msg(strstr(msg, text), "message '%s' lacks '%s'", msg, text);
  ck_assert_msg(strstr(ic_last_error(), text), "last error '%s' lacks '%s'", ic_last_error(), text);
  ic_graph_destroy(g);
}

START_TEST(test_errors) {
  ic_value x, w;
  ic_graph *g;
  const ic_status bad = IC_ERR_INVALID_GRAPH;
  ck_assert_int_eq(ic_graph_slice(NULL, 0, 0, 0, 1, 1), IC_INVALID_VALUE);
  ck_assert_int_eq(ic_graph_concat(NULL, 1, (ic_value[]){0}, 0), IC_INVALID_VALUE);
  ck_assert_int_eq(ic_graph_pad(NULL, 0, 0, NULL, 0), IC_INVALID_VALUE);

  /* slice */
  g = error_graph(&x, &w);
  expect_error(g, ic_graph_slice(g, 77, 0, 0, 1, 1), bad, "slice: argument 77 is not a value");
  g = error_graph(&x, &w);
  expect_error(g, ic_graph_slice(g, x, 2, 0, 1, 1), bad, "slice: dim 2 outside a tensor of 2 dims");
  g = error_graph(&x, &w);
  expect_error(g, ic_graph_slice(g, x, -3, 0, 1, 1), bad, "slice: dim -3 outside");
  g = error_graph(&x, &w);
  expect_error(g, ic_graph_slice(g, ic_graph_constant(g, 1, IC_F32), 0, 0, 1, 1), bad, "outside a tensor of 0 dims");
  g = error_graph(&x, &w);
  expect_error(g, ic_graph_slice(g, x, 0, 0, 4, 0), bad, "slice: step is 0");
  g = error_graph(&x, &w);
  expect_error(g, ic_graph_slice(g, x, 0, 0, 4, INT64_MIN), bad, "step INT64_MIN");
  g = error_graph(&x, &w);
  expect_error(g, ic_graph_slice(g, x, 1, 0, 4, (int64_t)1 << 40), IC_ERR_UNSUPPORTED, "on a symbolic dim");
  g = error_graph(&x, &w); /* the same step on a constant dim is fine */
  ck_assert_int_ne(ic_graph_slice(g, x, 0, 0, 4, (int64_t)1 << 40), IC_INVALID_VALUE);
  ck_assert_int_eq(ic_graph_error(g, NULL), IC_OK);
  ic_graph_destroy(g);

  /* concat */
  g = error_graph(&x, &w);
  expect_error(g, ic_graph_concat(g, 0, (ic_value[]){x}, 0), bad, "concat: no values");
  g = error_graph(&x, &w);
  expect_error(g, ic_graph_concat(g, -1, (ic_value[]){x}, 0), bad, "concat: no values");
  g = error_graph(&x, &w);
  expect_error(g, ic_graph_concat(g, 2, NULL, 0), bad, "concat: values is NULL");
  g = error_graph(&x, &w);
  expect_error(g, ic_graph_concat(g, 2, (ic_value[]){x, 99}, 0), bad, "concat: argument 99 is not a value");
  g = error_graph(&x, &w);
  expect_error(g, ic_graph_concat(g, 2, (ic_value[]){-5, x}, 0), bad, "concat: argument -5 is not a value");
  g = error_graph(&x, &w);
  ic_value k = ic_graph_constant(g, 1, IC_F32);
  expect_error(g, ic_graph_concat(g, 2, (ic_value[]){k, k}, 0), bad, "concat: value 0 is a scalar");
  g = error_graph(&x, &w);
  expect_error(g, ic_graph_concat(g, 2, (ic_value[]){x, x}, 2), bad, "concat: dim 2 outside a tensor of 2 dims");
  g = error_graph(&x, &w);
  expect_error(g, ic_graph_concat(g, 2, (ic_value[]){x, w}, 1), bad, "concat: value 1 is i32, value 0 is f32");
  g = error_graph(&x, &w);
  ic_value wf = ic_graph_cast(g, w, IC_F32);
  expect_error(g, ic_graph_concat(g, 3, (ic_value[]){x, x, wf}, 0), bad,
               "concat: value 2 has shape [4, 1], value 0 [4, n]: all dims but dim 0 must be equal");
  g = error_graph(&x, &w);
  ic_value flat = ic_graph_flatten(g, x, 0, 1);
  expect_error(g, ic_graph_concat(g, 2, (ic_value[]){x, flat}, 0), bad, "value 1 has shape [4 * n]");
  g = error_graph(&x, &w); /* along the differing dim it is fine */
  ck_assert_int_ne(ic_graph_concat(g, 2, (ic_value[]){x, wf = ic_graph_cast(g, w, IC_F32)}, 1), IC_INVALID_VALUE);
  ck_assert_int_eq(ic_graph_error(g, NULL), IC_OK);
  ic_graph_destroy(g);

  /* pad */
  g = error_graph(&x, &w);
  expect_error(g, ic_graph_pad(g, 123, 0, NULL, 0), bad, "pad: argument 123 is not a value");
  g = error_graph(&x, &w);
  expect_error(g, ic_graph_pad(g, x, -1, (int64_t[]){1, 1}, 0), bad, "pad: -1 pairs of amounts for a tensor of 2 dims");
  g = error_graph(&x, &w);
  expect_error(g, ic_graph_pad(g, x, 3, (int64_t[]){1, 1, 1, 1, 1, 1}, 0), bad, "pad: 3 pairs");
  g = error_graph(&x, &w);
  expect_error(g, ic_graph_pad(g, x, 1, NULL, 0), bad, "pad: lo_hi is NULL");
  g = error_graph(&x, &w);
  expect_error(g, ic_graph_pad(g, w, 1, (int64_t[]){1, 1}, NAN), bad, "pad: NaN is not a value of i32");
  g = error_graph(&x, &w);
  expect_error(g, ic_graph_pad(g, w, 2, (int64_t[]){0, 0, -3, -2}, 0), bad,
               "pad: crops -3 and -2 take more than dim 0 of size 4");
  g = error_graph(&x, &w);
  expect_error(g, ic_graph_pad(g, w, 1, (int64_t[]){-2, 0}, 0), bad, "take more than dim 1 of size 1");
  g = error_graph(&x, &w);
  expect_error(g, ic_graph_pad(g, x, 1, (int64_t[]){-1, 2}, 0), IC_ERR_UNSUPPORTED,
               "pad: dim 1 is symbolic: negative amounts (crops) need a constant size");
  g = error_graph(&x, &w);
  expect_error(g, ic_graph_pad(g, x, 1, (int64_t[]){INT64_MAX, 0}, 0), bad, "is out of range");
  g = error_graph(&x, &w);
  expect_error(g, ic_graph_pad(g, x, 2, (int64_t[]){0, 0, 1, INT64_MIN}, 0), bad, "is out of range");

  /* the first error sticks: later calls fail and leave the graph as it was */
  g = error_graph(&x, &w);
  ck_assert_int_eq(ic_graph_slice(g, x, 0, 0, 1, 0), IC_INVALID_VALUE);
  ck_assert_int_ne(ic_graph_slice(g, x, 0, 0, 1, 1), IC_INVALID_VALUE);
  ck_assert_int_eq(ic_graph_pad(g, x, 1, NULL, 0), IC_INVALID_VALUE);
  const char *msg = NULL;
  ck_assert_int_eq(ic_graph_error(g, &msg), bad);
  ck_assert_ptr_nonnull(strstr(msg, "step is 0"));
  ic_program *p = NULL;
  ic_compile_options o = {.struct_size = sizeof o, .backend = "ref"};
  ck_assert_int_ne(ic_compile(ref_ctx, g, &o, &p), IC_OK);
  ic_graph_destroy(g);
}
END_TEST

int main(void) {
  Suite *s = suite_create("views");
  TCase *tc = check_tcase("views");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, test_slice);
  tcase_add_test(tc, test_slice_of_views);
  tcase_add_test(tc, test_slice_symbolic);
  tcase_add_test(tc, test_pad);
  tcase_add_test(tc, test_pad_more);
  tcase_add_test(tc, test_pad_dtypes);
  tcase_add_test(tc, test_concat);
  tcase_add_test(tc, test_concat_symbolic);
  tcase_add_test(tc, test_combinations);
  tcase_add_test(tc, test_kernel_ir);
  tcase_add_test(tc, test_program_cache_tells_views_apart);
  tcase_add_test(tc, test_errors);
  suite_add_tcase(s, tc);
  return check_run_suite(s);
}
