/* The passes on their own, below ic_compile: lower (views fold into index expressions),
 * sched (fusion decisions, materialization, last uses) and the kernel IR passes
 * (coalescing, size generalization, parameter collection). No NVRTC, no backend. */
#include <check.h>
#include <ic/ic.h>
#include <stdlib.h>
#include <string.h>

#include "kir/kir.h"
#include "lower/lower.h"
#include "program/group_kernel.h"
#include "sched/sched.h"

#include "check_main.h"

#define OK(call) ck_assert_msg((call) == IC_OK, "%s: %s", #call, ic_last_error())

/* A lowered graph with its schedule, and the kernels of every group. */
typedef struct pipeline {
  lowered *l;
  schedule s;
  kir_kernel *kernels;
  int32_t *buffer_of;
} pipeline;

static lowered *lower(ic_graph *g) {
  lowered *l = NULL;
  OK(lower_graph(g, true, &l));
  ic_graph_destroy(g);
  return l;
}

/* Lowers g (destroyed), schedules it and builds every group's kernel IR. */
static pipeline run_passes(ic_graph *g, bool eager) {
  pipeline p = {0};
  p.l = lower(g);
  OK(sched_fuse_pointwise(p.l, eager, NULL, -1, &p.s));
  int32_t nodes = p.l->nodes.count;
  p.buffer_of = malloc(sizeof(int32_t) * ((size_t)nodes + 1));
  int32_t *scratch = malloc(sizeof(int32_t) * ((size_t)nodes + 1));
  p.kernels = calloc((size_t)p.s.count + 1, sizeof *p.kernels);
  ck_assert(p.buffer_of && scratch && p.kernels);
  for (int32_t n = 0; n < nodes; n++) p.buffer_of[n] = p.s.materialize[n] ? p.l->ninputs + n : -1;
  for (int32_t k = 0; k < p.s.count; k++) OK(program_group_kernel(p.l, &p.s, k, eager, p.buffer_of, scratch, &p.kernels[k]));
  free(scratch);
  return p;
}

static void pipeline_free(pipeline *p) {
  for (int32_t k = 0; k < p->s.count; k++) kir_kernel_free(&p->kernels[k]);
  free(p->kernels);
  free(p->buffer_of);
  schedule_free(&p->s);
  lowered_destroy(p->l);
}

static ic_graph *fresh(void) {
  ic_graph *g = NULL;
  OK(ic_graph_create(&g));
  return g;
}

/* The value of e for vars and input strides (symbols: n = sym0). */
static int64_t eval_at(const sym_arena *a, sym_id e, const int64_t *vars, int64_t n) {
  int64_t symbols[1] = {n}, params[8] = {0}, v = 0;
  sym_env env = {.symbols = symbols, .nsymbols = 1, .vars = vars, .nvars = IC_MAX_DIMS, .params = params, .nparams = 8};
  ck_assert(sym_eval(a, e, &env, &v));
  return v;
}

/* ---------------------------------------------------------------- lower */

START_TEST(test_lower_chain_and_loads) {
  ic_graph *g = fresh();
  ic_dim n = ic_graph_symbol(g, "n");
  ic_value x = ic_graph_input(g, "x", IC_F32, 2, (ic_dim[]){n, 4}, 0);
  ic_value t = ic_graph_unary(g, IC_OP_TANH, x); /* dead: dropped */
  (void)t;
  OK(ic_graph_output(g, "y", ic_graph_unary(g, IC_OP_EXP, ic_graph_unary(g, IC_OP_NEG, x))));
  lowered *l = lower(g);
  ck_assert_int_eq(l->ninputs, 1);
  ck_assert_int_eq(l->nodes.count, 2);
  const lower_node *neg = &l->nodes.items[0], *ex = &l->nodes.items[1];
  ck_assert_int_eq(neg->op, IC_OP_NEG);
  ck_assert_int_eq(ex->op, IC_OP_EXP);
  ck_assert_int_eq(neg->ndim, 2);
  ck_assert_int_eq(neg->args[0].kind, LOWER_ARG_LOAD);
  ck_assert(neg->args[0].src.is_input && neg->args[0].src.index == 0);
  ck_assert_int_eq(neg->args[0].guard, -1);
  ck_assert_int_eq(ex->args[0].kind, LOWER_ARG_NODE);
  ck_assert_int_eq(ex->args[0].node, 0);
  int64_t vars[IC_MAX_DIMS] = {3, 2};
  ck_assert_int_eq(eval_at(l->syms, neg->args[0].offset, vars, 10), 3 * 4 + 2);
  ck_assert_int_eq(eval_at(l->syms, neg->numel, vars, 10), 40);
  ck_assert_int_eq(l->noutputs, 1);
  ck_assert_int_eq(l->outputs[0].node, 1);
  lowered_destroy(l);
}
END_TEST

