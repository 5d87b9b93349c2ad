/* The pointwise test cases, shared by the GPU test (cuda backend, device memory) and the
 * CPU test (ref backend, host memory): every op and dtype against the host reference
 * (tests/ref_ops.h), random inputs with specials, sizes 0/1/odd/large, broadcast,
 * strided, misaligned and viewed inputs, symbolic sizes at several values, poisoned
 * outputs, eager == fused bit for bit, and run-time errors that launch nothing.
 *
 * The including file defines: ctx (a context), backend (a backend name), and the memory
 * functions mem_upload, mem_poisoned, mem_download, mem_free, mem_sync. */
#ifndef IC_TESTS_POINTWISE_CASES_H
#define IC_TESTS_POINTWISE_CASES_H

#include <check.h>
#include <stdio.h>
#include <stdlib.h>

#include "check_main.h"
#include "host_ref.h"

#define IC_OK_OR_FAIL(call) ck_assert_msg((call) == IC_OK, "%s: %s", #call, ic_last_error())
/* For per-element checks: Check records the location of every passing assertion (a write
 * to its message file), which made element loops spend most of the suite's time in the
 * kernel; this reports through Check only when the check fails. */
#define CHECK_ELEM(cond, ...)             \
  do {                                     \
    if (!(cond)) ck_abort_msg(__VA_ARGS__); \
  } while (0)

static ic_context *ctx;
static const char *backend;
static void *mem_upload(const void *host, size_t bytes);
static void *mem_poisoned(size_t bytes);
static void *mem_download(const void *mem, size_t bytes);
static void mem_free(void *mem);
static void mem_sync(void);

static ic_status compile_for_backend(const ic_graph *g, ic_program **out) {
  ic_compile_options o = {.struct_size = sizeof o, .backend = backend};
  return ic_compile(ctx, g, &o, out);
}

static uint64_t seed = 0x9e3779b97f4a7c15ull;

#define all_dtypes ref_all_dtypes


static bool accepts(ic_op op, ic_dtype dt) {
  ic_graph *g;
  ic_graph_create(&g);
  ic_value x = ic_graph_input(g, "x", dt, 0, NULL, IC_LAYOUT_CONTIGUOUS);
  ic_value args[3] = {x, x, x};
  if (op == IC_OP_WHERE) args[0] = ic_graph_input(g, "c", IC_BOOL, 0, NULL, IC_LAYOUT_CONTIGUOUS);
  const int arity = ic_op_arity(op);
  bool ok = ic_graph_op(g, op, arity, args) != IC_INVALID_VALUE;
  ic_graph_destroy(g);
  return ok;
}

static int op_arity(ic_op op) { return ic_op_arity(op); }

/* Tolerance of an op: exact ops 0 ulps; device math vs libm a few ulps plus an absolute
 * floor for results that cancel to near zero. */
static void op_tolerance(ic_op op, ic_dtype dt, int *ulps, double *abs_tol) {
  *ulps = ref_exact(op) ? 0 : 4;
  *abs_tol = ref_exact(op)       ? 0.0
             : dt == IC_F64     ? 1e-14
             : dt == IC_F32     ? 1e-6
             : dt == IC_F16     ? 1e-3
             : dt == IC_BF16    ? 1e-2
                                : 5e-2; /* fp8 */
}

typedef struct host_tensor {
  ic_dtype dt;
  int64_t n;
  void *h;
  void *d;
} host_tensor;

static host_tensor make_random(ic_dtype dt, int64_t n) {
  host_tensor t = {dt, n, malloc((size_t)(n ? n : 1) * ic_dtype_size(dt)), NULL};
  for (int64_t i = 0; i < n; i++) ref_set(dt, t.h, i, ref_random(dt, &seed));
  t.d = mem_upload(t.h, (size_t)n * ic_dtype_size(dt));
  return t;
}

static void free_tensor(host_tensor *t) {
  free(t->h);
  mem_free(t->d);
}

/* Runs fused and eager programs of the same graph and checks fused against want (a host
 * array of n values of dt) and eager == fused bitwise, for every output. */
static void run_both(ic_graph *g, const ic_tensor *in, int32_t nin, int32_t nout, ic_tensor *outs, int64_t *const n_out,
                     void *const *want, int ulps, double abs_tol, const char *what) {
  ic_program *fused, *eager;
  ic_compile_options fo = {.struct_size = sizeof fo, .backend = backend}, eo = fo;
  eo.mode = IC_MODE_EAGER;
  IC_OK_OR_FAIL(ic_compile(ctx, g, &fo, &fused));
  IC_OK_OR_FAIL(ic_compile(ctx, g, &eo, &eager));
  void *got[2][8];
  ck_assert_int_le(nout, 8);
  for (int m = 0; m < 2; m++) {
    for (int o = 0; o < nout; o++) outs[o].data = mem_poisoned((size_t)n_out[o] * ic_dtype_size(outs[o].dtype));
    IC_OK_OR_FAIL(ic_program_run(m ? eager : fused, in, nin, outs, nout, NULL));
    mem_sync();
    for (int o = 0; o < nout; o++) {
      got[m][o] = mem_download(outs[o].data, (size_t)n_out[o] * ic_dtype_size(outs[o].dtype));
      mem_free(outs[o].data);
    }
  }
  for (int o = 0; o < nout; o++) {
    ic_dtype dt = outs[o].dtype;
    for (int64_t i = 0; i < n_out[o]; i++) {
      hv a = ref_get(dt, got[0][o], i), w = ref_get(dt, want[o], i);
      CHECK_ELEM(ref_close(dt, a, w, ulps, abs_tol), "%s: output %d (%s) element %lld: got %.17g, want %.17g", what, o,
                    ic_dtype_name(dt), (long long)i, ref_show(dt, a), ref_show(dt, w));
    }
    size_t es = ic_dtype_size(dt);
    for (int64_t i = 0; i < n_out[o]; i++) {
      hv f = ref_get(dt, got[0][o], i), e = ref_get(dt, got[1][o], i);
      CHECK_ELEM(memcmp((char *)got[0][o] + i * (int64_t)es, (char *)got[1][o] + i * (int64_t)es, es) == 0,
                    "%s: eager and fused differ in output %d element %lld: fused %.17g, eager %.17g", what, o,
                    (long long)i, ref_show(dt, f), ref_show(dt, e));
    }
    free(got[0][o]);
    free(got[1][o]);
  }
  ic_program_release(fused);
  ic_program_release(eager);
}

/* Every unary op over the dtypes all_dtypes[first .. last - 1]: two cases take half the
 * dtypes each, so neither nears the time limit under ASan. */
static void unary_ops_over_dtypes(size_t first, size_t last) {
  static const int64_t sizes[] = {0, 1, 5, 4099, 100003};
  for (int op = 0; op < IC_OP_COUNT; op++) {
    if (op_arity((ic_op)op) != 1 || op == IC_OP_CAST) continue;
    for (size_t di = first; di < last; di++) {
      ic_dtype dt = all_dtypes[di];
      if (!accepts((ic_op)op, dt)) continue;
      for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++) {
        int64_t n = sizes[si];
        ic_graph *g;
        IC_OK_OR_FAIL(ic_graph_create(&g));
        ic_dim sn = ic_graph_symbol(g, "n");
        ic_value x = ic_graph_input(g, "x", dt, 1, &sn, IC_LAYOUT_CONTIGUOUS);
        ic_value y = ic_graph_unary(g, (ic_op)op, x);
        ic_dtype odt = ic_graph_value_dtype(g, y); /* bool for predicates */
        IC_OK_OR_FAIL(ic_graph_output(g, "y", y));
        host_tensor tx = make_random(dt, n);
        void *want = malloc((size_t)(n ? n : 1) * ic_dtype_size(odt));
        for (int64_t i = 0; i < n; i++)
          ref_set(odt, want, i, ref_op((ic_op)op, dt, odt, ref_get(dt, tx.h, i), (hv){0}, (hv){0}));
        int64_t shape[1] = {n};
        ic_tensor in = {tx.d, dt, 1, shape, NULL}, out = {NULL, odt, 1, shape, NULL};
        int ulps;
        double tol;
        op_tolerance((ic_op)op, dt, &ulps, &tol);
        char what[64];
        snprintf(what, sizeof what, "%s.%s n=%lld", ic_op_name((ic_op)op), ic_dtype_name(dt), (long long)n);
        run_both(g, &in, 1, 1, &out, &n, &want, ulps, tol, what);
        free(want);
        free_tensor(&tx);
        ic_graph_destroy(g);
      }
    }
  }
}

