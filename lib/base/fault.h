/* Fault injection: one table of every call to the outside world that can fail, so that
 * tests can make any of them fail and check what ic does then.
 *
 * The points are the allocations (malloc, calloc, realloc, strdup), the file-system calls
 * (open, read, write, rename, ...), NVRTC's and the CUDA driver's entry points. Every call
 * site asks fault_hit first: lib/base/sys.h wraps the C library's calls, and NVRTC_CALL /
 * CU_CALL (lib/cuda/cuda_api.h) the dlopen'ed tables; scripts/check-fault-points.sh fails
 * when lib/ makes such a call directly. Unarmed, fault_hit is one relaxed atomic load.
 *
 * Armed (tests only: nothing in ic arms it), the Nth matching call of the process fails
 * once with the armed code: an allocation returns NULL (errno ENOMEM), a file-system
 * call returns its error value with errno = code, an NVRTC or driver call returns code as
 * its nvrtcResult or CUresult. Counting is process-wide and thread-safe. */
#ifndef IC_BASE_FAULT_H
#define IC_BASE_FAULT_H

#include <stdbool.h>
#include <stdint.h>

#include "ic/ic.h"

typedef enum fault_class { FAULT_ALLOC, FAULT_FS, FAULT_NVRTC, FAULT_DRIVER, FAULT_CLASSES } fault_class;

/* The table: every point's name and class, for sweeps and for checking names. */
typedef struct fault_point {
  const char *name;
  fault_class cls;
  /* A release (nvrtcDestroyProgram, cuMemFree, cuModuleUnload, ...): an injected
   * failure skips the call, which leaks by construction, so class and "any" arming pass
   * over it; armed by its name it fails like any point. */
  bool release;
} fault_point;
const fault_point *fault_points(int32_t *count);
const char *fault_class_name(fault_class cls); /* "alloc", "fs", "nvrtc", "driver" */

/* Called before each call of a point: true when this call must fail, with the code in
 * fault_code(). */
bool fault_hit(fault_class cls, const char *name);
/* The code of the calling thread's last injected failure. */
int fault_code(void);

/* Arms the Nth (from 1) next call matching `which` to fail with `code`: `which` is a
 * point's name ("rename", "nvrtcCompileProgram"), a class name ("alloc", "fs", "nvrtc",
 * "driver") or "any" (classes and "any" leave out the release points).
 * IC_ERR_INVALID_ARGUMENT for an unknown name, nth < 1 or code 0 (a failure needs a
 * code: 0 is success for NVRTC and the driver). Re-arming restarts the count. */
ic_status fault_arm(const char *which, int64_t nth, int code);
void fault_disarm(void);
/* Matching calls counted since fault_arm, and whether the armed failure has happened. */
int64_t fault_calls(void);
bool fault_fired(void);

#endif