START_TEST(test_lower_views_fold) {
  ic_graph *g = fresh();
  ic_value x = ic_graph_input(g, "x", IC_F32, 2, (ic_dim[]){3, 5}, 0);
  ic_value p = ic_graph_permute(g, x, 2, (int32_t[]){1, 0});               /* [5, 3] */
  ic_value s = ic_graph_slice(g, p, 0, 1, INT64_MAX, 2);                    /* rows 1, 3 of p */
  OK(ic_graph_output(g, "y", ic_graph_unary(g, IC_OP_NEG, s)));             /* [2, 3] */
  lowered *l = lower(g);
  ck_assert_int_eq(l->nodes.count, 1); /* the views are no nodes: they fold into the load */
  const lower_node *neg = &l->nodes.items[0];
  int64_t dim = 0;
  ck_assert(sym_is_const(l->syms, neg->dims[0], &dim) && dim == 2);
  ck_assert(sym_is_const(l->syms, neg->dims[1], &dim) && dim == 3);
  /* y[i0, i1] = x[i1, 1 + 2 * i0] */
  for (int64_t i0 = 0; i0 < 2; i0++)
    for (int64_t i1 = 0; i1 < 3; i1++) {
      int64_t vars[IC_MAX_DIMS] = {i0, i1};
      ck_assert_int_eq(eval_at(l->syms, neg->args[0].offset, vars, 0), i1 * 5 + 1 + 2 * i0);
    }
  lowered_destroy(l);
}
END_TEST

START_TEST(test_lower_concat_guards) {
  ic_graph *g = fresh();
  ic_value a = ic_graph_input(g, "a", IC_F32, 1, (ic_dim[]){4}, 0);
  ic_value b = ic_graph_input(g, "b", IC_F32, 1, (ic_dim[]){6}, 0);
  OK(ic_graph_output(g, "y", ic_graph_unary(g, IC_OP_NEG, ic_graph_concat(g, 2, (ic_value[]){a, b}, 0))));
  lowered *l = lower(g);
  ck_assert_int_eq(l->nodes.count, 1);
  const lower_arg *arg = &l->nodes.items[0].args[0];
  ck_assert_int_eq(arg->kind, LOWER_ARG_SELECT);
  const lower_arg *then_arg = &l->select_args.items[arg->then_arg];
  const lower_arg *else_arg = &l->select_args.items[arg->else_arg];
  ck_assert_int_eq(then_arg->kind, LOWER_ARG_LOAD);
  ck_assert_int_eq(else_arg->kind, LOWER_ARG_LOAD);
  ck_assert_int_ge(then_arg->guard, 0); /* each operand reads only inside its range */
  ck_assert_int_ge(else_arg->guard, 0);
  int64_t vars[IC_MAX_DIMS] = {7};
  ck_assert_int_eq(eval_at(l->syms, else_arg->offset, vars, 0), 3); /* b[7 - 4] */
  lowered_destroy(l);
}
END_TEST

/* ---------------------------------------------------------------- sched */

START_TEST(test_sched_chain_siblings_and_spaces) {
  ic_graph *g = fresh();
  ic_dim n = ic_graph_symbol(g, "n");
  ic_value x = ic_graph_input(g, "x", IC_F32, 2, (ic_dim[]){n, 4}, 0);
  ic_value w = ic_graph_input(g, "w", IC_F32, 1, (ic_dim[]){8}, 0);
  ic_value h = ic_graph_unary(g, IC_OP_NEG, x);
  OK(ic_graph_output(g, "a", ic_graph_unary(g, IC_OP_EXP, h)));  /* chain */
  OK(ic_graph_output(g, "b", ic_graph_unary(g, IC_OP_SQRT, h))); /* sibling, same space */
  OK(ic_graph_output(g, "c", ic_graph_unary(g, IC_OP_ABS, w)));  /* another space */
  lowered *l = lower(g);
  schedule s;
  OK(sched_fuse_pointwise(l, false, NULL, -1, &s));
  ck_assert_int_eq(s.count, 2);
  ck_assert_int_eq(s.groups[0].count, 3);
  ck_assert_int_eq(s.groups[1].count, 1);
  for (int32_t i = 0; i < l->noutputs; i++) ck_assert(s.materialize[l->outputs[i].node]);
  int32_t neg = s.groups[0].nodes[0];
  ck_assert(!s.materialize[neg]); /* read inside its group only */
  ck_assert_int_eq(s.last_use[neg], -1);
  schedule_free(&s);

  OK(sched_fuse_pointwise(l, true, NULL, -1, &s)); /* eager: a group a node */
  ck_assert_int_eq(s.count, l->nodes.count);
  ck_assert(s.eager);
  ck_assert(s.materialize[neg]);
  ck_assert_int_eq(s.last_use[neg], 2); /* exp and sqrt read it; sqrt is the later */
  schedule_free(&s);

  bool *split = calloc((size_t)l->nodes.count, sizeof *split);
  ck_assert_ptr_nonnull(split);
  split[neg] = true;
  OK(sched_fuse_pointwise(l, false, split, -1, &s));
  ck_assert_int_eq(s.count, 3); /* neg alone, then exp + sqrt, then abs */
  ck_assert_int_eq(s.group_of[neg], 0);
  ck_assert(s.materialize[neg]);
  schedule_free(&s);
  free(split);
  lowered_destroy(l);
}
END_TEST

