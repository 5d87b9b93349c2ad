/* The ref backend: runs the kernel IR the CUDA backend compiles, point by point on the
 * host, with host pointers. The test oracle, and what runs where there is no GPU.
 * Offsets affine in the vars (every view but reshapes that split a dim) are evaluated
 * once per launch into coefficients; the others, and ranges, at every point. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backend/ref/ref.h"

typedef struct ref_access {
  bool affine;
  sym_id coeff[IC_MAX_DIMS];
  sym_id rest;
} ref_access;

typedef struct ref_kernel {
  const kir_kernel *k; /* owned by the program, which outlives its compiled kernels */
  ref_access *access;  /* per instruction (loads and stores) */
  /* reduction kernels: element[i] (kir_levels) and need[p * count + i] (kir_pass_needs) */
  bool *element, *need;
  int32_t nreduce;
} ref_kernel;

enum { REF_BLOCK = 1024, REF_MAX_PARAMS = KIR_SIZE_PARAM_BASE + KIR_MAX_SIZES };

static void ref_analyze(const kir_kernel *k, sym_id offset, ref_access *acc) {
  sym_id rest = offset;
  acc->affine = true;
  for (int32_t d = k->ndim - 1; d >= 0 && acc->affine; d--) {
    sym_id r;
    acc->affine = sym_affine_in_var(k->syms, rest, d, &acc->coeff[d], &r) &&
                  !sym_depends_on(k->syms, acc->coeff[d], SYM_VAR, -1);
    rest = r;
  }
  acc->rest = rest;
}

static void ref_kernel_free(backend_state *bs, backend_kernel *bk) {
  (void)bs;
  if (!bk) return;
  ref_kernel *rk = bk->impl;
  if (rk) {
    free(rk->access);
    free(rk->element);
    free(rk->need);
  }
  free(rk);
  free(bk->name);
  free(bk);
}

static ic_status ref_compile(backend_state *bs, const kir_kernel *k, uint32_t flags, void *batch, backend_kernel **out) {
  (void)flags, (void)batch; /* nothing to cache: compiling is an analysis of the IR */
  *out = NULL;
  if (k->stage != KIR_STAGE_WHOLE) /* backend_ref.two_stage_reductions is false */
    return error_set(IC_ERR_INTERNAL, "ref: %s is a stage of a two-stage reduction", k->name);
  for (int32_t i = 0; i < k->instrs.count; i++)
    if (k->instrs.items[i].kind == KIR_ASM)
      return error_set(IC_ERR_UNSUPPORTED, "the ref backend cannot run PTX: kernel %s holds an inline_asm node "
                       "(compile it for cuda)", k->name);
  backend_kernel *bk = sys_calloc(1, sizeof *bk);
  ref_kernel *rk = sys_calloc(1, sizeof *rk);
  if (bk) bk->impl = rk;
  if (!bk || !rk || !(bk->name = str_dup(k->name)) ||
      !(rk->access = sys_calloc((size_t)k->instrs.count + 1, sizeof *rk->access))) {
    ref_kernel_free(bs, bk);
    if (!bk) free(rk);
    return error_set(IC_ERR_OUT_OF_MEMORY, "ref: out of memory compiling %s", k->name);
  }
  bk->block = REF_BLOCK;
  bk->per_thread = 1;
  rk->k = k;
  for (int32_t i = 0; i < k->instrs.count; i++) {
    const kir_instr *in = &k->instrs.items[i];
    if (in->kind == KIR_LOAD || in->kind == KIR_STORE) ref_analyze(k, in->offset, &rk->access[i]);
  }
  bool plan_ok = true;
  if (k->reduces) {
    size_t n = (size_t)k->instrs.count + 1;
    rk->nreduce = kir_reduce_count(k);
    rk->element = sys_calloc(n, sizeof(bool));
    rk->need = sys_calloc(n * ((size_t)rk->nreduce + 1), sizeof(bool));
    plan_ok = rk->element && rk->need;
    if (plan_ok) {
      kir_levels(k, rk->element);
      kir_pass_needs(k, rk->element, NULL, rk->need);
    }
  }
  if (!plan_ok || sym_arena_failed(k->syms)) {
    ref_kernel_free(bs, bk);
    return error_set(IC_ERR_OUT_OF_MEMORY, "ref: out of memory compiling %s", k->name);
  }
  *out = bk;
  return IC_OK;
}

