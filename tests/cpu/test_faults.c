/* Fault injection (lib/base/fault.h): every allocation, file-system and NVRTC call of
 * whole sequences (context creation, parse + compile + run on ref with allocated
 * outputs, cold / warm / disk-cache compiles for sm_90a, cache writes) is made to fail
 * in turn, N = 1, 2, ... until the sequence makes fewer than N calls. Each failure must
 * return a clean status with a message (or be absorbed where ic documents it: the disk
 * cache is best effort), leave no output allocated and no partial cache entry, and the
 * context must stay usable: the same sequence then succeeds. Leaks are LeakSanitizer's
 * to find (the ASan build runs this test too). The driver's points are swept by the GPU
 * suite (gpu_faults). */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <ftw.h>
#include <math.h>
#include <nvrtc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fault.h"
#include "cuda/cuda_api.h"
#include "check_main.h"
#include "fault_sweep.h"
#include "ic/ic.h"

#define OK(call) ck_assert_msg((call) == IC_OK, "%s: %s", #call, ic_last_error())

/* ---------------------------------------------------------------- temp directories */

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
  (void)st, (void)flag, (void)ftw;
  remove(path);
  return 0;
}

static void remove_tree(const char *path) { nftw(path, remove_one, 16, FTW_DEPTH | FTW_PHYS); }

static char cache_root[64];

static void make_cache_root(void) {
  snprintf(cache_root, sizeof cache_root, "/tmp/ic-faults-XXXXXX");
  ck_assert_ptr_nonnull(mkdtemp(cache_root));
}

/* Files under dir whose names start with the disk cache's temp prefix (".tmp.", see
 * lib/cache/disk.c), or that are neither directories nor regular files: what an
 * interrupted put would leave. */
static int count_leftovers(const char *dir) {
  int n = 0;
  DIR *d = opendir(dir);
  if (!d) return 0;
  struct dirent *de;
  while ((de = readdir(d)) != NULL) {
    if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0) continue;
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
    struct stat st;
    if (lstat(path, &st) != 0) continue;
    if (S_ISDIR(st.st_mode)) n += count_leftovers(path);
    else if (!S_ISREG(st.st_mode) || strncmp(de->d_name, ".tmp.", 5) == 0) n++;
  }
  closedir(d);
  return n;
}

/* ---------------------------------------------------------------- sequences */

typedef struct seq_env {
  ic_context *ctx;       /* the long-lived context of the sequence, or NULL */
  const char *backend;   /* "ref" or "cuda" */
  ic_compile_mode mode;
  uint32_t flags;        /* ic_compile flags */
  bool run;              /* run the program (ref only) */
  bool own_context;      /* create (and destroy) a context inside the sequence */
  uint32_t ctx_flags;    /* for own_context */
  const char *cache_dir; /* for own_context */
  const char *text;      /* another graph to compile (with run false), NULL: GRAPH_TEXT */
} seq_env;

/* The two ic-allocated outputs of a run that returned s, freed; a failed run leaves none
 * behind. */
static void release_outputs(ic_status s, ic_tensor out[2]) {
  if (s != IC_OK) {
    ck_assert_ptr_null(out[0].data);
    ck_assert_ptr_null(out[1].data);
  }
  free(out[0].data);
  free(out[1].data);
}

/* Parse, compile, and (on ref) run with ic-allocated outputs. Returns the first failing
 * status; everything it made is released whatever happens. */