START_TEST(test_sched_moved_index_recomputes) {
  ic_graph *g = fresh();
  ic_value x = ic_graph_input(g, "x", IC_F32, 2, (ic_dim[]){4, 6}, 0);
  ic_value inner = ic_graph_unary(g, IC_OP_NEG, x);
  ic_value t = ic_graph_permute(g, inner, 2, (int32_t[]){1, 0});
  OK(ic_graph_output(g, "y", ic_graph_unary(g, IC_OP_EXP, t)));
  lowered *l = lower(g);
  schedule s;
  OK(sched_fuse_pointwise(l, false, NULL, -1, &s));
  /* the transposed read recomputes neg at the moved index: one group, the first neg gone */
  ck_assert_int_eq(l->nodes.count, 2);
  ck_assert_int_eq(s.count, 1);
  ck_assert(!s.materialize[0]);
  ck_assert_int_eq(l->nodes.items[0].op, IC_OP_NEG);
  ck_assert_int_eq(l->nodes.items[0].args[0].kind, LOWER_ARG_LOAD);
  schedule_free(&s);
  lowered_destroy(l);

  /* an output is stored anyway: the transposed read loads it, in a later kernel */
  g = fresh();
  x = ic_graph_input(g, "x", IC_F32, 2, (ic_dim[]){4, 6}, 0);
  inner = ic_graph_unary(g, IC_OP_NEG, x);
  t = ic_graph_permute(g, inner, 2, (int32_t[]){1, 0});
  OK(ic_graph_output(g, "y", ic_graph_unary(g, IC_OP_EXP, t)));
  OK(ic_graph_output(g, "inner", inner));
  l = lower(g);
  OK(sched_fuse_pointwise(l, false, NULL, -1, &s));
  ck_assert_int_eq(s.count, 2);
  ck_assert(s.materialize[0]);
  ck_assert_int_eq(s.last_use[0], 1);
  schedule_free(&s);
  lowered_destroy(l);
}
END_TEST

/* ---------------------------------------------------------------- kernel IR passes */

static ic_graph *unary_chain(int32_t ndim, const ic_dim *dims, const int32_t *perm, int32_t ops) {
  ic_graph *g = fresh();
  ic_value v = ic_graph_input(g, "x", IC_F32, ndim, dims, 0);
  if (perm) v = ic_graph_permute(g, v, ndim, perm);
  for (int32_t i = 0; i < ops; i++) v = ic_graph_unary(g, i % 2 ? IC_OP_NEG : IC_OP_ABS, v);
  OK(ic_graph_output(g, "y", v));
  return g;
}

START_TEST(test_coalesce_contiguous_dims) {
  ic_graph *g = unary_chain(3, (ic_dim[]){5, 4, 8}, NULL, 2);
  pipeline p = run_passes(g, false);
  ck_assert_int_eq(p.s.count, 1);
  ck_assert_int_eq(p.kernels[0].ndim, 1); /* [5, 4, 8] walked contiguously: one run of 160 */
  int64_t size = 0;
  ck_assert(sym_is_const(p.l->syms, p.kernels[0].dims[0], &size) && size == 160);
  pipeline_free(&p);

  g = unary_chain(3, (ic_dim[]){5, 4, 8}, (int32_t[]){0, 2, 1}, 1); /* a transposed read */
  p = run_passes(g, false);
  ck_assert_int_ge(p.kernels[0].ndim, 2); /* the inner two dims cannot merge */
  pipeline_free(&p);
}
END_TEST

START_TEST(test_coalesce_large_kernels) {
  /* 600 ops in one fused kernel: more instructions than the pass once handled, when
   * it kept such kernels' dims without a word. */
  ic_graph *g = unary_chain(3, (ic_dim[]){5, 4, 8}, NULL, 600);
  pipeline p = run_passes(g, false);
  ck_assert_int_eq(p.s.count, 1);
  ck_assert_int_gt(p.kernels[0].instrs.count, 600);
  ck_assert_int_eq(p.kernels[0].ndim, 1);
  pipeline_free(&p);
  g = unary_chain(2, (ic_dim[]){5, 7}, NULL, 600);
  p = run_passes(g, true); /* eager: one op a kernel, sizes generalized */
  ck_assert_int_eq(p.s.count, 600);
  pipeline_free(&p);
}
END_TEST

