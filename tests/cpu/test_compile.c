/* CPU: contexts without a GPU, fusion decisions (fused vs eager kernel counts), kernel IR
 * dumps, program text, generated CUDA for every op, conversion and dtype compiled by NVRTC
 * for sm_80, sm_89 and sm_90a, eager fallback and strict mode, IC_DUMP, compile-only run errors. */
#include <check.h>
#include <ctype.h>
#include <dirent.h>
#include <ic/ic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/cuda/cuda_backend.h"
#include "base/sbuf.h"
#include "compile.h"
#include "runtime/context.h"

#include "check_main.h"

#define OK(call) ck_assert_msg((call) == IC_OK, "%s: %s", #call, ic_last_error())

/* Compile-only, so the tests behave the same on machines with a GPU. */
static ic_context *make_ctx(const char *arch) {
  ic_context_options o = {.struct_size = sizeof o, .arch = arch, .flags = IC_CONTEXT_COMPILE_ONLY};
  ic_context *ctx = NULL;
  OK(ic_context_create(&o, &ctx));
  return ctx;
}

static int32_t kernels_of(ic_context *ctx, ic_graph *g, ic_compile_mode mode) {
  ic_compile_options o = {.struct_size = sizeof o, .mode = mode};
  ic_program *p;
  OK(ic_compile(ctx, g, &o, &p));
  int32_t n = ic_program_kernel_count(p);
  ic_program_release(p);
  return n;
}

START_TEST(test_context_without_gpu) {
  ic_context *ctx = (ic_context *)1;
  unsetenv("IC_ARCH");
  /* A context always opens: without a GPU and an arch it serves the ref backend, and
   * compiling for cuda says what is missing. */
  OK(ic_context_create(NULL, &ctx));
  if (!ic_context_has_device(ctx)) {
    ck_assert_str_eq(ic_context_arch(ctx), "");
    ic_graph *g;
    OK(ic_graph_create(&g));
    OK(ic_graph_output(g, "y", ic_graph_unary(g, IC_OP_NEG, ic_graph_input(g, "x", IC_F32, 1, (ic_dim[]){4}, 0))));
    ic_program *p = (ic_program *)1;
    ck_assert_int_eq(ic_compile(ctx, g, NULL, &p), IC_ERR_NO_DEVICE);
    ck_assert_ptr_null(p);
    ck_assert_ptr_nonnull(strstr(ic_last_error(), "IC_ARCH"));
    ic_compile_options ref = {.struct_size = sizeof ref, .backend = "ref"};
    OK(ic_compile(ctx, g, &ref, &p));
    ic_program_release(p);
    ic_graph_destroy(g);
  }
  ic_context_destroy(ctx);
  ic_context_options o = {.struct_size = sizeof o, .arch = "gfx90a", .flags = IC_CONTEXT_COMPILE_ONLY};
  ck_assert_int_eq(ic_context_create(&o, &ctx), IC_ERR_INVALID_ARGUMENT);
  o.arch = "sm_75";
  ck_assert_int_eq(ic_context_create(&o, &ctx), IC_ERR_UNSUPPORTED);
  o.arch = NULL; /* compile-only without an arch: the ref backend only */
  OK(ic_context_create(&o, &ctx));
  ck_assert_int_eq(ic_context_has_device(ctx), 0);
  ic_context_destroy(ctx);
  o.struct_size = 2;
  ck_assert_int_eq(ic_context_create(&o, &ctx), IC_ERR_INVALID_ARGUMENT);
  o.struct_size = sizeof o;
  setenv("IC_ARCH", "sm_80", 1);
  OK(ic_context_create(&o, &ctx));
  ck_assert_str_eq(ic_context_arch(ctx), "sm_80");
  ck_assert_int_eq(ic_context_has_device(ctx), 0);
  unsetenv("IC_ARCH");
  void *p = NULL;
  ck_assert_int_eq(ic_malloc(ctx, 16, &p), IC_ERR_NO_DEVICE);
  ck_assert_ptr_nonnull(strstr(ic_last_error(), "compile-only"));
  ck_assert_int_eq(ic_memcpy_htod(ctx, (void *)8, &p, 8), IC_ERR_NO_DEVICE);
  ic_context_destroy(ctx);
  ic_context_destroy(NULL);
}
END_TEST

START_TEST(test_fusion_groupings) {
  ic_context *ctx = make_ctx("sm_90a");
  ic_graph *g;
  /* a chain: 1 fused kernel, 3 eager */
  OK(ic_graph_create(&g));
  ic_dim n = ic_graph_symbol(g, "n");
  ic_value x = ic_graph_input(g, "x", IC_F32, 2, (ic_dim[]){n, 8}, 0);
  ic_value w = ic_graph_input(g, "w", IC_F32, 1, (ic_dim[]){8}, 0);
  ic_value y = ic_graph_unary(g, IC_OP_TANH, ic_graph_binary(g, IC_OP_ADD, ic_graph_binary(g, IC_OP_MUL, x, w), x));
  OK(ic_graph_output(g, "y", y));
  ck_assert_int_eq(kernels_of(ctx, g, IC_MODE_FUSED), 1);
  ck_assert_int_eq(kernels_of(ctx, g, IC_MODE_EAGER), 3);
  /* a sibling over the same space joins; an intermediate output is stored, not split */
  OK(ic_graph_output(g, "s", ic_graph_unary(g, IC_OP_EXP, x)));
  OK(ic_graph_output(g, "mid", ic_graph_binary(g, IC_OP_MUL, x, w)));
  ck_assert_int_eq(kernels_of(ctx, g, IC_MODE_FUSED), 1);
  ck_assert_int_eq(kernels_of(ctx, g, IC_MODE_EAGER), 5);
  /* an op over another iteration space is another kernel */
  OK(ic_graph_output(g, "w2", ic_graph_unary(g, IC_OP_NEG, w)));
  ck_assert_int_eq(kernels_of(ctx, g, IC_MODE_FUSED), 2);
  /* a permuted read of a computed value forces a kernel boundary */
  ic_value t = ic_graph_permute(g, ic_graph_unary(g, IC_OP_RELU, x), 2, (int32_t[]){1, 0});
  OK(ic_graph_output(g, "t", ic_graph_unary(g, IC_OP_SQRT, t)));
  ck_assert_int_eq(kernels_of(ctx, g, IC_MODE_FUSED), 3);
  ic_graph_destroy(g);

  /* an output that is an input (or a view of one) gets a copy kernel */
  OK(ic_graph_create(&g));
  x = ic_graph_input(g, "x", IC_BF16, 2, (ic_dim[]){3, 5}, 0);
  OK(ic_graph_output(g, "same", x));
  OK(ic_graph_output(g, "tr", ic_graph_permute(g, x, 2, (int32_t[]){1, 0})));
  ck_assert_int_eq(kernels_of(ctx, g, IC_MODE_FUSED), 2);
  ic_graph_destroy(g);
  ic_context_destroy(ctx);
}
END_TEST

