/* lib/cuda/device: one GPU as ic uses it: the driver table, the device, its retained
 * primary context (so PyTorch's and CuPy's pointers and streams just work) and its
 * arch. The context opens it; the cuda backend and the memory calls borrow it. */
#ifndef IC_CUDA_DEVICE_H
#define IC_CUDA_DEVICE_H

#include "cuda/cuda_api.h"

typedef struct cuda_device {
  const cuda_driver_api *drv;
  CUdevice device;
  int32_t ordinal;
  CUcontext cuctx; /* the retained primary context */
  int32_t sm;      /* compute capability, 90 for sm_90 */
  char arch[16];   /* the device's own target: "sm_90a" (arch-specific from sm_90 on) */
  /* ic's own stream-ordered memory pool (NULL where the driver has none: the default
   * pool then). It keeps the memory of freed temporaries for the next run instead of
   * returning it at every synchronization, as the device's default pool does (a
   * two-stage reduction's workspace cost ~60 us a run there); cuda_device_close gives it
   * back. */
  CUmemoryPool pool;
} cuda_device;

/* Opens GPU `ordinal`. IC_ERR_NO_DEVICE when there is no usable driver or GPU,
 * IC_ERR_INVALID_ARGUMENT for an ordinal that does not exist. */
ic_status cuda_device_open(int32_t ordinal, cuda_device **out);
void cuda_device_close(cuda_device *d);
/* Makes the device's context current for a call (pushes it); cuda_device_leave pops. */
ic_status cuda_device_enter(const cuda_device *d);
void cuda_device_leave(const cuda_device *d);

/* "sm_90a" -> 90; 0 when the spelling is not sm_<digits>[a|f]. */
int32_t cuda_arch_sm(const char *arch);

#endif