START_TEST(test_generalize_sizes_in_eager) {
  ic_graph *g = unary_chain(2, (ic_dim[]){3, 5}, NULL, 1);
  pipeline p = run_passes(g, true);
  const kir_kernel *k = &p.kernels[0];
  ck_assert_int_eq(k->ndim, 1);
  ck_assert_int_eq(k->nsizes, 1);
  ck_assert_int_eq(sym_kind_of(k->syms, k->dims[0]), SYM_PARAM);
  ck_assert_int_eq(sym_leaf_index(k->syms, k->dims[0]), KIR_SIZE_PARAM_BASE);
  int64_t v = 0;
  ck_assert(sym_is_const(k->syms, k->size_exprs[0], &v) && v == 15); /* what the launch passes */
  bool size_param = false;
  for (int32_t i = 0; i < k->params.count; i++) size_param |= k->params.items[i].kind == KIR_PARAM_SIZE;
  ck_assert(size_param);
  pipeline_free(&p);

  g = unary_chain(2, (ic_dim[]){3, 5}, NULL, 1);
  p = run_passes(g, false); /* fused mode keeps constant sizes */
  ck_assert_int_eq(p.kernels[0].nsizes, 0);
  pipeline_free(&p);
}
END_TEST

START_TEST(test_collect_params_refuses_out_of_range) {
  sym_arena *a = sym_arena_create();
  ck_assert_ptr_nonnull(a);
  kir_kernel k = {.syms = a, .ndim = 1};
  strcpy(k.name, "k_bad");
  k.dims[0] = sym_const(a, 4);
  kir_buffer buf = {.dtype = IC_F32, .ref = 0};
  ck_assert(VEC_PUSH(k.buffers, buf));
  kir_instr load = {.kind = KIR_LOAD, .dtype = IC_F32, .buffer = 0,
                    .offset = sym_mul(a, sym_param(a, KIR_MAX_PARAM_INDEX + 3), sym_var(a, 0))};
  ck_assert(VEC_PUSH(k.instrs, load));
  ck_assert_int_eq(kir_collect_params(&k), IC_ERR_INTERNAL);
  ck_assert_ptr_nonnull(strstr(ic_last_error(), "k_bad"));
  /* an index inside the numbering is collected */
  k.instrs.items[0].offset = sym_mul(a, sym_param(a, 9), sym_var(a, 0));
  OK(kir_collect_params(&k));
  ck_assert_int_eq(k.params.count, 2);
  ck_assert_int_eq(k.params.items[1].kind, KIR_PARAM_STRIDE);
  ck_assert_int_eq(k.params.items[1].index, 9);
  kir_kernel_free(&k);
  sym_arena_destroy(a);
}
END_TEST

/* A kernel by hand over constant dims: v0 = load b0[load_offset], `ops` negations, then
 * store b1[store_offset]; every access walks the vars as the offsets say. */
static kir_kernel hand_kernel(sym_arena *a, int32_t ndim, const int64_t *dims, sym_id load_offset,
                              sym_id store_offset, int32_t ops) {
  kir_kernel k = {.syms = a, .ndim = ndim};
  strcpy(k.name, "k_hand");
  k.numel = sym_const(a, 1);
  for (int32_t d = 0; d < ndim; d++) {
    k.dims[d] = sym_const(a, dims[d]);
    k.numel = sym_mul(a, k.numel, k.dims[d]);
  }
  k.launch_numel = k.numel;
  ck_assert(VEC_PUSH(k.buffers, ((kir_buffer){.dtype = IC_F32, .ref = 0})));
  ck_assert(VEC_PUSH(k.buffers, ((kir_buffer){.dtype = IC_F32, .written = true, .ref = 1})));
  ck_assert(VEC_PUSH(k.instrs, ((kir_instr){.kind = KIR_LOAD, .dtype = IC_F32, .buffer = 0, .offset = load_offset})));
  for (int32_t i = 0; i < ops; i++)
    ck_assert(VEC_PUSH(k.instrs, ((kir_instr){.kind = KIR_OP, .dtype = IC_F32, .op = IC_OP_NEG, .nargs = 1,
                                              .args = {k.instrs.count - 1}})));
  ck_assert(VEC_PUSH(k.instrs, ((kir_instr){.kind = KIR_STORE, .dtype = IC_F32, .nargs = 1, .buffer = 1,
                                            .args = {k.instrs.count - 1}, .offset = store_offset})));
  return k;
}

