/* Builds the kernel IR of one scheduled group: loads for operands from outside the group,
 * the group's ops in order, stores for the nodes that are materialized. */
#include "program/group_kernel.h"

#include <stdio.h>
#include <string.h>

typedef struct kir_builder {
  kir_kernel *k;
  const lowered *l;
  const int32_t *buffer_of; /* program buffer of lowered node (materialized ones) */
  int32_t *value_of;        /* lowered node -> instruction computing it in this kernel */
  /* The node being built: its own vars become these expressions of the kernel's vars
   * (identity for nodes over the kernel's space; lower_row_vars for row nodes). */
  int32_t nvars;
  sym_id vars[IC_MAX_DIMS];
} kir_builder;

/* An offset (or index) of the current node's vars in the kernel's vars. */
static sym_id kir_map(kir_builder *b, sym_id e) { return sym_subst_vars(b->k->syms, e, b->nvars, b->vars); }

static int32_t kir_emit(kir_builder *b, const kir_instr *in) {
  return VEC_PUSH(b->k->instrs, *in) ? b->k->instrs.count - 1 : -1;
}

/* A load (guard: a RANGE instruction, or -1), shared with an earlier identical one. */
static int32_t kir_emit_load(kir_builder *b, int32_t ref, ic_dtype dt, sym_id offset, int32_t guard) {
  int32_t buf = kir_buffer_of(b->k, ref, dt, false);
  if (buf < 0) return -1;
  int32_t nargs = guard >= 0 ? 1 : 0;
  for (int32_t i = 0; i < b->k->instrs.count; i++) {
    const kir_instr *in = &b->k->instrs.items[i];
    if (in->kind == KIR_LOAD && in->buffer == buf && in->offset == offset && in->nargs == nargs &&
        (!nargs || in->args[0] == guard))
      return i;
  }
  kir_instr in = {.kind = KIR_LOAD, .dtype = dt, .buffer = buf, .offset = offset, .nargs = nargs, .args = {guard}};
  return kir_emit(b, &in);
}

/* The RANGE instruction of lowered range r (its parents first), shared with an earlier
 * identical one; -1 for no range (r < 0), -2 when out of memory. */
static int32_t kir_emit_range(kir_builder *b, int32_t r) {
  if (r < 0) return -1;
  const lower_range *lr = &b->l->ranges.items[r];
  int32_t parent = kir_emit_range(b, lr->parent);
  if (parent < -1) return -2;
  int32_t nargs = parent >= 0 ? 1 : 0;
  sym_id index = kir_map(b, lr->index);
  for (int32_t i = 0; i < b->k->instrs.count; i++) {
    const kir_instr *in = &b->k->instrs.items[i];
    if (in->kind == KIR_RANGE && in->offset == index && in->lo == lr->lo && in->hi == lr->hi &&
        in->nargs == nargs && (!nargs || in->args[0] == parent))
      return i;
  }
  kir_instr in = {.kind = KIR_RANGE, .dtype = IC_BOOL, .offset = index, .lo = lr->lo, .hi = lr->hi,
                  .nargs = nargs, .args = {parent}};
  int32_t i = kir_emit(b, &in);
  return i < 0 ? -2 : i;
}

