/* ic-bench: performance tables measured in one run against the device's own floors.
 *
 *   ic-bench pointwise   y = gelu_tanh(x * w + b), x f32 [8192, 8192], w and b [8192]:
 *                        ic fused and eager against cuMemcpyDtoD of the same bytes, cold
 *                        compile against a raw NVRTC compile of the same source, and host
 *                        cost of ic_program_run against a bare cuLaunchKernel.
 *   ic-bench compile     compile cost: raw NVRTC per kernel of the pointwise graph, ic cold
 *                        (empty kernel cache), ic warm from the disk cache in a new process,
 *                        a program-cache hit for a 10-node graph rebuilt from scratch, and
 *                        separate vs batched NVRTC calls for the eager kernels. Runs
 *                        without a GPU too (compile-only for IC_ARCH or sm_90a).
 *   ic-bench all         every table.
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
  X(cuModuleLoadData, 2000)          \
  X(cuModuleGetFunction, 2000)       \
  X(cuModuleUnload, 2000)            \
  X(cuLaunchKernel, 4000)

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
  const char *const opts[] = {arch_opt,         "-fmad=false",      "--std=c++17",
                              "-prec-div=true", "-prec-sqrt=true", "-ftz=false"};
  nvrtcProgram prog = NULL;
  BENCH_NVRTC(nv, nv->nvrtcCreateProgram(&prog, source, name, 0, NULL, NULL), "nvrtcCreateProgram");
  nvrtcResult r = nv->nvrtcCompileProgram(prog, (int)(sizeof opts / sizeof opts[0]), opts);
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
static ic_context *compile_ctx(const char *cache_dir) {
  ic_context_options o = {.struct_size = sizeof o, .cache_dir = cache_dir};
  ic_context *ctx = NULL;
  ic_status s = ic_context_create(&o, &ctx);
  if (s == IC_OK && ic_context_arch(ctx)[0]) return ctx;
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

/* The separator ic writes between the prelude and the kernel in a generated source
 * (several kernels can then share one prelude in one NVRTC call, as ic batches them). */
#define BENCH_KERNEL_MARK "\n/* ---- kernel ---- */\n"

static void remove_dir(const char *dir) {
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) fprintf(stderr, "ic-bench: could not remove %s\n", dir);
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
  /* the eager kernels in one NVRTC call: one prelude, several entry points */
  size_t batch_len = 0;
  for (int32_t k = 0; k < ne; k++) batch_len += strlen(ic_program_kernel_source(eager, k));
  char *batch = malloc(batch_len + 1);
  if (!batch) {
    fprintf(stderr, "ic-bench: out of memory\n");
    exit(1);
  }
  batch[0] = '\0';
  size_t at = 0;
  for (int32_t k = 0; k < ne; k++) {
    const char *src = ic_program_kernel_source(eager, k);
    const char *kernel = strstr(src, BENCH_KERNEL_MARK);
    if (k > 0 && !kernel) {
      fprintf(stderr, "ic-bench: eager kernel %d has no prelude separator: cannot batch\n", (int)k);
      exit(1);
    }
    const char *part = k == 0 ? src : kernel;
    size_t len = strlen(part);
    memcpy(batch + at, part, len + 1);
    at += len;
  }
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
  printf("| ic cold compile, empty cache | %.2f ms | %.2fx raw NVRTC |\n", cold_ms, cold_ms / raw_fused);
  printf("| ic warm compile, new process, from disk | %.3f ms | %.3f ms per kernel (%s) |\n", warm_ms, warm_ms,
         warm_ms > 0 ? "disk hit" : "NOT a disk hit");
  printf("| rebuild 10-node graph + ic_compile (program-cache hit) | %.2f us | %llu hits |\n", rebuild_us,
         (unsigned long long)st.program_hits);
  printf("| raw NVRTC, %d eager kernels, one call each | %.2f ms | 1.00x |\n", (int)ne, raw_eager_sum);
  printf("| raw NVRTC, the same %d kernels in one call | %.2f ms | %.2fx |\n", (int)ne, raw_batch,
         raw_batch / raw_eager_sum);
  ic_program_release(fused);
  ic_program_release(eager);
  ic_graph_destroy(g);
  ic_context_destroy(ctx);
  remove_dir(dir);
}

/* ---------------------------------------------------------------- main */

int main(int argc, char **argv) {
  const char *what = argc > 1 ? argv[1] : "all";
  bool all = strcmp(what, "all") == 0;
  if (strcmp(what, "pointwise") != 0 && strcmp(what, "compile") != 0 && !all) {
    fprintf(stderr, "usage: ic-bench [pointwise|compile|all]\n");
    return 2;
  }
  /* The bench's own driver, opened first so its NVRTC follows the driver's CUDA major as
   * ic's does; cuInit waits for the pointwise table. */
  char why[512] = "";
  bool have_cu = cu_open(why, sizeof why);
  if (strcmp(what, "compile") == 0 || all) bench_compile();
  if (strcmp(what, "compile") == 0) return 0;

  bench b = {.d = &g_cu};
  BENCH_CHECK(ic_context_create(NULL, &b.ctx)); /* device 0, as the driver calls below */
  if (!ic_context_has_device(b.ctx)) {
    CUresult r = have_cu ? g_cu.cuInit(0) : CUDA_SUCCESS;
    if (have_cu && r != CUDA_SUCCESS) snprintf(why, sizeof why, "no CUDA device: cuInit failed (%s)", cu_name(r));
    else if (have_cu) snprintf(why, sizeof why, "ic's context has no device (target '%s')", ic_context_arch(b.ctx));
    fprintf(stderr, "ic-bench pointwise needs a GPU: %s\n", why);
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
  bench_pointwise(&b);
  d->cuEventDestroy(b.start);
  d->cuEventDestroy(b.stop);
  d->cuStreamDestroy(b.stream);
  ic_context_destroy(b.ctx);
  d->cuCtxSetCurrent(NULL);
  d->cuDevicePrimaryCtxRelease(dev);
  return 0;
}