#define UNARY_NDTYPES (sizeof all_dtypes / sizeof *all_dtypes)

START_TEST(test_unary_ops_first_dtypes) { unary_ops_over_dtypes(0, UNARY_NDTYPES / 2); }
END_TEST

START_TEST(test_unary_ops_other_dtypes) { unary_ops_over_dtypes(UNARY_NDTYPES / 2, UNARY_NDTYPES); }
END_TEST

/* Binary ops with both broadcasts: y [37] along rows (vector loads) and z [n, 1] along
 * the innermost dim (one load per slot). */
START_TEST(test_binary_ops_broadcast) {
  static const int64_t rows[] = {0, 1, 3, 301};
  enum { C = 37 };
  for (int op = 0; op < IC_OP_COUNT; op++) {
    if (op_arity((ic_op)op) != 2) continue;
    for (size_t di = 0; di < (sizeof all_dtypes / sizeof *all_dtypes); di++) {
      ic_dtype dt = all_dtypes[di];
      if (!accepts((ic_op)op, dt)) continue;
      for (size_t ri = 0; ri < sizeof rows / sizeof *rows; ri++) {
        int64_t n = rows[ri];
        ic_graph *g;
        IC_OK_OR_FAIL(ic_graph_create(&g));
        ic_dim sn = ic_graph_symbol(g, "n");
        ic_value x = ic_graph_input(g, "x", dt, 2, (ic_dim[]){sn, C}, IC_LAYOUT_CONTIGUOUS);
        ic_value y = ic_graph_input(g, "y", dt, 1, (ic_dim[]){C}, IC_LAYOUT_CONTIGUOUS);
        ic_value z = ic_graph_input(g, "z", dt, 2, (ic_dim[]){sn, 1}, IC_LAYOUT_CONTIGUOUS);
        IC_OK_OR_FAIL(ic_graph_output(g, "a", ic_graph_binary(g, (ic_op)op, x, y)));
        IC_OK_OR_FAIL(ic_graph_output(g, "b", ic_graph_binary(g, (ic_op)op, z, x)));
        host_tensor tx = make_random(dt, n * C), ty = make_random(dt, C), tz = make_random(dt, n);
        /* equal operands now and then, so comparisons see ties */
        ic_dtype odt = ic_graph_value_dtype(g, ic_graph_binary(g, (ic_op)op, x, y));
        void *want[2] = {malloc((size_t)(n * C + 1) * 8), malloc((size_t)(n * C + 1) * 8)};
        for (int64_t i = 0; i < n * C; i++) {
          hv xv = ref_get(dt, tx.h, i);
          ref_set(odt, want[0], i, ref_op((ic_op)op, dt, odt, xv, ref_get(dt, ty.h, i % C), (hv){0}));
          ref_set(odt, want[1], i, ref_op((ic_op)op, dt, odt, ref_get(dt, tz.h, i / C), xv, (hv){0}));
        }
        int64_t xs[2] = {n, C}, ys[1] = {C}, zs[2] = {n, 1}, no[2] = {n * C, n * C};
        ic_tensor in[3] = {{tx.d, dt, 2, xs, NULL}, {ty.d, dt, 1, ys, NULL}, {tz.d, dt, 2, zs, NULL}};
        ic_tensor out[2] = {{NULL, odt, 2, xs, NULL}, {NULL, odt, 2, xs, NULL}};
        int ulps;
        double tol;
        op_tolerance((ic_op)op, dt, &ulps, &tol);
        char what[64];
        snprintf(what, sizeof what, "%s.%s rows=%lld", ic_op_name((ic_op)op), ic_dtype_name(dt), (long long)n);
        run_both(g, in, 3, 2, out, no, want, ulps, tol, what);
        free(want[0]);
        free(want[1]);
        free_tensor(&tx);
        free_tensor(&ty);
        free_tensor(&tz);
        ic_graph_destroy(g);
      }
    }
  }
}
END_TEST

/* Ternary ops over [n] with the third operand broadcast from [1]. */
START_TEST(test_ternary_ops) {
  static const int64_t sizes[] = {0, 1, 4099};
  for (int op = 0; op < IC_OP_COUNT; op++) {
    if (op_arity((ic_op)op) != 3 || op == IC_OP_WHERE) continue;
    for (size_t di = 0; di < (sizeof all_dtypes / sizeof *all_dtypes); di++) {
      ic_dtype dt = all_dtypes[di];
      if (!accepts((ic_op)op, dt)) continue;
      for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++) {
        int64_t n = sizes[si];
        ic_graph *g;
        IC_OK_OR_FAIL(ic_graph_create(&g));
        ic_dim sn = ic_graph_symbol(g, "n");
        ic_value args[3] = {ic_graph_input(g, "a", dt, 1, &sn, 0), ic_graph_input(g, "b", dt, 1, &sn, 0),
                            ic_graph_input(g, "c", dt, 1, (ic_dim[]){1}, 0)};
        IC_OK_OR_FAIL(ic_graph_output(g, "y", ic_graph_op(g, (ic_op)op, 3, args)));
        host_tensor ta = make_random(dt, n), tb = make_random(dt, n), tc = make_random(dt, 1);
        void *want = malloc((size_t)(n ? n : 1) * ic_dtype_size(dt));
        hv cv = ref_get(dt, tc.h, 0);
        for (int64_t i = 0; i < n; i++)
          ref_set(dt, want, i, ref_op((ic_op)op, dt, dt, ref_get(dt, ta.h, i), ref_get(dt, tb.h, i), cv));
        int64_t shape[1] = {n}, one[1] = {1};
        ic_tensor in[3] = {{ta.d, dt, 1, shape, NULL}, {tb.d, dt, 1, shape, NULL}, {tc.d, dt, 1, one, NULL}};
        ic_tensor out = {NULL, dt, 1, shape, NULL};
        char what[64];
        snprintf(what, sizeof what, "%s.%s n=%lld", ic_op_name((ic_op)op), ic_dtype_name(dt), (long long)n);
        run_both(g, in, 3, 1, &out, &n, &want, 0, 0.0, what);
        free(want);
        free_tensor(&ta);
        free_tensor(&tb);
        free_tensor(&tc);
        ic_graph_destroy(g);
      }
    }
  }
}
END_TEST

/* where on every dtype, and every conversion: cast, cast_saturate and (equal widths)
 * bitcast from every dtype to every dtype. */
START_TEST(test_where_and_casts) {
  const int64_t n = 1031;
  for (size_t di = 0; di < (sizeof all_dtypes / sizeof *all_dtypes); di++) {
    ic_dtype dt = all_dtypes[di];
    host_tensor tc = make_random(IC_BOOL, n), ta = make_random(dt, n), tb = make_random(dt, n);
    int64_t shape[1] = {n};
    ic_tensor in[3] = {{tc.d, IC_BOOL, 1, shape, NULL}, {ta.d, dt, 1, shape, NULL}, {tb.d, dt, 1, shape, NULL}};
    for (size_t ti = 0; ti < (sizeof all_dtypes / sizeof *all_dtypes); ti++) {
      ic_dtype to = all_dtypes[ti];
      ic_graph *g;
      IC_OK_OR_FAIL(ic_graph_create(&g));
      ic_dim sn = ic_graph_symbol(g, "n");
      ic_value c = ic_graph_input(g, "c", IC_BOOL, 1, &sn, IC_LAYOUT_CONTIGUOUS);
      ic_value a = ic_graph_input(g, "a", dt, 1, &sn, IC_LAYOUT_CONTIGUOUS);
      ic_value b = ic_graph_input(g, "b", dt, 1, &sn, IC_LAYOUT_CONTIGUOUS);
      bool bitcast = dt != IC_BOOL && to != IC_BOOL && ic_dtype_size(dt) == ic_dtype_size(to);
      IC_OK_OR_FAIL(ic_graph_output(g, "w", ic_graph_where(g, c, a, b)));
      IC_OK_OR_FAIL(ic_graph_output(g, "cast", ic_graph_cast(g, a, to)));
      IC_OK_OR_FAIL(ic_graph_output(g, "sat", ic_graph_cast_saturate(g, a, to)));
      if (bitcast) IC_OK_OR_FAIL(ic_graph_output(g, "bits", ic_graph_bitcast(g, a, to)));
      int nout = bitcast ? 4 : 3;
      void *want[4];
      int64_t no[4];
      ic_tensor out[4];
      for (int o = 0; o < nout; o++) {
        ic_dtype odt = o == 0 ? dt : to;
        want[o] = malloc((size_t)n * 8);
        no[o] = n;
        out[o] = (ic_tensor){NULL, odt, 1, shape, NULL};
        for (int64_t i = 0; i < n; i++) {
          hv av = ref_get(dt, ta.h, i);
          hv r = o == 0   ? ref_op(IC_OP_WHERE, dt, dt, ref_get(IC_BOOL, tc.h, i), av, ref_get(dt, tb.h, i))
                 : o == 1 ? ref_convert(dt, to, av, false)
                 : o == 2 ? ref_convert(dt, to, av, true)
                          : ref_bitcast(dt, to, av);
          ref_set(odt, want[o], i, r);
        }
      }
      char what[48];
      snprintf(what, sizeof what, "where/conversions %s -> %s", ic_dtype_name(dt), ic_dtype_name(to));
      run_both(g, in, 3, nout, out, no, want, 0, 0.0, what);
      for (int o = 0; o < nout; o++) free(want[o]);
      ic_graph_destroy(g);
    }
    free_tensor(&tc);
    free_tensor(&ta);
    free_tensor(&tb);
  }
}
END_TEST

