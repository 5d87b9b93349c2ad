/* libnvrtc, loaded at run time with dlopen (never dlclose'd). */
#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/cuda_api.h"

typedef struct nvrtc_entry {
  const char *name;
  size_t offset;
} nvrtc_entry;

#define IC_NVRTC_ENTRIES(X) \
  X(nvrtcVersion)           \
  X(nvrtcGetErrorString)    \
  X(nvrtcCreateProgram)     \
  X(nvrtcDestroyProgram)    \
  X(nvrtcCompileProgram)    \
  X(nvrtcGetProgramLogSize) \
  X(nvrtcGetProgramLog)     \
  X(nvrtcGetCUBINSize)      \
  X(nvrtcGetCUBIN)          \
  X(nvrtcGetNumSupportedArchs) \
  X(nvrtcGetSupportedArchs)

/* The struct's pointer types are the ones nvrtc.h declares. */
#define IC_NVRTC_CHECK_(fn)                                                                \
  _Static_assert(__builtin_types_compatible_p(__typeof__(((cuda_nvrtc_api *)0)->fn),     \
                                              __typeof__(&fn)),                         \
                 #fn ": type differs from nvrtc.h");
IC_NVRTC_ENTRIES(IC_NVRTC_CHECK_)
#undef IC_NVRTC_CHECK_

static const nvrtc_entry k_entries[] = {
#define IC_NVRTC_ENTRY_(fn) {#fn, offsetof(cuda_nvrtc_api, fn)},
    IC_NVRTC_ENTRIES(IC_NVRTC_ENTRY_)
#undef IC_NVRTC_ENTRY_
};

_Static_assert(offsetof(cuda_nvrtc_api, major) ==
                   sizeof k_entries / sizeof k_entries[0] * sizeof(void (*)(void)),
               "cuda_nvrtc_api and IC_NVRTC_ENTRIES differ");

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static bool g_done;
static cuda_nvrtc_api g_api;
static const cuda_nvrtc_api *g_result; /* &g_api on success */
static char g_error[4096];           /* the failure, recorded again on every call */

/* Appends to g_error, truncating safely. */
static void note(const char *fmt, ...) PRINTF_LIKE(1, 2);
static void note(const char *fmt, ...) {
  size_t len = strlen(g_error);
  if (len + 1 >= sizeof g_error) return;
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(g_error + len, sizeof g_error - len, fmt, ap);
  va_end(ap);
  if (n < 0) g_error[len] = '\0';
}

/* Tries one candidate; true when it is loaded and complete. */
static bool try_load(const char *path, bool *first) {
  void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  note("%s%s", *first ? " " : "; ", path);
  *first = false;
  if (!lib) {
    const char *why = dlerror();
    /* dlerror repeats the path first ("path: cannot open ..."); keep only the reason. */
    if (why) {
      size_t plen = strlen(path);
      if (strncmp(why, path, plen) == 0 && why[plen] == ':') why += plen + 1;
      while (*why == ' ') why++;
    }
    note(" (%s)", why ? why : "dlopen failed");
    return false;
  }
  /* A library that loads stays loaded, also when it is incomplete: never dlclose. */
  cuda_nvrtc_api api;
  memset(&api, 0, sizeof api);
  for (size_t i = 0; i < ARRAY_LEN(k_entries); i++) {
    void *fn;
    dlerror();
    fn = dlsym(lib, k_entries[i].name);
    if (!fn) {
      note(" (no %s)", k_entries[i].name);
      return false;
    }
    memcpy((char *)&api + k_entries[i].offset, &fn, sizeof fn);
  }
  int major = 0, minor = 0;
  nvrtcResult r = api.nvrtcVersion(&major, &minor);
  if (r != NVRTC_SUCCESS) {
    note(" (nvrtcVersion failed: %d)", (int)r);
    return false;
  }
  api.major = major;
  api.minor = minor;
  snprintf(api.path, sizeof api.path, "%s", path);
  g_api = api;
  g_result = &g_api;
  return true;
}

static void load_nvrtc(int driver_major) {
  strcpy(g_error, "NVRTC library not found; tried");
  bool first = true;
  const char *env = getenv("IC_NVRTC");
  if (env && env[0]) {
    if (!try_load(env, &first)) note(" (from IC_NVRTC)");
    return;
  }
  char names[4][32];
  int nnames = 0;
  if (driver_major > 0) snprintf(names[nnames++], sizeof names[0], "libnvrtc.so.%d", driver_major);
  static const char *const known[] = {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"};
  for (size_t i = 0; i < ARRAY_LEN(known); i++) {
    if (nnames > 0 && strcmp(names[0], known[i]) == 0) continue;
    snprintf(names[nnames++], sizeof names[0], "%s", known[i]);
  }
  for (int i = 0; i < nnames; i++)
    if (try_load(names[i], &first)) return;

  const char *home = getenv("CUDA_HOME");
  char home_lib[1024];
  const char *dirs[3];
  int ndirs = 0;
  if (home && home[0]) {
    int n = snprintf(home_lib, sizeof home_lib, "%s/lib64", home);
    if (n > 0 && (size_t)n < sizeof home_lib) dirs[ndirs++] = home_lib;
  }
  dirs[ndirs++] = "/usr/local/cuda/lib64";
  dirs[ndirs++] = "/usr/local/cuda/lib";
  for (int d = 0; d < ndirs; d++) {
    if (d > 0 && strcmp(dirs[d], dirs[0]) == 0) continue; /* CUDA_HOME=/usr/local/cuda */
    for (int i = 0; i < nnames; i++) {
      char path[1100];
      int n = snprintf(path, sizeof path, "%s/%s", dirs[d], names[i]);
      if (n < 0 || (size_t)n >= sizeof path) continue;
      if (try_load(path, &first)) return;
    }
  }
  note("; set IC_NVRTC to the library's path");
}

const cuda_nvrtc_api *cuda_nvrtc_get(int driver_major) {
  if (pthread_mutex_lock(&g_lock) != 0) {
    error_set(IC_ERR_NO_NVRTC, "NVRTC library not loaded: lock failed");
    return NULL;
  }
  /* The first caller's driver_major decides, once for the process. */
  if (!g_done) {
    load_nvrtc(driver_major);
    g_done = true;
  }
  const cuda_nvrtc_api *result = g_result;
  pthread_mutex_unlock(&g_lock);
  if (!result) error_set(IC_ERR_NO_NVRTC, "%s", g_error);
  return result;
}

void cuda_nvrtc_warm(const char *arch, int driver_major) {
  const cuda_nvrtc_api *nv = cuda_nvrtc_get(driver_major);
  if (!nv || !arch || !arch[0]) return;
  char opt[64];
  snprintf(opt, sizeof opt, "--gpu-architecture=%s", arch);
  const char *const opts[] = {opt, "--std=c++17"};
  nvrtcProgram prog = NULL;
  if (NVRTC_CALL(nv, nvrtcCreateProgram, &prog, "extern \"C\" __global__ void ic_warm(int *p) { *p = 0; }\n",
                 "ic_warm", 0, NULL, NULL) != NVRTC_SUCCESS)
    return;
  (void)NVRTC_CALL(nv, nvrtcCompileProgram, prog, 2, opts);
  NVRTC_CALL(nv, nvrtcDestroyProgram, &prog);
}
