/* Every valid graph compiles fused: the input bytes drive a generator that builds a random
 * valid graph through the public API (inputs of every dtype of the dtype table, ranks 0-4,
 * constant dims of a small set (0 and 1 included) and symbols; pointwise ops of the op
 * table, casts, views, concat and pad, every reduction and the shorthands, inline asm,
 * matmul at the level FUZZ_MATMUL sets; several outputs). Each graph compiles fused and
 * eager for sm_80 and sm_90a through NVRTC in strict mode, and every one of those compiles
 * must succeed (a generated kernel that NVRTC rejects aborts); without asm it also runs
 * fused and eager on the ref backend, on random inputs with the symbols bound to small
 * values, and the outputs agree bit for bit.
 *
 * An input that begins with "# ic graph" is a graph in the text format instead (the
 * regressions in the corpus are written so), checked the same way.
 *
 * Throughput: NVRTC costs tens of ms a call, so the contexts live for the whole process
 * and their kernel caches (memory; disk too where IC_CACHE_DIR names a directory, shared
 * by parallel workers) keep every kernel once; dims come from small sets and symbols so
 * that kernels repeat. At exit the target prints its counts to stderr (graphs, the share
 * the generator built without a builder error, NVRTC compiles). */
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <string.h>
#include <time.h>

#include "fuzz.h"
#include "ic/ic.h"

enum { MAX_VALUES = 32, MAX_INPUTS = 6, MAX_STEPS = 12, MAX_OUTPUTS = 4, MAX_ELEMENTS = 4096, MAX_COMPONENTS = 8 };

/* Matmul in the generated graphs: MATMUL_OFF none; MATMUL_REF generated and run on ref
 * (fused == eager), left out of the NVRTC batch; MATMUL_ALL compiled for sm_80 and sm_90a
 * too. FUZZ_MATMUL sets the default (-DFUZZ_MATMUL=2 or here), the environment's
 * FUZZ_COMPILE_MATMUL=0|1|2 overrides it. The default is MATMUL_ALL; off, the generator
 * reads the bytes as it did before matmul existed. Text inputs with a matmul run on ref at
 * any level and compile for the archs at MATMUL_ALL only. */
enum { MATMUL_OFF, MATMUL_REF, MATMUL_ALL };
#ifndef FUZZ_MATMUL
#define FUZZ_MATMUL MATMUL_ALL
#endif

/* ---------------------------------------------------------------- dtype and op classes */

enum { CLASS_BOOL = 1, CLASS_INT = 2, CLASS_FLOAT = 4 };
enum { FUZZ_NUM = CLASS_INT | CLASS_FLOAT, FUZZ_ANY = FUZZ_NUM | CLASS_BOOL, FUZZ_BITS = CLASS_INT | CLASS_BOOL };
enum { FUZZ_FLOAT = CLASS_FLOAT, FUZZ_INT = CLASS_INT };

typedef struct op_info {
  ic_op op;
  int32_t arity;
  int accepts; /* CLASS_* mask */
} op_info;

/* The op table of ic.h, with each op's accepted dtype classes. */
static const op_info k_ops[] = {
#define FUZZ_OP_(name, spelling, arity, types, result) {IC_OP_##name, arity, FUZZ_##types},
    IC_OP_LIST(FUZZ_OP_)
#undef FUZZ_OP_
};

/* A dtype's class from its name ("bool", "u8"/"i32": integers, the rest floats), so that
 * a dtype added to the table is drawn and classed without a change here. */
static int dtype_class(ic_dtype dt) {
  const char *name = ic_dtype_name(dt);
  if (strcmp(name, "bool") == 0) return CLASS_BOOL;
  if (name[0] == 'u' || name[0] == 'i') return CLASS_INT;
  return CLASS_FLOAT;
}

/* ---------------------------------------------------------------- the generator */

typedef struct gen {
  fuzz_bytes b;
  ic_graph *g;
  ic_value v[MAX_VALUES];
  bool read[MAX_VALUES]; /* v[i] was picked as an operand */
  int32_t nv;
  ic_value inputs[MAX_INPUTS];
  int32_t ninputs;
  ic_dim base[4]; /* the graph's shape: inputs take it or broadcast forms of it */
  int32_t base_nd;
  bool has_asm;
  bool has_matmul;
  int32_t comp; /* the component's number, in its names */
} gen;

static int g_matmul = FUZZ_MATMUL; /* the level, FUZZ_COMPILE_MATMUL applied */

static uint8_t u8(gen *s) { return fuzz_u8(&s->b); }
static uint32_t below(gen *s, uint32_t n) { return n ? u8(s) % n : 0; }

/* A dtype of the table, or one of the classes in mask. */
static ic_dtype draw_dtype(gen *s, int mask) {
  int32_t first = below(s, IC_DTYPE_COUNT - 1);
  for (int32_t k = 0; k < IC_DTYPE_COUNT - 1; k++) {
    ic_dtype dt = (ic_dtype)(1 + (first + k) % (IC_DTYPE_COUNT - 1));
    if (dtype_class(dt) & mask) return dt;
  }
  return IC_F32;
}

enum { SYMBOL_N = -1000, SYMBOL_M = -1001 };

static ic_dim draw_dim(gen *s) {
  /* mostly few distinct sizes, so that kernels repeat; 0 and 1 often */
  static const ic_dim sizes[] = {1, 2, 3, 4, 5, 7, 8, 16, 0, 17, 33, 1, 4, 8};
  uint8_t c = u8(s);
  if (c < 40) return c & 1 ? SYMBOL_M : SYMBOL_N; /* made when an input uses it: a symbol no input has is an error */
  return sizes[c % (sizeof sizes / sizeof sizes[0])];
}

static int32_t ndim_of(gen *s, ic_value a) { return ic_graph_value_ndim(s->g, a); }

static void dims_of(gen *s, ic_value a, ic_dim *dims) {
  if (ic_graph_value_dims(s->g, a, dims) != IC_OK)
    for (int32_t d = 0; d < IC_MAX_DIMS; d++) dims[d] = IC_DIM_INFER;
}

