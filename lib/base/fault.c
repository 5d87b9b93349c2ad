/* The fault table (fault.h). Unarmed, fault_hit costs one relaxed atomic load. */
#include <stdatomic.h>
#include <string.h>

#include "base/base.h"
#include "base/fault.h"

/* Every point. The driver's and NVRTC's are the entries of their tables that ic calls
 * after loading them (lib/cuda/driver.c, nvrtc.c; test_faults checks the driver's
 * list against this one). The loaders' own calls (dlopen, dlsym, cuInit, cuDriverGetVersion,
 * nvrtcVersion) are not points: their outcome is kept for the process. */
static const fault_point k_points[] = {
    {"malloc", FAULT_ALLOC, false},
    {"calloc", FAULT_ALLOC, false},
    {"realloc", FAULT_ALLOC, false},
    {"strdup", FAULT_ALLOC, false},
    {"open", FAULT_FS, false},
    {"openat", FAULT_FS, false},
    {"read", FAULT_FS, false},
    {"write", FAULT_FS, false},
    {"close", FAULT_FS, false},
    {"rename", FAULT_FS, false},
    {"unlink", FAULT_FS, false},
    {"mkdir", FAULT_FS, false},
    {"stat", FAULT_FS, false},
    {"lstat", FAULT_FS, false},
    {"fstat", FAULT_FS, false},
    {"opendir", FAULT_FS, false},
    {"futimens", FAULT_FS, false},
    {"fopen", FAULT_FS, false},
    {"nvrtcCreateProgram", FAULT_NVRTC, false},
    {"nvrtcDestroyProgram", FAULT_NVRTC, true},
    {"nvrtcCompileProgram", FAULT_NVRTC, false},
    {"nvrtcGetProgramLogSize", FAULT_NVRTC, false},
    {"nvrtcGetProgramLog", FAULT_NVRTC, false},
    {"nvrtcGetCUBINSize", FAULT_NVRTC, false},
    {"nvrtcGetCUBIN", FAULT_NVRTC, false},
    {"nvrtcGetNumSupportedArchs", FAULT_NVRTC, false},
    {"nvrtcGetSupportedArchs", FAULT_NVRTC, false},
    {"cuDeviceGetCount", FAULT_DRIVER, false},
    {"cuDeviceGet", FAULT_DRIVER, false},
    {"cuDeviceGetAttribute", FAULT_DRIVER, false},
    {"cuDevicePrimaryCtxRetain", FAULT_DRIVER, false},
    {"cuDevicePrimaryCtxRelease", FAULT_DRIVER, true},
    {"cuCtxPushCurrent", FAULT_DRIVER, false},
    {"cuCtxPopCurrent", FAULT_DRIVER, true},
    {"cuModuleLoadData", FAULT_DRIVER, false},
    {"cuModuleUnload", FAULT_DRIVER, true},
    {"cuModuleGetFunction", FAULT_DRIVER, false},
    {"cuFuncSetAttribute", FAULT_DRIVER, false},
    {"cuLaunchKernel", FAULT_DRIVER, false},
    {"cuMemAlloc", FAULT_DRIVER, false},
    {"cuMemFree", FAULT_DRIVER, true},
    {"cuMemAllocAsync", FAULT_DRIVER, false},
    {"cuMemFreeAsync", FAULT_DRIVER, true},
    {"cuMemPoolCreate", FAULT_DRIVER, false},
    {"cuMemPoolDestroy", FAULT_DRIVER, true},
    {"cuMemPoolSetAttribute", FAULT_DRIVER, false},
    {"cuMemAllocFromPoolAsync", FAULT_DRIVER, false},
    {"cuMemcpyHtoD", FAULT_DRIVER, false},
    {"cuMemcpyDtoH", FAULT_DRIVER, false},
    {"cuMemsetD8", FAULT_DRIVER, false},
    {"cuStreamSynchronize", FAULT_DRIVER, false},
};

static const char *const k_class_names[FAULT_CLASSES] = {"alloc", "fs", "nvrtc", "driver"};

/* What is armed: a class (or all of them) or one point; the match is decided once at
 * arming, so fault_hit compares a class and a pointer. */
enum { MATCH_NONE, MATCH_ANY, MATCH_CLASS, MATCH_POINT };
static atomic_int g_match = MATCH_NONE;
static fault_class g_class;
static const char *g_point; /* the table's string for MATCH_POINT */
static int64_t g_nth;
static int g_code;
static atomic_llong g_calls;
static atomic_bool g_fired;
static _Thread_local int t_code;

const fault_point *fault_points(int32_t *count) {
  *count = (int32_t)ARRAY_LEN(k_points);
  return k_points;
}

const char *fault_class_name(fault_class cls) {
  return cls >= 0 && cls < FAULT_CLASSES ? k_class_names[cls] : "?";
}

static bool fault_is_release(const char *name) {
  for (size_t i = 0; i < ARRAY_LEN(k_points); i++)
    if (k_points[i].release && strcmp(name, k_points[i].name) == 0) return true;
  return false;
}

bool fault_hit(fault_class cls, const char *name) {
  int match = atomic_load_explicit(&g_match, memory_order_acquire);
  if (match == MATCH_NONE) return false;
  if (match == MATCH_POINT ? strcmp(name, g_point) != 0 : (match == MATCH_CLASS && cls != g_class) || fault_is_release(name))
    return false;
  if (atomic_fetch_add(&g_calls, 1) + 1 != g_nth) return false;
  atomic_store(&g_fired, true);
  t_code = g_code;
  return true;
}

int fault_code(void) { return t_code; }

ic_status fault_arm(const char *which, int64_t nth, int code) {
  if (!which || nth < 1 || code == 0)
    return error_set(IC_ERR_INVALID_ARGUMENT, "fault_arm: a name, nth >= 1 and a nonzero code are needed");
  int match = MATCH_NONE;
  if (strcmp(which, "any") == 0) match = MATCH_ANY;
  for (int c = 0; c < FAULT_CLASSES && match == MATCH_NONE; c++)
    if (strcmp(which, k_class_names[c]) == 0) {
      match = MATCH_CLASS;
      g_class = (fault_class)c;
    }
  for (size_t i = 0; i < ARRAY_LEN(k_points) && match == MATCH_NONE; i++)
    if (strcmp(which, k_points[i].name) == 0) {
      match = MATCH_POINT;
      g_point = k_points[i].name;
    }
  if (match == MATCH_NONE) return error_set(IC_ERR_INVALID_ARGUMENT, "fault_arm: no fault point or class '%s'", which);
  atomic_store(&g_match, MATCH_NONE);
  g_nth = nth;
  g_code = code;
  atomic_store(&g_calls, 0);
  atomic_store(&g_fired, false);
  atomic_store_explicit(&g_match, match, memory_order_release);
  return IC_OK;
}

void fault_disarm(void) { atomic_store(&g_match, MATCH_NONE); }

int64_t fault_calls(void) { return atomic_load(&g_calls); }

bool fault_fired(void) { return atomic_load(&g_fired); }