/* Everything a launch evaluates once: parameters bound, sizes, affine coefficients. */
typedef struct ref_launch {
  int64_t symbols[PROGRAM_MAX_SYMBOLS];
  int64_t params[REF_MAX_PARAMS];
  int64_t vars[IC_MAX_DIMS];
  int64_t dims[IC_MAX_DIMS];
  sym_env env;
  void **buffers;
  int64_t *coeff; /* per instruction: IC_MAX_DIMS coefficients then the rest */
  ref_value *values;
} ref_launch;

static int64_t ref_offset(const ref_kernel *rk, const ref_launch *rl, int32_t i, bool *ok) {
  const ref_access *acc = &rk->access[i];
  if (!acc->affine) {
    int64_t off = 0;
    *ok = *ok && sym_eval(rk->k->syms, rk->k->instrs.items[i].offset, &rl->env, &off);
    return off;
  }
  const int64_t *c = &rl->coeff[(size_t)i * (IC_MAX_DIMS + 1)];
  int64_t off = c[IC_MAX_DIMS];
  for (int32_t d = 0; d < rk->k->ndim; d++) off += c[d] * rl->vars[d];
  return off;
}

static bool ref_bind(const ref_kernel *rk, ref_launch *rl, void **args) {
  const kir_kernel *k = rk->k;
  for (int32_t i = 0; i < k->params.count; i++) {
    const kir_param *pa = &k->params.items[i];
    int64_t v;
    memcpy(&v, args[i], sizeof v);
    if (pa->kind == KIR_PARAM_BUFFER) rl->buffers[pa->index] = (void *)(uintptr_t)v;
    else if (pa->kind == KIR_PARAM_SYMBOL && pa->index < PROGRAM_MAX_SYMBOLS) rl->symbols[pa->index] = v;
    else if ((pa->kind == KIR_PARAM_STRIDE || pa->kind == KIR_PARAM_SIZE) && pa->index < REF_MAX_PARAMS)
      rl->params[pa->index] = v;
    else return false;
  }
  rl->env = (sym_env){.symbols = rl->symbols, .nsymbols = PROGRAM_MAX_SYMBOLS, .vars = rl->vars,
                      .nvars = IC_MAX_DIMS, .params = rl->params, .nparams = REF_MAX_PARAMS};
  bool ok = true;
  for (int32_t d = 0; d < k->ndim; d++) ok = ok && sym_eval(k->syms, k->dims[d], &rl->env, &rl->dims[d]);
  for (int32_t i = 0; i < k->instrs.count && ok; i++) {
    const ref_access *acc = &rk->access[i];
    if (!acc->affine || (k->instrs.items[i].kind != KIR_LOAD && k->instrs.items[i].kind != KIR_STORE)) continue;
    int64_t *c = &rl->coeff[(size_t)i * (IC_MAX_DIMS + 1)];
    for (int32_t d = 0; d < k->ndim; d++) ok = ok && sym_eval(k->syms, acc->coeff[d], &rl->env, &c[d]);
    ok = ok && sym_eval(k->syms, acc->rest, &rl->env, &c[IC_MAX_DIMS]);
  }
  return ok;
}

/* Evaluates instruction i at the point rl->vars (a REDUCE is evaluated by the passes). */
static void ref_eval(const ref_kernel *rk, ref_launch *rl, int32_t i, bool *okp) {
  const kir_kernel *k = rk->k;
  bool ok = *okp;
  {
    const kir_instr *in = &k->instrs.items[i];
    switch (in->kind) {
    case KIR_LOAD:
      /* a guarded load reads only where its guard holds; elsewhere its value is unused */
      if (in->nargs == 1 && !rl->values[in->args[0]].b) rl->values[i] = ref_constant(in->dtype, 0);
      else rl->values[i] = ref_load(in->dtype, rl->buffers[in->buffer], ref_offset(rk, rl, i, &ok));
      break;
    case KIR_RANGE: {
      int64_t index = 0, lo = 0, hi = 0;
      ok = ok && sym_eval(k->syms, in->offset, &rl->env, &index) && sym_eval(k->syms, in->lo, &rl->env, &lo) &&
           sym_eval(k->syms, in->hi, &rl->env, &hi);
      rl->values[i].b = (in->nargs == 0 || rl->values[in->args[0]].b) && lo <= index && index < hi;
      break;
    }
    case KIR_CONST: rl->values[i] = ref_constant(in->dtype, in->value); break;
    case KIR_OP: {
      ref_value args[3] = {{0}};
      for (int32_t a = 0; a < in->nargs; a++) args[a] = rl->values[in->args[a]];
      ic_dtype operand = k->instrs.items[in->args[in->op == IC_OP_WHERE ? 1 : 0]].dtype;
      rl->values[i] = ref_apply(in->op, operand, in->dtype, args);
      break;
    }
    case KIR_STORE:
      ref_store(in->dtype, rl->buffers[in->buffer], ref_offset(rk, rl, i, &ok), rl->values[in->args[0]]);
      break;
    case KIR_REDUCE: case KIR_CONTRACT: case KIR_ASM: case KIR_ASM_RESULT: break; /* asm: refused by ref_compile */
    }
  }
  *okp = ok;
}