/* Whether a and b broadcast against each other as the builder decides (dims that are
 * expressions of symbols are only known to match when both values are one). */
static bool broadcasts(gen *s, ic_value a, ic_value b) {
  if (a == b) return true;
  int32_t na = ndim_of(s, a), nb = ndim_of(s, b);
  ic_dim da[IC_MAX_DIMS], db[IC_MAX_DIMS];
  dims_of(s, a, da);
  dims_of(s, b, db);
  for (int32_t k = 1; k <= na && k <= nb; k++) {
    ic_dim x = da[na - k], y = db[nb - k];
    if (x == IC_DIM_INFER || y == IC_DIM_INFER) return false;
    if (x != y && x != 1 && y != 1) return false;
  }
  return true;
}

static bool same_shape(gen *s, ic_value a, ic_value b) {
  int32_t na = ndim_of(s, a);
  if (na != ndim_of(s, b)) return false;
  ic_dim da[IC_MAX_DIMS], db[IC_MAX_DIMS];
  dims_of(s, a, da);
  dims_of(s, b, db);
  for (int32_t d = 0; d < na; d++)
    if (da[d] == IC_DIM_INFER || da[d] != db[d]) return false;
  return true;
}

/* An earlier value, marked as read (values nothing reads become outputs). */
static ic_value pick(gen *s) {
  int32_t i = (int32_t)below(s, (uint32_t)s->nv);
  s->read[i] = true;
  return s->v[i];
}

/* a, cast to a dtype of the classes in mask where its own is not one */
static ic_value to_class(gen *s, ic_value a, int mask) {
  ic_dtype dt = ic_graph_value_dtype(s->g, a);
  if (dtype_class(dt) & mask) return a;
  return ic_graph_cast(s->g, a, draw_dtype(s, mask));
}

static ic_value to_dtype(gen *s, ic_value a, ic_dtype dt) {
  return ic_graph_value_dtype(s->g, a) == dt ? a : ic_graph_cast(s->g, a, dt);
}

/* An operand for a (same dtype, broadcasting): a value that broadcasts, cast, or a
 * constant. */
static ic_value partner(gen *s, ic_value a) {
  ic_dtype dt = ic_graph_value_dtype(s->g, a);
  uint8_t c = u8(s);
  if (c < 48) {
    static const double consts[] = {0.0, 1.0, -1.0, 0.5, 2.0, 3.0, -0.0, 1e30, 7.0, INFINITY, NAN};
    double x = consts[c % (sizeof consts / sizeof consts[0])];
    if (isnan(x) && dtype_class(dt) != CLASS_FLOAT) x = 1.0;
    /* an IC_DTYPE_AUTO NaN could meet a bool (a where's condition) */
    return ic_graph_constant(s->g, x, c & 1 && !isnan(x) ? IC_DTYPE_AUTO : dt);
  }
  for (int tries = 0; tries < 4; tries++) {
    ic_value b = pick(s);
    if (broadcasts(s, a, b)) return to_dtype(s, b, dt);
  }
  return a;
}

static ic_value pointwise(gen *s, ic_value a) {
  const op_info *oi = &k_ops[below(s, sizeof k_ops / sizeof k_ops[0])];
  if (oi->op == IC_OP_CAST) return ic_graph_cast(s->g, a, draw_dtype(s, FUZZ_ANY));
  if (oi->op == IC_OP_CAST_SATURATE) return ic_graph_cast_saturate(s->g, a, draw_dtype(s, FUZZ_ANY));
  if (oi->op == IC_OP_BITCAST) {
    ic_dtype from = ic_graph_value_dtype(s->g, a);
    if (from == IC_BOOL) return a;
    for (int32_t k = 0; k < 4; k++) {
      ic_dtype to = draw_dtype(s, FUZZ_NUM);
      if (ic_dtype_size(to) == ic_dtype_size(from)) return ic_graph_bitcast(s->g, a, to);
    }
    return a;
  }
  ic_value args[3];
  if (oi->op == IC_OP_WHERE) {
    args[0] = to_dtype(s, partner(s, a), IC_BOOL);
    args[1] = a;
    args[2] = partner(s, a);
    return ic_graph_op(s->g, oi->op, 3, args);
  }
  args[0] = to_class(s, a, oi->accepts);
  for (int32_t k = 1; k < oi->arity; k++) args[k] = partner(s, args[0]);
  return ic_graph_op(s->g, oi->op, oi->arity, args);
}

