/* ic-bench: performance tables measured in one run against the device's own floors.
 *
 *   ic-bench pointwise   y = gelu_tanh(x * w + b), x f32 [8192, 8192], w and b [8192]:
 *                        ic fused and eager against cuMemcpyDtoD of the same bytes, cold
 *                        compile against a raw NVRTC compile of the same source, and host
 *                        cost of ic_program_run against a bare cuLaunchKernel.
 *   ic-bench compile     compile cost: raw NVRTC per kernel of the pointwise graph, ic cold
 *                        (empty kernel cache), ic warm from the disk cache in a new process,
 *                        a program-cache hit for a 10-node graph rebuilt from scratch, and
 *                        separate vs batched NVRTC calls for the eager kernels; compile
 *                        time against graph size (fused chains, softmax rounds, every
 *                        reduction of one 3-d tensor over its middle axis). Runs without
 *                        a GPU too (compile-only for IC_ARCH or sm_90a).
 *   ic-bench reductions  softmax, log_softmax, layer and RMS norm, FP8 row quantization,
 *                        row, column and full sums, softmax over short and long rows,
 *                        softmax of a vector and std of every element (a kernel a pass):
 *                        fused and eager times against cuMemcpyDtoD measured in the same
 *                        run, kernels per run, and bitwise checks (fused against eager and
 *                        against the ref backend). A workload that fails prints its row
 *                        with the error; the exit status is then 1. --quick takes small
 *                        shapes (the same reduced lengths) for a smoke test; --ref runs
 *                        the table on the ref backend, on the host (no GPU: checks the
 *                        graphs and the bench itself; its times are the interpreter's).
 *   ic-bench asm         inline PTX: bf16 [16384, 8192] times a given per-row scale, packed to
 *                        f8e4m3 by one cvt.rn.satfinite.e4m3x2.f32 asm at pack 2, fused and
 *                        eager, against the same graph with cast_saturate (same bits); and
 *                        the row-wise quantization with the amax in the same kernel.
 *   ic-bench matmul      C = A @ B: bf16 4096^3, 8192^3, 16384 x 16384 x 4096, 16 x 8192 x 8192
 *                        (memory bound: TB/s against the copy), batched 64 x 512 x 512 x 64,
 *                        i8 4096^3 (i32 result), f32 4096^3 exact and with TF32 allowed:
 *                        TFLOP/s, inputs rotated past L2, against a bare cuLaunchKernel of
 *                        the same CUBIN and cuBLAS (dlopen'ed libcublas, when present).
 *   ic-bench all         every table (--quick applies to the reductions and asm tables only).
 *   --only TEXT          in the reductions, patterns, asm and matmul tables, only the workloads whose
 *                        name contains TEXT, or one of its '|'-separated parts (to profile
 *                        one, e.g. under ncu; "softmax|column sum": those two, in table order).
 *
 * Without a GPU the GPU tables exit 77 (after the compile table, for all).
 *
 * Uses ic's public API only (<ic/ic.h>), as a user's program would. The floors come from
 * the bench's own libcuda and libnvrtc, opened here with dlopen (the CUDA headers give
 * the types; no CUDA library is linked): the driver through cuGetProcAddress_v2 with an
 * explicit CUDA version for every entry, NVRTC with the options ic compiles with. Kernel
 * names, CUBINs, block sizes, grids and parameters for the bare launch come from the
 * public step walk. ic retains the device's primary context, which the bench makes
 * current too, so device pointers and streams are shared. Not a test: it prints what it
 * measured. */
#include <cuda.h>
#include <cudaTypedefs.h>
#include <dlfcn.h>
#include <inttypes.h>
#include <nvrtc.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <ic/ic.h>

#include "host_clock.h"

