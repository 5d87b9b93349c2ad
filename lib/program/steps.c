/* Program IR from a schedule: buffers, kernels, and the alloc / launch / free steps. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "program/group_kernel.h"
#include "program/program.h"

static int32_t program_add_buffer(ic_program *p, program_buffer_kind kind, int32_t index, ic_dtype dt, int32_t ndim,
                                  const sym_id *dims) {
  program_buffer b = {.kind = kind, .index = index, .slot = -1, .dtype = dt, .ndim = ndim};
  memcpy(b.dims, dims, sizeof(sym_id) * (size_t)ndim);
  b.bytes = sym_const(p->syms, (int64_t)ic_dtype_size(dt));
  for (int32_t d = 0; d < ndim; d++) b.bytes = sym_mul(p->syms, b.bytes, dims[d]);
  return VEC_PUSH(p->buffers, b) ? p->buffers.count - 1 : -1;
}

static bool program_add_step(ic_program *p, program_step_kind kind, int32_t buffer, int32_t kernel) {
  program_step st = {.kind = kind, .buffer = buffer, .kernel = kernel, .grid = SYM_NONE, .when = SYM_NONE};
  return VEC_PUSH(p->steps, st);
}

/* Buffers for inputs, outputs and temporaries; node_buffer maps materialized nodes. */
static bool program_plan_buffers(ic_program *p, const lowered *l, const schedule *s, int32_t *node_buffer) {
  for (int32_t i = 0; i < l->ninputs; i++)
    if (program_add_buffer(p, PROGRAM_INPUT, i, l->inputs[i].dtype, l->inputs[i].ndim, l->inputs[i].dims) < 0)
      return false;
  for (int32_t n = 0; n < l->nodes.count; n++) node_buffer[n] = -1;
  for (int32_t o = 0; o < l->noutputs; o++) {
    const lower_node *n = &l->nodes.items[l->outputs[o].node];
    int32_t b = program_add_buffer(p, PROGRAM_OUTPUT, o, n->dtype, l->outputs[o].ndim, l->outputs[o].dims);
    if (b < 0) return false;
    node_buffer[l->outputs[o].node] = b;
    p->outputs[o].buffer = b;
    if (!(p->outputs[o].name = str_dup(l->outputs[o].name))) return false;
  }
  int32_t temps = 0;
  for (int32_t n = 0; n < l->nodes.count; n++) {
    if (!s->materialize[n] || node_buffer[n] >= 0) continue;
    const lower_node *node = &l->nodes.items[n];
    if ((node_buffer[n] = program_add_buffer(p, PROGRAM_TEMP, temps++, node->dtype, node->ndim, node->dims)) < 0)
      return false;
  }
  return true;
}

/* Adds kernel k of schedule group `group` (taken over, freed on failure) and a step
 * launching it. */
static ic_status program_push_kernel(ic_program *p, kir_kernel *k, int32_t group) {
  program_kernel pk = {.kir = *k, .group = group};
  pk.kir.names = &p->names;
  sbuf text = {0};
  kir_print(&pk.kir, true, &text);
  pk.ir_text = sbuf_take(&text);
  if (!pk.ir_text || !VEC_PUSH(p->kernels, pk)) {
    free(pk.ir_text);
    kir_kernel_free(&pk.kir);
    return IC_ERR_OUT_OF_MEMORY;
  }
  return program_add_step(p, PROGRAM_STEP_LAUNCH, -1, p->kernels.count - 1) ? IC_OK : IC_ERR_OUT_OF_MEMORY;
}

/* One stage of a split reduction: a copy of k reading (combine) or writing (partial) the
 * workspace buffers values / indices (-1: none), launched over launch_numel blocks. */