static ic_value view(gen *s, ic_value a) {
  int32_t nd = ndim_of(s, a);
  ic_dim dims[IC_MAX_DIMS];
  dims_of(s, a, dims);
  switch (below(s, 8)) {
  case 0: { /* permute */
    int32_t perm[IC_MAX_DIMS];
    for (int32_t d = 0; d < nd; d++) perm[d] = d;
    for (int32_t d = nd - 1; d > 0; d--) {
      int32_t j = (int32_t)below(s, (uint32_t)d + 1), t = perm[d];
      perm[d] = perm[j];
      perm[j] = t;
    }
    return ic_graph_permute(s->g, a, nd, perm);
  }
  case 1: { /* slice */
    if (nd == 0) return a;
    int64_t start = (int64_t)below(s, 7) - 3, stop = u8(s) & 1 ? INT64_MAX : (int64_t)below(s, 9) - 4;
    int64_t step = (int64_t)below(s, 5) - 2;
    return ic_graph_slice(s->g, a, (int32_t)below(s, (uint32_t)nd), start, step < 0 ? -stop : stop, step ? step : 1);
  }
  case 2: /* unsqueeze, squeeze */
    if (nd < 4 && (u8(s) & 1)) return ic_graph_unsqueeze(s->g, a, (int32_t)below(s, (uint32_t)nd + 1));
    for (int32_t d = 0; d < nd; d++)
      if (dims[d] == 1) return ic_graph_squeeze(s->g, a, d);
    return a;
  case 3: { /* expand: a new leading dim, or size-1 dims to the base's */
    ic_dim to[IC_MAX_DIMS];
    int32_t lead = nd < 4 && (u8(s) & 1) ? 1 : 0;
    if (lead) to[0] = (ic_dim)(1 + below(s, 3));
    for (int32_t d = 0; d < nd; d++) {
      to[lead + d] = dims[d];
      if (dims[d] == 1 && (u8(s) & 1)) to[lead + d] = (ic_dim)(2 + below(s, 3));
      if (dims[d] == IC_DIM_INFER) return a;
    }
    return ic_graph_expand(s->g, a, nd + lead, to);
  }
  case 4: /* flatten, reshape with an inferred dim */
    if (nd >= 2 && (u8(s) & 1)) {
      int32_t start = (int32_t)below(s, (uint32_t)nd - 1);
      return ic_graph_flatten(s->g, a, start, start + 1 + (int32_t)below(s, (uint32_t)(nd - start - 1)));
    }
    if (nd >= 1 && dims[0] != IC_DIM_INFER) return ic_graph_reshape(s->g, a, 2, (ic_dim[]){dims[0], IC_DIM_INFER});
    return ic_graph_reshape(s->g, a, 1, (ic_dim[]){IC_DIM_INFER});
  case 5: { /* concat with itself or a value of its shape */
    if (nd == 0) return a;
    ic_value two[2] = {a, a};
    ic_value b = pick(s);
    if (same_shape(s, a, b)) two[1] = to_dtype(s, b, ic_graph_value_dtype(s->g, a));
    if (u8(s) & 1) {
      ic_value t = two[0];
      two[0] = two[1];
      two[1] = t;
    }
    return ic_graph_concat(s->g, 2, two, (int32_t)below(s, (uint32_t)nd) - (u8(s) & 1 ? nd : 0));
  }
  default: { /* pad, crops on constant dims */
    if (nd == 0) return a;
    int32_t npads = 1 + (int32_t)below(s, (uint32_t)(nd < 2 ? nd : 2));
    int64_t lo_hi[4];
    for (int32_t k = 0; k < npads; k++) {
      ic_dim size = dims[nd - 1 - k];
      for (int32_t e = 0; e < 2; e++) {
        int64_t amount = (int64_t)below(s, 4) - 1;
        if (amount < 0 && (size < 1 || (e == 1 && lo_hi[2 * k] < 0 && size < 2))) amount = 0;
        lo_hi[2 * k + e] = amount;
      }
    }
    static const double values[] = {0.0, -1.5, 1.0, NAN, -INFINITY};
    double value = values[below(s, 5)];
    if (isnan(value) && dtype_class(ic_graph_value_dtype(s->g, a)) != CLASS_FLOAT) value = 2.0;
    return ic_graph_pad(s->g, a, npads, lo_hi, value);
  }
  }
}

static ic_value reduction(gen *s, ic_value a) {
  int32_t nd = ndim_of(s, a), axes[IC_MAX_DIMS], naxes = 0;
  for (int32_t d = 0; d < nd; d++)
    if (u8(s) & 1) axes[naxes++] = u8(s) & 1 ? d : d - nd;
  int keepdim = u8(s) & 1;
  uint32_t which = below(s, IC_REDUCE_COUNT + 7);
  if (which < IC_REDUCE_COUNT) {
    ic_reduce_op op = (ic_reduce_op)which;
    /* max, min and the arg reductions of nothing are refused: a constant 0 among the
     * reduced dims takes sum instead */
    ic_dim dims[IC_MAX_DIMS];
    dims_of(s, a, dims);
    bool empty = false;
    for (int32_t k = 0; k < (naxes ? naxes : nd); k++) empty |= dims[naxes ? (axes[k] + nd) % nd : k] == 0;
    if (empty && (op == IC_REDUCE_MAX || op == IC_REDUCE_MIN || op == IC_REDUCE_ARGMAX || op == IC_REDUCE_ARGMIN))
      op = IC_REDUCE_SUM;
    if (op == IC_REDUCE_MEAN) a = to_class(s, a, FUZZ_FLOAT);
    if (op == IC_REDUCE_ARGMAX || op == IC_REDUCE_ARGMIN) a = to_class(s, a, FUZZ_NUM);
    return ic_graph_reduce(s->g, op, a, naxes, axes, keepdim);
  }
  a = to_class(s, a, FUZZ_FLOAT);
  int32_t axis = nd ? (int32_t)below(s, (uint32_t)nd) - (u8(s) & 1 ? nd : 0) : 0;
  int32_t nlast = nd ? 1 + (int32_t)below(s, (uint32_t)nd) : 0;
  switch (which - IC_REDUCE_COUNT) {
  case 0: return ic_graph_mean_correction(s->g, a, naxes, axes, (double)below(s, 3), keepdim);
  case 1: return ic_graph_var(s->g, a, naxes, axes, (double)below(s, 2), keepdim);
  case 2: return ic_graph_std(s->g, a, naxes, axes, (double)below(s, 2), keepdim);
  case 3: /* softmax and log_softmax take a max: not over an axis of constant size 0 */
  case 4: {
    ic_dim dims[IC_MAX_DIMS];
    dims_of(s, a, dims);
    if (!nd || dims[(axis + nd) % nd] == 0) return a;
    return which - IC_REDUCE_COUNT == 3 ? ic_graph_softmax(s->g, a, axis) : ic_graph_log_softmax(s->g, a, axis);
  }
  default: {
    if (!nd) return a;
    /* a weight (and bias) of the normalized shape, when its dims are plain */
    ic_value w = IC_INVALID_VALUE, bias = IC_INVALID_VALUE;
    ic_dim dims[IC_MAX_DIMS];
    dims_of(s, a, dims);
    bool plain = s->ninputs < MAX_INPUTS - 1;
    for (int32_t d = nd - nlast; d < nd; d++) plain &= dims[d] != IC_DIM_INFER;
    if (plain && (u8(s) & 1)) {
      char name[16];
      snprintf(name, sizeof name, "c%d_w%d", (int)s->comp, (int)s->ninputs);
      w = s->inputs[s->ninputs++] =
          ic_graph_input(s->g, name, ic_graph_value_dtype(s->g, a), nlast, dims + nd - nlast, IC_LAYOUT_CONTIGUOUS);
      if (u8(s) & 1) bias = w;
    }
    if (which - IC_REDUCE_COUNT == 5) return ic_graph_layer_norm(s->g, a, nlast, w, bias, u8(s) & 1 ? 1e-5 : 0.0);
    return ic_graph_rms_norm(s->g, a, nlast, w, u8(s) & 1 ? 1e-6 : 0.0);
  }
  }
}