static ic_status run_sequence(const void *arg) {
  const seq_env *env = arg;
  ic_context *ctx = env->ctx;
  ic_status s = IC_OK;
  if (env->own_context) {
    ic_context_options o = {.struct_size = sizeof o, .arch = "sm_90a", .flags = env->ctx_flags,
                            .cache_dir = env->cache_dir};
    ctx = NULL;
    if ((s = ic_context_create(&o, &ctx)) != IC_OK) {
      ck_assert_ptr_null(ctx);
      return s;
    }
  }
  ic_graph *g = NULL;
  ic_program *p = NULL;
  if ((s = ic_graph_parse(env->text ? env->text : GRAPH_TEXT, &g)) != IC_OK) ck_assert_ptr_null(g);
  ic_compile_options co = {.struct_size = sizeof co, .mode = env->mode, .flags = env->flags, .backend = env->backend};
  if (!s && (s = ic_compile(ctx, g, &co, &p)) != IC_OK) ck_assert_ptr_null(p);
  if (!s && env->run) {
    float x[ROWS * COLS], w[COLS];
    for (int i = 0; i < ROWS * COLS; i++) x[i] = input_x(i);
    for (int j = 0; j < COLS; j++) w[j] = input_w(j);
    int64_t xs[2] = {ROWS, COLS}, ws[1] = {COLS};
    ic_tensor in[2] = {{x, IC_F32, 2, xs, NULL}, {w, IC_F32, 1, ws, NULL}};
    ic_tensor out[2] = {{NULL, IC_F32, 2, NULL, NULL}, {NULL, IC_F32, 2, NULL, NULL}};
    s = ic_program_run(p, in, 2, out, 2, NULL);
    if (s == IC_OK) {
      ck_assert_msg(outputs_right(out[0].data, out[1].data), "wrong results after a sweep");
    }
    release_outputs(s, out);
  }
  ic_program_release(p);
  ic_graph_destroy(g);
  if (env->own_context) ic_context_destroy(ctx);
  return s;
}

/* A row longer than a lane group (262144): softmax and std as a kernel a pass. Each run
 * that succeeds gives the bits of the first (a fault never leaves a program that skips a
 * pass or computes another thing); a failed run leaves no output. */
enum { PASSES_N = 262152 };
static const char *const PASSES_TEXT = "input x : f32[1, 262152]\ny = softmax(x, 1)\nz = std(x, [1])\noutput y\noutput z\n";
static float *passes_want[2];
/* The sweep calls run_passes under a fault, then unarmed (the context must still work).
 * Under a fault, a program that compiled runs and must give the first run's bits. The
 * unarmed call after a fault that hit the compile compiles again; after one that hit the
 * run it runs again too. (A run of the row of 262152 elements costs more than a compile:
 * running after every compile doubled the sweep's time for no fault point more.) */
static bool passes_run_again;

static ic_status run_passes(const void *arg) {
  ic_context *ctx = (ic_context *)(uintptr_t)arg;
  ic_graph *g = NULL;
  ic_program *p = NULL;
  const int64_t calls = fault_calls();
  ic_status s = ic_graph_parse(PASSES_TEXT, &g);
  if (s != IC_OK) ck_assert_ptr_null(g);
  ic_compile_options co = {.struct_size = sizeof co, .backend = "ref", .flags = IC_COMPILE_NO_CACHE};
  if (!s && (s = ic_compile(ctx, g, &co, &p)) != IC_OK) ck_assert_ptr_null(p);
  const bool armed = fault_calls() > calls, fired_in_compile = armed && fault_fired();
  const bool run = !passes_want[0] || armed || passes_run_again;
  passes_run_again = armed && !fired_in_compile;
  if (!s && run) {
    static float x[PASSES_N];
    for (int i = 0; i < PASSES_N; i++) x[i] = (float)((i * 37) % 101) / 16.0f - 3.0f;
    int64_t xs[2] = {1, PASSES_N};
    ic_tensor in = {x, IC_F32, 2, xs, NULL};
    ic_tensor out[2] = {{NULL, IC_F32, 2, NULL, NULL}, {NULL, IC_F32, 1, NULL, NULL}};
    const size_t bytes[2] = {sizeof(float) * PASSES_N, sizeof(float)};
    s = ic_program_run(p, &in, 1, out, 2, NULL);
    for (int k = 0; k < 2 && s == IC_OK; k++) {
      if (!passes_want[k]) {
        passes_want[k] = malloc(bytes[k]);
        memcpy(passes_want[k], out[k].data, bytes[k]);
      }
      ck_assert_msg(memcmp(out[k].data, passes_want[k], bytes[k]) == 0, "a kernel a pass: output %d differs after a fault", k);
    }
    release_outputs(s, out);
  }
  ic_program_release(p);
  ic_graph_destroy(g);
  return s;
}

/* ---------------------------------------------------------------- tests */