static ic_status program_push_stage(ic_program *p, const kir_kernel *k, int32_t group, kir_stage stage, int32_t values,
                                    int32_t indices, sym_id launch_numel) {
  kir_kernel s;
  if (!kir_kernel_copy(&s, k)) return IC_ERR_OUT_OF_MEMORY;
  bool written = stage == KIR_STAGE_PARTIAL;
  kir_buffer bv = {p->buffers.items[values].dtype, written, values};
  s.stage = stage;
  s.partials = s.buffers.count;
  s.partial_index = -1;
  bool ok = VEC_PUSH(s.buffers, bv);
  if (ok && indices >= 0) {
    kir_buffer bi = {IC_I64, written, indices};
    s.partial_index = s.buffers.count;
    ok = VEC_PUSH(s.buffers, bi);
  }
  snprintf(s.name, sizeof s.name, "%.20s_%s", k->name, written ? "partial" : "combine");
  s.launch_numel = launch_numel;
  ic_status st = ok ? kir_collect_params(&s) : IC_ERR_OUT_OF_MEMORY;
  if (st) {
    kir_kernel_free(&s);
    return st;
  }
  return program_push_kernel(p, &s, group);
}

/* Marks the last step, a launch, as run only where when is 1 (SYM_NONE: always). */
static void program_launch_when(ic_program *p, sym_id when) { p->steps.items[p->steps.count - 1].when = when; }

/* Reduction kernel k as two (kir_split_wanted): the workspace, the partial and the
 * combine stage, the workspace freed; when (SYM_NONE: always) is 1 where the stages run, 0
 * where they launch nothing and the workspace is empty. k stays the caller's. */
static ic_status program_push_split(ic_program *p, const kir_kernel *k, int32_t group, sym_id when, int32_t *temps) {
  const kir_instr *reduce = NULL;
  for (int32_t i = 0; i < k->instrs.count; i++)
    if (k->instrs.items[i].kind == KIR_REDUCE) reduce = &k->instrs.items[i];
  if (!reduce) return error_set(IC_ERR_INTERNAL, "%s: a two-stage split of a kernel without a reduction", k->name);
  ic_dtype acc = kir_reduce_acc_dtype(reduce->reduce, k->instrs.items[reduce->args[0]].dtype);
  bool arg = reduce->reduce == IC_REDUCE_ARGMAX || reduce->reduce == IC_REDUCE_ARGMIN;
  sym_id dims[2] = {when == SYM_NONE ? k->launch_numel : sym_mul(p->syms, k->launch_numel, when), kir_split_units(k)};
  int32_t values = program_add_buffer(p, PROGRAM_TEMP, (*temps)++, acc, 2, dims);
  int32_t indices = arg ? program_add_buffer(p, PROGRAM_TEMP, (*temps)++, IC_I64, 2, dims) : -1;
  if (values < 0 || (arg && indices < 0) || !program_add_step(p, PROGRAM_STEP_ALLOC, values, -1) ||
      (arg && !program_add_step(p, PROGRAM_STEP_ALLOC, indices, -1)))
    return IC_ERR_OUT_OF_MEMORY;
  ic_status st = program_push_stage(p, k, group, KIR_STAGE_PARTIAL, values, indices, kir_split_partial_numel(k));
  if (!st) program_launch_when(p, when);
  if (!st) st = program_push_stage(p, k, group, KIR_STAGE_COMBINE, values, indices, k->launch_numel);
  if (!st) program_launch_when(p, when);
  if (!st && (!program_add_step(p, PROGRAM_STEP_FREE, values, -1) ||
              (arg && !program_add_step(p, PROGRAM_STEP_FREE, indices, -1))))
    st = IC_ERR_OUT_OF_MEMORY;
  return st;
}

/* x and y: launched where both are 1 (SYM_NONE: always). */
static sym_id program_when_both(sym_arena *a, sym_id x, sym_id y) {
  return x == SYM_NONE ? y : y == SYM_NONE ? x : sym_mul(a, x, y);
}

/* Kernel k of group `group` (taken over, freed on failure), launched only where `outer`
 * is 1 (SYM_NONE: always): as two stages where kir_split_wanted (always, or only where
 * the sizes bound at run time ask for it, the one kernel launched where they do not: the
 * same bits either way), else as it is. */