static int32_t kir_emit_operand(kir_builder *b, const lower_arg *a, sym_id identity_offset) {
  switch (a->kind) {
  case LOWER_ARG_SELECT: {
    /* where(cond, then, else): both branches are computed, their loads guarded */
    int32_t cond = kir_emit_range(b, a->cond);
    if (cond < 0) return -1;
    int32_t then_v = kir_emit_operand(b, &b->l->select_args.items[a->then_arg], identity_offset);
    if (then_v < 0) return -1;
    int32_t else_v = kir_emit_operand(b, &b->l->select_args.items[a->else_arg], identity_offset);
    if (else_v < 0) return -1;
    kir_instr in = {.kind = KIR_OP, .op = IC_OP_WHERE, .dtype = a->dtype, .nargs = 3, .args = {cond, then_v, else_v}};
    return kir_emit(b, &in);
  }
  case LOWER_ARG_CONST: {
    kir_instr in = {.kind = KIR_CONST, .dtype = a->dtype, .value = a->value};
    return kir_emit(b, &in);
  }
  case LOWER_ARG_LOAD: {
    int32_t ref = a->src.is_input ? a->src.index : b->buffer_of[a->src.index];
    int32_t guard = kir_emit_range(b, a->guard);
    if (guard < -1) return -1;
    return kir_emit_load(b, ref, a->dtype, kir_map(b, a->offset), guard);
  }
  case LOWER_ARG_NODE:
    if (b->value_of[a->node] >= 0) return b->value_of[a->node];
    /* Computed by an earlier kernel, at the same point or (bcast) at its row: read its
     * buffer (always inside). */
    return kir_emit_load(b, b->buffer_of[a->node], a->dtype, a->bcast ? kir_map(b, a->offset) : identity_offset, -1);
  }
  return -1;
}

