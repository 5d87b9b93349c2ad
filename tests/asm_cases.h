/* Inline PTX test cases (issue 13), shared by tests/cpu/test_asm.c (NVRTC compiles of
 * every case for sm_90a, no GPU) and tests/gpu/gpu_asm.c (runs against host references,
 * eager == fused bit for bit). Each case is an asm with its constraints, pack and
 * operand dtypes, and a host reference over one group of `pack` elements (ic.h, "inline
 * PTX": groups run along the last dim, padded with zeros). Every reference here is exact,
 * so results are compared bit for bit. */
#ifndef IC_TESTS_ASM_CASES_H
#define IC_TESTS_ASM_CASES_H

#include <ic/ic.h>
#include <math.h>
#include <string.h>

#include "host_ref.h"

enum { AC_MAX_PACK = 16 };

typedef void (*ac_ref_fn)(int32_t pack, hv in[][AC_MAX_PACK], hv out[][AC_MAX_PACK]);

typedef struct asm_case {
  const char *name;
  const char *text, *constraints;
  int32_t pack;
  bool pure;
  int32_t nin;
  ic_dtype in[3];
  int32_t nout;
  ic_dtype out[2];
  ac_ref_fn ref;
} asm_case;

static void ac_ref_copy(int32_t p, hv in[][AC_MAX_PACK], hv out[][AC_MAX_PACK]) {
  for (int32_t q = 0; q < p; q++) out[0][q] = in[0][q];
}
static void ac_ref_add(int32_t p, hv in[][AC_MAX_PACK], hv out[][AC_MAX_PACK]) {
  for (int32_t q = 0; q < p; q++) out[0][q].f = in[0][q].f + in[1][q].f;
}
static void ac_ref_mul(int32_t p, hv in[][AC_MAX_PACK], hv out[][AC_MAX_PACK]) {
  for (int32_t q = 0; q < p; q++) out[0][q].f = in[0][q].f * in[1][q].f;
}
static void ac_ref_fma(int32_t p, hv in[][AC_MAX_PACK], hv out[][AC_MAX_PACK]) {
  for (int32_t q = 0; q < p; q++) out[0][q].f = fmaf(in[0][q].f, in[1][q].f, in[2][q].f);
}
static void ac_ref_square_add(int32_t p, hv in[][AC_MAX_PACK], hv out[][AC_MAX_PACK]) {
  for (int32_t q = 0; q < p; q++) {
    volatile float t = in[0][q].f * in[0][q].f; /* rounded on its own, as the asm does */
    out[0][q].f = t + in[0][q].f;
  }
}
static void ac_ref_and(int32_t p, hv in[][AC_MAX_PACK], hv out[][AC_MAX_PACK]) {
  for (int32_t q = 0; q < p; q++) out[0][q].i = in[0][q].i & in[1][q].i;
}
static void ac_ref_or(int32_t p, hv in[][AC_MAX_PACK], hv out[][AC_MAX_PACK]) {
  for (int32_t q = 0; q < p; q++) out[0][q].i = in[0][q].i | in[1][q].i;
}
static void ac_ref_exponent(int32_t p, hv in[][AC_MAX_PACK], hv out[][AC_MAX_PACK]) {
  for (int32_t q = 0; q < p; q++) out[0][q].i = (int64_t)((ref_f32_bits(in[0][q].f) >> 23) & 0xffu);
}
static void ac_ref_trunc16(int32_t p, hv in[][AC_MAX_PACK], hv out[][AC_MAX_PACK]) {
  for (int32_t q = 0; q < p; q++) out[0][q].i = (int16_t)(uint16_t)((uint32_t)in[0][q].i & 0xffffu);
}
/* The high 64 bits of the 128-bit product of two u64 (mul.hi.u64), from 32-bit halves. */
static void ac_ref_mul_hi_u64(int32_t p, hv in[][AC_MAX_PACK], hv out[][AC_MAX_PACK]) {
  for (int32_t q = 0; q < p; q++) {
    const uint64_t a = (uint64_t)in[0][q].i, b = (uint64_t)in[1][q].i, m = 0xffffffffu;
    const uint64_t ll = (a & m) * (b & m), lh = (a & m) * (b >> 32), hl = (a >> 32) * (b & m), hh = (a >> 32) * (b >> 32);
    const uint64_t mid = (ll >> 32) + (lh & m) + (hl & m);
    out[0][q].i = (int64_t)(hh + (lh >> 32) + (hl >> 32) + (mid >> 32));
  }
}
/* min.u32 (unsigned where i32 would be signed) and a logical shift of u16 lanes */
static void ac_ref_min_u32(int32_t p, hv in[][AC_MAX_PACK], hv out[][AC_MAX_PACK]) {
  for (int32_t q = 0; q < p; q++) out[0][q].i = (uint64_t)in[0][q].i < (uint64_t)in[1][q].i ? in[0][q].i : in[1][q].i;
}
static void ac_ref_shr1_u16(int32_t p, hv in[][AC_MAX_PACK], hv out[][AC_MAX_PACK]) {
  for (int32_t q = 0; q < p; q++) out[0][q].i = (in[0][q].i & 0xffff) >> 1;
}
static void ac_ref_add_f16(int32_t p, hv in[][AC_MAX_PACK], hv out[][AC_MAX_PACK]) {
  for (int32_t q = 0; q < p; q++) out[0][q].f = ref_round(IC_F16, in[0][q].f + in[1][q].f);
}
static void ac_ref_add_bf16(int32_t p, hv in[][AC_MAX_PACK], hv out[][AC_MAX_PACK]) {
  for (int32_t q = 0; q < p; q++) out[0][q].f = ref_round(IC_BF16, in[0][q].f + in[1][q].f);
}
static void ac_ref_reverse4(int32_t p, hv in[][AC_MAX_PACK], hv out[][AC_MAX_PACK]) {
  for (int32_t g = 0; g < p; g += 4)
    for (int32_t q = 0; q < 4; q++) out[0][g + q] = in[0][g + 3 - q];
}
static void ac_ref_value_and_trunc(int32_t p, hv in[][AC_MAX_PACK], hv out[][AC_MAX_PACK]) {
  for (int32_t q = 0; q < p; q++) {
    out[0][q].f = in[0][q].f;
    out[1][q].i = (int32_t)truncf(in[0][q].f);
  }
}
static void ac_ref_e4m3x2(int32_t p, hv in[][AC_MAX_PACK], hv out[][AC_MAX_PACK]) {
  for (int32_t q = 0; q < p; q++) out[0][q] = ref_convert(IC_F32, IC_F8E4M3, in[0][q], true);
}