#define BENCH_CHECK(call)                                                                          \
  do {                                                                                             \
    ic_status s_ = (call);                                                                         \
    if (s_ != IC_OK) {                                                                             \
      fprintf(stderr, "ic-bench: %s: %s: %s\n", #call, ic_status_string(s_), ic_last_error()); \
      exit(1);                                                                                     \
    }                                                                                              \
  } while (0)
#define BENCH_CU(call)                  \
  do {                                  \
    CUresult r_ = (call);               \
    if (r_ != CUDA_SUCCESS) {           \
      cu_fail(#call, r_);               \
    }                                   \
  } while (0)

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* ---------------------------------------------------------------- libcuda */

/* Every driver entry the bench calls, with the CUDA version of the ABI that cuda.h binds
 * its name to (cuMemAlloc -> cuMemAlloc_v2 = 3020, cuStreamDestroy -> _v2 = 4000), the
 * oldest version that has it: the PFN_<name>_v<version> typedef of cudaTypedefs.h types
 * the pointer, so a version without that typedef does not compile. */
#define BENCH_CU_ENTRIES(X)          \
  X(cuInit, 2000)                    \
  X(cuDriverGetVersion, 2020)        \
  X(cuGetErrorName, 6000)            \
  X(cuDeviceGet, 2000)               \
  X(cuDeviceGetName, 2000)           \
  X(cuDevicePrimaryCtxRetain, 7000)  \
  X(cuDevicePrimaryCtxRelease, 11000) \
  X(cuCtxSetCurrent, 4000)           \
  X(cuStreamCreate, 2000)            \
  X(cuStreamDestroy, 4000)           \
  X(cuStreamSynchronize, 2000)       \
  X(cuEventCreate, 2000)             \
  X(cuEventRecord, 2000)             \
  X(cuEventSynchronize, 2000)        \
  X(cuEventElapsedTime, 2000)        \
  X(cuEventDestroy, 4000)            \
  X(cuMemAlloc, 3020)                \
  X(cuMemFree, 3020)                 \
  X(cuMemcpyDtoDAsync, 3020)         \
  X(cuMemsetD8, 3020)                \
  X(cuMemcpyDtoH, 3020)              \
  X(cuMemcpyHtoD, 3020)              \
  X(cuModuleLoadData, 2000)          \
  X(cuModuleGetFunction, 2000)       \
  X(cuModuleUnload, 2000)            \
  X(cuLaunchKernel, 4000)            \
  X(cuFuncSetAttribute, 9000)

typedef struct cu_api {
#define BENCH_CU_FIELD_(fn, ver) PFN_##fn##_v##ver fn;
  BENCH_CU_ENTRIES(BENCH_CU_FIELD_)
#undef BENCH_CU_FIELD_
  int driver_version; /* cuDriverGetVersion, e.g. 13000 */
} cu_api;

static cu_api g_cu;
static bool g_cu_loaded; /* every entry of g_cu is set */

static const char *cu_name(CUresult r) {
  const char *s = NULL;
  if (g_cu_loaded && g_cu.cuGetErrorName(r, &s) == CUDA_SUCCESS && s) return s;
  return r == CUDA_ERROR_STUB_LIBRARY ? "CUDA_ERROR_STUB_LIBRARY" : "CUDA error";
}

static _Noreturn void cu_fail(const char *what, CUresult r) {
  fprintf(stderr, "ic-bench: %s failed with CUresult %d (%s)\n", what, (int)r, cu_name(r));
  exit(1);
}

/* Opens libcuda.so.1 (never dlclose'd) and fills g_cu; does not call cuInit. False with
 * the reason in why. */
static bool cu_open(char *why, size_t why_size) {
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char *e = dlerror();
    snprintf(why, why_size, "no CUDA driver: libcuda.so.1 not found (%s)", e ? e : "dlopen failed");
    return false;
  }
  PFN_cuGetProcAddress_v12000 get_proc = NULL;
  dlerror();
  *(void **)&get_proc = dlsym(lib, "cuGetProcAddress_v2");
  if (!get_proc) {
    snprintf(why, why_size,
             "no usable CUDA driver: libcuda.so.1 has no cuGetProcAddress_v2 (CUDA 12.0 or newer is needed)");
    return false;
  }
  cu_api api;
  memset(&api, 0, sizeof api);
#define BENCH_CU_GET_(fn, ver)                                                                            \
  {                                                                                                       \
    void *p_ = NULL;                                                                                      \
    CUdriverProcAddressQueryResult found_ = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;                        \
    CUresult r_ = get_proc(#fn, &p_, ver, CU_GET_PROC_ADDRESS_DEFAULT, &found_);                          \
    if (r_ != CUDA_SUCCESS || !p_ || found_ != CU_GET_PROC_ADDRESS_SUCCESS) {                             \
      snprintf(why, why_size, "no usable CUDA driver: cuGetProcAddress(\"%s\", %d) failed (%s)", #fn, ver, \
               r_ != CUDA_SUCCESS ? cu_name(r_)                                                           \
               : found_ == CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT ? "version not sufficient"          \
                                                                       : "symbol not found");             \
      return false;                                                                                       \
    }                                                                                                     \
    *(void **)&api.fn = p_;                                                                               \
  }
  BENCH_CU_ENTRIES(BENCH_CU_GET_)
#undef BENCH_CU_GET_
  CUresult r = api.cuDriverGetVersion(&api.driver_version);
  if (r != CUDA_SUCCESS) {
    snprintf(why, why_size, "no usable CUDA driver: cuDriverGetVersion failed (%d)", (int)r);
    return false;
  }
  g_cu = api;
  g_cu_loaded = true;
  return true;
}

/* ---------------------------------------------------------------- libnvrtc */

/* The NVRTC entries the raw floor calls, typed by nvrtc.h's declarations. */
#define BENCH_NVRTC_ENTRIES(X) \
  X(nvrtcVersion)              \
  X(nvrtcGetErrorString)       \
  X(nvrtcCreateProgram)        \
  X(nvrtcDestroyProgram)       \
  X(nvrtcCompileProgram)       \
  X(nvrtcGetProgramLogSize)    \
  X(nvrtcGetProgramLog)        \
  X(nvrtcGetCUBINSize)         \
  X(nvrtcGetCUBIN)

typedef struct nvrtc_api {
#define BENCH_NVRTC_FIELD_(fn) __typeof__(&fn) fn;
  BENCH_NVRTC_ENTRIES(BENCH_NVRTC_FIELD_)
#undef BENCH_NVRTC_FIELD_
  int major, minor;
} nvrtc_api;

static nvrtc_api g_nvrtc;
static bool g_nvrtc_tried, g_nvrtc_loaded;

/* One candidate; true when it loads with every entry (a loaded library is never closed). */
static bool nvrtc_try(const char *path) {
  void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!lib) return false;
  nvrtc_api api;
  memset(&api, 0, sizeof api);
#define BENCH_NVRTC_GET_(fn)                  \
  dlerror();                                  \
  *(void **)&api.fn = dlsym(lib, #fn);        \
  if (!api.fn) return false;
  BENCH_NVRTC_ENTRIES(BENCH_NVRTC_GET_)
#undef BENCH_NVRTC_GET_
  if (api.nvrtcVersion(&api.major, &api.minor) != NVRTC_SUCCESS) return false;
  g_nvrtc = api;
  return true;
}

/* The libnvrtc ic would load: IC_NVRTC, else by soname (the driver's CUDA major first
 * when there is a driver, as ic does), else the same names in $CUDA_HOME/lib64 and
 * /usr/local/cuda. Exits when there is none: every table has a raw NVRTC floor. */
static const nvrtc_api *nvrtc_get(void) {
  if (!g_nvrtc_tried) {
    g_nvrtc_tried = true;
    const char *env = getenv("IC_NVRTC");
    if (env && env[0]) {
      g_nvrtc_loaded = nvrtc_try(env);
    } else {
      char names[4][32];
      int n = 0;
      if (g_cu_loaded && g_cu.driver_version >= 1000)
        snprintf(names[n++], sizeof names[0], "libnvrtc.so.%d", g_cu.driver_version / 1000);
      static const char *const known[] = {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"};
      for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (n == 0 || strcmp(names[0], known[i]) != 0) snprintf(names[n++], sizeof names[0], "%s", known[i]);
      for (int i = 0; i < n && !g_nvrtc_loaded; i++) g_nvrtc_loaded = nvrtc_try(names[i]);
      const char *home = getenv("CUDA_HOME");
      char dirs[3][512];
      int ndirs = 0;
      if (home && home[0]) snprintf(dirs[ndirs++], sizeof dirs[0], "%s/lib64", home);
      snprintf(dirs[ndirs++], sizeof dirs[0], "%s", "/usr/local/cuda/lib64");
      snprintf(dirs[ndirs++], sizeof dirs[0], "%s", "/usr/local/cuda/lib");
      for (int d = 0; d < ndirs && !g_nvrtc_loaded; d++) {
        for (int i = 0; i < n && !g_nvrtc_loaded; i++) {
          char path[sizeof dirs[0] + sizeof names[0] + 1];
          int len = snprintf(path, sizeof path, "%s/%s", dirs[d], names[i]);
          if (len > 0 && (size_t)len < sizeof path) g_nvrtc_loaded = nvrtc_try(path);
        }
      }
    }
  }
  if (!g_nvrtc_loaded) {
    const char *env = getenv("IC_NVRTC");
    if (env && env[0]) fprintf(stderr, "ic-bench: cannot load libnvrtc from IC_NVRTC=%s\n", env);
    else fprintf(stderr, "ic-bench: libnvrtc not found (libnvrtc.so.13, .so.12, .so, also in $CUDA_HOME/lib64 and "
                         "/usr/local/cuda); set IC_NVRTC to its path\n");
    exit(1);
  }
  return &g_nvrtc;
}

#define BENCH_NVRTC(nv, call, what)                                                                      \
  do {                                                                                                   \
    nvrtcResult r_ = (call);                                                                             \
    if (r_ != NVRTC_SUCCESS) {                                                                           \
      fprintf(stderr, "ic-bench: %s: %s\n", what, (nv)->nvrtcGetErrorString(r_));                       \
      exit(1);                                                                                           \
    }                                                                                                    \
  } while (0)

/* Compiles source to a CUBIN for arch with the options ic compiles with (see
 * lib/backend/cuda/cuda_backend.c, cuda_nvrtc_options); *cubin is malloc'd. */
static void nvrtc_compile(const char *arch, const char *name, const char *source, void **cubin, size_t *size) {
  const nvrtc_api *nv = nvrtc_get();
  char arch_opt[64];
  snprintf(arch_opt, sizeof arch_opt, "--gpu-architecture=%s", arch);
  const char *const opts[] = {arch_opt,         "-fmad=false", "--std=c++17", "-prec-div=true",
                              "-prec-sqrt=true", "-ftz=false",  "-minimal"};
  int nopts = (int)(sizeof opts / sizeof opts[0]) - (nv->major >= 13 ? 0 : 1); /* -minimal from NVRTC 13 */
  nvrtcProgram prog = NULL;
  BENCH_NVRTC(nv, nv->nvrtcCreateProgram(&prog, source, name, 0, NULL, NULL), "nvrtcCreateProgram");
  nvrtcResult r = nv->nvrtcCompileProgram(prog, nopts, opts);
  if (r != NVRTC_SUCCESS) {
    size_t log_size = 0;
    char *log = NULL;
    if (nv->nvrtcGetProgramLogSize(prog, &log_size) == NVRTC_SUCCESS && log_size > 0 && (log = malloc(log_size + 1))) {
      if (nv->nvrtcGetProgramLog(prog, log) == NVRTC_SUCCESS) log[log_size] = '\0';
      else log[0] = '\0';
    }
    fprintf(stderr, "ic-bench: NVRTC failed to compile %s for %s: %s\n%s\n", name, arch, nv->nvrtcGetErrorString(r),
            log ? log : "(no log)");
    free(log);
    exit(1);
  }
  BENCH_NVRTC(nv, nv->nvrtcGetCUBINSize(prog, size), "nvrtcGetCUBINSize");
  char *bin = malloc(*size ? *size : 1);
  if (!bin) {
    fprintf(stderr, "ic-bench: out of memory for a CUBIN\n");
    exit(1);
  }
  BENCH_NVRTC(nv, nv->nvrtcGetCUBIN(prog, bin), "nvrtcGetCUBIN");
  nv->nvrtcDestroyProgram(&prog);
  *cubin = bin;
}

/* Milliseconds of one raw NVRTC compile (program, compile, CUBIN) of source for arch. */
static double raw_nvrtc_ms(const char *arch, const char *name, const char *source) {
  void *cubin;
  size_t size;
  (void)nvrtc_get(); /* loading the library is not part of a compile */
  double t0 = host_now_ms();
  nvrtc_compile(arch, name, source, &cubin, &size);
  double ms = host_now_ms() - t0;
  free(cubin);
  return ms;
}

/* ---------------------------------------------------------------- timing */

typedef struct bench {
  ic_context *ctx;
  const cu_api *d;
  CUstream stream;
  CUevent start, stop;
  /* ic-bench reductions --ref: the reductions table on the ref backend, with host memory
   * and the host clock (d, stream and events unused): checks the workloads without a GPU. */
  bool ref;
} bench;

/* Median GPU ms of `reps` timed repetitions of fn (after 3 warm-ups), by CUDA events. */
typedef void (*bench_fn)(bench *b, void *arg);
static double bench_gpu_ms(bench *b, bench_fn fn, void *arg, int reps) {
  double t[64] = {0};
  if (reps > 64) reps = 64;
  if (reps < 1) reps = 1;
  for (int i = 0; i < 3; i++) fn(b, arg);
  for (int i = 0; i < reps; i++) {
    BENCH_CU(b->d->cuEventRecord(b->start, b->stream));
    fn(b, arg);
    BENCH_CU(b->d->cuEventRecord(b->stop, b->stream));
    BENCH_CU(b->d->cuEventSynchronize(b->stop));
    float ms = 0;
    BENCH_CU(b->d->cuEventElapsedTime(&ms, b->start, b->stop));
    t[i] = ms;
  }
  return median(t, reps);
}

/* Host microseconds per call of `calls` back-to-back launches, synchronized at the end. */
static double host_us_per_call(bench *b, bench_fn fn, void *arg, int calls) {
  for (int i = 0; i < 100; i++) fn(b, arg);
  BENCH_CU(b->d->cuStreamSynchronize(b->stream));
  double t0 = host_now_ms();
  for (int i = 0; i < calls; i++) fn(b, arg);
  double t1 = host_now_ms();
  BENCH_CU(b->d->cuStreamSynchronize(b->stream));
  return (t1 - t0) * 1e3 / calls;
}

/* ---------------------------------------------------------------- pointwise */

enum { PW_ROWS = 8192, PW_COLS = 8192 };

typedef struct pw_run {
  ic_program *prog;
  ic_tensor in[3], out[1];
  int64_t xs[2], vs[1];
} pw_run;

static void pw_launch(bench *b, void *arg) {
  pw_run *r = arg;
  BENCH_CHECK(ic_program_run(r->prog, r->in, 3, r->out, 1, b->stream));
}

typedef struct copy_run {
  CUdeviceptr dst, src;
  size_t bytes;
} copy_run;

static void copy_launch(bench *b, void *arg) {
  const copy_run *c = arg;
  BENCH_CU(b->d->cuMemcpyDtoDAsync(c->dst, c->src, c->bytes, b->stream));
}

static ic_graph *pw_graph(ic_dim rows, ic_dim cols) {
  ic_graph *g;
  BENCH_CHECK(ic_graph_create(&g));
  ic_value x = ic_graph_input(g, "x", IC_F32, 2, (ic_dim[]){rows, cols}, IC_LAYOUT_CONTIGUOUS);
  ic_value w = ic_graph_input(g, "w", IC_F32, 1, (ic_dim[]){cols}, IC_LAYOUT_CONTIGUOUS);
  ic_value bb = ic_graph_input(g, "b", IC_F32, 1, (ic_dim[]){cols}, IC_LAYOUT_CONTIGUOUS);
  ic_value xw = ic_graph_binary(g, IC_OP_MUL, x, w);
  ic_value y = ic_graph_unary(g, IC_OP_GELU_TANH, ic_graph_binary(g, IC_OP_ADD, xw, bb));
  BENCH_CHECK(ic_graph_output(g, "y", y));
  return g;
}

/* A compile that bypasses the caches: what a first compile of this graph costs. */
static ic_program *pw_compile(const bench *b, ic_compile_mode mode, double *ms) {
  ic_graph *g = pw_graph(PW_ROWS, PW_COLS);
  ic_compile_options o = {.struct_size = sizeof o, .mode = mode, .flags = IC_COMPILE_NO_CACHE};
  ic_program *p;
  double t0 = host_now_ms();
  BENCH_CHECK(ic_compile(b->ctx, g, &o, &p));
  if (ms) *ms = host_now_ms() - t0;
  ic_graph_destroy(g);
  return p;
}

/* A kernel launched with the bench's own driver calls: what ic_program_run wraps. */
enum { BARE_MAX_ARGS = 64 };
typedef struct bare_run {
  CUfunction fn;
  uint32_t blocks, block;
  uint64_t slots[BARE_MAX_ARGS]; /* each parameter's value: a pointer or an int64 */
  void *args[BARE_MAX_ARGS];     /* &slots[i], as cuLaunchKernel wants */
} bare_run;

static void bare_launch(bench *b, void *arg) {
  bare_run *r = arg;
  BENCH_CU(b->d->cuLaunchKernel(r->fn, r->blocks, 1, 1, r->block, 1, 1, 0, b->stream, r->args, NULL));
}

static _Noreturn void bare_fail(const char *what) {
  fprintf(stderr, "ic-bench: bare launch: %s\n", what);
  exit(1);
}

/* The device pointer of program buffer `buffer` in run r (inputs and outputs only). */
static uint64_t bare_buffer(const ic_program *p, const pw_run *r, int32_t buffer) {
  ic_buffer_info bi;
  BENCH_CHECK(ic_program_buffer(p, buffer, &bi));
  if (bi.kind == IC_BUFFER_INPUT && bi.index >= 0 && bi.index < 3) return (uint64_t)(uintptr_t)r->in[bi.index].data;
  if (bi.kind == IC_BUFFER_OUTPUT && bi.index == 0) return (uint64_t)(uintptr_t)r->out[0].data;
  bare_fail("a kernel parameter is a temporary buffer");
}

/* Sets up the launch of the program's only kernel with r's tensors, from the step walk
 * (entry point, CUBIN, block, grid, parameters), arguments built as ic_program_run builds
 * them: a pointer for IC_ARG_BUFFER, an int64 for the others. Loads the CUBIN into *mod. */
static void bare_setup(const bench *b, const ic_program *p, const pw_run *r, bare_run *out, CUmodule *mod) {
  if (ic_program_symbol_count(p) != 0) bare_fail("the program has size symbols");
  const int64_t symbols[1] = {0}; /* none; ic_program_eval wants a non-NULL array */
  ic_step st = {0};
  int32_t launch = -1;
  for (int32_t i = 0; i < ic_program_step_count(p); i++) {
    ic_step s;
    BENCH_CHECK(ic_program_step(p, i, &s));
    if (s.kind != IC_STEP_LAUNCH) continue;
    if (launch >= 0) bare_fail("the program has more than one kernel");
    launch = i;
    st = s;
  }
  if (launch < 0) bare_fail("the program launches nothing");
  if (!st.binary || !st.kernel_name) bare_fail("the kernel has no CUBIN");
  if (st.nargs < 0 || st.nargs > BARE_MAX_ARGS) bare_fail("too many kernel parameters");
  int64_t blocks = 0;
  BENCH_CHECK(ic_program_eval(p, st.grid_expr, symbols, &blocks));
  if (blocks <= 0 || blocks > INT32_MAX || st.block <= 0) bare_fail("grid out of range");
  *out = (bare_run){.blocks = (uint32_t)blocks, .block = (uint32_t)st.block};
  for (int32_t a = 0; a < st.nargs; a++) {
    const ic_step_arg *arg = &st.args[a];
    int64_t v = 0;
    switch (arg->kind) {
    case IC_ARG_BUFFER:
      out->slots[a] = bare_buffer(p, r, arg->index);
      break;
    case IC_ARG_SYMBOL:
      bare_fail("a kernel parameter is a size symbol");
      break;
    case IC_ARG_STRIDE: { /* r's inputs are contiguous: the product of the inner dims */
      int32_t input = arg->index / IC_MAX_DIMS, dim = arg->index % IC_MAX_DIMS;
      if (input < 0 || input >= 3 || dim < 0 || dim >= r->in[input].ndim) bare_fail("a stride parameter out of range");
      v = 1;
      for (int32_t d = dim + 1; d < r->in[input].ndim; d++) v *= r->in[input].shape[d];
      out->slots[a] = (uint64_t)v;
      break;
    }
    case IC_ARG_SIZE:
      BENCH_CHECK(ic_program_eval(p, arg->index, symbols, &v));
      out->slots[a] = (uint64_t)v;
      break;
    default:
      bare_fail("a kernel parameter of unknown kind");
    }
    out->args[a] = &out->slots[a];
  }
  BENCH_CU(b->d->cuModuleLoadData(mod, st.binary));
  BENCH_CU(b->d->cuModuleGetFunction(&out->fn, *mod, st.kernel_name));
}

static void bench_pointwise(bench *b) {
  const cu_api *d = b->d;
  const char *arch = ic_context_arch(b->ctx);
  size_t nx = (size_t)PW_ROWS * PW_COLS, xbytes = nx * 4, vbytes = (size_t)PW_COLS * 4;
  CUdeviceptr x, w, bb, y, y2;
  BENCH_CU(d->cuMemAlloc(&x, xbytes));
  BENCH_CU(d->cuMemAlloc(&y, xbytes));
  BENCH_CU(d->cuMemAlloc(&y2, xbytes));
  BENCH_CU(d->cuMemAlloc(&w, vbytes));
  BENCH_CU(d->cuMemAlloc(&bb, vbytes));
  BENCH_CU(d->cuMemsetD8(x, 0x3c, xbytes)); /* ~0.0115f everywhere */
  BENCH_CU(d->cuMemsetD8(w, 0x3f, vbytes));
  BENCH_CU(d->cuMemsetD8(bb, 0x3c, vbytes));

  /* Compile: ic cold (no cache yet, so every compile is cold) vs raw NVRTC, medians of 5. */
  double ic_ms[5], raw_ms[5];
  ic_program *fused = NULL;
  for (int i = 0; i < 5; i++) {
    ic_program *p = pw_compile(b, IC_MODE_FUSED, &ic_ms[i]);
    raw_ms[i] = raw_nvrtc_ms(arch, "ic_k0", ic_program_kernel_source(p, 0));
    if (fused) ic_program_release(fused);
    fused = p;
  }
  double ic_compile_ms = median(ic_ms, 5), nvrtc_ms = median(raw_ms, 5);
  ic_program *eager = pw_compile(b, IC_MODE_EAGER, NULL);

  pw_run r = {.xs = {PW_ROWS, PW_COLS}, .vs = {PW_COLS}};
  r.in[0] = (ic_tensor){(void *)(uintptr_t)x, IC_F32, 2, r.xs, NULL};
  r.in[1] = (ic_tensor){(void *)(uintptr_t)w, IC_F32, 1, r.vs, NULL};
  r.in[2] = (ic_tensor){(void *)(uintptr_t)bb, IC_F32, 1, r.vs, NULL};
  r.out[0] = (ic_tensor){(void *)(uintptr_t)y, IC_F32, 2, r.xs, NULL};
  r.prog = fused;
  double fused_ms = bench_gpu_ms(b, pw_launch, &r, 20);
  r.prog = eager;
  r.out[0].data = (void *)(uintptr_t)y2;
  double eager_ms = bench_gpu_ms(b, pw_launch, &r, 20);
  copy_run c = {y2, x, xbytes};
  double copy_ms = bench_gpu_ms(b, copy_launch, &c, 20);

  /* Bitwise check: eager and fused agree (a benchmark of wrong results is worthless). */
  float *h1 = malloc(xbytes), *h2 = malloc(xbytes);
  if (!h1 || !h2) {
    fprintf(stderr, "ic-bench: out of host memory\n");
    exit(1);
  }
  r.prog = eager;
  pw_launch(b, &r);
  BENCH_CU(d->cuStreamSynchronize(b->stream));
  BENCH_CU(d->cuMemcpyDtoH(h1, y, xbytes));
  BENCH_CU(d->cuMemcpyDtoH(h2, y2, xbytes));
  bool same = memcmp(h1, h2, xbytes) == 0;
  free(h1);
  free(h2);

  /* Host cost per run: a 1-kernel program over 4096 elements vs a bare launch of the
   * same CUBIN with the same arguments. */
  ic_graph *g = pw_graph(1, 4096);
  ic_program *small;
  BENCH_CHECK(ic_compile(b->ctx, g, NULL, &small));
  ic_graph_destroy(g);
  pw_run rs = {.prog = small, .xs = {1, 4096}, .vs = {4096}};
  rs.in[0] = (ic_tensor){(void *)(uintptr_t)x, IC_F32, 2, rs.xs, NULL};
  rs.in[1] = (ic_tensor){(void *)(uintptr_t)w, IC_F32, 1, rs.vs, NULL};
  rs.in[2] = (ic_tensor){(void *)(uintptr_t)bb, IC_F32, 1, rs.vs, NULL};
  rs.out[0] = (ic_tensor){(void *)(uintptr_t)y, IC_F32, 2, rs.xs, NULL};
  CUmodule mod;
  bare_run bare;
  bare_setup(b, small, &rs, &bare, &mod);
  double run_us[5], bare_us[5];
  for (int i = 0; i < 5; i++) {
    run_us[i] = host_us_per_call(b, pw_launch, &rs, 20000);
    bare_us[i] = host_us_per_call(b, bare_launch, &bare, 20000);
  }
  double run_host = median(run_us, 5), bare_host = median(bare_us, 5);

  double moved = 2.0 * (double)xbytes + 2.0 * (double)vbytes; /* x in, y out, w and b */
  double copy_gbs = 2.0 * (double)xbytes / copy_ms / 1e6;
  double fused_gbs = moved / fused_ms / 1e6;
  double eager_moved = moved + 4.0 * (double)xbytes; /* two intermediates written and read */
  double eager_gbs = eager_moved / eager_ms / 1e6;
  printf("\n## pointwise: y = gelu_tanh(x * w + b), x f32 [%d, %d], w, b f32 [%d] (%s)\n\n", PW_ROWS, PW_COLS, PW_COLS,
         arch);
  printf("| what | time | achieved | vs floor |\n|---|---|---|---|\n");
  printf("| cuMemcpyDtoD, same bytes (floor) | %.3f ms | %.0f GB/s | 100%% |\n", copy_ms, copy_gbs);
  printf("| ic fused (%d kernel) | %.3f ms | %.0f GB/s | %.1f%% of copy |\n", (int)ic_program_kernel_count(fused),
         fused_ms, fused_gbs, 100.0 * fused_gbs / copy_gbs);
  printf("| ic eager (%d kernels) | %.3f ms | %.0f GB/s moved | fused is %.2fx faster |\n",
         (int)ic_program_kernel_count(eager), eager_ms, eager_gbs, eager_ms / fused_ms);
  printf("| raw NVRTC compile of the fused source (floor) | %.2f ms | | 1.00x |\n", nvrtc_ms);
  printf("| ic cold compile, caches bypassed (graph -> loaded kernel) | %.2f ms | | %.2fx NVRTC |\n", ic_compile_ms,
         ic_compile_ms / nvrtc_ms);
  printf("| bare cuLaunchKernel, host (floor) | %.2f us | | 1.00x |\n", bare_host);
  printf("| ic_program_run of a 1-kernel program, host | %.2f us | | %.2fx bare launch |\n", run_host,
         run_host / bare_host);
  printf("\neager == fused bitwise: %s\n", same ? "yes" : "NO");

  d->cuModuleUnload(mod);
  ic_program_release(small);
  ic_program_release(fused);
  ic_program_release(eager);
  d->cuMemFree(x);
  d->cuMemFree(y);
  d->cuMemFree(y2);
  d->cuMemFree(w);
  d->cuMemFree(bb);
}

/* ---------------------------------------------------------------- compile */

/* A context for the compile table: the GPU's, or IC_ARCH's (ic_context_create makes a
 * context without a GPU compile-only for IC_ARCH), else compile-only for IC_ARCH or
 * sm_90a. */
/* Whether compile_ctx found a device (its programs run). */
static bool compile_ctx_runs;

static ic_context *compile_ctx(const char *cache_dir) {
  ic_context_options o = {.struct_size = sizeof o, .cache_dir = cache_dir};
  ic_context *ctx = NULL;
  ic_status s = ic_context_create(&o, &ctx);
  compile_ctx_runs = s == IC_OK && ic_context_arch(ctx)[0];
  if (compile_ctx_runs) return ctx;
  if (s == IC_OK) ic_context_destroy(ctx);
  const char *env = getenv("IC_ARCH");
  o.arch = env && env[0] ? env : "sm_90a";
  o.flags = IC_CONTEXT_COMPILE_ONLY;
  BENCH_CHECK(ic_context_create(&o, &ctx));
  return ctx;
}

/* A 10-node graph: inputs, a chain of ops, a broadcast, a cast. */
static ic_graph *ten_node_graph(void) {
  ic_graph *g;
  BENCH_CHECK(ic_graph_create(&g));
  ic_dim n = ic_graph_symbol(g, "n");
  ic_value x = ic_graph_input(g, "x", IC_F16, 2, (ic_dim[]){n, 1024}, IC_LAYOUT_CONTIGUOUS);
  ic_value w = ic_graph_input(g, "w", IC_F16, 1, (ic_dim[]){1024}, IC_LAYOUT_CONTIGUOUS);
  ic_value t = ic_graph_binary(g, IC_OP_MUL, x, w);
  t = ic_graph_binary(g, IC_OP_ADD, t, ic_graph_constant(g, 0.5, IC_DTYPE_AUTO));
  t = ic_graph_unary(g, IC_OP_SIGMOID, t);
  t = ic_graph_binary(g, IC_OP_MAXIMUM, t, x);
  BENCH_CHECK(ic_graph_output(g, "y", ic_graph_cast(g, t, IC_F32)));
  return g;
}

/* Milliseconds of one fused compile of the pointwise graph in a fresh process (which
 * finds the kernel on disk). CUDA cannot be used in a child forked after the parent
 * initialised it, so the child compiles compile-only for the parent's arch: the disk
 * cache's key does not depend on the device, and there is no module load to time. */
static double warm_compile_in_child(const char *cache_dir, const char *arch) {
  int fd[2];
  if (pipe(fd) != 0) return -1;
  pid_t pid = fork();
  if (pid < 0) {
    close(fd[0]);
    close(fd[1]);
    return -1;
  }
  if (pid == 0) {
    close(fd[0]);
    ic_context_options o = {.struct_size = sizeof o, .arch = arch, .flags = IC_CONTEXT_COMPILE_ONLY,
                            .cache_dir = cache_dir};
    ic_context *ctx;
    BENCH_CHECK(ic_context_create(&o, &ctx));
    ic_graph *g = pw_graph(PW_ROWS, PW_COLS);
    ic_program *p;
    double t0 = host_now_ms();
    BENCH_CHECK(ic_compile(ctx, g, NULL, &p));
    double ms = host_now_ms() - t0;
    ic_cache_stats st = {.struct_size = sizeof st};
    BENCH_CHECK(ic_cache_stats_get(ctx, &st));
    if (st.disk_hits != 1) ms = -ms; /* not from disk: report it as invalid */
    if (write(fd[1], &ms, sizeof ms) != (ssize_t)sizeof ms) _exit(1);
    _exit(0);
  }
  close(fd[1]);
  double ms = -1;
  if (read(fd[0], &ms, sizeof ms) != (ssize_t)sizeof ms) ms = -1;
  close(fd[0]);
  waitpid(pid, NULL, 0);
  return ms;
}

static void remove_dir(const char *dir) {
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) fprintf(stderr, "ic-bench: could not remove %s\n", dir);
}

/* A fused chain of n ops over x [n_rows, 1024] f32: mul by w, add, tanh, sub, maximum,
 * exp, repeated (ic-bench compile's chains). */
static ic_graph *chain_graph(int n) {
  ic_graph *g;
  BENCH_CHECK(ic_graph_create(&g));
  ic_dim dims[2] = {ic_graph_symbol(g, "n"), 1024};
  ic_value x = ic_graph_input(g, "x", IC_F32, 2, dims, IC_LAYOUT_CONTIGUOUS);
  ic_value w = ic_graph_input(g, "w", IC_F32, 1, &dims[1], IC_LAYOUT_CONTIGUOUS);
  ic_value c = ic_graph_constant(g, 0.5, IC_DTYPE_AUTO), v = x;
  static const ic_op ops[6] = {IC_OP_MUL, IC_OP_ADD, IC_OP_TANH, IC_OP_SUB, IC_OP_MAXIMUM, IC_OP_EXP};
  for (int i = 0; i < n; i++) {
    ic_op op = ops[i % 6];
    v = op == IC_OP_TANH || op == IC_OP_EXP ? ic_graph_unary(g, op, v)
                                            : ic_graph_binary(g, op, v, op == IC_OP_MUL || op == IC_OP_SUB ? w : c);
  }
  BENCH_CHECK(ic_graph_output(g, "y", v));
  return g;
}

/* About 200 ops with reductions: 25 rounds of softmax over the rows (its decomposition:
 * max, sub, exp, sum, div) followed by a scale and a shift. */
static ic_graph *reduction_graph(void) {
  ic_graph *g;
  BENCH_CHECK(ic_graph_create(&g));
  ic_dim dims[2] = {ic_graph_symbol(g, "n"), 1024};
  ic_value v = ic_graph_input(g, "x", IC_F32, 2, dims, IC_LAYOUT_CONTIGUOUS);
  ic_value w = ic_graph_input(g, "w", IC_F32, 1, &dims[1], IC_LAYOUT_CONTIGUOUS);
  for (int r = 0; r < 25; r++) {
    v = ic_graph_softmax(g, v, 1);
    v = ic_graph_binary(g, IC_OP_MUL, v, w);
    v = ic_graph_binary(g, IC_OP_SUB, v, ic_graph_constant(g, 0.25, IC_DTYPE_AUTO));
  }
  BENCH_CHECK(ic_graph_output(g, "y", v));
  return g;
}

/* Every reduction of one dt tensor [a, b, c] over its middle axis as an output: sum, mean,
 * prod, max, min, argmax, argmin, any, all, var and std with corrections 0 and 1 (the GPU
 * suite's heaviest kernel: a column kernel of 17 passes, 11 once var and std share their
 * means and squares). */
static ic_graph *all_reductions_graph(ic_dtype dt) {
  ic_graph *g;
  BENCH_CHECK(ic_graph_create(&g));
  ic_dim dims[3] = {ic_graph_symbol(g, "a"), ic_graph_symbol(g, "b"), ic_graph_symbol(g, "c")};
  ic_value x = ic_graph_input(g, "x", dt, 3, dims, IC_LAYOUT_CONTIGUOUS);
  const int32_t axis = 1;
  static const ic_reduce_op ops[] = {IC_REDUCE_SUM,    IC_REDUCE_MEAN,   IC_REDUCE_PROD, IC_REDUCE_MAX, IC_REDUCE_MIN,
                                     IC_REDUCE_ARGMAX, IC_REDUCE_ARGMIN, IC_REDUCE_ANY,  IC_REDUCE_ALL};
  char name[16];
  int n = 0;
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
    snprintf(name, sizeof name, "o%d", n++);
    BENCH_CHECK(ic_graph_output(g, name, ic_graph_reduce(g, ops[i], x, 1, &axis, 0)));
  }
  for (int correction = 0; correction < 2; correction++) {
    snprintf(name, sizeof name, "o%d", n++);
    BENCH_CHECK(ic_graph_output(g, name, ic_graph_var(g, x, 1, &axis, correction, 0)));
    snprintf(name, sizeof name, "o%d", n++);
    BENCH_CHECK(ic_graph_output(g, name, ic_graph_std(g, x, 1, &axis, correction, 0)));
  }
  return g;
}

/* Milliseconds a run of p takes on x [SCALING_ROWS, 1024] and w [1024] f32 (the scaling
 * graphs' inputs), the output allocated once: host time of 10 runs after 2, synchronized,
 * over 10. */
enum { SCALING_ROWS = 8192 };
static double scaling_run_ms(ic_context *c, ic_program *p) {
  const int64_t xs[2] = {SCALING_ROWS, 1024}, ws[1] = {1024};
  void *x, *w;
  BENCH_CHECK(ic_malloc(c, sizeof(float) * SCALING_ROWS * 1024, &x));
  BENCH_CHECK(ic_malloc(c, sizeof(float) * 1024, &w));
  float *h = calloc((size_t)SCALING_ROWS * 1024, sizeof(float));
  if (!h) exit(1);
  for (size_t i = 0; i < (size_t)SCALING_ROWS * 1024; i++) h[i] = (float)(i % 97) / 97.0f - 0.5f;
  BENCH_CHECK(ic_memcpy_htod(c, x, h, sizeof(float) * SCALING_ROWS * 1024));
  BENCH_CHECK(ic_memcpy_htod(c, w, h, sizeof(float) * 1024));
  free(h);
  ic_tensor in[2] = {{.data = x, .dtype = IC_F32, .ndim = 2, .shape = xs}, {.data = w, .dtype = IC_F32, .ndim = 1, .shape = ws}};
  ic_tensor out = {.dtype = IC_F32, .ndim = 2, .shape = xs};
  double t0 = 0;
  for (int i = 0; i < 12; i++) {
    if (i == 2) {
      BENCH_CHECK(ic_stream_synchronize(c, NULL));
      t0 = host_now_ms();
    }
    BENCH_CHECK(ic_program_run(p, in, 2, &out, 1, NULL));
  }
  BENCH_CHECK(ic_stream_synchronize(c, NULL));
  double ms = (host_now_ms() - t0) / 10;
  BENCH_CHECK(ic_free(c, out.data));
  BENCH_CHECK(ic_free(c, x));
  BENCH_CHECK(ic_free(c, w));
  return ms;
}

/* One cold compile of g in a fresh context on an empty cache directory: milliseconds,
 * kernels, and the raw NVRTC floor (each distinct kernel source compiled alone, summed:
 * ic compiles an entry that several kernels share once); with a device and run_ms, the
 * time of a run (scaling_run_ms; -1 without a device). */
static double cold_compile_ms(ic_graph *g, ic_compile_mode mode, int32_t budget, int32_t *kernels, double *raw_ms,
                              double *run_ms) {
  char cold[] = "/tmp/ic-bench-cold-XXXXXX";
  if (!mkdtemp(cold)) exit(1);
  ic_context *c = compile_ctx(cold);
  ic_compile_options o = {.struct_size = sizeof o, .mode = mode, .fusion_budget = budget};
  ic_program *p;
  double t0 = host_now_ms();
  BENCH_CHECK(ic_compile(c, g, &o, &p));
  double ms = host_now_ms() - t0;
  *kernels = ic_program_kernel_count(p);
  if (run_ms) *run_ms = compile_ctx_runs ? scaling_run_ms(c, p) : -1;
  if (raw_ms) {
    *raw_ms = 0;
    for (int32_t k = 0; k < *kernels; k++) {
      const char *src = ic_program_kernel_source(p, k);
      bool seen = false;
      for (int32_t j = 0; j < k && !seen; j++) seen = strcmp(ic_program_kernel_source(p, j), src) == 0;
      if (!seen) *raw_ms += raw_nvrtc_ms(ic_context_arch(c), "raw", src);
    }
  }
  ic_program_release(p);
  ic_context_destroy(c);
  remove_dir(cold);
  return ms;
}

/* `ic-bench first-compile ARCH DIR [warm]` (run by bench_compile in a new process,
 * exec'ed, so nothing is loaded yet): prints the milliseconds of ic_context_create and of
 * the first ic_compile of the 10-node graph (cold: DIR is empty), as "create compile".
 * warm: the context has IC_CONTEXT_WARM_COMPILER and the host does 50 ms of other work
 * before its first compile. */
static int first_compile_child(const char *arch, const char *dir, bool warm) {
  double t0 = host_now_ms();
  ic_context_options o = {.struct_size = sizeof o, .arch = arch, .flags = IC_CONTEXT_COMPILE_ONLY, .cache_dir = dir};
  if (warm) o.flags |= IC_CONTEXT_WARM_COMPILER;
  ic_context *ctx;
  BENCH_CHECK(ic_context_create(&o, &ctx));
  double t1 = host_now_ms(), create_ms = t1 - t0;
  if (warm) {
    struct timespec pause = {0, 50L * 1000 * 1000};
    nanosleep(&pause, NULL);
    t1 = host_now_ms();
  }
  ic_graph *g = ten_node_graph();
  ic_program *p;
  BENCH_CHECK(ic_compile(ctx, g, NULL, &p));
  double t2 = host_now_ms();
  printf("%.3f %.3f\n", create_ms, t2 - t1);
  ic_program_release(p);
  ic_graph_destroy(g);
  ic_context_destroy(ctx);
  return 0;
}

/* Runs first_compile_child in a fresh process; returns the compile's ms (create in *create). */
static double first_compile_in_process(const char *arch, bool warm, double *create) {
  char dir[] = "/tmp/ic-bench-first-XXXXXX";
  if (!mkdtemp(dir)) exit(1);
  char cmd[512];
  snprintf(cmd, sizeof cmd, "/proc/%ld/exe first-compile '%s' '%s'%s", (long)getpid(), arch, dir, warm ? " warm" : "");
  FILE *f = popen(cmd, "r");
  double c = -1, ms = -1;
  if (!f || fscanf(f, "%lf %lf", &c, &ms) != 2) ms = -1;
  if (f) pclose(f);
  remove_dir(dir);
  *create = c;
  return ms;
}

/* The table's two run cells: the default budget's run, and the run with no budget with
 * the split's cost (budget / none); "-" without a device. */
static void scaling_run_cells(char *buf, size_t size, double run, double whole_run) {
  if (run < 0 || whole_run < 0) snprintf(buf, size, "- | -");
  else snprintf(buf, size, "%.3f ms | %.3f ms (split: %.2fx)", run, whole_run, run / whole_run);
}

/* Compile time against graph size: chains of 10 to 3000 fused ops and a 200-op graph with
 * reductions, ic's cold compile (fusion budget: the default, and none) against raw NVRTC
 * of ic's own sources, and the first compile in a fresh process. */
static void bench_compile_scaling(const char *arch) {
  printf("\n## compile time against graph size (%s; ic cold: fresh context, empty cache)\n\n", arch);
  printf("Run: one run of the program on x [%d, 1024] f32 (host time, synchronized; \"-\" without a device):\n"
         "what the fusion budget's splits cost at run time.\n\n",
         SCALING_ROWS);
  printf("| graph | kernels | ic cold compile | raw NVRTC of ic's sources | ic, no fusion budget (kernels) | run | run, "
         "no budget |\n");
  printf("|---|---|---|---|---|---|---|\n");
  const int sizes[] = {10, 100, 1000, 3000};
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    ic_graph *g = chain_graph(sizes[i]);
    int32_t kernels = 0, whole_kernels = 0;
    double raw = 0, t[3];
    int reps = sizes[i] <= 100 ? 3 : 1;
    double run = -1, whole_run = -1;
    for (int r = 0; r < reps; r++)
      t[r] = cold_compile_ms(g, IC_MODE_FUSED, 0, &kernels, r == 0 ? &raw : NULL, r == 0 ? &run : NULL);
    double ms = median(t, reps);
    double whole = cold_compile_ms(g, IC_MODE_FUSED, -1, &whole_kernels, NULL, &whole_run);
    char rt[64];
    scaling_run_cells(rt, sizeof rt, run, whole_run);
    printf("| chain of %d ops | %d | %.1f ms | %.1f ms | %.1f ms (%d) | %s |\n", sizes[i], (int)kernels, ms, raw, whole,
           (int)whole_kernels, rt);
    fflush(stdout);
    ic_graph_destroy(g);
  }
  ic_graph *g = reduction_graph();
  int32_t kernels = 0, whole_kernels = 0;
  double raw = 0;
  double run = -1, whole_run = -1;
  double ms = cold_compile_ms(g, IC_MODE_FUSED, 0, &kernels, &raw, &run);
  double whole = cold_compile_ms(g, IC_MODE_FUSED, -1, &whole_kernels, NULL, &whole_run);
  char rt[64];
  scaling_run_cells(rt, sizeof rt, run, whole_run);
  printf("| 25 x (softmax, mul, sub): 200 ops, 50 reductions | %d | %.1f ms | %.1f ms | %.1f ms (%d) | %s |\n",
         (int)kernels, ms, raw, whole, (int)whole_kernels, rt);
  ic_graph_destroy(g);
  static const ic_dtype heavy[] = {IC_F32, IC_F8E4M3};
  for (size_t i = 0; i < sizeof heavy / sizeof heavy[0]; i++) {
    g = all_reductions_graph(heavy[i]);
    ms = cold_compile_ms(g, IC_MODE_FUSED, 0, &kernels, &raw, NULL);
    printf("| every reduction of %s [a, b, c] over axis 1: 13 outputs | %d | %.1f ms | %.1f ms | | - | - |\n",
           ic_dtype_name(heavy[i]), (int)kernels, ms, raw);
    fflush(stdout);
    ic_graph_destroy(g);
  }
  /* eager: many small kernels, the missing ones compiled as parallel batch parts */
  g = chain_graph(100);
  double te[5];
  for (int r = 0; r < 5; r++) te[r] = cold_compile_ms(g, IC_MODE_EAGER, 0, &kernels, NULL, NULL);
  printf("| chain of 100 ops, eager: 6 distinct kernels in parallel batch parts (%ld cores) | %d | %.1f ms | | | | |\n",
         sysconf(_SC_NPROCESSORS_ONLN), (int)kernels, median(te, 5));
  ic_graph_destroy(g);
  double create[5], first[5], warm_first[5], warm_create[5];
  for (int i = 0; i < 5; i++) {
    first[i] = first_compile_in_process(arch, false, &create[i]);
    warm_first[i] = first_compile_in_process(arch, true, &warm_create[i]);
    if (first[i] < 0 || warm_first[i] < 0) { /* not a time: a failed child */
      fprintf(stderr, "ic-bench: the first-compile child process failed (no times printed)\n");
      exit(1);
    }
  }
  printf("\nfirst compile in a fresh process (10-node graph, empty cache; median of 5 processes): "
         "ic_context_create %.1f ms, first ic_compile %.1f ms; with IC_CONTEXT_WARM_COMPILER and 50 ms of host "
         "work before it: ic_context_create %.1f ms, first ic_compile %.1f ms\n",
         median(create, 5), median(first, 5), median(warm_create, 5), median(warm_first, 5));
}

