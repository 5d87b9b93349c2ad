/* GPU: inline PTX (issue 13). Every case of tests/asm_cases.h over symbolic rows (0, 1,
 * 3 and 129 rows of 7 and 64: pack tails, vector and scalar paths) against its host
 * reference bit for bit, fused and eager equal bit for bit; broadcast, transposed,
 * scalar and 4-d inputs; one compile for sizes 50, 100 and 200; an asm mul then an asm
 * add fused as eager runs them; the FP8 packing between ordinary ops. Outputs are
 * poisoned first. Exits 77 without a GPU. */
#include <math.h>
#include <string.h>

#include "asm_cases.h"
#include "check_main.h"
#include "gpu_harness.h"

static ic_context *ctx;
static uint64_t seed = 0x5851f42d4c957f2dull;

static void setup(void) { IC_OK_OR_FAIL(ic_context_create(NULL, &ctx)); }

static void teardown(void) {
  ic_context_destroy(ctx);
  ctx = NULL;
}

typedef struct tensor {
  ic_dtype dt;
  int32_t ndim;
  int64_t shape[IC_MAX_DIMS];
  const int64_t *strides;
  void *host;
  int64_t storage; /* elements */
} tensor;

static int64_t numel(const tensor *t) {
  int64_t n = 1;
  for (int32_t d = 0; d < t->ndim; d++) n *= t->shape[d];
  return n;
}

/* Random values of dt: floats in [-4, 4] (scale: wider), integers over their range. */
static void *random_host(ic_dtype dt, int64_t n, double scale) {
  void *h = malloc((size_t)(n ? n : 1) * ic_dtype_size(dt));
  ck_assert_ptr_nonnull(h);
  for (int64_t i = 0; i < n; i++) {
    hv v = ref_random(dt, &seed);
    if (ref_is_float(dt)) v.f = ref_round(dt, (float)((double)(ref_rand(&seed) % 2000001) / 250000.0 - 4.0) * (float)scale);
    ref_set(dt, h, i, v);
  }
  return h;
}

/* Runs p on inputs ins; outputs (their dtypes and shapes in outs, host storage filled). */
static void run(ic_program *p, tensor *ins, int32_t nin, tensor *outs, int32_t nout) {
  ic_tensor ti[8], to[4];
  void *din[8], *dout[4];
  for (int32_t k = 0; k < nin; k++) {
    din[k] = gpu_upload(ctx, ins[k].host, (size_t)ins[k].storage * ic_dtype_size(ins[k].dt));
    ti[k] = (ic_tensor){din[k], ins[k].dt, ins[k].ndim, ins[k].shape, ins[k].strides};
  }
  for (int32_t o = 0; o < nout; o++) {
    size_t bytes = (size_t)numel(&outs[o]) * ic_dtype_size(outs[o].dt);
    dout[o] = gpu_poisoned(ctx, bytes);
    to[o] = (ic_tensor){dout[o], outs[o].dt, outs[o].ndim, outs[o].shape, NULL};
  }
  ic_status st = ic_program_run(p, ti, nin, to, nout, NULL);
  ck_assert_msg(st == IC_OK, "run: %s", ic_last_error());
  for (int32_t o = 0; o < nout; o++) {
    free(outs[o].host);
    outs[o].host = gpu_download(ctx, dout[o], (size_t)numel(&outs[o]) * ic_dtype_size(outs[o].dt));
    IC_OK_OR_FAIL(ic_free(ctx, dout[o]));
  }
  for (int32_t k = 0; k < nin; k++) IC_OK_OR_FAIL(ic_free(ctx, din[k]));
}

static ic_program *compile(const ic_graph *g, ic_compile_mode mode) {
  ic_compile_options o = {.struct_size = sizeof o, .mode = mode, .flags = IC_COMPILE_STRICT};
  ic_program *p = NULL;
  ic_status st = ic_compile(ctx, g, &o, &p);
  ck_assert_msg(st == IC_OK, "compile: %s", ic_last_error());
  return p;
}

static void expect_bits(const char *what, ic_dtype dt, const void *got, const void *want, int64_t n) {
  size_t es = ic_dtype_size(dt);
  for (int64_t i = 0; i < n; i++)
    if (memcmp((const char *)got + i * (int64_t)es, (const char *)want + i * (int64_t)es, es) != 0)
      ck_abort_msg("%s: element %lld: got %.9g, want %.9g", what, (long long)i, ref_show(dt, ref_get(dt, got, i)),
                   ref_show(dt, ref_get(dt, want, i)));
}

