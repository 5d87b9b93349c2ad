/* CPU: graphs that random generation (tests/fuzz/fuzz_compile.c) found NVRTC rejecting,
 * each compiled fused and eager for sm_80 and sm_90a in strict mode (no eager fallback),
 * and run fused and eager on the ref backend on random inputs: the same bits, and for the
 * padded sum a plain C reference. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ic/ic.h"

#include "check_main.h"

#define OK(expr)                                                                     \
  do {                                                                               \
    ic_status st_ = (expr);                                                          \
    ck_assert_msg(st_ == IC_OK, "%s: %s: %s", #expr, ic_status_string(st_), ic_last_error()); \
  } while (0)

static const char *const k_archs[] = {"sm_80", "sm_90a"};

/* text compiles fused and eager for both archs, strict */
static void compiles_everywhere(const char *text) {
  ic_graph *g;
  OK(ic_graph_parse(text, &g));
  for (int a = 0; a < 2; a++) {
    ic_context_options co = {.struct_size = sizeof co, .arch = k_archs[a], .flags = IC_CONTEXT_COMPILE_ONLY};
    ic_context *ctx;
    OK(ic_context_create(&co, &ctx));
    for (int m = 0; m < 2; m++) {
      ic_compile_options o = {.struct_size = sizeof o, .mode = m ? IC_MODE_EAGER : IC_MODE_FUSED,
                              .flags = IC_COMPILE_STRICT | IC_COMPILE_NO_CACHE};
      ic_program *p = NULL;
      ic_status s = ic_compile(ctx, g, &o, &p);
      ck_assert_msg(s == IC_OK, "%s %s: %s\n%s", k_archs[a], m ? "eager" : "fused", ic_last_error(), text);
      ck_assert_int_ge(ic_program_kernel_count(p), 1);
      ic_program_release(p);
    }
    ic_context_destroy(ctx);
  }
  ic_graph_destroy(g);
}

static uint64_t g_state = 0x9e3779b97f4a7c15ull;
static double next_value(void) {
  g_state = g_state * 6364136223846793005ull + 1442695040888963407ull;
  return (double)((int64_t)(g_state >> 40) % 2001 - 1000) / 250.0;
}

/* Runs text fused and eager on ref with the one input x (dtype dt, shape) filled with
 * random values; requires bitwise equal outputs and returns output 0 of the fused run
 * (malloc'd) */
static void *ref_fused_eager(const char *text, ic_dtype dt, int32_t nd, const int64_t *shape, void **input) {
  ic_graph *g;
  OK(ic_graph_parse(text, &g));
  ic_context *ctx;
  OK(ic_context_create(NULL, &ctx));
  size_t n = 1;
  for (int32_t d = 0; d < nd; d++) n *= (size_t)shape[d];
  uint8_t *x = malloc(n * ic_dtype_size(dt));
  ck_assert_ptr_nonnull(x);
  for (size_t i = 0; i < n; i++) OK(ic_element_store(dt, next_value(), x + i * ic_dtype_size(dt)));
  ic_tensor in = {x, dt, nd, shape, NULL};
  ic_program *p[2];
  ic_tensor out[2][2];
  int32_t nout = 0;
  for (int m = 0; m < 2; m++) {
    ic_compile_options o = {.struct_size = sizeof o, .mode = m ? IC_MODE_EAGER : IC_MODE_FUSED, .flags = IC_COMPILE_STRICT,
                            .backend = "ref"};
    OK(ic_compile(ctx, g, &o, &p[m]));
    nout = ic_program_output_count(p[m]);
    ck_assert_int_le(nout, 2);
    for (int32_t i = 0; i < nout; i++) {
      ic_buffer_info bi;
      OK(ic_program_buffer(p[m], 1 + i, &bi));
      out[m][i] = (ic_tensor){NULL, bi.dtype, bi.ndim, NULL, NULL};
    }
    OK(ic_program_run(p[m], &in, 1, out[m], nout, NULL));
  }
  for (int32_t i = 0; i < nout; i++) {
    int32_t ond;
    int64_t oshape[IC_MAX_DIMS];
    OK(ic_program_output_shape(p[0], i, &in, &ond, oshape));
    size_t bytes = ic_dtype_size(out[0][i].dtype);
    for (int32_t d = 0; d < ond; d++) bytes *= (size_t)oshape[d];
    ck_assert_msg(memcmp(out[0][i].data, out[1][i].data, bytes) == 0, "output %d: fused and eager differ", (int)i);
  }
  void *result = out[0][0].data;
  for (int32_t i = 0; i < nout; i++) {
    if (i > 0) free(out[0][i].data);
    free(out[1][i].data);
  }
  ic_program_release(p[0]);
  ic_program_release(p[1]);
  ic_context_destroy(ctx);
  ic_graph_destroy(g);
  *input = x;
  return result;
}