/* Casts to fp8 of clamped values, which the fused kernel turns into saturating casts and
 * whose clamp it drops where that gives the same bits (kir_fold_clamped_casts): values
 * around each bound and past the overflow threshold, infinities and NaNs of either sign
 * with payloads, for bounds inside, at and past the target's range, both casts, the
 * clamp also an output or not; eager (no fold) == fused == host. */
START_TEST(test_clamped_fp8_casts) {
  static const ic_dtype tos[] = {IC_F8E4M3, IC_F8E5M2}, froms[] = {IC_F32, IC_BF16, IC_F16};
  /* bounds in units of the target's largest finite value M */
  static const double bounds[][2] = {{-1, 1}, {-0.75, 0.5}, {-2, 2}, {-1.25, 1}, {-1, 1.0009765625}};
  static const double marks[] = {0.0, 1.0, 0.999, 1.02, 1.0357142857142858, 1.04, 1.1, 2.0, 1e-6, 1e-40, 1e30, INFINITY};
  enum { MARKS = 2 * (int)(sizeof marks / sizeof *marks), NANS = 2 };
  const int64_t n = 1031;
  int64_t shape[1] = {n};
  for (size_t ti = 0; ti < sizeof tos / sizeof *tos; ti++) {
    const ic_dtype to = tos[ti];
    const double max = to == IC_F8E4M3 ? 448.0 : 57344.0;
    for (size_t fi = 0; fi < sizeof froms / sizeof *froms; fi++) {
      const ic_dtype dt = froms[fi];
      const size_t es = ic_dtype_size(dt);
      unsigned char *xh = malloc((size_t)n * es);
      for (int64_t i = 0; i < n; i++) {
        double v = i < MARKS ? (i % 2 ? -1 : 1) * marks[i / 2] * max
                             : ((double)(ref_rand(&seed) >> 11) / 9007199254740992.0 * 3.2 - 1.6) * max;
        ref_set(dt, xh, i, (hv){.f = (float)v});
      }
      /* NaNs with a sign and a payload, as storage bits: ref_set would make them canonical */
      const uint32_t nan_bits[NANS] = {dt == IC_F32 ? 0xffc00001u : dt == IC_BF16 ? 0xffc1u : 0xfe01u,
                                       dt == IC_F32 ? 0x7fa00000u : dt == IC_BF16 ? 0x7f81u : 0x7d01u};
      for (int j = 0; j < NANS; j++) memcpy(xh + (MARKS + j) * (int64_t)es, &nan_bits[j], es);
      void *xd = mem_upload(xh, (size_t)n * es);
      ic_tensor in[1] = {{xd, dt, 1, shape, NULL}};
      for (size_t bi = 0; bi < sizeof bounds / sizeof *bounds; bi++) {
        for (int variant = 0; variant < 3; variant++) { /* cast, cast_saturate, cast with the clamp an output */
          const bool sat = variant == 1, keep = variant == 2;
          if (keep && bi != 0) continue;
          ic_graph *g;
          IC_OK_OR_FAIL(ic_graph_create(&g));
          ic_dim sn = ic_graph_symbol(g, "n");
          ic_value x = ic_graph_input(g, "x", dt, 1, &sn, IC_LAYOUT_CONTIGUOUS);
          ic_value c = ic_graph_op(g, IC_OP_CLAMP, 3, (ic_value[]){x, ic_graph_constant(g, bounds[bi][0] * max, IC_DTYPE_AUTO),
                                                                   ic_graph_constant(g, bounds[bi][1] * max, IC_DTYPE_AUTO)});
          IC_OK_OR_FAIL(ic_graph_output(g, "q", sat ? ic_graph_cast_saturate(g, c, to) : ic_graph_cast(g, c, to)));
          if (keep) IC_OK_OR_FAIL(ic_graph_output(g, "c", c));
          const int nout = keep ? 2 : 1;
          void *want[2];
          int64_t no[2] = {n, n};
          ic_tensor out[2] = {{NULL, to, 1, shape, NULL}, {NULL, dt, 1, shape, NULL}};
          want[0] = malloc((size_t)n);
          want[1] = malloc((size_t)n * es);
          const hv lo = {.f = (float)dtype_round(dt, bounds[bi][0] * max)}, hi = {.f = (float)dtype_round(dt, bounds[bi][1] * max)};
          for (int64_t i = 0; i < n; i++) {
            hv cv = ref_op(IC_OP_CLAMP, dt, dt, ref_get(dt, xh, i), lo, hi);
            ref_set(to, want[0], i, ref_convert(dt, to, cv, sat));
            ref_set(dt, want[1], i, cv);
          }
          char what[96];
          snprintf(what, sizeof what, "%s(clamp(%s x, %g, %g), %s)%s", sat ? "cast_saturate" : "cast", ic_dtype_name(dt),
                   bounds[bi][0] * max, bounds[bi][1] * max, ic_dtype_name(to), keep ? " and the clamp" : "");
          run_both(g, in, 1, nout, out, no, want, 0, 0.0, what);
          free(want[0]);
          free(want[1]);
          ic_graph_destroy(g);
        }
      }
      free(xh);
      mem_free(xd);
    }
  }
}
END_TEST

/* A chain with an intermediate output, constants of AUTO dtype and a cast: f16/bf16
 * intermediates must round in registers exactly as eager kernels round in memory. */
START_TEST(test_chain_eager_equals_fused) {
  static const ic_dtype fdt[] = {IC_F32, IC_F16, IC_BF16};
  enum { R = 257, C = 33 };
  for (size_t di = 0; di < 3; di++) {
    ic_dtype dt = fdt[di];
    ic_graph *g;
    IC_OK_OR_FAIL(ic_graph_create(&g));
    ic_value x = ic_graph_input(g, "x", dt, 2, (ic_dim[]){R, C}, IC_LAYOUT_CONTIGUOUS);
    ic_value w = ic_graph_input(g, "w", dt, 1, (ic_dim[]){C}, IC_LAYOUT_CONTIGUOUS);
    ic_value t = ic_graph_binary(g, IC_OP_ADD, ic_graph_binary(g, IC_OP_MUL, x, w), ic_graph_constant(g, 0.1, IC_DTYPE_AUTO));
    ic_value u = ic_graph_binary(g, IC_OP_DIV, ic_graph_unary(g, IC_OP_SIGMOID, t),
                                 ic_graph_binary(g, IC_OP_MAXIMUM, ic_graph_unary(g, IC_OP_RELU, x),
                                                 ic_graph_constant(g, 1.0 / 3.0, IC_DTYPE_AUTO)));
    ic_value v = ic_graph_where(g, ic_graph_binary(g, IC_OP_GT, t, w), u, ic_graph_unary(g, IC_OP_NEG, t));
    IC_OK_OR_FAIL(ic_graph_output(g, "t", t));
    IC_OK_OR_FAIL(ic_graph_output(g, "v", ic_graph_cast(g, v, IC_F32)));
    host_tensor tx = make_random(dt, R * C), tw = make_random(dt, C);
    void *want[2] = {malloc(R * C * 4), malloc(R * C * 4)};
    float c01 = ref_round(dt, 0.1f), c13 = ref_round(dt, (float)(1.0 / 3.0));
    for (int64_t i = 0; i < R * C; i++) {
      hv xv = ref_get(dt, tx.h, i), wv = ref_get(dt, tw.h, i % C), z = {0};
      hv tv = ref_op(IC_OP_ADD, dt, dt, ref_op(IC_OP_MUL, dt, dt, xv, wv, z), (hv){.f = c01}, z);
      hv uv = ref_op(IC_OP_DIV, dt, dt, ref_op(IC_OP_SIGMOID, dt, dt, tv, z, z),
                     ref_op(IC_OP_MAXIMUM, dt, dt, ref_op(IC_OP_RELU, dt, dt, xv, z, z), (hv){.f = c13}, z), z);
      hv vv = ref_op(IC_OP_WHERE, dt, dt, ref_op(IC_OP_GT, dt, IC_BOOL, tv, wv, z), uv, ref_op(IC_OP_NEG, dt, dt, tv, z, z));
      ref_set(dt, want[0], i, tv);
      ref_set(IC_F32, want[1], i, vv);
    }
    int64_t xs[2] = {R, C}, ws[1] = {C}, no[2] = {R * C, R * C};
    ic_tensor in[2] = {{tx.d, dt, 2, xs, NULL}, {tw.d, dt, 1, ws, NULL}};
    ic_tensor out[2] = {{NULL, dt, 2, xs, NULL}, {NULL, IC_F32, 2, xs, NULL}};
    char what[32];
    snprintf(what, sizeof what, "chain %s", ic_dtype_name(dt));
    /* sigmoid is within a few ulps of libm; everything else is exact */
    run_both(g, in, 2, 2, out, no, want, 8, dt == IC_F32 ? 1e-6 : 1e-2, what);
    free(want[0]);
    free(want[1]);
    free_tensor(&tx);
    free_tensor(&tw);
    ic_graph_destroy(g);
  }
}
END_TEST

