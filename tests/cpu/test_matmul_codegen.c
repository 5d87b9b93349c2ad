/* The contraction generator (lib/backend/cuda/codegen_matmul*.c) on kernels built by hand:
 * every tile, operand dtype, layout of A and B, with and without a prologue and an
 * epilogue, compiled by NVRTC for sm_80 and sm_90a with ptxas strict (no spills, no C7xxx
 * warnings). Kernels compile in batches (one NVRTC call a batch: a prelude and a start-up
 * for many kernels). */
#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cuda/codegen_matmul.h"
#include "check_main.h"
#include "cuda/cuda_api.h"
#include "kir/kir.h"

typedef struct mm_case {
  ic_dtype dt;
  bool tf32;
  bool a_col, b_col;       /* A stored [K, M] (column-major), B stored [N, K] */
  bool prologue, epilogue; /* neg(A), B * scale[n]; + bias[n], relu, a second transposed store */
  bool batch;              /* a leading batch dim (B broadcast along it) */
  bool strided;            /* A's strides are run-time parameters */
  bool no_m, no_n;         /* a 1-D operand */
  int32_t tile_m, tile_n;  /* 0: the plan's */
  int64_t m, n, k;         /* sizes; -1: a symbol */
} mm_case;

static sym_id sz(sym_arena *a, int64_t v, int32_t symbol) { return v < 0 ? sym_symbol(a, symbol) : sym_const(a, v); }

static int32_t push(kir_kernel *k, kir_instr in) {
  ck_assert(VEC_PUSH(k->instrs, in));
  return k->instrs.count - 1;
}