START_TEST(test_point_table) {
  int32_t n = 0;
  const fault_point *pts = fault_points(&n);
  ck_assert_int_gt(n, 40);
  for (int32_t i = 0; i < n; i++) {
    ck_assert_int_eq(fault_arm(pts[i].name, 1, 1), IC_OK);
    ck_assert_str_ne(fault_class_name(pts[i].cls), "?");
  }
  fault_disarm();
  for (int c = 0; c < FAULT_CLASSES; c++) ck_assert_int_eq(fault_arm(fault_class_name((fault_class)c), 3, 1), IC_OK);
  ck_assert_int_eq(fault_arm("any", 1, 1), IC_OK);
  fault_disarm();
  ck_assert_int_eq(fault_arm("mallocx", 1, 1), IC_ERR_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(ic_last_error(), "mallocx"));
  ck_assert_int_eq(fault_arm("alloc", 0, 1), IC_ERR_INVALID_ARGUMENT);
  ck_assert_int_eq(fault_arm(NULL, 1, 1), IC_ERR_INVALID_ARGUMENT);
  ck_assert_int_eq(fault_arm("nvrtc", 1, 0), IC_ERR_INVALID_ARGUMENT);
  /* the third matching call fails, once; other classes are not counted */
  ck_assert_int_eq(fault_arm("fs", 3, EIO), IC_OK);
  ck_assert(!fault_hit(FAULT_ALLOC, "malloc"));
  ck_assert(!fault_hit(FAULT_FS, "open"));
  ck_assert(!fault_hit(FAULT_FS, "read"));
  ck_assert(fault_hit(FAULT_FS, "write"));
  ck_assert_int_eq(fault_code(), EIO);
  ck_assert(!fault_hit(FAULT_FS, "write"));
  ck_assert(fault_fired());
  ck_assert_int_eq(fault_calls(), 4);
  ck_assert_int_eq(fault_arm("rename", 1, ENOSPC), IC_OK);
  ck_assert(!fault_fired());
  ck_assert(!fault_hit(FAULT_FS, "write"));
  ck_assert(fault_hit(FAULT_FS, "rename"));
  fault_disarm();
  ck_assert(!fault_hit(FAULT_FS, "rename"));
  /* class arming passes over releases; a release armed by name fails */
  ck_assert_int_eq(fault_arm("nvrtc", 1, 1), IC_OK);
  ck_assert(!fault_hit(FAULT_NVRTC, "nvrtcDestroyProgram"));
  ck_assert(fault_hit(FAULT_NVRTC, "nvrtcCompileProgram"));
  ck_assert_int_eq(fault_arm("cuMemFree", 1, 1), IC_OK);
  ck_assert(fault_hit(FAULT_DRIVER, "cuMemFree"));
  fault_disarm();
  /* every driver entry ic calls after loading is a point */
  size_t ndrv = 0;
  const cuda_driver_entry *drv = cuda_driver_entries(&ndrv);
  for (size_t i = 0; i < ndrv; i++) {
    static const char *const loader[] = {"cuInit", "cuDriverGetVersion", "cuGetErrorString", "cuGetErrorName"};
    bool is_loader = false;
    for (size_t k = 0; k < sizeof loader / sizeof loader[0]; k++) is_loader |= strcmp(drv[i].name, loader[k]) == 0;
    bool found = false;
    for (int32_t k = 0; k < n; k++) found |= strcmp(pts[k].name, drv[i].name) == 0;
    ck_assert_msg(found != is_loader, "driver entry %s: %s", drv[i].name,
                  is_loader ? "a loader call in the table" : "not a fault point");
  }
}
END_TEST

START_TEST(test_context_creation) {
  make_cache_root();
  seq_env env = {.own_context = true, .ctx_flags = IC_CONTEXT_COMPILE_ONLY, .cache_dir = cache_root,
                 .backend = "ref", .run = true};
  sweep("context + ref compile + run", run_sequence, &env, "alloc", ENOMEM, NULL);
  sweep("context + ref compile + run", run_sequence, &env, "fs", EACCES, NULL);
  remove_tree(cache_root);
}
END_TEST

/* A context without disk cache for the ref sweeps; programs compiled uncached. */
static ic_context *ref_ctx;
static seq_env ref_fused;