/* y = x * 2 + 1 with x given through layouts and views; reference index by index. */
static void check_affine(ic_graph *g, const ic_tensor *in, int32_t nin, const float *xs_host, int64_t rows, int64_t cols,
                         int64_t (*src_index)(int64_t r, int64_t c, const void *arg), const void *arg, const char *what) {
  int64_t n = rows * cols;
  float *want = malloc((size_t)(n ? n : 1) * 4);
  for (int64_t r = 0; r < rows; r++)
    for (int64_t c = 0; c < cols; c++) want[r * cols + c] = xs_host[src_index(r, c, arg)] * 2.0f + 1.0f;
  int64_t shape[2] = {rows, cols};
  ic_tensor out = {NULL, IC_F32, 2, shape, NULL};
  void *wants[1] = {want};
  run_both(g, in, nin, 1, &out, &n, wants, 0, 0.0, what);
  free(want);
}

static ic_graph *affine_graph(ic_value (*build)(ic_graph *g, const void *arg), const void *arg) {
  ic_graph *g;
  IC_OK_OR_FAIL(ic_graph_create(&g));
  ic_value x = build(g, arg);
  ic_value y = ic_graph_binary(g, IC_OP_ADD, ic_graph_binary(g, IC_OP_MUL, x, ic_graph_constant(g, 2, IC_DTYPE_AUTO)),
                               ic_graph_constant(g, 1, IC_DTYPE_AUTO));
  IC_OK_OR_FAIL(ic_graph_output(g, "y", y));
  return g;
}

typedef struct layout_case {
  ic_layout layout;
  int64_t ld;        /* row stride of the storage */
  int64_t offset;    /* elements from the allocation's start (misalignment) */
  bool transposed;   /* storage is [cols, rows] */
} layout_case;

static ic_value build_2d_input(ic_graph *g, const void *arg) {
  const layout_case *lc = arg;
  ic_dim n = ic_graph_symbol(g, "n"), m = ic_graph_symbol(g, "m");
  return ic_graph_input(g, "x", IC_F32, 2, (ic_dim[]){n, m}, lc->layout);
}

static int64_t layout_index(int64_t r, int64_t c, const void *arg) {
  const layout_case *lc = arg;
  return lc->offset + (lc->transposed ? c * lc->ld + r : r * lc->ld + c);
}

START_TEST(test_layouts_and_alignment) {
  static const int64_t shapes[][2] = {{3, 37}, {64, 64}, {1, 5}, {0, 8}, {129, 40}};
  for (size_t si = 0; si < 5; si++) {
    int64_t rows = shapes[si][0], cols = shapes[si][1];
    layout_case cases[] = {
        {IC_LAYOUT_CONTIGUOUS, cols, 0, false},           /* vector path */
        {IC_LAYOUT_CONTIGUOUS, cols, 1, false},           /* misaligned base: scalar path */
        {IC_LAYOUT_INNER_CONTIGUOUS, cols + 3, 0, false}, /* slice of a wider tensor */
        {IC_LAYOUT_INNER_CONTIGUOUS, cols + 4, 4, false},
        {IC_LAYOUT_STRIDED, rows, 0, true},               /* a transposed view */
    };
    for (size_t ci = 0; ci < sizeof cases / sizeof *cases; ci++) {
      layout_case *lc = &cases[ci];
      int64_t total = lc->offset + (lc->transposed ? cols * (rows ? rows : 1) : (rows ? rows : 1) * lc->ld) + 8;
      float *h = malloc((size_t)total * 4);
      for (int64_t i = 0; i < total; i++) h[i] = (float)(int64_t)(ref_rand(&seed) % 1000) / 8.0f;
      float *d = mem_upload(h, (size_t)total * 4);
      int64_t shape[2] = {rows, cols};
      int64_t strides[2] = {lc->transposed ? 1 : lc->ld, lc->transposed ? lc->ld : 1};
      ic_tensor in = {d + lc->offset, IC_F32, 2, shape, strides};
      ic_graph *g = affine_graph(build_2d_input, lc);
      char what[96];
      snprintf(what, sizeof what, "layout %d ld %lld offset %lld [%lld, %lld]", (int)lc->layout, (long long)lc->ld,
               (long long)lc->offset, (long long)rows, (long long)cols);
      check_affine(g, &in, 1, h, rows, cols, layout_index, lc, what);
      ic_graph_destroy(g);
      mem_free(d);
      free(h);
    }
  }
}
END_TEST

/* Views folded into indexing: permute, reshape, expand of inputs, and a view of a
 * computed value (which must be materialized). */
static ic_value build_permuted(ic_graph *g, const void *arg) {
  (void)arg;
  ic_dim n = ic_graph_symbol(g, "n");
  ic_value x = ic_graph_input(g, "x", IC_F32, 2, (ic_dim[]){37, n}, IC_LAYOUT_CONTIGUOUS);
  return ic_graph_permute(g, x, 2, (int32_t[]){1, 0});
}
static int64_t permuted_index(int64_t r, int64_t c, const void *arg) { return c * *(const int64_t *)arg + r; }

static ic_value build_reshaped(ic_graph *g, const void *arg) {
  (void)arg;
  ic_dim n = ic_graph_symbol(g, "n");
  ic_value x = ic_graph_input(g, "x", IC_F32, 3, (ic_dim[]){n, 4, 9}, IC_LAYOUT_CONTIGUOUS);
  return ic_graph_reshape(g, x, 2, (ic_dim[]){n, IC_DIM_INFER});
}
static int64_t reshaped_index(int64_t r, int64_t c, const void *arg) {
  (void)arg;
  return r * 36 + c;
}

static ic_value build_expanded(ic_graph *g, const void *arg) {
  (void)arg;
  ic_dim n = ic_graph_symbol(g, "n");
  ic_value x = ic_graph_input(g, "x", IC_F32, 2, (ic_dim[]){n, 1}, IC_LAYOUT_CONTIGUOUS);
  return ic_graph_expand(g, x, 2, (ic_dim[]){n, 36});
}
static int64_t expanded_index(int64_t r, int64_t c, const void *arg) {
  (void)arg;
  (void)c;
  return r;
}

/* exp(x) computed, then permuted: the permute reads a materialized buffer. */
static ic_value build_view_of_computed(ic_graph *g, const void *arg) {
  (void)arg;
  ic_dim n = ic_graph_symbol(g, "n");
  ic_value x = ic_graph_input(g, "x", IC_F32, 2, (ic_dim[]){37, n}, IC_LAYOUT_CONTIGUOUS);
  ic_value t = ic_graph_unary(g, IC_OP_NEG, ic_graph_unary(g, IC_OP_NEG, x));
  return ic_graph_permute(g, t, 2, (int32_t[]){1, 0});
}