/* sum over d of var d * stride d */
static sym_id strided(sym_arena *a, int32_t ndim, const int64_t *strides) {
  sym_id e = sym_const(a, 0);
  for (int32_t d = 0; d < ndim; d++) e = sym_add(a, e, sym_mul(a, sym_const(a, strides[d]), sym_var(a, d)));
  return e;
}

START_TEST(test_pass_results) {
  sym_arena *a = sym_arena_create();
  ck_assert_ptr_nonnull(a);
  int64_t v = 0;
  /* 600 instructions, contiguous [4, 5, 6]: one run of 120, then one size param */
  const int64_t dims3[3] = {4, 5, 6}, contiguous3[3] = {30, 6, 1};
  kir_kernel k = hand_kernel(a, 3, dims3, strided(a, 3, contiguous3), strided(a, 3, contiguous3), 600);
  ck_assert_int_gt(k.instrs.count, 600);
  ck_assert_int_eq(kir_coalesce_dims(&k), KIR_PASS_DONE);
  ck_assert_int_eq(k.ndim, 1);
  ck_assert(sym_is_const(a, k.dims[0], &v) && v == 120);
  ck_assert_int_eq(kir_generalize_sizes(&k), KIR_PASS_DONE);
  ck_assert_int_eq(k.nsizes, 1);
  ck_assert(sym_is_const(a, k.size_exprs[0], &v) && v == 120);
  ck_assert_int_eq(kir_generalize_sizes(&k), KIR_PASS_ALREADY);
  kir_kernel_free(&k);

  /* a transposed read: nothing merges, and the sizes stay constants */
  const int64_t dims2[2] = {4, 5}, rows[2] = {5, 1}, cols[2] = {1, 4};
  k = hand_kernel(a, 2, dims2, strided(a, 2, cols), strided(a, 2, rows), 3);
  ck_assert_int_eq(kir_coalesce_dims(&k), KIR_PASS_DONE);
  ck_assert_int_eq(k.ndim, 2);
  ck_assert_int_eq(kir_generalize_sizes(&k), KIR_PASS_NOT_CONTIGUOUS);
  ck_assert_int_eq(k.nsizes, 0);
  ck_assert(sym_is_const(a, k.dims[1], &v) && v == 5);
  kir_kernel_free(&k);

  /* a read that is not affine in the vars (x[i0 / 2]) keeps the dims */
  k = hand_kernel(a, 2, dims2, sym_floordiv(a, strided(a, 2, rows), sym_const(a, 2)), strided(a, 2, rows), 1);
  ck_assert_int_eq(kir_coalesce_dims(&k), KIR_PASS_NOT_AFFINE);
  ck_assert_int_eq(k.ndim, 2);
  kir_kernel_free(&k);

  /* more dims than size params, or none */
  const int64_t dims5[5] = {2, 3, 2, 3, 2}, contiguous5[5] = {36, 12, 6, 2, 1};
  k = hand_kernel(a, 5, dims5, strided(a, 5, contiguous5), strided(a, 5, contiguous5), 1);
  ck_assert_int_eq(kir_generalize_sizes(&k), KIR_PASS_RANK);
  ck_assert_int_eq(k.nsizes, 0);
  k.ndim = 0;
  ck_assert_int_eq(kir_generalize_sizes(&k), KIR_PASS_RANK);
  kir_kernel_free(&k);

  /* a range compares an index with the sizes */
  k = hand_kernel(a, 2, dims2, strided(a, 2, rows), strided(a, 2, rows), 1);
  ck_assert(VEC_PUSH(k.instrs, ((kir_instr){.kind = KIR_RANGE, .dtype = IC_BOOL, .offset = sym_var(a, 1),
                                            .lo = sym_const(a, 0), .hi = sym_const(a, 3)})));
  ck_assert_int_eq(kir_generalize_sizes(&k), KIR_PASS_RANGES);
  ck_assert_int_eq(kir_coalesce_dims(&k), KIR_PASS_DONE); /* the ranged dim stays */
  ck_assert_int_eq(k.ndim, 2);
  kir_kernel_free(&k);
  ck_assert(!sym_arena_failed(a));
  sym_arena_destroy(a);
}
END_TEST

/* ---------------------------------------------------------------- fold */

/* y = cast(clamp(x, lo, hi), to) (cast_saturate with sat), x of dt [n, 64]; the clamp
 * also an output with keep; hi_input: hi is an input tensor, not a constant. */
