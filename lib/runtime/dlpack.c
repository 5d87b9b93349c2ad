/* DLPack: ic tensors from DLTensors, and ic tensors exported as DLManagedTensors. */
#include <stdlib.h>
#include <string.h>

#include "ic/ic_dlpack.h"
#include "runtime/context.h"

/* kDLBool arrived in DLPack 0.8, the fp8 codes in 1.1; older headers lack the names, not
 * the codes (e4m3fn is PyTorch's float8_e4m3fn, ic's f8e4m3). */
enum { DLPACK_BOOL_CODE = 6, DLPACK_F8E4M3FN_CODE = 10, DLPACK_F8E5M2_CODE = 12 };

#define DLPACK_MAX_BYTE_OFFSET (UINT64_C(1) << 62)

typedef struct dlpack_dtype {
  uint8_t code, bits;
  ic_dtype dtype;
} dlpack_dtype;

static const dlpack_dtype dlpack_dtypes[] = {
    {kDLFloat, 16, IC_F16}, {kDLFloat, 32, IC_F32}, {kDLFloat, 64, IC_F64}, {kDLBfloat, 16, IC_BF16},
    {kDLInt, 8, IC_I8},     {kDLInt, 16, IC_I16},   {kDLInt, 32, IC_I32},   {kDLInt, 64, IC_I64},
    {kDLUInt, 8, IC_U8},    {kDLUInt, 16, IC_U16},  {kDLUInt, 32, IC_U32},  {kDLUInt, 64, IC_U64},
    {DLPACK_BOOL_CODE, 8, IC_BOOL}, {DLPACK_F8E4M3FN_CODE, 8, IC_F8E4M3}, {DLPACK_F8E5M2_CODE, 8, IC_F8E5M2},
};

static bool dlpack_device_ok(DLDeviceType t) {
  return t == kDLCUDA || t == kDLCUDAManaged || t == kDLCUDAHost || t == kDLCPU;
}

ic_status ic_tensor_from_dlpack(const DLTensor *t, ic_tensor *out) {
  if (!t || !out) return error_set(IC_ERR_INVALID_ARGUMENT, "ic_tensor_from_dlpack: NULL argument");
  if (!dlpack_device_ok(t->device.device_type))
    return error_set(IC_ERR_UNSUPPORTED, "DLPack device type %d: ic runs on CUDA and (ref backend) CPU memory",
                        (int)t->device.device_type);
  if (t->dtype.lanes != 1)
    return error_set(IC_ERR_UNSUPPORTED, "DLPack dtype with %u lanes: ic takes 1", (unsigned)t->dtype.lanes);
  ic_dtype dt = IC_DTYPE_INVALID;
  for (size_t i = 0; i < ARRAY_LEN(dlpack_dtypes); i++)
    if (dlpack_dtypes[i].code == t->dtype.code && dlpack_dtypes[i].bits == t->dtype.bits) dt = dlpack_dtypes[i].dtype;
  if (!dt)
    return error_set(IC_ERR_UNSUPPORTED, "DLPack dtype (code %u, %u bits) has no ic equivalent",
                        (unsigned)t->dtype.code, (unsigned)t->dtype.bits);
  if (t->ndim < 0 || t->ndim > IC_MAX_DIMS || (t->ndim > 0 && !t->shape))
    return error_set(IC_ERR_UNSUPPORTED, "DLPack tensor of %d dims: ic takes 0 to %d", (int)t->ndim, IC_MAX_DIMS);
  for (int32_t d = 0; d < t->ndim; d++)
    if (t->shape[d] < 0) return error_set(IC_ERR_INVALID_ARGUMENT, "DLPack tensor with a negative size");
  /* No tensor ic runs spans more than 2^62 bytes, so no offset into one is larger; the
   * bound also keeps the addition below in the address space and in ptrdiff_t. */
  bool wraps = t->data && t->byte_offset > UINTPTR_MAX - (uintptr_t)t->data;
  if (wraps || t->byte_offset > DLPACK_MAX_BYTE_OFFSET)
    return error_set(IC_ERR_INVALID_ARGUMENT, "DLPack byte_offset %llu %s", (unsigned long long)t->byte_offset,
                     wraps ? "wraps the data pointer" : "is more than 2^62 (no tensor ic runs spans more bytes)");
  if (!t->data && t->byte_offset != 0)
    return error_set(IC_ERR_INVALID_ARGUMENT, "DLPack byte_offset %llu from a NULL data pointer",
                     (unsigned long long)t->byte_offset);
  *out = (ic_tensor){.data = t->data ? (char *)t->data + t->byte_offset : NULL, .dtype = dt, .ndim = t->ndim,
                     .shape = t->shape, .strides = t->strides};
  return IC_OK;
}