/* The kernel of case c: dims [batch?, M?, N?, K]. */
static void mm_build(sym_arena *a, const mm_case *c, kir_kernel *k) {
  *k = (kir_kernel){.syms = a, .reduces = true, .contracts = true, .allow_tf32 = c->tf32};
  snprintf(k->name, sizeof k->name, "mm");
  int32_t d = 0, bd = -1;
  if (c->batch) {
    bd = d;
    k->dims[d++] = sym_const(a, 3);
  }
  k->contract_m = c->no_m ? -1 : d;
  if (!c->no_m) k->dims[d++] = sz(a, c->m, 0);
  k->contract_n = c->no_n ? -1 : d;
  if (!c->no_n) k->dims[d++] = sz(a, c->n, 1);
  const int32_t kd = d;
  k->dims[d++] = sz(a, c->k, 2);
  k->ndim = d;
  k->axes = 1u << kd;
  k->numel = sym_const(a, 1);
  for (int32_t i = 0; i < k->ndim; i++) k->numel = sym_mul(a, k->numel, k->dims[i]);
  const ic_dtype dt = c->dt, rdt = dt == IC_I8 ? IC_I32 : dt;
  const sym_id M = c->no_m ? sym_const(a, 1) : k->dims[k->contract_m], N = c->no_n ? sym_const(a, 1) : k->dims[k->contract_n];
  const sym_id K = k->dims[kd];
  const sym_id vm = c->no_m ? sym_const(a, 0) : sym_var(a, k->contract_m), vn = c->no_n ? sym_const(a, 0) : sym_var(a, k->contract_n);
  const sym_id vk = sym_var(a, kd);
  /* A: batch-strided, [M, K] or [K, M] */
  sym_id a_off = c->a_col ? sym_add(a, sym_mul(a, vk, M), vm) : sym_add(a, sym_mul(a, vm, K), vk);
  if (c->strided) a_off = sym_add(a, sym_mul(a, vm, sym_param(a, 0)), sym_mul(a, vk, sym_param(a, 1)));
  if (bd >= 0) a_off = sym_add(a, a_off, sym_mul(a, sym_var(a, bd), sym_mul(a, M, K)));
  const sym_id b_off = c->b_col ? sym_add(a, sym_mul(a, vn, K), vk) : sym_add(a, sym_mul(a, vk, N), vn);
  ck_assert_int_eq(kir_buffer_of(k, 0, dt, false), 0);
  ck_assert_int_eq(kir_buffer_of(k, 1, dt, false), 1);
  int32_t va = push(k, (kir_instr){.kind = KIR_LOAD, .dtype = dt, .buffer = 0, .offset = a_off});
  int32_t vb = push(k, (kir_instr){.kind = KIR_LOAD, .dtype = dt, .buffer = 1, .offset = b_off});
  if (c->prologue) {
    va = push(k, (kir_instr){.kind = KIR_OP, .dtype = dt, .op = IC_OP_NEG, .nargs = 1, .args = {va}});
    int32_t scale = push(k, (kir_instr){.kind = KIR_LOAD, .dtype = dt, .buffer = kir_buffer_of(k, 2, dt, false), .offset = vn});
    vb = push(k, (kir_instr){.kind = KIR_OP, .dtype = dt, .op = IC_OP_MUL, .nargs = 2, .args = {vb, scale}});
  }
  int32_t v = push(k, (kir_instr){.kind = KIR_CONTRACT, .dtype = rdt, .nargs = 2, .args = {va, vb}});
  sym_id out_off = sym_add(a, sym_mul(a, vm, N), vn);
  if (bd >= 0) out_off = sym_add(a, out_off, sym_mul(a, sym_var(a, bd), sym_mul(a, M, N)));
  if (c->epilogue) {
    int32_t bias = push(k, (kir_instr){.kind = KIR_LOAD, .dtype = rdt, .buffer = kir_buffer_of(k, 3, rdt, false), .offset = vn});
    v = push(k, (kir_instr){.kind = KIR_OP, .dtype = rdt, .op = IC_OP_ADD, .nargs = 2, .args = {v, bias}});
    v = push(k, (kir_instr){.kind = KIR_OP, .dtype = rdt, .op = IC_OP_RELU, .nargs = 1, .args = {v}});
    /* a transposed copy in f32 */
    int32_t f = push(k, (kir_instr){.kind = KIR_OP, .dtype = IC_F32, .op = IC_OP_CAST, .nargs = 1, .args = {v}});
    push(k, (kir_instr){.kind = KIR_STORE, .dtype = IC_F32, .nargs = 1, .args = {f}, .buffer = kir_buffer_of(k, 5, IC_F32, true),
                        .offset = sym_add(a, sym_mul(a, vn, M), vm)});
  }
  push(k, (kir_instr){.kind = KIR_STORE, .dtype = rdt, .nargs = 1, .args = {v}, .buffer = kir_buffer_of(k, 4, rdt, true), .offset = out_off});
  kir_contract_plan(k);
  if (c->tile_m) k->tile_m = c->tile_m;
  if (c->tile_n) k->tile_n = c->tile_n;
  /* a forced tile other than the plan's keeps no small tile beside it */
  if (k->small_m > 0 && (k->tile_m != 128 || k->tile_n != 128)) k->small_m = k->small_n = 0;
  ck_assert_int_eq(kir_collect_params(k), IC_OK);
}

/* Generates case c's kernel as entry `entry`: its body (after the prelude) appended to
 * bodies; res's launch fields returned. */
static void mm_generate(const mm_case *c, const char *entry, int32_t sm, sbuf *bodies, cuda_codegen_result *res) {
  sym_arena *a = sym_arena_create();
  ck_assert_ptr_nonnull(a);
  kir_kernel k;
  mm_build(a, c, &k);
  *res = (cuda_codegen_result){0};
  ic_status s = cuda_codegen(&k, entry, sm, res);
  ck_assert_msg(s == IC_OK, "%s", ic_last_error());
  const char *mark = strstr(res->source, CUDA_KERNEL_MARK);
  ck_assert_ptr_nonnull(mark);
  sbuf_puts(bodies, mark);
  free(res->source);
  res->source = NULL;
  kir_kernel_free(&k);
  sym_arena_destroy(a);
}