START_TEST(test_views) {
  static const int64_t ns[] = {0, 1, 19, 1000};
  for (size_t i = 0; i < 4; i++) {
    int64_t n = ns[i];
    int64_t total = 37 * n + 1;
    float *h = malloc((size_t)(total + 64) * 4);
    for (int64_t k = 0; k < total + 64; k++) h[k] = (float)(int64_t)(ref_rand(&seed) % 1000) / 4.0f;
    float *d = mem_upload(h, (size_t)(total + 64) * 4);
    ic_graph *g;

    int64_t s37[2] = {37, n};
    ic_tensor in = {d, IC_F32, 2, s37, NULL};
    g = affine_graph(build_permuted, NULL);
    check_affine(g, &in, 1, h, n, 37, permuted_index, &n, "permute");
    ic_graph_destroy(g);
    g = affine_graph(build_view_of_computed, NULL);
    check_affine(g, &in, 1, h, n, 37, permuted_index, &n, "permute of a computed value");
    ic_program *p;
    IC_OK_OR_FAIL(compile_for_backend(g, &p));
    ck_assert_int_eq(ic_program_kernel_count(p), 1); /* the value recomputed at the moved index */
    ic_program_release(p);
    ic_graph_destroy(g);

    int64_t s3[3] = {n, 4, 9};
    ic_tensor in3 = {d, IC_F32, 3, s3, NULL};
    g = affine_graph(build_reshaped, NULL);
    check_affine(g, &in3, 1, h, n, 36, reshaped_index, NULL, "reshape");
    ic_graph_destroy(g);

    int64_t s1[2] = {n, 1};
    ic_tensor in1 = {d, IC_F32, 2, s1, NULL};
    g = affine_graph(build_expanded, NULL);
    check_affine(g, &in1, 1, h, n, 36, expanded_index, NULL, "expand");
    ic_graph_destroy(g);
    mem_free(d);
    free(h);
  }
}
END_TEST

/* One compiled program serves every size; ic allocates outputs when data is NULL. */
START_TEST(test_symbolic_sizes_and_allocated_outputs) {
  ic_graph *g;
  IC_OK_OR_FAIL(ic_graph_create(&g));
  ic_dim n = ic_graph_symbol(g, "n");
  ic_value x = ic_graph_input(g, "x", IC_F16, 1, &n, IC_LAYOUT_CONTIGUOUS);
  IC_OK_OR_FAIL(ic_graph_output(g, "y", ic_graph_unary(g, IC_OP_RELU, ic_graph_binary(g, IC_OP_SUB, x, ic_graph_constant(g, 0.5, IC_DTYPE_AUTO)))));
  ic_program *p;
  IC_OK_OR_FAIL(compile_for_backend(g, &p));
  ic_graph_destroy(g);
  static const int64_t sizes[] = {0, 1, 2, 7, 8, 9, 1000, 1 << 20, (1 << 22) + 3};
  for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
    int64_t len = sizes[i];
    host_tensor tx = make_random(IC_F16, len);
    int64_t shape[1] = {len}, oshape[IC_MAX_DIMS];
    int32_t ond = -1;
    ic_tensor in = {tx.d, IC_F16, 1, shape, NULL}, out = {NULL, IC_F16, 1, NULL, NULL};
    IC_OK_OR_FAIL(ic_program_output_shape(p, 0, &in, &ond, oshape));
    ck_assert_int_eq(ond, 1);
    ck_assert_int_eq(oshape[0], len);
    IC_OK_OR_FAIL(ic_program_run(p, &in, 1, &out, 1, NULL));
    ck_assert(len == 0 || out.data != NULL);
    uint16_t *got = mem_download(out.data, (size_t)len * 2);
    for (int64_t k = 0; k < len; k++) {
      hv xv = ref_get(IC_F16, tx.h, k), z = {0};
      hv want = ref_op(IC_OP_RELU, IC_F16, IC_F16, ref_op(IC_OP_SUB, IC_F16, IC_F16, xv, (hv){.f = 0.5f}, z), z, z);
      CHECK_ELEM(ref_close(IC_F16, ref_get(IC_F16, got, k), want, 0, 0), "n=%lld element %lld", (long long)len, (long long)k);
    }
    free(got);
    mem_free(out.data);
    free_tensor(&tx);
  }
  ic_program_release(p);
}
END_TEST

/* Every mismatch is an error before any launch: the poisoned output stays poisoned. */
START_TEST(test_run_errors_launch_nothing) {
  ic_graph *g;
  IC_OK_OR_FAIL(ic_graph_create(&g));
  ic_dim n = ic_graph_symbol(g, "n");
  ic_value x = ic_graph_input(g, "x", IC_F32, 2, (ic_dim[]){n, 4}, IC_LAYOUT_CONTIGUOUS);
  ic_value z = ic_graph_input(g, "z", IC_F32, 1, &n, IC_LAYOUT_CONTIGUOUS);
  ic_value zz = ic_graph_reshape(g, z, 2, (ic_dim[]){n, 1});
  IC_OK_OR_FAIL(ic_graph_output(g, "y", ic_graph_binary(g, IC_OP_ADD, x, zz)));
  ic_program *p;
  IC_OK_OR_FAIL(compile_for_backend(g, &p));
  ic_graph_destroy(g);
  float *dx = mem_poisoned(64 * 4), *dz = mem_poisoned(16 * 4), *dy = mem_poisoned(64 * 4);
  int64_t xs[2] = {16, 4}, zs[1] = {16}, zbad[1] = {15}, xbad[2] = {16, 5}, st_bad[2] = {8, 1}, neg[2] = {-4, 1};
  int64_t ys[2] = {16, 4}, ybad[2] = {16, 3}, ystr[2] = {1, 16};
  struct {
    ic_tensor in[2];
    int32_t nin;
    ic_tensor out;
    ic_status want;
  } cases[] = {
      {{{dx, IC_F32, 2, xs, NULL}, {dz, IC_F32, 1, zs, NULL}}, 1, {dy, IC_F32, 2, ys, NULL}, IC_ERR_INVALID_ARGUMENT},
      {{{dx, IC_F16, 2, xs, NULL}, {dz, IC_F32, 1, zs, NULL}}, 2, {dy, IC_F32, 2, ys, NULL}, IC_ERR_SHAPE_MISMATCH},
      {{{dx, IC_F32, 1, xs, NULL}, {dz, IC_F32, 1, zs, NULL}}, 2, {dy, IC_F32, 2, ys, NULL}, IC_ERR_SHAPE_MISMATCH},
      {{{dx, IC_F32, 2, xbad, NULL}, {dz, IC_F32, 1, zs, NULL}}, 2, {dy, IC_F32, 2, ys, NULL}, IC_ERR_SHAPE_MISMATCH},
      {{{dx, IC_F32, 2, xs, NULL}, {dz, IC_F32, 1, zbad, NULL}}, 2, {dy, IC_F32, 2, ys, NULL}, IC_ERR_SHAPE_MISMATCH},
      {{{dx, IC_F32, 2, xs, st_bad}, {dz, IC_F32, 1, zs, NULL}}, 2, {dy, IC_F32, 2, ys, NULL}, IC_ERR_SHAPE_MISMATCH},
      {{{dx, IC_F32, 2, xs, neg}, {dz, IC_F32, 1, zs, NULL}}, 2, {dy, IC_F32, 2, ys, NULL}, IC_ERR_SHAPE_MISMATCH},
      {{{NULL, IC_F32, 2, xs, NULL}, {dz, IC_F32, 1, zs, NULL}}, 2, {dy, IC_F32, 2, ys, NULL}, IC_ERR_INVALID_ARGUMENT},
      {{{dx, IC_F32, 2, xs, NULL}, {dz, IC_F32, 1, zs, NULL}}, 2, {dy, IC_F32, 2, ybad, NULL}, IC_ERR_SHAPE_MISMATCH},
      {{{dx, IC_F32, 2, xs, NULL}, {dz, IC_F32, 1, zs, NULL}}, 2, {dy, IC_I32, 2, ys, NULL}, IC_ERR_SHAPE_MISMATCH},
      {{{dx, IC_F32, 2, xs, NULL}, {dz, IC_F32, 1, zs, NULL}}, 2, {dy, IC_F32, 2, ys, ystr}, IC_ERR_SHAPE_MISMATCH},
      {{{dx, IC_F32, 2, xs, NULL}, {dz, IC_F32, 1, zs, NULL}}, 2, {dx + 8, IC_F32, 2, ys, NULL}, IC_ERR_INVALID_ARGUMENT},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    ic_status s = ic_program_run(p, cases[i].in, cases[i].nin, &cases[i].out, 1, NULL);
    ck_assert_msg(s == cases[i].want, "case %zu: got %s (%s)", i, ic_status_string(s), ic_last_error());
    ck_assert_str_ne(ic_last_error(), "");
  }
  mem_sync();
  uint8_t *hy = mem_download(dy, 64 * 4);
  for (int i = 0; i < 64 * 4; i++) CHECK_ELEM(hy[i] == 0xA5, "element %d was written: 0x%02x", i, hy[i]);
  free(hy);
  mem_free(dx);
  mem_free(dz);
  mem_free(dy);
  ic_program_release(p);
}
END_TEST


