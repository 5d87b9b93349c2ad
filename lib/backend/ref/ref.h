/* The reference backend: a host interpreter of the kernel IR. */
#ifndef IC_BACKEND_REF_H
#define IC_BACKEND_REF_H

#include "backend/backend.h"

/* One value of the body, in its dtype's compute type: f16/bf16/f32/fp8 as float (already
 * rounded to the dtype), f64 as double, every integer dtype as int64 (already wrapped to
 * its width), bool. */
typedef union ref_value {
  float f;
  double d;
  int64_t i;
  bool b;
} ref_value;

ref_value ref_load(ic_dtype dt, const void *base, int64_t index);
void ref_store(ic_dtype dt, void *base, int64_t index, ref_value v);
ref_value ref_constant(ic_dtype dt, double value);
/* The op's result (of result_dt) on operands of operand_dt (for where: the data dtype);
 * args holds 3 values, the unused ones zero. */
ref_value ref_apply(ic_op op, ic_dtype operand_dt, ic_dtype result_dt, const ref_value *args);
/* v (f64 in d, else f) with a NaN made the canonical NaN of f32 or f64, as GPU
 * arithmetic gives it; other values as they are. */
ref_value ref_canonical(ic_dtype dt, ref_value v);

/* Reductions (ref_reduce.c) over elements of dtype dt: an accumulator, the lane steps of
 * ic.h's summation order, and the final value (of result_dt) for `count` elements. */
typedef struct ref_acc {
  ref_value v;
  int64_t index; /* argmax, argmin */
} ref_acc;

ref_acc ref_reduce_identity(ic_reduce_op op, ic_dtype dt);
ref_acc ref_reduce_lift(ic_reduce_op op, ic_dtype dt, ref_value x, int64_t r);
ref_acc ref_reduce_combine(ic_reduce_op op, ic_dtype dt, ref_acc a, ref_acc b);
ref_value ref_reduce_finish(ic_reduce_op op, ic_dtype dt, ic_dtype result_dt, ref_acc acc, int64_t count,
                            double correction);

#endif