static pipeline clamped_cast(ic_dtype dt, double lo, double hi, ic_dtype to, bool sat, bool keep, bool hi_input) {
  ic_graph *g = fresh();
  ic_dim dims[2] = {ic_graph_symbol(g, "n"), 64};
  ic_value x = ic_graph_input(g, "x", dt, 2, dims, IC_LAYOUT_CONTIGUOUS);
  ic_value h = hi_input ? ic_graph_input(g, "h", dt, 2, dims, IC_LAYOUT_CONTIGUOUS) : ic_graph_constant(g, hi, IC_DTYPE_AUTO);
  ic_value c = ic_graph_op(g, IC_OP_CLAMP, 3, (ic_value[]){x, ic_graph_constant(g, lo, IC_DTYPE_AUTO), h});
  OK(ic_graph_output(g, "y", sat ? ic_graph_cast_saturate(g, c, to) : ic_graph_cast(g, c, to)));
  if (keep) OK(ic_graph_output(g, "c", c));
  pipeline p = run_passes(g, false);
  ck_assert_int_eq(p.s.count, 1);
  return p;
}

/* The kernel's one cast or cast_saturate (to an fp8 dtype) and the op its operand is. */
static const kir_instr *fp8_cast(const kir_kernel *k, ic_op *operand_op) {
  const kir_instr *cast = NULL;
  for (int32_t i = 0; i < k->instrs.count; i++) {
    const kir_instr *in = &k->instrs.items[i];
    if (in->kind == KIR_OP && (in->op == IC_OP_CAST || in->op == IC_OP_CAST_SATURATE) &&
        (in->dtype == IC_F8E4M3 || in->dtype == IC_F8E5M2)) {
      ck_assert_ptr_null(cast);
      cast = in;
    }
  }
  ck_assert_ptr_nonnull(cast);
  const kir_instr *arg = &k->instrs.items[cast->args[0]];
  *operand_op = arg->kind == KIR_OP ? arg->op : IC_OP_COUNT;
  return cast;
}

static int32_t clamps_in(const kir_kernel *k) {
  int32_t n = 0;
  for (int32_t i = 0; i < k->instrs.count; i++) n += k->instrs.items[i].kind == KIR_OP && k->instrs.items[i].op == IC_OP_CLAMP;
  return n;
}

START_TEST(test_fold_clamped_casts) {
  static const struct {
    ic_dtype dt, to;
    double lo, hi;
    bool sat, keep, hi_input;
    ic_op want_op, want_operand; /* the cast after the pass, and its operand (IC_OP_COUNT: the input) */
    bool clamped;
  } cases[] = {
      /* PyTorch's clamp to +-448 then cast: one saturating cast of x, the clamp gone */
      {IC_F32, IC_F8E4M3, -448, 448, false, false, false, IC_OP_CAST_SATURATE, IC_OP_COUNT, true},
      {IC_BF16, IC_F8E4M3, -448, 448, false, false, false, IC_OP_CAST_SATURATE, IC_OP_COUNT, true},
      /* inside the range: saturating, the clamp stays (it moves values the cast keeps) */
      {IC_F32, IC_F8E4M3, -300, 200, false, false, false, IC_OP_CAST_SATURATE, IC_OP_CLAMP, true},
      {IC_F16, IC_F8E5M2, -448, 448, false, false, false, IC_OP_CAST_SATURATE, IC_OP_CLAMP, true},
      /* past the range: 470 would become NaN, so the plain cast stays */
      {IC_F32, IC_F8E4M3, -500, 500, false, false, false, IC_OP_CAST, IC_OP_CLAMP, false},
      {IC_F32, IC_F8E4M3, -448, 448.5, false, false, false, IC_OP_CAST, IC_OP_CLAMP, false},
      /* a saturating cast absorbs a clamp reaching past both ends, not one inside */
      {IC_F32, IC_F8E4M3, -1000, 1000, true, false, false, IC_OP_CAST_SATURATE, IC_OP_COUNT, true},
      {IC_F32, IC_F8E5M2, -1e30, 57344, true, false, false, IC_OP_CAST_SATURATE, IC_OP_COUNT, true},
      {IC_F32, IC_F8E4M3, -1000, 440, true, false, false, IC_OP_CAST_SATURATE, IC_OP_CLAMP, false},
      /* the clamp stored too: it stays, the cast reads x */
      {IC_F32, IC_F8E4M3, -448, 448, false, true, false, IC_OP_CAST_SATURATE, IC_OP_COUNT, true},
      /* a bound that is no constant */
      {IC_F32, IC_F8E4M3, -448, 448, false, false, true, IC_OP_CAST, IC_OP_CLAMP, false},
  };
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
    pipeline p = clamped_cast(cases[c].dt, cases[c].lo, cases[c].hi, cases[c].to, cases[c].sat, cases[c].keep,
                              cases[c].hi_input);
    const kir_kernel *k = &p.kernels[0];
    ic_op operand;
    const kir_instr *cast = fp8_cast(k, &operand);
    ck_assert_msg(cast->op == cases[c].want_op && operand == cases[c].want_operand && cast->clamped == cases[c].clamped,
                  "case %zu: %s of %s (clamped %d)", c, ic_op_name(cast->op), operand == IC_OP_COUNT ? "x" : ic_op_name(operand),
                  cast->clamped);
    const bool gone = cases[c].want_operand == IC_OP_COUNT && !cases[c].keep;
    ck_assert_int_eq(clamps_in(k), gone ? 0 : 1);
    sbuf text = {0}; /* the dump says why the cast saturates */
    kir_print(k, false, &text);
    ck_assert(text.data && (strstr(text.data, "(of a value clamped into range)") != NULL) == cases[c].clamped);
    sbuf_free(&text);
    for (int32_t i = 0; i < k->instrs.count; i++) /* dropped with the clamp: its bounds */
      ck_assert(!gone || k->instrs.items[i].kind != KIR_CONST);
    pipeline_free(&p);
  }
  /* eager: the cast is a kernel of its own, its operand a load */
  ic_graph *g = fresh();
  ic_value x = ic_graph_input(g, "x", IC_F32, 1, (ic_dim[]){ic_graph_symbol(g, "n")}, IC_LAYOUT_CONTIGUOUS);
  ic_value cl = ic_graph_op(g, IC_OP_CLAMP, 3, (ic_value[]){x, ic_graph_constant(g, -448, IC_DTYPE_AUTO),
                                                          ic_graph_constant(g, 448, IC_DTYPE_AUTO)});
  OK(ic_graph_output(g, "y", ic_graph_cast(g, cl, IC_F8E4M3)));
  pipeline p = run_passes(g, true);
  ck_assert_int_eq(p.s.count, 2);
  for (int32_t k = 0; k < p.s.count; k++)
    for (int32_t i = 0; i < p.kernels[k].instrs.count; i++) {
      const kir_instr *in = &p.kernels[k].instrs.items[i];
      ck_assert(!(in->kind == KIR_OP && in->op == IC_OP_CAST_SATURATE));
    }
  pipeline_free(&p);
}
END_TEST