/* Compiles bodies (with the prelude they need) for arch with ptxas strict. */
static void mm_compile(const char *arch, int32_t sm, sbuf *bodies) {
  const cuda_nvrtc_api *nv = cuda_nvrtc_get(0);
  ck_assert_msg(nv != NULL, "%s", ic_last_error());
  cuda_state cs = {.nvrtc = nv, .sm = sm};
  snprintf(cs.arch, sizeof cs.arch, "%s", arch);
  sbuf src = {0};
  cuda_prelude_needed(bodies->data, &src);
  sbuf_puts(&src, bodies->data);
  ck_assert(!src.oom);
  void *cubin = NULL;
  size_t size = 0;
  ic_status s = cuda_nvrtc_compile(&cs, "mm_batch", src.data, &cubin, &size);
  if ((s != IC_OK || getenv("IC_TEST_MM_ALWAYS")) && getenv("IC_TEST_MM_DUMP")) {
    FILE *f = fopen(getenv("IC_TEST_MM_DUMP"), "w");
    if (f) {
      fputs(src.data, f);
      fclose(f);
    }
  }
  ck_assert_msg(s == IC_OK, "%s", ic_last_error());
  ck_assert_uint_gt(size, 0);
  free(cubin);
  sbuf_free(&src);
}

static const int32_t k_tc_tiles[][2] = {{128, 256}, {128, 128}, {64, 64}};

/* Every tensor-core tile x layout of dtype dt for one arch (a test case each, so that
 * ctest compiles them in parallel): the four layouts plain, and two of them (one with
 * symbolic sizes, one batched) with a prologue and an epilogue; i8 and TF32 (whose stages
 * are K-major whatever the layout) the two layouts with and without. 128 x 256 is a
 * 16-bit dtype's tile only (kir_contract_plan). */
static void mm_tensor_core_sweep(ic_dtype dt, const char *arch, int32_t sm) {
  setenv("IC_PTXAS_STRICT", "1", 1);
  int32_t n = 0;
  sbuf bodies = {0};
  const bool narrow = dt == IC_BF16 || dt == IC_F16;
  for (size_t t = narrow ? 0 : 1; t < ARRAY_LEN(k_tc_tiles); t++)
    for (int32_t v = 0; v < 6; v++) {
      const int32_t layout = v < 4 ? v : v == 4 ? 0 : 3;
      const bool extra = v >= 4;
      if (!narrow && (layout == 1 || layout == 2)) continue;
      mm_case c = {.dt = dt, .tf32 = dt == IC_F32, .a_col = layout & 1, .b_col = layout >> 1, .prologue = extra,
                   .epilogue = extra, .batch = extra && layout == 3, .m = 1000, .n = 999, .k = 333,
                   .tile_m = k_tc_tiles[t][0], .tile_n = k_tc_tiles[t][1]};
      if (!narrow) c.prologue = c.epilogue = layout == 3;
      if (v == 4 || (!narrow && v == 0)) c.m = c.n = c.k = -1; /* symbolic sizes */
      char entry[32];
      snprintf(entry, sizeof entry, "mm_%" PRId32, n++);
      cuda_codegen_result res;
      mm_generate(&c, entry, sm, &bodies, &res);
      const int32_t warps = k_tc_tiles[t][0] == 64 ? 4 : 8;
      ck_assert_int_eq(res.block, 32 * warps);
      ck_assert_int_eq(res.per_block, 1);
      ck_assert_int_eq(res.smem, 4 * (k_tc_tiles[t][0] + k_tc_tiles[t][1]) * 64);
    }
  mm_compile(arch, sm, &bodies);
  sbuf_free(&bodies);
}