static void ref_setup(void) {
  ic_context_options o = {.struct_size = sizeof o, .flags = IC_CONTEXT_NO_DISK_CACHE};
  OK(ic_context_create(&o, &ref_ctx));
  ref_fused = (seq_env){.ctx = ref_ctx, .backend = "ref", .mode = IC_MODE_FUSED, .flags = IC_COMPILE_NO_CACHE,
                        .run = true};
}

static void ref_teardown(void) {
  ic_context_destroy(ref_ctx);
  ref_ctx = NULL;
}

START_TEST(test_ref_fused_uncached) {
  sweep("ref fused, uncached", run_sequence, &ref_fused, "alloc", ENOMEM, NULL);
}
END_TEST

START_TEST(test_ref_eager_uncached) {
  seq_env eager = ref_fused;
  eager.mode = IC_MODE_EAGER;
  sweep("ref eager, uncached", run_sequence, &eager, "alloc", ENOMEM, NULL);
}
END_TEST

/* warm: the program cache answers the compile */
START_TEST(test_ref_program_cache) {
  seq_env warm = ref_fused;
  warm.flags = 0;
  ck_assert_int_eq(run_sequence(&warm), IC_OK);
  sweep("ref fused, program cache", run_sequence, &warm, "alloc", ENOMEM, NULL);
}
END_TEST

/* the kernel IR passes a quantization takes: the amax of an abs left unrounded, a cast of
 * a clamp folded into a saturating cast and the clamp dropped (kir_fold_clamped_casts) */
START_TEST(test_ref_clamped_fp8_cast) {
  seq_env quant = ref_fused;
  quant.run = false; /* its inputs are not run_sequence's */
  quant.text = "symbol n\ninput x : bf16[n, 64]\nlo = const -448\nhi = const 448\nax = abs(x)\n"
               "am = max(ax, [1], keepdim)\nxf = cast(x, f32)\naf = cast(am, f32)\nv = mul(xf, af)\n"
               "c = clamp(v, lo, hi)\nq = cast(c, f8e4m3)\noutput q\n";
  ck_assert_int_eq(run_sequence(&quant), IC_OK);
  sweep("ref fused, clamped fp8 cast", run_sequence, &quant, "alloc", ENOMEM, NULL);
}
END_TEST

/* the lowering's canonicalizations: statistics over two adjacent dims and a kept 1
 * (merge_axes.c), the affine over another reshape of the same rows moved onto the
 * reduction's space, a weight cast before its broadcast (broadcast.c), outputs that are
 * reshapes, and the canonical node order (order.c) */
START_TEST(test_ref_canonicalized_spellings) {
  seq_env norm = ref_fused;
  norm.run = false; /* its inputs are not run_sequence's */
  norm.text = "symbol n\ninput x : f32[n, 8, 6]\ninput w : bf16[8]\neps = const 1e-5\n"
              "xg = reshape(x, [n, 1, 2, 4, 6])\nm = mean(xg, [3, 4], keepdim)\nd = sub(xg, m)\nd2 = mul(d, d)\n"
              "v = mean(d2, [3, 4])\nvk = reshape(v, [n, 1, 2, 1, 1])\nve = add(vk, eps)\nr = rsqrt(ve)\n"
              "xn = mul(d, r)\nx3 = reshape(xn, [n, 8, 6])\nwf = cast(w, f32)\nw3 = reshape(wf, [8, 1])\n"
              "y3 = mul(x3, w3)\ny = reshape(y3, [n, 48])\nvs = reshape(v, [n, 2])\noutput y\noutput vs\n";
  ck_assert_int_eq(run_sequence(&norm), IC_OK);
  sweep("ref fused, canonicalized spellings", run_sequence, &norm, "alloc", ENOMEM, NULL);
}
END_TEST

/* matmuls: a prologue (a cast of a transposed weight) and an epilogue in the contraction's
 * kernel, an i8 weight copied to K-major order, an operand strided both ways copied
 * (lower_matmul, lower_matmul_copy, the contraction group, the ref backend's rows) */