/* ---------------------------------------------------------------- share */

static int32_t kinds_in(const kir_kernel *k, kir_kind kind, ic_op op) {
  int32_t n = 0;
  for (int32_t i = 0; i < k->instrs.count; i++)
    n += k->instrs.items[i].kind == kind && (kind != KIR_OP || k->instrs.items[i].op == op);
  return n;
}

/* mean, var and std of one x, and exp(x) twice: fused, the means and the squared
 * deviations are computed once each (var and std share their reduction: both take the
 * correction 1), exp once with two stores; the correction-0 var keeps its own reduction.
 * Eager: one op a kernel, nothing to share, as many reductions as the graph asks. */
START_TEST(test_share_equal_values) {
  for (int eager = 0; eager < 2; eager++) {
    ic_graph *g = fresh();
    ic_dim dims[2] = {ic_graph_symbol(g, "n"), 64};
    ic_value x = ic_graph_input(g, "x", IC_F32, 2, dims, IC_LAYOUT_CONTIGUOUS);
    const int32_t axis = 1;
    OK(ic_graph_output(g, "m", ic_graph_reduce(g, IC_REDUCE_MEAN, x, 1, &axis, 1)));
    OK(ic_graph_output(g, "v", ic_graph_var(g, x, 1, &axis, 1, 1)));
    OK(ic_graph_output(g, "s", ic_graph_std(g, x, 1, &axis, 1, 1)));
    OK(ic_graph_output(g, "v0", ic_graph_var(g, x, 1, &axis, 0, 1)));
    OK(ic_graph_output(g, "e1", ic_graph_op(g, IC_OP_EXP, 1, &x)));
    OK(ic_graph_output(g, "e2", ic_graph_op(g, IC_OP_EXP, 1, &x)));
    pipeline p = run_passes(g, eager);
    int32_t reduces = 0, exps = 0, stores = 0, subs = 0;
    for (int32_t k = 0; k < p.s.count; k++) {
      reduces += kinds_in(&p.kernels[k], KIR_REDUCE, IC_OP_COUNT);
      exps += kinds_in(&p.kernels[k], KIR_OP, IC_OP_EXP);
      subs += kinds_in(&p.kernels[k], KIR_OP, IC_OP_SUB);
      stores += kinds_in(&p.kernels[k], KIR_STORE, IC_OP_COUNT);
    }
    if (!eager) {
      ck_assert_int_eq(p.s.count, 1); /* the exps are element stores of the reduction kernel */
      ck_assert_int_eq(reduces, 3);   /* mean; mean of the squares with correction 1, and 0 */
      ck_assert_int_eq(exps, 1);
      ck_assert_int_eq(subs, 1);
      ck_assert_int_eq(stores, 6);
    } else {
      ck_assert_int_eq(reduces, 7); /* mean, then two a var or std */
      ck_assert_int_eq(exps, 2);
    }
    pipeline_free(&p);
  }
}
END_TEST