/* Runs the body at the point rl->vars. */
static bool ref_point(const ref_kernel *rk, ref_launch *rl) {
  bool ok = true;
  for (int32_t i = 0; i < rk->k->instrs.count; i++) ref_eval(rk, rl, i, &ok);
  return ok;
}

/* ---------------------------------------------------------------- reductions */

/* Sets the reduced vars for element r (row-major over the reduced dims). */
static void ref_set_element(const ref_kernel *rk, ref_launch *rl, int64_t r) {
  const kir_kernel *k = rk->k;
  for (int32_t d = k->ndim - 1; d >= 0; d--) {
    if (!((k->axes >> d) & 1u)) continue;
    rl->vars[d] = rl->dims[d] ? r % rl->dims[d] : 0;
    r = rl->dims[d] ? r / rl->dims[d] : 0;
  }
}

/* Evaluates the element values pass p needs at element r (stores only in the last). */
static void ref_eval_pass(const ref_kernel *rk, ref_launch *rl, int32_t p, int64_t r, bool *ok) {
  const kir_kernel *k = rk->k;
  const bool *need = &rk->need[(size_t)p * (size_t)k->instrs.count];
  ref_set_element(rk, rl, r);
  for (int32_t i = 0; i < k->instrs.count; i++)
    if (need[i] && (k->instrs.items[i].kind != KIR_STORE || p == rk->nreduce)) ref_eval(rk, rl, i, ok);
}

/* The REDUCE at instruction i over the row: ic.h's order (kir.h's numbers). Lanes
 * L = KIR_REDUCE_LANES G, lane j owns chunks j, j + L, ...; then a pairwise tree over
 * the lanes, padded with the identity to a power of two. */
static ic_status ref_reduce_row(const ref_kernel *rk, ref_launch *rl, int32_t p, int32_t i, int64_t count, bool *ok) {
  const kir_kernel *k = rk->k;
  const kir_instr *in = &k->instrs.items[i];
  ic_dtype dt = k->instrs.items[in->args[0]].dtype;
  int64_t lanes = KIR_REDUCE_LANES * kir_reduce_groups(count), width = 1;
  while (width < lanes) width *= 2;
  ref_acc *acc = sys_malloc(sizeof *acc * (size_t)width);
  if (!acc) return error_set(IC_ERR_OUT_OF_MEMORY, "ref: out of memory reducing in %s", k->name);
  ref_acc identity = ref_reduce_identity(in->reduce, dt);
  for (int64_t j = 0; j < width; j++) acc[j] = identity;
  for (int64_t r = 0; r < count; r++) {
    ref_eval_pass(rk, rl, p, r, ok);
    int64_t lane = (r / KIR_REDUCE_CHUNK) % lanes;
    acc[lane] = ref_reduce_combine(in->reduce, dt, acc[lane], ref_reduce_lift(in->reduce, dt, rl->values[in->args[0]], r));
  }
  for (int64_t step = 1; step < width; step *= 2)
    for (int64_t j = 0; j + step < width; j += 2 * step) acc[j] = ref_reduce_combine(in->reduce, dt, acc[j], acc[j + step]);
  rl->values[i] = ref_reduce_finish(in->reduce, dt, in->dtype, acc[0], count, in->value);
  free(acc);
  return IC_OK;
}

/* f32 rounded to TF32 (10 mantissa bits, to nearest, ties away from zero), as
 * cvt.rna.tf32.f32; infinities and NaNs as they are. */
static float ref_tf32(float x) {
  uint32_t b;
  memcpy(&b, &x, sizeof b);
  if ((b & 0x7f800000u) != 0x7f800000u) b = (b + 0x1000u) & 0xffffe000u;
  memcpy(&x, &b, sizeof x);
  return x;
}

/* The CONTRACT at instruction i over the row (K, count elements), in ic.h's matmul order:
 * f32 and f64 one fma a k in order; bf16, f16 (and TF32) chunks of 16 (8) products, each
 * chunk summed in f64 (exactly, but for the f64 rounding of long chunks) and rounded to
 * f32, then added to the f32 accumulator; i8 exactly, wrapped to i32. */
