// The prelude every CUDA kernel source ic generates starts with: self-contained helpers
// (NVRTC ships no cuda_fp16.h), PTX loads/stores/conversions, and the op semantics of
// ic.h as helpers overloaded by compute type and named by the op's spelling (codegen
// writes ic_<op>(...) whatever the dtype).
//
// Not a header to #include: ic embeds this file at build time (cmake/embed.cmake) as the
// string cuda_prelude (lib/backend/cuda/cuda_backend.h). Only the text after the marker
// line below is embedded, byte for byte. A kernel's source carries the parts of it that
// the kernel names, and theirs (lib/backend/cuda/prelude.c cuts it into definitions,
// macros and #if blocks: declare a helper as `__device__ ... ic_name(` on its first line,
// or through a macro whose uses are `IC_MACRO(...)`), and so they are part of its cache
// key; a batch of kernels in one NVRTC call carries all of it once.
// ---- embedded below ----
typedef unsigned char ic_u8;
typedef unsigned short ic_u16;
typedef unsigned int ic_u32;
typedef unsigned long long ic_u64;
typedef long long ic_i64;

/* Read-only data is loaded through the non-coherent path (.nc); the kernel never writes a
 * buffer it reads. Plain asm: pure loads the compiler may schedule. */
__device__ __forceinline__ ic_u32 ic_ld_s8(const ic_u8 *p) { ic_u32 v; asm("ld.global.nc.u8 %0, [%1];" : "=r"(v) : "l"(p)); return v; }
__device__ __forceinline__ ic_u32 ic_ld_s16(const ic_u8 *p) { ic_u16 v; asm("ld.global.nc.u16 %0, [%1];" : "=h"(v) : "l"(p)); return v; }
__device__ __forceinline__ ic_u32 ic_ld_s32(const ic_u8 *p) { ic_u32 v; asm("ld.global.nc.b32 %0, [%1];" : "=r"(v) : "l"(p)); return v; }
__device__ __forceinline__ ic_u64 ic_ld_s64(const ic_u8 *p) { ic_u64 v; asm("ld.global.nc.b64 %0, [%1];" : "=l"(v) : "l"(p)); return v; }
__device__ __forceinline__ void ic_ld_w1(const ic_u8 *p, ic_u32 *w) { asm("ld.global.nc.b32 %0, [%1];" : "=r"(w[0]) : "l"(p)); }
__device__ __forceinline__ void ic_ld_w2(const ic_u8 *p, ic_u32 *w) { asm("ld.global.nc.v2.b32 {%0, %1}, [%2];" : "=r"(w[0]), "=r"(w[1]) : "l"(p)); }
__device__ __forceinline__ void ic_ld_w4(const ic_u8 *p, ic_u32 *w) { asm("ld.global.nc.v4.b32 {%0, %1, %2, %3}, [%4];" : "=r"(w[0]), "=r"(w[1]), "=r"(w[2]), "=r"(w[3]) : "l"(p)); }
/* Column reductions' element loads (codegen_reduce.c): a warp reads 128 bytes of a row
 * and the next load another row; not allocated in L1 (measured on the H100, ic's column
 * order: 86% -> 91-95% of copy, 99.6% with 1024-thread blocks; bench/results/2026-12-05-reductions-h100.md). */
__device__ __forceinline__ ic_u32 ic_ld_na_s8(const ic_u8 *p) { ic_u32 v; asm("ld.global.L1::no_allocate.u8 %0, [%1];" : "=r"(v) : "l"(p)); return v; }
__device__ __forceinline__ ic_u32 ic_ld_na_s16(const ic_u8 *p) { ic_u16 v; asm("ld.global.L1::no_allocate.u16 %0, [%1];" : "=h"(v) : "l"(p)); return v; }
__device__ __forceinline__ ic_u32 ic_ld_na_s32(const ic_u8 *p) { ic_u32 v; asm("ld.global.L1::no_allocate.b32 %0, [%1];" : "=r"(v) : "l"(p)); return v; }
__device__ __forceinline__ ic_u64 ic_ld_na_s64(const ic_u8 *p) { ic_u64 v; asm("ld.global.L1::no_allocate.b64 %0, [%1];" : "=l"(v) : "l"(p)); return v; }
/* Outputs are written once and not read again by this kernel: streaming stores (.cs).
 * asm volatile: stores must stay where they are. */
__device__ __forceinline__ void ic_st_s8(ic_u8 *p, ic_u32 v) { asm volatile("st.global.cs.u8 [%0], %1;" :: "l"(p), "h"((ic_u16)v) : "memory"); }
__device__ __forceinline__ void ic_st_s16(ic_u8 *p, ic_u32 v) { asm volatile("st.global.cs.u16 [%0], %1;" :: "l"(p), "h"((ic_u16)v) : "memory"); }
__device__ __forceinline__ void ic_st_s32(ic_u8 *p, ic_u32 v) { asm volatile("st.global.cs.b32 [%0], %1;" :: "l"(p), "r"(v) : "memory"); }
__device__ __forceinline__ void ic_st_s64(ic_u8 *p, ic_u64 v) { asm volatile("st.global.cs.b64 [%0], %1;" :: "l"(p), "l"(v) : "memory"); }
__device__ __forceinline__ void ic_st_w1(ic_u8 *p, const ic_u32 *w) { asm volatile("st.global.cs.b32 [%0], %1;" :: "l"(p), "r"(w[0]) : "memory"); }
__device__ __forceinline__ void ic_st_w2(ic_u8 *p, const ic_u32 *w) { asm volatile("st.global.cs.v2.b32 [%0], {%1, %2};" :: "l"(p), "r"(w[0]), "r"(w[1]) : "memory"); }
__device__ __forceinline__ void ic_st_w4(ic_u8 *p, const ic_u32 *w) { asm volatile("st.global.cs.v4.b32 [%0], {%1, %2, %3, %4};" :: "l"(p), "r"(w[0]), "r"(w[1]), "r"(w[2]), "r"(w[3]) : "memory"); }
/* A reduction chunk of n words (n = 2, 4, 8 or 16: 8 elements) at p, which is aligned to
 * its element only (a row whose start is not): the aligned vectors that hold it (16 bytes,
 * 8 for n = 2; the last one only where p is not aligned, so nothing past the chunk's own
 * vectors is read), each word funneled from two neighbours. The chunk's elements and
 * bits are the element loads'; n is a constant where it is called, so u stays in
 * registers. */
