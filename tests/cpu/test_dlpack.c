/* CPU: DLPack import and export, and a run on the ref backend from DLPack tensors to an
 * exported output whose deleter frees what ic allocated. */
#include <check.h>
#include <ic/ic.h>
#include <ic/ic_dlpack.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"

#define OK(call) ck_assert_msg((call) == IC_OK, "%s: %s", #call, ic_last_error())

static DLTensor cpu_tensor(void *data, uint8_t code, uint8_t bits, int32_t ndim, int64_t *shape) {
  DLTensor t = {.data = data, .device = {kDLCPU, 0}, .ndim = ndim, .dtype = {code, bits, 1}, .shape = shape};
  return t;
}

START_TEST(test_dtype_mapping) {
  static const struct {
    uint8_t code, bits;
    ic_dtype want;
  } map[] = {{kDLFloat, 16, IC_F16}, {kDLFloat, 32, IC_F32}, {kDLFloat, 64, IC_F64}, {kDLBfloat, 16, IC_BF16},
             {kDLInt, 8, IC_I8},     {kDLInt, 16, IC_I16},   {kDLInt, 32, IC_I32},   {kDLInt, 64, IC_I64},
             {kDLUInt, 8, IC_U8},    {kDLUInt, 16, IC_U16},  {kDLUInt, 32, IC_U32},  {kDLUInt, 64, IC_U64},
             {6, 8, IC_BOOL},        {10, 8, IC_F8E4M3},     {12, 8, IC_F8E5M2}};
  int64_t shape[2] = {3, 4};
  for (size_t i = 0; i < sizeof map / sizeof *map; i++) {
    DLTensor t = cpu_tensor((void *)64, map[i].code, map[i].bits, 2, shape);
    ic_tensor it;
    OK(ic_tensor_from_dlpack(&t, &it));
    ck_assert_int_eq(it.dtype, map[i].want);
    ck_assert_int_eq(it.ndim, 2);
    ck_assert_ptr_eq(it.shape, shape);
    ck_assert_ptr_null(it.strides);
  }
}
END_TEST

START_TEST(test_import_errors) {
  int64_t shape[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1}, neg[1] = {-1};
  ic_tensor it;
  DLTensor t = cpu_tensor((void *)64, kDLFloat, 32, 1, shape);
  t.byte_offset = 16;
  OK(ic_tensor_from_dlpack(&t, &it));
  ck_assert_ptr_eq(it.data, (char *)64 + 16);
  t.device.device_type = (DLDeviceType)10; /* ROCm */
  ck_assert_int_eq(ic_tensor_from_dlpack(&t, &it), IC_ERR_UNSUPPORTED);
  t = cpu_tensor((void *)64, kDLFloat, 32, 1, shape);
  t.dtype.lanes = 4;
  ck_assert_int_eq(ic_tensor_from_dlpack(&t, &it), IC_ERR_UNSUPPORTED);
  t = cpu_tensor((void *)64, kDLFloat, 8, 1, shape);
  ck_assert_int_eq(ic_tensor_from_dlpack(&t, &it), IC_ERR_UNSUPPORTED);
  t = cpu_tensor((void *)64, kDLComplex, 64, 1, shape);
  ck_assert_int_eq(ic_tensor_from_dlpack(&t, &it), IC_ERR_UNSUPPORTED);
  t = cpu_tensor((void *)64, kDLFloat, 32, 9, shape);
  ck_assert_int_eq(ic_tensor_from_dlpack(&t, &it), IC_ERR_UNSUPPORTED);
  t = cpu_tensor((void *)64, kDLFloat, 32, 1, neg);
  ck_assert_int_eq(ic_tensor_from_dlpack(&t, &it), IC_ERR_INVALID_ARGUMENT);
  ck_assert_int_eq(ic_tensor_from_dlpack(NULL, &it), IC_ERR_INVALID_ARGUMENT);
  ck_assert_int_eq(ic_tensor_from_dlpack_managed(NULL, &it), IC_ERR_INVALID_ARGUMENT);
  t = cpu_tensor((void *)64, kDLFloat, 32, 1, shape);
  t.byte_offset = UINT64_MAX - 32; /* past the end of the address space */
  ck_assert_int_eq(ic_tensor_from_dlpack(&t, &it), IC_ERR_INVALID_ARGUMENT);
  ck_assert_msg(strstr(ic_last_error(), "wraps") != NULL, "%s", ic_last_error());
}
END_TEST