static ic_status program_push_reduction(ic_program *p, kir_kernel *k, int32_t group, int32_t *temps, sym_id outer) {
  ic_status st;
  if (!p->backend->two_stage_reductions || !kir_split_wanted(k)) {
    if (!(st = program_push_kernel(p, k, group))) program_launch_when(p, outer);
    return st;
  }
  const sym_id split = kir_split_when(k);
  st = program_push_split(p, k, group, program_when_both(p->syms, outer, split), temps);
  if (st || split == SYM_NONE) {
    kir_kernel_free(k);
    return st;
  }
  st = program_push_kernel(p, k, group);
  if (!st) program_launch_when(p, program_when_both(p->syms, outer, sym_sub(p->syms, sym_const(p->syms, 1), split)));
  return st;
}

/* Reduction kernel k (taken over, freed on failure) as a kernel a pass (kir_passes_wanted):
 * a buffer of row values for each REDUCE a later pass reads, the passes (each REDUCE's in
 * two stages), the buffers freed; where the reduced count is symbolic, k itself after
 * them, and the count bound at run time launches one side (kir_passes_when). */
static ic_status program_push_passes(ic_program *p, kir_kernel *k, int32_t group, int32_t *temps) {
  const int32_t nreduce = kir_reduce_count(k);
  const sym_id when = kir_passes_when(k);
  int32_t *rows = sys_malloc(sizeof(int32_t) * ((size_t)nreduce + 1));
  bool *read_back = sys_malloc(sizeof(bool) * ((size_t)nreduce + 1));
  const int32_t npasses = rows && read_back ? kir_pass_plan(k, read_back) : -1;
  ic_status st = npasses > 0 ? IC_OK : IC_ERR_OUT_OF_MEMORY;
  for (int32_t i = 0, q = 0; !st && i < k->instrs.count; i++) {
    if (k->instrs.items[i].kind != KIR_REDUCE) continue;
    rows[q] = -1;
    if (read_back[q]) {
      rows[q] = program_add_buffer(p, PROGRAM_TEMP, (*temps)++, k->instrs.items[i].dtype, 1, &k->launch_numel);
      if (rows[q] < 0 || !program_add_step(p, PROGRAM_STEP_ALLOC, rows[q], -1)) st = IC_ERR_OUT_OF_MEMORY;
    }
    q++;
  }
  for (int32_t pass = 0; !st && pass < npasses; pass++) {
    kir_kernel pk;
    st = kir_pass_kernel(k, pass, rows, &pk);
    if (!st) st = program_push_reduction(p, &pk, group, temps, when);
  }
  for (int32_t q = 0; !st && q < nreduce; q++)
    if (rows[q] >= 0 && !program_add_step(p, PROGRAM_STEP_FREE, rows[q], -1)) st = IC_ERR_OUT_OF_MEMORY;
  free(rows);
  free(read_back);
  if (st || when == SYM_NONE) {
    kir_kernel_free(k);
    return st;
  }
  st = program_push_kernel(p, k, group);
  if (!st) program_launch_when(p, sym_sub(p->syms, sym_const(p->syms, 1), when));
  return st;
}

static ic_status program_build_steps(ic_program *p, const lowered *l, const schedule *s, const int32_t *node_buffer,
                                     int32_t *scratch) {
  int32_t temps = 0;
  for (int32_t b = 0; b < p->buffers.count; b++) temps += p->buffers.items[b].kind == PROGRAM_TEMP;
  for (int32_t o = 0; o < p->noutputs; o++)
    if (!program_add_step(p, PROGRAM_STEP_OUTPUT, p->outputs[o].buffer, -1)) return IC_ERR_OUT_OF_MEMORY;
  for (int32_t g = 0; g < s->count; g++) {
    const sched_group *grp = &s->groups[g];
    for (int32_t j = 0; j < grp->count; j++) {
      int32_t b = node_buffer[grp->nodes[j]];
      if (b >= 0 && p->buffers.items[b].kind == PROGRAM_TEMP && !program_add_step(p, PROGRAM_STEP_ALLOC, b, -1))
        return IC_ERR_OUT_OF_MEMORY;
    }
    kir_kernel k;
    ic_status st = program_group_kernel(l, s, g, s->eager, node_buffer, scratch, &k);
    if (st) return st;
    st = kir_passes_wanted(&k) ? program_push_passes(p, &k, g, &temps) : program_push_reduction(p, &k, g, &temps, SYM_NONE);
    if (st) return st;
    for (int32_t n = 0; n < l->nodes.count; n++) {
      int32_t b = node_buffer[n];
      if (b >= 0 && p->buffers.items[b].kind == PROGRAM_TEMP && s->last_use[n] == g &&
          !program_add_step(p, PROGRAM_STEP_FREE, b, -1))
        return IC_ERR_OUT_OF_MEMORY;
    }
  }
  return IC_OK;
}