START_TEST(test_kernel_ir_and_program_text) {
  ic_context *ctx = make_ctx("sm_90a");
  ic_graph *g;
  OK(ic_graph_create(&g));
  ic_dim n = ic_graph_symbol(g, "n");
  ic_value x = ic_graph_input(g, "x", IC_F16, 2, (ic_dim[]){n, 4}, IC_LAYOUT_INNER_CONTIGUOUS);
  ic_value b = ic_graph_input(g, "b", IC_F16, 1, (ic_dim[]){4}, 0);
  ic_value y = ic_graph_binary(g, IC_OP_MAXIMUM, ic_graph_binary(g, IC_OP_ADD, x, b), ic_graph_constant(g, 0.0, IC_DTYPE_AUTO));
  OK(ic_graph_output(g, "y", ic_graph_cast(g, y, IC_F32)));
  ic_program *p;
  OK(ic_compile(ctx, g, NULL, &p));
  ck_assert_str_eq(ic_program_kernel_ir(p, 0),
                   "kernel ic_k0 [n, 4]\n"
                   "  strategy vector: 4 points a thread\n"
                   "  buffer b0 : f16 in (program buffer 0)\n"
                   "  buffer b1 : f16 in (program buffer 1)\n"
                   "  buffer b2 : f32 out (program buffer 2)\n"
                   "  v0 = load.f16 b0[i1 + i0 * p0]  (vector)\n"
                   "  v1 = load.f16 b1[i1]  (vector)\n"
                   "  v2 = add.f16 v0, v1\n"
                   "  v3 = const.f16 0\n"
                   "  v4 = maximum.f16 v2, v3\n"
                   "  v5 = cast.f32 v4\n"
                   "  store.f32 b2[4 * i0 + i1] = v5  (vector)\n");
  ck_assert_ptr_null(ic_program_kernel_ir(p, 1));
  ck_assert_ptr_null(ic_program_kernel_source(p, -1));
  ck_assert_int_eq(ic_program_input_index(p, "b"), 1);
  ck_assert_int_eq(ic_program_input_index(p, "nope"), -1);
  ck_assert_int_eq(ic_program_output_index(p, "y"), 0);
  ck_assert_int_eq(ic_program_input_count(p), 2);
  ck_assert_int_eq(ic_program_output_count(p), 1);
  /* the generated source is self-contained and uses the vector path (4 f16 in 8-byte
   * loads, 4 f32 in a 16-byte store); it carries the prelude helpers it names and not the
   * others (cuda_prelude_needed) */
  const char *src = ic_program_kernel_source(p, 0);
  ck_assert_ptr_null(strstr(src, "#include"));
  ck_assert_ptr_nonnull(strstr(src, "extern \"C\" __global__"));
  ck_assert_ptr_nonnull(strstr(src, "ld.global.nc.v2.b32"));
  ck_assert_ptr_nonnull(strstr(src, "st.global.cs.v4.b32"));
  ck_assert_ptr_nonnull(strstr(src, "ic_rnd_f16(ic_add(v0, v1))"));
  ck_assert_ptr_nonnull(strstr(src, "ic_rnd_f16(float f)"));
  ck_assert_ptr_null(strstr(src, "ld.global.nc.v4.b32")); /* ic_ld_w4: not used */
  ck_assert_ptr_null(strstr(src, "ic_bfly"));             /* reduction helpers */
  ck_assert_ptr_null(strstr(src, "ic_f2e4m3"));           /* fp8 conversions */
  /* output shape on the host, no GPU needed */
  int64_t xs[2] = {9, 4}, bs[1] = {4}, shape[IC_MAX_DIMS];
  int64_t strides[2] = {16, 1};
  int32_t nd;
  ic_tensor in[2] = {{(void *)64, IC_F16, 2, xs, strides}, {(void *)128, IC_F16, 1, bs, NULL}};
  OK(ic_program_output_shape(p, 0, in, &nd, shape));
  ck_assert_int_eq(nd, 2);
  ck_assert_int_eq(shape[0], 9);
  ck_assert_int_eq(shape[1], 4);
  ck_assert_int_eq(ic_program_output_shape(p, 1, in, &nd, shape), IC_ERR_INVALID_ARGUMENT);
  /* running needs a device */
  ic_tensor out = {NULL, IC_F32, 2, xs, NULL};
  ck_assert_int_eq(ic_program_run(p, in, 2, &out, 1, NULL), IC_ERR_NO_DEVICE);
  ck_assert_ptr_nonnull(strstr(ic_last_error(), "cannot run"));
  ic_program_release(p);
  ic_graph_destroy(g);
  ic_context_destroy(ctx);
}
END_TEST

static bool op_takes(ic_op op, ic_dtype dt) {
  ic_graph *g;
  OK(ic_graph_create(&g));
  ic_value a = ic_graph_input(g, "a", dt, 0, NULL, 0), c = ic_graph_input(g, "c", IC_BOOL, 0, NULL, 0);
  ic_value args[3] = {op == IC_OP_WHERE ? c : a, a, a};
  bool ok = ic_graph_op(g, op, ic_op_arity(op), args) != IC_INVALID_VALUE;
  ic_graph_destroy(g);
  return ok;
}

/* The load offset of a view of input x, as the kernel IR prints it. */
static void assert_view_offset(ic_graph *g, ic_value view, const char *want) {
  ic_context *ctx = make_ctx("sm_90a");
  OK(ic_graph_output(g, "y", ic_graph_unary(g, IC_OP_NEG, view)));
  ic_program *p;
  OK(ic_compile(ctx, g, NULL, &p));
  const char *ir = ic_program_kernel_ir(p, 0);
  ck_assert_msg(strstr(ir, want) != NULL, "want '%s' in\n%s", want, ir);
  ic_program_release(p);
  ic_graph_destroy(g);
  ic_context_destroy(ctx);
}

START_TEST(test_views_fold_into_offsets) {
  ic_graph *g;
  OK(ic_graph_create(&g));
  ic_dim n = ic_graph_symbol(g, "n");
  ic_value x = ic_graph_input(g, "x", IC_F32, 3, (ic_dim[]){n, 4, 9}, 0);
  assert_view_offset(g, ic_graph_reshape(g, x, 2, (ic_dim[]){n, IC_DIM_INFER}), "load.f32 b0[i0]");
  OK(ic_graph_create(&g));
  n = ic_graph_symbol(g, "n");
  x = ic_graph_input(g, "x", IC_F32, 3, (ic_dim[]){n, 4, 9}, 0);
  assert_view_offset(g, ic_graph_permute(g, x, 3, (int32_t[]){2, 0, 1}), "load.f32 b0[i0 + 9 * i1]");
  OK(ic_graph_create(&g));
  n = ic_graph_symbol(g, "n");
  x = ic_graph_input(g, "x", IC_F32, 2, (ic_dim[]){n, 1}, 0);
  assert_view_offset(g, ic_graph_expand(g, x, 3, (ic_dim[]){2, n, 5}), "load.f32 b0[i1]");
  OK(ic_graph_create(&g));
  n = ic_graph_symbol(g, "n");
  x = ic_graph_input(g, "x", IC_F32, 2, (ic_dim[]){n, 6}, IC_LAYOUT_STRIDED);
  ic_value t = ic_graph_reshape(g, ic_graph_permute(g, x, 2, (int32_t[]){1, 0}), 3, (ic_dim[]){2, 3, n});
  /* the reshape splits 6 into 2 x 3 and keeps n: no division by n (the 2 x 3 coalesce) */
  assert_view_offset(g, t, "load.f32 b0[i0 * p1 + i1 * p0]");
}
END_TEST

/* Every op with every dtype it takes, as outputs of one graph a dtype: the fused kernel
 * and each eager kernel must compile with NVRTC for the target. The dtypes come in three
 * parts (signed integers, u8 and bool; floats; u16, u32 and u64), a test each, so that
 * each stays short. */
static const ic_dtype every_dtype[] = {IC_BOOL, IC_U8,  IC_I8,  IC_I16,    IC_I32,    IC_I64,  IC_F16, IC_BF16,
                                       IC_F32,  IC_F64, IC_F8E4M3, IC_F8E5M2, IC_U16, IC_U32, IC_U64};
enum { NDT = sizeof every_dtype / sizeof *every_dtype, FIRST_FLOAT = 6, FIRST_WIDE_UNSIGNED = 12 };

