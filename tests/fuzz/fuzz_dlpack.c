/* The DLPack importers and exporter (include/ic/ic_dlpack.h): any DLTensor header
 * (device, dtype, lanes, ndim, shape, strides, byte_offset from the input) is taken or
 * refused with a message; a taken one describes t's memory (data = t->data +
 * byte_offset, an offset of at most 2^62; shape and strides t's own). Exporting any ic_tensor from bytes (negative
 * sizes and strides included) to kDLCPU either fails cleanly or gives a managed tensor
 * whose shape is the input's, and whose deleter frees what ic copied. */
#include <dlpack/dlpack.h>
#include <string.h>

#include "fuzz.h"
#include "ic/ic_dlpack.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fuzz_bytes b = {data, size};
  static unsigned char memory[256];
  int64_t shape[12], strides[12];
  DLTensor t;
  memset(&t, 0, sizeof t);
  t.data = memory;
  t.device.device_type = (DLDeviceType)(fuzz_u8(&b) % 16);
  t.device.device_id = (int32_t)(fuzz_u8(&b) % 3) - 1;
  t.ndim = (int32_t)(fuzz_u8(&b) % 12) - 1;
  t.dtype.code = fuzz_u8(&b) % 14;
  t.dtype.bits = fuzz_u8(&b);
  t.dtype.lanes = (uint16_t)(fuzz_u8(&b) % 3);
  for (int i = 0; i < 12; i++) {
    shape[i] = (int64_t)fuzz_u64(&b);
    strides[i] = (int64_t)fuzz_u64(&b);
  }
  t.shape = shape;
  t.strides = fuzz_u8(&b) & 1 ? strides : NULL;
  t.byte_offset = fuzz_u64(&b);
  ic_tensor it;
  ic_status s = fuzz_u8(&b) & 1 ? ic_tensor_from_dlpack(&t, &it)
                                : ic_tensor_from_dlpack_managed(&(DLManagedTensor){.dl_tensor = t}, &it);
  if (s != IC_OK) {
    FUZZ_REQUIRE(ic_last_error()[0], "a refused DLTensor left no message");
  } else {
    FUZZ_REQUIRE(t.byte_offset <= UINT64_C(1) << 62, "a byte_offset past 2^62 was taken");
    FUZZ_REQUIRE((uintptr_t)it.data == (uintptr_t)memory + t.byte_offset, "data is not t->data + byte_offset");
    FUZZ_REQUIRE(it.ndim == t.ndim && it.shape == t.shape, "the shape is not t's");
    for (int32_t d = 0; d < it.ndim; d++) FUZZ_REQUIRE(it.shape[d] >= 0, "a negative size was taken");
  }

  /* export: an ic_tensor straight from the bytes */
  ic_tensor e = {memory, (ic_dtype)(fuzz_u8(&b) % (IC_DTYPE_COUNT + 1)), (int32_t)(fuzz_u8(&b) % 11) - 1, shape,
                 fuzz_u8(&b) & 1 ? strides : NULL};
  DLManagedTensor *m = NULL;
  s = ic_tensor_to_dlpack(fuzz_context(), &e, fuzz_u8(&b) & 1 ? kDLCUDA : kDLCPU, 0, &m);
  if (s != IC_OK) {
    FUZZ_REQUIRE(m == NULL, "a failed export returned a tensor");
    FUZZ_REQUIRE(ic_last_error()[0], "a failed export left no message");
  } else {
    FUZZ_REQUIRE(m && m->dl_tensor.ndim == e.ndim, "the export's rank is not the tensor's");
    for (int32_t d = 0; d < e.ndim; d++)
      FUZZ_REQUIRE(m->dl_tensor.shape[d] == e.shape[d] && e.shape[d] >= 0, "the export's shape is not the tensor's");
    m->deleter(m);
  }
  return 0;
}