/* Case c over [rows, d] inputs (rows symbolic): fused against the reference, eager
 * against fused; one compile for every row count. */
static void check_asm_case(const asm_case *c, int64_t d, double scale) {
  ic_graph *g;
  IC_OK_OR_FAIL(ic_graph_create(&g));
  ic_dim n = ic_graph_symbol(g, "n");
  ic_value xs[3], ys[2];
  for (int32_t k = 0; k < c->nin; k++) {
    char name[16];
    snprintf(name, sizeof name, "x%d", (int)k);
    xs[k] = ic_graph_input(g, name, c->in[k], 2, (ic_dim[]){n, d}, IC_LAYOUT_CONTIGUOUS);
  }
  IC_OK_OR_FAIL(ac_build(g, c, xs, ys));
  for (int32_t o = 0; o < c->nout; o++) {
    char name[16];
    snprintf(name, sizeof name, "y%d", (int)o);
    IC_OK_OR_FAIL(ic_graph_output(g, name, ys[o]));
  }
  ic_program *fused = compile(g, IC_MODE_FUSED), *eager = compile(g, IC_MODE_EAGER);
  static const int64_t row_counts[] = {0, 1, 3, 129};
  for (size_t ri = 0; ri < sizeof row_counts / sizeof row_counts[0]; ri++) {
    int64_t rows = row_counts[ri];
    tensor ins[3], outs[2] = {{0}}, eouts[2] = {{0}};
    const void *in_host[3];
    void *want[2];
    for (int32_t k = 0; k < c->nin; k++) {
      ins[k] = (tensor){.dt = c->in[k], .ndim = 2, .shape = {rows, d}, .storage = rows * d};
      ins[k].host = random_host(c->in[k], rows * d, scale);
      in_host[k] = ins[k].host;
    }
    for (int32_t o = 0; o < c->nout; o++) {
      outs[o] = eouts[o] = (tensor){.dt = c->out[o], .ndim = 2, .shape = {rows, d}};
      want[o] = calloc((size_t)(rows * d + 1), ic_dtype_size(c->out[o]));
    }
    ac_reference(c, rows, d, in_host, want);
    run(fused, ins, c->nin, outs, c->nout);
    run(eager, ins, c->nin, eouts, c->nout);
    for (int32_t o = 0; o < c->nout; o++) {
      char what[128];
      snprintf(what, sizeof what, "%s, output %d, [%lld, %lld], fused", c->name, (int)o, (long long)rows, (long long)d);
      expect_bits(what, c->out[o], outs[o].host, want[o], rows * d);
      snprintf(what, sizeof what, "%s, output %d, [%lld, %lld], eager vs fused", c->name, (int)o, (long long)rows,
               (long long)d);
      expect_bits(what, c->out[o], eouts[o].host, outs[o].host, rows * d);
      free(outs[o].host);
      free(eouts[o].host);
      free(want[o]);
    }
    for (int32_t k = 0; k < c->nin; k++) free(ins[k].host);
  }
  ic_program_release(fused);
  ic_program_release(eager);
  ic_graph_destroy(g);
}

START_TEST(test_every_case) {
  for (int c = 0; c < AC_NCASES; c++) {
    double scale = strstr(ac_cases[c].name, "e4m3") ? 200.0 : 1.0; /* past 448: saturation */
    check_asm_case(&ac_cases[c], 7, scale);
    check_asm_case(&ac_cases[c], 64, scale);
  }
}
END_TEST

/* A graph of one case over given input tensors, fused against reference values want
 * (computed by the caller over the broadcast, contiguous operands) and eager. */
static void check_graph(const char *what, const ic_graph *g, tensor *ins, int32_t nin, tensor *out, const void *want) {
  ic_program *fused = compile(g, IC_MODE_FUSED), *eager = compile(g, IC_MODE_EAGER);
  tensor e = *out;
  e.host = NULL;
  run(fused, ins, nin, out, 1);
  run(eager, ins, nin, &e, 1);
  char w[128];
  snprintf(w, sizeof w, "%s: fused", what);
  expect_bits(w, out->dt, out->host, want, numel(out));
  snprintf(w, sizeof w, "%s: eager vs fused", what);
  expect_bits(w, out->dt, e.host, out->host, numel(out));
  free(e.host);
  ic_program_release(fused);
  ic_program_release(eager);
}