/* A reduction over padded rows: the pad's range of the kept dim is a row value, and the
 * range of the reduced dim, an element value, reads it ("a scalar bool indexed") */
START_TEST(test_pad_then_sum_rows) {
  static const char text[] = "input x : f32[5, 5]\np = pad(x, [1, 0, 1, 0], 0)\ns = sum(p, [-1])\noutput s\n";
  compiles_everywhere(text);
  compiles_everywhere("input x : f16[7, 3]\np = pad(x, [2, 1, 1, 2], -1.5)\ns = max(p, [1], keepdim)\noutput s\n");
  compiles_everywhere("symbol n\ninput x : i32[n, 4]\np = pad(x, [1, 1, 0, 1], 3)\ns = sum(p, [1])\noutput s\n");
  void *x;
  float *s = ref_fused_eager(text, IC_F32, 2, (const int64_t[]){5, 5}, &x);
  const float *xf = x;
  /* row i of the pad is [0, x[i-1][0..4]] for i >= 1, zeros for i = 0; six elements sum
   * in order from -0 (one chunk, one lane) */
  for (int i = 0; i < 6; i++) {
    float ref = -0.0f;
    ref += 0.0f;
    for (int j = 0; j < 5; j++) ref += i ? xf[(i - 1) * 5 + j] : 0.0f;
    ck_assert_msg(memcmp(&ref, &s[i], 4) == 0, "row %d: %a vs %a", i, (double)s[i], (double)ref);
  }
  free(s);
  free(x);
}
END_TEST

/* Norms whose rows the reduction kernel keeps in registers: the element pass stores a
 * value from that cache, and must not rebuild it from operands it did not read */
START_TEST(test_layer_norm_whole_tensor) {
  static const char *const texts[] = {
      "input b : f16[1, 16]\ny = layer_norm(b, 2)\noutput y\n",
      "input b : f16[16, 1]\ny = layer_norm(b, 2)\noutput y\n",
      "input b : bf16[1, 16]\ny = layer_norm(b, 2)\noutput y\n",
      "input b : bf16[16, 1]\ny = layer_norm(b, 2)\noutput y\n",
  };
  for (size_t t = 0; t < sizeof texts / sizeof texts[0]; t++) {
    compiles_everywhere(texts[t]);
    const int64_t *shape = t % 2 ? (const int64_t[]){16, 1} : (const int64_t[]){1, 16};
    void *x;
    void *y = ref_fused_eager(texts[t], t < 2 ? IC_F16 : IC_BF16, 2, shape, &x);
    free(y);
    free(x);
  }
}
END_TEST

START_TEST(test_rms_norm_beside_any) {
  static const char text[] = "input x : bf16[4]\ny = rms_norm(x, 1)\na = any(y, [0])\noutput y\noutput a\n";
  compiles_everywhere(text);
  compiles_everywhere("input x : f16[3, 8]\ny = rms_norm(x, 1)\na = max(y, [1])\noutput y\noutput a\n");
  compiles_everywhere("input x : f8e4m3[5]\nw = cast(x, f32)\nr = rms_norm(w, 1)\ny = cast(r, f8e4m3)\nz = all(r, [0])\noutput y\noutput z\n");
  void *x;
  void *y = ref_fused_eager(text, IC_BF16, 1, (const int64_t[]){4}, &x);
  free(y);
  free(x);
}
END_TEST

int main(int argc, char **argv) {
  Suite *s = suite_create("strict_compile");
  TCase *tc = check_tcase("regressions");
  tcase_add_test(tc, test_pad_then_sum_rows);
  tcase_add_test(tc, test_layer_norm_whole_tensor);
  tcase_add_test(tc, test_rms_norm_beside_any);
  suite_add_tcase(s, tc);
  if (check_list_cases(argc, argv, s)) return 0;
  return check_run_suite(s);
}