__device__ __forceinline__ void ic_ld_shift(const ic_u8 *p, ic_u32 *w, int n) {
  const unsigned vb = n < 4 ? 8u : 16u, off = (unsigned)((ic_u64)p & (vb - 1u)), ow = off >> 2, sh = (off & 3u) * 8u;
  const ic_u8 *a = p - off;
  ic_u32 u[20];
#pragma unroll
  for (int q = 0; q < 20; q++) u[q] = 0u;
  if (n < 4) {
    ic_ld_w2(a, u);
    if (off != 0u) ic_ld_w2(a + 8, &u[2]);
  } else {
#pragma unroll
    for (int q = 0; q < n; q += 4) ic_ld_w4(a + 4 * q, &u[q]);
    if (off != 0u) ic_ld_w4(a + 4 * n, &u[n]);
  }
#pragma unroll
  for (int i = 0; i < n; i++) {
    const ic_u32 lo = ow == 0u ? u[i] : ow == 1u ? u[i + 1] : ow == 2u ? u[i + 2] : u[i + 3];
    const ic_u32 hi = ow == 0u ? u[i + 1] : ow == 1u ? u[i + 2] : ow == 2u ? u[i + 3] : u[i + 4];
    w[i] = __funnelshift_r(lo, hi, sh);
  }
}
/* A chunk of n words to p, aligned to its element only: 16- or 8-byte vectors where p is
 * so aligned, else words, halves (a 2-byte aligned p: the words shifted by 16 bits
 * between a half at each end) or bytes; every byte once, none outside the chunk. */
__device__ __forceinline__ void ic_st_shift(ic_u8 *p, const ic_u32 *w, int n) {
  const unsigned m = (unsigned)((ic_u64)p & 15u);
  if (n >= 4 && m == 0u) {
#pragma unroll
    for (int q = 0; q < n; q += 4) ic_st_w4(p + 4 * q, &w[q]);
  } else if ((m & 7u) == 0u) {
#pragma unroll
    for (int q = 0; q < n; q += 2) ic_st_w2(p + 4 * q, &w[q]);
  } else if ((m & 3u) == 0u) {
#pragma unroll
    for (int q = 0; q < n; q++) ic_st_s32(p + 4 * q, w[q]);
  } else if ((m & 1u) == 0u) {
    ic_st_s16(p, w[0]);
#pragma unroll
    for (int q = 0; q + 1 < n; q++) ic_st_s32(p + 2 + 4 * q, __funnelshift_r(w[q], w[q + 1], 16u));
    ic_st_s16(p + 4 * n - 2, w[n - 1] >> 16);
  } else {
#pragma unroll
    for (int q = 0; q < 4 * n; q++) ic_st_s8(p + q, w[q / 4] >> (q % 4) * 8);
  }
}

/* ---- conversions. Compute types: bool; int (u8, u16, i8, i16, i32); ic_u32 (u32); ic_i64;
 * ic_u64 (u64); float (f16, bf16, f32, f8e4m3, f8e5m2); double (f64). */
__device__ __forceinline__ float ic_canonical_nan(void) { return __uint_as_float(0x7fffffffu); }
__device__ __forceinline__ double ic_canonical_nan_f64(void) { return __longlong_as_double(0x7fffffffffffffffll); }
/* f16 / bf16 storage <-> f32 through PTX cvt (round to nearest even). */
__device__ __forceinline__ float ic_h2f(ic_u32 h) { float f; asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"((ic_u16)h)); return f; }
__device__ __forceinline__ ic_u32 ic_f2h(float f) { ic_u16 h; asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f)); return h; }
__device__ __forceinline__ float ic_bf2f(ic_u32 h) { return __uint_as_float(h << 16); }
__device__ __forceinline__ ic_u32 ic_f2bf(float f) { ic_u16 h; asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(f)); return h; }
/* fp8 -> f32, exact: e5m2 is the upper byte of an f16; e4m3fn (0x7f/0xff are its NaNs,
 * made the canonical NaN) is an f16 exactly too: on sm_89+ the PTX cvt to f16x2 then to
 * f32 (two instructions where the fields take a dozen: a kernel of many f8 passes
 * compiles in a third of the time), before that decoded from its fields. */
__device__ __forceinline__ float ic_e5m2_to_f32(ic_u32 b) { return ic_h2f((b & 0xffu) << 8); }
#if __CUDA_ARCH__ >= 890 && !defined(IC_SOFT_FP8)
__device__ __forceinline__ float ic_e4m3_to_f32(ic_u32 b) {
  ic_u32 h2; asm("cvt.rn.f16x2.e4m3x2 %0, %1;" : "=r"(h2) : "h"((ic_u16)(b & 0xffu)));
  float f; asm("{ .reg .b16 l, h;\n  mov.b32 {l, h}, %1;\n  cvt.f32.f16 %0, l; }" : "=f"(f) : "r"(h2));
  return (b & 0x7fu) == 0x7fu ? ic_canonical_nan() : f;
}
#else
__device__ __forceinline__ float ic_e4m3_to_f32(ic_u32 b) {
  const ic_u32 e = (b >> 3) & 15u, m = b & 7u, s = (b & 0x80u) << 24;
  if (e == 15u && m == 7u) return ic_canonical_nan();
  if (e == 0u) return __uint_as_float(__float_as_uint((float)m * 0.001953125f) | s);
  return __uint_as_float(s | ((e + 120u) << 23) | (m << 20));
}
#endif
/* f32 -> fp8, round to nearest even, in software (any arch): `ebits` exponent bits,
 * `mbits` mantissa bits, `fn` = no infinities (e4m3fn). NaN -> 0x7f. Overflow: inf (e5m2)
 * or NaN (e4m3fn), each with the sign; saturate: the largest finite value instead. */
__device__ __forceinline__ ic_u32 ic_f2f8_soft(float f, int ebits, int mbits, bool fn, bool saturate) {
  const ic_u32 u = __float_as_uint(f), a = u & 0x7fffffffu, sign = (u >> 24) & 0x80u;
  if (a > 0x7f800000u) return 0x7fu;
  const ic_u32 over = fn ? 0x7fu : (((1u << ebits) - 1u) << mbits);
  const ic_u32 maxfin = fn ? 0x7eu : over - 1u;
  if (a < 0x00800000u) return sign; /* f32 subnormals are far below half an fp8 ulp */
  const int bias = (1 << (ebits - 1)) - 1, emin = 1 - bias, e = (int)(a >> 23) - 127;
  const ic_u32 sig = (a & 0x7fffffu) | 0x800000u;
  ic_u32 mag;
  if (e + bias > (1 << ebits)) {
    mag = over;
  } else {
    int shift = 23 - mbits + (e < emin ? emin - e : 0);
    ic_u32 q = 0;
    if (shift < 25) {
      q = sig >> shift;
      const ic_u32 rem = sig & ((1u << shift) - 1u), half = 1u << (shift - 1);
      if (rem > half || (rem == half && (q & 1u))) q++;
    }
    mag = e < emin ? q : ((ic_u32)(e + bias - 1) << mbits) + q;
    if (mag > over) mag = over;
  }
  if (mag >= over) return sign | (saturate ? maxfin : over);
  return sign | mag;
}
/* f8e4m3 bytes of a word, each NaN byte (s.1111.111) made the canonical 0x7f at once: its
 * magnitude bits are all ones already, only its sign goes (no carry crosses a byte: a
 * byte's sum is at most 0x80). */