/* OR `bits` into each element's storage bits (dtype dt), the result read back as a
 * value: exponent bits all ones, so NaN with every sign and payload, and infinities (the
 * asm's NaN lanes must be stored as the canonical NaN, ic_canon_<dt>x<lanes>). */
static inline void ac_or_bits(ic_dtype dt, uint32_t bits, int32_t p, hv in[][AC_MAX_PACK], hv out[][AC_MAX_PACK]) {
  for (int32_t q = 0; q < p; q++) {
    unsigned char b[4] = {0};
    uint32_t u;
    ref_set(dt, b, 0, in[0][q]);
    memcpy(&u, b, 4);
    u |= bits;
    memcpy(b, &u, 4);
    out[0][q] = ref_get(dt, b, 0);
  }
}
static void ac_ref_or_f16(int32_t p, hv in[][AC_MAX_PACK], hv out[][AC_MAX_PACK]) { ac_or_bits(IC_F16, 0x7c00u, p, in, out); }
static void ac_ref_or_bf16(int32_t p, hv in[][AC_MAX_PACK], hv out[][AC_MAX_PACK]) { ac_or_bits(IC_BF16, 0x7f80u, p, in, out); }
static void ac_ref_or_e4m3(int32_t p, hv in[][AC_MAX_PACK], hv out[][AC_MAX_PACK]) { ac_or_bits(IC_F8E4M3, 0x78u, p, in, out); }
static void ac_ref_or_e5m2(int32_t p, hv in[][AC_MAX_PACK], hv out[][AC_MAX_PACK]) { ac_or_bits(IC_F8E5M2, 0x7cu, p, in, out); }