START_TEST(test_shapes) {
  /* broadcast: [4, 1] + [1, 8] */
  {
    ic_graph *g;
    IC_OK_OR_FAIL(ic_graph_create(&g));
    ic_value a = ic_graph_input(g, "a", IC_F32, 2, (ic_dim[]){4, 1}, IC_LAYOUT_CONTIGUOUS);
    ic_value b = ic_graph_input(g, "b", IC_F32, 2, (ic_dim[]){1, 8}, IC_LAYOUT_CONTIGUOUS), y;
    IC_OK_OR_FAIL(ac_build(g, &ac_cases[1], (ic_value[]){a, b}, &y));
    IC_OK_OR_FAIL(ic_graph_output(g, "y", y));
    tensor ins[2] = {{.dt = IC_F32, .ndim = 2, .shape = {4, 1}, .storage = 4}, {.dt = IC_F32, .ndim = 2, .shape = {1, 8}, .storage = 8}};
    ins[0].host = random_host(IC_F32, 4, 1.0);
    ins[1].host = random_host(IC_F32, 8, 1.0);
    float want[32];
    for (int i = 0; i < 4; i++)
      for (int j = 0; j < 8; j++) want[i * 8 + j] = ((float *)ins[0].host)[i] + ((float *)ins[1].host)[j];
    tensor out = {.dt = IC_F32, .ndim = 2, .shape = {4, 8}};
    check_graph("broadcast", g, ins, 2, &out, want);
    free(out.host);
    free(ins[0].host);
    free(ins[1].host);
    ic_graph_destroy(g);
  }
  /* transposed u8 [7, 5] -> [5, 7], pack 4 reversed (rows of 7: a padded tail group) */
  {
    ic_graph *g;
    IC_OK_OR_FAIL(ic_graph_create(&g));
    ic_value t = ic_graph_permute(g, ic_graph_input(g, "t", IC_U8, 2, (ic_dim[]){7, 5}, IC_LAYOUT_CONTIGUOUS), 2,
                                  (int32_t[]){1, 0}), y;
    IC_OK_OR_FAIL(ac_build(g, &ac_cases[14], &t, &y));
    IC_OK_OR_FAIL(ic_graph_output(g, "y", y));
    tensor in = {.dt = IC_U8, .ndim = 2, .shape = {7, 5}, .storage = 35};
    in.host = random_host(IC_U8, 35, 1.0);
    uint8_t tr[35], want[35];
    for (int i = 0; i < 5; i++)
      for (int j = 0; j < 7; j++) tr[i * 7 + j] = ((uint8_t *)in.host)[j * 5 + i];
    const void *src[1] = {tr};
    void *dst[1] = {want};
    ac_reference(&ac_cases[14], 5, 7, src, dst);
    tensor out = {.dt = IC_U8, .ndim = 2, .shape = {5, 7}};
    check_graph("transposed, pack 4", g, &in, 1, &out, want);
    free(out.host);
    free(in.host);
    ic_graph_destroy(g);
  }
  /* scalar, and 4-d with an odd last dim (pack 2 padding) */
  for (int four = 0; four < 2; four++) {
    ic_graph *g;
    IC_OK_OR_FAIL(ic_graph_create(&g));
    const asm_case *c = four ? &ac_cases[16] : &ac_cases[3];
    int32_t nd = four ? 4 : 0;
    int64_t shape[4] = {2, 3, 4, 5}, n = four ? 120 : 1;
    ic_value xs[3], y;
    tensor ins[3];
    const void *src[3];
    for (int32_t k = 0; k < c->nin; k++) {
      char name[16];
      snprintf(name, sizeof name, "x%d", (int)k);
      xs[k] = ic_graph_input(g, name, c->in[k], nd, (ic_dim[]){2, 3, 4, 5}, IC_LAYOUT_CONTIGUOUS);
      ins[k] = (tensor){.dt = c->in[k], .ndim = nd, .storage = n};
      memcpy(ins[k].shape, shape, sizeof shape);
      ins[k].host = random_host(c->in[k], n, four ? 200.0 : 1.0);
      src[k] = ins[k].host;
    }
    IC_OK_OR_FAIL(ac_build(g, c, xs, &y));
    IC_OK_OR_FAIL(ic_graph_output(g, "y", y));
    void *want = calloc((size_t)n, ic_dtype_size(c->out[0]));
    void *dst[1] = {want};
    ac_reference(c, four ? 24 : 1, four ? 5 : 1, src, dst);
    tensor out = {.dt = c->out[0], .ndim = nd};
    memcpy(out.shape, shape, sizeof shape);
    check_graph(four ? "4-d, pack 2" : "scalar", g, ins, c->nin, &out, want);
    free(out.host);
    free(want);
    for (int32_t k = 0; k < c->nin; k++) free(ins[k].host);
    ic_graph_destroy(g);
  }
}
END_TEST