/* An exact op (abs of bf16) feeding only ops that make their own NaN, a reduction among
 * them, is left unrounded; one whose bits are stored is not. */
START_TEST(test_exact_ops_before_reductions) {
  for (int stored = 0; stored < 2; stored++) {
    ic_graph *g = fresh();
    ic_value x = ic_graph_input(g, "x", IC_BF16, 2, (ic_dim[]){ic_graph_symbol(g, "n"), 256}, IC_LAYOUT_CONTIGUOUS);
    ic_value a = ic_graph_unary(g, IC_OP_ABS, x);
    ic_value r = ic_graph_unary(g, IC_OP_RELU, ic_graph_unary(g, IC_OP_NEG, x));
    ic_value m = ic_graph_reduce(g, IC_REDUCE_MAX, a, 1, (int32_t[]){1}, 1);
    OK(ic_graph_output(g, "y", ic_graph_binary(g, IC_OP_MAXIMUM, ic_graph_binary(g, IC_OP_MUL, x, m), r)));
    if (stored) OK(ic_graph_output(g, "a", a));
    pipeline p = run_passes(g, false);
    ck_assert_int_eq(p.s.count, 1);
    const kir_kernel *k = &p.kernels[0];
    bool *unrounded = calloc((size_t)k->instrs.count + 1, sizeof *unrounded);
    ck_assert(unrounded && kir_exact_unrounded(k, unrounded));
    int32_t abs_seen = 0, neg_seen = 0, relu_seen = 0;
    for (int32_t i = 0; i < k->instrs.count; i++) {
      const kir_instr *in = &k->instrs.items[i];
      if (in->kind != KIR_OP) continue;
      if (in->op == IC_OP_ABS) abs_seen++, ck_assert(unrounded[i] == !stored);
      if (in->op == IC_OP_NEG) neg_seen++, ck_assert(unrounded[i]);  /* its use: relu */
      if (in->op == IC_OP_RELU) relu_seen++, ck_assert(unrounded[i]); /* its use: maximum */
    }
    ck_assert(abs_seen == 1 && neg_seen == 1 && relu_seen == 1);
    free(unrounded);
    pipeline_free(&p);
  }
}
END_TEST

static void log_collect(void *user, ic_log_level level, const char *msg) {
  if (level == IC_LOG_DEBUG && strstr(msg, "not generalized")) (*(int *)user)++;
}

/* A pass that leaves a kernel as it is says so (debug log of ic_compile), never silently. */
START_TEST(test_skipped_pass_is_logged) {
  int skipped = 0;
  ic_context_options o = {.struct_size = sizeof o, .log_fn = log_collect, .log_user = &skipped,
                          .log_level = IC_LOG_DEBUG, .flags = IC_CONTEXT_COMPILE_ONLY};
  ic_context *ctx;
  OK(ic_context_create(&o, &ctx));
  ic_graph *g = unary_chain(2, (ic_dim[]){4, 6}, (int32_t[]){1, 0}, 1);
  ic_compile_options co = {.struct_size = sizeof co, .mode = IC_MODE_EAGER, .backend = "ref"};
  ic_program *p;
  OK(ic_compile(ctx, g, &co, &p));
  ck_assert_int_eq(skipped, 1);
  ic_program_release(p);
  ic_graph_destroy(g);
  ic_context_destroy(ctx);
}
END_TEST

int main(void) {
  Suite *s = suite_create("passes");
  TCase *tc = check_tcase("core");
  tcase_add_test(tc, test_lower_chain_and_loads);
  tcase_add_test(tc, test_lower_views_fold);
  tcase_add_test(tc, test_lower_concat_guards);
  tcase_add_test(tc, test_sched_chain_siblings_and_spaces);
  tcase_add_test(tc, test_sched_moved_index_recomputes);
  tcase_add_test(tc, test_coalesce_contiguous_dims);
  tcase_add_test(tc, test_coalesce_large_kernels);
  tcase_add_test(tc, test_generalize_sizes_in_eager);
  tcase_add_test(tc, test_collect_params_refuses_out_of_range);
  tcase_add_test(tc, test_pass_results);
  tcase_add_test(tc, test_fold_clamped_casts);
  tcase_add_test(tc, test_share_equal_values);
  tcase_add_test(tc, test_exact_ops_before_reductions);
  tcase_add_test(tc, test_skipped_pass_is_logged);
  suite_add_tcase(s, tc);
  return check_run_suite(s);
}
