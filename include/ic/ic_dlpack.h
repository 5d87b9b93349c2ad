/*
 * ic_dlpack.h: tensors from and to DLPack, so PyTorch, JAX and CuPy exchange tensors with
 * ic without copies. Needs <dlpack/dlpack.h> (Debian libdlpack-dev); DLPack 0.6 and
 * newer.
 *
 * Devices: kDLCUDA, kDLCUDAManaged and kDLCUDAHost memory is what the cuda backend runs
 * on; kDLCPU memory is what the ref backend runs on. Other devices are refused
 * (IC_ERR_UNSUPPORTED). A tensor's device must match the backend of the program it is
 * given to: ic cannot tell device pointers from host pointers by looking at them.
 *
 * Dtypes map one to one (lanes must be 1): kDLFloat 16/32/64 to f16/f32/f64, kDLBfloat 16
 * to bf16, kDLInt 8/16/32/64 to i8/i16/i32/i64, kDLUInt 8 to u8, kDLBool 8 (code 6, DLPack
 * 0.8) to bool. Strides are in elements, as in ic_tensor; NULL strides mean contiguous.
 */
#ifndef IC_IC_DLPACK_H
#define IC_IC_DLPACK_H

#include <dlpack/dlpack.h>

#include "ic/ic.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Dtypes both ways: kDLFloat 16/32/64, kDLBfloat 16, kDLInt 8/16/32/64, kDLUInt 8,
 * kDLBool 8, and (DLPack 1.1 codes) kDLFloat8_e4m3fn (10) and kDLFloat8_e5m2 (12) as
 * f8e4m3 and f8e5m2.
 *
 * Views t as an ic_tensor: data is t->data + t->byte_offset; shape and strides point into
 * t (valid while t lives). Errors: NULL arguments, a device ic does not run on, a dtype
 * without an ic equivalent, lanes != 1, more than IC_MAX_DIMS dims or a NULL shape with
 * dims, negative sizes, and (IC_ERR_INVALID_ARGUMENT) a byte_offset above 2^62 (no tensor
 * ic runs spans more), one that wraps the data pointer, or a nonzero one from NULL data. */
IC_API ic_status ic_tensor_from_dlpack(const DLTensor *t, ic_tensor *out);

/* The same for a managed tensor's dl_tensor; ownership stays with the caller. */
IC_API ic_status ic_tensor_from_dlpack_managed(const DLManagedTensor *t, ic_tensor *out);

/* Exports t (contiguous when strides is NULL) as a new DLManagedTensor on device
 * `device_type` (kDLCUDA with the context's device, or kDLCPU). With `owned` set, the
 * deleter frees t->data the way ic allocated it (ic_free for kDLCUDA, free() for kDLCPU,
 * as the ref backend allocates); otherwise the memory stays the caller's. The deleter
 * also frees the shape and strides ic copied. The context must outlive an owned export. */
IC_API ic_status ic_tensor_to_dlpack(ic_context *ctx, const ic_tensor *t, DLDeviceType device_type, int owned,
                                     DLManagedTensor **out);

#ifdef __cplusplus
}
#endif

#endif /* IC_IC_DLPACK_H */
