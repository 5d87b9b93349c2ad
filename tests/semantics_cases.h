/* The semantics table of include/ic/ic.h, line by line: hand-picked operands whose results
 * the table defines exactly (integer wraparound, division by zero and MIN / -1, shifts by
 * negative and too-large amounts, float -> integer saturation and NaN, fp8 overflow, the
 * saturating cast, single rounding of i64 and f64 conversions, round half to even, NaN and
 * signed-zero rules, bitcast), checked bit for bit. Included after pointwise_cases.h by the
 * CPU test (ref) and the GPU test (cuda). */
#ifndef IC_TESTS_SEMANTICS_CASES_H
#define IC_TESTS_SEMANTICS_CASES_H

#include "pointwise_cases.h"

typedef struct sem_case {
  const char *line; /* what the table says */
  ic_op op;
  ic_dtype dt, out;   /* operand dtype; result dtype (conversions) */
  double fa, fb, fc;  /* float operands */
  int64_t ia, ib;     /* integer operands */
  uint64_t want;      /* the result's bits */
} sem_case;

#define SEM_NAN (0.0 / 0.0)
#define SEM_INF (1.0 / 0.0)

static const sem_case sem_cases[] = {
    {"i8 MIN / -1 wraps", IC_OP_TRUNC_DIVIDE, IC_I8, IC_I8, 0, 0, 0, -128, -1, 0x80},
    {"i8 MIN % -1 is 0", IC_OP_FMOD, IC_I8, IC_I8, 0, 0, 0, -128, -1, 0},
    {"i32 MIN // -1 wraps", IC_OP_FLOOR_DIVIDE, IC_I32, IC_I32, 0, 0, 0, INT32_MIN, -1, 0x80000000u},
    {"i64 MIN / -1 wraps", IC_OP_TRUNC_DIVIDE, IC_I64, IC_I64, 0, 0, 0, INT64_MIN, -1, UINT64_C(0x8000000000000000)},
    {"i64 remainder(MIN, -1) is 0", IC_OP_REMAINDER, IC_I64, IC_I64, 0, 0, 0, INT64_MIN, -1, 0},
    {"division by zero: trunc_divide 0", IC_OP_TRUNC_DIVIDE, IC_I32, IC_I32, 0, 0, 0, 7, 0, 0},
    {"division by zero: floor_divide 0", IC_OP_FLOOR_DIVIDE, IC_I16, IC_I16, 0, 0, 0, -7, 0, 0},
    {"division by zero: fmod 0", IC_OP_FMOD, IC_U8, IC_U8, 0, 0, 0, 7, 0, 0},
    {"division by zero: remainder 0", IC_OP_REMAINDER, IC_I64, IC_I64, 0, 0, 0, 7, 0, 0},
    {"floor_divide rounds down", IC_OP_FLOOR_DIVIDE, IC_I32, IC_I32, 0, 0, 0, -7, 2, 0xfffffffcu},
    {"remainder has b's sign", IC_OP_REMAINDER, IC_I32, IC_I32, 0, 0, 0, -7, 2, 1},
    {"fmod has a's sign", IC_OP_FMOD, IC_I32, IC_I32, 0, 0, 0, -7, 2, 0xffffffffu},
    {"u8 wraps modulo 256 (sub)", IC_OP_SUB, IC_U8, IC_U8, 0, 0, 0, 0, 1, 0xff},
    {"u8 wraps modulo 256 (add)", IC_OP_ADD, IC_U8, IC_U8, 0, 0, 0, 200, 100, 44},
    {"u8 wraps modulo 256 (neg)", IC_OP_NEG, IC_U8, IC_U8, 0, 0, 0, 1, 0, 0xff},
    {"i16 wraps (mul)", IC_OP_MUL, IC_I16, IC_I16, 0, 0, 0, 300, 300, 0x5f90},
    {"u8 shift_right is logical", IC_OP_SHIFT_RIGHT, IC_U8, IC_U8, 0, 0, 0, 200, 1, 100},
    {"u8 shift_left by the width is 0", IC_OP_SHIFT_LEFT, IC_U8, IC_U8, 0, 0, 0, 1, 8, 0},
    {"i16 shift_left into the sign bit", IC_OP_SHIFT_LEFT, IC_I16, IC_I16, 0, 0, 0, 1, 15, 0x8000},
    {"i16 shift_right past the width is -1", IC_OP_SHIFT_RIGHT, IC_I16, IC_I16, 0, 0, 0, -32768, 20, 0xffff},
    {"shift by a negative amount is 0", IC_OP_SHIFT_LEFT, IC_I32, IC_I32, 0, 0, 0, 1, -1, 0},
    {"i32 shift_right by >= 32 is -1", IC_OP_SHIFT_RIGHT, IC_I32, IC_I32, 0, 0, 0, -5, 40, 0xffffffffu},
    {"i64 shift_left by 63", IC_OP_SHIFT_LEFT, IC_I64, IC_I64, 0, 0, 0, 1, 63, UINT64_C(0x8000000000000000)},
    {"i64 shift_left by 64 is 0", IC_OP_SHIFT_LEFT, IC_I64, IC_I64, 0, 0, 0, 1, 64, 0},
    {"abs(INT_MIN) wraps", IC_OP_ABS, IC_I32, IC_I32, 0, 0, 0, INT32_MIN, 0, 0x80000000u},
    {"i8 abs(-128) wraps", IC_OP_ABS, IC_I8, IC_I8, 0, 0, 0, -128, 0, 0x80},
    {"i32 sign", IC_OP_SIGN, IC_I32, IC_I32, 0, 0, 0, -5, 0, 0xffffffffu},
    {"float -> i8 saturates", IC_OP_CAST, IC_F32, IC_I8, 300.7, 0, 0, 0, 0, 0x7f},
    {"float -> i8 saturates below", IC_OP_CAST, IC_F32, IC_I8, -1e10, 0, 0, 0, 0, 0x80},
    {"float -> int truncates", IC_OP_CAST, IC_F32, IC_I8, -2.9, 0, 0, 0, 0, 0xfe},
    {"float NaN -> int is 0", IC_OP_CAST, IC_F32, IC_I32, SEM_NAN, 0, 0, 0, 0, 0},
    {"f64 NaN -> i64 is 0", IC_OP_CAST, IC_F64, IC_I64, SEM_NAN, 0, 0, 0, 0, 0},
    {"f16 NaN -> i64 is 0", IC_OP_CAST, IC_F16, IC_I64, SEM_NAN, 0, 0, 0, 0, 0},
    {"inf -> i32 saturates", IC_OP_CAST, IC_F32, IC_I32, SEM_INF, 0, 0, 0, 0, 0x7fffffffu},
    {"-inf -> i64 saturates", IC_OP_CAST, IC_F64, IC_I64, -SEM_INF, 0, 0, 0, 0, UINT64_C(0x8000000000000000)},
    {"float -> u8 below 0 saturates", IC_OP_CAST, IC_F32, IC_U8, -3.0, 0, 0, 0, 0, 0},
    {"integer -> integer wraps", IC_OP_CAST, IC_I32, IC_U8, 0, 0, 0, 300, 0, 44},
    {"integer -> integer wraps (signed)", IC_OP_CAST, IC_I32, IC_I8, 0, 0, 0, 200, 0, 0xc8},
    {"cast_saturate integer clamps above", IC_OP_CAST_SATURATE, IC_I32, IC_U8, 0, 0, 0, 300, 0, 0xff},
    {"cast_saturate integer clamps below", IC_OP_CAST_SATURATE, IC_I32, IC_U8, 0, 0, 0, -5, 0, 0},
    {"cast_saturate i64 -> i32", IC_OP_CAST_SATURATE, IC_I64, IC_I32, 0, 0, 0, INT64_C(1000000000000), 0, 0x7fffffffu},
    {"f8e4m3: 464 ties to 448", IC_OP_CAST, IC_F32, IC_F8E4M3, 464.0, 0, 0, 0, 0, 0x7e},
    {"f8e4m3: overflow is NaN", IC_OP_CAST, IC_F32, IC_F8E4M3, 465.0, 0, 0, 0, 0, 0x7f},
    {"f8e4m3: overflow is the NaN 0x7f, whatever the sign", IC_OP_CAST, IC_F32, IC_F8E4M3, -1000.0, 0, 0, 0, 0, 0x7f},
    {"f8e4m3: inf is NaN", IC_OP_CAST, IC_F32, IC_F8E4M3, SEM_INF, 0, 0, 0, 0, 0x7f},
    {"f8e4m3: NaN is 0x7f", IC_OP_CAST, IC_F32, IC_F8E4M3, SEM_NAN, 0, 0, 0, 0, 0x7f},
    {"f8e4m3: smallest subnormal", IC_OP_CAST, IC_F32, IC_F8E4M3, 0.001953125, 0, 0, 0, 0, 0x01},
    {"f8e4m3: half the smallest ties to 0", IC_OP_CAST, IC_F32, IC_F8E4M3, 0.0009765625, 0, 0, 0, 0, 0x00},
    {"f8e4m3 saturating: 448", IC_OP_CAST_SATURATE, IC_F32, IC_F8E4M3, 1000.0, 0, 0, 0, 0, 0x7e},
    {"f8e4m3 saturating: -inf", IC_OP_CAST_SATURATE, IC_F32, IC_F8E4M3, -SEM_INF, 0, 0, 0, 0, 0xfe},
    {"f8e4m3 saturating: NaN stays", IC_OP_CAST_SATURATE, IC_F32, IC_F8E4M3, SEM_NAN, 0, 0, 0, 0, 0x7f},
    {"f8e5m2: 61440 ties to inf", IC_OP_CAST, IC_F32, IC_F8E5M2, 61440.0, 0, 0, 0, 0, 0x7c},
    {"f8e5m2: below the tie is 57344", IC_OP_CAST, IC_F32, IC_F8E5M2, 61439.0, 0, 0, 0, 0, 0x7b},
    {"f8e5m2: -inf", IC_OP_CAST, IC_F32, IC_F8E5M2, -SEM_INF, 0, 0, 0, 0, 0xfc},
    {"f8e5m2 saturating: 57344", IC_OP_CAST_SATURATE, IC_F32, IC_F8E5M2, 1e9, 0, 0, 0, 0, 0x7b},
    {"f8e5m2: NaN is 0x7f", IC_OP_CAST, IC_F64, IC_F8E5M2, SEM_NAN, 0, 0, 0, 0, 0x7f},
    {"f16 overflow is inf", IC_OP_CAST, IC_F32, IC_F16, 1e6, 0, 0, 0, 0, 0x7c00},
    {"f16 saturating: 65504", IC_OP_CAST_SATURATE, IC_F32, IC_F16, 1e6, 0, 0, 0, 0, 0x7bff},
    {"f16 saturating: inf -> 65504", IC_OP_CAST_SATURATE, IC_F32, IC_F16, SEM_INF, 0, 0, 0, 0, 0x7bff},
    {"f32 saturating: inf -> max", IC_OP_CAST_SATURATE, IC_F32, IC_F32, -SEM_INF, 0, 0, 0, 0, 0xff7fffffu},
    {"i32 -> f16 overflow is inf", IC_OP_CAST, IC_I32, IC_F16, 0, 0, 0, 65520, 0, 0x7c00},
    {"i32 -> f16 saturating", IC_OP_CAST_SATURATE, IC_I32, IC_F16, 0, 0, 0, 65520, 0, 0x7bff},
    {"i64 -> f16 ties to even (down)", IC_OP_CAST, IC_I64, IC_F16, 0, 0, 0, 2049, 0, 0x6800},
    {"i64 -> f16 ties to even (up)", IC_OP_CAST, IC_I64, IC_F16, 0, 0, 0, 2051, 0, 0x6802},
    {"i64 -> bf16 rounds once", IC_OP_CAST, IC_I64, IC_BF16, 0, 0, 0, (INT64_C(1) << 62) + (INT64_C(1) << 54) + 1, 0,
     0x5e81},
    {"f64 -> bf16 rounds once", IC_OP_CAST, IC_F64, IC_BF16, 1.0 + 0.00390625 + 9.094947017729282e-13, 0, 0, 0, 0,
     0x3f81},
    {"f64 -> f32 NaN is canonical", IC_OP_CAST, IC_F64, IC_F32, SEM_NAN, 0, 0, 0, 0, 0x7fffffffu},
    {"x -> bool: NaN is true", IC_OP_CAST, IC_F32, IC_BOOL, SEM_NAN, 0, 0, 0, 0, 1},
    {"bool -> f16 is 1", IC_OP_CAST, IC_BOOL, IC_F16, 0, 0, 0, 1, 0, 0x3c00},
    {"round half to even (down)", IC_OP_ROUND, IC_F32, IC_F32, 2.5, 0, 0, 0, 0, 0x40000000u},
    {"round half to even (up)", IC_OP_ROUND, IC_F32, IC_F32, 3.5, 0, 0, 0, 0, 0x40800000u},
    {"round half to even (negative)", IC_OP_ROUND, IC_F32, IC_F32, -2.5, 0, 0, 0, 0, 0xc0000000u},
    {"round half to even (f16 0.5)", IC_OP_ROUND, IC_F16, IC_F16, 0.5, 0, 0, 0, 0, 0x0000},
    {"maximum propagates NaN", IC_OP_MAXIMUM, IC_F32, IC_F32, SEM_NAN, 1.0, 0, 0, 0, 0x7fffffffu},
    {"fmax ignores NaN", IC_OP_FMAX, IC_F32, IC_F32, SEM_NAN, 1.0, 0, 0, 0, 0x3f800000u},
    {"maximum(-0, +0) = +0", IC_OP_MAXIMUM, IC_F32, IC_F32, -0.0, 0.0, 0, 0, 0, 0},
    {"minimum(-0, +0) = -0", IC_OP_MINIMUM, IC_F64, IC_F64, 0.0, -0.0, 0, 0, 0, UINT64_C(0x8000000000000000)},
    {"sign(-0) = -0", IC_OP_SIGN, IC_F32, IC_F32, -0.0, 0, 0, 0, 0, 0x80000000u},
    {"relu(-0) = +0", IC_OP_RELU, IC_F32, IC_F32, -0.0, 0, 0, 0, 0, 0},
    {"fmod has a's sign (float)", IC_OP_FMOD, IC_F32, IC_F32, -7.5, 2.0, 0, 0, 0, 0xbfc00000u},
    {"remainder has b's sign (float)", IC_OP_REMAINDER, IC_F32, IC_F32, -7.5, 2.0, 0, 0, 0, 0x3f000000u},
    {"fma rounds once", IC_OP_FMA, IC_F32, IC_F32, 1.000244140625, 1.000244140625, -1.00048828125, 0, 0, 0x33800000u},
    {"f8e4m3 results round: 448 + 16 = 448", IC_OP_ADD, IC_F8E4M3, IC_F8E4M3, 448.0, 16.0, 0, 0, 0, 0x7e},
    {"f8e4m3 results overflow to NaN", IC_OP_ADD, IC_F8E4M3, IC_F8E4M3, 448.0, 32.0, 0, 0, 0, 0x7f},
    {"f8e5m2 results overflow to inf", IC_OP_MUL, IC_F8E5M2, IC_F8E5M2, 57344.0, 2.0, 0, 0, 0, 0x7c},
    {"bitcast f32 -> i32", IC_OP_BITCAST, IC_F32, IC_I32, 1.0, 0, 0, 0, 0, 0x3f800000u},
    {"bitcast i16 -> f16", IC_OP_BITCAST, IC_I16, IC_F16, 0, 0, 0, 0x3c00, 0, 0x3c00},
    {"bitcast u8 -> i8", IC_OP_BITCAST, IC_U8, IC_I8, 0, 0, 0, 0xff, 0, 0xff},
    {"bitcast f64 -> i64", IC_OP_BITCAST, IC_F64, IC_I64, 1.0, 0, 0, 0, 0, UINT64_C(0x3ff0000000000000)},
    {"bitcast i64 -> f64", IC_OP_BITCAST, IC_I64, IC_F64, 0, 0, 0, INT64_C(0x4000000000000000), 0,
     UINT64_C(0x4000000000000000)},
    /* u16, u32, u64: unsigned arithmetic modulo 2^width (u64 operands above INT64_MAX are
     * given by their bits as int64) */
    {"u16 wraps (add)", IC_OP_ADD, IC_U16, IC_U16, 0, 0, 0, 65535, 1, 0},
    {"u16 wraps (sub)", IC_OP_SUB, IC_U16, IC_U16, 0, 0, 0, 0, 1, 0xffff},
    {"u32 wraps (mul)", IC_OP_MUL, IC_U32, IC_U32, 0, 0, 0, INT64_C(0x80000000), 2, 0},
    {"u32 wraps (neg)", IC_OP_NEG, IC_U32, IC_U32, 0, 0, 0, 1, 0, 0xffffffffu},
    {"u64 wraps (sub)", IC_OP_SUB, IC_U64, IC_U64, 0, 0, 0, 0, 1, UINT64_MAX},
    {"u64 wraps (add)", IC_OP_ADD, IC_U64, IC_U64, 0, 0, 0, -1, 2, 1},
    {"u32 division is unsigned", IC_OP_TRUNC_DIVIDE, IC_U32, IC_U32, 0, 0, 0, INT64_C(0xfffffffe), 2, 0x7fffffffu},
    {"u64 floor_divide is unsigned", IC_OP_FLOOR_DIVIDE, IC_U64, IC_U64, 0, 0, 0, -1, 3, UINT64_C(0x5555555555555555)},
    {"u64 remainder is unsigned", IC_OP_REMAINDER, IC_U64, IC_U64, 0, 0, 0, -1, 10, 5},
    {"u64 fmod is unsigned", IC_OP_FMOD, IC_U64, IC_U64, 0, 0, 0, INT64_MIN, 3, 2},
    {"u32 division by zero is 0", IC_OP_TRUNC_DIVIDE, IC_U32, IC_U32, 0, 0, 0, 7, 0, 0},
    {"u64 remainder by zero is 0", IC_OP_REMAINDER, IC_U64, IC_U64, 0, 0, 0, -1, 0, 0},
    {"u16 floor_divide by zero is 0", IC_OP_FLOOR_DIVIDE, IC_U16, IC_U16, 0, 0, 0, 9, 0, 0},
    {"u32 shift_right is logical", IC_OP_SHIFT_RIGHT, IC_U32, IC_U32, 0, 0, 0, INT64_C(0x80000000), 31, 1},
    {"u64 shift_right is logical", IC_OP_SHIFT_RIGHT, IC_U64, IC_U64, 0, 0, 0, INT64_MIN, 63, 1},
    {"u16 shift_left by the width is 0", IC_OP_SHIFT_LEFT, IC_U16, IC_U16, 0, 0, 0, 1, 16, 0},
    {"u16 shift_left drops the high bits", IC_OP_SHIFT_LEFT, IC_U16, IC_U16, 0, 0, 0, 0x8001, 1, 2},
    {"u32 shift_left by 2^32 - 1 is 0", IC_OP_SHIFT_LEFT, IC_U32, IC_U32, 0, 0, 0, 1, INT64_C(0xffffffff), 0},
    {"u64 shift_left by 64 is 0", IC_OP_SHIFT_LEFT, IC_U64, IC_U64, 0, 0, 0, 1, 64, 0},
    {"u64 shift_right by 2^64 - 1 is 0", IC_OP_SHIFT_RIGHT, IC_U64, IC_U64, 0, 0, 0, -1, -1, 0},
    {"u64 maximum is unsigned", IC_OP_MAXIMUM, IC_U64, IC_U64, 0, 0, 0, INT64_MIN, 1, UINT64_C(0x8000000000000000)},
    {"u32 minimum is unsigned", IC_OP_MINIMUM, IC_U32, IC_U32, 0, 0, 0, INT64_C(0xffffffff), 1, 1},
    {"u64 lt is unsigned", IC_OP_LT, IC_U64, IC_BOOL, 0, 0, 0, 1, INT64_MIN, 1},
    {"u32 ge is unsigned", IC_OP_GE, IC_U32, IC_BOOL, 0, 0, 0, INT64_C(0x80000000), 1, 1},
    {"u64 abs is the value", IC_OP_ABS, IC_U64, IC_U64, 0, 0, 0, INT64_MIN, 0, UINT64_C(0x8000000000000000)},
    {"u32 relu is the value", IC_OP_RELU, IC_U32, IC_U32, 0, 0, 0, INT64_C(0x80000000), 0, 0x80000000u},
    {"u64 sign is 1 for a nonzero", IC_OP_SIGN, IC_U64, IC_U64, 0, 0, 0, -1, 0, 1},
    {"u16 bitwise_not", IC_OP_BITWISE_NOT, IC_U16, IC_U16, 0, 0, 0, 0x00f0, 0, 0xff0f},
    {"float -> u32 above 2^31", IC_OP_CAST, IC_F32, IC_U32, 3e9, 0, 0, 0, 0, 3000000000u},
    {"float -> u32 below 0 saturates", IC_OP_CAST, IC_F32, IC_U32, -1.0, 0, 0, 0, 0, 0},
    {"float -> u32 above saturates", IC_OP_CAST, IC_F32, IC_U32, 1e20, 0, 0, 0, 0, 0xffffffffu},
    {"float NaN -> u32 is 0", IC_OP_CAST, IC_F32, IC_U32, SEM_NAN, 0, 0, 0, 0, 0},
    {"f64 -> u64 above 2^63", IC_OP_CAST, IC_F64, IC_U64, 1e19, 0, 0, 0, 0, UINT64_C(10000000000000000000)},
    {"f64 2^64 -> u64 saturates", IC_OP_CAST, IC_F64, IC_U64, 18446744073709551616.0, 0, 0, 0, 0, UINT64_MAX},
    {"f64 -> u64 below 0 saturates", IC_OP_CAST, IC_F64, IC_U64, -5.5, 0, 0, 0, 0, 0},
    {"f64 NaN -> u64 is 0", IC_OP_CAST, IC_F64, IC_U64, SEM_NAN, 0, 0, 0, 0, 0},
    {"f32 inf -> u64 saturates", IC_OP_CAST, IC_F32, IC_U64, SEM_INF, 0, 0, 0, 0, UINT64_MAX},
    {"f16 -> u16 truncates", IC_OP_CAST, IC_F16, IC_U16, 65504.0, 0, 0, 0, 0, 65504},
    {"f32 -> u16 saturates", IC_OP_CAST, IC_F32, IC_U16, 70000.0, 0, 0, 0, 0, 0xffff},
    {"f32 -> u16 below 0 saturates", IC_OP_CAST, IC_F32, IC_U16, -3.0, 0, 0, 0, 0, 0},
    {"u64 -> f32 rounds once", IC_OP_CAST, IC_U64, IC_F32, 0, 0, 0, -1, 0, 0x5f800000u},
    {"u64 -> f64 rounds once", IC_OP_CAST, IC_U64, IC_F64, 0, 0, 0, INT64_MIN + 1, 0, UINT64_C(0x43e0000000000000)},
    {"u32 -> f32 rounds once", IC_OP_CAST, IC_U32, IC_F32, 0, 0, 0, INT64_C(0xffffffff), 0, 0x4f800000u},
    {"u64 -> bf16 rounds once", IC_OP_CAST, IC_U64, IC_BF16, 0, 0, 0, (int64_t)(UINT64_C(1) << 63 | UINT64_C(1) << 55 | 1), 0,
     0x5f01},
    {"u32 -> f16 rounds once", IC_OP_CAST, IC_U32, IC_F16, 0, 0, 0, 2049, 0, 0x6800},
    {"u16 -> f16 overflow is inf", IC_OP_CAST, IC_U16, IC_F16, 0, 0, 0, 65520, 0, 0x7c00},
    {"u16 -> f16 saturating", IC_OP_CAST_SATURATE, IC_U16, IC_F16, 0, 0, 0, 65520, 0, 0x7bff},
    {"u64 -> f8e4m3 overflow is NaN", IC_OP_CAST, IC_U64, IC_F8E4M3, 0, 0, 0, -1, 0, 0x7f},
    {"u64 -> f8e4m3 saturating", IC_OP_CAST_SATURATE, IC_U64, IC_F8E4M3, 0, 0, 0, -1, 0, 0x7e},
    {"u32 -> f8e5m2 rounds", IC_OP_CAST, IC_U32, IC_F8E5M2, 0, 0, 0, 5, 0, 0x45},
    {"i32 -> u32 wraps", IC_OP_CAST, IC_I32, IC_U32, 0, 0, 0, -1, 0, 0xffffffffu},
    {"i64 -> u16 wraps", IC_OP_CAST, IC_I64, IC_U16, 0, 0, 0, -1, 0, 0xffff},
    {"i8 -> u64 wraps (sign-extends)", IC_OP_CAST, IC_I8, IC_U64, 0, 0, 0, -2, 0, UINT64_C(0xfffffffffffffffe)},
    {"u64 -> i64 wraps", IC_OP_CAST, IC_U64, IC_I64, 0, 0, 0, -1, 0, UINT64_MAX},
    {"u64 -> i32 wraps", IC_OP_CAST, IC_U64, IC_I32, 0, 0, 0, INT64_C(0x100000005), 0, 5},
    {"u32 -> u16 wraps", IC_OP_CAST, IC_U32, IC_U16, 0, 0, 0, 70000, 0, 70000 - 65536},
    {"cast_saturate u64 -> i64 clamps", IC_OP_CAST_SATURATE, IC_U64, IC_I64, 0, 0, 0, -1, 0, UINT64_C(0x7fffffffffffffff)},
    {"cast_saturate u64 -> i32 clamps", IC_OP_CAST_SATURATE, IC_U64, IC_I32, 0, 0, 0, INT64_MIN, 0, 0x7fffffffu},
    {"cast_saturate u64 -> u16 clamps", IC_OP_CAST_SATURATE, IC_U64, IC_U16, 0, 0, 0, INT64_MIN, 0, 0xffff},
    {"cast_saturate u64 -> u32 clamps", IC_OP_CAST_SATURATE, IC_U64, IC_U32, 0, 0, 0, -1, 0, 0xffffffffu},
    {"cast_saturate u64 -> u64 keeps", IC_OP_CAST_SATURATE, IC_U64, IC_U64, 0, 0, 0, -1, 0, UINT64_MAX},
    {"cast_saturate i64 -> u64 clamps below", IC_OP_CAST_SATURATE, IC_I64, IC_U64, 0, 0, 0, -5, 0, 0},
    {"cast_saturate i32 -> u32 clamps below", IC_OP_CAST_SATURATE, IC_I32, IC_U32, 0, 0, 0, -5, 0, 0},
    {"cast_saturate i64 -> u32 clamps above", IC_OP_CAST_SATURATE, IC_I64, IC_U32, 0, 0, 0, INT64_C(1) << 40, 0, 0xffffffffu},
    {"cast_saturate u32 -> i32 clamps", IC_OP_CAST_SATURATE, IC_U32, IC_I32, 0, 0, 0, INT64_C(0xffffffff), 0, 0x7fffffffu},
    {"cast_saturate u32 -> u16 clamps", IC_OP_CAST_SATURATE, IC_U32, IC_U16, 0, 0, 0, 70000, 0, 0xffff},
    {"cast_saturate i16 -> u16 clamps below", IC_OP_CAST_SATURATE, IC_I16, IC_U16, 0, 0, 0, -1, 0, 0},
    {"u64 -> bool", IC_OP_CAST, IC_U64, IC_BOOL, 0, 0, 0, INT64_MIN, 0, 1},
    {"bool -> u64 is 1", IC_OP_CAST, IC_BOOL, IC_U64, 0, 0, 0, 1, 0, 1},
    {"bitcast u32 -> f32", IC_OP_BITCAST, IC_U32, IC_F32, 0, 0, 0, 0x3f800000, 0, 0x3f800000u},
    {"bitcast f64 -> u64", IC_OP_BITCAST, IC_F64, IC_U64, 1.0, 0, 0, 0, 0, UINT64_C(0x3ff0000000000000)},
    {"bitcast i16 -> u16", IC_OP_BITCAST, IC_I16, IC_U16, 0, 0, 0, -1, 0, 0xffff},
    {"bitcast u16 -> bf16", IC_OP_BITCAST, IC_U16, IC_BF16, 0, 0, 0, 0x3f80, 0, 0x3f80},
};