static void compile_everything(const char *arch, size_t first, size_t end) {
  const ic_dtype *dts = every_dtype;
  ic_context *ctx = make_ctx(arch);
  for (size_t d = first; d < end; d++) {
    ic_graph *g;
    OK(ic_graph_create(&g));
    ic_dim n = ic_graph_symbol(g, "n");
    ic_value a = ic_graph_input(g, "a", dts[d], 2, (ic_dim[]){n, 3}, IC_LAYOUT_STRIDED);
    ic_value b = ic_graph_input(g, "b", dts[d], 1, (ic_dim[]){3}, 0);
    ic_value c = ic_graph_input(g, "c", IC_BOOL, 2, (ic_dim[]){n, 1}, 0);
    int outputs = 0;
    for (int op = 0; op < IC_OP_COUNT; op++) {
      ic_value args[3] = {a, b, a};
      if (op == IC_OP_WHERE) args[0] = c;
      int arity = ic_op_arity(op);
      if (!op_takes((ic_op)op, dts[d])) continue; /* conversions below */
      ic_value v = ic_graph_op(g, (ic_op)op, arity, args);
      if (v == IC_INVALID_VALUE) continue;
      char name[32];
      snprintf(name, sizeof name, "%s", ic_op_name((ic_op)op));
      OK(ic_graph_output(g, name, v));
      outputs++;
    }
    for (size_t t = 0; t < NDT; t++) {
      char name[32];
      snprintf(name, sizeof name, "cast_%s", ic_dtype_name(dts[t]));
      OK(ic_graph_output(g, name, ic_graph_cast(g, a, dts[t])));
      snprintf(name, sizeof name, "sat_%s", ic_dtype_name(dts[t]));
      OK(ic_graph_output(g, name, ic_graph_cast_saturate(g, a, dts[t])));
      outputs += 2;
      if (dts[d] != IC_BOOL && dts[t] != IC_BOOL && ic_dtype_size(dts[d]) == ic_dtype_size(dts[t])) {
        snprintf(name, sizeof name, "bits_%s", ic_dtype_name(dts[t]));
        OK(ic_graph_output(g, name, ic_graph_bitcast(g, a, dts[t])));
        outputs++;
      }
    }
    const char *msg;
    ck_assert_msg(ic_graph_error(g, &msg) == IC_OK, "%s", msg);
    ck_assert_int_eq(kernels_of(ctx, g, IC_MODE_FUSED), 1);
    ck_assert_int_eq(kernels_of(ctx, g, IC_MODE_EAGER), outputs);
    ic_graph_destroy(g);
  }
  ic_context_destroy(ctx);
}

START_TEST(test_every_op_compiles_sm90a_ints) { compile_everything("sm_90a", 0, FIRST_FLOAT); }
END_TEST
START_TEST(test_every_op_compiles_sm90a_floats) { compile_everything("sm_90a", FIRST_FLOAT, FIRST_WIDE_UNSIGNED); }
END_TEST
START_TEST(test_every_op_compiles_sm90a_unsigned) { compile_everything("sm_90a", FIRST_WIDE_UNSIGNED, NDT); }
END_TEST
START_TEST(test_every_op_compiles_sm89_ints) { compile_everything("sm_89", 0, FIRST_FLOAT); }
END_TEST
START_TEST(test_every_op_compiles_sm89_floats) { compile_everything("sm_89", FIRST_FLOAT, FIRST_WIDE_UNSIGNED); }
END_TEST
START_TEST(test_every_op_compiles_sm89_unsigned) { compile_everything("sm_89", FIRST_WIDE_UNSIGNED, NDT); }
END_TEST
START_TEST(test_every_op_compiles_sm80_ints) { compile_everything("sm_80", 0, FIRST_FLOAT); }
END_TEST
START_TEST(test_every_op_compiles_sm80_floats) { compile_everything("sm_80", FIRST_FLOAT, FIRST_WIDE_UNSIGNED); }
END_TEST
START_TEST(test_every_op_compiles_sm80_unsigned) { compile_everything("sm_80", FIRST_WIDE_UNSIGNED, NDT); }
END_TEST

/* A test backend: the cuda backend, except that a kernel of more than one op fails to
 * compile, so the eager fallback and strict mode can be exercised. */
static ic_status fail_fused_compile(backend_state *bs, const kir_kernel *k, uint32_t flags, void *batch,
                                    backend_kernel **out) {
  int32_t ops = 0;
  for (int32_t i = 0; i < k->instrs.count; i++) ops += k->instrs.items[i].kind == KIR_OP;
  if (ops > 1) return error_set(IC_ERR_COMPILE, "%s: compile failure of the test backend", k->name);
  return backend_cuda.compile(bs, k, flags, batch, out);
}

static backend_vtable fail_fused_backend(void) {
  backend_vtable vt = backend_cuda;
  vt.name = "cuda-fail-fused";
  vt.compile = fail_fused_compile;
  return vt;
}

static void log_to_counter(void *user, ic_log_level level, const char *msg) {
  if (level == IC_LOG_WARN && strstr(msg, "eager kernels")) (*(int *)user)++;
}

START_TEST(test_eager_fallback_and_strict) {
  unsetenv("IC_STRICT");
  int warnings = 0;
  ic_context_options o = {.struct_size = sizeof o, .arch = "sm_90a", .log_fn = log_to_counter, .log_user = &warnings,
                          .log_level = IC_LOG_WARN, .flags = IC_CONTEXT_COMPILE_ONLY};
  ic_context *ctx;
  OK(ic_context_create(&o, &ctx));
  ic_graph *g;
  OK(ic_graph_create(&g));
  ic_value x = ic_graph_input(g, "x", IC_F32, 1, (ic_dim[]){100}, 0);
  ic_value y = ic_graph_unary(g, IC_OP_EXP, ic_graph_unary(g, IC_OP_NEG, ic_graph_unary(g, IC_OP_RELU, x)));
  OK(ic_graph_output(g, "y", y));
  OK(ic_graph_output(g, "z", ic_graph_unary(g, IC_OP_SQRT, x)));
  const backend_vtable failing = fail_fused_backend();
  ic_compile_options plain = {.struct_size = sizeof plain};
  ic_program *p;
  OK(compile_graph(ctx, g, &plain, &failing, &p));
  ck_assert_int_eq(ic_program_kernel_count(p), 4);
  ck_assert_int_eq(warnings, 1);
  ic_program_release(p);
  ic_compile_options strict = {.struct_size = sizeof strict, .flags = IC_COMPILE_STRICT};
  ck_assert_int_eq(compile_graph(ctx, g, &strict, &failing, &p), IC_ERR_COMPILE);
  ck_assert_ptr_nonnull(strstr(ic_last_error(), "strict"));
  setenv("IC_STRICT", "1", 1);
  ic_context *strict_ctx;
  OK(ic_context_create(&o, &strict_ctx));
  ck_assert_int_eq(compile_graph(strict_ctx, g, &plain, &failing, &p), IC_ERR_COMPILE);
  ic_context_destroy(strict_ctx);
  unsetenv("IC_STRICT");
  OK(ic_compile(ctx, g, &strict, &p));
  ck_assert_int_eq(ic_program_kernel_count(p), 1);
  ic_program_release(p);
  ic_graph_destroy(g);
  ic_context_destroy(ctx);
}
END_TEST

/* A context that only uses the ref backend needs no libnvrtc: NVRTC loads when the cuda
 * backend opens, and a cuda compile then says it is missing. Runs in a forked child
 * (NVRTC loads once per process). */
START_TEST(test_ref_context_needs_no_nvrtc) {
  const char *fork_mode = getenv("CK_FORK");
  if (fork_mode && strcmp(fork_mode, "no") == 0) return;
  setenv("IC_NVRTC", "/nonexistent/libnvrtc.so.13", 1);
  ic_context_options o = {.struct_size = sizeof o, .arch = "sm_90a", .flags = IC_CONTEXT_COMPILE_ONLY};
  ic_context *ctx;
  OK(ic_context_create(&o, &ctx));
  ic_graph *g;
  OK(ic_graph_create(&g));
  ic_value x = ic_graph_input(g, "x", IC_F32, 1, (ic_dim[]){3}, 0);
  OK(ic_graph_output(g, "y", ic_graph_binary(g, IC_OP_MUL, x, x)));
  ic_compile_options ref = {.struct_size = sizeof ref, .backend = "ref"};
  ic_program *p;
  OK(ic_compile(ctx, g, &ref, &p));
  float in[3] = {1, -2, 3}, out[3] = {0};
  int64_t shape[1] = {3};
  ic_tensor ti = {in, IC_F32, 1, shape, NULL}, to = {out, IC_F32, 1, shape, NULL};
  OK(ic_program_run(p, &ti, 1, &to, 1, NULL));
  ck_assert(out[0] == 1 && out[1] == 4 && out[2] == 9);
  ic_program_release(p);
  ck_assert_int_eq(ic_compile(ctx, g, NULL, &p), IC_ERR_NO_NVRTC);
  ck_assert_ptr_nonnull(strstr(ic_last_error(), "/nonexistent/libnvrtc.so.13"));
  ck_assert_int_eq(ic_compile(ctx, g, NULL, &p), IC_ERR_NO_NVRTC); /* says so every time */
  ic_graph_destroy(g);
  ic_context_destroy(ctx);
  unsetenv("IC_NVRTC");
}
END_TEST

