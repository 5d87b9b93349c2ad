/* The ref backend: runs the kernel IR the CUDA backend compiles, point by point on the
 * host, with host pointers. The test oracle, and what runs where there is no GPU.
 * Offsets affine in the vars (every view but reshapes that split a dim) are evaluated
 * once per launch into coefficients; the others, and ranges, at every point. */
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
  if (rk) free(rk->access);
  free(rk);
  free(bk->name);
  free(bk);
}

static ic_status ref_compile(backend_state *bs, const kir_kernel *k, uint32_t flags, void *batch, backend_kernel **out) {
  (void)flags, (void)batch; /* nothing to cache: compiling is an analysis of the IR */
  *out = NULL;
  backend_kernel *bk = calloc(1, sizeof *bk);
  ref_kernel *rk = calloc(1, sizeof *rk);
  if (bk) bk->impl = rk;
  if (!bk || !rk || !(bk->name = str_dup(k->name)) ||
      !(rk->access = calloc((size_t)k->instrs.count + 1, sizeof *rk->access))) {
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
  if (sym_arena_failed(k->syms)) {
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

/* Runs the body at the point rl->vars. */
static bool ref_point(const ref_kernel *rk, ref_launch *rl) {
  const kir_kernel *k = rk->k;
  bool ok = true;
  for (int32_t i = 0; i < k->instrs.count; i++) {
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
    }
  }
  return ok;
}

static ic_status ref_launch_kernel(backend_state *bs, const backend_kernel *bk, uint32_t blocks, void **args,
                                   void *stream) {
  (void)bs, (void)blocks, (void)stream; /* synchronous, over the whole iteration space */
  const ref_kernel *rk = bk->impl;
  const kir_kernel *k = rk->k;
  ref_launch *rl = calloc(1, sizeof *rl);
  if (!rl) return error_set(IC_ERR_OUT_OF_MEMORY, "ref: out of memory");
  rl->buffers = calloc((size_t)k->buffers.count + 1, sizeof(void *));
  rl->coeff = calloc(((size_t)k->instrs.count + 1) * (IC_MAX_DIMS + 1), sizeof(int64_t));
  rl->values = calloc((size_t)k->instrs.count + 1, sizeof(ref_value));
  ic_status s = IC_OK;
  if (!rl->buffers || !rl->coeff || !rl->values) s = error_set(IC_ERR_OUT_OF_MEMORY, "ref: out of memory");
  else if (!ref_bind(rk, rl, args)) s = error_set(IC_ERR_INTERNAL, "ref: cannot bind the parameters of %s", k->name);
  int64_t numel = 1;
  for (int32_t d = 0; !s && d < k->ndim; d++) numel *= rl->dims[d];
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
  backend_state *bs = calloc(1, sizeof *bs);
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