static void bench_compile(void) {
  char dir[] = "/tmp/ic-bench-cache-XXXXXX";
  if (!mkdtemp(dir)) {
    perror("mkdtemp");
    exit(1);
  }
  ic_context *ctx = compile_ctx(dir);
  const char *arch = ic_context_arch(ctx);
  /* raw NVRTC of each kernel (fused, then the eager ones), medians of 5 */
  ic_graph *g = pw_graph(PW_ROWS, PW_COLS);
  ic_compile_options nc = {.struct_size = sizeof nc, .flags = IC_COMPILE_NO_CACHE};
  ic_compile_options enc = nc;
  enc.mode = IC_MODE_EAGER;
  ic_program *fused, *eager;
  BENCH_CHECK(ic_compile(ctx, g, &nc, &fused));
  BENCH_CHECK(ic_compile(ctx, g, &enc, &eager));
  double raw[5], t[5];
  int32_t ne = ic_program_kernel_count(eager);
  double raw_eager_sum = 0;
  for (int32_t k = 0; k < ne; k++) {
    for (int i = 0; i < 5; i++) raw[i] = raw_nvrtc_ms(arch, "eager", ic_program_kernel_source(eager, k));
    raw_eager_sum += median(raw, 5);
  }
  /* the eager kernels in one NVRTC call, several entry points: each source (it carries
   * the part of the prelude it needs) in a namespace of its own, so that the helpers two
   * of them carry do not collide */
  size_t batch_len = 0;
  for (int32_t k = 0; k < ne; k++) batch_len += strlen(ic_program_kernel_source(eager, k)) + 64;
  char *batch = malloc(batch_len + 1);
  if (!batch) {
    fprintf(stderr, "ic-bench: out of memory\n");
    exit(1);
  }
  size_t at = 0;
  for (int32_t k = 0; k < ne; k++)
    at += (size_t)snprintf(batch + at, batch_len + 1 - at, "namespace ic_bench_k%d {\n%s\n}\n", (int)k,
                           ic_program_kernel_source(eager, k));
  for (int i = 0; i < 5; i++) raw[i] = raw_nvrtc_ms(arch, "batch", batch);
  double raw_batch = median(raw, 5);
  free(batch);

  /* ic cold: an empty cache directory each time (a fresh context, no program cache),
   * interleaved with raw NVRTC compiles of the same source so both see the same load */
  for (int i = 0; i < 5; i++) {
    raw[i] = raw_nvrtc_ms(arch, "fused", ic_program_kernel_source(fused, 0));
    char cold[] = "/tmp/ic-bench-cold-XXXXXX";
    if (!mkdtemp(cold)) exit(1);
    ic_context *c = compile_ctx(cold);
    ic_program *p;
    double t0 = host_now_ms();
    BENCH_CHECK(ic_compile(c, g, NULL, &p));
    t[i] = host_now_ms() - t0;
    ic_program_release(p);
    ic_context_destroy(c);
    remove_dir(cold);
  }
  double cold_ms = median(t, 5), raw_fused = median(raw, 5);
  /* NVRTC's fixed cost: an empty kernel, the same options */
  for (int i = 0; i < 5; i++) raw[i] = raw_nvrtc_ms(arch, "empty", "extern \"C\" __global__ void ic_bench_empty() {}\n");
  double raw_empty = median(raw, 5);
  /* fill the shared directory, then warm compiles in new processes */
  ic_program *p;
  BENCH_CHECK(ic_compile(ctx, g, NULL, &p));
  ic_program_release(p);
  fflush(NULL); /* nothing buffered is written twice by a child */
  for (int i = 0; i < 5; i++) t[i] = warm_compile_in_child(dir, arch);
  double warm_ms = median(t, 5);

  /* program cache: rebuild a 10-node graph from scratch and compile it, many times */
  ic_graph *g10 = ten_node_graph();
  BENCH_CHECK(ic_compile(ctx, g10, NULL, &p));
  ic_program_release(p);
  ic_graph_destroy(g10);
  enum { REBUILDS = 20000 };
  double t0 = host_now_ms();
  for (int i = 0; i < REBUILDS; i++) {
    ic_graph *gi = ten_node_graph();
    BENCH_CHECK(ic_compile(ctx, gi, NULL, &p));
    ic_program_release(p);
    ic_graph_destroy(gi);
  }
  double rebuild_us = (host_now_ms() - t0) * 1e3 / REBUILDS;
  ic_cache_stats st = {.struct_size = sizeof st};
  BENCH_CHECK(ic_cache_stats_get(ctx, &st));

  printf("\n## compile: y = gelu_tanh(x * w + b) (%s, %s)\n\n", arch,
         ic_context_has_device(ctx) ? "GPU present" : "compile-only");
  printf("| what | time | vs floor |\n|---|---|---|\n");
  printf("| raw NVRTC, fused kernel (floor) | %.2f ms | 1.00x |\n", raw_fused);
  printf("| raw NVRTC, an empty kernel (NVRTC's fixed cost) | %.2f ms | %.2fx |\n", raw_empty, raw_empty / raw_fused);
  printf("| ic cold compile, empty cache | %.2f ms | %.2fx raw NVRTC |\n", cold_ms, cold_ms / raw_fused);
  printf("| ic warm compile, new process, from disk | %.3f ms | %.3f ms per kernel (%s) |\n", warm_ms, warm_ms,
         warm_ms > 0 ? "disk hit" : "NOT a disk hit");
  printf("| rebuild 10-node graph + ic_compile (program-cache hit) | %.2f us | %llu hits |\n", rebuild_us,
         (unsigned long long)st.program_hits);
  printf("| raw NVRTC, %d eager kernels, one call each | %.2f ms | 1.00x |\n", (int)ne, raw_eager_sum);
  printf("| raw NVRTC, the same %d sources in one call (a namespace each) | %.2f ms | %.2fx |\n", (int)ne, raw_batch,
         raw_batch / raw_eager_sum);
  bench_compile_scaling(arch);
  ic_program_release(fused);
  ic_program_release(eager);
  ic_graph_destroy(g);
  ic_context_destroy(ctx);
  remove_dir(dir);
}