/* Reductions that need elements over a count the symbols decide are checked at run time
 * (a constant count of 0 is refused by the builder). */
static ic_status program_add_checks(ic_program *p, const lowered *l) {
  for (int32_t n = 0; n < l->nodes.count; n++) {
    const lower_node *node = &l->nodes.items[n];
    if (!node->is_reduce || node->contracts || !reduce_get(node->reduce)->needs_elements) continue;
    sym_id count = sym_const(p->syms, 1);
    for (int32_t d = 0; d < node->in_ndim; d++)
      if ((node->axes >> d) & 1u) count = sym_mul(p->syms, count, node->in_dims[d]);
    int64_t c;
    if (sym_is_const(p->syms, count, &c)) continue;
    program_check check = {count, node->reduce};
    if (!VEC_PUSH(p->checks, check)) return IC_ERR_OUT_OF_MEMORY;
  }
  return IC_OK;
}

ic_status program_build(const backend_vtable *backend, backend_state *bs, lowered *l, const schedule *s,
                        ic_program **out) {
  *out = NULL;
  ic_program *p = sys_calloc(1, sizeof *p);
  if (!p) return error_set(IC_ERR_OUT_OF_MEMORY, "program: out of memory");
  atomic_init(&p->refs, 1);
  p->backend = backend;
  p->bs = bs;
  p->syms = l->syms;
  p->names = (sym_names){.symbols = (const char *const *)l->symbol_names, .nsymbols = l->nsymbols};
  p->inputs = l->inputs;
  p->ninputs = l->ninputs;
  p->noutputs = l->noutputs;
  p->outputs = sys_calloc((size_t)l->noutputs + 1, sizeof *p->outputs);
  int32_t *node_buffer = sys_malloc(sizeof(int32_t) * ((size_t)l->nodes.count + 1));
  int32_t *scratch = sys_malloc(sizeof(int32_t) * ((size_t)l->nodes.count + 1));
  ic_status st = IC_ERR_OUT_OF_MEMORY;
  if (p->outputs && node_buffer && scratch && program_plan_buffers(p, l, s, node_buffer))
    st = program_build_steps(p, l, s, node_buffer, scratch);
  if (!st) st = program_add_checks(p, l);
  if (!st && !program_plan_memory(p)) st = IC_ERR_OUT_OF_MEMORY;
  if (!st && sym_arena_failed(p->syms)) st = IC_ERR_OUT_OF_MEMORY;
  free(node_buffer);
  free(scratch);
  if (st) {
    program_destroy(p);
    return st == IC_ERR_OUT_OF_MEMORY ? error_set(st, "program: out of memory") : st;
  }
  *out = p;
  return IC_OK;
}

/* Reserves count items of size bytes at *at, aligned for int64 and pointers. */
static size_t program_take(size_t *at, size_t count, size_t size) {
  const size_t align = _Alignof(int64_t) > _Alignof(void *) ? _Alignof(int64_t) : _Alignof(void *);
  size_t offset = (*at + align - 1) / align * align;
  *at = offset + count * size;
  return offset;
}

/* The scratch block of a run (runtime/run.c): every array a run needs, by the program's
 * own counts rather than the limits. */