/* slice, concat and pad of every dtype, over odd and empty sizes and a symbolic row
 * count: a reversed strided slice concatenated between two operands along the innermost
 * dim, padded on both dims (guarded loads, element by element), and a forward slice of
 * step 1 (the vector path where aligned); eager == fused bit for bit. */
START_TEST(test_slice_concat_pad) {
  static const int64_t rows_list[] = {0, 1, 7, 300};
  enum { CA = 37, CB = 5, CS = 12, CC = CB + CS + CB, CP = CC + 3 };
  for (size_t di = 0; di < (sizeof all_dtypes / sizeof *all_dtypes); di++) {
    ic_dtype dt = all_dtypes[di];
    ic_graph *g;
    IC_OK_OR_FAIL(ic_graph_create(&g));
    ic_dim n = ic_graph_symbol(g, "n");
    ic_value a = ic_graph_input(g, "a", dt, 2, (ic_dim[]){n, CA}, IC_LAYOUT_CONTIGUOUS);
    ic_value b = ic_graph_input(g, "b", dt, 2, (ic_dim[]){n, CB}, IC_LAYOUT_CONTIGUOUS);
    ic_value s = ic_graph_slice(g, a, 1, 35, INT64_MIN, -3); /* columns 35, 32, ..., 2 */
    ic_value c = ic_graph_concat(g, 3, (ic_value[]){b, s, b}, 1);
    ic_value p = ic_graph_pad(g, c, 2, (int64_t[]){2, 1, 1, 0}, 1.0); /* [n + 1, CP] */
    IC_OK_OR_FAIL(ic_graph_output(g, "p", p));
    IC_OK_OR_FAIL(ic_graph_output(g, "f", ic_graph_slice(g, a, 1, 4, 36, 1)));
    hv one = ref_cast(IC_F32, dt, (hv){.f = 1.0f});
    for (size_t ri = 0; ri < sizeof rows_list / sizeof *rows_list; ri++) {
      int64_t rows = rows_list[ri];
      host_tensor ta = make_random(dt, rows * CA), tb = make_random(dt, rows * CB);
      int64_t no[2] = {(rows + 1) * CP, rows * 32};
      void *want[2] = {malloc((size_t)no[0] * ic_dtype_size(dt) + 1), malloc((size_t)no[1] * ic_dtype_size(dt) + 1)};
      for (int64_t r = 0; r <= rows; r++) {
        for (int64_t col = 0; col < CP; col++) {
          int64_t sr = r - 1, sc = col - 2;
          hv v = one;
          if (sr >= 0 && sr < rows && sc >= 0 && sc < CC) {
            if (sc < CB) v = ref_get(dt, tb.h, sr * CB + sc);
            else if (sc < CB + CS) v = ref_get(dt, ta.h, sr * CA + 35 - 3 * (sc - CB));
            else v = ref_get(dt, tb.h, sr * CB + sc - CB - CS);
          }
          ref_set(dt, want[0], r * CP + col, v);
        }
      }
      for (int64_t r = 0; r < rows; r++)
        for (int64_t col = 0; col < 32; col++) ref_set(dt, want[1], r * 32 + col, ref_get(dt, ta.h, r * CA + 4 + col));
      int64_t as[2] = {rows, CA}, bs[2] = {rows, CB}, ps[2] = {rows + 1, CP}, fs[2] = {rows, 32};
      ic_tensor in[2] = {{ta.d, dt, 2, as, NULL}, {tb.d, dt, 2, bs, NULL}};
      ic_tensor out[2] = {{NULL, dt, 2, ps, NULL}, {NULL, dt, 2, fs, NULL}};
      char what[64];
      snprintf(what, sizeof what, "slice/concat/pad %s, %lld rows", ic_dtype_name(dt), (long long)rows);
      run_both(g, in, 2, 2, out, no, want, 0, 0.0, what);
      free(want[0]);
      free(want[1]);
      free_tensor(&ta);
      free_tensor(&tb);
    }
    ic_graph_destroy(g);
  }
}
END_TEST

/* Write-dominated broadcasts (the row strategy on cuda: a thread takes 4 rows of the
 * broadcast dim and reads what is free of it once): [n, 1, c] + [1, b, c] -> [n, b, c]
 * with b not a multiple of 4 (the last group's rows past b), c odd (point by point) and a
 * multiple of every vector width, n symbolic (0 included); [n, 1] * [1, c] (a splat and a
 * broadcast row); a [c] row broadcast to [n, c] on its own. Every dtype; against host
 * references, eager == fused bit for bit. */
START_TEST(test_write_dominated_broadcasts) {
  static const int64_t shapes[][3] = {{0, 5, 16}, {1, 1, 16}, {3, 5, 37}, {2, 7, 64}, {5, 4, 32}, {2, 9, 3}};
  for (size_t di = 0; di < (sizeof all_dtypes / sizeof *all_dtypes); di++) {
    ic_dtype dt = all_dtypes[di];
    const size_t es = ic_dtype_size(dt);
    ic_op op = accepts(IC_OP_ADD, dt) ? IC_OP_ADD : IC_OP_BITWISE_XOR;
    ic_op op2 = accepts(IC_OP_MUL, dt) ? IC_OP_MUL : IC_OP_BITWISE_AND;
    ic_op un = accepts(IC_OP_NEG, dt) ? IC_OP_NEG : IC_OP_LOGICAL_NOT;
    ic_dtype udt = un == IC_OP_LOGICAL_NOT ? IC_BOOL : dt;
    for (size_t si = 0; si < sizeof shapes / sizeof *shapes; si++) {
      const int64_t N = shapes[si][0], B = shapes[si][1], C = shapes[si][2];
      ic_graph *g;
      IC_OK_OR_FAIL(ic_graph_create(&g));
      ic_dim n = ic_graph_symbol(g, "n");
      ic_value a = ic_graph_input(g, "a", dt, 3, (ic_dim[]){n, 1, C}, IC_LAYOUT_CONTIGUOUS);
      ic_value b = ic_graph_input(g, "b", dt, 3, (ic_dim[]){1, B, C}, IC_LAYOUT_CONTIGUOUS);
      ic_value z = ic_graph_input(g, "z", dt, 2, (ic_dim[]){n, 1}, IC_LAYOUT_CONTIGUOUS);
      ic_value w = ic_graph_input(g, "w", dt, 2, (ic_dim[]){1, C}, IC_LAYOUT_CONTIGUOUS);
      ic_value r = ic_graph_input(g, "r", dt, 1, (ic_dim[]){C}, IC_LAYOUT_CONTIGUOUS);
      IC_OK_OR_FAIL(ic_graph_output(g, "o", ic_graph_binary(g, op, a, b)));
      IC_OK_OR_FAIL(ic_graph_output(g, "p", ic_graph_binary(g, op2, z, w)));
      ic_value rn = ic_graph_unary(g, un, ic_graph_expand(g, r, 2, (ic_dim[]){n, C}));
      IC_OK_OR_FAIL(ic_graph_output(g, "q", rn));
      host_tensor ta = make_random(dt, N * C), tb = make_random(dt, B * C), tz = make_random(dt, N), tw = make_random(dt, C),
                  tr = make_random(dt, C);
      int64_t no[3] = {N * B * C, N * C, N * C};
      void *want[3] = {malloc((size_t)no[0] * es + 1), malloc((size_t)no[1] * es + 1), malloc((size_t)no[2] * 8 + 1)};
      for (int64_t i = 0; i < N; i++)
        for (int64_t j = 0; j < B; j++)
          for (int64_t l = 0; l < C; l++)
            ref_set(dt, want[0], (i * B + j) * C + l, ref_op(op, dt, dt, ref_get(dt, ta.h, i * C + l), ref_get(dt, tb.h, j * C + l), (hv){0}));
      for (int64_t i = 0; i < N; i++)
        for (int64_t l = 0; l < C; l++) {
          ref_set(dt, want[1], i * C + l, ref_op(op2, dt, dt, ref_get(dt, tz.h, i), ref_get(dt, tw.h, l), (hv){0}));
          ref_set(udt, want[2], i * C + l, ref_op(un, dt, udt, ref_get(dt, tr.h, l), (hv){0}, (hv){0}));
        }
      int64_t as[3] = {N, 1, C}, bs[3] = {1, B, C}, zs[2] = {N, 1}, ws[2] = {1, C}, rs[1] = {C}, os[3] = {N, B, C},
              ps[2] = {N, C};
      ic_tensor in[5] = {{ta.d, dt, 3, as, NULL}, {tb.d, dt, 3, bs, NULL}, {tz.d, dt, 2, zs, NULL}, {tw.d, dt, 2, ws, NULL},
                         {tr.d, dt, 1, rs, NULL}};
      ic_tensor out[3] = {{NULL, dt, 3, os, NULL}, {NULL, dt, 2, ps, NULL}, {NULL, udt, 2, ps, NULL}};
      char what[80];
      snprintf(what, sizeof what, "broadcasts %s [%lld, %lld, %lld]", ic_dtype_name(dt), (long long)N, (long long)B,
               (long long)C);
      run_both(g, in, 5, 3, out, no, want, 0, 0.0, what);
      for (int o = 0; o < 3; o++) free(want[o]);
      free_tensor(&ta);
      free_tensor(&tb);
      free_tensor(&tz);
      free_tensor(&tw);
      free_tensor(&tr);
      ic_graph_destroy(g);
    }
  }
}
END_TEST