/* ---------------------------------------------------------------- reductions */

/* The workloads of the reductions table, each a graph of one size symbol n: the rows (the
 * column sum: the columns; the full sum: the elements); len is the constant size reduced
 * over. --quick keeps len (the same kernels and summation orders) and takes quick_n. */
typedef enum red_kind {
  RED_SOFTMAX,
  RED_LOG_SOFTMAX,
  RED_LAYER_NORM,
  RED_RMS_NORM,
  RED_FP8_QUANT,
  RED_FP8_QUANT_TORCH, /* torch_compare.py's formulation: x * (448 / amax), clamped, a plain cast */
  RED_ROW_SUM,
  RED_COL_SUM,
  RED_SUM_OVER_N, /* a sum over the rows n, a column reduction of a symbolic length (bias gradient, tall sum) */
  RED_FULL_SUM,
  RED_VEC_SOFTMAX, /* softmax of a vector x [n]: a kernel a pass (kir_passes_wanted) */
  RED_FULL_STD,    /* std of every element of x [n]: the mean, then the squares about it */
  RED_VAR_OVER_N,  /* var (correction 1) over the rows n of x [n, len]: two column passes */
  RED_GROUP_NORM,  /* x [n, 32, 10, len] normalized over its last two dims, weight and bias a channel */
  RED_ASM_FP8, /* not reductions: the asm table (ic-bench asm) */
  RED_CAST_FP8,
  RED_ASM_ROWQUANT, /* RED_FP8_QUANT with the values packed by the asm */
  PAT_TRANSPOSE_ADD, /* the patterns table (ic-bench patterns): pointwise access patterns */
  PAT_PERMUTE_BIAS,
  PAT_ROPE,
  PAT_PAD,
  PAT_DEQUANT,
  PAT_OUTER,
  PAT_WHERE
} red_kind;

typedef struct red_case {
  const char *name;
  red_kind kind;
  ic_dtype dtype;
  int64_t n, len, quick_n;
} red_case;

static const red_case red_cases[] = {
    {"softmax", RED_SOFTMAX, IC_F32, 32768, 4096, 1024},
    {"log_softmax", RED_LOG_SOFTMAX, IC_F32, 8192, 32000, 256},
    {"layer norm, weight and bias", RED_LAYER_NORM, IC_F32, 32768, 4096, 1024},
    {"RMS norm, weight", RED_RMS_NORM, IC_BF16, 32768, 4096, 1024},
    {"FP8 row quantization: f8e4m3 values, f32 scales [n, 1]", RED_FP8_QUANT, IC_BF16, 16384, 8192, 512},
    {"FP8 row quantization as torch_compare.py writes it: x * (448 / amax), clamp, cast", RED_FP8_QUANT_TORCH, IC_BF16,
     16384, 8192, 512},
    {"row sum", RED_ROW_SUM, IC_F32, 32768, 4096, 1024},
    {"column sum", RED_COL_SUM, IC_F32, 32768, 4096, 1024},
    {"bias gradient: bf16 [n, 4096] summed over its n rows", RED_SUM_OVER_N, IC_BF16, 65536, 4096, 1024},
    {"tall column sum: f32 [n, 256] summed over its n rows", RED_SUM_OVER_N, IC_F32, 524288, 256, 8192},
    {"full sum", RED_FULL_SUM, IC_F32, INT64_C(1) << 28, 0, INT64_C(1) << 22},
    {"softmax of a vector (3 reads of x a run: max, sum, divide)", RED_VEC_SOFTMAX, IC_F32, INT64_C(1) << 26, 0,
     INT64_C(1) << 20},
    {"std of every element (2 reads of x a run: mean, squares)", RED_FULL_STD, IC_F32, INT64_C(1) << 27, 0,
     INT64_C(1) << 21},
    {"softmax, rows of 1024", RED_SOFTMAX, IC_F32, 65536, 1024, 2048},
    {"softmax, rows of 16384", RED_SOFTMAX, IC_F32, 4096, 16384, 128},
    {"softmax, rows of 262144", RED_SOFTMAX, IC_F32, 256, 262144, 8},
    {"softmax bf16, rows of 4096 (aligned)", RED_SOFTMAX, IC_BF16, 65536, 4096, 1024},
    {"softmax bf16, rows of 4095 (odd)", RED_SOFTMAX, IC_BF16, 65536, 4095, 1024},
    {"softmax bf16, rows of 1031 (prime)", RED_SOFTMAX, IC_BF16, 262144, 1031, 4096},
    {"softmax f32, rows of 4099 (prime)", RED_SOFTMAX, IC_F32, 32768, 4099, 1024},
    {"RMS norm bf16, weight, rows of 8191 (prime)", RED_RMS_NORM, IC_BF16, 32768, 8191, 512},
    {"var over dim 0: f32 [n, 1000]", RED_VAR_OVER_N, IC_F32, 65536, 1000, 1024},
    {"var over dim 0: f32 [n, 1000], 32 MB (fits L2)", RED_VAR_OVER_N, IC_F32, 8192, 1000, 1024},
    {"var over dim 0: f32 [n, 16]", RED_VAR_OVER_N, IC_F32, 4194304, 16, 65536},
    {"var over dim 0: f32 [n, 16384]", RED_VAR_OVER_N, IC_F32, 4096, 16384, 64},
    {"group norm: f32 [n, 32, 10, 4096] over its last two dims, weight and bias a channel", RED_GROUP_NORM, IC_F32, 96, 4096, 2},
    {"group norm: bf16 [n, 32, 10, 4096] over its last two dims, weight and bias a channel", RED_GROUP_NORM, IC_BF16, 192, 4096, 4},
};

/* ic-bench asm: bf16 x [n, 8192] times a given f32 scale a row, packed to f8e4m3 by one
 * cvt.rn.satfinite.e4m3x2.f32 asm at pack 2, against the same graph with cast_saturate
 * (the same bits: ic's cast_saturate to e4m3 is that cvt's rule). */
static const red_case asm_cases[] = {
    {"FP8 packing: inline PTX e4m3x2 at pack 2", RED_ASM_FP8, IC_BF16, 16384, 8192, 512},
    {"FP8 packing: cast_saturate (the same graph)", RED_CAST_FP8, IC_BF16, 16384, 8192, 512},
    {"FP8 row quantization, amax in the kernel: e4m3x2 asm", RED_ASM_ROWQUANT, IC_BF16, 16384, 8192, 512},
    {"FP8 row quantization, amax in the kernel: cast_saturate", RED_FP8_QUANT, IC_BF16, 16384, 8192, 512},
};

/* ic-bench patterns: pointwise kernels whose tensors disagree in shape or order (issue 14's
 * list); n is the leading dim of every output. */
static const red_case pattern_cases[] = {
    {"transposed add: a + b^T (b [len, n])", PAT_TRANSPOSE_ADD, IC_F32, 8192, 8192, 64},
    {"3-D permute (0, 2, 1) plus a bias [len]", PAT_PERMUTE_BIAS, IC_BF16, 256, 1024, 4},
    {"RoPE: x * cos + concat(-x[..., 64:], x[..., :64]) * sin", PAT_ROPE, IC_BF16, 256, 4096, 4},
    {"pad of a computed value: pad(relu(x) * 2, 64 after)", PAT_PAD, IC_F32, 8192, 8128, 64},
    {"per-row scaled bf16 -> f8e4m3 (cast_saturate)", RED_CAST_FP8, IC_BF16, 16384, 8192, 64},
    {"i8 -> f32 dequantize, per-column f32 scales [len]", PAT_DEQUANT, IC_I8, 16384, 8192, 64},
    {"outer broadcast: [n, 1, len] + [1, 256, len] -> [n, 256, len]", PAT_OUTER, IC_F32, 256, 4096, 4},
    {"bool mask where(m, x, 0)", PAT_WHERE, IC_F32, 8192, 8192, 64},
};

/* Rows (column sum: columns) the ref backend recomputes to check the cuda results. */
enum { RED_MAX_IN = 3, RED_MAX_OUT = 2, RED_CHECK_N = 8, RED_NOTE = 320 };

typedef struct red_tensor {
  const char *name;
  ic_dtype dtype;
  int32_t ndim;
  int64_t shape[IC_MAX_DIMS];
  int32_t sym_dim;       /* inputs: the dim of size n, -1 for none */
  double lo, hi;         /* inputs: random values, uniform in [lo, hi) */
  size_t bytes;
  void *host;            /* inputs: the values uploaded */
  CUdeviceptr dev;       /* inputs; outputs: the fused run's */
  CUdeviceptr dev_eager; /* outputs: the eager run's */
} red_tensor;

/* One row of the table: what was measured, and the first error of each part. */
typedef struct red_row {
  double fused_ms, eager_ms; /* < 0: not measured */
  int32_t fused_launches, eager_launches; /* < 0: no program */
  char same_eager[80], same_ref[80];
  char fused_err[RED_NOTE], eager_err[RED_NOTE], err[RED_NOTE];
} red_row;