/* A few valid asm templates (the pack, constraints and dtypes that fit each). */
static ic_status inline_asm(gen *s, ic_value a, ic_value *out) {
  ic_dtype dt = ic_graph_value_dtype(s->g, a);
  ic_inline_asm_desc d = {.struct_size = sizeof d, .is_pure = u8(s) & 1, .pack = 1};
  ic_dtype outs[2] = {dt, dt};
  ic_value ins[2] = {a, a};
  int32_t nin = 1, nout = 1;
  switch (below(s, 6)) {
  case 0: /* 32-bit bits through */
    ins[0] = to_dtype(s, a, u8(s) & 1 ? IC_F32 : IC_I32);
    outs[0] = ic_graph_value_dtype(s->g, ins[0]);
    d.asm_text = "mov.b32 $0, $1;";
    d.constraints = "=r,r";
    break;
  case 1: /* f32 arithmetic, f16/bf16 operands widened */
    ins[0] = to_class(s, a, FUZZ_FLOAT);
    if (ic_dtype_size(ic_graph_value_dtype(s->g, ins[0])) == 1 || ic_graph_value_dtype(s->g, ins[0]) == IC_F64)
      ins[0] = to_dtype(s, ins[0], IC_F32);
    ins[1] = partner(s, ins[0]);
    if (ic_graph_value_ndim(s->g, ins[1]) == 0) ins[1] = ins[0]; /* a constant needs a dtype: keep to values */
    nin = 2;
    outs[0] = IC_F32;
    d.asm_text = "add.rn.f32 $0, $1, $2;";
    d.constraints = "=f,f,f";
    break;
  case 2: /* two 16-bit elements a register */
    ins[0] = to_dtype(s, a, u8(s) & 1 ? IC_F16 : IC_I16);
    outs[0] = ic_graph_value_dtype(s->g, ins[0]);
    d.pack = 2;
    d.asm_text = "mov.b32 $0, $1;";
    d.constraints = "=r,r";
    break;
  case 3: /* 64-bit */
    ins[0] = to_dtype(s, a, u8(s) & 1 ? IC_F64 : IC_I64);
    outs[0] = ic_graph_value_dtype(s->g, ins[0]);
    d.asm_text = "mov.b64 $0, $1;";
    d.constraints = "=l,l";
    break;
  case 4: /* two outputs of one f32 operand */
    ins[0] = to_dtype(s, a, IC_F32);
    nout = 2;
    outs[0] = IC_F32;
    outs[1] = IC_F16;
    d.asm_text = "mov.b32 $0, $2;\ncvt.rn.f16.f32 $1, $2;";
    d.constraints = "=f,=h,f";
    break;
  default: /* bytes through a 16-bit register, four a 32-bit one */
    ins[0] = to_dtype(s, a, u8(s) & 1 ? IC_U8 : IC_I8);
    outs[0] = ic_graph_value_dtype(s->g, ins[0]);
    d.pack = 4;
    d.asm_text = "mov.b32 $0, $1;";
    d.constraints = "=r,r";
    break;
  }
  d.output_dtypes = outs;
  ic_value res[2];
  ic_status st = ic_graph_inline_asm(s->g, &d, nin, ins, nout, res);
  *out = res[nout - 1];
  if (st == IC_OK) s->has_asm = true;
  return st;
}

static int64_t numel_bound(gen *s, ic_value a) {
  int32_t nd = ndim_of(s, a);
  ic_dim dims[IC_MAX_DIMS];
  dims_of(s, a, dims);
  int64_t n = 1;
  for (int32_t d = 0; d < nd; d++) n *= dims[d] >= 0 ? (dims[d] > 0 ? dims[d] : 1) : 8;
  return n;
}

/* ---------------------------------------------------------------- matmul */

/* Matmul dims are draw_dim's, SYMBOL_N and SYMBOL_M kept until an input takes them (a
 * symbol no input has is an error): then the graph's symbol. */
static ic_dim mm_symbol(gen *s, ic_dim d) {
  return d == SYMBOL_N || d == SYMBOL_M ? ic_graph_symbol(s->g, d == SYMBOL_M ? "m" : "n") : d;
}

/* Elements of dims, a symbol counted as 8 (ref_check binds them to at most 8). */
static int64_t mm_count(int32_t nd, const ic_dim *dims) {
  int64_t n = 1;
  for (int32_t d = 0; d < nd; d++) n *= dims[d] >= 0 ? (dims[d] > 0 ? dims[d] : 1) : 8;
  return n;
}

/* A new input of dtype dt and dims (any layout). */
static ic_value mm_input(gen *s, ic_dtype dt, int32_t nd, const ic_dim *dims) {
  static const ic_layout layouts[] = {IC_LAYOUT_CONTIGUOUS, IC_LAYOUT_INNER_CONTIGUOUS, IC_LAYOUT_STRIDED};
  ic_dim d[IC_MAX_DIMS];
  for (int32_t k = 0; k < nd; k++) d[k] = mm_symbol(s, dims[k]);
  char name[16];
  snprintf(name, sizeof name, "c%d_w%d", (int)s->comp, (int)s->ninputs);
  return s->inputs[s->ninputs++] = ic_graph_input(s->g, name, dt, nd, d, layouts[below(s, 3)]);
}

/* An operand of dtype dt and dims: an input, or a view of one (permuted, sliced from a
 * larger one, expanded from size-1 batch dims), maybe under a pointwise op (a prologue);
 * needs a free input. */