__device__ __forceinline__ ic_u32 ic_canon_f8e4m3x4(ic_u32 w) { return w & ~(((w & 0x7f7f7f7fu) + 0x01010101u) & 0x80808080u); }
#if __CUDA_ARCH__ >= 890 && !defined(IC_SOFT_FP8)
/* sm_89+: PTX cvt (.satfinite is the only mode), PyTorch's overflow rules on top. */
__device__ __forceinline__ ic_u32 ic_f2e4m3_sat(float f) {
  if (f != f) return 0x7fu;
  ic_u16 h; asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %1;" : "=h"(h) : "f"(f)); return h & 0xffu;
}
__device__ __forceinline__ ic_u32 ic_f2e5m2_sat(float f) {
  if (f != f) return 0x7fu;
  ic_u16 h; asm("cvt.rn.satfinite.e5m2x2.f32 %0, %1, %1;" : "=h"(h) : "f"(f)); return h & 0xffu;
}
/* Two values at once (lo in bits 0-7, hi in 8-15), the same bits as ic_f2e4m3_sat of
 * each: one cvt for the pair, whose NaN bytes (.satfinite makes no other s.1111.111)
 * become 0x7f. */
__device__ __forceinline__ ic_u32 ic_f2e4m3x2_sat(float lo, float hi) {
  ic_u16 h; asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(h) : "f"(hi), "f"(lo));
  return ic_canon_f8e4m3x4(h);
}
/* Four values (a in bits 0-7 ... d in 24-31): two cvts into one word, its NaN bytes made
 * 0x7f once for the four. */
__device__ __forceinline__ ic_u32 ic_f2e4m3x4_sat(float a, float b, float c, float d) {
  ic_u32 w;
  asm("{ .reg .b16 l, h;\n  cvt.rn.satfinite.e4m3x2.f32 l, %2, %1;\n  cvt.rn.satfinite.e4m3x2.f32 h, %4, %3;\n  mov.b32 %0, {l, h}; }"
      : "=r"(w) : "f"(a), "f"(b), "f"(c), "f"(d));
  return ic_canon_f8e4m3x4(w);
}
/* e4m3fn: |x| > 464 (half-way above 448) rounds past the largest value: NaN. */
__device__ __forceinline__ ic_u32 ic_f2e4m3(float f) {
  const ic_u32 u = __float_as_uint(f);
  return (u & 0x7fffffffu) > 0x43e80000u && f == f ? ((u >> 24) & 0x80u) | 0x7fu : ic_f2e4m3_sat(f);
}
/* e5m2: |x| >= 61440 (half-way above 57344, ties to the even inf) is inf. */
__device__ __forceinline__ ic_u32 ic_f2e5m2(float f) {
  const ic_u32 u = __float_as_uint(f);
  return (u & 0x7fffffffu) >= 0x47700000u && f == f ? ((u >> 24) & 0x80u) | 0x7cu : ic_f2e5m2_sat(f);
}
#else
__device__ __forceinline__ ic_u32 ic_f2e4m3(float f) { return ic_f2f8_soft(f, 4, 3, true, false); }
__device__ __forceinline__ ic_u32 ic_f2e5m2(float f) { return ic_f2f8_soft(f, 5, 2, false, false); }
__device__ __forceinline__ ic_u32 ic_f2e4m3_sat(float f) { return ic_f2f8_soft(f, 4, 3, true, true); }
__device__ __forceinline__ ic_u32 ic_f2e5m2_sat(float f) { return ic_f2f8_soft(f, 5, 2, false, true); }
__device__ __forceinline__ ic_u32 ic_f2e4m3x2_sat(float lo, float hi) { return ic_f2e4m3_sat(lo) | ic_f2e4m3_sat(hi) << 8; }
__device__ __forceinline__ ic_u32 ic_f2e4m3x4_sat(float a, float b, float c, float d) { return ic_f2e4m3x2_sat(a, b) | ic_f2e4m3x2_sat(c, d) << 16; }
#endif

/* Storage <-> compute type. Packs return only the dtype's bits. */
__device__ __forceinline__ bool ic_unpack_bool(ic_u32 x) { return (x & 0xffu) != 0; }
__device__ __forceinline__ int ic_unpack_u8(ic_u32 x) { return (int)(x & 0xffu); }
__device__ __forceinline__ int ic_unpack_u16(ic_u32 x) { return (int)(x & 0xffffu); }
__device__ __forceinline__ ic_u32 ic_unpack_u32(ic_u32 x) { return x; }
__device__ __forceinline__ ic_u64 ic_unpack_u64(ic_u64 x) { return x; }
__device__ __forceinline__ int ic_unpack_i8(ic_u32 x) { return (int)(signed char)(x & 0xffu); }
__device__ __forceinline__ int ic_unpack_i16(ic_u32 x) { return (int)(short)(x & 0xffffu); }
__device__ __forceinline__ int ic_unpack_i32(ic_u32 x) { return (int)x; }
__device__ __forceinline__ ic_i64 ic_unpack_i64(ic_u64 x) { return (ic_i64)x; }
__device__ __forceinline__ float ic_unpack_f16(ic_u32 x) { return ic_h2f(x & 0xffffu); }
__device__ __forceinline__ float ic_unpack_bf16(ic_u32 x) { return ic_bf2f(x & 0xffffu); }
__device__ __forceinline__ float ic_unpack_f32(ic_u32 x) { return __uint_as_float(x); }
__device__ __forceinline__ double ic_unpack_f64(ic_u64 x) { return __longlong_as_double((ic_i64)x); }
__device__ __forceinline__ float ic_unpack_f8e4m3(ic_u32 x) { return ic_e4m3_to_f32(x & 0xffu); }
__device__ __forceinline__ float ic_unpack_f8e5m2(ic_u32 x) { return ic_e5m2_to_f32(x & 0xffu); }
__device__ __forceinline__ ic_u32 ic_pack_bool(bool v) { return v ? 1u : 0u; }
__device__ __forceinline__ ic_u32 ic_pack_u8(int v) { return (ic_u32)v & 0xffu; }
__device__ __forceinline__ ic_u32 ic_pack_u16(int v) { return (ic_u32)v & 0xffffu; }
__device__ __forceinline__ ic_u32 ic_pack_u32(ic_u32 v) { return v; }
__device__ __forceinline__ ic_u64 ic_pack_u64(ic_u64 v) { return v; }
__device__ __forceinline__ ic_u32 ic_pack_i8(int v) { return (ic_u32)v & 0xffu; }
__device__ __forceinline__ ic_u32 ic_pack_i16(int v) { return (ic_u32)v & 0xffffu; }
__device__ __forceinline__ ic_u32 ic_pack_i32(int v) { return (ic_u32)v; }
__device__ __forceinline__ ic_u64 ic_pack_i64(ic_i64 v) { return (ic_u64)v; }
__device__ __forceinline__ ic_u32 ic_pack_f16(float v) { return ic_f2h(v); }
__device__ __forceinline__ ic_u32 ic_pack_bf16(float v) { return ic_f2bf(v); }
__device__ __forceinline__ ic_u32 ic_pack_f32(float v) { return __float_as_uint(v); }
__device__ __forceinline__ ic_u64 ic_pack_f64(double v) { return (ic_u64)__double_as_longlong(v); }
__device__ __forceinline__ ic_u32 ic_pack_f8e4m3(float v) { return ic_f2e4m3(v); }
__device__ __forceinline__ ic_u32 ic_pack_f8e5m2(float v) { return ic_f2e5m2(v); }