static void program_layout_run(ic_program *p) {
  program_run_layout *r = &p->run;
  int32_t max_params = 0;
  for (int32_t i = 0; i < p->kernels.count; i++)
    if (p->kernels.items[i].kir.params.count > max_params) max_params = p->kernels.items[i].kir.params.count;
  size_t at = 0;
  r->symbols = program_take(&at, (size_t)p->names.nsymbols, sizeof(int64_t));
  r->strides = program_take(&at, (size_t)p->ninputs * IC_MAX_DIMS, sizeof(int64_t));
  r->out_bytes = program_take(&at, (size_t)p->noutputs, sizeof(int64_t));
  r->ptr = program_take(&at, (size_t)p->buffers.count, sizeof(void *));
  r->slot_ptr = program_take(&at, (size_t)p->nslots, sizeof(void *));
  r->slots = program_take(&at, (size_t)max_params, sizeof(uint64_t));
  r->args = program_take(&at, (size_t)max_params, sizeof(void *));
  r->bound = program_take(&at, (size_t)p->names.nsymbols, sizeof(bool));
  r->out_alloc = program_take(&at, (size_t)p->noutputs, sizeof(bool));
  r->slot_held = program_take(&at, (size_t)p->nslots, sizeof(bool));
  r->max_params = max_params;
  r->bytes = at > 0 ? at : 1; /* never 0: a run always has a block */
}

ic_status program_finish(ic_program *p) {
  for (int32_t i = 0; i < p->kernels.count; i++) {
    program_kernel *k = &p->kernels.items[i];
    k->args = sys_calloc((size_t)k->kir.params.count + 1, sizeof *k->args);
    if (!k->args) return error_set(IC_ERR_OUT_OF_MEMORY, "program: out of memory");
    for (int32_t a = 0; a < k->kir.params.count; a++) {
      const kir_param *pa = &k->kir.params.items[a];
      static const ic_arg_kind kinds[] = {[KIR_PARAM_BUFFER] = IC_ARG_BUFFER, [KIR_PARAM_SYMBOL] = IC_ARG_SYMBOL,
                                          [KIR_PARAM_STRIDE] = IC_ARG_STRIDE, [KIR_PARAM_SIZE] = IC_ARG_SIZE};
      k->args[a].kind = kinds[pa->kind];
      k->args[a].index = pa->kind == KIR_PARAM_BUFFER ? k->kir.buffers.items[pa->index].ref
                         : pa->kind == KIR_PARAM_SIZE ? k->kir.size_exprs[pa->index - KIR_SIZE_PARAM_BASE]
                                                      : pa->index;
    }
  }
  for (int32_t i = 0; i < p->steps.count; i++) {
    program_step *st = &p->steps.items[i];
    if (st->kind != PROGRAM_STEP_LAUNCH) continue;
    const program_kernel *k = &p->kernels.items[st->kernel];
    int64_t per_block = k->compiled->per_block > 0 ? k->compiled->per_block
                                                   : (int64_t)k->compiled->block * k->compiled->per_thread;
    st->grid = sym_ceildiv(p->syms, k->kir.launch_numel, sym_const(p->syms, per_block));
    if (k->compiled->cluster > 1) st->grid = sym_mul(p->syms, st->grid, sym_const(p->syms, k->compiled->cluster));
    if (st->when != SYM_NONE) st->grid = sym_mul(p->syms, st->grid, st->when);
  }
  program_layout_run(p);
  return sym_arena_failed(p->syms) ? error_set(IC_ERR_OUT_OF_MEMORY, "program: out of memory") : IC_OK;
}

void program_destroy(ic_program *p) {
  if (!p) return;
  for (int32_t i = 0; i < p->kernels.count; i++) {
    program_kernel *k = &p->kernels.items[i];
    if (k->compiled) p->backend->kernel_free(p->bs, k->compiled);
    kir_kernel_free(&k->kir);
    free(k->ir_text);
    free(k->args);
  }
  for (int32_t o = 0; p->outputs && o < p->noutputs; o++) free(p->outputs[o].name);
  free(p->outputs);
  free(p->kernels.items);
  free(p->checks.items);
  free(p->steps.items);
  free(p->buffers.items);
  lowered_destroy(p->graph);
  free(p);
}