/* (not inlined: its locals would sit in every reduction's frame) */
#if defined(__GNUC__)
__attribute__((noinline))
#endif
static void ref_contract_row(const ref_kernel *rk, ref_launch *rl, int32_t p, int32_t i, int64_t count, bool *ok) {
  const kir_kernel *k = rk->k;
  const kir_instr *in = &k->instrs.items[i];
  const ic_dtype dt = k->instrs.items[in->args[0]].dtype;
  const bool tf32 = dt == IC_F32 && k->allow_tf32, chunked = dt == IC_BF16 || dt == IC_F16 || tf32;
  const int64_t chunk = tf32 ? 8 : 16;
  float acc = 0.0f;
  double dacc = 0.0, csum = 0.0;
  int64_t iacc = 0;
  for (int64_t r = 0; r < count; r++) {
    ref_eval_pass(rk, rl, p, r, ok);
    const ref_value x = rl->values[in->args[0]], y = rl->values[in->args[1]];
    if (dt == IC_F64) dacc = fma(x.d, y.d, dacc);
    else if (dt == IC_I8) iacc += x.i * y.i;
    else if (!chunked) acc = fmaf(x.f, y.f, acc);
    else {
      csum += tf32 ? (double)ref_tf32(x.f) * (double)ref_tf32(y.f) : (double)x.f * (double)y.f;
      if (r % chunk == chunk - 1 || r == count - 1) {
        acc += (float)csum;
        csum = 0.0;
      }
    }
  }
  /* a NaN comes out as the canonical NaN, as GPU arithmetic gives it (fma keeps payloads) */
  ref_value v = {0};
  if (dt == IC_F64) v = ref_canonical(IC_F64, (ref_value){.d = dacc});
  else if (dt == IC_I8) v.i = (int64_t)(int32_t)(uint32_t)(uint64_t)iacc;
  else v = ref_canonical(IC_F32, (ref_value){.f = acc});
  if (in->dtype != IC_F32 && in->dtype != IC_F64 && in->dtype != IC_I32) {
    ref_value args[3] = {v, {0}, {0}};
    v = ref_apply(IC_OP_CAST, IC_F32, in->dtype, args);
  }
  rl->values[i] = v;
}

/* One row (the kept vars are set): row values in instruction order, each REDUCE's pass
 * when its turn comes, then the element stores' pass. */
static ic_status ref_row(const ref_kernel *rk, ref_launch *rl, int64_t count, bool *ok) {
  const kir_kernel *k = rk->k;
  int32_t p = 0;
  for (int32_t i = 0; i < k->instrs.count; i++) {
    if (rk->element[i]) continue;
    if (k->instrs.items[i].kind == KIR_REDUCE) {
      ic_status s = ref_reduce_row(rk, rl, p++, i, count, ok);
      if (s) return s;
    } else if (k->instrs.items[i].kind == KIR_CONTRACT) {
      ref_contract_row(rk, rl, p++, i, count, ok);
    } else {
      ref_set_element(rk, rl, 0); /* row values read no reduced var */
      ref_eval(rk, rl, i, ok);
    }
  }
  bool stores = false;
  for (int32_t i = 0; i < k->instrs.count; i++) stores |= rk->need[(size_t)p * (size_t)k->instrs.count + (size_t)i];
  for (int64_t r = 0; stores && r < count; r++) ref_eval_pass(rk, rl, p, r, ok);
  return IC_OK;
}

/* The product of the dims of mask (bit d: dim d): 0 when one of them is 0, whatever the
 * others multiply to (an empty tensor's other dims may be anything); otherwise a tensor's
 * element count, which the run checked (saturated all the same). */
static int64_t ref_dims_product(const ref_launch *rl, int32_t ndim, uint32_t mask) {
  int64_t n = 1;
  bool overflow = false;
  for (int32_t d = 0; d < ndim; d++)
    if ((mask >> d) & 1u) {
      if (rl->dims[d] == 0) return 0;
      overflow |= __builtin_mul_overflow(n, rl->dims[d], &n);
    }
  return overflow ? INT64_MAX : n;
}