START_TEST(test_ref_matmul) {
  seq_env mm = ref_fused;
  mm.run = false; /* its inputs are not run_sequence's */
  mm.text = "symbol n\ninput x : f32[n, 16]\ninput w : bf16[8, 16]\ninput b : f32[8]\ninput q : i8[16, 8]\n"
            "input s : bf16[32, 32]\nwt = permute(w, [1, 0])\nwf = cast(wt, f32)\nh = matmul(x, wf)\n"
            "y = add(h, b)\nr = relu(y)\nxq = cast(x, i8)\nz = matmul(xq, q)\nsr = slice(s, 0, 0, 32, 2)\n"
            "sa = slice(sr, 1, 0, 32, 2)\nsw = slice(w, 1, 0, 16, 1)\nsb = permute(sw, [1, 0])\nt = matmul(sa, sb)\n"
            "output r\noutput h\noutput z\noutput t\n";
  ck_assert_int_eq(run_sequence(&mm), IC_OK);
  sweep("ref fused, matmuls", run_sequence, &mm, "alloc", ENOMEM, NULL);
}
END_TEST

/* few long rows: a kernel a pass (kir_pass_kernel, program_push_passes), run */
START_TEST(test_ref_passes) {
  ck_assert_int_eq(run_passes(ref_ctx), IC_OK);
  sweep_result r = sweep("ref fused, a kernel a pass", run_passes, ref_ctx, "alloc", ENOMEM, NULL);
  ck_assert_int_gt(r.failed, 0);
  free(passes_want[0]);
  free(passes_want[1]);
  passes_want[0] = passes_want[1] = NULL;
  passes_run_again = false;
}
END_TEST

/* A context compiling for sm_90a without disk cache, programs uncached. */
static ic_context *cold_ctx;
static seq_env cold_fused;

static void cold_setup(void) {
  ic_context_options o = {.struct_size = sizeof o, .arch = "sm_90a", .flags = IC_CONTEXT_NO_DISK_CACHE};
  OK(ic_context_create(&o, &cold_ctx));
  cold_fused = (seq_env){.ctx = cold_ctx, .backend = "cuda", .mode = IC_MODE_FUSED, .flags = IC_COMPILE_NO_CACHE};
  ck_assert_int_eq(run_sequence(&cold_fused), IC_OK);
}

static void cold_teardown(void) {
  ic_context_destroy(cold_ctx);
  cold_ctx = NULL;
}

START_TEST(test_cuda_cold_nvrtc) {
  sweep("cuda sm_90a cold compile", run_sequence, &cold_fused, "nvrtc", NVRTC_ERROR_OUT_OF_MEMORY, NULL);
  sweep("cuda sm_90a cold compile", run_sequence, &cold_fused, "nvrtc", NVRTC_ERROR_INTERNAL_ERROR, NULL);
}
END_TEST

START_TEST(test_cuda_cold_alloc) {
  sweep("cuda sm_90a cold compile", run_sequence, &cold_fused, "alloc", ENOMEM, NULL);
}
END_TEST

/* eager, caches on in a fresh context each time: several missing kernels, compiled as
 * parallel NVRTC batch parts on threads (a failed part: its kernels one by one) */
START_TEST(test_cuda_cold_eager_batches) {
  seq_env eager = {.own_context = true, .ctx_flags = IC_CONTEXT_COMPILE_ONLY | IC_CONTEXT_NO_DISK_CACHE,
                   .backend = "cuda", .mode = IC_MODE_EAGER};
  sweep("cuda sm_90a cold eager compile (batch parts)", run_sequence, &eager, "nvrtc", NVRTC_ERROR_OUT_OF_MEMORY, NULL);
}
END_TEST
static void empty_cache_root(void) {
  remove_tree(cache_root);
  ck_assert_int_eq(mkdir(cache_root, 0700), 0);
}

/* Cold compiles that write the disk cache: a failing write never fails the compile (the
 * cache is best effort) and leaves no temp file or partial entry; whatever entry is
 * there afterwards is whole (the next compile of a fresh context reads it). */
START_TEST(test_disk_cache_writes) {
  make_cache_root();
  seq_env env = {.own_context = true, .ctx_flags = IC_CONTEXT_COMPILE_ONLY, .cache_dir = cache_root,
                 .backend = "cuda", .mode = IC_MODE_FUSED};
  const int codes[] = {ENOSPC, EACCES, EIO};
  for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++) {
    sweep("cuda compile writing the disk cache", run_sequence, &env, "fs", codes[i], empty_cache_root);
    ck_assert_int_eq(count_leftovers(cache_root), 0);
  }
  remove_tree(cache_root);
}
END_TEST

