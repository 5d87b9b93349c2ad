/* GPU: reductions (issue 12) on the cuda backend with device memory, through the shared
 * cases of tests/reduce_cases.h: every fused cuda result equals the ref backend's bit for
 * bit (the same graph compiled for both), the documented summation order's bits and the
 * float64 error bound; eager == fused bit for bit (for a subset: NVRTC time), two runs
 * give the same bits, outputs are poisoned first. Symbolic dims everywhere they can be,
 * so each dtype and axis set compiles once and runs at every size: rows of 16384, 262144
 * and 300000 (G = 2) elements, column reductions of [4096, 33], a middle axis of 1000,
 * full reductions of 10^6 elements. Exits 77 without a GPU. */
#include "gpu_harness.h"
#include "reduce_cases.h"

static void setup(void) {
  rc_backend = "cuda";
  rc_cross_ref = true;
  rc_eager = false;
  IC_OK_OR_FAIL(ic_context_create(NULL, &rc_ctx));
}

static void teardown(void) {
  ic_context_destroy(rc_ctx);
  rc_ctx = NULL;
}

/* The matrix over symbolic dims (rc_sym_cases), every op of the dtype in one graph: a
 * case a dtype, which ctest runs in parallel (two or four dtypes a case took 90-144 s
 * each beside the others on an H100, the suite's longest cases). */