START_TEST(test_nvrtc_error_carries_log) {
  ic_context *ctx = make_ctx("sm_90a");
  backend_state *bs;
  OK(ctx_backend(ctx, &backend_cuda, &bs));
  void *cubin = (void *)1;
  size_t size = 7;
  ck_assert_int_eq(cuda_nvrtc_compile((const cuda_state *)bs, "broken", "extern \"C\" __global__ void k() { undeclared_thing(); }", &cubin, &size),
                   IC_ERR_COMPILE);
  ck_assert_ptr_null(cubin);
  ck_assert_int_eq(size, 0);
  ck_assert_ptr_nonnull(strstr(ic_last_error(), "undeclared_thing"));
  ic_context_destroy(ctx);
}
END_TEST

/* The names the prelude declares, found here independently of prelude.c's cutter: the
 * first ic_name( after __device__ on a line, and ic_x for each IC_MATH1(x, ...) and
 * IC_MATH2(x, ...). Returns their count (distinct), at most max. */
static int prelude_declared(char names[][48], int max) {
  int n = 0;
  for (const char *line = cuda_prelude; *line;) {
    const char *end = strchr(line, '\n');
    if (!end) end = line + strlen(line);
    char buf[512];
    size_t len = (size_t)(end - line) < sizeof buf - 1 ? (size_t)(end - line) : sizeof buf - 1;
    memcpy(buf, line, len);
    buf[len] = '\0';
    const char *dev = strstr(buf, "__device__");
    for (const char *q = dev ? dev : buf; q && *q; q++) {
      const char *found = NULL;
      size_t skip = 0;
      if (dev && strncmp(q, "ic_", 3) == 0 && (q == buf || !(isalnum((unsigned char)q[-1]) || q[-1] == '_'))) {
        found = q;
      } else if (strncmp(q, "IC_MATH1(", 9) == 0 || strncmp(q, "IC_MATH2(", 9) == 0) {
        found = q + 9;
        skip = 9;
      }
      if (!found) continue;
      char name[48] = "ic_";
      size_t k = skip ? 3 : 0, j = 0;
      while ((isalnum((unsigned char)found[j]) || found[j] == '_') && k + 1 < sizeof name) name[k++] = found[j++];
      name[k] = '\0';
      if (!skip && found[j] != '(') continue; /* a type, not a declaration */
      bool seen = false;
      for (int i = 0; i < n && !seen; i++) seen = strcmp(names[i], name) == 0;
      if (!seen && n < max) snprintf(names[n++], sizeof names[0], "%s", name);
      if (dev) break; /* one declaration a __device__ line */
      q = found + j - 1;
    }
    line = *end ? end + 1 : end;
  }
  return n;
}

/* Sources carry only the prelude they need (cuda_prelude_needed): for every name the
 * prelude declares, a kernel naming only it gets a part of the prelude that compiles on
 * its own, for sm_90a and sm_80 (the two sides of the fp8 #if), and is smaller than the
 * whole for a plain load helper. */
START_TEST(test_prelude_parts_compile) {
  static char names[400][48];
  int n = prelude_declared(names, 400);
  ck_assert_int_gt(n, 100); /* about 160 today: the parser above found them */
  static const char *const arches[] = {"sm_90a", "sm_80"};
  for (int a = 0; a < 2; a++) {
    ic_context *ctx = make_ctx(arches[a]);
    backend_state *bs;
    OK(ctx_backend(ctx, &backend_cuda, &bs));
    for (int i = 0; i < n; i++) {
      char text[160];
      snprintf(text, sizeof text, "\n#define IC_TEST_USE %.47s\nextern \"C\" __global__ void k() {}\n", names[i]);
      sbuf src = {0};
      cuda_prelude_needed(text, &src);
      sbuf_puts(&src, text);
      ck_assert(!src.oom);
      if (strcmp(names[i], "ic_ld_s8") == 0) ck_assert_uint_lt(src.len, strlen(cuda_prelude) / 4);
      void *cubin = NULL;
      size_t size = 0;
      ck_assert_msg(cuda_nvrtc_compile((const cuda_state *)bs, "prelude_part", src.data, &cubin, &size) == IC_OK,
                    "%s, the prelude part for %s: %s", arches[a], names[i], ic_last_error());
      free(cubin);
      sbuf_free(&src);
    }
    ic_context_destroy(ctx);
  }
}
END_TEST

/* The program folders (32 hex digits: the program key) under an IC_DUMP directory, in
 * names[] (sorted); returns their count. */
static int dump_folders(const char *dir, char names[][40], int max) {
  DIR *d = opendir(dir);
  ck_assert_ptr_nonnull(d);
  int n = 0;
  for (struct dirent *e; (e = readdir(d)) != NULL;) {
    if (e->d_name[0] == '.') continue;
    ck_assert_msg(strlen(e->d_name) == 32 && strspn(e->d_name, "0123456789abcdef") == 32,
                  "IC_DUMP holds '%s', not a program key folder", e->d_name);
    ck_assert_int_lt(n, max);
    snprintf(names[n++], 40, "%.32s", e->d_name); /* %.32s: d_name holds 32 (checked) */
  }
  closedir(d);
  for (int i = 1; i < n; i++)
    for (int j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
      char t[40];
      memcpy(t, names[j], 40);
      memcpy(names[j], names[j - 1], 40);
      memcpy(names[j - 1], t, 40);
    }
  return n;
}

/* dir/sub/name exists and holds more than 10 bytes. */
static void check_dump_file(const char *dir, const char *sub, const char *name) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s/%s", dir, sub, name);
  FILE *f = fopen(path, "r");
  ck_assert_msg(f != NULL, "IC_DUMP did not write %s", path);
  fseek(f, 0, SEEK_END);
  ck_assert_int_gt(ftell(f), 10);
  fclose(f);
}

static void remove_dump(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return;
  for (struct dirent *e; (e = readdir(d)) != NULL;) {
    if (e->d_name[0] == '.') continue;
    char path[512];
    int len = snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    ck_assert_msg(len > 0 && (size_t)len < sizeof path, "IC_DUMP path too long: %s/%s", dir, e->d_name);
    if (unlink(path) != 0) remove_dump(path);
  }
  closedir(d);
  rmdir(dir);
}

/* IC_DUMP keeps every compile's files: $IC_DUMP/<program key in hex>/graph.txt,
 * program.txt and each kernel's .kir and .cu. Two graphs keep two folders; a program
 * compiled with IC_COMPILE_NO_CACHE is dumped under its key too. */
START_TEST(test_ic_dump) {
  char dir[] = "/tmp/ic-dump-XXXXXX";
  ck_assert_ptr_nonnull(mkdtemp(dir));
  setenv("IC_DUMP", dir, 1);
  ic_context *ctx = make_ctx("sm_90a");
  unsetenv("IC_DUMP");
  ic_graph *g, *g2;
  OK(ic_graph_create(&g));
  ic_value x = ic_graph_input(g, "x", IC_I32, 1, (ic_dim[]){10}, 0);
  OK(ic_graph_output(g, "y", ic_graph_unary(g, IC_OP_NEG, x)));
  ic_program *p, *p2;
  OK(ic_compile(ctx, g, NULL, &p));
  char names[4][40];
  ck_assert_int_eq(dump_folders(dir, names, 4), 1);
  static const char *const files[] = {"graph.txt", "program.txt", "ic_k0.kir", "ic_k0.cu"};
  for (size_t i = 0; i < 4; i++) check_dump_file(dir, names[0], files[i]);
  char first[40];
  memcpy(first, names[0], sizeof first);

  /* Another graph (kernel names alike) keeps the first one's files. */
  OK(ic_graph_create(&g2));
  ic_value x2 = ic_graph_input(g2, "x", IC_F32, 1, (ic_dim[]){16}, 0);
  OK(ic_graph_output(g2, "y", ic_graph_unary(g2, IC_OP_ABS, x2)));
  ic_compile_options o = {.struct_size = sizeof o, .flags = IC_COMPILE_NO_CACHE};
  OK(ic_compile(ctx, g2, &o, &p2));
  ck_assert_int_eq(dump_folders(dir, names, 4), 2);
  ck_assert_msg(strcmp(names[0], first) == 0 || strcmp(names[1], first) == 0, "the first program's folder is gone");
  for (int k = 0; k < 2; k++)
    for (size_t i = 0; i < 4; i++) check_dump_file(dir, names[k], files[i]);
  char path[512];
  snprintf(path, sizeof path, "%s/%s/graph.txt", dir, first);
  FILE *f = fopen(path, "r");
  ck_assert_ptr_nonnull(f);
  char text[4096] = "";
  size_t n = fread(text, 1, sizeof text - 1, f);
  text[n] = '\0';
  fclose(f);
  ck_assert_msg(strstr(text, "i32") && !strstr(text, "f32"), "the first graph's graph.txt was overwritten:\n%s", text);

  /* The same graph again comes from the program cache: no new folder. */
  ic_program *again;
  OK(ic_compile(ctx, g, NULL, &again));
  ck_assert_int_eq(dump_folders(dir, names, 4), 2);
  ic_program_release(again);

  remove_dump(dir);
  ic_program_release(p);
  ic_program_release(p2);
  ic_graph_destroy(g);
  ic_graph_destroy(g2);
  ic_context_destroy(ctx);
}
END_TEST