static ic_value mm_operand(gen *s, ic_dtype dt, int32_t nd, const ic_dim *dims, int32_t nbatch) {
  ic_dim src[IC_MAX_DIMS];
  memcpy(src, dims, (size_t)nd * sizeof *dims);
  ic_value x;
  switch (below(s, 5)) {
  case 0: { /* a permuted input read in place */
    int32_t perm[IC_MAX_DIMS], inv[IC_MAX_DIMS];
    for (int32_t d = 0; d < nd; d++) perm[d] = d;
    for (int32_t d = nd - 1; d > 0; d--) {
      int32_t j = (int32_t)below(s, (uint32_t)d + 1), t = perm[d];
      perm[d] = perm[j];
      perm[j] = t;
    }
    for (int32_t d = 0; d < nd; d++) src[d] = dims[perm[d]], inv[perm[d]] = d;
    x = ic_graph_permute(s->g, mm_input(s, dt, nd, src), nd, inv);
    break;
  }
  case 1: { /* a slice of a larger input: an offset, or every other element */
    int32_t d = nd ? (int32_t)below(s, (uint32_t)nd) : 0;
    if (!nd || dims[d] < 1) return mm_input(s, dt, nd, dims);
    int64_t step = 1 + below(s, 2), start = below(s, 3);
    src[d] = start + (dims[d] - 1) * step + 1 + below(s, 2);
    x = ic_graph_slice(s->g, mm_input(s, dt, nd, src), d, start, start + (dims[d] - 1) * step + 1, step);
    break;
  }
  case 2: /* constant batch dims expanded from 1 */
    if (!nbatch) return mm_input(s, dt, nd, dims);
    for (int32_t d = 0; d < nbatch; d++)
      if (dims[d] >= 0 && (u8(s) & 1)) src[d] = 1;
    x = mm_input(s, dt, nd, src);
    for (int32_t d = 0; d < nd; d++) src[d] = mm_symbol(s, dims[d]); /* each one an input has now */
    x = ic_graph_expand(s->g, x, nd, src);
    break;
  case 3: /* a pointwise op on it, its dtype back to dt */
    x = mm_input(s, dt, nd, dims);
    {
      ic_value y = pointwise(s, x);
      if (y != IC_INVALID_VALUE && same_shape(s, x, y)) x = to_dtype(s, y, dt);
    }
    break;
  default: x = mm_input(s, dt, nd, dims); break;
  }
  return x;
}

/* a @ b on operands built for it (a: the picked value when its dims allow, else an
 * operand as mm_operand makes them; b: an operand, or a's transpose), then maybe an
 * epilogue: a bias and an op of the op table on the result. */
static ic_value matmul(gen *s, ic_value a) {
  static const ic_dtype dts[] = {IC_BF16, IC_F16, IC_F32, IC_F64, IC_I8};
  ic_dtype dt = dts[below(s, 5)];
  if (s->ninputs > MAX_INPUTS - 3) return pointwise(s, a);
  s->has_matmul = true;
  ic_dim da[IC_MAX_DIMS], db[IC_MAX_DIMS];
  int32_t na = ndim_of(s, a);
  dims_of(s, a, da);
  bool plain = na >= 1 && na <= 4 && numel_bound(s, a) <= 1024;
  for (int32_t d = 0; d < na; d++) plain &= da[d] != IC_DIM_INFER;
  if (plain && (u8(s) & 1)) {
    a = to_dtype(s, a, dt);
  } else {
    /* [K], [M, K] or [B..., M, K], at most 1024 elements */
    na = (int32_t)below(s, 5);
    na = na == 0 ? 1 : na > 2 ? na - 1 : na;
    for (int32_t d = 0; d < na; d++) da[d] = draw_dim(s);
    if (mm_count(na, da) > 1024)
      for (int32_t d = 0; d < na; d++) da[d] = 1 + below(s, 4);
    a = mm_operand(s, dt, na, da, na > 2 ? na - 2 : 0);
  }
  ic_dim k = da[na - 1];
  /* b: [K], [K, N] or [B..., K, N], its batch dims those of a, 1 or fewer */
  int32_t nb;
  if (na >= 2 && (u8(s) & 3) == 0) {
    int32_t perm[IC_MAX_DIMS];
    for (int32_t d = 0; d < na; d++) perm[d] = d;
    perm[na - 2] = na - 1;
    perm[na - 1] = na - 2;
    ic_value b = ic_graph_permute(s->g, a, na, perm); /* a @ a^T */
    return ic_graph_matmul(s->g, a, b);
  }
  uint32_t form = below(s, 4);
  if (form == 0) {
    nb = 1;
    db[0] = k;
  } else {
    int32_t abatch = na > 2 ? na - 2 : 0, bbatch = form == 3 ? (int32_t)below(s, (uint32_t)abatch + 2) : 0;
    nb = bbatch + 2;
    for (int32_t d = 0; d < bbatch; d++) {
      int32_t from = abatch - bbatch + d; /* aligned at the ends; past a's: a new dim */
      db[d] = from >= 0 && !(u8(s) & 3) ? 1 : from >= 0 ? da[from] : (ic_dim)(1 + below(s, 3));
    }
    db[nb - 2] = k;
    db[nb - 1] = draw_dim(s);
    if (mm_count(nb, db) > 1024) db[nb - 1] = 1 + below(s, 4);
  }
  ic_value b = mm_operand(s, dt, nb, db, nb > 2 ? nb - 2 : 0);
  ic_value mm = ic_graph_matmul(s->g, a, b), r = mm;
  if (r == IC_INVALID_VALUE) return r;
  int32_t nr = ndim_of(s, r);
  ic_dim dr[IC_MAX_DIMS];
  dims_of(s, r, dr);
  if (nr >= 1 && dr[nr - 1] != IC_DIM_INFER && (u8(s) & 1)) /* a bias along N */
    r = ic_graph_binary(s->g, IC_OP_ADD, r, mm_input(s, ic_graph_value_dtype(s->g, r), 1, &dr[nr - 1]));
  if (u8(s) & 1) r = pointwise(s, r);
  /* the product as a value too, under an epilogue: now and then an output beside it */
  if (r != mm && s->nv < MAX_VALUES - 1 && numel_bound(s, mm) <= MAX_ELEMENTS) {
    s->read[s->nv] = u8(s) & 1;
    s->v[s->nv++] = mm;
  }
  return r;
}