/* Every op result is rounded (wrapped) to its dtype even in registers (eager == fused). */
__device__ __forceinline__ float ic_rnd_f16(float f) { return ic_h2f(ic_f2h(f)); }
__device__ __forceinline__ float ic_rnd_bf16(float f) { return ic_bf2f(ic_f2bf(f)); }
/* Two values rounded by one conversion (cvt.rn.bf16x2.f32 d, hi, lo; cvt.rn.f16x2.f32):
 * the bits of ic_rnd_ on each, and half the conversions (ptxas makes the same instruction
 * of two ic_f2bf whose bits are packed into one word). */
__device__ __forceinline__ void ic_rnd2_bf16(float a, float b, float &ra, float &rb) {
  ic_u32 w; asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(w) : "f"(b), "f"(a));
  ra = __uint_as_float(w << 16); rb = __uint_as_float(w & 0xffff0000u);
}
__device__ __forceinline__ void ic_rnd2_f16(float a, float b, float &ra, float &rb) {
  ic_u32 w; asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(w) : "f"(b), "f"(a));
  ra = ic_h2f(w & 0xffffu); rb = ic_h2f(w >> 16);
}
__device__ __forceinline__ float ic_rnd_f8e4m3(float f) { return ic_e4m3_to_f32(ic_f2e4m3(f)); }
__device__ __forceinline__ float ic_rnd_f8e5m2(float f) { return ic_e5m2_to_f32(ic_f2e5m2(f)); }
__device__ __forceinline__ int ic_rnd_u8(int v) { return v & 0xff; }
__device__ __forceinline__ int ic_rnd_u16(int v) { return v & 0xffff; }
__device__ __forceinline__ int ic_rnd_i8(int v) { return (int)(signed char)v; }
__device__ __forceinline__ int ic_rnd_i16(int v) { return (int)(short)v; }
/* Saturating roundings: overflow and +-inf give +-the largest finite value; a NaN stays
 * what the plain rounding makes of it. */
__device__ __forceinline__ float ic_satf(float r, float x, float max) { return x != x ? r : r - r != 0.0f ? (x < 0.0f ? -max : max) : r; }
__device__ __forceinline__ float ic_sat_f16(float x) { return ic_satf(ic_rnd_f16(x), x, 65504.0f); }
__device__ __forceinline__ float ic_sat_bf16(float x) { return ic_satf(ic_rnd_bf16(x), x, __uint_as_float(0x7f7f0000u)); }
__device__ __forceinline__ float ic_sat_f32(float x) { return ic_satf(x, x, __uint_as_float(0x7f7fffffu)); }
__device__ __forceinline__ float ic_sat_f8e4m3(float x) { return ic_e4m3_to_f32(ic_f2e4m3_sat(x)); }
__device__ __forceinline__ float ic_sat_f8e5m2(float x) { return ic_e5m2_to_f32(ic_f2e5m2_sat(x)); }
/* Storage bits as ic stores them: a NaN pattern becomes the dtype's canonical NaN (what
 * ic_pack_<dt>(ic_unpack_<dt>(b)) makes; other patterns are exact both ways). */
__device__ __forceinline__ ic_u32 ic_canon_f16(ic_u32 b) { return (b & 0x7fffu) > 0x7c00u ? ic_pack_f16(ic_canonical_nan()) : b; }
__device__ __forceinline__ ic_u32 ic_canon_bf16(ic_u32 b) { return (b & 0x7fffu) > 0x7f80u ? ic_pack_bf16(ic_canonical_nan()) : b; }
__device__ __forceinline__ ic_u32 ic_canon_f8e4m3(ic_u32 b) { return (b & 0x7fu) == 0x7fu ? 0x7fu : b; }
__device__ __forceinline__ ic_u32 ic_canon_f8e5m2(ic_u32 b) { return (b & 0x7fu) > 0x7cu ? ic_pack_f8e5m2(ic_canonical_nan()) : b; }
/* The same for a 32-bit word of lanes (an asm output register of several elements), all
 * lanes at once: a lane is NaN when its magnitude (the `low` bits) plus `add` carries into
 * its sign bit; m - (m >> shift) fills such a lane below the carry (no borrow crosses a
 * lane), and the lane becomes c's (the canonical NaN in every lane). */
__device__ __forceinline__ ic_u32 ic_canon_lanes(ic_u32 w, ic_u32 low, ic_u32 add, int shift, ic_u32 c) {
  const ic_u32 m = ((w & low) + add) & ~low, all = m | (m - (m >> shift));
  return (w & ~all) | (c & all);
}
__device__ __forceinline__ ic_u32 ic_canon_f16x2(ic_u32 w) { return ic_canon_lanes(w, 0x7fff7fffu, 0x03ff03ffu, 15, ic_canon_f16(0x7fffu) * 0x00010001u); }
__device__ __forceinline__ ic_u32 ic_canon_bf16x2(ic_u32 w) { return ic_canon_lanes(w, 0x7fff7fffu, 0x007f007fu, 15, ic_canon_bf16(0x7fffu) * 0x00010001u); }
__device__ __forceinline__ ic_u32 ic_canon_f8e5m2x4(ic_u32 w) { return ic_canon_lanes(w, 0x7f7f7f7fu, 0x03030303u, 7, ic_canon_f8e5m2(0x7fu) * 0x01010101u); }
/* The storage bits of a rounding, for a result that is stored: the same bits as
 * ic_pack_<dt>(ic_rnd_<dt>(x)) (or ic_sat_), with no round trip through f32. */
__device__ __forceinline__ ic_u32 ic_rndbits_f16(float x) { return ic_f2h(x); }
__device__ __forceinline__ ic_u32 ic_rndbits_bf16(float x) { return ic_f2bf(x); }
/* e4m3fn's overflow makes sign | 0x7f; the stored NaN is 0x7f, whatever the sign */
__device__ __forceinline__ ic_u32 ic_rndbits_f8e4m3(float x) { const ic_u32 b = ic_f2e4m3(x); return (b & 0x7fu) == 0x7fu ? 0x7fu : b; }
__device__ __forceinline__ ic_u32 ic_rndbits_f8e5m2(float x) { return ic_f2e5m2(x); }
__device__ __forceinline__ ic_u32 ic_satbits_f16(float x) { return ic_f2h(ic_sat_f16(x)); }
__device__ __forceinline__ ic_u32 ic_satbits_bf16(float x) { return ic_f2bf(ic_sat_bf16(x)); }
__device__ __forceinline__ ic_u32 ic_satbits_f8e4m3(float x) { return ic_f2e4m3_sat(x); }
__device__ __forceinline__ ic_u32 ic_satbits_f8e4m3x2(float lo, float hi) { return ic_f2e4m3x2_sat(lo, hi); }
__device__ __forceinline__ ic_u32 ic_satbits_f8e4m3x4(float a, float b, float c, float d) { return ic_f2e4m3x4_sat(a, b, c, d); }
/* Two values' f8e4m3 storage bits at once (ic_f2e4m3x2_sat); without saturation
 * |x| > 464 (and NaN) round to NaN, stored as 0x7f. */