START_TEST(test_bf16_sm90a) { mm_tensor_core_sweep(IC_BF16, "sm_90a", 90); }
END_TEST
START_TEST(test_bf16_sm80) { mm_tensor_core_sweep(IC_BF16, "sm_80", 80); }
END_TEST
START_TEST(test_f16_sm90a) { mm_tensor_core_sweep(IC_F16, "sm_90a", 90); }
END_TEST
START_TEST(test_f16_sm80) { mm_tensor_core_sweep(IC_F16, "sm_80", 80); }
END_TEST
START_TEST(test_i8_sm90a) { mm_tensor_core_sweep(IC_I8, "sm_90a", 90); }
END_TEST
START_TEST(test_i8_sm80) { mm_tensor_core_sweep(IC_I8, "sm_80", 80); }
END_TEST
START_TEST(test_tf32_sm90a) { mm_tensor_core_sweep(IC_F32, "sm_90a", 90); }
END_TEST
START_TEST(test_tf32_sm80) { mm_tensor_core_sweep(IC_F32, "sm_80", 80); }
END_TEST

/* 1-D operands (the small mma tiles), run-time strides, odd and tiny sizes, and the FMA
 * kernel's tiles for f32 and f64, for both archs. */
START_TEST(test_small_and_fma) {
  setenv("IC_PTXAS_STRICT", "1", 1);
  static const struct { const char *arch; int32_t sm; } archs[] = {{"sm_90a", 90}, {"sm_80", 80}};
  for (size_t ai = 0; ai < ARRAY_LEN(archs); ai++) {
    sbuf bodies = {0};
    int32_t n = 0;
    static const ic_dtype dts[] = {IC_BF16, IC_I8, IC_F32, IC_F64, IC_F16};
    for (size_t d = 0; d < ARRAY_LEN(dts); d++)
      for (int32_t shape = 0; shape < 4; shape++)
        for (int32_t layout = 0; layout < 4; layout++) {
          mm_case c = {.dt = dts[d], .a_col = layout & 1, .b_col = layout >> 1,
                       .prologue = layout == 1, .epilogue = layout != 2, .no_m = shape & 1, .no_n = shape >> 1,
                       .strided = layout == 2 && !(shape & 1), .m = 7, .n = 13, .k = 1};
          if (c.no_m || c.no_n) c.epilogue = false; /* the epilogue's bias is along N */
          if (layout == 3) c.k = 0;
          char entry[32];
          snprintf(entry, sizeof entry, "mm_%" PRId32, n++);
          cuda_codegen_result res;
          mm_generate(&c, entry, archs[ai].sm, &bodies, &res);
          ck_assert_int_eq(res.per_block, 1);
          /* the FMA kernel also at its default tile */
          if (dts[d] == IC_F32 || dts[d] == IC_F64) ck_assert_int_eq(res.smem, 0);
        }
    /* the plan's own tiles at a large size, TF32 included */
    for (int32_t t = 0; t < 2; t++) {
      mm_case c = {.dt = IC_F32, .tf32 = t, .m = 8192, .n = 8192, .k = 8192};
      char entry[32];
      snprintf(entry, sizeof entry, "mm_%" PRId32, n++);
      cuda_codegen_result res;
      mm_generate(&c, entry, archs[ai].sm, &bodies, &res);
    }
    mm_compile(archs[ai].arch, archs[ai].sm, &bodies);
    sbuf_free(&bodies);
  }
}
END_TEST