static ic_value step(gen *s) {
  ic_value a = pick(s);
  uint32_t kind = below(s, 16);
  if (kind < 6) return pointwise(s, a);
  if (kind < 9) return view(s, a);
  if (kind < 13) return reduction(s, a);
  if (kind == 13 && (u8(s) & 3) == 0) {
    ic_value r;
    return inline_asm(s, a, &r) == IC_OK ? r : IC_INVALID_VALUE;
  }
  if (kind == 15 && g_matmul != MATMUL_OFF) return matmul(s, a);
  return pointwise(s, a);
}

/* Builds the graph; false when a builder call failed (the graph holds the error). */
static bool generate(gen *s) {
  s->base_nd = (int32_t)below(s, 5);
  int64_t count = 1;
  for (int32_t d = 0; d < s->base_nd; d++) {
    s->base[d] = draw_dim(s);
    if (s->base[d] >= 0 && count * (s->base[d] ? s->base[d] : 1) > MAX_ELEMENTS / 8) s->base[d] = 1 + below(s, 2);
    count *= s->base[d] > 0 ? s->base[d] : s->base[d] < 0 ? 8 : 1;
  }
  int32_t nin = 1 + (int32_t)below(s, 3);
  for (int32_t i = 0; i < nin; i++) {
    ic_dim dims[4];
    int32_t drop = i && (u8(s) & 3) == 0 ? (int32_t)below(s, (uint32_t)s->base_nd + 1) : 0, nd = s->base_nd - drop;
    for (int32_t d = 0; d < nd; d++) {
      dims[d] = (u8(s) & 7) == 0 ? 1 : s->base[drop + d];
      if (dims[d] == SYMBOL_N || dims[d] == SYMBOL_M) dims[d] = ic_graph_symbol(s->g, dims[d] == SYMBOL_M ? "m" : "n");
    }
    static const ic_layout layouts[] = {IC_LAYOUT_CONTIGUOUS, IC_LAYOUT_CONTIGUOUS, IC_LAYOUT_INNER_CONTIGUOUS,
                                        IC_LAYOUT_STRIDED};
    char name[16];
    snprintf(name, sizeof name, "c%d_x%d", (int)s->comp, (int)i);
    s->inputs[s->ninputs++] = s->v[s->nv++] = ic_graph_input(s->g, name, draw_dtype(s, FUZZ_ANY), nd, dims, layouts[below(s, 4)]);
  }
  int32_t steps = 1 + (int32_t)below(s, MAX_STEPS);
  for (int32_t k = 0; k < steps && s->nv < MAX_VALUES && s->b.n; k++) {
    ic_value r = step(s);
    if (r == IC_INVALID_VALUE || ic_graph_error(s->g, NULL) != IC_OK) return false;
    if (numel_bound(s, r) > MAX_ELEMENTS) continue; /* built, but not built on */
    s->v[s->nv++] = r;
  }
  /* outputs: the last value, then the latest values nothing read (else compiles would
   * drop them unseen) or, now and then, any value; never an input */
  int32_t nout = 0, next = s->nv - 2;
  ic_value outs[MAX_OUTPUTS];
  for (int32_t k = 0; k < MAX_OUTPUTS; k++) {
    while (next >= 0 && s->read[next]) next--;
    ic_value o = k == 0 ? s->v[s->nv - 1] : next >= 0 ? s->v[next--] : (u8(s) & 3) == 0 ? pick(s) : IC_INVALID_VALUE;
    if (o == IC_INVALID_VALUE) break;
    bool fresh = true;
    for (int32_t j = 0; j < s->ninputs; j++) fresh &= o != s->inputs[j];
    for (int32_t j = 0; j < nout; j++) fresh &= o != outs[j];
    if (!fresh) continue;
    char name[16];
    snprintf(name, sizeof name, "c%d_y%d", (int)s->comp, (int)nout);
    if (ic_graph_output(s->g, name, o) != IC_OK) return false;
    outs[nout++] = o;
  }
  /* every value is an input: an op on the last one */
  if (nout == 0) {
    char name[16];
    snprintf(name, sizeof name, "c%d_y0", (int)s->comp);
    return ic_graph_output(s->g, name, ic_graph_unary(s->g, IC_OP_LOGICAL_NOT, s->v[s->nv - 1])) == IC_OK;
  }
  return true;
}

/* ---------------------------------------------------------------- the checks */

static struct {
  uint64_t inputs, text, built, refused, with_asm, with_matmul, compiled, ref_checked, ref_refused_runs;
} g_count;

/* FUZZ_COMPILE_GENERATE_ONLY: build the graphs, compile nothing (the generator's valid
 * share, quickly); FUZZ_COMPILE_SHOW_REFUSED: print each builder error */
static bool g_generate_only;
static ic_context *g_ctx[2];
static const char *const k_archs[2] = {"sm_80", "sm_90a"};

static void report(void) {
  ic_cache_stats cs[2] = {{.struct_size = sizeof cs[0]}, {.struct_size = sizeof cs[1]}};
  for (int a = 0; a < 2; a++)
    if (g_ctx[a]) ic_cache_stats_get(g_ctx[a], &cs[a]);
  uint64_t graphs = g_count.built + g_count.refused;
  fprintf(stderr,
          "fuzz_compile: %" PRIu64 " inputs (%" PRIu64 " text); %" PRIu64 " random graphs generated, %" PRIu64
          " valid (%.1f%%), %" PRIu64 " with asm, %" PRIu64 " with matmul; %" PRIu64 " programs (the valid graphs of an input together) compiled"
          " fused and eager for sm_80 and sm_90a; %" PRIu64 " graphs run on ref, fused == eager (%" PRIu64
          " refused at run time alike); NVRTC: %" PRIu64 " + %" PRIu64 " kernels compiled (%.0f + %.0f ms), %" PRIu64
          " + %" PRIu64 " from the memory cache, %" PRIu64 " + %" PRIu64 " from disk\n",
          g_count.inputs, g_count.text, graphs, g_count.built, graphs ? 100.0 * (double)g_count.built / (double)graphs : 0.0,
          g_count.with_asm, g_count.with_matmul, g_count.compiled, g_count.ref_checked, g_count.ref_refused_runs, cs[0].compiles,
          cs[1].compiles, cs[0].compile_ms, cs[1].compile_ms, cs[0].memory_hits, cs[1].memory_hits, cs[0].disk_hits,
          cs[1].disk_hits);
}