/* IC_CONTEXT_WARM_COMPILER: a compile right away (while the thread may still run), a
 * destroy right away (joins it), a context without a target (no thread); unknown flag
 * bits are refused. */
START_TEST(test_warm_compiler) {
  ic_context_options o = {.struct_size = sizeof o, .arch = "sm_90a",
                          .flags = IC_CONTEXT_COMPILE_ONLY | IC_CONTEXT_NO_DISK_CACHE | IC_CONTEXT_WARM_COMPILER};
  ic_context *ctx = NULL;
  OK(ic_context_create(&o, &ctx));
  ic_context_destroy(ctx);
  OK(ic_context_create(&o, &ctx));
  ic_graph *g = NULL;
  OK(ic_graph_parse("input x : f32[8]\ny = exp(x)\noutput y\n", &g));
  ic_program *p = NULL;
  OK(ic_compile(ctx, g, NULL, &p));
  ck_assert_int_eq(ic_program_kernel_count(p), 1);
  ic_program_release(p);
  ic_context_destroy(ctx);
  unsetenv("IC_ARCH");
  ic_context_options ref = {.struct_size = sizeof ref, .flags = IC_CONTEXT_COMPILE_ONLY | IC_CONTEXT_WARM_COMPILER};
  OK(ic_context_create(&ref, &ctx));
  ic_context_destroy(ctx);
  o.flags |= 1u << 20;
  ctx = (ic_context *)1;
  ck_assert_int_eq(ic_context_create(&o, &ctx), IC_ERR_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(ic_last_error(), "unknown flag bits 0x100000"));
  ck_assert_ptr_null(ctx);
  ic_graph_destroy(g);
}
END_TEST

/* A chain of n ops over x [rows, 37] f32 (mul by w, add, tanh, sub, maximum, exp, ...). */
static ic_graph *chain_graph(int n) {
  ic_graph *g = NULL;
  OK(ic_graph_create(&g));
  ic_dim dims[2] = {ic_graph_symbol(g, "n"), 37};
  ic_value x = ic_graph_input(g, "x", IC_F32, 2, dims, IC_LAYOUT_CONTIGUOUS);
  ic_value w = ic_graph_input(g, "w", IC_F32, 1, &dims[1], IC_LAYOUT_CONTIGUOUS);
  ic_value c = ic_graph_constant(g, 0.5, IC_DTYPE_AUTO), v = x;
  for (int i = 0; i < n; i++) {
    switch (i % 6) {
    case 0: v = ic_graph_binary(g, IC_OP_MUL, v, w); break;
    case 1: v = ic_graph_binary(g, IC_OP_ADD, v, c); break;
    case 2: v = ic_graph_unary(g, IC_OP_TANH, v); break;
    case 3: v = ic_graph_binary(g, IC_OP_SUB, v, w); break;
    case 4: v = ic_graph_binary(g, IC_OP_MAXIMUM, v, c); break;
    default: v = ic_graph_unary(g, IC_OP_EXP, v); break;
    }
  }
  OK(ic_graph_output(g, "y", v));
  return g;
}

/* Large bodies are one __noinline__ function (NVRTC time), small ones stay inlined; both
 * compile for sm_90a and sm_80. */
START_TEST(test_large_bodies_not_inlined) {
  const char *const archs[] = {"sm_90a", "sm_80"};
  for (int a = 0; a < 2; a++) {
    ic_context *ctx = make_ctx(archs[a]);
    const int sizes[] = {6, 120};
    for (int k = 0; k < 2; k++) {
      ic_graph *g = chain_graph(sizes[k]);
      ic_compile_options o = {.struct_size = sizeof o, .flags = IC_COMPILE_NO_CACHE};
      ic_program *p = NULL;
      OK(ic_compile(ctx, g, &o, &p));
      ck_assert_int_eq(ic_program_kernel_count(p), 1);
      const char *src = ic_program_kernel_source(p, 0);
      if (k == 0) {
        ck_assert_ptr_nonnull(strstr(src, "__device__ __forceinline__ void"));
        ck_assert_ptr_null(strstr(src, "__noinline__"));
      } else {
        ck_assert_ptr_nonnull(strstr(src, "__device__ __noinline__ void"));
      }
      ic_program_release(p);
      ic_graph_destroy(g);
    }
    ic_context_destroy(ctx);
  }
}
END_TEST

/* The fusion budget: kernels hold at most budget ops, results stay bitwise those of the
 * unbudgeted and the eager programs (ref), and the budget is part of the program key. */
START_TEST(test_fusion_budget) {
  ic_context *ctx = make_ctx("sm_90a");
  ic_graph *g = chain_graph(40);
  ic_compile_options o = {.struct_size = sizeof o, .backend = "ref", .fusion_budget = 16};
  ic_program *budgeted = NULL, *whole = NULL, *eager = NULL, *none = NULL;
  OK(ic_compile(ctx, g, &o, &budgeted));
  ck_assert_int_ge(ic_program_kernel_count(budgeted), 3);
  o.fusion_budget = 0; /* the default: 40 ops fit */
  OK(ic_compile(ctx, g, &o, &whole));
  ck_assert_int_eq(ic_program_kernel_count(whole), 1);
  o.fusion_budget = -1;
  OK(ic_compile(ctx, g, &o, &none));
  ck_assert_int_eq(ic_program_kernel_count(none), 1);
  /* the budget is part of the program key: 0 is the default's own program, another
   * budget that schedules the same kernel a program of its own */
  ic_program *same = NULL, *other = NULL;
  o.fusion_budget = IC_FUSION_BUDGET_DEFAULT;
  OK(ic_compile(ctx, g, &o, &same));
  ck_assert_ptr_eq(same, whole);
  o.fusion_budget = 1000;
  OK(ic_compile(ctx, g, &o, &other));
  ck_assert_int_eq(ic_program_kernel_count(other), 1);
  ck_assert_ptr_ne(other, whole);
  ic_program_release(same);
  ic_program_release(other);
  o.fusion_budget = 0;
  o.mode = IC_MODE_EAGER;
  OK(ic_compile(ctx, g, &o, &eager));
  float x[7 * 37], w[37], y[3][7 * 37];
  for (int i = 0; i < 7 * 37; i++) x[i] = (float)((i * 53) % 97) / 40.0f - 1.2f;
  for (int j = 0; j < 37; j++) w[j] = 0.9f + (float)j / 100.0f;
  int64_t xs[2] = {7, 37}, ws[1] = {37}, ys[2] = {7, 37};
  ic_tensor in[2] = {{x, IC_F32, 2, xs, NULL}, {w, IC_F32, 1, ws, NULL}};
  ic_program *progs[3] = {budgeted, whole, eager};
  for (int k = 0; k < 3; k++) {
    ic_tensor out = {y[k], IC_F32, 2, ys, NULL};
    OK(ic_program_run(progs[k], in, 2, &out, 1, NULL));
  }
  ck_assert_int_eq(memcmp(y[0], y[1], sizeof y[0]), 0);
  ck_assert_int_eq(memcmp(y[0], y[2], sizeof y[0]), 0);
  /* chained reductions: 5 softmaxes (10 reductions, each depending on the one before)
   * make 3 kernels of at most 4 chained reductions; siblings do not count (reduce_norms
   * golden: softmax, layer norm and RMS norm of one input stay one kernel) */
  ic_graph *rg = NULL;
  OK(ic_graph_create(&rg));
  ic_dim rdims[2] = {ic_graph_symbol(rg, "n"), 37};
  ic_value rv = ic_graph_input(rg, "x", IC_F32, 2, rdims, IC_LAYOUT_CONTIGUOUS);
  for (int r = 0; r < 5; r++) rv = ic_graph_softmax(rg, rv, 1);
  OK(ic_graph_output(rg, "y", rv));
  ic_compile_options ro = {.struct_size = sizeof ro, .backend = "ref"};
  ic_program *chained = NULL, *unbounded = NULL, *chained_eager = NULL;
  OK(ic_compile(ctx, rg, &ro, &chained));
  ck_assert_int_eq(ic_program_kernel_count(chained), 3);
  ro.fusion_budget = -1;
  OK(ic_compile(ctx, rg, &ro, &unbounded));
  ck_assert_int_eq(ic_program_kernel_count(unbounded), 1);
  ro.fusion_budget = 0;
  ro.mode = IC_MODE_EAGER;
  OK(ic_compile(ctx, rg, &ro, &chained_eager));
  ic_program *rprogs[3] = {chained, unbounded, chained_eager};
  for (int k = 0; k < 3; k++) {
    ic_tensor out = {y[k], IC_F32, 2, ys, NULL};
    OK(ic_program_run(rprogs[k], in, 1, &out, 1, NULL));
    ic_program_release(rprogs[k]);
  }
  ck_assert_int_eq(memcmp(y[0], y[1], sizeof y[0]), 0);
  ck_assert_int_eq(memcmp(y[0], y[2], sizeof y[0]), 0);
  ic_graph_destroy(rg);

  o.fusion_budget = -2;
  ic_program *bad = NULL;
  ck_assert_int_eq(ic_compile(ctx, g, &o, &bad), IC_ERR_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(ic_last_error(), "fusion_budget -2"));
  ic_program_release(budgeted);
  ic_program_release(whole);
  ic_program_release(none);
  ic_program_release(eager);
  ic_graph_destroy(g);
  ic_context_destroy(ctx);
}
END_TEST

