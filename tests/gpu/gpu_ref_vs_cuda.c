/* GPU: the ref backend against the cuda backend, every op and dtype, the same random
 * inputs (NaN, infinities, zeros, subnormals, integer extremes included): bitwise for
 * exactly rounded ops (NaNs compared bit for bit too: both give the canonical NaN of GPU
 * arithmetic), within the documented bound for transcendentals. Exits 77 without a GPU. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "gpu_harness.h"
#include "host_ref.h"

static ic_context *ctx;
static int mismatches;

static void setup(void) { IC_OK_OR_FAIL(ic_context_create(NULL, &ctx)); }
static void teardown(void) { ic_context_destroy(ctx); }

#define dtypes ref_all_dtypes

static int arity(ic_op op) { return ic_op_arity(op); }

/* out = op(a, b, c...) over [n] (a is bool for where); NULL when the op does not take dt.
 * Inputs the op does not use stay inputs of the program. */
static ic_graph *op_graph(ic_op op, ic_dtype dt, ic_dtype cast_to, ic_dtype *out_dt) {
  ic_graph *g;
  IC_OK_OR_FAIL(ic_graph_create(&g));
  ic_dim n = ic_graph_symbol(g, "n");
  ic_value args[3] = {ic_graph_input(g, "a", op == IC_OP_WHERE ? IC_BOOL : dt, 1, &n, 0),
                      ic_graph_input(g, "b", dt, 1, &n, 0), ic_graph_input(g, "c", dt, 1, &n, 0)};
  ic_value v = op == IC_OP_CAST            ? ic_graph_cast(g, args[0], cast_to)
               : op == IC_OP_CAST_SATURATE ? ic_graph_cast_saturate(g, args[0], cast_to)
               : op == IC_OP_BITCAST       ? ic_graph_bitcast(g, args[0], cast_to)
                                           : ic_graph_op(g, op, arity(op), args);
  if (v == IC_INVALID_VALUE) {
    ic_graph_destroy(g);
    return NULL;
  }
  *out_dt = ic_graph_value_dtype(g, v);
  IC_OK_OR_FAIL(ic_graph_output(g, "out", v));
  return g;
}

static void compare_backends(ic_op op, ic_dtype dt, ic_dtype cast_to) {
  ic_dtype out_dt = IC_DTYPE_INVALID;
  ic_graph *g = op_graph(op, dt, cast_to, &out_dt);
  if (!g) return;
  enum { N = 20011 };
  ic_dtype in_dt[3] = {op == IC_OP_WHERE ? IC_BOOL : dt, dt, dt};
  ic_program *cuda, *ref;
  ic_compile_options ro = {.struct_size = sizeof ro, .backend = "ref"};
  IC_OK_OR_FAIL(ic_compile(ctx, g, NULL, &cuda));
  IC_OK_OR_FAIL(ic_compile(ctx, g, &ro, &ref));
  uint64_t seed = 0x5eed0000u + (uint64_t)op * 131 + (uint64_t)dt;
  void *host[3], *dev[3];
  int64_t shape[1] = {N};
  ic_tensor in_h[3], in_d[3];
  for (int i = 0; i < 3; i++) {
    size_t bytes = N * ic_dtype_size(in_dt[i]);
    host[i] = malloc(bytes);
    for (int64_t k = 0; k < N; k++) {
      hv v = ref_random(in_dt[i], &seed);
      if (i > 0 && in_dt[0] == in_dt[i] && k % 13 == 0) v = ref_get(in_dt[i], host[0], k); /* ties */
      ref_set(in_dt[i], host[i], k, v);
    }
    dev[i] = gpu_upload(ctx, host[i], bytes);
    in_h[i] = (ic_tensor){host[i], in_dt[i], 1, shape, NULL};
    in_d[i] = (ic_tensor){dev[i], in_dt[i], 1, shape, NULL};
  }
  size_t out_bytes = N * ic_dtype_size(out_dt);
  void *ref_out = malloc(out_bytes), *dev_out = gpu_poisoned(ctx, out_bytes);
  ic_tensor o_h = {ref_out, out_dt, 1, shape, NULL}, o_d = {dev_out, out_dt, 1, shape, NULL};
  IC_OK_OR_FAIL(ic_program_run(ref, in_h, 3, &o_h, 1, NULL));
  IC_OK_OR_FAIL(ic_program_run(cuda, in_d, 3, &o_d, 1, NULL));
  void *cuda_out = gpu_download(ctx, dev_out, out_bytes);
  int ulps = ref_exact(op) ? 0 : 4;
  double tol = ref_exact(op)        ? 0
               : out_dt == IC_F64  ? 1e-14
               : out_dt == IC_F32  ? 1e-6
               : out_dt == IC_F16  ? 1e-3
               : out_dt == IC_BF16 ? 1e-2
                                   : 5e-2;
  size_t es = ic_dtype_size(out_dt);
  for (int64_t k = 0; k < N; k++) {
    hv r = ref_get(out_dt, ref_out, k), c = ref_get(out_dt, cuda_out, k);
    /* f64 NaNs are "a NaN" (their bits are not specified); everything else bit for bit */
    bool nan64 = out_dt == IC_F64 && isnan(r.d) && isnan(c.d);
    bool same = ulps == 0 ? nan64 || memcmp((char *)ref_out + k * (int64_t)es, (char *)cuda_out + k * (int64_t)es, es) == 0
                          : ref_close(out_dt, c, r, ulps, tol);
    uint64_t rb = 0, cb = 0;
    memcpy(&rb, (char *)ref_out + k * (int64_t)es, es);
    memcpy(&cb, (char *)cuda_out + k * (int64_t)es, es);
    hv x = ref_get(in_dt[0], host[0], k);
    if (!same) {
      /* every failing op/dtype pair is reported, its first element; the test fails at the end */
      fprintf(stderr, "MISMATCH %s %s->%s element %lld (input %.17g): ref %.17g (%llx), cuda %.17g (%llx)\n", ic_op_name(op),
              ic_dtype_name(dt), ic_dtype_name(out_dt), (long long)k, ref_show(in_dt[0], x), ref_show(out_dt, r),
              (unsigned long long)rb, ref_show(out_dt, c), (unsigned long long)cb);
      mismatches++;
      break;
    }
  }
  for (int i = 0; i < 3; i++) {
    free(host[i]);
    ic_free(ctx, dev[i]);
  }
  free(ref_out);
  free(cuda_out);
  ic_free(ctx, dev_out);
  ic_program_release(cuda);
  ic_program_release(ref);
  ic_graph_destroy(g);
}

START_TEST(test_every_op_and_dtype) {
  for (int op = 0; op < IC_OP_COUNT; op++)
    for (size_t d = 0; d < (sizeof ref_all_dtypes / sizeof *ref_all_dtypes); d++) {
      if (op == IC_OP_CAST || op == IC_OP_CAST_SATURATE || op == IC_OP_BITCAST)
        for (size_t t = 0; t < (sizeof ref_all_dtypes / sizeof *ref_all_dtypes); t++) compare_backends((ic_op)op, dtypes[d], dtypes[t]);
      else compare_backends((ic_op)op, dtypes[d], IC_DTYPE_INVALID);
    }
  ck_assert_msg(mismatches == 0, "%d op/dtype pairs differ between cuda and ref (MISMATCH lines above)", mismatches);
}
END_TEST

int main(void) {
  Suite *s = suite_create("gpu_ref_vs_cuda");
  TCase *tc = check_tcase("ref_vs_cuda");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, test_every_op_and_dtype);
  suite_add_tcase(s, tc);
  return gpu_run_suite(s);
}