/* The two compile-only contexts, made once: the disk kernel cache only where IC_CACHE_DIR
 * names one (shared by parallel workers and CI runs), else memory alone. */
static void contexts(void) {
  if (g_ctx[0]) return;
  const char *dir = getenv("IC_CACHE_DIR");
  for (int a = 0; a < 2; a++) {
    ic_context_options o = {.struct_size = sizeof o,
                            .arch = k_archs[a],
                            .flags = IC_CONTEXT_COMPILE_ONLY | (dir && dir[0] ? 0u : IC_CONTEXT_NO_DISK_CACHE)};
    if (ic_context_create(&o, &g_ctx[a]) != IC_OK) {
      fprintf(stderr, "fuzz_compile: no context for %s: %s\n", k_archs[a], ic_last_error());
      abort();
    }
  }
  if (getenv("FUZZ_COMPILE_QUIET") == NULL) atexit(report);
  g_generate_only = getenv("FUZZ_COMPILE_GENERATE_ONLY") != NULL;
  const char *mm = getenv("FUZZ_COMPILE_MATMUL");
  if (mm && mm[0] >= '0' && mm[0] <= '2' && !mm[1]) g_matmul = mm[0] - '0';
}

/* A splitmix64 stream for input values. */
static uint64_t mix(uint64_t *x) {
  uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static size_t shape_bytes(ic_dtype dt, int32_t nd, const int64_t *shape) {
  size_t n = ic_dtype_size(dt);
  for (int32_t d = 0; d < nd; d++) n *= (size_t)shape[d];
  return n;
}

/* Runs fused and eager on the ref backend with the same random inputs (symbols bound to
 * small values) and requires the same status and the same output bits. */
static void ref_check(const ic_graph *g, uint64_t seed) {
  ic_context *ctx = g_ctx[1];
  ic_compile_options of = {.struct_size = sizeof of, .mode = IC_MODE_FUSED, .flags = IC_COMPILE_STRICT, .backend = "ref"};
  ic_compile_options oe = of;
  oe.mode = IC_MODE_EAGER;
  ic_program *pf = NULL, *pe = NULL;
  ic_status sf = ic_compile(ctx, g, &of, &pf), se = ic_compile(ctx, g, &oe, &pe);
  FUZZ_REQUIRE(sf == IC_OK && se == IC_OK, "ref compile: fused %s, eager %s: %s", ic_status_string(sf),
               ic_status_string(se), ic_last_error());
  int32_t nsym = ic_program_symbol_count(pf), nin = ic_program_input_count(pf), nout = ic_program_output_count(pf);
  int64_t syms[16] = {0};
  static const int64_t small[] = {1, 2, 3, 5, 0, 8, 1, 4};
  for (int32_t i = 0; i < nsym && i < 16; i++) syms[i] = small[mix(&seed) % 8];
  ic_tensor in[16], out_f[16], out_e[16];
  int64_t shapes[16][IC_MAX_DIMS];
  void *bufs[16] = {0};
  bool sized = nin <= 16 && nout <= 16 && nsym <= 16;
  for (int32_t i = 0; sized && i < nin; i++) {
    ic_buffer_info bi;
    FUZZ_REQUIRE(ic_program_buffer(pf, i, &bi) == IC_OK && bi.kind == IC_BUFFER_INPUT, "input %d's buffer", (int)i);
    for (int32_t d = 0; d < bi.ndim; d++) FUZZ_REQUIRE(ic_program_eval(pf, bi.dims_expr[d], syms, &shapes[i][d]) == IC_OK, "dim");
    size_t bytes = shape_bytes(bi.dtype, bi.ndim, shapes[i]);
    sized = bytes <= 64 * MAX_ELEMENTS;
    bufs[i] = malloc(bytes ? bytes : 1);
    FUZZ_REQUIRE(bufs[i] != NULL, "out of memory");
    for (size_t k = 0; k < bytes; k += 8) {
      uint64_t r = mix(&seed);
      /* mostly small numbers in every dtype; sometimes raw bits (NaNs, infs) */
      if ((r & 3) != 0) {
        uint8_t tmp[8];
        size_t el = ic_dtype_size(bi.dtype);
        ic_element_store(bi.dtype, (double)((int64_t)(r >> 8) % 9 - 4) / ((r >> 4 & 1) ? 2.0 : 1.0), tmp);
        for (size_t j = 0; j < 8 && k + j < bytes; j++) ((uint8_t *)bufs[i])[k + j] = tmp[j % el];
      } else {
        memcpy((uint8_t *)bufs[i] + k, &r, bytes - k < 8 ? bytes - k : 8);
      }
    }
    in[i] = (ic_tensor){bufs[i], bi.dtype, bi.ndim, shapes[i], NULL};
  }
  if (sized) {
    for (int32_t i = 0; i < nout; i++) {
      ic_buffer_info bi;
      FUZZ_REQUIRE(ic_program_buffer(pf, nin + i, &bi) == IC_OK, "output %d's buffer", (int)i);
      out_f[i] = out_e[i] = (ic_tensor){NULL, bi.dtype, bi.ndim, NULL, NULL};
    }
    ic_status rf = ic_program_run(pf, in, nin, out_f, nout, NULL);
    ic_status re = ic_program_run(pe, in, nin, out_e, nout, NULL);
    FUZZ_REQUIRE(rf == re, "fused run %s, eager run %s: %s", ic_status_string(rf), ic_status_string(re), ic_last_error());
    if (rf != IC_OK) g_count.ref_refused_runs++;
    for (int32_t i = 0; i < nout && rf == IC_OK; i++) {
      int32_t nd = 0;
      int64_t shape[IC_MAX_DIMS];
      FUZZ_REQUIRE(ic_program_output_shape(pf, i, in, &nd, shape) == IC_OK, "output shape: %s", ic_last_error());
      size_t bytes = shape_bytes(out_f[i].dtype, nd, shape);
      FUZZ_REQUIRE(!bytes || memcmp(out_f[i].data, out_e[i].data, bytes) == 0, "output %d: fused and eager differ",
                   (int)i);
    }
    for (int32_t i = 0; i < nout; i++) {
      free(out_f[i].data);
      free(out_e[i].data);
    }
    g_count.ref_checked++;
  }
  for (int32_t i = 0; i < nin && i < 16; i++) free(bufs[i]);
  ic_program_release(pf);
  ic_program_release(pe);
}

/* The graph compiles fused and eager for both archs, strict: any failure is a finding. */
static void compile_all(const ic_graph *g) {
  for (int a = 0; a < 2; a++)
    for (int m = 0; m < 2; m++) {
      ic_compile_options o = {.struct_size = sizeof o, .mode = m ? IC_MODE_EAGER : IC_MODE_FUSED, .flags = IC_COMPILE_STRICT};
      ic_program *p = NULL;
      ic_status st = ic_compile(g_ctx[a], g, &o, &p);
      if (st != IC_OK) {
        char *text = NULL;
        ic_graph_print(g, &text);
        FUZZ_REQUIRE(st == IC_OK, "%s %s compile failed (%s):\n%s\ngraph:\n%s", m ? "eager" : "fused", k_archs[a],
                     ic_status_string(st), ic_last_error(), text ? text : "(does not print)");
      }
      ic_program_release(p);
    }
  g_count.compiled++;
}

static const char k_text_magic[] = "# ic graph";

/* FUZZ_COMPILE_PRINT=DIR: every valid generated graph also goes to DIR/g<n>.icg in the
 * text format (to run them elsewhere, say on a GPU with `ic run`) */
static void print_graph(const ic_graph *g) {
  static uint64_t printed;
  const char *dir = getenv("FUZZ_COMPILE_PRINT");
  char *text = NULL;
  if (!dir || !dir[0] || ic_graph_print(g, &text) != IC_OK) return;
  char path[4096];
  snprintf(path, sizeof path, "%s/g%06" PRIu64 ".icg", dir, printed++);
  FILE *f = fopen(path, "w");
  if (f) {
    fprintf(f, "%s\n%s", k_text_magic, text);
    fclose(f);
  }
  ic_string_free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  contexts();
  g_count.inputs++;
  /* the counts once a minute too, for long runs stopped from outside */
  static time_t last;
  time_t now = time(NULL);
  if (!last) last = now;
  if (now - last >= 60 && getenv("FUZZ_COMPILE_QUIET") == NULL) {
    report();
    last = now;
  }
  uint64_t seed = 0x243f6a8885a308d3ull;
  for (size_t i = 0; i < size; i++) seed = (seed ^ data[i]) * 0x100000001b3ull;
  if (size >= sizeof k_text_magic - 1 && memcmp(data, k_text_magic, sizeof k_text_magic - 1) == 0) {
    g_count.text++;
    char *text = malloc(size + 1);
    FUZZ_REQUIRE(text != NULL, "out of memory");
    memcpy(text, data, size);
    text[size] = '\0';
    ic_graph *g = NULL;
    ic_status st = ic_graph_parse(text, &g);
    bool has_asm = strstr(text, "inline_asm") != NULL, has_matmul = strstr(text, "matmul(") != NULL;
    free(text);
    if (st != IC_OK) return 0;
    /* text parses into graphs that are not valid (no outputs, a symbol no input has):
     * the ref backend's compile says so (and refuses asm, which is valid) */
    ic_compile_options ro = {.struct_size = sizeof ro, .mode = IC_MODE_EAGER, .backend = "ref"};
    ic_program *rp = NULL;
    st = ic_compile(g_ctx[1], g, &ro, &rp);
    ic_program_release(rp);
    if (st == IC_ERR_INVALID_GRAPH) {
      ic_graph_destroy(g);
      return 0;
    }
    g_count.built++;
    if (has_matmul) g_count.with_matmul++;
    if (!has_matmul || g_matmul == MATMUL_ALL) compile_all(g);
    if (has_asm) g_count.with_asm++;
    else ref_check(g, seed);
    ic_graph_destroy(g);
    return 0;
  }
  /* Components: each a random graph of its own, built alone (its validity and the ref
   * check) and again, from the same bytes, into one graph with the others, which compiles
   * in one NVRTC batch: NVRTC's cost a call is paid once for all of them. */
  fuzz_bytes b = {data, size};
  int32_t ncomp = 1 + fuzz_u8(&b) % MAX_COMPONENTS, nbatch = 0;
  ic_graph *batch = NULL;
  if (ic_graph_create(&batch) != IC_OK) return 0;
  bool batch_asm = false;
  for (int32_t c = 0; c < ncomp && b.n; c++) {
    gen s = {.b = b, .comp = c};
    if (ic_graph_create(&s.g) != IC_OK) break;
    bool valid = generate(&s);
    if (valid) {
      g_count.built++;
      if (s.has_matmul) g_count.with_matmul++;
      if (s.has_asm) g_count.with_asm++;
      else if (!g_generate_only) ref_check(s.g, seed + (uint64_t)c);
      print_graph(s.g);
      if (!s.has_matmul || g_matmul == MATMUL_ALL) {
        gen again = {.b = b, .comp = c, .g = batch};
        FUZZ_REQUIRE(generate(&again) && again.b.n == s.b.n, "component %d builds alone but not beside the others: %s",
                     (int)c, ic_last_error());
        batch_asm |= again.has_asm;
        nbatch++;
      }
    } else {
      g_count.refused++;
      if (getenv("FUZZ_COMPILE_SHOW_REFUSED")) {
        const char *msg = NULL;
        ic_graph_error(s.g, &msg);
        fprintf(stderr, "refused: %s\n", msg ? msg : "");
      }
    }
    ic_graph_destroy(s.g);
    b = s.b;
  }
  if (nbatch > 0 && !g_generate_only) compile_all(batch);
  (void)batch_asm;
  ic_graph_destroy(batch);
  return 0;
}