/* y = x * 2 on the ref backend: x comes in through DLPack (a strided view), y leaves as an
 * owned DLManagedTensor. */
START_TEST(test_ref_round_trip) {
  ic_context_options o = {.struct_size = sizeof o, .arch = "sm_90a", .flags = IC_CONTEXT_COMPILE_ONLY};
  ic_context *ctx;
  OK(ic_context_create(&o, &ctx));
  ic_graph *g;
  OK(ic_graph_create(&g));
  ic_dim n = ic_graph_symbol(g, "n");
  ic_value x = ic_graph_input(g, "x", IC_F32, 2, (ic_dim[]){n, 3}, IC_LAYOUT_STRIDED);
  OK(ic_graph_output(g, "y", ic_graph_binary(g, IC_OP_MUL, x, ic_graph_constant(g, 2, IC_DTYPE_AUTO))));
  ic_compile_options co = {.struct_size = sizeof co, .backend = "ref"};
  ic_program *p;
  OK(ic_compile(ctx, g, &co, &p));
  float data[5 * 4];
  for (int i = 0; i < 20; i++) data[i] = (float)i;
  int64_t shape[2] = {5, 3}, strides[2] = {4, 1}; /* rows of 4, the last column left out */
  DLTensor xt = cpu_tensor(data, kDLFloat, 32, 2, shape);
  xt.strides = strides;
  DLManagedTensor xm = {.dl_tensor = xt};
  ic_tensor in, out = {NULL, IC_F32, 2, NULL, NULL};
  OK(ic_tensor_from_dlpack_managed(&xm, &in));
  OK(ic_program_run(p, &in, 1, &out, 1, NULL));
  out.shape = shape;
  DLManagedTensor *y;
  OK(ic_tensor_to_dlpack(ctx, &out, kDLCPU, 1, &y));
  ck_assert_int_eq(y->dl_tensor.ndim, 2);
  ck_assert_int_eq(y->dl_tensor.shape[0], 5);
  ck_assert_int_eq(y->dl_tensor.strides[0], 3);
  ck_assert_int_eq(y->dl_tensor.dtype.code, kDLFloat);
  ck_assert_int_eq(y->dl_tensor.device.device_type, kDLCPU);
  const float *yv = y->dl_tensor.data;
  for (int r = 0; r < 5; r++)
    for (int c = 0; c < 3; c++) ck_assert(yv[r * 3 + c] == 2.0f * data[r * 4 + c]);
  y->deleter(y); /* frees ic's output; ASan checks nothing leaks */
  DLManagedTensor *bad;
  ck_assert_int_eq(ic_tensor_to_dlpack(ctx, &out, kDLOpenCL, 0, &bad), IC_ERR_UNSUPPORTED);
  ic_tensor odd = {NULL, (ic_dtype)77, 0, NULL, NULL};
  ck_assert_int_eq(ic_tensor_to_dlpack(ctx, &odd, kDLCPU, 0, &bad), IC_ERR_UNSUPPORTED);
  ic_tensor borrowed = {data, IC_F32, 2, shape, strides};
  OK(ic_tensor_to_dlpack(ctx, &borrowed, kDLCPU, 0, &bad)); /* not owned: data stays */
  ck_assert_int_eq(bad->dl_tensor.strides[0], 4);
  bad->deleter(bad);
  /* negative sizes or strides, and CUDA memory from a compile-only context, are refused */
  int64_t negative[2] = {5, -3}, back[2] = {4, -1};
  ic_tensor neg = {data, IC_F32, 2, negative, NULL}, rev = {data, IC_F32, 2, shape, back};
  ck_assert_int_eq(ic_tensor_to_dlpack(ctx, &neg, kDLCPU, 0, &bad), IC_ERR_INVALID_ARGUMENT);
  ck_assert_int_eq(ic_tensor_to_dlpack(ctx, &rev, kDLCPU, 0, &bad), IC_ERR_INVALID_ARGUMENT);
  ck_assert_int_eq(ic_tensor_to_dlpack(ctx, &borrowed, kDLCUDA, 0, &bad), IC_ERR_NO_DEVICE);
  ck_assert_ptr_null(bad);
  ic_program_release(p);
  ic_graph_destroy(g);
  ic_context_destroy(ctx);
}
END_TEST