/* Sizes 50, 100 and 200 through one program: one compile. */
START_TEST(test_symbolic_sizes_one_compile) {
  ic_graph *g;
  IC_OK_OR_FAIL(ic_graph_create(&g));
  ic_value x = ic_graph_input(g, "x", IC_F16, 1, (ic_dim[]){ic_graph_symbol(g, "n")}, IC_LAYOUT_CONTIGUOUS), y;
  IC_OK_OR_FAIL(ac_build(g, &ac_cases[13], (ic_value[]){x, x}, &y)); /* f16x2 add at pack 2 */
  IC_OK_OR_FAIL(ic_graph_output(g, "y", y));
  ic_program *p = compile(g, IC_MODE_FUSED);
  ic_cache_stats before = {.struct_size = sizeof before}, after = {.struct_size = sizeof after};
  IC_OK_OR_FAIL(ic_cache_stats_get(ctx, &before));
  static const size_t counts[] = {50, 100, 200};
  for (int i = 0; i < 3; i++) {
    int64_t n = (int64_t)counts[i];
    tensor in = {.dt = IC_F16, .ndim = 1, .shape = {n}, .storage = n};
    in.host = random_host(IC_F16, n, 1.0);
    tensor out = {.dt = IC_F16, .ndim = 1, .shape = {n}};
    void *want = calloc(counts[i], 2);
    const void *src[2] = {in.host, in.host};
    void *dst[1] = {want};
    ac_reference(&ac_cases[13], 1, n, src, dst);
    run(p, &in, 1, &out, 1);
    expect_bits("sizes", IC_F16, out.host, want, n);
    free(out.host);
    free(want);
    free(in.host);
  }
  IC_OK_OR_FAIL(ic_cache_stats_get(ctx, &after));
  ck_assert_int_eq(ic_program_kernel_count(p), 1);
  ck_assert(memcmp(&before, &after, sizeof before) == 0); /* running compiles nothing */
  ic_program_release(p);
  ic_graph_destroy(g);
}
END_TEST

/* mul.f32 then add.f32 (no .rn) as two asm nodes: one kernel fused, two eager. Equal
 * bits mean ptxas did not contract them into an fma (NVRTC's -fmad=false reaches it). */