ic_status program_group_kernel(const lowered *l, const schedule *s, int32_t group, bool eager, const int32_t *buffer_of,
                          int32_t *scratch, kir_kernel *k) {
  const sched_group *grp = &s->groups[group];
  memset(k, 0, sizeof *k);
  snprintf(k->name, sizeof k->name, "ic_k%d", (int)group);
  k->syms = l->syms;
  k->ndim = grp->ndim;
  memcpy(k->dims, grp->dims, sizeof(sym_id) * (size_t)grp->ndim);
  const lower_node *first = &l->nodes.items[grp->nodes[0]];
  k->numel = k->launch_numel = first->numel;

  for (int32_t i = 0; i < l->nodes.count; i++) scratch[i] = -1;
  k->reduces = grp->reduces;
  k->axes = grp->axes;
  k->contracts = grp->contracts;
  if (grp->contracts) {
    const lower_node *c = &l->nodes.items[grp->contract];
    k->contract_m = c->contract_m;
    k->contract_n = c->contract_n;
    k->allow_tf32 = l->allow_tf32;
  }
  if (grp->reduces) {
    /* a reduction kernel's grid counts rows: the points of the kept dims */
    k->launch_numel = sym_const(l->syms, 1);
    for (int32_t d = 0; d < k->ndim; d++)
      if (!((k->axes >> d) & 1u)) k->launch_numel = sym_mul(l->syms, k->launch_numel, k->dims[d]);
    k->numel = k->launch_numel;
  }
  kir_builder b = {k, l, buffer_of, scratch, 0, {0}};

  for (int32_t j = 0; j < grp->count; j++) {
    int32_t ni = grp->nodes[j];
    const lower_node *n = &l->nodes.items[ni];
    /* The node's own vars in the kernel's: the same for nodes over the kernel's space
     * (a reduction's operand space included), remapped for row nodes. */
    bool same = n->is_reduce || (n->ndim == k->ndim && memcmp(n->dims, k->dims, sizeof(sym_id) * (size_t)n->ndim) == 0);
    b.nvars = n->is_reduce ? n->in_ndim : n->ndim;
    for (int32_t d = 0; d < b.nvars; d++) b.vars[d] = sym_var(l->syms, d);
    if (!same && !lower_row_vars(l->syms, k->ndim, k->dims, k->axes, n->ndim, n->dims, b.vars)) goto not_row;
    sym_id own[IC_MAX_DIMS], strides[IC_MAX_DIMS];
    for (int32_t d = 0; d < n->ndim; d++) own[d] = sym_var(l->syms, d);
    lower_contiguous_strides(l->syms, n->ndim, n->dims, strides);
    sym_id identity = sym_const(l->syms, 0);
    for (int32_t d = 0; d < n->ndim; d++) identity = sym_add(l->syms, identity, sym_mul(l->syms, own[d], strides[d]));
    /* the node's own point; a reduction's operand lives over its operand space and its
     * result sits at its row */
    sym_id operand_point;
    if (n->is_reduce) {
      sym_id in_strides[IC_MAX_DIMS], row_vars[IC_MAX_DIMS];
      lower_contiguous_strides(l->syms, n->in_ndim, n->in_dims, in_strides);
      operand_point = sym_const(l->syms, 0);
      for (int32_t d = 0; d < n->in_ndim; d++) {
        /* a contraction's operands read the batch, M and K vars only (or N for B): a dim
         * of size 1 is index 0, not a var the other operand's side holds */
        int64_t one = 0;
        if (n->contracts && sym_is_const(l->syms, n->in_dims[d], &one) && one == 1) continue;
        operand_point = sym_add(l->syms, operand_point, sym_mul(l->syms, sym_var(l->syms, d), in_strides[d]));
      }
      if (!lower_row_vars(l->syms, k->ndim, k->dims, k->axes, n->ndim, n->dims, row_vars)) goto not_row;
      identity = sym_subst_vars(l->syms, identity, n->ndim, row_vars);
    } else {
      identity = operand_point = kir_map(&b, identity);
    }
    if (n->copy_note) k->note = n->copy_note;
    kir_instr op = {.kind = KIR_OP, .op = n->op, .dtype = n->dtype, .nargs = n->nargs};
    if (n->is_reduce) op = (kir_instr){.kind = KIR_REDUCE, .reduce = n->reduce, .dtype = n->dtype, .nargs = 1,
                                       .value = n->correction};
    if (n->contracts) op = (kir_instr){.kind = KIR_CONTRACT, .dtype = n->dtype, .nargs = 2};
    if (n->asm_spec) op = (kir_instr){.kind = KIR_ASM, .spec = n->asm_spec, .dtype = n->dtype, .nargs = n->nargs};
    if (n->is_asm_result) op = (kir_instr){.kind = KIR_ASM_RESULT, .result = n->result, .dtype = n->dtype, .nargs = 1};
    for (int32_t a = 0; a < n->nargs; a++)
      if ((op.args[a] = kir_emit_operand(&b, &n->args[a], operand_point)) < 0) goto oom;
    if ((scratch[ni] = kir_emit(&b, &op)) < 0) goto oom;
    if (s->materialize[ni]) {
      kir_instr st = {.kind = KIR_STORE, .dtype = n->dtype, .nargs = 1, .args = {scratch[ni]}, .offset = identity};
      if ((st.buffer = kir_buffer_of(k, buffer_of[ni], n->dtype, true)) < 0 || kir_emit(&b, &st) < 0) goto oom;
    }
  }
  /* asm groups run along the last dim, each row padded to a multiple of the pack: the
   * launch covers the padded rows */
  int32_t pack = kir_pack(k);
  if (pack > 1 && k->ndim > 0 && !k->reduces) { /* a reduction's launch counts rows */
    sym_id p = sym_const(l->syms, pack), padded = sym_mul(l->syms, sym_ceildiv(l->syms, k->dims[k->ndim - 1], p), p);
    for (int32_t d = 0; d < k->ndim - 1; d++) padded = sym_mul(l->syms, padded, k->dims[d]);
    k->launch_numel = padded;
  }
  if (!kir_fold_clamped_casts(k)) goto oom;
  if (!kir_share_equal_values(k)) goto oom;
  /* a contraction keeps its dims: the backends find M, N and K by them */
  k->coalesced = k->contracts ? KIR_PASS_CONTRACTION : kir_coalesce_dims(k);
  if (!k->coalesced) goto oom;
  if (k->contracts) kir_contract_plan(k);
  if (!k->reduces && pack == 1) kir_plan_pointwise_launch(k);
  k->generalized = KIR_PASS_DONE;
  if (eager && !(k->generalized = kir_generalize_sizes(k))) goto oom;
  if (sym_arena_failed(l->syms)) goto oom;
  ic_status st = kir_collect_params(k);
  if (st) kir_kernel_free(k);
  return st;
oom:
  kir_kernel_free(k);
  return error_set(IC_ERR_OUT_OF_MEMORY, "building kernel IR: out of memory");
not_row:
  /* the scheduler fused a node whose space is neither the kernel's nor a row of it */
  kir_kernel_free(k);
  return error_set(IC_ERR_INTERNAL, "building kernel IR: group %d holds a node of another space", (int)group);
}