/* The cases of the issue, each runnable on sm_90. */
static const asm_case ac_cases[] = {
    {"identity f32", "mov.b32 $0, $1;", "=r,r", 1, true, 1, {IC_F32}, 1, {IC_F32}, ac_ref_copy},
    {"add f32", "add.f32 $0, $1, $2;", "=f,f,f", 1, true, 2, {IC_F32, IC_F32}, 1, {IC_F32}, ac_ref_add},
    {"mul f32", "mul.rn.f32 $0, $1, $2;", "=f,f,f", 1, true, 2, {IC_F32, IC_F32}, 1, {IC_F32}, ac_ref_mul},
    {"fma f32", "fma.rn.f32 $0, $1, $2, $3;", "=f,f,f,f", 1, true, 3, {IC_F32, IC_F32, IC_F32}, 1, {IC_F32}, ac_ref_fma},
    {"multi-line with a .reg", "{\n  .reg .f32 t;\n  mul.rn.f32 t, $1, $1;\n  add.rn.f32 $0, t, $1;\n}", "=f,f", 1, true, 1,
     {IC_F32}, 1, {IC_F32}, ac_ref_square_add},
    {"bitwise and", "and.b32 $0, $1, $2;", "=r,r,r", 1, true, 2, {IC_I32, IC_I32}, 1, {IC_I32}, ac_ref_and},
    {"bitwise or", "or.b32 $0, $1, $2;", "=r, r, r", 1, true, 2, {IC_I32, IC_I32}, 1, {IC_I32}, ac_ref_or},
    {"f32 exponent", "{ .reg .b32 t; mov.b32 t, $1; bfe.u32 $0, t, 23, 8; }", "=r,f", 1, true, 1, {IC_F32}, 1, {IC_I32},
     ac_ref_exponent},
    {"u32 to u16", "cvt.u16.u32 $0, $1;", "=h,r", 1, true, 1, {IC_I32}, 1, {IC_I16}, ac_ref_trunc16},
    {"native f16 add", "add.f16 $0, $1, $2;", "=h,h,h", 1, true, 2, {IC_F16, IC_F16}, 1, {IC_F16}, ac_ref_add_f16},
    {"native bf16 add", "add.rn.bf16 $0, $1, $2;", "=h,h,h", 1, true, 2, {IC_BF16, IC_BF16}, 1, {IC_BF16}, ac_ref_add_bf16},
    {"bf16 and f16 upcast for f", "add.f32 $0, $1, $2;", "=f,f,f", 1, true, 2, {IC_BF16, IC_F16}, 1, {IC_F32}, ac_ref_add},
    {"pack 2 identity f16", "mov.b32 $0, $1;", "=r,r", 2, true, 1, {IC_F16}, 1, {IC_F16}, ac_ref_copy},
    {"pack 2 add f16x2", "add.f16x2 $0, $1, $2;", "=r,r,r", 2, true, 2, {IC_F16, IC_F16}, 1, {IC_F16}, ac_ref_add_f16},
    {"pack 4 u8 reversed", "prmt.b32 $0, $1, 0, 0x0123;", "=r,r", 4, true, 1, {IC_U8}, 1, {IC_U8}, ac_ref_reverse4},
    {"two outputs f32 and i32", "mov.b32 $0, $2;\ncvt.rzi.s32.f32 $1, $2;", "=f,=r,f", 1, false, 1, {IC_F32}, 2,
     {IC_F32, IC_I32}, ac_ref_value_and_trunc},
    {"e4m3x2 at pack 2", "cvt.rn.satfinite.e4m3x2.f32 $0, $2, $1;", "=h,f,f", 2, true, 1, {IC_F32}, 1, {IC_F8E4M3},
     ac_ref_e4m3x2},
    {"pack 2 f16 NaN payloads", "or.b32 $0, $1, 0x7c007c00;", "=r,r", 2, true, 1, {IC_F16}, 1, {IC_F16}, ac_ref_or_f16},
    {"pack 2 bf16 NaN payloads", "or.b32 $0, $1, 0x7f807f80;", "=r,r", 2, true, 1, {IC_BF16}, 1, {IC_BF16}, ac_ref_or_bf16},
    {"pack 4 e4m3 NaN bytes", "or.b32 $0, $1, 0x78787878;", "=r,r", 4, true, 1, {IC_F8E4M3}, 1, {IC_F8E4M3},
     ac_ref_or_e4m3},
    {"pack 4 e5m2 NaN bytes", "or.b32 $0, $1, 0x7c7c7c7c;", "=r,r", 4, true, 1, {IC_F8E5M2}, 1, {IC_F8E5M2},
     ac_ref_or_e5m2},
    {"pack 8 e4m3 in a 64-bit register", "or.b64 $0, $1, 0x7878787878787878;", "=l,l", 8, true, 1, {IC_F8E4M3}, 1,
     {IC_F8E4M3}, ac_ref_or_e4m3},
    {"mul.hi.u64", "mul.hi.u64 $0, $1, $2;", "=l,l,l", 1, true, 2, {IC_U64, IC_U64}, 1, {IC_U64}, ac_ref_mul_hi_u64},
    {"min.u32", "min.u32 $0, $1, $2;", "=r,r,r", 1, true, 2, {IC_U32, IC_U32}, 1, {IC_U32}, ac_ref_min_u32},
    {"pack 2 u16 halves shifted right", "{ .reg .b16 l, h;\n  mov.b32 {l, h}, $1;\n  shr.u16 l, l, 1;\n  shr.u16 h, h, 1;\n"
     "  mov.b32 $0, {l, h}; }", "=r,r", 2, true, 1, {IC_U16}, 1, {IC_U16}, ac_ref_shr1_u16},
};
#define AC_NCASES ((int)(sizeof ac_cases / sizeof ac_cases[0]))