__device__ __forceinline__ ic_u32 ic_rndbits_f8e4m3x2(float lo, float hi) {
  const ic_u32 w = ic_f2e4m3x2_sat(lo, hi);
  return ((__float_as_uint(lo) & 0x7fffffffu) > 0x43e80000u ? 0x7fu : w & 0xffu) |
         ((__float_as_uint(hi) & 0x7fffffffu) > 0x43e80000u ? 0x7f00u : w & 0xff00u);
}
__device__ __forceinline__ ic_u32 ic_satbits_f8e5m2(float x) { return ic_f2e5m2_sat(x); }
__device__ __forceinline__ double ic_sat_f64(double x) { const double m = __longlong_as_double(0x7fefffffffffffffll); return x != x ? x : x > m ? m : x < -m ? -m : x; }
/* float -> integer: truncate, saturate (cvt.rzi.sat), NaN -> 0 (cvt gives 0 for s32 from
 * f32 but INT64_MIN for s64 on sm_90: made explicit), then clamp to the width. */
__device__ __forceinline__ int ic_f2i32(float a) { int r; asm("cvt.rzi.sat.s32.f32 %0, %1;" : "=r"(r) : "f"(a)); return r; }
__device__ __forceinline__ int ic_d2i32(double a) { int r; asm("cvt.rzi.sat.s32.f64 %0, %1;" : "=r"(r) : "d"(a)); return a != a ? 0 : r; }
__device__ __forceinline__ ic_i64 ic_f2i64(float a) { ic_i64 r; asm("cvt.rzi.sat.s64.f32 %0, %1;" : "=l"(r) : "f"(a)); return a != a ? 0 : r; }
__device__ __forceinline__ ic_i64 ic_d2i64(double a) { ic_i64 r; asm("cvt.rzi.sat.s64.f64 %0, %1;" : "=l"(r) : "d"(a)); return a != a ? 0 : r; }
__device__ __forceinline__ int ic_clampi(ic_i64 v, ic_i64 lo, ic_i64 hi) { return (int)(v < lo ? lo : v > hi ? hi : v); }
/* The unsigned targets: cvt.rzi.sat.u32/.u64 clamp below at 0 and above at the width's
 * largest value; NaN made 0 explicitly, as for s64. */
__device__ __forceinline__ ic_u32 ic_f2u32(float a) { ic_u32 r; asm("cvt.rzi.sat.u32.f32 %0, %1;" : "=r"(r) : "f"(a)); return a != a ? 0u : r; }
__device__ __forceinline__ ic_u32 ic_d2u32(double a) { ic_u32 r; asm("cvt.rzi.sat.u32.f64 %0, %1;" : "=r"(r) : "d"(a)); return a != a ? 0u : r; }
__device__ __forceinline__ ic_u64 ic_f2u64(float a) { ic_u64 r; asm("cvt.rzi.sat.u64.f32 %0, %1;" : "=l"(r) : "f"(a)); return a != a ? 0ull : r; }
__device__ __forceinline__ ic_u64 ic_d2u64(double a) { ic_u64 r; asm("cvt.rzi.sat.u64.f64 %0, %1;" : "=l"(r) : "d"(a)); return a != a ? 0ull : r; }
/* Saturating integer -> integer casts that an int cannot hold: a signed (or narrower)
 * value into [lo, hi] in 64 bits, a u64 into [0, hi], a signed value into u64's range. */
__device__ __forceinline__ ic_i64 ic_clampl(ic_i64 v, ic_i64 lo, ic_i64 hi) { return v < lo ? lo : v > hi ? hi : v; }
__device__ __forceinline__ ic_u64 ic_clampu64(ic_u64 v, ic_u64 hi) { return v > hi ? hi : v; }
__device__ __forceinline__ ic_u64 ic_s2u64_sat(ic_i64 v) { return v < 0 ? 0ull : (ic_u64)v; }
/* f64 -> f32: one rounding; a NaN becomes the canonical NaN (cvt keeps part of the payload). */
__device__ __forceinline__ float ic_d2f(double a) { return a != a ? ic_canonical_nan() : (float)a; }
/* -> f32 rounded to odd: a second rounding to f16/bf16/fp8 is then exactly one rounding. */
__device__ __forceinline__ float ic_i2f_odd(int a) {
  float f; asm("cvt.rz.f32.s32 %0, %1;" : "=f"(f) : "r"(a));
  return (ic_i64)f == (ic_i64)a ? f : __uint_as_float(__float_as_uint(f) | 1u);
}
__device__ __forceinline__ float ic_l2f_odd(ic_i64 a) {
  float f; asm("cvt.rz.f32.s64 %0, %1;" : "=f"(f) : "l"(a));
  return (ic_i64)f == a ? f : __uint_as_float(__float_as_uint(f) | 1u);
}
__device__ __forceinline__ float ic_u2f_odd(ic_u32 a) {
  float f; asm("cvt.rz.f32.u32 %0, %1;" : "=f"(f) : "r"(a));
  return (ic_u64)f == (ic_u64)a ? f : __uint_as_float(__float_as_uint(f) | 1u);
}
/* cvt.rz of a u64 is below 2^64, so the float converts back to u64 exactly. */
__device__ __forceinline__ float ic_ul2f_odd(ic_u64 a) {
  float f; asm("cvt.rz.f32.u64 %0, %1;" : "=f"(f) : "l"(a));
  return (ic_u64)f == a ? f : __uint_as_float(__float_as_uint(f) | 1u);
}
__device__ __forceinline__ float ic_d2f_odd(double a) {
  float f; asm("cvt.rz.f32.f64 %0, %1;" : "=f"(f) : "d"(a));
  return a != a || (double)f == a ? f : __uint_as_float(__float_as_uint(f) | 1u);
}

__device__ __forceinline__ ic_i64 ic_min(ic_i64 a, ic_i64 b) { return a < b ? a : b; }
__device__ __forceinline__ ic_i64 ic_max(ic_i64 a, ic_i64 b) { return a > b ? a : b; }

/* ---- op semantics (include/ic/ic.h), overloaded by compute type. */
/* Integers: wrapping arithmetic in unsigned; division by zero gives 0, MIN / -1 wraps
 * (its remainder is 0); shifts by < 0 or >= the width give 0 (or -1). */
