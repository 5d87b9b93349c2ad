/* lib/ops: the op table, one row per ic_op generated from IC_OP_LIST (ic.h): name, arity
 * and type rule. The builder, the text format, the kernel IR printer and both backends
 * read it, so they agree on every op. */
#ifndef IC_OPS_H
#define IC_OPS_H

#include "base/base.h"

typedef enum op_types {
  OP_TYPES_FLOAT, /* f16 bf16 f32 f64 f8e4m3 f8e5m2 */
  OP_TYPES_INT,   /* u8 i8 i16 i32 i64 */
  OP_TYPES_NUM,   /* FLOAT + INT */
  OP_TYPES_ANY,   /* NUM + bool */
  OP_TYPES_BITS   /* INT + bool */
} op_types;

typedef enum op_result {
  OP_RESULT_SAME,  /* the operands' dtype (for where: a's and b's) */
  OP_RESULT_BOOL,  /* bool */
  OP_RESULT_TARGET /* the dtype a cast names */
} op_result;

typedef struct op_info {
  const char *name;
  int32_t arity;
  op_types types;
  op_result result;
} op_info;

/* NULL for an op outside the table. */
const op_info *op_get(ic_op op);
/* True when dtype dt is accepted by the op's type class. */
bool op_accepts(const op_info *info, ic_dtype dt);
/* "f16, bf16, f32, ..." for error messages. */
const char *op_types_text(op_types t);

/* ---- reductions (IC_REDUCE_LIST) */

typedef enum reduce_result {
  REDUCE_RESULT_WIDEN, /* floats: the operand's dtype; integers and bool: i64 */
  REDUCE_RESULT_SAME,  /* the operand's dtype */
  REDUCE_RESULT_INDEX, /* i64 */
  REDUCE_RESULT_BOOL   /* bool */
} reduce_result;

typedef struct reduce_info {
  const char *name;
  op_types types;
  reduce_result result;
  bool needs_elements; /* an empty reduction is an error (max, min, argmax, argmin) */
} reduce_info;

/* NULL for an op outside the table. */
const reduce_info *reduce_get(ic_reduce_op op);
/* The result dtype of op over dtype dt, IC_DTYPE_INVALID when op does not take dt. */
ic_dtype reduce_result_dtype(ic_reduce_op op, ic_dtype dt);

#endif