/* Write-dominated broadcasts take the row strategy (kir.h): the dump says so, NVRTC
 * compiles the kernels for sm_80 and sm_90a (fused and eager, several dtypes), and the
 * launch's blocks cover ceil(d / 4) row groups: [n, 1, 64] + [1, 6, 64] f32 at n = 3 is
 * 3 * 2 * 64 points of 4 a thread, 128 threads a block: 1 block (3 without the rows). */
/* Tile shapes: 64 x 128 for 1- and 2-byte tensors (a storage-bit tile, swizzled), 64 x 64
 * for wider ones, and no tiling where the tiles would pass a block's 48 KiB of static
 * shared memory (three f32 transposed loads); each compiles for sm_80 and sm_90a, and
 * the launch covers one block a tile. */
/* Whether g's fused program, compiled strict, is one kernel whose source holds needle. */
static bool one_kernel_source_has(ic_context *ctx, ic_graph *g, const char *needle) {
  ic_compile_options o = {.struct_size = sizeof o, .flags = IC_COMPILE_STRICT};
  ic_program *p;
  ck_assert_msg(ic_compile(ctx, g, &o, &p) == IC_OK, "%s", ic_last_error());
  ck_assert_int_eq(ic_program_kernel_count(p), 1);
  bool has = strstr(ic_program_kernel_source(p, 0), needle) != NULL;
  ic_program_release(p);
  return has;
}

/* Roundings to bf16 and f16 go two values a conversion where values come in pairs: the
 * vector slots of pointwise kernels call a pair body (<entry>_body2, ic_rnd2_), the
 * element loops of reduction kernels round pairs, and a stored op's value is its
 * rounding's bits (no second conversion). Casts from i32 and f64 keep their round-to-odd
 * step inside the pair. Every such source compiles for sm_80 and sm_90a. */
START_TEST(test_paired_roundings) {
  static const char *const arches[] = {"sm_80", "sm_90a"};
  for (int a = 0; a < 2; a++) {
    ic_context *ctx = make_ctx(arches[a]);
    for (int f16 = 0; f16 < 2; f16++) {
      const ic_dtype dt = f16 ? IC_F16 : IC_BF16;
      const char *rnd2 = f16 ? "ic_rnd2_f16(" : "ic_rnd2_bf16(";
      ic_graph *g;
      OK(ic_graph_create(&g));
      ic_dim dims[2] = {ic_graph_symbol(g, "n"), 64};
      ic_value x = ic_graph_input(g, "x", dt, 2, dims, IC_LAYOUT_CONTIGUOUS);
      ic_value i = ic_graph_input(g, "i", IC_I32, 2, dims, IC_LAYOUT_CONTIGUOUS);
      ic_value d = ic_graph_input(g, "d", IC_F64, 2, dims, IC_LAYOUT_CONTIGUOUS);
      ic_value y = ic_graph_binary(g, IC_OP_ADD, ic_graph_binary(g, IC_OP_MUL, x, x), ic_graph_cast(g, i, dt));
      OK(ic_graph_output(g, "y", ic_graph_binary(g, IC_OP_SUB, y, ic_graph_cast(g, d, dt))));
      ic_compile_options o = {.struct_size = sizeof o, .flags = IC_COMPILE_STRICT};
      ic_program *p;
      ck_assert_msg(ic_compile(ctx, g, &o, &p) == IC_OK, "%s %s: %s", arches[a], ic_dtype_name(dt), ic_last_error());
      ck_assert_int_eq(ic_program_kernel_count(p), 1);
      const char *src = ic_program_kernel_source(p, 0);
      ck_assert_ptr_nonnull(strstr(src, "_body2(const "));
      ck_assert_ptr_nonnull(strstr(src, "k += 2) ic_"));
      ck_assert_ptr_nonnull(strstr(src, rnd2));
      ck_assert_ptr_nonnull(strstr(src, "(ic_i2f_odd(v"));
      ck_assert_ptr_nonnull(strstr(src, "(ic_d2f_odd(v"));
      ic_program_release(p);
      ic_graph_destroy(g);

      /* RMS norm's shape: x * rsqrt(mean(x^2) + eps), cast to dt, times w */
      OK(ic_graph_create(&g));
      dims[0] = ic_graph_symbol(g, "n");
      dims[1] = 4096;
      x = ic_graph_input(g, "x", dt, 2, dims, IC_LAYOUT_CONTIGUOUS);
      ic_value w = ic_graph_input(g, "w", dt, 1, &dims[1], IC_LAYOUT_CONTIGUOUS);
      ic_value xf = ic_graph_cast(g, x, IC_F32);
      ic_value ms = ic_graph_reduce(g, IC_REDUCE_MEAN, ic_graph_binary(g, IC_OP_MUL, xf, xf), 1, (int32_t[]){1}, 1);
      ic_value r = ic_graph_unary(g, IC_OP_RSQRT, ic_graph_binary(g, IC_OP_ADD, ms, ic_graph_constant(g, 1e-6, IC_DTYPE_AUTO)));
      OK(ic_graph_output(g, "y", ic_graph_binary(g, IC_OP_MUL, ic_graph_cast(g, ic_graph_binary(g, IC_OP_MUL, xf, r), dt), w)));
      ck_assert_msg(ic_compile(ctx, g, &o, &p) == IC_OK, "%s %s rms: %s", arches[a], ic_dtype_name(dt), ic_last_error());
      ck_assert_int_eq(ic_program_kernel_count(p), 1);
      src = ic_program_kernel_source(p, 0);
      ck_assert_ptr_nonnull(strstr(src, "e += 2) "));
      ck_assert_ptr_nonnull(strstr(src, rnd2));
      ck_assert_ptr_nonnull(strstr(src, f16 ? "ic_rndbits_f16(ic_mul(" : "ic_rndbits_bf16(ic_mul("));
      ic_program_release(p);
      ic_graph_destroy(g);
    }
    /* f32 kernels have no pair body */
    ic_graph *g;
    OK(ic_graph_create(&g));
    ic_value x = ic_graph_input(g, "x", IC_F32, 1, (ic_dim[]){ic_graph_symbol(g, "n")}, IC_LAYOUT_CONTIGUOUS);
    OK(ic_graph_output(g, "y", ic_graph_binary(g, IC_OP_MUL, x, x)));
    ck_assert(!one_kernel_source_has(ctx, g, "_body2"));
    ic_graph_destroy(g);
    ic_context_destroy(ctx);
  }
}
END_TEST