#define IC_INT_OPS(I, U, BITS, MINV) \
__device__ __forceinline__ I ic_add(I a, I b) { return (I)((U)a + (U)b); } \
__device__ __forceinline__ I ic_sub(I a, I b) { return (I)((U)a - (U)b); } \
__device__ __forceinline__ I ic_mul(I a, I b) { return (I)((U)a * (U)b); } \
__device__ __forceinline__ I ic_neg(I a) { return (I)((U)0 - (U)a); } \
__device__ __forceinline__ I ic_abs(I a) { return a < 0 ? ic_neg(a) : a; } \
__device__ __forceinline__ I ic_relu(I a) { return a > 0 ? a : 0; } \
__device__ __forceinline__ I ic_sign(I a) { return (I)((a > 0) - (a < 0)); } \
__device__ __forceinline__ I ic_maximum(I a, I b) { return a > b ? a : b; } \
__device__ __forceinline__ I ic_minimum(I a, I b) { return a < b ? a : b; } \
__device__ __forceinline__ I ic_fmax(I a, I b) { return a > b ? a : b; } \
__device__ __forceinline__ I ic_fmin(I a, I b) { return a < b ? a : b; } \
__device__ __forceinline__ I ic_clamp(I x, I lo, I hi) { return ic_minimum(ic_maximum(x, lo), hi); } \
__device__ __forceinline__ bool ic_div_wraps(I a, I b) { return a == (MINV) && b == -1; } \
__device__ __forceinline__ I ic_trunc_divide(I a, I b) { return b == 0 ? 0 : ic_div_wraps(a, b) ? a : a / b; } \
__device__ __forceinline__ I ic_fmod(I a, I b) { return b == 0 || ic_div_wraps(a, b) ? 0 : a % b; } \
__device__ __forceinline__ I ic_floor_divide(I a, I b) { \
  const I q = ic_trunc_divide(a, b); \
  return b != 0 && !ic_div_wraps(a, b) && ic_mul(q, b) != a && ((a < 0) != (b < 0)) ? q - 1 : q; \
} \
__device__ __forceinline__ I ic_remainder(I a, I b) { const I r = ic_fmod(a, b); return r != 0 && ((r < 0) != (b < 0)) ? r + b : r; } \
__device__ __forceinline__ I ic_shift_left(I a, I b) { return b < 0 || b >= BITS ? 0 : (I)((U)a << b); } \
__device__ __forceinline__ I ic_shift_right(I a, I b) { return b < 0 || b >= BITS ? (a < 0 ? -1 : 0) : a >> b; } \
__device__ __forceinline__ bool ic_isnan(I) { return false; } \
__device__ __forceinline__ bool ic_isinf(I) { return false; } \
__device__ __forceinline__ bool ic_isfinite(I) { return true; }
IC_INT_OPS(int, ic_u32, 32, (-2147483647 - 1))
IC_INT_OPS(ic_i64, ic_u64, 64, (-9223372036854775807ll - 1))
/* u32 and u64 (u8 and u16 compute in int, whose ops agree on their non-negative values):
 * C's unsigned arithmetic wraps; division and remainder by zero give 0 (floor and
 * truncation are one for unsigned values); shifts by >= the width give 0. */
#define IC_UINT_OPS(U, BITS) \
__device__ __forceinline__ U ic_add(U a, U b) { return a + b; } \
__device__ __forceinline__ U ic_sub(U a, U b) { return a - b; } \
__device__ __forceinline__ U ic_mul(U a, U b) { return a * b; } \
__device__ __forceinline__ U ic_neg(U a) { return (U)0 - a; } \
__device__ __forceinline__ U ic_abs(U a) { return a; } \
__device__ __forceinline__ U ic_relu(U a) { return a; } \
__device__ __forceinline__ U ic_sign(U a) { return a != 0 ? 1 : 0; } \
__device__ __forceinline__ U ic_maximum(U a, U b) { return a > b ? a : b; } \
__device__ __forceinline__ U ic_minimum(U a, U b) { return a < b ? a : b; } \
__device__ __forceinline__ U ic_fmax(U a, U b) { return a > b ? a : b; } \
__device__ __forceinline__ U ic_fmin(U a, U b) { return a < b ? a : b; } \
__device__ __forceinline__ U ic_clamp(U x, U lo, U hi) { return ic_minimum(ic_maximum(x, lo), hi); } \
__device__ __forceinline__ U ic_trunc_divide(U a, U b) { return b == 0 ? 0 : a / b; } \
__device__ __forceinline__ U ic_floor_divide(U a, U b) { return b == 0 ? 0 : a / b; } \
__device__ __forceinline__ U ic_fmod(U a, U b) { return b == 0 ? 0 : a % b; } \
__device__ __forceinline__ U ic_remainder(U a, U b) { return b == 0 ? 0 : a % b; } \
__device__ __forceinline__ U ic_shift_left(U a, U b) { return b >= BITS ? 0 : a << b; } \
__device__ __forceinline__ U ic_shift_right(U a, U b) { return b >= BITS ? 0 : a >> b; } \
__device__ __forceinline__ bool ic_isnan(U) { return false; } \
__device__ __forceinline__ bool ic_isinf(U) { return false; } \
__device__ __forceinline__ bool ic_isfinite(U) { return true; }
IC_UINT_OPS(ic_u32, 32)
IC_UINT_OPS(ic_u64, 64)