/* Warm compiles from the disk cache: every allocation and file-system call of a fresh
 * context that finds its kernels on disk. */
START_TEST(test_disk_cache_reads) {
  make_cache_root();
  seq_env env = {.own_context = true, .ctx_flags = IC_CONTEXT_COMPILE_ONLY, .cache_dir = cache_root,
                 .backend = "cuda", .mode = IC_MODE_FUSED};
  ck_assert_int_eq(run_sequence(&env), IC_OK);
  sweep("cuda compile from the disk cache", run_sequence, &env, "alloc", ENOMEM, NULL);
  sweep("cuda compile from the disk cache", run_sequence, &env, "fs", EIO, NULL);
  ck_assert_int_eq(count_leftovers(cache_root), 0);
  remove_tree(cache_root);
}
END_TEST

/* A column reduction of a symbolic length: its program holds the one kernel and the two
 * stages (a workspace, launches chosen at run time, steps.c). Every allocation of the
 * program build fails cleanly; the kernels come from the disk cache, so each point
 * costs no NVRTC. */
START_TEST(test_split_program_build) {
  make_cache_root();
  seq_env env = {.own_context = true, .ctx_flags = IC_CONTEXT_COMPILE_ONLY, .cache_dir = cache_root, .backend = "cuda",
                 .mode = IC_MODE_FUSED, .text = "symbol r\ninput x : f32[r, 300]\ny = sum(x, [0])\noutput y\n"};
  ck_assert_int_eq(run_sequence(&env), IC_OK);
  sweep_result r = sweep("cuda compile of a run-time column split", run_sequence, &env, "alloc", ENOMEM, NULL);
  ck_assert_int_gt(r.failed, 0);
  remove_tree(cache_root);
}
END_TEST

/* A kernel a pass, each pass's REDUCE in two stages, beside the one kernel (a symbolic
 * length): every allocation of the program build, kernels from the disk cache. */
START_TEST(test_passes_program_build) {
  make_cache_root();
  seq_env env = {.own_context = true, .ctx_flags = IC_CONTEXT_COMPILE_ONLY, .cache_dir = cache_root, .backend = "cuda",
                 .mode = IC_MODE_FUSED, .text = "symbol n\ninput x : f32[n]\ny = softmax(x, 0)\noutput y\n"};
  ck_assert_int_eq(run_sequence(&env), IC_OK);
  sweep_result r = sweep("cuda compile of a kernel a pass", run_sequence, &env, "alloc", ENOMEM, NULL);
  ck_assert_int_gt(r.failed, 0);
  remove_tree(cache_root);
}
END_TEST

int main(int argc, char **argv) {
  Suite *s = suite_create("faults");
  CHECK_CASE(s, test_point_table, NULL, NULL);
  CHECK_CASE(s, test_context_creation, NULL, NULL);
  CHECK_CASE(s, test_ref_fused_uncached, ref_setup, ref_teardown);
  CHECK_CASE(s, test_ref_eager_uncached, ref_setup, ref_teardown);
  CHECK_CASE(s, test_ref_program_cache, ref_setup, ref_teardown);
  CHECK_CASE(s, test_ref_clamped_fp8_cast, ref_setup, ref_teardown);
  CHECK_CASE(s, test_ref_canonicalized_spellings, ref_setup, ref_teardown);
  CHECK_CASE(s, test_ref_passes, ref_setup, ref_teardown);
  CHECK_CASE(s, test_ref_matmul, ref_setup, ref_teardown);
  CHECK_CASE(s, test_cuda_cold_nvrtc, cold_setup, cold_teardown);
  CHECK_CASE(s, test_cuda_cold_alloc, cold_setup, cold_teardown);
  CHECK_CASE(s, test_cuda_cold_eager_batches, NULL, NULL);
  CHECK_CASE(s, test_disk_cache_writes, NULL, NULL);
  CHECK_CASE(s, test_disk_cache_reads, NULL, NULL);
  CHECK_CASE(s, test_split_program_build, NULL, NULL);
  CHECK_CASE(s, test_passes_program_build, NULL, NULL);
  if (check_list_cases(argc, argv, s)) return 0;
  return check_run_suite(s);
}