/* The plan: tiles by shape, launch points = batch x tiles. */
START_TEST(test_plan) {
  sym_arena *a = sym_arena_create();
  kir_kernel k;
  mm_build(a, &(mm_case){.dt = IC_BF16, .m = 8192, .n = 8192, .k = 8192}, &k);
  ck_assert_int_eq(k.tile_m, 128);
  ck_assert_int_eq(k.tile_n, 256);
  int64_t v = 0;
  ck_assert(sym_is_const(a, k.launch_numel, &v));
  ck_assert_int_eq(v, 64 * 32);
  kir_kernel_free(&k);
  mm_build(a, &(mm_case){.dt = IC_BF16, .m = 1024, .n = 1024, .k = 64}, &k);
  ck_assert_int_eq(k.tile_m, 64); /* 128 x 128 would leave 64 blocks */
  kir_kernel_free(&k);
  mm_build(a, &(mm_case){.dt = IC_BF16, .batch = true, .m = 1024, .n = 1024, .k = 64}, &k);
  ck_assert_int_eq(k.tile_n, 128); /* 3 x 8 x 8 (128 x 256: 3 x 8 x 4) */
  kir_kernel_free(&k);
  mm_build(a, &(mm_case){.dt = IC_F32, .m = 4096, .n = 4096, .k = 64}, &k);
  ck_assert_int_eq(k.tile_m, 64);
  kir_kernel_free(&k);
  mm_build(a, &(mm_case){.dt = IC_F16, .m = -1, .n = -1, .k = -1}, &k);
  ck_assert_int_eq(k.tile_m, 128);
  ck_assert_int_eq(k.tile_n, 128);
  /* symbolic sizes: the small tile beside it, the launch choosing */
  ck_assert_int_eq(k.small_m, 64);
  ck_assert_int_eq(k.small_n, 64);
  ck_assert(kir_contract_when(&k) != SYM_NONE);
  kir_kernel_free(&k);
  mm_build(a, &(mm_case){.dt = IC_F16, .no_n = true, .m = 100, .k = 100}, &k);
  ck_assert_int_eq(k.tile_m, 64);
  ck_assert_int_eq(k.tile_n, 8);
  ck_assert(sym_is_const(a, k.launch_numel, &v));
  ck_assert_int_eq(v, 2);
  kir_kernel_free(&k);
  sym_arena_destroy(a);
}
END_TEST

/* The ptxas report's complaints: spills and C7xxx warnings, nothing else. */
START_TEST(test_ptxas_complaints) {
  char line[128];
  const char *clean = "ptxas info    : Used 168 registers\nptxas info    :     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n";
  ck_assert(!cuda_ptxas_complaint(clean, line, sizeof line));
  ck_assert(cuda_ptxas_complaint("x\n    8 bytes stack frame, 12 bytes spill stores, 12 bytes spill loads\n", line, sizeof line));
  ck_assert_ptr_nonnull(strstr(line, "12 bytes spill stores"));
  ck_assert(cuda_ptxas_complaint("ptxas warning : (C7515) Potential Performance Loss: wgmma.mma_async\n", line, sizeof line));
  ck_assert_ptr_nonnull(strstr(line, "C7515"));
  ck_assert(!cuda_ptxas_complaint("ptxas info : Function properties for ic_C7515x\n", line, sizeof line));
  setenv("IC_PTXAS_STRICT", "1", 1);
  ck_assert(cuda_ptxas_strict());
  const char *opts[16];
  int32_t count = 0;
  char arch[64];
  cuda_nvrtc_options("sm_90a", 13, opts, 16, &count, arch, sizeof arch);
  ck_assert_str_eq(opts[count - 1], "--ptxas-options=-v");
  setenv("IC_PTXAS_STRICT", "0", 1);
  ck_assert(!cuda_ptxas_strict());
}
END_TEST

static Suite *matmul_suite(void) {
  Suite *s = suite_create("matmul_codegen");
  CHECK_CASE(s, test_plan, NULL, NULL);
  CHECK_CASE(s, test_ptxas_complaints, NULL, NULL);
  CHECK_CASE(s, test_bf16_sm90a, NULL, NULL);
  CHECK_CASE(s, test_bf16_sm80, NULL, NULL);
  CHECK_CASE(s, test_f16_sm90a, NULL, NULL);
  CHECK_CASE(s, test_f16_sm80, NULL, NULL);
  CHECK_CASE(s, test_i8_sm90a, NULL, NULL);
  CHECK_CASE(s, test_i8_sm80, NULL, NULL);
  CHECK_CASE(s, test_tf32_sm90a, NULL, NULL);
  CHECK_CASE(s, test_tf32_sm80, NULL, NULL);
  CHECK_CASE(s, test_small_and_fma, NULL, NULL);
  return s;
}

int main(int argc, char **argv) {
  Suite *s = matmul_suite();
  if (check_list_cases(argc, argv, s)) return 0;
  return check_run_suite(s);
}