/* Floats: CUDA device math by name; f32 and f64 overloads. */
#define IC_MATH1(OP, F32, F64) \
__device__ __forceinline__ float ic_##OP(float a) { return F32(a); } \
__device__ __forceinline__ double ic_##OP(double a) { return F64(a); }
#define IC_MATH2(OP, F32, F64) \
__device__ __forceinline__ float ic_##OP(float a, float b) { return F32(a, b); } \
__device__ __forceinline__ double ic_##OP(double a, double b) { return F64(a, b); }
IC_MATH1(exp, expf, exp) IC_MATH1(log, logf, log) IC_MATH1(tanh, tanhf, tanh) IC_MATH1(exp2, exp2f, exp2)
IC_MATH1(expm1, expm1f, expm1) IC_MATH1(log2, log2f, log2) IC_MATH1(log10, log10f, log10) IC_MATH1(log1p, log1pf, log1p)
IC_MATH1(sin, sinf, sin) IC_MATH1(cos, cosf, cos) IC_MATH1(tan, tanf, tan) IC_MATH1(asin, asinf, asin)
IC_MATH1(acos, acosf, acos) IC_MATH1(atan, atanf, atan) IC_MATH1(sinh, sinhf, sinh) IC_MATH1(cosh, coshf, cosh)
IC_MATH1(asinh, asinhf, asinh) IC_MATH1(acosh, acoshf, acosh) IC_MATH1(atanh, atanhf, atanh) IC_MATH1(erf, erff, erf)
IC_MATH1(erfc, erfcf, erfc) IC_MATH1(floor, floorf, floor) IC_MATH1(ceil, ceilf, ceil) IC_MATH1(round, rintf, rint)
IC_MATH1(trunc, truncf, trunc)
IC_MATH2(pow, powf, pow) IC_MATH2(atan2, atan2f, atan2) IC_MATH2(hypot, hypotf, hypot) IC_MATH2(fmod, fmodf, fmod)
__device__ __forceinline__ float ic_fma(float a, float b, float c) { return fmaf(a, b, c); }
__device__ __forceinline__ double ic_fma(double a, double b, double c) { return fma(a, b, c); }
__device__ __forceinline__ float ic_add(float a, float b) { return a + b; }
__device__ __forceinline__ double ic_add(double a, double b) { return a + b; }
__device__ __forceinline__ float ic_sub(float a, float b) { return a - b; }
__device__ __forceinline__ double ic_sub(double a, double b) { return a - b; }
__device__ __forceinline__ float ic_mul(float a, float b) { return a * b; }
__device__ __forceinline__ double ic_mul(double a, double b) { return a * b; }
__device__ __forceinline__ float ic_div(float a, float b) { float r; asm("div.rn.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b)); return r; }
__device__ __forceinline__ double ic_div(double a, double b) { double r; asm("div.rn.f64 %0, %1, %2;" : "=d"(r) : "d"(a), "d"(b)); return r; }
/* x / s for a divisor shared by many x (a row value of a reduction kernel): the bits of
 * ic_div in about half its instructions. ic_divisor_prep once: y = RN(1/s) and the window
 * [lo, hi) of |x|; ic_div_by for each x (ic_div_in where every x is known to be in the
 * window, ic_div_in_window). In the window q0 = RN(x y) is faithful, r = x - q0 s
 * is exact and RN(q0 + r y) is RN(x / s) (Markstein's theorem, y correctly rounded), as
 * nothing on the way is subnormal or overflows: s and y normal, |x| >= 2^-101 (r exact),
 * 2^-125 <= |x / s| < 2^127. Outside it (zeros, inf, NaN, extreme s) ic_div. */
__device__ __forceinline__ void ic_divisor_prep(float s, float &y, float &lo, float &hi) {
  const float as = fabsf(s);
  const bool ok = as >= 0x1p-126f && as <= 0x1p126f;
  y = ic_div(1.0f, s);
  lo = ok ? fmaxf(0x1p-101f, as * 0x1p-125f) : __int_as_float(0x7f800000);
  hi = ok ? as * 0x1p127f : 0.0f;
}
__device__ __forceinline__ bool ic_div_in_window(float x, float lo, float hi) { return fabsf(x) >= lo && fabsf(x) < hi; }
__device__ __forceinline__ float ic_div_in(float x, float s, float y) {
  const float q0 = __fmul_rn(x, y);
  return __fmaf_rn(__fmaf_rn(-q0, s, x), y, q0);
}
__device__ __forceinline__ float ic_div_by(float x, float s, float y, float lo, float hi) {
  return ic_div_in_window(x, lo, hi) ? ic_div_in(x, s, y) : ic_div(x, s);
}
__device__ __forceinline__ float ic_sqrt(float a) { float r; asm("sqrt.rn.f32 %0, %1;" : "=f"(r) : "f"(a)); return r; }
__device__ __forceinline__ double ic_sqrt(double a) { double r; asm("sqrt.rn.f64 %0, %1;" : "=d"(r) : "d"(a)); return r; }
/* Sign-bit ops act on the bits, NaN included, whatever instruction the compiler would pick
 * (eager and fused must agree on NaN bits too). */
__device__ __forceinline__ float ic_neg(float a) { return __uint_as_float(__float_as_uint(a) ^ 0x80000000u); }
__device__ __forceinline__ double ic_neg(double a) { return __longlong_as_double(__double_as_longlong(a) ^ (-9223372036854775807ll - 1)); }
__device__ __forceinline__ float ic_abs(float a) { return __uint_as_float(__float_as_uint(a) & 0x7fffffffu); }
__device__ __forceinline__ double ic_abs(double a) { return __longlong_as_double(__double_as_longlong(a) & 0x7fffffffffffffffll); }
__device__ __forceinline__ float ic_copysign(float a, float b) { return __uint_as_float((__float_as_uint(a) & 0x7fffffffu) | (__float_as_uint(b) & 0x80000000u)); }
__device__ __forceinline__ double ic_copysign(double a, double b) { return __longlong_as_double((__double_as_longlong(a) & 0x7fffffffffffffffll) | (__double_as_longlong(b) & (-9223372036854775807ll - 1))); }
/* maximum/minimum: NaN-propagating, +0 over -0 (max.NaN for f32; f64 has no .NaN form). */
__device__ __forceinline__ float ic_maximum(float a, float b) { float r; asm("max.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b)); return r; }
__device__ __forceinline__ float ic_minimum(float a, float b) { float r; asm("min.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b)); return r; }
__device__ __forceinline__ double ic_maximum(double a, double b) { return a != a || b != b ? ic_canonical_nan_f64() : a == b ? (__double_as_longlong(a) < 0 ? b : a) : a > b ? a : b; }
__device__ __forceinline__ double ic_minimum(double a, double b) { return a != a || b != b ? ic_canonical_nan_f64() : a == b ? (__double_as_longlong(a) < 0 ? a : b) : a < b ? a : b; }
/* NaN results of these compound ops are canonical, as the max instruction gives. */
__device__ __forceinline__ float ic_relu(float a) { return a > 0.0f ? a : (a != a ? ic_canonical_nan() : 0.0f); }
__device__ __forceinline__ double ic_relu(double a) { return a > 0.0 ? a : (a != a ? ic_canonical_nan_f64() : 0.0); }
__device__ __forceinline__ float ic_sign(float a) { return a > 0.0f ? 1.0f : a < 0.0f ? -1.0f : (a != a ? ic_canonical_nan() : a); }
__device__ __forceinline__ double ic_sign(double a) { return a > 0.0 ? 1.0 : a < 0.0 ? -1.0 : (a != a ? ic_canonical_nan_f64() : a); }
template <class T> __device__ __forceinline__ T ic_fmax(T a, T b) { return a != a ? b : b != b ? a : ic_maximum(a, b); }
template <class T> __device__ __forceinline__ T ic_fmin(T a, T b) { return a != a ? b : b != b ? a : ic_minimum(a, b); }
template <class T> __device__ __forceinline__ T ic_clamp(T x, T lo, T hi) { return ic_minimum(ic_maximum(x, lo), hi); }
template <class T> __device__ __forceinline__ bool ic_isnan(T a) { return a != a; }
template <class T> __device__ __forceinline__ bool ic_isinf(T a) { return a - a != a - a && a == a; }
template <class T> __device__ __forceinline__ bool ic_isfinite(T a) { return a - a == a - a; }
template <class T> __device__ __forceinline__ T ic_rsqrt(T a) { return ic_div(T(1), ic_sqrt(a)); }
template <class T> __device__ __forceinline__ T ic_reciprocal(T a) { return ic_div(T(1), a); }
template <class T> __device__ __forceinline__ T ic_sigmoid(T a) { return ic_div(T(1), T(1) + ic_exp(-a)); }
template <class T> __device__ __forceinline__ T ic_silu(T a) { return ic_div(a, T(1) + ic_exp(-a)); }
template <class T> __device__ __forceinline__ T ic_softplus(T a) { return a > T(20) ? a : ic_log1p(ic_exp(a)); }
template <class T> __device__ __forceinline__ T ic_frac(T a) { return a - ic_trunc(a); }
template <class T> __device__ __forceinline__ T ic_trunc_divide(T a, T b) { return ic_trunc(ic_div(a, b)); }
template <class T> __device__ __forceinline__ T ic_floor_divide(T a, T b) { return ic_floor(ic_div(a, b)); }
template <class T> __device__ __forceinline__ T ic_remainder(T a, T b) { const T f = ic_floor(ic_div(a, b)); return a - b * f; }
template <class T> __device__ __forceinline__ T ic_lerp(T a, T b, T w) { return w < T(0.5) ? a + w * (b - a) : b - (b - a) * (T(1) - w); }
__device__ __forceinline__ float ic_gelu_tanh(float x) {
  const float inner = 0.7978845608028654f * (x + 0.044715f * (x * x * x));
  return (0.5f * x) * (1.0f + tanhf(inner));
}
__device__ __forceinline__ double ic_gelu_tanh(double x) {
  const double inner = 0.7978845608028654 * (x + 0.044715 * (x * x * x));
  return (0.5 * x) * (1.0 + tanh(inner));
}
__device__ __forceinline__ float ic_gelu_erf(float x) { return (0.5f * x) * (1.0f + erff(x * 0.70710678118654752f)); }
__device__ __forceinline__ double ic_gelu_erf(double x) { return (0.5 * x) * (1.0 + erf(x * 0.70710678118654752)); }

/* ---- reductions (ic.h, "reductions"): warp butterflies through shfl.sync.bfly (volatile:
 * every lane of the warp takes part, in program order), and the argmax/argmin step of the
 * lanes' tree: the first NaN, else the larger (smaller) value, the first index on ties. */
__device__ __forceinline__ ic_u32 ic_bfly32(ic_u32 v, int o) {
  ic_u32 r;
  asm volatile("shfl.sync.bfly.b32 %0, %1, %2, 0x1f, 0xffffffff;" : "=r"(r) : "r"(v), "r"(o));
  return r;
}
__device__ __forceinline__ float ic_bfly(float v, int o) { return __uint_as_float(ic_bfly32(__float_as_uint(v), o)); }
__device__ __forceinline__ int ic_bfly(int v, int o) { return (int)ic_bfly32((ic_u32)v, o); }
__device__ __forceinline__ ic_u32 ic_bfly(ic_u32 v, int o) { return ic_bfly32(v, o); }
__device__ __forceinline__ bool ic_bfly(bool v, int o) { return ic_bfly32(v ? 1u : 0u, o) != 0u; }
__device__ __forceinline__ ic_i64 ic_bfly(ic_i64 v, int o) {
  const ic_u64 u = (ic_u64)v;
  return (ic_i64)(((ic_u64)ic_bfly32((ic_u32)(u >> 32), o) << 32) | ic_bfly32((ic_u32)u, o));
}
__device__ __forceinline__ ic_u64 ic_bfly(ic_u64 v, int o) { return (ic_u64)ic_bfly((ic_i64)v, o); }
__device__ __forceinline__ double ic_bfly(double v, int o) { return __longlong_as_double(ic_bfly(__double_as_longlong(v), o)); }
/* Persistent rows of narrow dtypes keep storage words: the low bits (mask) of raw go into
 * word w at bit shift; returns raw. */
__device__ __forceinline__ ic_u32 ic_keep_bits(ic_u32 &w, int shift, ic_u32 mask, ic_u32 raw) {
  w = (w & ~(mask << shift)) | ((raw & mask) << shift);
  return raw;
}
/* Rows spread over the CTAs of a cluster (sm_90) join their CTAs' values through
 * distributed shared memory: each CTA puts its value in a slot of its own shared memory,
 * the cluster meets at a barrier (release/acquire: the slots are visible), and each CTA
 * reads every slot, its own included, in rank order. */
__device__ __forceinline__ void ic_cluster_sync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");
}
template <class T> __device__ __forceinline__ void ic_slot_put(ic_u64 *slot, T v) {
  ic_u64 w = 0;
  memcpy(&w, &v, sizeof v);
  *slot = w;
}
template <class T> __device__ __forceinline__ T ic_slot_get(const ic_u64 *slot, ic_u32 rank) {
  ic_u64 shared, w;
  ic_u32 remote;
  asm("cvta.to.shared.u64 %0, %1;" : "=l"(shared) : "l"(slot));
  asm("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"((ic_u32)shared), "r"(rank));
  asm volatile("ld.shared::cluster.b64 %0, [%1];" : "=l"(w) : "r"(remote) : "memory");
  T v;
  memcpy(&v, &w, sizeof v);
  return v;
}
template <class T> __device__ __forceinline__ void ic_arg_step(bool max, T &v, ic_i64 &i, T v2, ic_i64 i2) {
  const bool n1 = v != v, n2 = v2 != v2;
  const bool take = (n1 || n2) ? (n1 && n2 ? i2 < i : n2) : (v2 == v ? i2 < i : (max ? v2 > v : v2 < v));
  if (take) { v = v2; i = i2; }
}

/* ---- matmul (codegen_matmul.c): shared-memory addresses, cp.async copies, ldmatrix and
 * mma.sync of the sm_80 class. asm volatile: their order against the pipeline's barriers
 * and waits matters (the compiler does not see cp.async write shared memory). */
__device__ __forceinline__ ic_u32 ic_smem_addr(const void *p) {
  ic_u32 a;
  asm("{ .reg .u64 t;\n  cvta.to.shared.u64 t, %1;\n  cvt.u32.u64 %0, t; }" : "=r"(a) : "l"(p));
  return a;
}
/* 16 bytes from global to shared memory, of which the first `bytes` are read and the rest
 * zero-filled (bytes 0: no read; the tile's edges). */
__device__ __forceinline__ void ic_cp_async16(ic_u32 dst, const void *src, ic_u32 bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" :: "r"(dst), "l"(src), "r"(bytes) : "memory");
}
__device__ __forceinline__ void ic_cp_async_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
template <int N> __device__ __forceinline__ void ic_cp_async_wait() { asm volatile("cp.async.wait_group %0;" :: "n"(N) : "memory"); }
__device__ __forceinline__ void ic_st_shared_v4(ic_u32 addr, ic_u32 a, ic_u32 b, ic_u32 c, ic_u32 d) {
  asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};" :: "r"(addr), "r"(a), "r"(b), "r"(c), "r"(d) : "memory");
}
__device__ __forceinline__ void ic_ldsm_x4(ic_u32 addr, ic_u32 *r) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];" : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr));
}
__device__ __forceinline__ void ic_ldsm_x4_t(ic_u32 addr, ic_u32 *r) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];" : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr));
}
__device__ __forceinline__ void ic_ldsm_x2(ic_u32 addr, ic_u32 *r) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];" : "=r"(r[0]), "=r"(r[1]) : "r"(addr));
}
__device__ __forceinline__ void ic_ldsm_x2_t(ic_u32 addr, ic_u32 *r) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];" : "=r"(r[0]), "=r"(r[1]) : "r"(addr));
}
/* d += a b for one 16 x 8 tile of outputs: a four words (16 x 16 bf16 or f16, 16 x 32 s8,
 * 16 x 8 tf32), b two. The accumulator of each output takes the chunk's products in one
 * step, whatever the other outputs are: the per-output order is the chunks'. */
__device__ __forceinline__ void ic_mma_bf16(float *d, const ic_u32 *a, const ic_u32 *b) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]) : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
__device__ __forceinline__ void ic_mma_f16(float *d, const ic_u32 *a, const ic_u32 *b) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]) : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
__device__ __forceinline__ void ic_mma_s8(int *d, const ic_u32 *a, const ic_u32 *b) {
  asm volatile("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
               : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3]) : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
/* TF32: each f32 input rounded to TF32 (cvt.rna: to nearest, ties away from zero) once,
 * after its fragment is loaded, before the mma. */
__device__ __forceinline__ ic_u32 ic_tf32(ic_u32 x) { ic_u32 r; asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(__uint_as_float(x))); return r; }
__device__ __forceinline__ void ic_mma_tf32(float *d, const ic_u32 *a, const ic_u32 *b) {
  asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]) : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