/* Records a message in note unless it already holds one (the first error counts). */
static void red_note(char *note, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void red_note(char *note, const char *fmt, ...) {
  if (note[0]) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(note, RED_NOTE, fmt, ap);
  va_end(ap);
}

/* These two record an ic or a driver failure; they return false, for `return` in a check. */
static bool red_note_ic(char *note, const char *what, ic_status s) {
  red_note(note, "%s: %s: %s", what, ic_status_string(s), ic_last_error());
  return false;
}

static bool red_note_cu(char *note, const char *what, CUresult r) {
  red_note(note, "%s: %s", what, cu_name(r));
  return false;
}

static size_t red_numel(int32_t ndim, const int64_t *shape) {
  size_t n = 1;
  for (int32_t d = 0; d < ndim; d++) n *= (size_t)shape[d];
  return n;
}

static void red_input(red_tensor *t, const char *name, ic_dtype dt, int32_t ndim, const int64_t *shape,
                      int32_t sym_dim, double lo, double hi) {
  *t = (red_tensor){.name = name, .dtype = dt, .ndim = ndim, .sym_dim = sym_dim, .lo = lo, .hi = hi};
  memcpy(t->shape, shape, sizeof(int64_t) * (size_t)ndim);
  t->bytes = red_numel(ndim, shape) * ic_dtype_size(dt);
}

/* The patterns table's graphs (red_graph's contract), of size symbol n (g's first). */
static ic_graph *pattern_graph(ic_graph *g, const red_case *c, int64_t n, red_tensor *in, int32_t *nin) {
  ic_dim sym = ic_graph_symbol(g, "n");
  const ic_dtype dt = c->dtype;
  const int64_t len = c->len;
  const ic_layout contig = IC_LAYOUT_CONTIGUOUS;
  switch (c->kind) {
  case PAT_TRANSPOSE_ADD: {
    ic_value a = ic_graph_input(g, "a", dt, 2, (ic_dim[]){sym, len}, contig);
    ic_value bt = ic_graph_input(g, "b", dt, 2, (ic_dim[]){len, sym}, contig);
    red_input(&in[(*nin)++], "a", dt, 2, (int64_t[]){n, len}, 0, -1, 1);
    red_input(&in[(*nin)++], "b", dt, 2, (int64_t[]){len, n}, 1, -1, 1);
    ic_graph_output(g, "y", ic_graph_binary(g, IC_OP_ADD, a, ic_graph_permute(g, bt, 2, (int32_t[]){1, 0})));
    break;
  }
  case PAT_PERMUTE_BIAS: { /* x [n, 512, len] -> [n, len, 512] + bias[512] */
    ic_value x = ic_graph_input(g, "x", dt, 3, (ic_dim[]){sym, 512, len}, contig);
    ic_value bias = ic_graph_input(g, "bias", dt, 1, (ic_dim[]){512}, contig);
    red_input(&in[(*nin)++], "x", dt, 3, (int64_t[]){n, 512, len}, 0, -2, 2);
    red_input(&in[(*nin)++], "bias", dt, 1, (int64_t[]){512}, -1, -1, 1);
    ic_value p = ic_graph_permute(g, x, 3, (int32_t[]){0, 2, 1});
    ic_graph_output(g, "y", ic_graph_binary(g, IC_OP_ADD, p, bias));
    break;
  }
  case PAT_ROPE: { /* x [n, len, 128], cos and sin [len, 128] */
    ic_value x = ic_graph_input(g, "x", dt, 3, (ic_dim[]){sym, len, 128}, contig);
    ic_value cs = ic_graph_input(g, "cos", dt, 2, (ic_dim[]){len, 128}, contig);
    ic_value sn = ic_graph_input(g, "sin", dt, 2, (ic_dim[]){len, 128}, contig);
    red_input(&in[(*nin)++], "x", dt, 3, (int64_t[]){n, len, 128}, 0, -2, 2);
    red_input(&in[(*nin)++], "cos", dt, 2, (int64_t[]){len, 128}, -1, -1, 1);
    red_input(&in[(*nin)++], "sin", dt, 2, (int64_t[]){len, 128}, -1, -1, 1);
    ic_value halves[2] = {ic_graph_unary(g, IC_OP_NEG, ic_graph_slice(g, x, 2, 64, 128, 1)), ic_graph_slice(g, x, 2, 0, 64, 1)};
    ic_value rot = ic_graph_concat(g, 2, halves, 2);
    ic_graph_output(g, "y", ic_graph_binary(g, IC_OP_ADD, ic_graph_binary(g, IC_OP_MUL, x, cs), ic_graph_binary(g, IC_OP_MUL, rot, sn)));
    break;
  }
  case PAT_PAD: {
    ic_value x = ic_graph_input(g, "x", dt, 2, (ic_dim[]){sym, len}, contig);
    red_input(&in[(*nin)++], "x", dt, 2, (int64_t[]){n, len}, 0, -1, 1);
    ic_value v = ic_graph_binary(g, IC_OP_MUL, ic_graph_unary(g, IC_OP_RELU, x), ic_graph_constant(g, 2, IC_DTYPE_AUTO));
    ic_graph_output(g, "y", ic_graph_pad(g, v, 1, (int64_t[]){0, 64}, 0.0));
    break;
  }
  case PAT_DEQUANT: {
    ic_value x = ic_graph_input(g, "x", dt, 2, (ic_dim[]){sym, len}, contig);
    ic_value sc = ic_graph_input(g, "s", IC_F32, 1, (ic_dim[]){len}, contig);
    red_input(&in[(*nin)++], "x", dt, 2, (int64_t[]){n, len}, 0, -128, 128);
    red_input(&in[(*nin)++], "s", IC_F32, 1, (int64_t[]){len}, -1, 0.001, 0.1);
    ic_graph_output(g, "y", ic_graph_binary(g, IC_OP_MUL, ic_graph_cast(g, x, IC_F32), sc));
    break;
  }
  case PAT_OUTER: {
    ic_value a = ic_graph_input(g, "a", dt, 3, (ic_dim[]){sym, 1, len}, contig);
    ic_value bv = ic_graph_input(g, "b", dt, 3, (ic_dim[]){1, 256, len}, contig);
    red_input(&in[(*nin)++], "a", dt, 3, (int64_t[]){n, 1, len}, 0, -1, 1);
    red_input(&in[(*nin)++], "b", dt, 3, (int64_t[]){1, 256, len}, -1, -1, 1);
    ic_graph_output(g, "y", ic_graph_binary(g, IC_OP_ADD, a, bv));
    break;
  }
  case PAT_WHERE: {
    ic_value m = ic_graph_input(g, "m", IC_BOOL, 2, (ic_dim[]){sym, len}, contig);
    ic_value x = ic_graph_input(g, "x", dt, 2, (ic_dim[]){sym, len}, contig);
    red_input(&in[(*nin)++], "m", IC_BOOL, 2, (int64_t[]){n, len}, 0, 0, 2);
    red_input(&in[(*nin)++], "x", dt, 2, (int64_t[]){n, len}, 0, -1, 1);
    ic_graph_output(g, "y", ic_graph_where(g, m, x, ic_graph_constant(g, 0, IC_DTYPE_AUTO)));
    break;
  }
  default: break;
  }
  return g;
}

/* The graph of c (size symbol n, an instance of n rows described in in[]), built with the
 * public builder as a user would: the shorthands for softmax, log_softmax and the norms,
 * ic ops for the FP8 quantization. NULL only when ic_graph_create fails; builder errors
 * stay on the graph (ic_graph_error). */
static ic_graph *red_graph(const red_case *c, int64_t n, red_tensor *in, int32_t *nin) {
  ic_graph *g;
  if (ic_graph_create(&g) != IC_OK) return NULL;
  *nin = 0;
  if (c->kind >= PAT_TRANSPOSE_ADD) return pattern_graph(g, c, n, in, nin);
  ic_dim sym = ic_graph_symbol(g, "n");
  ic_dtype dt = c->dtype;
  ic_dim len = c->len;
  const ic_layout contig = IC_LAYOUT_CONTIGUOUS;
  *nin = 0;
  if (c->kind == RED_COL_SUM) { /* x [len, n], summed over dim 0 */
    ic_value x = ic_graph_input(g, "x", dt, 2, (ic_dim[]){len, sym}, contig);
    red_input(&in[(*nin)++], "x", dt, 2, (int64_t[]){len, n}, 1, -1, 1);
    ic_graph_output(g, "y", ic_graph_reduce(g, IC_REDUCE_SUM, x, 1, (int32_t[]){0}, 0));
    return g;
  }
  if (c->kind == RED_SUM_OVER_N || c->kind == RED_VAR_OVER_N) { /* x [n, len], reduced over dim 0 */
    ic_value x = ic_graph_input(g, "x", dt, 2, (ic_dim[]){sym, len}, contig);
    red_input(&in[(*nin)++], "x", dt, 2, (int64_t[]){n, len}, 0, -1, 1);
    ic_graph_output(g, "y", c->kind == RED_SUM_OVER_N ? ic_graph_reduce(g, IC_REDUCE_SUM, x, 1, (int32_t[]){0}, 0)
                                                      : ic_graph_var(g, x, 1, (int32_t[]){0}, 1.0, 0));
    return g;
  }
  if (c->kind == RED_GROUP_NORM) {
    /* group norm of [n, 320, H, W] with 32 groups, H * W = len: the statistics of a group
     * are one row of 10 * len elements (dims 2 and 3), the affine a channel's (group, j) */
    ic_value x = ic_graph_input(g, "x", dt, 4, (ic_dim[]){sym, 32, 10, len}, contig);
    ic_value w = ic_graph_input(g, "w", dt, 3, (ic_dim[]){32, 10, 1}, contig);
    ic_value bias = ic_graph_input(g, "b", dt, 3, (ic_dim[]){32, 10, 1}, contig);
    red_input(&in[(*nin)++], "x", dt, 4, (int64_t[]){n, 32, 10, len}, 0, -3, 5);
    red_input(&in[(*nin)++], "w", dt, 3, (int64_t[]){32, 10, 1}, -1, 0.5, 1.5);
    red_input(&in[(*nin)++], "b", dt, 3, (int64_t[]){32, 10, 1}, -1, -0.5, 0.5);
    const int32_t axes[2] = {2, 3};
    ic_value m = ic_graph_reduce(g, IC_REDUCE_MEAN, x, 2, axes, 1);
    ic_value d = ic_graph_binary(g, IC_OP_SUB, x, m);
    ic_value v = ic_graph_reduce(g, IC_REDUCE_MEAN, ic_graph_binary(g, IC_OP_MUL, d, d), 2, axes, 1);
    ic_value r = ic_graph_unary(g, IC_OP_RSQRT, ic_graph_binary(g, IC_OP_ADD, v, ic_graph_constant(g, 1e-5, IC_DTYPE_AUTO)));
    ic_value y = ic_graph_binary(g, IC_OP_MUL, ic_graph_binary(g, IC_OP_MUL, d, r), w);
    ic_graph_output(g, "y", ic_graph_binary(g, IC_OP_ADD, y, bias));
    return g;
  }
  if (c->kind == RED_FULL_SUM || c->kind == RED_VEC_SOFTMAX || c->kind == RED_FULL_STD) { /* x [n] */
    ic_value x = ic_graph_input(g, "x", dt, 1, (ic_dim[]){sym}, contig);
    red_input(&in[(*nin)++], "x", dt, 1, (int64_t[]){n}, 0, c->kind == RED_VEC_SOFTMAX ? -8 : -1, c->kind == RED_VEC_SOFTMAX ? 8 : 1);
    ic_value y = c->kind == RED_FULL_SUM      ? ic_graph_reduce(g, IC_REDUCE_SUM, x, 0, NULL, 0)
                 : c->kind == RED_VEC_SOFTMAX ? ic_graph_softmax(g, x, 0)
                                              : ic_graph_std(g, x, 1, (int32_t[]){0}, 1.0, 0);
    ic_graph_output(g, "y", y);
    return g;
  }
  /* x [n, len], reduced over the rows' len elements */
  ic_value x = ic_graph_input(g, "x", dt, 2, (ic_dim[]){sym, len}, contig);
  const int64_t xs[2] = {n, len}, ws[1] = {len};
  switch (c->kind) {
  case RED_SOFTMAX:
  case RED_LOG_SOFTMAX:
    red_input(&in[(*nin)++], "x", dt, 2, xs, 0, -8, 8); /* logits */
    ic_graph_output(g, "y", c->kind == RED_SOFTMAX ? ic_graph_softmax(g, x, -1) : ic_graph_log_softmax(g, x, -1));
    break;
  case RED_LAYER_NORM: {
    ic_value w = ic_graph_input(g, "w", dt, 1, (ic_dim[]){len}, contig);
    ic_value b = ic_graph_input(g, "b", dt, 1, (ic_dim[]){len}, contig);
    red_input(&in[(*nin)++], "x", dt, 2, xs, 0, -3, 5);
    red_input(&in[(*nin)++], "w", dt, 1, ws, -1, 0.5, 1.5);
    red_input(&in[(*nin)++], "b", dt, 1, ws, -1, -0.5, 0.5);
    ic_graph_output(g, "y", ic_graph_layer_norm(g, x, 1, w, b, 1e-5));
    break;
  }
  case RED_RMS_NORM: {
    ic_value w = ic_graph_input(g, "w", dt, 1, (ic_dim[]){len}, contig);
    red_input(&in[(*nin)++], "x", dt, 2, xs, 0, -3, 3);
    red_input(&in[(*nin)++], "w", dt, 1, ws, -1, 0.5, 1.5);
    ic_graph_output(g, "y", ic_graph_rms_norm(g, x, 1, w, 1e-6));
    break;
  }
  case RED_FP8_QUANT:
  case RED_ASM_ROWQUANT: {
    /* amax = max |x| over the row (in f32: x is bf16, the scales are f32); scale =
     * max(amax, 1e-12) / 448, so an all-zero row gets a tiny scale and zero values
     * instead of 0 / 0 (torchao's floor); values = x / scale saturated to f8e4m3. */
    red_input(&in[(*nin)++], "x", dt, 2, xs, 0, -6, 6);
    ic_value xf = ic_graph_cast(g, x, IC_F32);
    ic_value amax = ic_graph_reduce(g, IC_REDUCE_MAX, ic_graph_unary(g, IC_OP_ABS, xf), 1, (int32_t[]){1}, 1);
    amax = ic_graph_binary(g, IC_OP_MAXIMUM, amax, ic_graph_constant(g, 1e-12, IC_DTYPE_AUTO));
    ic_value scale = ic_graph_binary(g, IC_OP_DIV, amax, ic_graph_constant(g, 448, IC_DTYPE_AUTO));
    ic_value v = ic_graph_binary(g, IC_OP_DIV, xf, scale), values = IC_INVALID_VALUE;
    if (c->kind == RED_FP8_QUANT) {
      values = ic_graph_cast_saturate(g, v, IC_F8E4M3);
    } else {
      ic_inline_asm_desc d = {.struct_size = sizeof d, .asm_text = "cvt.rn.satfinite.e4m3x2.f32 $0, $2, $1;",
                              .constraints = "=h,f,f", .output_dtypes = (const ic_dtype[]){IC_F8E4M3}, .is_pure = 1,
                              .pack = 2};
      ic_graph_inline_asm(g, &d, 1, &v, 1, &values); /* an error stays in the graph */
    }
    ic_graph_output(g, "values", values);
    ic_graph_output(g, "scales", scale);
    break;
  }
  case RED_FP8_QUANT_TORCH: {
    /* amax = max |x| in bf16, then f32; scale = 448 / max(amax, 1e-12); values = cast(clamp(x
     * * scale, -448, 448), f8e4m3), and the inverse scales 1 / scale */
    red_input(&in[(*nin)++], "x", dt, 2, xs, 0, -6, 6);
    ic_value amax = ic_graph_reduce(g, IC_REDUCE_MAX, ic_graph_unary(g, IC_OP_ABS, x), 1, (int32_t[]){1}, 1);
    amax = ic_graph_binary(g, IC_OP_MAXIMUM, ic_graph_cast(g, amax, IC_F32), ic_graph_constant(g, 1e-12, IC_DTYPE_AUTO));
    ic_value scale = ic_graph_binary(g, IC_OP_DIV, ic_graph_constant(g, 448, IC_DTYPE_AUTO), amax);
    ic_value v = ic_graph_binary(g, IC_OP_MUL, ic_graph_cast(g, x, IC_F32), scale);
    v = ic_graph_op(g, IC_OP_CLAMP, 3,
                    (ic_value[]){v, ic_graph_constant(g, -448, IC_DTYPE_AUTO), ic_graph_constant(g, 448, IC_DTYPE_AUTO)});
    ic_graph_output(g, "values", ic_graph_cast(g, v, IC_F8E4M3));
    ic_graph_output(g, "scale_inv", ic_graph_binary(g, IC_OP_DIV, ic_graph_constant(g, 1, IC_DTYPE_AUTO), scale));
    break;
  }
  case RED_ROW_SUM:
    red_input(&in[(*nin)++], "x", dt, 2, xs, 0, -1, 1);
    ic_graph_output(g, "y", ic_graph_reduce(g, IC_REDUCE_SUM, x, 1, (int32_t[]){1}, 0));
    break;
  case RED_ASM_FP8:
  case RED_CAST_FP8: {
    ic_value sc = ic_graph_input(g, "s", IC_F32, 2, (ic_dim[]){sym, 1}, contig);
    red_input(&in[(*nin)++], "x", dt, 2, xs, 0, -6, 6);
    red_input(&in[(*nin)++], "s", IC_F32, 2, (int64_t[]){n, 1}, 0, 20, 120); /* some values saturate */
    ic_value v = ic_graph_binary(g, IC_OP_MUL, ic_graph_cast(g, x, IC_F32), sc), q = IC_INVALID_VALUE;
    if (c->kind == RED_CAST_FP8) {
      q = ic_graph_cast_saturate(g, v, IC_F8E4M3);
    } else {
      ic_inline_asm_desc d = {.struct_size = sizeof d, .asm_text = "cvt.rn.satfinite.e4m3x2.f32 $0, $2, $1;",
                              .constraints = "=h,f,f", .output_dtypes = (const ic_dtype[]){IC_F8E4M3}, .is_pure = 1,
                              .pack = 2};
      ic_graph_inline_asm(g, &d, 1, &v, 1, &q); /* an error stays in the graph */
    }
    ic_graph_output(g, "values", q);
    break;
  }
  default: break;
  }
  return g;
}

/* Uniform random values in [lo, hi) of dtype dt, from a splitmix64 stream of the seed
 * (f32 and bf16 directly, other dtypes through ic_element_store). */
static void red_fill(void *dst, ic_dtype dt, size_t count, double lo, double hi, uint64_t seed) {
  uint64_t s = seed;
  const float flo = (float)lo, span = (float)(hi - lo);
  for (size_t i = 0; i < count; i++) {
    uint64_t z = (s += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    z ^= z >> 31;
    float f = flo + span * (float)(z >> 40) * 0x1p-24f;
    if (dt == IC_BF16) {
      uint32_t u;
      memcpy(&u, &f, 4);
      uint16_t h = (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16); /* nearest even; f is finite */
      memcpy((char *)dst + 2 * i, &h, 2);
    } else if (dt == IC_F32) {
      memcpy((char *)dst + 4 * i, &f, 4);
    } else if (dt == IC_BOOL) { /* true where f >= the middle of [lo, hi) */
      ((unsigned char *)dst)[i] = f >= flo + 0.5f * span;
    } else {
      ic_element_store(dt, f, (char *)dst + ic_dtype_size(dt) * i);
    }
  }
}

/* Memory of the workloads: the device's, or the host's for --ref (a host pointer in a
 * CUdeviceptr). */
static bool red_alloc(const bench *b, CUdeviceptr *p, size_t bytes, char *note) {
  if (b->ref) {
    void *h = malloc(bytes ? bytes : 1);
    *p = (CUdeviceptr)(uintptr_t)h;
    if (!h) red_note(note, "out of host memory (%zu MiB)", bytes >> 20);
    return h != NULL;
  }
  CUresult r = b->d->cuMemAlloc(p, bytes ? bytes : 1);
  if (r == CUDA_SUCCESS) return true;
  *p = 0;
  char what[64];
  snprintf(what, sizeof what, "cuMemAlloc(%zu MiB)", bytes >> 20);
  return red_note_cu(note, what, r);
}

static void red_free(const bench *b, CUdeviceptr p) {
  if (b->ref) free((void *)(uintptr_t)p);
  else if (p) b->d->cuMemFree(p);
}

static bool red_htod(const bench *b, CUdeviceptr dst, const void *src, size_t bytes, char *note) {
  if (b->ref) {
    memcpy((void *)(uintptr_t)dst, src, bytes);
    return true;
  }
  CUresult r = b->d->cuMemcpyHtoD(dst, src, bytes);
  return r == CUDA_SUCCESS || red_note_cu(note, "cuMemcpyHtoD", r);
}

static bool red_dtoh(const bench *b, void *dst, CUdeviceptr src, size_t bytes, char *note) {
  if (b->ref) {
    memcpy(dst, (const void *)(uintptr_t)src, bytes);
    return true;
  }
  CUresult r = b->d->cuMemcpyDtoH(dst, src, bytes);
  return r == CUDA_SUCCESS || red_note_cu(note, "cuMemcpyDtoH", r);
}

/* Kernel launches in one run of p at size n: its launch steps whose grid is not empty (a
 * reduction of symbolic sizes holds its one kernel and its two stages, and the sizes
 * launch one side). Graphs here have the one symbol n. */
static int32_t red_launches(const ic_program *p, int64_t n) {
  int32_t count = 0;
  for (int32_t i = 0; i < ic_program_step_count(p); i++) {
    ic_step s;
    int64_t grid = 1; /* counted where it cannot be evaluated */
    if (ic_program_step(p, i, &s) != IC_OK || s.kind != IC_STEP_LAUNCH) continue;
    if (ic_program_symbol_count(p) <= 1 && ic_program_eval(p, s.grid_expr, &n, &grid) != IC_OK) grid = 1;
    count += grid > 0;
  }
  return count;
}

/* p's tensors: inputs by name (ic_program_input_index), outputs in order (eager: the
 * eager run's buffers). False with a note when p's inputs are not in[]'s. */
static bool red_bind(const ic_program *p, red_tensor *in, int32_t nin, red_tensor *out, int32_t nout, bool eager,
                     ic_tensor *tin, ic_tensor *tout, char *note) {
  if (ic_program_input_count(p) != nin) {
    red_note(note, "the program has %d inputs, the graph %d", (int)ic_program_input_count(p), (int)nin);
    return false;
  }
  for (int32_t i = 0; i < nin; i++) {
    int32_t at = ic_program_input_index(p, in[i].name);
    if (at < 0 || at >= nin) {
      red_note(note, "the program has no input '%s'", in[i].name);
      return false;
    }
    tin[at] = (ic_tensor){(void *)(uintptr_t)in[i].dev, in[i].dtype, in[i].ndim, in[i].shape, NULL};
  }
  for (int32_t o = 0; o < nout; o++)
    tout[o] = (ic_tensor){(void *)(uintptr_t)(eager ? out[o].dev_eager : out[o].dev), out[o].dtype, out[o].ndim,
                          out[o].shape, NULL};
  return true;
}

/* Describes p's outputs for inputs tin: names, dtypes, shapes, bytes. */
static bool red_outputs(const ic_program *p, const ic_tensor *tin, red_tensor *out, int32_t *nout, char *note) {
  int32_t n = ic_program_output_count(p);
  if (n < 1 || n > RED_MAX_OUT) {
    red_note(note, "the program has %d outputs", (int)n);
    return false;
  }
  for (int32_t o = 0; o < n; o++) {
    red_tensor *t = &out[o];
    *t = (red_tensor){.sym_dim = -1};
    for (int32_t i = 0; i < ic_program_buffer_count(p); i++) {
      ic_buffer_info bi;
      if (ic_program_buffer(p, i, &bi) == IC_OK && bi.kind == IC_BUFFER_OUTPUT && bi.index == o) {
        t->name = bi.name;
        t->dtype = bi.dtype;
      }
    }
    ic_status s = ic_program_output_shape(p, o, tin, &t->ndim, t->shape);
    if (!t->name || s != IC_OK) {
      if (s != IC_OK) red_note_ic(note, "ic_program_output_shape", s);
      else red_note(note, "output %d has no buffer", (int)o);
      return false;
    }
    t->bytes = red_numel(t->ndim, t->shape) * ic_dtype_size(t->dtype);
  }
  *nout = n;
  return true;
}

/* Median GPU ms of reps runs of p after warm ones, by CUDA events, as bench_gpu_ms; false
 * with a note at the first failure (a failed run, or a kernel fault seen at a sync). */
static bool red_time(bench *b, ic_program *p, const ic_tensor *tin, int32_t nin, ic_tensor *tout, int32_t nout,
                     int warm, int reps, double *ms, char *note) {
  const cu_api *d = b->d;
  double t[64] = {0};
  if (reps > 64) reps = 64;
  if (b->ref) { /* ref runs on the host, synchronously: the host clock */
    for (int i = 0; i < warm + reps; i++) {
      double t0 = host_now_ms();
      ic_status s = ic_program_run(p, tin, nin, tout, nout, NULL);
      if (s != IC_OK) return red_note_ic(note, "ic_program_run", s);
      if (i >= warm) t[i - warm] = host_now_ms() - t0;
    }
    *ms = median(t, reps);
    return true;
  }
  for (int i = 0; i < warm + reps; i++) {
    bool timed = i >= warm;
    CUresult r = timed ? d->cuEventRecord(b->start, b->stream) : CUDA_SUCCESS;
    if (r != CUDA_SUCCESS) return red_note_cu(note, "cuEventRecord", r);
    ic_status s = ic_program_run(p, tin, nin, tout, nout, b->stream);
    if (s != IC_OK) return red_note_ic(note, "ic_program_run", s);
    if (!timed) continue;
    if ((r = d->cuEventRecord(b->stop, b->stream)) != CUDA_SUCCESS) return red_note_cu(note, "cuEventRecord", r);
    if ((r = d->cuEventSynchronize(b->stop)) != CUDA_SUCCESS)
      return red_note_cu(note, "a run (cuEventSynchronize)", r);
    float f = 0;
    if ((r = d->cuEventElapsedTime(&f, b->start, b->stop)) != CUDA_SUCCESS)
      return red_note_cu(note, "cuEventElapsedTime", r);
    t[i - warm] = f;
  }
  CUresult r = d->cuStreamSynchronize(b->stream);
  if (r != CUDA_SUCCESS) return red_note_cu(note, "a run (cuStreamSynchronize)", r);
  *ms = median(t, reps);
  return true;
}

/* Where two byte ranges of outputs of dtype dt first differ, as "NO: name[i]". */
static void red_mismatch(char *res, size_t size, const char *name, size_t byte, ic_dtype dt) {
  snprintf(res, size, "NO: %s[%zu]", name, byte / ic_dtype_size(dt));
}

static size_t red_first_diff(const unsigned char *a, const unsigned char *b, size_t n) {
  size_t i = 0;
  while (i < n && a[i] == b[i]) i++;
  return i;
}

/* Workloads that call exp or log. */
static bool red_transcendental(const red_case *c) {
  return c->kind == RED_SOFTMAX || c->kind == RED_LOG_SOFTMAX || c->kind == RED_VEC_SOFTMAX;
}

/* The largest ulp distance between two f32 arrays of `bytes` bytes (-1 for a NaN). */
static int64_t red_max_ulps(const unsigned char *a, const unsigned char *b, size_t bytes) {
  int64_t worst = 0;
  for (size_t i = 0; i + 4 <= bytes; i += 4) {
    int32_t x, y;
    memcpy(&x, a + i, 4);
    memcpy(&y, b + i, 4);
    if ((x & 0x7fffffff) > 0x7f800000 || (y & 0x7fffffff) > 0x7f800000) {
      if (x != y) return -1;
      continue;
    }
    /* ordered integers: the ulp distance is their difference */
    int64_t ox = x < 0 ? (int64_t)INT32_MIN - x : x, oy = y < 0 ? (int64_t)INT32_MIN - y : y;
    int64_t d = ox > oy ? ox - oy : oy - ox;
    if (d > worst) worst = d;
  }
  return worst;
}

/* The fused and the eager outputs, bit for bit (in 64 MiB pieces). */
static void red_compare_eager(bench *b, const red_tensor *out, int32_t nout, red_row *row) {
  enum { PIECE = 64 << 20 };
  unsigned char *h1 = malloc(PIECE), *h2 = malloc(PIECE);
  if (!h1 || !h2) {
    red_note(row->err, "out of host memory for the eager check");
    snprintf(row->same_eager, sizeof row->same_eager, "not checked");
    free(h1);
    free(h2);
    return;
  }
  snprintf(row->same_eager, sizeof row->same_eager, "yes");
  for (int32_t o = 0; o < nout; o++) {
    for (size_t at = 0; at < out[o].bytes; at += PIECE) {
      size_t n = out[o].bytes - at < PIECE ? out[o].bytes - at : PIECE;
      if (!red_dtoh(b, h1, out[o].dev + at, n, row->err) || !red_dtoh(b, h2, out[o].dev_eager + at, n, row->err)) {
        snprintf(row->same_eager, sizeof row->same_eager, "not checked");
        goto done;
      }
      if (memcmp(h1, h2, n) != 0) {
        red_mismatch(row->same_eager, sizeof row->same_eager, out[o].name, at + red_first_diff(h1, h2, n),
                     out[o].dtype);
        goto done;
      }
    }
  }
done:
  free(h1);
  free(h2);
}

/* The fused cuda outputs (eager: the eager ones) against the ref backend (the oracle,
 * the same graph), bit for bit, on the first RED_CHECK_N rows (column sum: columns; the
 * full sum, the bias gradient and the tall column sum, which reduce over n: all of it).
 * Rows are independent and the summation order depends only on the reduced size, so those
 * rows of the timed run must equal ref's. */
static void red_check_ref(bench *b, ic_graph *g, const red_case *c, int64_t n, red_tensor *in, int32_t nin,
                          const red_tensor *out, int32_t nout, bool eager, red_row *row) {
  const bool whole = c->kind == RED_FULL_SUM || c->kind == RED_VEC_SOFTMAX || c->kind == RED_FULL_STD || c->kind == RED_SUM_OVER_N ||
                     c->kind == RED_VAR_OVER_N;
  int64_t k = whole || n < RED_CHECK_N ? n : RED_CHECK_N;
  snprintf(row->same_ref, sizeof row->same_ref, "not checked");
  if (c->kind == RED_ASM_FP8 || c->kind == RED_ASM_ROWQUANT) {
    snprintf(row->same_ref, sizeof row->same_ref, "no ref (PTX)");
    return;
  }
  ic_compile_options o = {.struct_size = sizeof o, .backend = "ref"};
  ic_program *p = NULL;
  ic_status s = ic_compile(b->ctx, g, &o, &p);
  if (s != IC_OK) {
    red_note_ic(row->err, "ref check: ic_compile (ref)", s);
    return;
  }
  red_tensor sub[RED_MAX_IN];
  ic_tensor tin[RED_MAX_IN], tout[RED_MAX_OUT];
  void *sub_host[RED_MAX_IN] = {0}, *ref_out[RED_MAX_OUT] = {0}, *got = NULL;
  red_tensor rout[RED_MAX_OUT];
  int32_t nrout = 0;
  bool ok = true;
  for (int32_t i = 0; i < nin && ok; i++) {
    sub[i] = in[i];
    sub[i].dev = (CUdeviceptr)(uintptr_t)in[i].host; /* red_bind passes .dev: host pointers for ref */
    if (in[i].sym_dim < 0 || k == n) continue;
    /* the first k along sym_dim: outer blocks of k * inner elements */
    int32_t sd = in[i].sym_dim;
    size_t esize = ic_dtype_size(in[i].dtype), outer = 1, inner = esize;
    for (int32_t d = 0; d < sd; d++) outer *= (size_t)in[i].shape[d];
    for (int32_t d = sd + 1; d < in[i].ndim; d++) inner *= (size_t)in[i].shape[d];
    sub[i].shape[sd] = k;
    sub[i].bytes = outer * (size_t)k * inner;
    if (!(sub_host[i] = malloc(sub[i].bytes ? sub[i].bytes : 1))) {
      red_note(row->err, "ref check: out of host memory");
      ok = false;
      break;
    }
    for (size_t q = 0; q < outer; q++)
      memcpy((char *)sub_host[i] + q * (size_t)k * inner, (const char *)in[i].host + q * (size_t)in[i].shape[sd] * inner,
             (size_t)k * inner);
    sub[i].dev = (CUdeviceptr)(uintptr_t)sub_host[i];
  }
  ok = ok && red_bind(p, sub, nin, rout, 0, false, tin, tout, row->err) && red_outputs(p, tin, rout, &nrout, row->err);
  if (ok && nrout != nout) {
    red_note(row->err, "ref check: %d outputs on ref, %d on cuda", (int)nrout, (int)nout);
    ok = false;
  }
  for (int32_t q = 0; ok && q < nrout; q++) {
    if (!(ref_out[q] = malloc(rout[q].bytes ? rout[q].bytes : 1))) {
      red_note(row->err, "ref check: out of host memory");
      ok = false;
    }
    tout[q] = (ic_tensor){ref_out[q], rout[q].dtype, rout[q].ndim, rout[q].shape, NULL};
  }
  if (ok && (s = ic_program_run(p, tin, nin, tout, nrout, NULL)) != IC_OK) {
    red_note_ic(row->err, "ref check: ic_program_run (ref)", s);
    ok = false;
  }
  if (ok) {
    if (k == n) snprintf(row->same_ref, sizeof row->same_ref, "yes (all)");
    else snprintf(row->same_ref, sizeof row->same_ref, "yes (%s 0-%d)",
                  c->kind == RED_COL_SUM ? "columns" : "rows", (int)k - 1);
  }
  for (int32_t q = 0; ok && q < nrout; q++) {
    /* the sub-instance's outputs lead with n (or are the full ones): a prefix of cuda's */
    if (rout[q].bytes > out[q].bytes || !(got = malloc(rout[q].bytes ? rout[q].bytes : 1))) {
      red_note(row->err, "ref check: output %s of %zu bytes", rout[q].name, rout[q].bytes);
      snprintf(row->same_ref, sizeof row->same_ref, "not checked");
      break;
    }
    if (!red_dtoh(b, got, eager ? out[q].dev_eager : out[q].dev, rout[q].bytes, row->err)) {
      snprintf(row->same_ref, sizeof row->same_ref, "not checked");
    } else if (memcmp(got, ref_out[q], rout[q].bytes) != 0) {
      /* exp and log are CUDA's device math on cuda and libm on ref: ic.h bounds them
       * by ulps, not bits (the reductions' order is the same on both) */
      int64_t ulps = red_transcendental(c) && out[q].dtype == IC_F32 ? red_max_ulps(got, ref_out[q], rout[q].bytes) : -1;
      if (ulps >= 0 && ulps <= 4)
        snprintf(row->same_ref, sizeof row->same_ref, "yes, within %d ulp (exp: device math vs libm)", (int)ulps);
      else
        red_mismatch(row->same_ref, sizeof row->same_ref, out[q].name,
                     red_first_diff(got, ref_out[q], rout[q].bytes), out[q].dtype);
    }
    free(got);
    got = NULL;
    if (strncmp(row->same_ref, "yes", 3) != 0) break;
  }
  for (int32_t i = 0; i < RED_MAX_IN; i++) free(sub_host[i]);
  for (int32_t q = 0; q < RED_MAX_OUT; q++) free(ref_out[q]);
  ic_program_release(p);
}

/* "[32768, 4096]", powers of two from 2^20 up as 2^k. */
static void red_shape_text(const red_tensor *t, char *buf, size_t size) {
  size_t at = (size_t)snprintf(buf, size, "%s [", ic_dtype_name(t->dtype));
  for (int32_t d = 0; d < t->ndim && at < size; d++) {
    int64_t v = t->shape[d];
    int lg = 0;
    while (lg < 62 && (INT64_C(1) << lg) < v) lg++;
    if (v >= (INT64_C(1) << 20) && (INT64_C(1) << lg) == v)
      at += (size_t)snprintf(buf + at, size - at, "%s2^%d", d ? ", " : "", lg);
    else at += (size_t)snprintf(buf + at, size - at, "%s%" PRId64, d ? ", " : "", v);
  }
  if (at < size) snprintf(buf + at, size - at, "]");
}

/* A note as a table cell (size > 4): '|' and line breaks would end the row, so they
 * become '/' and spaces (runs of spaces one); what does not fit ends in "...". */
static void red_cell_text(const char *note, char *buf, size_t size) {
  size_t n = 0;
  const char *p = note;
  for (; *p && n + 4 < size; p++) {
    char ch = *p == '|' ? '/' : (*p == '\n' || *p == '\r' || *p == '\t') ? ' ' : *p;
    if (ch == ' ' && n > 0 && buf[n - 1] == ' ') continue;
    buf[n++] = ch;
  }
  if (*p) memcpy(buf + n, "...", 4);
  else buf[n] = '\0';
}

static void red_ms_text(double ms, char *buf, size_t size) {
  if (ms < 0) snprintf(buf, size, "-");
  else snprintf(buf, size, "%.3f ms", ms);
}

/* Builds, compiles (fused strict, eager), uploads random inputs, times both, checks and
 * prints one row. Every failure ends up in the row's notes; nothing here exits. Returns
 * true when the row measured both modes and every check passed. */
static bool red_workload(bench *b, const red_case *c, int idx, bool quick, double copy_gbs) {
  int warm = quick ? 1 : 3, reps = quick ? 5 : 20;
  int64_t n = quick ? c->quick_n : c->n;
  red_row row = {.fused_ms = -1, .eager_ms = -1, .fused_launches = -1, .eager_launches = -1};
  snprintf(row.same_eager, sizeof row.same_eager, "-");
  snprintf(row.same_ref, sizeof row.same_ref, "-");
  red_tensor in[RED_MAX_IN], out[RED_MAX_OUT];
  memset(in, 0, sizeof in);
  memset(out, 0, sizeof out);
  int32_t nin = 0, nout = 0;
  ic_program *fused = NULL, *eager = NULL;
  ic_tensor fin[RED_MAX_IN], fout[RED_MAX_OUT], ein[RED_MAX_IN], eout[RED_MAX_OUT];
  ic_graph *g = red_graph(c, n, in, &nin);
  const char *gerr = NULL;
  ic_status s;
  if (!g) {
    red_note(row.err, "ic_graph_create failed");
  } else if ((s = ic_graph_error(g, &gerr)) != IC_OK) {
    red_note(row.err, "graph: %s: %s", ic_status_string(s), gerr ? gerr : "");
  } else {
    const char *backend = b->ref ? "ref" : NULL;
    ic_compile_options fo = {.struct_size = sizeof fo, .mode = IC_MODE_FUSED, .flags = IC_COMPILE_STRICT,
                             .backend = backend};
    ic_compile_options eo = {.struct_size = sizeof eo, .mode = IC_MODE_EAGER, .backend = backend};
    if ((s = ic_compile(b->ctx, g, &fo, &fused)) != IC_OK) {
      red_note_ic(row.fused_err, "compile", s);
      fused = NULL;
    }
    if ((s = ic_compile(b->ctx, g, &eo, &eager)) != IC_OK) {
      red_note_ic(row.eager_err, "compile", s);
      eager = NULL;
    }
  }
  if (fused) row.fused_launches = red_launches(fused, n);
  if (eager) row.eager_launches = red_launches(eager, n);

  /* inputs: random values, uploaded once */
  bool ready = fused || eager;
  for (int32_t i = 0; ready && i < nin; i++) {
    size_t count = red_numel(in[i].ndim, in[i].shape);
    if (!(in[i].host = malloc(in[i].bytes ? in[i].bytes : 1))) {
      red_note(row.err, "out of host memory for input %s", in[i].name);
      ready = false;
      break;
    }
    red_fill(in[i].host, in[i].dtype, count, in[i].lo, in[i].hi, UINT64_C(0x1c0ffee) + 977u * (uint64_t)idx + (uint64_t)i);
    ready = red_alloc(b, &in[i].dev, in[i].bytes, row.err) && red_htod(b, in[i].dev, in[i].host, in[i].bytes, row.err);
  }
  /* a copy from pageable memory may return before its DMA ends, and the bench's stream
   * does not wait for the legacy stream: wait here */
  CUresult cr = CUDA_SUCCESS;
  if (ready && !b->ref && (cr = b->d->cuStreamSynchronize(NULL)) != CUDA_SUCCESS)
    ready = red_note_cu(row.err, "cuStreamSynchronize (uploads)", cr);
  /* outputs: one set per mode */
  ic_program *any = fused ? fused : eager;
  ready = ready && red_bind(any, in, nin, out, 0, false, fin, fout, row.err) &&
          red_outputs(any, fin, out, &nout, row.err);
  for (int32_t o = 0; ready && o < nout; o++)
    ready = (!fused || red_alloc(b, &out[o].dev, out[o].bytes, row.err)) &&
            (!eager || red_alloc(b, &out[o].dev_eager, out[o].bytes, row.err));

  /* times: fused, then eager */
  bool fused_ok = false, eager_ok = false;
  if (ready && fused && red_bind(fused, in, nin, out, nout, false, fin, fout, row.fused_err))
    fused_ok = red_time(b, fused, fin, nin, fout, nout, warm, reps, &row.fused_ms, row.fused_err);
  if (ready && eager && red_bind(eager, in, nin, out, nout, true, ein, eout, row.eager_err))
    eager_ok = red_time(b, eager, ein, nin, eout, nout, warm, reps, &row.eager_ms, row.eager_err);
  if (!fused_ok) row.fused_ms = -1;
  if (!eager_ok) row.eager_ms = -1;
  /* checks: the last fused and eager runs' outputs are in place */
  if (fused_ok && eager_ok) red_compare_eager(b, out, nout, &row);
  if (fused_ok || eager_ok) red_check_ref(b, g, c, n, in, nin, out, nout, !fused_ok, &row);

  /* the row */
  double moved = 0;
  for (int32_t i = 0; i < nin; i++) moved += (double)in[i].bytes;
  for (int32_t o = 0; o < nout; o++) moved += (double)out[o].bytes;
  char shape[96] = "?", fms[32], ems[32], gbs[32] = "-", pct[32] = "-", speed[32] = "-", kern[32], notes[3 * RED_NOTE],
       cell[RED_NOTE];
  if (nin > 0) red_shape_text(&in[0], shape, sizeof shape);
  red_ms_text(row.fused_ms, fms, sizeof fms);
  red_ms_text(row.eager_ms, ems, sizeof ems);
  if (row.fused_ms > 0 && nout > 0) {
    double gb = moved / row.fused_ms / 1e6;
    snprintf(gbs, sizeof gbs, gb < 10 ? "%.2f GB/s" : "%.0f GB/s", gb);
    snprintf(pct, sizeof pct, "%.1f%%", 100.0 * gb / copy_gbs);
  }
  if (row.fused_ms > 0 && row.eager_ms > 0) snprintf(speed, sizeof speed, "%.2fx", row.eager_ms / row.fused_ms);
  snprintf(kern, sizeof kern, "%s / %s", "-", "-");
  if (row.fused_launches >= 0 || row.eager_launches >= 0) {
    char kf[12] = "-", ke[12] = "-";
    if (row.fused_launches >= 0) snprintf(kf, sizeof kf, "%d", (int)row.fused_launches);
    if (row.eager_launches >= 0) snprintf(ke, sizeof ke, "%d", (int)row.eager_launches);
    snprintf(kern, sizeof kern, "%s / %s", kf, ke);
  }
  notes[0] = '\0';
  const char *labels[3] = {"fused: ", "eager: ", ""};
  const char *errs[3] = {row.fused_err, row.eager_err, row.err};
  for (int k = 0; k < 3; k++) {
    if (!errs[k][0]) continue;
    red_cell_text(errs[k], cell, 200);
    size_t at = strlen(notes);
    snprintf(notes + at, sizeof notes - at, "%s%s%s", at ? "; " : "", labels[k], cell);
  }
  char moved_text[32] = "-";
  if (nout > 0) snprintf(moved_text, sizeof moved_text, moved < 10 << 20 ? "%.2f MiB" : "%.0f MiB", moved / (1 << 20));
  printf("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", c->name, shape, moved_text, fms, gbs, pct,
         ems, speed, kern, row.same_eager, row.same_ref, notes);
  fflush(stdout);

  for (int32_t i = 0; i < nin; i++) {
    red_free(b, in[i].dev);
    free(in[i].host);
  }
  for (int32_t o = 0; o < nout; o++) {
    red_free(b, out[o].dev);
    red_free(b, out[o].dev_eager);
  }
  ic_program_release(fused);
  ic_program_release(eager);
  ic_graph_destroy(g);
  return fused_ok && eager_ok && !row.err[0] && strcmp(row.same_eager, "yes") == 0 &&
         (strncmp(row.same_ref, "yes", 3) == 0 || c->kind == RED_ASM_FP8 || c->kind == RED_ASM_ROWQUANT); /* no PTX on ref */
}

/* The reductions table; returns the number of rows that failed or mismatched. */
static int bench_table(bench *b, bool quick, const char *title, const red_case *cases, size_t ncases);
/* --only: the workloads whose name contains it, or one of its '|'-separated parts (NULL: all) */
static const char *bench_only;

static bool bench_only_match(const char *name) {
  if (!bench_only) return true;
  for (const char *part = bench_only;;) {
    const char *bar = strchr(part, '|');
    size_t len = bar ? (size_t)(bar - part) : strlen(part);
    for (const char *p = name; len > 0 && *p; p++)
      if (strncmp(p, part, len) == 0) return true;
    if (!bar) return false;
    part = bar + 1;
  }
}

static int bench_reductions(bench *b, bool quick) {
  return bench_table(b, quick, "reductions", red_cases, sizeof red_cases / sizeof red_cases[0]);
}

static int bench_asm(bench *b, bool quick) {
  return bench_table(b, quick, "inline PTX", asm_cases, sizeof asm_cases / sizeof asm_cases[0]);
}

static int bench_patterns(bench *b, bool quick) {
  return bench_table(b, quick, "pointwise access patterns", pattern_cases, sizeof pattern_cases / sizeof pattern_cases[0]);
}

static int bench_table(bench *b, bool quick, const char *title, const red_case *cases, size_t ncases) {
  /* the floor: cuMemcpyDtoD, 512 MiB read + 512 MiB written (--quick: 32 + 32; --ref: memcpy) */
  size_t cbytes = quick ? (size_t)32 << 20 : (size_t)512 << 20;
  int reps = quick ? 5 : 20, warm = quick ? 1 : 3;
  double copy_ms;
  if (b->ref) {
    void *src = malloc(cbytes), *dst = malloc(cbytes);
    if (!src || !dst) {
      fprintf(stderr, "ic-bench: out of host memory\n");
      exit(1);
    }
    memset(src, 0x3c, cbytes);
    double t[64] = {0};
    for (int i = 0; i < warm + reps; i++) {
      double t0 = host_now_ms();
      memcpy(dst, src, cbytes);
      if (i >= warm) t[i - warm] = host_now_ms() - t0;
    }
    copy_ms = median(t, reps);
    free(src);
    free(dst);
  } else {
    const cu_api *d = b->d;
    CUdeviceptr src, dst;
    BENCH_CU(d->cuMemAlloc(&src, cbytes));
    BENCH_CU(d->cuMemAlloc(&dst, cbytes));
    BENCH_CU(d->cuMemsetD8(src, 0x3c, cbytes));
    copy_run cr = {dst, src, cbytes};
    copy_ms = bench_gpu_ms(b, copy_launch, &cr, reps);
    d->cuMemFree(src);
    d->cuMemFree(dst);
  }
  double copy_gbs = 2.0 * (double)cbytes / copy_ms / 1e6;

  printf("\n## %s%s: fused and eager against %s (%s)\n\n", title, quick ? " (--quick shapes)" : "",
         b->ref ? "memcpy" : "cuMemcpyDtoD", b->ref ? "ref backend, on the host" : ic_context_arch(b->ctx));
  printf("Every graph has a size symbol n (rows; the column sum's columns, the full sum's elements),\n"
         "bound at run time; moved = inputs read once + outputs written once; times are medians of\n"
         "%d runs after %d warm-up%s (%s); kernels = launches per run, fused / eager; fused\n"
         "compiles are strict (no eager fallback). Bitwise: fused against eager over every output,\n"
         "and against the ref backend on the first %d rows (column sum: columns; the full sum, bias gradient, tall column sum, vector softmax, full std and var over dim 0: all).\n"
         "The vector softmax, the full std and var over dim 0 read x 3, 2 and 2 times a run (a kernel a pass); moved counts it once.\n\n",
         reps, warm, warm == 1 ? "" : "s", b->ref ? "host clock" : "CUDA events", RED_CHECK_N);
  printf("| workload | x | moved | fused | fused GB/s | of copy | eager | eager / fused | kernels | == eager "
         "| == ref | notes |\n");
  printf("|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  printf("| %s (floor) | %zu MiB | %zu MiB | %.3f ms | %.0f GB/s | 100%% | | | | | | |\n",
         b->ref ? "memcpy" : "cuMemcpyDtoD", cbytes >> 20, (2 * cbytes) >> 20, copy_ms, copy_gbs);
  fflush(stdout);
  int failed = 0;
  for (size_t i = 0; i < ncases; i++)
    if (bench_only_match(cases[i].name) && !red_workload(b, &cases[i], (int)i, quick, copy_gbs)) failed++;
  if (failed) printf("\n%d of %zu workloads failed or mismatched (see notes)\n", failed, ncases);
  return failed;
}

/* ---------------------------------------------------------------- matmul */

/* ic-bench matmul: C = A @ B (row-major, torch.matmul's shapes) for the sizes of issue 41,
 * each against its floor: the device's copy bandwidth for the memory-bound shape, the
 * bench's own cuLaunchKernel of the same CUBIN (the launch floor: ic_program_run's cost
 * on the device), and cuBLAS (cublasGemmEx / cublasGemmStridedBatchedEx through dlopen of
 * libcublas, when present: no link-time dependency). Inputs rotate through as many sets
 * as make 512 MiB (at least 2), so no run finds its operands in L2. */
typedef struct mmb_case {
  const char *name;
  ic_dtype dt;
  int64_t batch, m, n, k; /* batch 0: 2-D operands */
  uint32_t flags;         /* IC_COMPILE_* */
  bool memory_bound;      /* report TB/s and the share of the copy bandwidth */
} mmb_case;

static const mmb_case mmb_cases[] = {
    {"bf16 4096 x 4096 x 4096", IC_BF16, 0, 4096, 4096, 4096, 0, false},
    {"bf16 8192 x 8192 x 8192", IC_BF16, 0, 8192, 8192, 8192, 0, false},
    {"bf16 16384 x 16384 x 4096 (K 4096)", IC_BF16, 0, 16384, 16384, 4096, 0, false},
    {"bf16 16 x 8192 x 8192 (M 16: memory bound)", IC_BF16, 0, 16, 8192, 8192, 0, true},
    {"bf16 batched 64 x [512 x 64] @ [64 x 512]", IC_BF16, 64, 512, 512, 64, 0, true},
    {"i8 4096 x 4096 x 4096 (i32 result)", IC_I8, 0, 4096, 4096, 4096, 0, false},
    {"f32 4096 x 4096 x 4096 (exact f32 FMA)", IC_F32, 0, 4096, 4096, 4096, 0, false},
    {"f32 4096 x 4096 x 4096, IC_COMPILE_ALLOW_TF32", IC_F32, 0, 4096, 4096, 4096, IC_COMPILE_ALLOW_TF32, false},
};

/* The few cuBLAS entries the table calls; enum values of cublas_api.h and
 * library_types.h (a stable ABI), so no cuBLAS header is needed. */
typedef int (*cublas_create_fn)(void **handle);
typedef int (*cublas_destroy_fn)(void *handle);
typedef int (*cublas_set_stream_fn)(void *handle, CUstream stream);
typedef int (*cublas_gemm_ex_fn)(void *handle, int transa, int transb, int m, int n, int k, const void *alpha,
                                 const void *a, int atype, int lda, const void *b, int btype, int ldb, const void *beta,
                                 void *c, int ctype, int ldc, int compute, int algo);
typedef int (*cublas_gemm_batched_fn)(void *handle, int transa, int transb, int m, int n, int k, const void *alpha,
                                      const void *a, int atype, int lda, long long stride_a, const void *b, int btype,
                                      int ldb, long long stride_b, const void *beta, void *c, int ctype, int ldc,
                                      long long stride_c, int batch, int compute, int algo);
enum {
  CUBLAS_OP_N_ = 0,
  CUBLAS_GEMM_DEFAULT_ = -1,
  CUDA_R_32F_ = 0, CUDA_R_64F_ = 1, CUDA_R_16F_ = 2, CUDA_R_8I_ = 3, CUDA_R_32I_ = 10, CUDA_R_16BF_ = 14,
  CUBLAS_COMPUTE_32F_ = 68, CUBLAS_COMPUTE_32F_PEDANTIC_ = 69, CUBLAS_COMPUTE_32I_ = 72,
  CUBLAS_COMPUTE_32F_FAST_TF32_ = 77
};

typedef struct cublas_api {
  void *handle;
  cublas_destroy_fn destroy;
  cublas_gemm_ex_fn gemm;
  cublas_gemm_batched_fn gemm_batched;
  char version[64]; /* the library opened */
} cublas_api;

/* Opens libcublas (newest soname first) and creates a handle on the bench's stream; false
 * (the column is left out) when there is none. */
static bool cublas_open(const bench *b, cublas_api *cb) {
  static const char *const names[] = {"libcublas.so.13", "libcublas.so.12", "libcublas.so"};
  memset(cb, 0, sizeof *cb);
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    void *lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (!lib) continue;
    cublas_create_fn create;
    cublas_set_stream_fn set_stream;
    *(void **)&create = dlsym(lib, "cublasCreate_v2");
    *(void **)&set_stream = dlsym(lib, "cublasSetStream_v2");
    *(void **)&cb->destroy = dlsym(lib, "cublasDestroy_v2");
    *(void **)&cb->gemm = dlsym(lib, "cublasGemmEx");
    *(void **)&cb->gemm_batched = dlsym(lib, "cublasGemmStridedBatchedEx");
    if (create && set_stream && cb->destroy && cb->gemm && cb->gemm_batched && create(&cb->handle) == 0 &&
        set_stream(cb->handle, b->stream) == 0) {
      snprintf(cb->version, sizeof cb->version, "%s", names[i]);
      return true; /* never dlclose'd */
    }
    memset(cb, 0, sizeof *cb);
  }
  return false;
}

typedef struct mmb_run {
  ic_program *prog;
  const mmb_case *c;
  int32_t nsets, next;
  CUdeviceptr *a, *b, c_out; /* nsets input sets, one output */
  int32_t ndim;
  int64_t as[3], bs[3], cs[3];
  cublas_api *cb;
  bare_run bare; /* the program's one kernel, launched by the bench; .fn NULL: not possible */
  uint32_t bare_shared; /* its dynamic shared memory */
  CUdeviceptr bare_in[2];
} mmb_run;

static void mmb_ic_launch(bench *b, void *arg) {
  mmb_run *r = arg;
  const int32_t s = r->next++ % r->nsets;
  ic_tensor in[2] = {{(void *)(uintptr_t)r->a[s], r->c->dt, r->ndim, r->as, NULL},
                     {(void *)(uintptr_t)r->b[s], r->c->dt, r->ndim, r->bs, NULL}};
  ic_tensor out[1] = {{(void *)(uintptr_t)r->c_out, r->c->dt == IC_I8 ? IC_I32 : r->c->dt, r->ndim, r->cs, NULL}};
  BENCH_CHECK(ic_program_run(r->prog, in, 2, out, 1, b->stream));
}

/* Row-major C = A @ B as column-major C^T = B^T A^T: B is the first operand. */
static void mmb_cublas_launch(bench *b, void *arg) {
  (void)b;
  mmb_run *r = arg;
  const mmb_case *c = r->c;
  const int32_t s = r->next++ % r->nsets;
  int type = CUDA_R_16BF_, ctype = CUDA_R_16BF_, compute = CUBLAS_COMPUTE_32F_;
  const float one = 1.0f, zero = 0.0f;
  const int32_t ione = 1, izero = 0;
  const void *alpha = &one, *beta = &zero;
  if (c->dt == IC_F32) {
    type = ctype = CUDA_R_32F_;
    compute = c->flags & IC_COMPILE_ALLOW_TF32 ? CUBLAS_COMPUTE_32F_FAST_TF32_ : CUBLAS_COMPUTE_32F_PEDANTIC_;
  } else if (c->dt == IC_I8) {
    type = CUDA_R_8I_;
    ctype = CUDA_R_32I_;
    compute = CUBLAS_COMPUTE_32I_;
    alpha = &ione;
    beta = &izero;
  }
  int st;
  if (c->batch)
    st = r->cb->gemm_batched(r->cb->handle, CUBLAS_OP_N_, CUBLAS_OP_N_, (int)c->n, (int)c->m, (int)c->k, alpha,
                             (const void *)(uintptr_t)r->b[s], type, (int)c->n, c->k * c->n,
                             (const void *)(uintptr_t)r->a[s], type, (int)c->k, c->m * c->k, beta,
                             (void *)(uintptr_t)r->c_out, ctype, (int)c->n, c->m * c->n, (int)c->batch, compute,
                             CUBLAS_GEMM_DEFAULT_);
  else
    st = r->cb->gemm(r->cb->handle, CUBLAS_OP_N_, CUBLAS_OP_N_, (int)c->n, (int)c->m, (int)c->k, alpha,
                     (const void *)(uintptr_t)r->b[s], type, (int)c->n, (const void *)(uintptr_t)r->a[s], type,
                     (int)c->k, beta, (void *)(uintptr_t)r->c_out, ctype, (int)c->n, compute, CUBLAS_GEMM_DEFAULT_);
  if (st != 0) {
    fprintf(stderr, "ic-bench: cublasGemmEx: status %d\n", st);
    exit(1);
  }
}

/* The bare launch rotates its input sets as the others do: the pointer parameters of
 * inputs 0 and 1 are rewritten each call. */
static void mmb_bare_launch(bench *b, void *arg) {
  mmb_run *r = arg;
  const int32_t s = r->next++ % r->nsets;
  for (int32_t i = 0; i < BARE_MAX_ARGS; i++) {
    if (r->bare.slots[i] == (uint64_t)r->bare_in[0]) r->bare.slots[i] = (uint64_t)r->a[s];
    else if (r->bare.slots[i] == (uint64_t)r->bare_in[1]) r->bare.slots[i] = (uint64_t)r->b[s];
  }
  r->bare_in[0] = r->a[s];
  r->bare_in[1] = r->b[s];
  BENCH_CU(b->d->cuLaunchKernel(r->bare.fn, r->bare.blocks, 1, 1, r->bare.block, 1, 1, r->bare_shared, b->stream,
                                r->bare.args, NULL));
}

/* The program's one kernel set up for the bench's own launch (step walk: CUBIN, block,
 * grid, parameters, dynamic shared memory; a cluster size is fixed in the kernel), or
 * false with the reason in why: a program of several kernels, temporaries or size
 * symbols has no single bare floor. */
static bool mmb_bare_setup(const bench *b, mmb_run *r, CUmodule *mod, char *why, size_t why_size) {
  const ic_program *p = r->prog;
  const int64_t symbols[1] = {0};
  ic_step st = {0};
  int32_t launches = 0;
  if (ic_program_symbol_count(p) != 0) return snprintf(why, why_size, "size symbols"), false;
  for (int32_t i = 0; i < ic_program_step_count(p); i++) {
    ic_step s;
    BENCH_CHECK(ic_program_step(p, i, &s));
    if (s.kind == IC_STEP_ALLOC) return snprintf(why, why_size, "temporaries"), false;
    if (s.kind == IC_STEP_LAUNCH && launches++ == 0) st = s;
  }
  if (launches != 1) return snprintf(why, why_size, "%d kernels", (int)launches), false;
  if (!st.binary || st.nargs > BARE_MAX_ARGS) return snprintf(why, why_size, "no CUBIN"), false;
  int64_t blocks = 0;
  BENCH_CHECK(ic_program_eval(p, st.grid_expr, symbols, &blocks));
  r->bare = (bare_run){.blocks = (uint32_t)blocks, .block = (uint32_t)st.block};
  r->bare_shared = (uint32_t)st.shared_bytes;
  const int64_t *shapes[3] = {r->as, r->bs, r->cs};
  for (int32_t a = 0; a < st.nargs; a++) {
    const ic_step_arg *arg = &st.args[a];
    int64_t v = 0;
    if (arg->kind == IC_ARG_BUFFER) {
      ic_buffer_info bi;
      BENCH_CHECK(ic_program_buffer(p, arg->index, &bi));
      v = (int64_t)(bi.kind == IC_BUFFER_OUTPUT ? r->c_out : bi.index == 0 ? r->a[0] : r->b[0]);
    } else if (arg->kind == IC_ARG_STRIDE) { /* contiguous operands */
      const int32_t input = arg->index / IC_MAX_DIMS, dim = arg->index % IC_MAX_DIMS;
      v = 1;
      for (int32_t d = dim + 1; d < r->ndim; d++) v *= shapes[input][d];
    } else if (arg->kind == IC_ARG_SIZE) {
      BENCH_CHECK(ic_program_eval(p, arg->index, symbols, &v));
    }
    r->bare.slots[a] = (uint64_t)v;
    r->bare.args[a] = &r->bare.slots[a];
  }
  r->bare_in[0] = r->a[0];
  r->bare_in[1] = r->b[0];
  BENCH_CU(b->d->cuModuleLoadData(mod, st.binary));
  BENCH_CU(b->d->cuModuleGetFunction(&r->bare.fn, *mod, st.kernel_name));
  if (st.shared_bytes > 48 * 1024) /* past 48 KB a kernel opts in (ic.h, ic_step) */
    BENCH_CU(b->d->cuFuncSetAttribute(r->bare.fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, st.shared_bytes));
  return true;
}

static int bench_matmul(bench *b) {
  const cu_api *d = b->d;
  /* the floors: cuMemcpyDtoD of 512 MiB, and cuBLAS when it loads */
  const size_t cbytes = (size_t)512 << 20;
  CUdeviceptr src, dst;
  BENCH_CU(d->cuMemAlloc(&src, cbytes));
  BENCH_CU(d->cuMemAlloc(&dst, cbytes));
  BENCH_CU(d->cuMemsetD8(src, 0x3c, cbytes));
  copy_run cr = {dst, src, cbytes};
  const double copy_ms = bench_gpu_ms(b, copy_launch, &cr, 20);
  d->cuMemFree(src);
  d->cuMemFree(dst);
  const double copy_tbs = 2.0 * (double)cbytes / copy_ms / 1e9;
  cublas_api cb;
  const bool have_cublas = cublas_open(b, &cb);

  printf("\n## matmul: C = A @ B, row-major (%s)\n\n", ic_context_arch(b->ctx));
  printf("Fused strict compiles of constant shapes; times are medians of 20 runs after 3 warm-ups (CUDA events), each\n"
         "run on the next of as many input sets as make 512 MiB (at least 2), so operands come from HBM, not L2;\n"
         "TFLOP/s = 2 batch m n k / time; TB/s = (A + B + C bytes) / time, against cuMemcpyDtoD %.2f TB/s (read +\n"
         "written); bare launch = the same CUBIN through the bench's own cuLaunchKernel; cuBLAS: %s.\n\n",
         copy_tbs, have_cublas ? cb.version : "not found (no libcublas.so*): column left out");
  printf("| workload | ic | TFLOP/s | TB/s | of copy | bare launch | ic / bare | cuBLAS | cuBLAS TFLOP/s | ic / cuBLAS "
         "| notes |\n|---|---|---|---|---|---|---|---|---|---|---|\n");
  fflush(stdout);
  int failed = 0;
  for (size_t ci = 0; ci < sizeof mmb_cases / sizeof mmb_cases[0]; ci++) {
    const mmb_case *c = &mmb_cases[ci];
    if (!bench_only_match(c->name)) continue;
    mmb_run r = {.c = c, .cb = &cb, .ndim = c->batch ? 3 : 2};
    const int64_t batch = c->batch ? c->batch : 1;
    int32_t at = 0;
    if (c->batch) r.as[at] = r.bs[at] = r.cs[at] = c->batch, at++;
    r.as[at] = c->m, r.as[at + 1] = c->k;
    r.bs[at] = c->k, r.bs[at + 1] = c->n;
    r.cs[at] = c->m, r.cs[at + 1] = c->n;
    const size_t es = ic_dtype_size(c->dt), ces = c->dt == IC_I8 ? 4 : es;
    const size_t abytes = (size_t)(batch * c->m * c->k) * es, bbytes = (size_t)(batch * c->k * c->n) * es,
                 cbytes_out = (size_t)(batch * c->m * c->n) * ces;
    r.nsets = (int32_t)(((size_t)512 << 20) / (abytes + bbytes) + 1);
    if (r.nsets < 2) r.nsets = 2;
    char note[RED_NOTE] = "";
    ic_graph *g;
    BENCH_CHECK(ic_graph_create(&g));
    ic_value av = ic_graph_input(g, "a", c->dt, r.ndim, r.as, IC_LAYOUT_CONTIGUOUS);
    ic_value bv = ic_graph_input(g, "b", c->dt, r.ndim, r.bs, IC_LAYOUT_CONTIGUOUS);
    ic_graph_output(g, "c", ic_graph_matmul(g, av, bv));
    ic_compile_options o = {.struct_size = sizeof o, .flags = IC_COMPILE_STRICT | c->flags};
    ic_status s = ic_compile(b->ctx, g, &o, &r.prog);
    ic_graph_destroy(g);
    if (s != IC_OK) {
      red_note_ic(note, "compile", s);
      r.prog = NULL;
    }
    r.a = calloc((size_t)r.nsets, sizeof *r.a);
    r.b = calloc((size_t)r.nsets, sizeof *r.b);
    void *ha = malloc(abytes), *hb = malloc(bbytes);
    bool ready = r.prog && r.a && r.b && ha && hb;
    if (ready) { /* one set of values on the host, uploaded to every set's addresses */
      red_fill(ha, c->dt, abytes / es, c->dt == IC_I8 ? -128 : -1, c->dt == IC_I8 ? 128 : 1, 0x5eed + ci);
      red_fill(hb, c->dt, bbytes / es, c->dt == IC_I8 ? -128 : -1, c->dt == IC_I8 ? 128 : 1, 0xbeef + ci);
    }
    for (int32_t i = 0; ready && i < r.nsets; i++)
      ready = red_alloc(b, &r.a[i], abytes, note) && red_alloc(b, &r.b[i], bbytes, note) &&
              red_htod(b, r.a[i], ha, abytes, note) && red_htod(b, r.b[i], hb, bbytes, note);
    ready = ready && red_alloc(b, &r.c_out, cbytes_out, note);
    CUresult cr2 = ready ? d->cuStreamSynchronize(NULL) : CUDA_SUCCESS;
    if (cr2 != CUDA_SUCCESS) ready = red_note_cu(note, "cuStreamSynchronize (uploads)", cr2);
    double ic_ms = -1, bare_ms = -1, cublas_ms = -1;
    if (ready) ic_ms = bench_gpu_ms(b, mmb_ic_launch, &r, 20);
    CUmodule mod = NULL;
    char why[64] = "";
    if (ready && mmb_bare_setup(b, &r, &mod, why, sizeof why)) bare_ms = bench_gpu_ms(b, mmb_bare_launch, &r, 20);
    else if (ready) red_note(note, "no bare launch: %s", why);
    if (ready && have_cublas) cublas_ms = bench_gpu_ms(b, mmb_cublas_launch, &r, 20);
    const double flop = 2.0 * (double)batch * (double)c->m * (double)c->n * (double)c->k;
    const double moved = (double)(abytes + bbytes + cbytes_out);
    char t_ic[32] = "-", tf_ic[32] = "-", tbs[32] = "-", pct[32] = "-", t_bare[32] = "-", vs_bare[32] = "-",
         t_cb[32] = "-", tf_cb[32] = "-", vs_cb[32] = "-", cell[RED_NOTE];
    if (ic_ms > 0) {
      red_ms_text(ic_ms, t_ic, sizeof t_ic);
      snprintf(tf_ic, sizeof tf_ic, "%.1f", flop / ic_ms / 1e9);
      if (c->memory_bound) {
        snprintf(tbs, sizeof tbs, "%.2f", moved / ic_ms / 1e9);
        snprintf(pct, sizeof pct, "%.1f%%", 100.0 * moved / ic_ms / 1e9 / copy_tbs);
      }
    }
    if (bare_ms > 0) {
      red_ms_text(bare_ms, t_bare, sizeof t_bare);
      if (ic_ms > 0) snprintf(vs_bare, sizeof vs_bare, "%.2fx", ic_ms / bare_ms);
    }
    if (cublas_ms > 0) {
      red_ms_text(cublas_ms, t_cb, sizeof t_cb);
      snprintf(tf_cb, sizeof tf_cb, "%.1f", flop / cublas_ms / 1e9);
      if (ic_ms > 0) snprintf(vs_cb, sizeof vs_cb, "%.2fx", ic_ms / cublas_ms);
    }
    red_cell_text(note, cell, sizeof cell);
    printf("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", c->name, t_ic, tf_ic, tbs, pct, t_bare,
           vs_bare, t_cb, tf_cb, vs_cb, cell);
    fflush(stdout);
    failed += ic_ms <= 0;
    if (mod) d->cuModuleUnload(mod);
    for (int32_t i = 0; i < r.nsets; i++) {
      if (r.a) red_free(b, r.a[i]);
      if (r.b) red_free(b, r.b[i]);
    }
    red_free(b, r.c_out);
    free(r.a);
    free(r.b);
    free(ha);
    free(hb);
    ic_program_release(r.prog);
  }
  if (have_cublas) cb.destroy(cb.handle);
  return failed;
}

/* ---------------------------------------------------------------- main */

int main(int argc, char **argv) {
  const char *what = NULL;
  bool quick = false, ref = false;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--quick") == 0) quick = true;
    else if (strcmp(argv[i], "--ref") == 0) ref = true;
    else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc) bench_only = argv[++i];
    else if (!what && argv[i][0] != '-') what = argv[i];
    else what = "?";
  }
  if ((argc == 4 || argc == 5) && strcmp(argv[1], "first-compile") == 0)
    return first_compile_child(argv[2], argv[3], argc == 5 && strcmp(argv[4], "warm") == 0);
  if (!what) what = "all";
  bool all = strcmp(what, "all") == 0;
  bool pointwise = all || strcmp(what, "pointwise") == 0, compile = all || strcmp(what, "compile") == 0,
       reductions = all || strcmp(what, "reductions") == 0, asm_table = all || strcmp(what, "asm") == 0,
       patterns = all || strcmp(what, "patterns") == 0, matmul = all || strcmp(what, "matmul") == 0;
  if ((!pointwise && !compile && !reductions && !asm_table && !patterns && !matmul) ||
      (ref && strcmp(what, "reductions") != 0 && strcmp(what, "patterns") != 0)) {
    fprintf(stderr, "usage: ic-bench [pointwise|compile|reductions|patterns|asm|matmul|all] [--quick] [--only TEXT]\n"
                    "       ic-bench reductions|patterns --ref [--quick]\n"
                    "  --quick  the reductions, patterns and asm tables on small shapes (a smoke test)\n"
                    "  --only TEXT  only the workloads whose name contains TEXT (or a part of TEXT split at '|')\n"
                    "  --ref    the table on the ref backend, on the host: no GPU needed;\n"
                    "           checks the workloads, times the interpreter (use with --quick)\n");
    return 2;
  }
  if (ref) { /* no driver, no GPU: the ref backend and host memory */
    bench b = {.ref = true};
    BENCH_CHECK(ic_context_create(NULL, &b.ctx));
    printf("# ic-bench %s --ref (the ref backend, on the host), ic %s\n", what, IC_VERSION_STRING);
    int failed = reductions ? bench_reductions(&b, quick) : bench_patterns(&b, quick);
    ic_context_destroy(b.ctx);
    return failed ? 1 : 0;
  }
  /* The bench's own driver, opened first so its NVRTC follows the driver's CUDA major as
   * ic's does; cuInit waits for the GPU tables. */
  char why[512] = "";
  bool have_cu = cu_open(why, sizeof why);
  if (compile) bench_compile();
  if (!pointwise && !reductions && !asm_table && !patterns && !matmul) return 0;

  bench b = {.d = &g_cu};
  BENCH_CHECK(ic_context_create(NULL, &b.ctx)); /* device 0, as the driver calls below */
  if (!ic_context_has_device(b.ctx)) {
    CUresult r = have_cu ? g_cu.cuInit(0) : CUDA_SUCCESS;
    if (have_cu && r != CUDA_SUCCESS) snprintf(why, sizeof why, "no CUDA device: cuInit failed (%s)", cu_name(r));
    else if (have_cu) snprintf(why, sizeof why, "ic's context has no device (target '%s')", ic_context_arch(b.ctx));
    if (all) fprintf(stderr, "ic-bench all: the pointwise and reductions tables need a GPU: %s\n", why);
    else fprintf(stderr, "ic-bench %s needs a GPU: %s\n", what, why);
    ic_context_destroy(b.ctx);
    return 77;
  }
  if (!have_cu) {
    fprintf(stderr, "ic-bench: %s\n", why);
    return 1;
  }
  /* The primary context ic retained, current on this thread for the bench's own calls. */
  const cu_api *d = b.d;
  CUdevice dev;
  CUcontext pctx;
  BENCH_CU(d->cuInit(0));
  BENCH_CU(d->cuDeviceGet(&dev, 0));
  BENCH_CU(d->cuDevicePrimaryCtxRetain(&pctx, dev));
  BENCH_CU(d->cuCtxSetCurrent(pctx));
  BENCH_CU(d->cuStreamCreate(&b.stream, CU_STREAM_NON_BLOCKING));
  BENCH_CU(d->cuEventCreate(&b.start, CU_EVENT_DEFAULT));
  BENCH_CU(d->cuEventCreate(&b.stop, CU_EVENT_DEFAULT));
  char name[128] = "?";
  if (d->cuDeviceGetName(name, (int)sizeof name, dev) != CUDA_SUCCESS) snprintf(name, sizeof name, "?");
  const nvrtc_api *nv = nvrtc_get();
  printf("# ic-bench on %s (%s), ic %s, NVRTC %d.%d\n", name, ic_context_arch(b.ctx), IC_VERSION_STRING, nv->major,
         nv->minor);
  fflush(stdout);
  if (pointwise) bench_pointwise(&b);
  int failed = reductions ? bench_reductions(&b, quick) : 0;
  if (patterns) failed += bench_patterns(&b, quick);
  if (asm_table) failed += bench_asm(&b, quick);
  if (matmul) failed += bench_matmul(&b);
  d->cuEventDestroy(b.start);
  d->cuEventDestroy(b.stop);
  d->cuStreamDestroy(b.stream);
  ic_context_destroy(b.ctx);
  d->cuCtxSetCurrent(NULL);
  d->cuDevicePrimaryCtxRelease(dev);
  return failed ? 1 : 0;
}