/* Division by a row value: the row's reciprocal once and a few instructions an element
 * where a thread divides at least 8 chunks of the row or the row length is symbolic;
 * the division itself, element by element, with fewer (softmax rows of 1024, 4096 and
 * 16384, where the reciprocal measured slower). */
START_TEST(test_row_division_strategy) {
  ic_context *ctx = make_ctx("sm_90a");
  static const struct {
    int64_t len; /* 0: symbolic */
    bool window;
  } cases[] = {{1024, false}, {4096, false}, {16384, false}, {0, true}};
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
    ic_graph *g;
    OK(ic_graph_create(&g));
    ic_dim len = cases[c].len ? cases[c].len : ic_graph_symbol(g, "m");
    ic_value x = ic_graph_input(g, "x", IC_F32, 2, (ic_dim[]){ic_graph_symbol(g, "n"), len}, IC_LAYOUT_CONTIGUOUS);
    OK(ic_graph_output(g, "y", ic_graph_softmax(g, x, 1)));
    ck_assert_msg(one_kernel_source_has(ctx, g, "ic_divisor_prep(v") == cases[c].window, "rows of %lld", (long long)cases[c].len);
    ic_graph_destroy(g);
  }
  /* FP8 row quantization, bf16 rows of 8192 (8 chunks a thread): the reciprocal */
  ic_graph *g;
  OK(ic_graph_create(&g));
  ic_value x = ic_graph_cast(g, ic_graph_input(g, "x", IC_BF16, 2, (ic_dim[]){ic_graph_symbol(g, "n"), 8192}, IC_LAYOUT_CONTIGUOUS),
                             IC_F32);
  ic_value amax = ic_graph_reduce(g, IC_REDUCE_MAX, ic_graph_unary(g, IC_OP_ABS, x), 1, (int32_t[]){1}, 1);
  ic_value scale = ic_graph_binary(g, IC_OP_DIV, amax, ic_graph_constant(g, 448, IC_DTYPE_AUTO));
  OK(ic_graph_output(g, "q", ic_graph_cast_saturate(g, ic_graph_binary(g, IC_OP_DIV, x, scale), IC_F8E4M3)));
  ck_assert(one_kernel_source_has(ctx, g, "ic_divisor_prep(v"));
  ic_graph_destroy(g);
  ic_context_destroy(ctx);
}
END_TEST

START_TEST(test_tile_shapes) {
  static const struct {
    ic_dtype dt;
    int loads;
    const char *strategy;
    int64_t blocks; /* of the [200, 300] output: 4 tiles along p times 3 (128 wide) or 5 */
  } cases[] = {
      {IC_BF16, 1, "64 x 128 tiles", 4 * 3},  {IC_U8, 1, "64 x 128 tiles", 4 * 3}, {IC_F8E4M3, 2, "64 x 128 tiles", 4 * 3},
      {IC_F32, 1, "64 x 64 tiles", 4 * 5},    {IC_F32, 2, "64 x 64 tiles", 4 * 5}, {IC_F32, 3, "strategy vector", -1},
      {IC_F64, 1, "64 x 64 tiles", 4 * 5},
  };
  static const char *const arches[] = {"sm_80", "sm_90a"};
  for (int a = 0; a < 2; a++) {
    ic_context *ctx = make_ctx(arches[a]);
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
      ic_graph *g;
      OK(ic_graph_create(&g));
      /* constant dims: the transposed loads' order is known */
      ic_value v = ic_graph_input(g, "x", cases[c].dt, 2, (ic_dim[]){200, 300}, IC_LAYOUT_CONTIGUOUS);
      for (int l = 0; l < cases[c].loads; l++) {
        const char name[3] = {'y', (char)('0' + l), 0};
        ic_value y = ic_graph_input(g, name, cases[c].dt, 2, (ic_dim[]){300, 200}, IC_LAYOUT_CONTIGUOUS);
        ic_value yt = ic_graph_permute(g, y, 2, (int32_t[]){1, 0});
        v = ic_graph_binary(g, cases[c].dt == IC_U8 ? IC_OP_BITWISE_XOR : IC_OP_ADD, v, yt);
      }
      OK(ic_graph_output(g, "o", v));
      ic_compile_options o = {.struct_size = sizeof o, .flags = IC_COMPILE_STRICT};
      ic_program *p;
      ck_assert_msg(ic_compile(ctx, g, &o, &p) == IC_OK, "%s %s x%d: %s", arches[a], ic_dtype_name(cases[c].dt),
                    cases[c].loads, ic_last_error());
      ck_assert_int_eq(ic_program_kernel_count(p), 1);
      ck_assert_msg(strstr(ic_program_kernel_ir(p, 0), cases[c].strategy), "%s x%d: %s", ic_dtype_name(cases[c].dt),
                    cases[c].loads, ic_program_kernel_ir(p, 0));
      for (int32_t i = 0; cases[c].blocks > 0 && i < ic_program_step_count(p); i++) {
        ic_step st;
        OK(ic_program_step(p, i, &st));
        if (st.kind != IC_STEP_LAUNCH) continue;
        int64_t blocks = 0;
        OK(ic_program_eval(p, st.grid_expr, NULL, &blocks));
        ck_assert_int_eq(st.block, 256);
        ck_assert_int_eq(blocks, cases[c].blocks);
      }
      ic_program_release(p);
      ic_graph_destroy(g);
    }
    ic_context_destroy(ctx);
  }
}
END_TEST