/* The case's node over inputs ins (its nin), outputs into outs. */
static inline ic_status ac_build(ic_graph *g, const asm_case *c, const ic_value *ins, ic_value *outs) {
  ic_inline_asm_desc d = {.struct_size = sizeof d, .asm_text = c->text, .constraints = c->constraints,
                          .output_dtypes = c->out, .is_pure = c->pure, .pack = c->pack};
  return ic_graph_inline_asm(g, &d, c->nin, ins, c->nout, outs);
}

/* The host reference of case c over contiguous inputs of shape [rows, d] (the last dim
 * grouped by the pack, padded with zeros): outs[o] gets rows * d values. */
static inline void ac_reference(const asm_case *c, int64_t rows, int64_t d, const void *const *ins, void **outs) {
  int32_t p = c->pack;
  for (int64_t r = 0; r < rows; r++)
    for (int64_t j0 = 0; j0 < d; j0 += p) {
      hv in[3][AC_MAX_PACK], out[2][AC_MAX_PACK];
      memset(in, 0, sizeof in);
      memset(out, 0, sizeof out);
      for (int32_t k = 0; k < c->nin; k++)
        for (int32_t q = 0; q < p && j0 + q < d; q++) in[k][q] = ref_get(c->in[k], ins[k], r * d + j0 + q);
      c->ref(p, in, out);
      for (int32_t o = 0; o < c->nout; o++)
        for (int32_t q = 0; q < p && j0 + q < d; q++) ref_set(c->out[o], outs[o], r * d + j0 + q, out[o][q]);
    }
}

#endif