/* Transposes of constant shapes, so the strides are known and 1- and 2-byte loads are
 * read in 16-byte vectors along p into a storage-bit tile (64 x 128, swizzled chunks on
 * cuda): every dtype, a 3-D permute (0, 2, 1) plus a transposed add, over shapes with
 * whole tiles, a partial vector along p (70 rows) and partial tiles both ways. Against
 * host references; eager == fused bit for bit. */
START_TEST(test_transposes_constant_shapes) {
  static const int64_t sizes[][2] = {{64, 128}, {70, 200}, {129, 300}};
  for (size_t di = 0; di < (sizeof all_dtypes / sizeof *all_dtypes); di++) {
    ic_dtype dt = all_dtypes[di];
    const size_t es = ic_dtype_size(dt);
    ic_op op = accepts(IC_OP_ADD, dt) ? IC_OP_ADD : IC_OP_BITWISE_XOR;
    for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++) {
      const int64_t R = sizes[si][0], C = sizes[si][1];
      ic_graph *g;
      IC_OK_OR_FAIL(ic_graph_create(&g));
      ic_value x = ic_graph_input(g, "x", dt, 3, (ic_dim[]){2, R, C}, IC_LAYOUT_CONTIGUOUS);
      ic_value a = ic_graph_input(g, "a", dt, 2, (ic_dim[]){C, R}, IC_LAYOUT_CONTIGUOUS);
      IC_OK_OR_FAIL(ic_graph_output(g, "u", ic_graph_permute(g, x, 3, (int32_t[]){0, 2, 1})));
      IC_OK_OR_FAIL(ic_graph_output(g, "t", ic_graph_binary(g, op, a, ic_graph_permute(g, ic_graph_slice(g, x, 0, 1, 2, 1), 3, (int32_t[]){0, 2, 1}))));
      host_tensor tx = make_random(dt, 2 * R * C), ta = make_random(dt, C * R);
      int64_t no[2] = {2 * C * R, C * R};
      void *want[2] = {malloc((size_t)no[0] * es + 1), malloc((size_t)no[1] * es + 1)};
      for (int64_t h = 0; h < 2; h++)
        for (int64_t j = 0; j < C; j++)
          for (int64_t i = 0; i < R; i++) ref_set(dt, want[0], (h * C + j) * R + i, ref_get(dt, tx.h, (h * R + i) * C + j));
      for (int64_t j = 0; j < C; j++)
        for (int64_t i = 0; i < R; i++)
          ref_set(dt, want[1], j * R + i, ref_op(op, dt, dt, ref_get(dt, ta.h, j * R + i), ref_get(dt, tx.h, (R + i) * C + j), (hv){0}));
      int64_t xs[3] = {2, R, C}, as[2] = {C, R}, us[3] = {2, C, R}, ts[3] = {1, C, R};
      ic_tensor in[2] = {{tx.d, dt, 3, xs, NULL}, {ta.d, dt, 2, as, NULL}};
      ic_tensor out[2] = {{NULL, dt, 3, us, NULL}, {NULL, dt, 3, ts, NULL}};
      char what[64];
      snprintf(what, sizeof what, "constant transposes %s [%lld, %lld]", ic_dtype_name(dt), (long long)R, (long long)C);
      run_both(g, in, 2, 2, out, no, want, 0, 0.0, what);
      free(want[0]);
      free(want[1]);
      free_tensor(&tx);
      free_tensor(&ta);
      ic_graph_destroy(g);
    }
  }
}
END_TEST

/* Transposed reads (the tiled strategy on cuda) of every dtype: a + b^T with b a strided
 * view at a misaligned base, and a 3-D permute (0, 2, 1), over sizes around the 64-wide
 * tiles (empty, 1, odd, prime, exact); then a RoPE-like concat of a computed half and a
 * slice, with the halves on and off vector boundaries. Against host references; eager ==
 * fused bit for bit. */