START_TEST(test_asm_mul_add_not_contracted) {
  ic_graph *g;
  IC_OK_OR_FAIL(ic_graph_create(&g));
  ic_dim n = ic_graph_symbol(g, "n");
  ic_value a = ic_graph_input(g, "a", IC_F32, 1, (ic_dim[]){n}, IC_LAYOUT_CONTIGUOUS);
  ic_value b = ic_graph_input(g, "b", IC_F32, 1, (ic_dim[]){n}, IC_LAYOUT_CONTIGUOUS);
  ic_value c = ic_graph_input(g, "c", IC_F32, 1, (ic_dim[]){n}, IC_LAYOUT_CONTIGUOUS), t, y;
  const ic_dtype f32[] = {IC_F32};
  ic_inline_asm_desc mul = {.struct_size = sizeof mul, .asm_text = "mul.f32 $0, $1, $2;", .constraints = "=f,f,f",
                            .output_dtypes = f32, .is_pure = 1, .pack = 1};
  ic_inline_asm_desc add = mul;
  add.asm_text = "add.f32 $0, $1, $2;";
  IC_OK_OR_FAIL(ic_graph_inline_asm(g, &mul, 2, (ic_value[]){a, b}, 1, &t));
  IC_OK_OR_FAIL(ic_graph_inline_asm(g, &add, 2, (ic_value[]){t, c}, 1, &y));
  IC_OK_OR_FAIL(ic_graph_output(g, "y", y));
  int64_t len = 100003;
  tensor ins[3];
  for (int k = 0; k < 3; k++) {
    ins[k] = (tensor){.dt = IC_F32, .ndim = 1, .shape = {len}, .storage = len};
    ins[k].host = random_host(IC_F32, len, 1.0);
  }
  float *want = malloc(sizeof(float) * (size_t)len);
  int64_t differs_from_fma = 0;
  for (int64_t i = 0; i < len; i++) {
    volatile float p = ((float *)ins[0].host)[i] * ((float *)ins[1].host)[i];
    want[i] = p + ((float *)ins[2].host)[i];
    float f = fmaf(((float *)ins[0].host)[i], ((float *)ins[1].host)[i], ((float *)ins[2].host)[i]);
    differs_from_fma += memcmp(&f, &want[i], 4) != 0;
  }
  ck_assert_int_gt(differs_from_fma, len / 10); /* the data tells an fma apart */
  tensor out = {.dt = IC_F32, .ndim = 1, .shape = {len}};
  check_graph("asm mul then asm add", g, ins, 3, &out, want);
  free(out.host);
  free(want);
  for (int k = 0; k < 3; k++) free(ins[k].host);
  ic_graph_destroy(g);
}
END_TEST

/* The FP8 packing between ordinary ops (examples/graphs/asm_fp8.icg's shape): x * s ->
 * e4m3x2 at pack 2 -> values, one kernel, against cast_saturate's bits. */
START_TEST(test_fp8_between_ops) {
  ic_graph *g;
  IC_OK_OR_FAIL(ic_graph_create(&g));
  ic_dim n = ic_graph_symbol(g, "n");
  ic_value x = ic_graph_input(g, "x", IC_BF16, 2, (ic_dim[]){n, 1000}, IC_LAYOUT_CONTIGUOUS);
  ic_value s = ic_graph_input(g, "s", IC_F32, 2, (ic_dim[]){n, 1}, IC_LAYOUT_CONTIGUOUS);
  ic_value xs = ic_graph_binary(g, IC_OP_MUL, ic_graph_cast(g, x, IC_F32), s), q;
  IC_OK_OR_FAIL(ac_build(g, &ac_cases[16], &xs, &q));
  IC_OK_OR_FAIL(ic_graph_output(g, "q", q));
  IC_OK_OR_FAIL(ic_graph_output(g, "ref", ic_graph_cast_saturate(g, xs, IC_F8E4M3)));
  ic_program *fused = compile(g, IC_MODE_FUSED);
  ck_assert_int_eq(ic_program_kernel_count(fused), 1);
  int64_t rows = 37;
  tensor ins[2] = {{.dt = IC_BF16, .ndim = 2, .shape = {rows, 1000}, .storage = rows * 1000},
                   {.dt = IC_F32, .ndim = 2, .shape = {rows, 1}, .storage = rows}};
  ins[0].host = random_host(IC_BF16, rows * 1000, 1.0);
  ins[1].host = random_host(IC_F32, rows, 60.0);
  tensor outs[2] = {{.dt = IC_F8E4M3, .ndim = 2, .shape = {rows, 1000}}, {.dt = IC_F8E4M3, .ndim = 2, .shape = {rows, 1000}}};
  run(fused, ins, 2, outs, 2);
  expect_bits("e4m3x2 asm vs cast_saturate", IC_F8E4M3, outs[0].host, outs[1].host, rows * 1000);
  for (int o = 0; o < 2; o++) free(outs[o].host);
  for (int k = 0; k < 2; k++) free(ins[k].host);
  ic_program_release(fused);
  ic_graph_destroy(g);
}
END_TEST

/* Asm in reduction kernels (one kernel each): a row-wise FP8 quantization whose e4m3x2
 * asm follows the amax, against cast_saturate; a pack-2 f16x2 asm feeding a row sum over
 * rows of 1001 (a padded tail group), against the same sum of ordinary adds; eager ==
 * fused for both. */