static hv sem_operand(ic_dtype dt, double f, int64_t i) {
  hv v = {0};
  if (dt == IC_BOOL) v.b = i != 0;
  else if (ref_is_int(dt)) v.i = i;
  else if (dt == IC_F64) v.d = f;
  else v.f = ref_round(dt, (float)f); /* the chosen operands are exact in their dtype */
  return v;
}

START_TEST(test_semantics_table) {
  for (size_t k = 0; k < sizeof sem_cases / sizeof *sem_cases; k++) {
    const sem_case *c = &sem_cases[k];
    ic_graph *g;
    IC_OK_OR_FAIL(ic_graph_create(&g));
    ic_dim one = 1;
    ic_value in[3] = {ic_graph_input(g, "a", c->dt, 1, &one, 0), ic_graph_input(g, "b", c->dt, 1, &one, 0),
                      ic_graph_input(g, "c", c->dt, 1, &one, 0)};
    ic_value v = c->op == IC_OP_CAST            ? ic_graph_cast(g, in[0], c->out)
                 : c->op == IC_OP_CAST_SATURATE ? ic_graph_cast_saturate(g, in[0], c->out)
                 : c->op == IC_OP_BITCAST       ? ic_graph_bitcast(g, in[0], c->out)
                                                : ic_graph_op(g, c->op, ic_op_arity(c->op), in);
    ck_assert_msg(v != IC_INVALID_VALUE, "%s: %s", c->line, ic_last_error());
    IC_OK_OR_FAIL(ic_graph_output(g, "y", v));
    ic_program *p;
    IC_OK_OR_FAIL(compile_for_backend(g, &p));
    size_t es = ic_dtype_size(c->dt), os = ic_dtype_size(c->out);
    unsigned char host[3][8] = {{0}};
    ref_set(c->dt, host[0], 0, sem_operand(c->dt, c->fa, c->ia));
    ref_set(c->dt, host[1], 0, sem_operand(c->dt, c->fb, c->ib));
    ref_set(c->dt, host[2], 0, sem_operand(c->dt, c->fc, 0));
    int64_t shape[1] = {1};
    ic_tensor ins[3], out = {mem_poisoned(os), c->out, 1, shape, NULL};
    for (int i = 0; i < 3; i++) ins[i] = (ic_tensor){mem_upload(host[i], es), c->dt, 1, shape, NULL};
    IC_OK_OR_FAIL(ic_program_run(p, ins, 3, &out, 1, NULL));
    mem_sync();
    void *got = mem_download(out.data, os);
    uint64_t bits = 0;
    memcpy(&bits, got, os); /* little-endian: the low bytes */
    ck_assert_msg(bits == c->want, "%s (%s %s -> %s): got 0x%llx, want 0x%llx", c->line, ic_op_name(c->op),
                  ic_dtype_name(c->dt), ic_dtype_name(c->out), (unsigned long long)bits, (unsigned long long)c->want);
    free(got);
    for (int i = 0; i < 3; i++) mem_free(ins[i].data);
    mem_free(out.data);
    ic_program_release(p);
    ic_graph_destroy(g);
  }
}
END_TEST

#endif
