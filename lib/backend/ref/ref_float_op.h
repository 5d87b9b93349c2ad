/* One floating-point op of the reference backend, written once for f32 and f64: this file
 * is included by ref_ops.c with REF_T (float or double), REF_FN(name) (the libm function
 * of that type, expf or exp), REF_NAME (the function defined), REF_CANON (the canonical
 * NaN) and REF_BITS/REF_SIGN (the unsigned type of the bits and its sign bit) defined.
 * Each line computes what the CUDA prelude's helper of the same name computes. The file
 * undefines its parameters at its end, ready for the next type. */
#ifdef REF_T

static REF_BITS REF_NAME(bits)(REF_T f) {
  REF_BITS u;
  memcpy(&u, &f, sizeof u);
  return u;
}

static REF_T REF_NAME(from_bits)(REF_BITS u) {
  REF_T f;
  memcpy(&f, &u, sizeof f);
  return f;
}

static REF_T REF_NAME(canonical)(REF_T f) { return isnan(f) ? REF_CANON : f; }

/* maximum/minimum: NaN-propagating (canonical NaN), +0 over -0. */
static REF_T REF_NAME(max)(REF_T a, REF_T b) {
  if (isnan(a) || isnan(b)) return REF_CANON;
  if (a == b) return signbit(a) ? b : a;
  return a > b ? a : b;
}

static REF_T REF_NAME(min)(REF_T a, REF_T b) {
  if (isnan(a) || isnan(b)) return REF_CANON;
  if (a == b) return signbit(a) ? a : b;
  return a < b ? a : b;
}