START_TEST(test_transposes_and_rope) {
  static const int64_t sizes[][2] = {{0, 5}, {1, 1}, {7, 65}, {64, 64}, {97, 131}, {300, 33}};
  for (size_t di = 0; di < (sizeof all_dtypes / sizeof *all_dtypes); di++) {
    ic_dtype dt = all_dtypes[di];
    const size_t es = ic_dtype_size(dt);
    ic_op op = accepts(IC_OP_ADD, dt) ? IC_OP_ADD : IC_OP_BITWISE_XOR;
    ic_graph *g;
    IC_OK_OR_FAIL(ic_graph_create(&g));
    ic_dim r = ic_graph_symbol(g, "r"), c = ic_graph_symbol(g, "c");
    ic_value a = ic_graph_input(g, "a", dt, 2, (ic_dim[]){r, c}, IC_LAYOUT_CONTIGUOUS);
    ic_value b = ic_graph_input(g, "b", dt, 2, (ic_dim[]){c, r}, IC_LAYOUT_INNER_CONTIGUOUS);
    ic_value x = ic_graph_input(g, "x", dt, 3, (ic_dim[]){2, r, c}, IC_LAYOUT_CONTIGUOUS);
    IC_OK_OR_FAIL(ic_graph_output(g, "t", ic_graph_binary(g, op, a, ic_graph_permute(g, b, 2, (int32_t[]){1, 0}))));
    IC_OK_OR_FAIL(ic_graph_output(g, "u", ic_graph_permute(g, x, 3, (int32_t[]){0, 2, 1})));
    for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++) {
      const int64_t R = sizes[si][0], C = sizes[si][1], ld = R + 3; /* b's row stride */
      host_tensor ta = make_random(dt, R * C), tx = make_random(dt, 2 * R * C);
      host_tensor tb = make_random(dt, C * ld + 1); /* b starts one element in: misaligned */
      int64_t no[2] = {R * C, 2 * C * R};
      void *want[2] = {malloc((size_t)no[0] * es + 1), malloc((size_t)no[1] * es + 1)};
      for (int64_t i = 0; i < R; i++)
        for (int64_t j = 0; j < C; j++)
          ref_set(dt, want[0], i * C + j, ref_op(op, dt, dt, ref_get(dt, ta.h, i * C + j), ref_get(dt, tb.h, 1 + j * ld + i), (hv){0}));
      for (int64_t h = 0; h < 2; h++)
        for (int64_t j = 0; j < C; j++)
          for (int64_t i = 0; i < R; i++) ref_set(dt, want[1], (h * C + j) * R + i, ref_get(dt, tx.h, (h * R + i) * C + j));
      int64_t as[2] = {R, C}, bs[2] = {C, R}, bst[2] = {ld, 1}, xs[3] = {2, R, C}, us[3] = {2, C, R};
      ic_tensor in[3] = {{ta.d, dt, 2, as, NULL}, {(char *)tb.d + es, dt, 2, bs, bst}, {tx.d, dt, 3, xs, NULL}};
      ic_tensor out[2] = {{NULL, dt, 2, as, NULL}, {NULL, dt, 3, us, NULL}};
      char what[64];
      snprintf(what, sizeof what, "transposes %s [%lld, %lld]", ic_dtype_name(dt), (long long)R, (long long)C);
      run_both(g, in, 3, 2, out, no, want, 0, 0.0, what);
      free(want[0]);
      free(want[1]);
      free_tensor(&ta);
      free_tensor(&tb);
      free_tensor(&tx);
    }
    ic_graph_destroy(g);

    /* RoPE-like: concat(-x[:, h:], x[:, :h]) * 2 + x, h = C / 2 */
    static const int64_t ropes[][2] = {{3, 16}, {5, 14}, {4, 128}, {1, 2}};
    ic_op neg = accepts(IC_OP_NEG, dt) ? IC_OP_NEG : IC_OP_LOGICAL_NOT;
    ic_op mix = accepts(IC_OP_ADD, dt) ? IC_OP_ADD : IC_OP_BITWISE_XOR;
    for (size_t ri = 0; ri < sizeof ropes / sizeof *ropes; ri++) {
      const int64_t R = ropes[ri][0], C = ropes[ri][1], H = C / 2;
      IC_OK_OR_FAIL(ic_graph_create(&g));
      ic_dim n = ic_graph_symbol(g, "n");
      ic_value xv = ic_graph_input(g, "x", dt, 2, (ic_dim[]){n, C}, IC_LAYOUT_CONTIGUOUS);
      ic_value halves[2] = {ic_graph_unary(g, neg, ic_graph_slice(g, xv, 1, H, C, 1)), ic_graph_slice(g, xv, 1, 0, H, 1)};
      ic_value rot = ic_graph_concat(g, 2, halves, 1);
      IC_OK_OR_FAIL(ic_graph_output(g, "y", ic_graph_binary(g, mix, rot, xv)));
      ic_program *p;
      IC_OK_OR_FAIL(compile_for_backend(g, &p));
      ck_assert_int_eq(ic_program_kernel_count(p), 1); /* the negated half computed in the concat's kernel */
      ic_program_release(p);
      host_tensor tx = make_random(dt, R * C);
      int64_t no = R * C;
      void *want = malloc((size_t)no * es + 1);
      for (int64_t i = 0; i < R; i++)
        for (int64_t j = 0; j < C; j++) {
          hv v = j < C - H ? ref_op(neg, dt, dt, ref_get(dt, tx.h, i * C + H + j), (hv){0}, (hv){0})
                           : ref_get(dt, tx.h, i * C + j - (C - H));
          ref_set(dt, want, i * C + j, ref_op(mix, dt, dt, v, ref_get(dt, tx.h, i * C + j), (hv){0}));
        }
      int64_t xs[2] = {R, C};
      ic_tensor in = {tx.d, dt, 2, xs, NULL}, out = {NULL, dt, 2, xs, NULL};
      char what[64];
      snprintf(what, sizeof what, "rope %s [%lld, %lld]", ic_dtype_name(dt), (long long)R, (long long)C);
      run_both(g, &in, 1, 1, &out, &no, &want, 0, 0.0, what);
      free(want);
      free_tensor(&tx);
      ic_graph_destroy(g);
    }
  }
}
END_TEST

/* RoPE over a batch with cos and sin of [L, 64] shared by every batch row: past 256 KiB
 * (L = 1100 f32, 2100 bf16) the rows strategy takes 4 batch rows a thread and reads cos
 * and sin once for them, the concat's ranges once a slot; batches of 0, 1, 3 and 6 (a
 * last group of 2 rows). Against host references; eager == fused bit for bit. */
START_TEST(test_batched_rope) {
  static const ic_dtype dts[] = {IC_F32, IC_BF16};
  static const int64_t batches[] = {0, 1, 3, 6};
  enum { C = 64, H = C / 2 };
  for (size_t di = 0; di < sizeof dts / sizeof *dts; di++) {
    ic_dtype dt = dts[di];
    const size_t es = ic_dtype_size(dt);
    const int64_t L = dt == IC_F32 ? 1100 : 2100;
    ic_graph *g;
    IC_OK_OR_FAIL(ic_graph_create(&g));
    ic_dim n = ic_graph_symbol(g, "n");
    ic_value x = ic_graph_input(g, "x", dt, 3, (ic_dim[]){n, L, C}, IC_LAYOUT_CONTIGUOUS);
    ic_value cs = ic_graph_input(g, "cos", dt, 2, (ic_dim[]){L, C}, IC_LAYOUT_CONTIGUOUS);
    ic_value sn = ic_graph_input(g, "sin", dt, 2, (ic_dim[]){L, C}, IC_LAYOUT_CONTIGUOUS);
    ic_value halves[2] = {ic_graph_unary(g, IC_OP_NEG, ic_graph_slice(g, x, 2, H, C, 1)), ic_graph_slice(g, x, 2, 0, H, 1)};
    ic_value rot = ic_graph_concat(g, 2, halves, 2);
    IC_OK_OR_FAIL(ic_graph_output(g, "y", ic_graph_binary(g, IC_OP_ADD, ic_graph_binary(g, IC_OP_MUL, x, cs),
                                                          ic_graph_binary(g, IC_OP_MUL, rot, sn))));
    host_tensor tc = make_random(dt, L * C), ts = make_random(dt, L * C);
    for (size_t bi = 0; bi < sizeof batches / sizeof *batches; bi++) {
      const int64_t B = batches[bi], no = B * L * C;
      host_tensor tx = make_random(dt, no);
      void *want = malloc((size_t)no * es + 1);
      for (int64_t i = 0; i < no; i++) {
        int64_t j = i % C, lc = i % (L * C);
        hv r = j < H ? ref_op(IC_OP_NEG, dt, dt, ref_get(dt, tx.h, i + H), (hv){0}, (hv){0}) : ref_get(dt, tx.h, i - H);
        hv a = ref_op(IC_OP_MUL, dt, dt, ref_get(dt, tx.h, i), ref_get(dt, tc.h, lc), (hv){0});
        hv b = ref_op(IC_OP_MUL, dt, dt, r, ref_get(dt, ts.h, lc), (hv){0});
        ref_set(dt, want, i, ref_op(IC_OP_ADD, dt, dt, a, b, (hv){0}));
      }
      int64_t xs[3] = {B, L, C}, cshape[2] = {L, C};
      ic_tensor in[3] = {{tx.d, dt, 3, xs, NULL}, {tc.d, dt, 2, cshape, NULL}, {ts.d, dt, 2, cshape, NULL}};
      ic_tensor out = {NULL, dt, 3, xs, NULL};
      char what[64];
      snprintf(what, sizeof what, "batched rope %s [%lld, %lld, %d]", ic_dtype_name(dt), (long long)B, (long long)L, C);
      run_both(g, in, 3, 1, &out, (int64_t[]){no}, &want, 0, 0.0, what);
      free(want);
      free_tensor(&tx);
    }
    free_tensor(&tc);
    free_tensor(&ts);
    ic_graph_destroy(g);
  }
}
END_TEST

/* Adds every case to s, each a test case of its own (check_main.h: ctest runs them in
 * parallel), with the backend's fixture. */
static void pointwise_add_cases(Suite *s, SFun setup, SFun teardown) {
  CHECK_CASE(s, test_unary_ops_first_dtypes, setup, teardown);
  CHECK_CASE(s, test_unary_ops_other_dtypes, setup, teardown);
  CHECK_CASE(s, test_binary_ops_broadcast, setup, teardown);
  CHECK_CASE(s, test_ternary_ops, setup, teardown);
  CHECK_CASE(s, test_where_and_casts, setup, teardown);
  CHECK_CASE(s, test_clamped_fp8_casts, setup, teardown);
  CHECK_CASE(s, test_chain_eager_equals_fused, setup, teardown);
  CHECK_CASE(s, test_layouts_and_alignment, setup, teardown);
  CHECK_CASE(s, test_views, setup, teardown);
  CHECK_CASE(s, test_slice_concat_pad, setup, teardown);
  CHECK_CASE(s, test_transposes_and_rope, setup, teardown);
  CHECK_CASE(s, test_transposes_constant_shapes, setup, teardown);
  CHECK_CASE(s, test_write_dominated_broadcasts, setup, teardown);
  CHECK_CASE(s, test_batched_rope, setup, teardown);
  CHECK_CASE(s, test_symbolic_sizes_and_allocated_outputs, setup, teardown);
  CHECK_CASE(s, test_run_errors_launch_nothing, setup, teardown);
}

#endif