/* The unsigned dtypes in and out through DLPack (kDLUInt, 16/32/64 bits) on the ref
 * backend: y = x / 3 (unsigned division), values above the signed range included. */
START_TEST(test_ref_round_trip_unsigned) {
  ic_context_options o = {.struct_size = sizeof o, .flags = IC_CONTEXT_COMPILE_ONLY};
  ic_context *ctx;
  OK(ic_context_create(&o, &ctx));
  static const struct {
    ic_dtype dt;
    uint8_t bits;
  } cases[] = {{IC_U16, 16}, {IC_U32, 32}, {IC_U64, 64}};
  uint64_t state = 0x2545f4914f6cdd1dull;
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
    ic_graph *g;
    OK(ic_graph_create(&g));
    ic_value x = ic_graph_input(g, "x", cases[c].dt, 1, (ic_dim[]){ic_graph_symbol(g, "n")}, IC_LAYOUT_CONTIGUOUS);
    OK(ic_graph_output(g, "y", ic_graph_binary(g, IC_OP_TRUNC_DIVIDE, x, ic_graph_constant(g, 3, IC_DTYPE_AUTO))));
    ic_compile_options co = {.struct_size = sizeof co, .backend = "ref"};
    ic_program *p;
    OK(ic_compile(ctx, g, &co, &p));
    enum { N = 37 };
    const uint64_t mask = cases[c].bits == 64 ? UINT64_MAX : (UINT64_C(1) << cases[c].bits) - 1;
    uint64_t want[N];
    unsigned char data[N * 8];
    const size_t es = cases[c].bits / 8;
    for (int i = 0; i < N; i++) {
      state ^= state << 13, state ^= state >> 7, state ^= state << 17;
      uint64_t v = i == 0 ? mask : i == 1 ? 0 : state & mask; /* the top and 0 always */
      memcpy(data + i * es, &v, es); /* little-endian: the low bytes */
      want[i] = v / 3;
    }
    int64_t shape[1] = {N};
    DLTensor xt = cpu_tensor(data, kDLUInt, cases[c].bits, 1, shape);
    ic_tensor in, out = {NULL, cases[c].dt, 1, NULL, NULL};
    OK(ic_tensor_from_dlpack(&xt, &in));
    ck_assert_int_eq(in.dtype, cases[c].dt);
    OK(ic_program_run(p, &in, 1, &out, 1, NULL));
    out.shape = shape;
    DLManagedTensor *y;
    OK(ic_tensor_to_dlpack(ctx, &out, kDLCPU, 1, &y));
    ck_assert_int_eq(y->dl_tensor.dtype.code, kDLUInt);
    ck_assert_int_eq(y->dl_tensor.dtype.bits, cases[c].bits);
    for (int i = 0; i < N; i++) {
      uint64_t got = 0;
      memcpy(&got, (const unsigned char *)y->dl_tensor.data + i * es, es);
      ck_assert_msg(got == want[i], "%s element %d: got %llu, want %llu", ic_dtype_name(cases[c].dt), i,
                    (unsigned long long)got, (unsigned long long)want[i]);
    }
    y->deleter(y);
    ic_program_release(p);
    ic_graph_destroy(g);
  }
  ic_context_destroy(ctx);
}
END_TEST

int main(void) {
  Suite *s = suite_create("dlpack");
  TCase *tc = check_tcase("dlpack");
  tcase_add_test(tc, test_dtype_mapping);
  tcase_add_test(tc, test_import_errors);
  tcase_add_test(tc, test_ref_round_trip);
  tcase_add_test(tc, test_ref_round_trip_unsigned);
  suite_add_tcase(s, tc);
  return check_run_suite(s);
}