START_TEST(test_asm_in_reductions) {
  ic_graph *g;
  IC_OK_OR_FAIL(ic_graph_create(&g));
  ic_dim n = ic_graph_symbol(g, "n");
  ic_value x = ic_graph_input(g, "x", IC_F32, 2, (ic_dim[]){n, 1000}, IC_LAYOUT_CONTIGUOUS);
  ic_value m = ic_graph_reduce(g, IC_REDUCE_MAX, ic_graph_unary(g, IC_OP_ABS, x), 1, (int32_t[]){1}, 1);
  ic_value v = ic_graph_binary(g, IC_OP_MUL, ic_graph_binary(g, IC_OP_DIV, x, m), ic_graph_constant(g, 500.0, IC_F32)), q;
  IC_OK_OR_FAIL(ac_build(g, &ac_cases[16], &v, &q));
  IC_OK_OR_FAIL(ic_graph_output(g, "q", q));
  IC_OK_OR_FAIL(ic_graph_output(g, "ref", ic_graph_cast_saturate(g, v, IC_F8E4M3)));
  ic_graph *h;
  IC_OK_OR_FAIL(ic_graph_create(&h));
  ic_dim hn = ic_graph_symbol(h, "n");
  ic_value y = ic_graph_input(h, "y", IC_F16, 2, (ic_dim[]){hn, 1001}, IC_LAYOUT_CONTIGUOUS), d;
  IC_OK_OR_FAIL(ac_build(h, &ac_cases[13], (ic_value[]){y, y}, &d));
  IC_OK_OR_FAIL(ic_graph_output(h, "s", ic_graph_reduce(h, IC_REDUCE_SUM, d, 1, (int32_t[]){1}, 0)));
  IC_OK_OR_FAIL(ic_graph_output(h, "ref", ic_graph_reduce(h, IC_REDUCE_SUM, ic_graph_binary(h, IC_OP_ADD, y, y), 1,
                                                          (int32_t[]){1}, 0)));
  for (int which = 0; which < 2; which++) {
    ic_graph *gg = which ? h : g;
    ic_program *fused = compile(gg, IC_MODE_FUSED), *eager = compile(gg, IC_MODE_EAGER);
    ck_assert_int_eq(ic_program_kernel_count(fused), 1);
    int64_t rows = 33, d1 = which ? 1001 : 1000;
    ic_dtype dt = which ? IC_F16 : IC_F32, odt = which ? IC_F16 : IC_F8E4M3;
    tensor in = {.dt = dt, .ndim = 2, .shape = {rows, d1}, .storage = rows * d1};
    in.host = random_host(dt, rows * d1, 1.0);
    tensor outs[2] = {{.dt = odt, .ndim = which ? 1 : 2, .shape = {rows, which ? 0 : d1}},
                      {.dt = odt, .ndim = which ? 1 : 2, .shape = {rows, which ? 0 : d1}}};
    tensor eouts[2] = {outs[0], outs[1]};
    run(fused, &in, 1, outs, 2);
    run(eager, &in, 1, eouts, 2);
    int64_t count = which ? rows : rows * d1;
    int32_t qi = ic_program_output_index(fused, which ? "s" : "q"), ri = ic_program_output_index(fused, "ref");
    expect_bits(which ? "f16x2 asm then a row sum, against adds" : "row-wise e4m3x2 asm, against cast_saturate", odt,
                outs[qi].host, outs[ri].host, count);
    expect_bits("asm in a reduction: eager vs fused", odt, eouts[qi].host, outs[qi].host, count);
    for (int o = 0; o < 2; o++) {
      free(outs[o].host);
      free(eouts[o].host);
    }
    free(in.host);
    ic_program_release(fused);
    ic_program_release(eager);
  }
  ic_graph_destroy(g);
  ic_graph_destroy(h);
}
END_TEST

int main(int argc, char **argv) {
  Suite *s = suite_create("gpu_asm");
  CHECK_CASE(s, test_every_case, setup, teardown);
  CHECK_CASE(s, test_shapes, setup, teardown);
  CHECK_CASE(s, test_symbolic_sizes_one_compile, setup, teardown);
  CHECK_CASE(s, test_asm_mul_add_not_contracted, setup, teardown);
  CHECK_CASE(s, test_fp8_between_ops, setup, teardown);
  CHECK_CASE(s, test_asm_in_reductions, setup, teardown);
  if (check_list_cases(argc, argv, s)) return 0;
  return gpu_run_suite(s);
}