ic_status ic_tensor_from_dlpack_managed(const DLManagedTensor *t, ic_tensor *out) {
  if (!t) return error_set(IC_ERR_INVALID_ARGUMENT, "ic_tensor_from_dlpack_managed: NULL argument");
  return ic_tensor_from_dlpack(&t->dl_tensor, out);
}

/* What the deleter needs: the shape and strides it owns, and how to free the data. */
typedef struct dlpack_export {
  DLManagedTensor managed;
  int64_t shape[IC_MAX_DIMS];
  int64_t strides[IC_MAX_DIMS];
  ic_context *ctx; /* set when the data is ic's to free */
} dlpack_export;

static void dlpack_deleter(DLManagedTensor *self) {
  dlpack_export *e = self->manager_ctx;
  if (e->ctx && self->dl_tensor.device.device_type == kDLCUDA) ic_free(e->ctx, self->dl_tensor.data);
  else if (e->ctx) free(self->dl_tensor.data);
  free(e);
}

ic_status ic_tensor_to_dlpack(ic_context *ctx, const ic_tensor *t, DLDeviceType device_type, int owned,
                              DLManagedTensor **out) {
  if (!ctx || !t || !out) return error_set(IC_ERR_INVALID_ARGUMENT, "ic_tensor_to_dlpack: NULL argument");
  *out = NULL;
  if (device_type != kDLCUDA && device_type != kDLCPU)
    return error_set(IC_ERR_UNSUPPORTED, "ic_tensor_to_dlpack: export to kDLCUDA or kDLCPU, not %d", (int)device_type);
  if (device_type == kDLCUDA && !ctx->device)
    return error_set(IC_ERR_NO_DEVICE, "ic_tensor_to_dlpack: a kDLCUDA tensor from a context with no device (compile-only)");
  if (t->ndim < 0 || t->ndim > IC_MAX_DIMS || (t->ndim > 0 && !t->shape))
    return error_set(IC_ERR_INVALID_ARGUMENT, "ic_tensor_to_dlpack: %d dims", (int)t->ndim);
  for (int32_t d = 0; d < t->ndim; d++)
    if (t->shape[d] < 0 || (t->strides && t->strides[d] < 0))
      return error_set(IC_ERR_INVALID_ARGUMENT, "ic_tensor_to_dlpack: dim %d has a negative size or stride", (int)d);
  const dlpack_dtype *map = NULL;
  for (size_t i = 0; i < ARRAY_LEN(dlpack_dtypes); i++)
    if (dlpack_dtypes[i].dtype == t->dtype) map = &dlpack_dtypes[i];
  if (!map) return error_set(IC_ERR_UNSUPPORTED, "ic_tensor_to_dlpack: dtype %s has no DLPack equivalent", ic_dtype_name(t->dtype));
  dlpack_export *e = sys_calloc(1, sizeof *e);
  if (!e) return error_set(IC_ERR_OUT_OF_MEMORY, "ic_tensor_to_dlpack: out of memory");
  int64_t contiguous = 1;
  for (int32_t d = t->ndim - 1; d >= 0; d--) {
    e->shape[d] = t->shape[d];
    e->strides[d] = t->strides ? t->strides[d] : contiguous;
    if (__builtin_mul_overflow(contiguous, t->shape[d], &contiguous)) contiguous = INT64_MAX; /* only strides of outer dims */
  }
  e->ctx = owned ? ctx : NULL;
  DLTensor *dl = &e->managed.dl_tensor;
  dl->data = t->data;
  dl->device = (DLDevice){device_type, device_type == kDLCUDA ? ctx->ordinal : 0};
  dl->ndim = t->ndim;
  dl->dtype = (DLDataType){map->code, map->bits, 1};
  dl->shape = e->shape;
  dl->strides = e->strides;
  dl->byte_offset = 0;
  e->managed.manager_ctx = e;
  e->managed.deleter = dlpack_deleter;
  *out = &e->managed;
  return IC_OK;
}