#define GPU_MATRIX_CASE(name, dt) \
  START_TEST(test_matrix_##name) { rc_sym_matrix((const ic_dtype[]){dt}, 1, 1000000); } \
  END_TEST
GPU_MATRIX_CASE(f32, IC_F32)
GPU_MATRIX_CASE(f64, IC_F64)
GPU_MATRIX_CASE(f16, IC_F16)
GPU_MATRIX_CASE(bf16, IC_BF16)
GPU_MATRIX_CASE(f8e4m3, IC_F8E4M3)
GPU_MATRIX_CASE(i32, IC_I32)
GPU_MATRIX_CASE(i64, IC_I64)
GPU_MATRIX_CASE(u8, IC_U8)
GPU_MATRIX_CASE(i8, IC_I8)
GPU_MATRIX_CASE(bool, IC_BOOL)
GPU_MATRIX_CASE(u16, IC_U16)
GPU_MATRIX_CASE(u32, IC_U32)
GPU_MATRIX_CASE(u64, IC_U64)

/* eager == fused on cuda, bit for bit: f32, bf16 and i32 over the 1-d and 2-d sets. */
START_TEST(test_eager_equals_fused) {
  rc_eager = true;
  static const ic_dtype dts[] = {IC_F32, IC_BF16, IC_I32};
  for (int di = 0; di < 3; di++)
    for (int ci = 0; ci < 3; ci++) {
      const rc_sym_case *c = &rc_sym_cases[ci];
      for (int si = 0; si < c->nshapes; si++)
        rc_matrix_case(dts[di], c->ndim, c->shapes[si], &c->axes, c->keepdim, RS_SYMBOLIC, rc_all_ops());
    }
}
END_TEST

/* Transposed (strided) and expanded (broadcast) operands (constant shapes: a compile
 * each, so few dtypes). */
START_TEST(test_strided_and_broadcast) { rc_matrix_sources((const ic_dtype[]){IC_F32, IC_BF16, IC_BOOL}, 3, false); }
END_TEST

START_TEST(test_special_values) {
  rc_eager = true; /* one graph a dtype (n symbolic) */
  rc_specials(rc_dtypes, RC_NDTYPES);
}
END_TEST

/* One compile at several sizes (0 included); an empty max at run time is
 * IC_ERR_SHAPE_MISMATCH and writes nothing. */
START_TEST(test_symbolic_sizes) {
  static const ic_dtype dts[] = {IC_F32, IC_F8E4M3, IC_I32, IC_BOOL};
  for (int i = 0; i < 4; i++) rc_symbolic(dts[i]);
}
END_TEST

/* The documented order bit for bit on long single rows (G = 1, 2, 3). */
START_TEST(test_summation_order_long_rows) {
  rc_eager = true;
  rc_long_row(IC_F32, 262144, true);
  rc_long_row(IC_F32, 262145, true);
  rc_long_row(IC_F32, 300000, true);
  rc_long_row(IC_F32, 600000, true);
  rc_long_row(IC_F32, 4000000, false);
  rc_long_row(IC_F16, 300000, false);
  rc_long_row(IC_BF16, 300000, false);
}
END_TEST

/* Few columns over many rows as two kernels (a partial stage a round, a combine a column)
 * against the ref backend bit for bit: light accumulators of every kind; 4 rounds (split)
 * and 3 (not); G = 1 and 2 (300001 rows: a ragged last round). Symbolic sizes, whose
 * programs choose at run time: a length bound to 0 (sums) and 5 (the one kernel) and
 * 70001 (split); column counts bound to 300 (split) and 16500 (65 column blocks: the one
 * kernel); both bound to [3000, 70] (split). */
START_TEST(test_column_split) {
  static const struct { ic_dtype dt; ic_reduce_op op; } cases[] = {
      {IC_F32, IC_REDUCE_SUM}, {IC_BF16, IC_REDUCE_MEAN}, {IC_F16, IC_REDUCE_MAX}, {IC_F8E4M3, IC_REDUCE_MIN},
      {IC_I32, IC_REDUCE_MAX}, {IC_BOOL, IC_REDUCE_ANY}, {IC_U64, IC_REDUCE_MIN}};
  static const struct { int64_t rows, cols; int symbolic, kernels; } shapes[] = {
      {16384, 300, 0, 2},           {300001, 33, 0, 2},          {1024, 40, 0, 2},
      {768, 40, 0, 1},              {0, 40, RC_SYM_ROWS, 3},     {5, 300, RC_SYM_ROWS, 3},
      {70001, 33, RC_SYM_ROWS, 3},  {4096, 300, RC_SYM_COLS, 3}, {4096, 16500, RC_SYM_COLS, 3},
      {3000, 70, RC_SYM_ROWS | RC_SYM_COLS, 3}};
  for (int c = 0; c < RC_COUNT(cases); c++) {
    rc_eager = c < 2;
    for (int z = 0; z < RC_COUNT(shapes); z++)
      if (shapes[z].rows > 0 || cases[c].op == IC_REDUCE_SUM || cases[c].op == IC_REDUCE_ANY) /* an empty max is refused */
        rc_column_split_case(cases[c].dt, cases[c].op, shapes[z].rows, shapes[z].cols, shapes[z].symbolic, shapes[z].kernels);
  }
  rc_eager = false;
}
END_TEST

/* Few long rows as two kernels (a partial and a combine stage) against the ref backend
 * bit for bit: every kind of op and accumulator, prologue and epilogue row values, ties
 * across partials; rows of 1 to 2.1 million elements (G = 1 to 9), one and three rows. */
START_TEST(test_two_stage) {
  static const struct { ic_dtype dt; ic_reduce_op op; } cases[] = {
      {IC_F32, IC_REDUCE_SUM}, {IC_BF16, IC_REDUCE_MEAN}, {IC_F64, IC_REDUCE_PROD}, {IC_I32, IC_REDUCE_SUM},
      {IC_F32, IC_REDUCE_ARGMAX}, {IC_I32, IC_REDUCE_ARGMIN}, {IC_F16, IC_REDUCE_MAX}, {IC_BOOL, IC_REDUCE_ANY},
      {IC_U8, IC_REDUCE_ALL}, {IC_F8E4M3, IC_REDUCE_MIN}, {IC_U64, IC_REDUCE_MAX}, {IC_U32, IC_REDUCE_ARGMIN}};
  static const int64_t sizes[][2] = {{1, 1}, {3, 1001}, {1, 262144}, {3, 300001}, {1, 2100003}};
  for (int c = 0; c < RC_COUNT(cases); c++) {
    rc_eager = c < 2; /* eager == fused through the stages (NVRTC time: two cases) */
    for (int z = 0; z < RC_COUNT(sizes); z++) rc_two_stage_case(cases[c].dt, cases[c].op, sizes[z][0], sizes[z][1]);
  }
  rc_eager = false;
}
END_TEST

/* softmax, log_softmax, layer_norm (with and without weight and bias) and rms_norm in
 * f32 and bf16 (and f16, f64) against float64 references; sum then divide then multiply
 * back bit for bit. */
START_TEST(test_shorthands) {
  /* softmax and log_softmax call exp and log: CUDA's device math and the host's libm
   * differ by a few ulp (ic.h), so these results are held to the float64 references
   * and to eager == fused bit for bit, not to the ref backend's bits */
  bool cross = rc_cross_ref;
  rc_cross_ref = false;
  rc_eager = true;
  rc_shorthand_case(IC_F32, 7, 1000, false);
  rc_eager = false;
  rc_shorthand_case(IC_F32, 64, 4096, false);
  rc_shorthand_case(IC_BF16, 64, 4096, false);
  rc_shorthand_case(IC_BF16, 16, 8192, false); /* persistent rows of storage words (8 chunks a thread) */
  rc_shorthand_case(IC_BF16, 7, 1000, true);
  rc_shorthand_case(IC_F16, 7, 1000, false);
  rc_shorthand_case(IC_F64, 5, 3000, false);
  rc_shorthand_case(IC_F32, 3, 50000, false);
  /* rows cached partly in shared memory (codegen_reduce_rows.c, red_plan_smem_tier): two
   * blocks a multiprocessor (f32 rows of 32000, bf16 storage words of rows of 65531), one
   * (f64 rows of 40000; f32 rows of 50000 above) */
  rc_shorthand_case(IC_F32, 3, 32000, false);
  rc_shorthand_case(IC_BF16, 3, 65531, false);
  rc_shorthand_case(IC_F64, 2, 40000, false);
  /* rows of a cluster of CTAs joined through distributed shared memory (sm_90: 8 CTAs a
   * row of 262144 f32, 4 of 100003 f32 or 262144 bf16) */
  rc_shorthand_case(IC_F32, 2, 262144, false);
  rc_shorthand_case(IC_BF16, 2, 262144, false);
  /* rows too long for a lane group: a kernel a pass, each REDUCE's in two stages
   * (kir_passes_wanted), eager == fused */
  rc_eager = true;
  rc_shorthand_case(IC_F32, 2, 300000, false);
  rc_eager = false;
  rc_shorthand_case(IC_BF16, 1, 1000003, false);
  rc_cross_ref = cross;
  rc_eager = true;
  rc_passes_case(IC_F32, 2, 300000); /* a symbolic length: the passes, or the one kernel */
  rc_passes_case(IC_F32, 2, 1000);
  rc_passes_case(IC_BF16, 3, 4000000);
  rc_cross_ref = false;
  rc_softmax_axes_case(IC_F32);
  rc_softmax_axes_case(IC_BF16);
  rc_cross_ref = cross;
  rc_eager = true;
  rc_sum_divide_multiply_case(IC_F32, 64, 4096);
  rc_eager = false;
  rc_sum_divide_multiply_case(IC_BF16, 7, 1000);
  rc_sum_divide_multiply_case(IC_F32, 2, 300000);
  rc_sum_divide_multiply_case(IC_F32, 3, 100003); /* a cluster of 4 CTAs a row (sm_90) */
  rc_sum_divide_multiply_case(IC_BF16, 2, 262144);
  /* rows of 64 threads, a block each: 300 f32 (64 chunks), 4096 bf16 (64 threads of 8
   * lanes); a block of two such rows once combined both into the first row's value */
  rc_sum_divide_multiply_case(IC_F32, 7, 300);
  rc_sum_divide_multiply_case(IC_BF16, 6, 4096);
  /* column kernels with a prologue, a row value a column and element stores: both in one
   * kernel (two reductions: the heavy 8 x 2 layout) and each alone (the light 4 x 8
   * layout), f32, bf16 and f64, widths of whole and partial warps */
  rc_column_prologue_case(IC_F32, 300, 1024, 3);
  rc_column_prologue_case(IC_BF16, 9, 36, 3);
  rc_column_prologue_case(IC_F64, 17, 40, 3);
  rc_column_prologue_case(IC_F32, 5, 30, 3);
  rc_column_prologue_case(IC_F32, 300, 1024, 1);
  rc_column_prologue_case(IC_F32, 300, 1024, 2);
  rc_column_prologue_case(IC_BF16, 9, 36, 1);
  rc_column_prologue_case(IC_BF16, 9, 36, 2);
  rc_column_prologue_case(IC_F32, 5, 30, 2);
}
END_TEST

/* Column reductions of constant lengths: multiples of 64 (no ragged round: the kernel has
 * only its whole rounds, codegen_reduce_rounds.c) of one lane pass (64, 4096, 4160) and of two
 * (16384: 2048 chunks over 1024 lanes), and lengths with a ragged round (4100, 4040); a
 * sum alone (the light 4 x 8 layout) and every op in one graph (the heavy one), f32, bf16
 * and i32, bit for bit against the ref backend. */
START_TEST(test_column_lengths) {
  static const ic_dtype dts[] = {IC_F32, IC_BF16, IC_I32};
  static const int64_t shapes[][2] = {{64, 40}, {4096, 33}, {4160, 7}, {16384, 5}, {4100, 9}, {4040, 3}};
  static const rc_axes dim0 = {1, {0}};
  for (int di = 0; di < RC_COUNT(dts); di++)
    for (int si = 0; si < RC_COUNT(shapes); si++) {
      rc_matrix_case(dts[di], 2, shapes[si], &dim0, 0, RS_CONTIGUOUS, 1u); /* sum */
      rc_matrix_case(dts[di], 2, shapes[si], &dim0, 1, RS_CONTIGUOUS, rc_all_ops());
    }
}
END_TEST

/* g compiled three ways: p[0] fused and p[1] eager on cuda, both strict, p[2] on the ref
 * backend. The fused program is one kernel, which it returns (its index); for few rows of
 * a symbolic length it holds a kernel a pass beside it (max partial, combine, the element
 * stores: kir_passes_when), and the lengths these tests bind launch the one kernel, last. */
static int32_t rc_compile_three(const ic_graph *g, ic_program *p[3]) {
  const ic_compile_options opts[3] = {
      {.struct_size = sizeof(ic_compile_options), .flags = IC_COMPILE_STRICT},
      {.struct_size = sizeof(ic_compile_options), .mode = IC_MODE_EAGER, .flags = IC_COMPILE_STRICT},
      {.struct_size = sizeof(ic_compile_options), .backend = "ref"}};
  for (int v3 = 0; v3 < 3; v3++) IC_OK_OR_FAIL(ic_compile(rc_ctx, g, &opts[v3], &p[v3]));
  const int32_t kernels = ic_program_kernel_count(p[0]);
  ck_assert_msg(kernels == 1 || kernels == 4, "%d fused kernels", (int)kernels);
  return kernels - 1;
}

/* Runs p over inputs in (device memory, or host memory for the ref backend: host) and
 * returns its one output (dtype dt, 2-d shape, ob bytes) in host memory, poisoned first. */
static void *rc_run_one(ic_program *p, bool host, const ic_tensor *in, int32_t nin, ic_dtype dt, int64_t *shape, size_t ob) {
  void *dy = host ? malloc(ob) : gpu_poisoned(rc_ctx, ob);
  if (host) memset(dy, 0xA5, ob);
  ic_tensor out = {dy, dt, 2, shape, NULL};
  IC_OK_OR_FAIL(ic_program_run(p, in, nin, &out, 1, NULL));
  if (host) return dy;
  IC_OK_OR_FAIL(ic_stream_synchronize(rc_ctx, NULL));
  void *got = gpu_download(rc_ctx, dy, ob);
  IC_OK_OR_FAIL(ic_free(rc_ctx, dy));
  return got;
}

/* Narrow floats stored by a reduction's epilogue (y = cast(x * max|x|, dt), saturating or
 * not): values that overflow either sign, NaN, inf, ties; rows of 1000, 16 and 13 (vector
 * chunks and tails). The fused kernel stores one rounding's bits (pairs of f8e4m3 a cvt
 * on sm_89+), which must be the bits eager mode's pointwise cast kernel stores, and the
 * ref backend's: a negative overflow to f8e4m3 is the canonical NaN 0x7f, not 0xff. */
START_TEST(test_narrow_epilogue_stores) {
  static const ic_dtype dts[] = {IC_F8E4M3, IC_F8E5M2, IC_F16, IC_BF16};
  static const float pattern[] = {2.0f, -3.0f, 5.0f, 0.5f, -0.25f, 40.0f, -50.0f, 1.0f / 3.0f, NAN, -NAN, INFINITY,
                                  11.25f, -11.25f, 0.0f, -0.0f, 1e-3f};
  enum { ROWS = 5, NP = sizeof pattern / sizeof *pattern };
  static const int64_t cols_list[] = {1000, 16, 13, 1031}; /* 13: the element-by-element stores; 1031: shifted */
  for (size_t di = 0; di < sizeof dts / sizeof *dts; di++) {
    for (int sat = 0; sat < 2; sat++) {
      ic_dtype dt = dts[di];
      ic_graph *g;
      IC_OK_OR_FAIL(ic_graph_create(&g));
      ic_value x = ic_graph_input(g, "x", IC_F32, 2, (ic_dim[]){ROWS, ic_graph_symbol(g, "n")}, IC_LAYOUT_CONTIGUOUS);
      /* row 0 has a NaN and an inf: its max is NaN; the others are finite */
      ic_value m = ic_graph_reduce(g, IC_REDUCE_MAX, ic_graph_unary(g, IC_OP_ABS, x), 1, (int32_t[]){1}, 1);
      ic_value v = ic_graph_binary(g, IC_OP_MUL, x, m);
      IC_OK_OR_FAIL(ic_graph_output(g, "y", sat ? ic_graph_cast_saturate(g, v, dt) : ic_graph_cast(g, v, dt)));
      ic_program *p[3];
      const int32_t one = rc_compile_three(g, p);
      if (dt == IC_F8E4M3) /* the vector stores convert pairs (saturating: words of four) */
        ck_assert_ptr_nonnull(strstr(ic_program_kernel_source(p[0], one), sat ? "ic_satbits_f8e4m3x4(" : "ic_rndbits_f8e4m3x2("));
      for (size_t ci = 0; ci < sizeof cols_list / sizeof *cols_list; ci++) {
        const int64_t cols = cols_list[ci], n = ROWS * cols;
        float *hx = malloc(sizeof(float) * (size_t)n);
        for (int64_t i = 0; i < n; i++) {
          int64_t r = i / cols, c = i % cols;
          float f = pattern[(c * 7 + r) % NP];
          if (r > 0 && (f != f || f == INFINITY)) f = (float)(c % 9) - 4.0f; /* finite rows */
          hx[i] = f * (r == 2 ? 1e-3f : r == 3 ? 7.0f : 1.0f);
        }
        size_t ob = (size_t)n * ic_dtype_size(dt);
        void *dx = gpu_upload(rc_ctx, hx, sizeof(float) * (size_t)n);
        int64_t xs[2] = {ROWS, cols};
        void *got[3];
        for (int v3 = 0; v3 < 3; v3++) {
          ic_tensor in = {v3 == 2 ? (void *)hx : dx, IC_F32, 2, xs, NULL};
          got[v3] = rc_run_one(p[v3], v3 == 2, &in, 1, dt, xs, ob);
        }
        for (int v3 = 1; v3 < 3; v3++)
          for (size_t b = 0; b < ob; b++)
            ck_assert_msg(((unsigned char *)got[0])[b] == ((unsigned char *)got[v3])[b],
                          "%s %s, rows of %lld: byte %zu fused 0x%02x, %s 0x%02x", sat ? "cast_saturate" : "cast",
                          ic_dtype_name(dt), (long long)cols, b, ((unsigned char *)got[0])[b], v3 == 1 ? "eager" : "ref",
                          ((unsigned char *)got[v3])[b]);
        for (int v3 = 0; v3 < 3; v3++) free(got[v3]);
        IC_OK_OR_FAIL(ic_free(rc_ctx, dx));
        free(hx);
      }
      for (int v3 = 0; v3 < 3; v3++) ic_program_release(p[v3]);
      ic_graph_destroy(g);
    }
  }
}
END_TEST

/* y = x / max(w) over each row: the fused kernel divides each element by a row value,
 * eager mode's pointwise kernel by a per-row operand, the ref backend on the host; all
 * three must store the same bits. Row divisors: ordinary, awkward significands,
 * subnormal, +0, -0, inf, NaN, huge, negative, 98 (with x = 147 * 2^-149 the quotient is
 * a tie between two subnormals: RN_f32(x * RN_f64(1 / 98)) rounds it the wrong way,
 * which is why division by a row value is not done through an f64 reciprocal); x: random
 * bit patterns over every exponent (subnormals, zeros, infinities and NaN among them);
 * f32 and bf16 (computed in f32, rounded once); rows of 1000 and 13 (vector chunks and
 * element by element). */
START_TEST(test_division_by_row_values) {
  static const float divisors[] = {1.0f, 3.0f, 0x1.fffffep0f, 1e-40f, 0.0f, -0.0f, INFINITY, NAN, 3e38f, -5.0f, 7e-39f, 0.1f, 98.0f};
  enum { ROWS = sizeof divisors / sizeof *divisors };
  static const ic_dtype dts[] = {IC_F32, IC_BF16};
  static const int64_t cols_list[] = {1000, 13, 1031}; /* 1031: rows not aligned, whole chunks shifted */
  uint64_t seed = 0x5851f42d4c957f2dull;
  for (size_t di = 0; di < sizeof dts / sizeof *dts; di++) {
    ic_dtype dt = dts[di];
    ic_graph *g;
    IC_OK_OR_FAIL(ic_graph_create(&g));
    ic_dim n = ic_graph_symbol(g, "n");
    ic_value x = ic_graph_input(g, "x", dt, 2, (ic_dim[]){ROWS, n}, IC_LAYOUT_CONTIGUOUS);
    ic_value w = ic_graph_input(g, "w", dt, 2, (ic_dim[]){ROWS, n}, IC_LAYOUT_CONTIGUOUS);
    ic_value d = ic_graph_reduce(g, IC_REDUCE_MAX, w, 1, (int32_t[]){1}, 1);
    IC_OK_OR_FAIL(ic_graph_output(g, "y", ic_graph_binary(g, IC_OP_DIV, x, d)));
    ic_program *p[3];
    rc_compile_three(g, p);
    size_t es = ic_dtype_size(dt);
    for (size_t ci = 0; ci < sizeof cols_list / sizeof *cols_list; ci++) {
      const int64_t cols = cols_list[ci], count = ROWS * cols;
      unsigned char *hx = malloc(es * (size_t)count), *hw = malloc(es * (size_t)count);
      for (int64_t i = 0; i < count; i++) {
        int64_t r = i / cols, c = i % cols;
        seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
        uint32_t xb = (uint32_t)seed;
        if (c % 7 == 0) xb &= 0x807fffffu; /* subnormals and zeros */
        if (c % 11 == 3) xb = (c & 1 ? 0x80000000u : 0u) | 147u; /* 147 * 2^-149: / 98 is a tie */
        float wf = c == cols / 2 ? divisors[r] : -INFINITY; /* the row's max (a NaN row: NaN) */
        if (divisors[r] == 0.0f && signbit(divisors[r]) && c != cols / 2) wf = -0.0f; /* max of -0s: -0 */
        if (dt == IC_F32) {
          memcpy(hx + 4 * i, &xb, 4);
          memcpy(hw + 4 * i, &wf, 4);
        } else {
          uint32_t wb;
          memcpy(&wb, &wf, 4);
          uint16_t xh = (uint16_t)(xb >> 16), wh = (uint16_t)(wb >> 16); /* truncated: still of the kind */
          memcpy(hx + 2 * i, &xh, 2);
          memcpy(hw + 2 * i, &wh, 2);
        }
      }
      size_t ob = es * (size_t)count;
      void *dx = gpu_upload(rc_ctx, hx, ob), *dw = gpu_upload(rc_ctx, hw, ob);
      int64_t xs[2] = {ROWS, cols};
      void *got[3];
      for (int v3 = 0; v3 < 3; v3++) {
        bool ref = v3 == 2;
        ic_tensor in[2] = {{ref ? (void *)hx : dx, dt, 2, xs, NULL}, {ref ? (void *)hw : dw, dt, 2, xs, NULL}};
        got[v3] = rc_run_one(p[v3], ref, in, 2, dt, xs, ob);
      }
      for (int v3 = 1; v3 < 3; v3++)
        for (int64_t i = 0; i < count; i++)
          ck_assert_msg(memcmp((unsigned char *)got[0] + es * i, (unsigned char *)got[v3] + es * i, es) == 0,
                        "%s, rows of %lld: element %lld (row divisor %a) differs between fused and %s", ic_dtype_name(dt),
                        (long long)cols, (long long)i, (double)divisors[i / cols], v3 == 1 ? "eager" : "ref");
      for (int v3 = 0; v3 < 3; v3++) free(got[v3]);
      IC_OK_OR_FAIL(ic_free(rc_ctx, dx));
      IC_OK_OR_FAIL(ic_free(rc_ctx, dw));
      free(hx);
      free(hw);
    }
    for (int v3 = 0; v3 < 3; v3++) ic_program_release(p[v3]);
    ic_graph_destroy(g);
  }
}
END_TEST

/* Rows that are not aligned: constant odd and prime lengths (every row but the first
 * starts off a 16-byte boundary; whole chunks move shifted, ic_ld_shift), every op of
 * every dtype against the C references and the ref backend, bit for bit; then x / max(x)
 * over views whose data starts 1 or 3 elements past an aligned address (rows of a
 * symbolic length bound to 1024: the loads and the stores shifted), fused against eager
 * and ref, bit for bit. */
START_TEST(test_misaligned_rows) {
  static const ic_dtype dts[] = {IC_F32, IC_F64, IC_F16, IC_BF16, IC_F8E4M3, IC_I32, IC_I64, IC_U8, IC_I8, IC_BOOL};
  static const int64_t lens[] = {1031, 4095, 2053};
  static const rc_axes rows = {1, {1}};
  for (int di = 0; di < RC_COUNT(dts); di++)
    rc_matrix_case(dts[di], 2, (const int64_t[]){5, lens[di % 3]}, &rows, 1, RS_CONTIGUOUS, rc_all_ops());
  static const ic_dtype fdts[] = {IC_F32, IC_BF16, IC_F16};
  enum { ROWS = 6, COLS = 1024 };
  uint64_t seed = 0x9e3779b97f4a7c15ull;
  for (int di = 0; di < RC_COUNT(fdts); di++) {
    const ic_dtype dt = fdts[di];
    const size_t es = ic_dtype_size(dt), count = (size_t)ROWS * COLS, ob = es * count;
    ic_graph *g;
    IC_OK_OR_FAIL(ic_graph_create(&g));
    ic_value x = ic_graph_input(g, "x", dt, 2, (ic_dim[]){ROWS, ic_graph_symbol(g, "n")}, IC_LAYOUT_CONTIGUOUS);
    ic_value m = ic_graph_reduce(g, IC_REDUCE_MAX, x, 1, (int32_t[]){1}, 1);
    IC_OK_OR_FAIL(ic_graph_output(g, "y", ic_graph_binary(g, IC_OP_DIV, x, m)));
    ic_program *p[3];
    rc_compile_three(g, p);
    for (int shift = 1; shift <= 3; shift += 2) {
      unsigned char *hx = malloc(ob + 4 * es);
      for (size_t i = 0; i < count + 4; i++) {
        seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
        float f = (float)((double)(seed >> 11) * 0x1p-53 * 16.0 - 8.0);
        uint32_t b;
        memcpy(&b, &f, 4);
        if (dt == IC_F32) memcpy(hx + 4 * i, &b, 4);
        else {
          uint16_t h = dt == IC_BF16 ? (uint16_t)(b >> 16) : (uint16_t)(0x3c00u | (b & 0x3ffu) | ((b >> 16) & 0x8000u));
          memcpy(hx + 2 * i, &h, 2);
        }
      }
      void *dx = gpu_upload(rc_ctx, hx, ob + 4 * es);
      int64_t xs[2] = {ROWS, COLS};
      void *got[3];
      for (int v3 = 0; v3 < 3; v3++) {
        ic_tensor in = {v3 == 2 ? (void *)(hx + es * (size_t)shift) : (void *)((unsigned char *)dx + es * (size_t)shift), dt, 2, xs, NULL};
        got[v3] = rc_run_one(p[v3], v3 == 2, &in, 1, dt, xs, ob);
      }
      for (int v3 = 1; v3 < 3; v3++) {
        size_t b = 0;
        while (b < ob && ((unsigned char *)got[0])[b] == ((unsigned char *)got[v3])[b]) b++;
        ck_assert_msg(b == ob, "x / max(x) %s, a view %d elements in: byte %zu differs between fused and %s", ic_dtype_name(dt), shift,
                      b, v3 == 1 ? "eager" : "ref");
      }
      for (int v3 = 0; v3 < 3; v3++) free(got[v3]);
      IC_OK_OR_FAIL(ic_free(rc_ctx, dx));
      free(hx);
    }
    ck_assert_ptr_nonnull(strstr(ic_program_kernel_source(p[0], ic_program_kernel_count(p[0]) - 1), "ic_st_shift("));
    for (int v3 = 0; v3 < 3; v3++) ic_program_release(p[v3]);
    ic_graph_destroy(g);
  }
}
END_TEST

/* Statistics over dim 0 of tall matrices (sum, mean, var and std with corrections 0 and
 * 1): the var and std as a kernel a pass, each pass split in partials and combine where
 * few column blocks walk many rows; 1 to 4099 columns, constant and symbolic sizes, f32
 * and bf16, against the C references and the ref backend, bit for bit. */
START_TEST(test_tall_column_statistics) {
  static const ic_dtype dts[] = {IC_F32, IC_BF16};
  static const int64_t shapes[][2] = {{100003, 1}, {65536, 7}, {20011, 1000}, {5003, 4099}};
  static const rc_axes dim0 = {1, {0}};
  const uint32_t stats = 1u << 0 | 1u << 1 | 1u << 10 | 1u << 11 | 1u << 12 | 1u << 13;
  for (int di = 0; di < RC_COUNT(dts); di++)
    for (int si = 0; si < RC_COUNT(shapes); si++)
      rc_matrix_case(dts[di], 2, shapes[si], &dim0, si & 1, si < 2 ? RS_SYMBOLIC : RS_CONTIGUOUS, stats);
}
END_TEST

int main(int argc, char **argv) {
  Suite *s = suite_create("gpu_reduce");
  CHECK_CASE(s, test_matrix_f32, setup, teardown);
  CHECK_CASE(s, test_matrix_f64, setup, teardown);
  CHECK_CASE(s, test_matrix_f16, setup, teardown);
  CHECK_CASE(s, test_matrix_bf16, setup, teardown);
  CHECK_CASE(s, test_matrix_f8e4m3, setup, teardown);
  CHECK_CASE(s, test_matrix_i32, setup, teardown);
  CHECK_CASE(s, test_matrix_i64, setup, teardown);
  CHECK_CASE(s, test_matrix_u8, setup, teardown);
  CHECK_CASE(s, test_matrix_i8, setup, teardown);
  CHECK_CASE(s, test_matrix_bool, setup, teardown);
  CHECK_CASE(s, test_matrix_u16, setup, teardown);
  CHECK_CASE(s, test_matrix_u32, setup, teardown);
  CHECK_CASE(s, test_matrix_u64, setup, teardown);
  CHECK_CASE(s, test_eager_equals_fused, setup, teardown);
  CHECK_CASE(s, test_strided_and_broadcast, setup, teardown);
  CHECK_CASE(s, test_special_values, setup, teardown);
  CHECK_CASE(s, test_symbolic_sizes, setup, teardown);
  CHECK_CASE(s, test_summation_order_long_rows, setup, teardown);
  CHECK_CASE(s, test_two_stage, setup, teardown);
  CHECK_CASE(s, test_column_split, setup, teardown);
  CHECK_CASE(s, test_shorthands, setup, teardown);
  CHECK_CASE(s, test_column_lengths, setup, teardown);
  CHECK_CASE(s, test_narrow_epilogue_stores, setup, teardown);
  CHECK_CASE(s, test_division_by_row_values, setup, teardown);
  CHECK_CASE(s, test_misaligned_rows, setup, teardown);
  CHECK_CASE(s, test_tall_column_statistics, setup, teardown);
  if (check_list_cases(argc, argv, s)) return 0;
  return gpu_run_suite(s);
}