START_TEST(test_row_strategy) {
  static const char *const arches[] = {"sm_80", "sm_90a"};
  static const ic_dtype dts[] = {IC_F32, IC_BF16, IC_F64, IC_BOOL, IC_F8E4M3};
  for (int a = 0; a < 2; a++) {
    ic_context *ctx = make_ctx(arches[a]);
    for (size_t di = 0; di < sizeof dts / sizeof *dts; di++) {
      ic_dtype dt = dts[di];
      ic_op op = dt == IC_BOOL ? IC_OP_BITWISE_XOR : IC_OP_ADD;
      ic_graph *g;
      OK(ic_graph_create(&g));
      ic_dim n = ic_graph_symbol(g, "n");
      ic_value x = ic_graph_input(g, "x", dt, 3, (ic_dim[]){n, 1, 64}, IC_LAYOUT_CONTIGUOUS);
      ic_value y = ic_graph_input(g, "y", dt, 3, (ic_dim[]){1, 6, 64}, IC_LAYOUT_CONTIGUOUS);
      OK(ic_graph_output(g, "o", ic_graph_binary(g, op, x, y)));
      for (int m = 0; m < 2; m++) {
        ic_compile_options o = {.struct_size = sizeof o, .mode = m ? IC_MODE_EAGER : IC_MODE_FUSED, .flags = IC_COMPILE_STRICT};
        ic_program *p;
        ck_assert_msg(ic_compile(ctx, g, &o, &p) == IC_OK, "%s %s: %s", arches[a], ic_dtype_name(dt), ic_last_error());
        ck_assert_int_eq(ic_program_kernel_count(p), 1);
        ck_assert_ptr_nonnull(strstr(ic_program_kernel_ir(p, 0), "4 rows of i1 a thread"));
        if (dt == IC_F32) {
          for (int32_t i = 0; i < ic_program_step_count(p); i++) {
            ic_step st;
            OK(ic_program_step(p, i, &st));
            if (st.kind != IC_STEP_LAUNCH) continue;
            int64_t syms[1] = {3}, blocks = 0;
            OK(ic_program_eval(p, st.grid_expr, syms, &blocks));
            ck_assert_int_eq(st.block, 128);
            ck_assert_int_eq(blocks, 1);
          }
        }
        ic_program_release(p);
      }
      ic_graph_destroy(g);
    }
    /* RoPE over a batch: cos and sin (1 MiB each) read once for 4 batch rows, the
     * concat's ranges once a slot */
    ic_graph *g;
    OK(ic_graph_create(&g));
    ic_value x = ic_graph_input(g, "x", IC_BF16, 3, (ic_dim[]){ic_graph_symbol(g, "n"), 4096, 128}, IC_LAYOUT_CONTIGUOUS);
    ic_value cs = ic_graph_input(g, "cos", IC_BF16, 2, (ic_dim[]){4096, 128}, IC_LAYOUT_CONTIGUOUS);
    ic_value sn = ic_graph_input(g, "sin", IC_BF16, 2, (ic_dim[]){4096, 128}, IC_LAYOUT_CONTIGUOUS);
    ic_value halves[2] = {ic_graph_unary(g, IC_OP_NEG, ic_graph_slice(g, x, 2, 64, 128, 1)), ic_graph_slice(g, x, 2, 0, 64, 1)};
    ic_value rot = ic_graph_concat(g, 2, halves, 2);
    OK(ic_graph_output(g, "y", ic_graph_binary(g, IC_OP_ADD, ic_graph_binary(g, IC_OP_MUL, x, cs),
                                               ic_graph_binary(g, IC_OP_MUL, rot, sn))));
    ic_compile_options o = {.struct_size = sizeof o, .flags = IC_COMPILE_STRICT};
    ic_program *p;
    ck_assert_msg(ic_compile(ctx, g, &o, &p) == IC_OK, "%s rope: %s", arches[a], ic_last_error());
    ck_assert_int_eq(ic_program_kernel_count(p), 1);
    ck_assert_ptr_nonnull(strstr(ic_program_kernel_ir(p, 0), "ranges once a slot, 4 rows of i0 a thread"));
    /* the concat's two halves of x: one vector load from the address the slot's range
     * picks; the negated half is not rounded again (its NaN bits reach only a where and a
     * multiply, which makes its own NaN) */
    const char *src = ic_program_kernel_source(p, 0);
    ck_assert_ptr_nonnull(strstr(src, ") {\n    { ic_u32 w[4]; ic_ld_w4((u"));
    ck_assert_ptr_nonnull(strstr(src, "= ic_neg(v"));
    ck_assert_ptr_null(strstr(src, "ic_rnd_bf16(ic_neg("));
    ck_assert_ptr_nonnull(strstr(ic_program_kernel_ir(p, 0), "(vector, one load with v"));
    ck_assert_ptr_nonnull(strstr(ic_program_kernel_ir(p, 0), "(exact: not rounded)"));
    ic_program_release(p);
    /* the negated half also an output: its bits are stored, so it is rounded, and its load
     * is seen outside the where: no shared load */
    ic_graph *g2;
    OK(ic_graph_create(&g2));
    x = ic_graph_input(g2, "x", IC_BF16, 3, (ic_dim[]){ic_graph_symbol(g2, "n"), 4096, 128}, IC_LAYOUT_CONTIGUOUS);
    cs = ic_graph_input(g2, "cos", IC_BF16, 2, (ic_dim[]){4096, 128}, IC_LAYOUT_CONTIGUOUS);
    sn = ic_graph_input(g2, "sin", IC_BF16, 2, (ic_dim[]){4096, 128}, IC_LAYOUT_CONTIGUOUS);
    halves[0] = ic_graph_unary(g2, IC_OP_NEG, ic_graph_slice(g2, x, 2, 64, 128, 1));
    halves[1] = ic_graph_slice(g2, x, 2, 0, 64, 1);
    rot = ic_graph_concat(g2, 2, halves, 2);
    OK(ic_graph_output(g2, "y", ic_graph_binary(g2, IC_OP_ADD, ic_graph_binary(g2, IC_OP_MUL, x, cs),
                                                ic_graph_binary(g2, IC_OP_MUL, rot, sn))));
    OK(ic_graph_output(g2, "neg_half", halves[0]));
    ck_assert_msg(ic_compile(ctx, g2, &o, &p) == IC_OK, "%s rope + neg half: %s", arches[a], ic_last_error());
    for (int32_t kk = 0; kk < ic_program_kernel_count(p); kk++) {
      src = ic_program_kernel_source(p, kk);
      ck_assert_ptr_null(strstr(src, "ic_ld_w4((u"));
      ck_assert_ptr_null(strstr(src, "= ic_neg(")); /* stored: ic_rndbits_bf16(ic_neg(...)) */
      ck_assert_ptr_null(strstr(ic_program_kernel_ir(p, kk), "one load with"));
      ck_assert_ptr_null(strstr(ic_program_kernel_ir(p, kk), "not rounded"));
    }
    ic_program_release(p);
    ic_graph_destroy(g2);
    /* eager: the kernels' sizes are generalized after the launch is sized (cos and sin of
     * a size the kernel no longer knows), and each kernel must still do what its launch
     * counts on: with rows, batches of 1 and of 4 are one row group, the same blocks */
    o.mode = IC_MODE_EAGER;
    ck_assert_msg(ic_compile(ctx, g, &o, &p) == IC_OK, "%s eager rope: %s", arches[a], ic_last_error());
    int rows = 0;
    for (int32_t i = 0; i < ic_program_step_count(p); i++) {
      ic_step st;
      OK(ic_program_step(p, i, &st));
      if (st.kind != IC_STEP_LAUNCH) continue;
      int64_t one[1] = {1}, four[1] = {4}, blocks1 = 0, blocks4 = 0;
      OK(ic_program_eval(p, st.grid_expr, one, &blocks1));
      OK(ic_program_eval(p, st.grid_expr, four, &blocks4));
      bool has_rows = strstr(ic_program_kernel_ir(p, st.kernel), "4 rows of i0") != NULL;
      rows += has_rows;
      ck_assert_int_eq(blocks4, has_rows ? blocks1 : 4 * blocks1);
    }
    ck_assert_int_ge(rows, 1);
    ic_program_release(p);
    ic_graph_destroy(g);
    ic_context_destroy(ctx);
  }
}
END_TEST

int main(int argc, char **argv) {
  Suite *s = suite_create("compile");
  CHECK_CASE(s, test_context_without_gpu, NULL, NULL);
  CHECK_CASE(s, test_fusion_groupings, NULL, NULL);
  CHECK_CASE(s, test_kernel_ir_and_program_text, NULL, NULL);
  CHECK_CASE(s, test_views_fold_into_offsets, NULL, NULL);
  CHECK_CASE(s, test_every_op_compiles_sm90a_ints, NULL, NULL);
  CHECK_CASE(s, test_every_op_compiles_sm90a_floats, NULL, NULL);
  CHECK_CASE(s, test_every_op_compiles_sm89_ints, NULL, NULL);
  CHECK_CASE(s, test_every_op_compiles_sm89_floats, NULL, NULL);
  CHECK_CASE(s, test_every_op_compiles_sm80_ints, NULL, NULL);
  CHECK_CASE(s, test_every_op_compiles_sm80_floats, NULL, NULL);
  CHECK_CASE(s, test_every_op_compiles_sm90a_unsigned, NULL, NULL);
  CHECK_CASE(s, test_every_op_compiles_sm89_unsigned, NULL, NULL);
  CHECK_CASE(s, test_every_op_compiles_sm80_unsigned, NULL, NULL);
  CHECK_CASE(s, test_eager_fallback_and_strict, NULL, NULL);
  CHECK_CASE(s, test_ref_context_needs_no_nvrtc, NULL, NULL);
  CHECK_CASE(s, test_nvrtc_error_carries_log, NULL, NULL);
  CHECK_CASE(s, test_prelude_parts_compile, NULL, NULL);
  CHECK_CASE(s, test_ic_dump, NULL, NULL);
  CHECK_CASE(s, test_large_bodies_not_inlined, NULL, NULL);
  CHECK_CASE(s, test_row_strategy, NULL, NULL);
  CHECK_CASE(s, test_tile_shapes, NULL, NULL);
  CHECK_CASE(s, test_paired_roundings, NULL, NULL);
  CHECK_CASE(s, test_row_division_strategy, NULL, NULL);
  CHECK_CASE(s, test_fusion_budget, NULL, NULL);
  CHECK_CASE(s, test_warm_compiler, NULL, NULL);
  if (check_list_cases(argc, argv, s)) return 0;
  return check_run_suite(s);
}