/* An op on operands of the compute type, before rounding to the result dtype. */
static REF_T REF_NAME(op)(ic_op op, REF_T a, REF_T b, REF_T c) {
  const REF_T one = 1, half = (REF_T)0.5;
  switch (op) {
  case IC_OP_NEG: return REF_NAME(from_bits)(REF_NAME(bits)(a) ^ REF_SIGN); /* a sign flip, NaN too */
  case IC_OP_ABS: return REF_NAME(from_bits)(REF_NAME(bits)(a) & ~REF_SIGN);
  case IC_OP_COPYSIGN: return REF_NAME(from_bits)((REF_NAME(bits)(a) & ~REF_SIGN) | (REF_NAME(bits)(b) & REF_SIGN));
  case IC_OP_EXP: return REF_NAME(canonical)(REF_FN(exp)(a));
  case IC_OP_LOG: return REF_NAME(canonical)(REF_FN(log)(a));
  case IC_OP_SQRT: return REF_NAME(canonical)(REF_FN(sqrt)(a));
  case IC_OP_TANH: return REF_NAME(canonical)(REF_FN(tanh)(a));
  case IC_OP_SIGMOID: return REF_NAME(canonical)(one / (one + REF_FN(exp)(-a)));
  case IC_OP_RELU: return a > 0 ? a : isnan(a) ? REF_CANON : 0;
  case IC_OP_GELU_TANH: return REF_NAME(canonical)(REF_NAME(gelu_tanh)(a));
  case IC_OP_EXP2: return REF_NAME(canonical)(REF_FN(exp2)(a));
  case IC_OP_EXPM1: return REF_NAME(canonical)(REF_FN(expm1)(a));
  case IC_OP_LOG2: return REF_NAME(canonical)(REF_FN(log2)(a));
  case IC_OP_LOG10: return REF_NAME(canonical)(REF_FN(log10)(a));
  case IC_OP_LOG1P: return REF_NAME(canonical)(REF_FN(log1p)(a));
  case IC_OP_RSQRT: return REF_NAME(canonical)(one / REF_FN(sqrt)(a));
  case IC_OP_RECIPROCAL: return REF_NAME(canonical)(one / a);
  case IC_OP_SIN: return REF_NAME(canonical)(REF_FN(sin)(a));
  case IC_OP_COS: return REF_NAME(canonical)(REF_FN(cos)(a));
  case IC_OP_TAN: return REF_NAME(canonical)(REF_FN(tan)(a));
  case IC_OP_ASIN: return REF_NAME(canonical)(REF_FN(asin)(a));
  case IC_OP_ACOS: return REF_NAME(canonical)(REF_FN(acos)(a));
  case IC_OP_ATAN: return REF_NAME(canonical)(REF_FN(atan)(a));
  case IC_OP_SINH: return REF_NAME(canonical)(REF_FN(sinh)(a));
  case IC_OP_COSH: return REF_NAME(canonical)(REF_FN(cosh)(a));
  case IC_OP_ASINH: return REF_NAME(canonical)(REF_FN(asinh)(a));
  case IC_OP_ACOSH: return REF_NAME(canonical)(REF_FN(acosh)(a));
  case IC_OP_ATANH: return REF_NAME(canonical)(REF_FN(atanh)(a));
  case IC_OP_ERF: return REF_NAME(canonical)(REF_FN(erf)(a));
  case IC_OP_ERFC: return REF_NAME(canonical)(REF_FN(erfc)(a));
  case IC_OP_SILU: return REF_NAME(canonical)(a / (one + REF_FN(exp)(-a)));
  case IC_OP_SOFTPLUS: return REF_NAME(canonical)(a > 20 ? a : REF_FN(log1p)(REF_FN(exp)(a)));
  case IC_OP_GELU_ERF: return REF_NAME(canonical)(REF_NAME(gelu_erf)(a));
  case IC_OP_FLOOR: return REF_NAME(canonical)(REF_FN(floor)(a));
  case IC_OP_CEIL: return REF_NAME(canonical)(REF_FN(ceil)(a));
  case IC_OP_ROUND: return REF_NAME(canonical)(REF_FN(rint)(a)); /* the default rounding: half to even */
  case IC_OP_TRUNC: return REF_NAME(canonical)(REF_FN(trunc)(a));
  case IC_OP_FRAC: return REF_NAME(canonical)(a - REF_FN(trunc)(a));
  case IC_OP_SIGN: return a > 0 ? one : a < 0 ? -one : isnan(a) ? REF_CANON : a;
  case IC_OP_MAXIMUM: return REF_NAME(max)(a, b);
  case IC_OP_MINIMUM: return REF_NAME(min)(a, b);
  case IC_OP_FMAX: return isnan(a) ? b : isnan(b) ? a : REF_NAME(max)(a, b);
  case IC_OP_FMIN: return isnan(a) ? b : isnan(b) ? a : REF_NAME(min)(a, b);
  case IC_OP_POW: return REF_NAME(canonical)(REF_FN(pow)(a, b));
  case IC_OP_ATAN2: return REF_NAME(canonical)(REF_FN(atan2)(a, b));
  case IC_OP_HYPOT: return REF_NAME(canonical)(REF_FN(hypot)(a, b));
  case IC_OP_FMOD: return REF_NAME(canonical)(REF_FN(fmod)(a, b));
  case IC_OP_REMAINDER: {
    const REF_T f = REF_FN(floor)(a / b);
    return REF_NAME(canonical)(a - b * f);
  }
  case IC_OP_FLOOR_DIVIDE: return REF_NAME(canonical)(REF_FN(floor)(a / b));
  case IC_OP_TRUNC_DIVIDE: return REF_NAME(canonical)(REF_FN(trunc)(a / b));
  case IC_OP_CLAMP: return REF_NAME(min)(REF_NAME(max)(a, b), c);
  case IC_OP_LERP: return REF_NAME(canonical)(c < half ? a + c * (b - a) : b - (b - a) * (one - c));
  case IC_OP_FMA: return REF_NAME(canonical)(REF_FN(fma)(a, b, c));
  case IC_OP_ADD: return REF_NAME(canonical)(a + b);
  case IC_OP_SUB: return REF_NAME(canonical)(a - b);
  case IC_OP_MUL: return REF_NAME(canonical)(a * b);
  case IC_OP_DIV: return REF_NAME(canonical)(a / b);
  default: return 0;
  }
}

#undef REF_T
#undef REF_FN
#undef REF_NAME
#undef REF_BITS
#undef REF_SIGN
#undef REF_CANON
#endif
