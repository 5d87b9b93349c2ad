/* The op table: one row per ic_op, generated from IC_OP_LIST so that the builder,
 * printers and backends read the same arity and type rules. */
#include "ops/ops.h"

static const op_info op_table[IC_OP_COUNT] = {
#define OP_ROW_(name, spelling, arity, types, result) \
  [IC_OP_##name] = {spelling, arity, OP_TYPES_##types, OP_RESULT_##result},
    IC_OP_LIST(OP_ROW_)
#undef OP_ROW_
};

const op_info *op_get(ic_op op) {
  if ((int)op < 0 || op >= IC_OP_COUNT) return NULL;
  return &op_table[op];
}

const char *ic_op_name(ic_op op) {
  const op_info *info = op_get(op);
  return info ? info->name : "invalid";
}

int32_t ic_op_arity(ic_op op) {
  const op_info *info = op_get(op);
  return info ? info->arity : 0;
}

bool op_accepts(const op_info *info, ic_dtype dt) {
  bool is_float = dtype_is_float(dt), is_int = dtype_is_integer(dt);
  switch (info->types) {
  case OP_TYPES_FLOAT: return is_float;
  case OP_TYPES_INT: return is_int;
  case OP_TYPES_NUM: return is_float || is_int;
  case OP_TYPES_ANY: return is_float || is_int || dt == IC_BOOL;
  case OP_TYPES_BITS: return is_int || dt == IC_BOOL;
  }
  return false;
}

const char *op_types_text(op_types t) {
  switch (t) {
  case OP_TYPES_FLOAT: return "f16, bf16, f32, f64, f8e4m3, f8e5m2";
  case OP_TYPES_INT: return "u8, u16, u32, u64, i8, i16, i32, i64";
  case OP_TYPES_NUM: return "u8, u16, u32, u64, i8, i16, i32, i64, f16, bf16, f32, f64, f8e4m3, f8e5m2";
  case OP_TYPES_ANY: return "bool and every numeric dtype";
  case OP_TYPES_BITS: return "bool, u8, u16, u32, u64, i8, i16, i32, i64";
  }
  return "?";
}

/* ---- reductions: the table of ic.h's "reductions" section */

static const reduce_info reduce_table[IC_REDUCE_COUNT] = {
    [IC_REDUCE_SUM] = {"sum", OP_TYPES_ANY, REDUCE_RESULT_WIDEN, false},
    [IC_REDUCE_MEAN] = {"mean", OP_TYPES_FLOAT, REDUCE_RESULT_SAME, false},
    [IC_REDUCE_PROD] = {"prod", OP_TYPES_ANY, REDUCE_RESULT_WIDEN, false},
    [IC_REDUCE_MAX] = {"max", OP_TYPES_ANY, REDUCE_RESULT_SAME, true},
    [IC_REDUCE_MIN] = {"min", OP_TYPES_ANY, REDUCE_RESULT_SAME, true},
    [IC_REDUCE_ARGMAX] = {"argmax", OP_TYPES_NUM, REDUCE_RESULT_INDEX, true},
    [IC_REDUCE_ARGMIN] = {"argmin", OP_TYPES_NUM, REDUCE_RESULT_INDEX, true},
    [IC_REDUCE_ANY] = {"any", OP_TYPES_ANY, REDUCE_RESULT_BOOL, false},
    [IC_REDUCE_ALL] = {"all", OP_TYPES_ANY, REDUCE_RESULT_BOOL, false},
};

const reduce_info *reduce_get(ic_reduce_op op) {
  if ((int)op < 0 || op >= IC_REDUCE_COUNT) return NULL;
  return &reduce_table[op];
}

const char *ic_reduce_name(ic_reduce_op op) {
  const reduce_info *info = reduce_get(op);
  return info ? info->name : "invalid";
}

ic_dtype reduce_result_dtype(ic_reduce_op op, ic_dtype dt) {
  const reduce_info *info = reduce_get(op);
  op_info accepts = {.types = info ? info->types : OP_TYPES_ANY};
  if (!info || !op_accepts(&accepts, dt)) return IC_DTYPE_INVALID;
  switch (info->result) {
  case REDUCE_RESULT_WIDEN: return dtype_is_float(dt) ? dt : IC_I64;
  case REDUCE_RESULT_SAME: return dt;
  case REDUCE_RESULT_INDEX: return IC_I64;
  case REDUCE_RESULT_BOOL: return IC_BOOL;
  }
  return IC_DTYPE_INVALID;
}