static ic_status ref_run_reduction(const ref_kernel *rk, ref_launch *rl) {
  const kir_kernel *k = rk->k;
  uint32_t all = k->ndim ? (uint32_t)((UINT64_C(1) << k->ndim) - 1) : 0;
  int64_t rows = ref_dims_product(rl, k->ndim, all & ~k->axes), count = ref_dims_product(rl, k->ndim, k->axes);
  bool ok = true;
  ic_status s = IC_OK;
  for (int64_t row = 0; row < rows && !s; row++) {
    int64_t rem = row;
    for (int32_t d = k->ndim - 1; d >= 0; d--) {
      if ((k->axes >> d) & 1u) continue;
      rl->vars[d] = rem % rl->dims[d];
      rem /= rl->dims[d];
    }
    s = ref_row(rk, rl, count, &ok);
    if (!s && !ok) s = error_set(IC_ERR_INTERNAL, "ref: cannot evaluate an offset of %s", k->name);
  }
  return s;
}

static ic_status ref_launch_kernel(backend_state *bs, const backend_kernel *bk, uint32_t blocks, void **args,
                                   void *stream) {
  (void)bs, (void)blocks, (void)stream; /* synchronous, over the whole iteration space */
  const ref_kernel *rk = bk->impl;
  const kir_kernel *k = rk->k;
  ref_launch *rl = sys_calloc(1, sizeof *rl);
  if (!rl) return error_set(IC_ERR_OUT_OF_MEMORY, "ref: out of memory");
  rl->buffers = sys_calloc((size_t)k->buffers.count + 1, sizeof(void *));
  rl->coeff = sys_calloc(((size_t)k->instrs.count + 1) * (IC_MAX_DIMS + 1), sizeof(int64_t));
  rl->values = sys_calloc((size_t)k->instrs.count + 1, sizeof(ref_value));
  ic_status s = IC_OK;
  if (!rl->buffers || !rl->coeff || !rl->values) s = error_set(IC_ERR_OUT_OF_MEMORY, "ref: out of memory");
  else if (!ref_bind(rk, rl, args)) s = error_set(IC_ERR_INTERNAL, "ref: cannot bind the parameters of %s", k->name);
  int64_t numel = s ? 0 : ref_dims_product(rl, k->ndim, k->ndim ? (uint32_t)((UINT64_C(1) << k->ndim) - 1) : 0);
  if (!s && k->reduces) {
    s = ref_run_reduction(rk, rl);
    numel = 0;
  }
  for (int64_t e = 0; !s && e < numel; e++) {
    if (!ref_point(rk, rl)) s = error_set(IC_ERR_INTERNAL, "ref: cannot evaluate an offset of %s", k->name);
    for (int32_t d = k->ndim - 1; d >= 0; d--) { /* next point, innermost var fastest */
      if (++rl->vars[d] < rl->dims[d]) break;
      rl->vars[d] = 0;
    }
  }
  free(rl->buffers);
  free(rl->coeff);
  free(rl->values);
  free(rl);
  return s;
}

static ic_status ref_mem_alloc(backend_state *bs, size_t bytes, void *stream, void **out) {
  (void)bs, (void)stream;
  size_t rounded = (bytes + 63) / 64 * 64; /* aligned like device memory */
  *out = aligned_alloc(64, rounded);
  return *out ? IC_OK : error_set(IC_ERR_OUT_OF_MEMORY, "ref: cannot allocate %zu bytes", bytes);
}

static ic_status ref_mem_free(backend_state *bs, void *ptr, void *stream) {
  (void)bs, (void)stream;
  free(ptr);
  return IC_OK;
}

static uint64_t ref_config_hash(const backend_state *bs) {
  (void)bs;
  return 0x7265660000000001ull; /* "ref", version 1: no options */
}

static const char *ref_target(const backend_state *bs) {
  (void)bs;
  return "host";
}

/* The ref backend needs nothing of the context: no GPU, no NVRTC, no arch. */
static ic_status ref_open(const backend_env *env, backend_state **out) {
  (void)env;
  backend_state *bs = sys_calloc(1, sizeof *bs);
  if (!bs) return error_set(IC_ERR_OUT_OF_MEMORY, "out of memory opening the ref backend");
  bs->vt = &backend_ref;
  *out = bs;
  return IC_OK;
}

static void ref_close(backend_state *bs) { free(bs); }

const backend_vtable backend_ref = {
    .name = "ref",
    .on_device = false,
    .open = ref_open,
    .close = ref_close,
    .target = ref_target,
    .config_hash = ref_config_hash,
    .compile = ref_compile,
    .launch = ref_launch_kernel,
    .kernel_free = ref_kernel_free,
    .mem_alloc = ref_mem_alloc,
    .mem_free = ref_mem_free,
};
