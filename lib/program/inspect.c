/* The public view of a program: text dump and the read-only step walk. */
#include <stdlib.h>

#include "program/program.h"

ic_status ic_program_dump(const ic_program *p, char **out) {
  if (!p || !out) return error_set(IC_ERR_INVALID_ARGUMENT, "ic_program_dump: NULL argument");
  sbuf sb = {0};
  program_print(p, &sb);
  for (int32_t i = 0; i < p->kernels.count; i++) {
    const program_kernel *k = &p->kernels.items[i];
    sbuf_printf(&sb, "\n%s", k->ir_text);
    if (k->compiled && k->compiled->source) sbuf_printf(&sb, "\n%s", k->compiled->source);
  }
  *out = sbuf_take(&sb);
  return *out ? IC_OK : error_set(IC_ERR_OUT_OF_MEMORY, "ic_program_dump: out of memory");
}

int32_t ic_program_buffer_count(const ic_program *p) { return p ? p->buffers.count : 0; }
int32_t ic_program_step_count(const ic_program *p) { return p ? p->steps.count : 0; }
int32_t ic_program_symbol_count(const ic_program *p) { return p ? p->names.nsymbols : 0; }

const char *ic_program_symbol_name(const ic_program *p, int32_t i) {
  return p && i >= 0 && i < p->names.nsymbols ? p->names.symbols[i] : NULL;
}

ic_status ic_program_buffer(const ic_program *p, int32_t i, ic_buffer_info *out) {
  if (!p || !out || i < 0 || i >= p->buffers.count)
    return error_set(IC_ERR_INVALID_ARGUMENT, "ic_program_buffer: no buffer %d", (int)i);
  const program_buffer *b = &p->buffers.items[i];
  static const ic_buffer_kind kinds[] = {[PROGRAM_INPUT] = IC_BUFFER_INPUT, [PROGRAM_OUTPUT] = IC_BUFFER_OUTPUT,
                                         [PROGRAM_TEMP] = IC_BUFFER_TEMP};
  *out = (ic_buffer_info){.kind = kinds[b->kind], .index = b->index, .dtype = b->dtype, .ndim = b->ndim,
                          .bytes_expr = b->bytes, .slot = b->slot};
  for (int32_t d = 0; d < b->ndim; d++) out->dims_expr[d] = b->dims[d];
  if (b->kind == PROGRAM_INPUT) out->name = p->inputs[b->index].name;
  if (b->kind == PROGRAM_OUTPUT) out->name = p->outputs[b->index].name;
  return IC_OK;
}

ic_status ic_program_step(const ic_program *p, int32_t i, ic_step *out) {
  if (!p || !out || i < 0 || i >= p->steps.count)
    return error_set(IC_ERR_INVALID_ARGUMENT, "ic_program_step: no step %d", (int)i);
  const program_step *st = &p->steps.items[i];
  static const ic_step_kind kinds[] = {[PROGRAM_STEP_OUTPUT] = IC_STEP_OUTPUT, [PROGRAM_STEP_ALLOC] = IC_STEP_ALLOC,
                                       [PROGRAM_STEP_LAUNCH] = IC_STEP_LAUNCH, [PROGRAM_STEP_FREE] = IC_STEP_FREE};
  *out = (ic_step){.kind = kinds[st->kind], .buffer = st->buffer, .kernel = st->kernel, .grid_expr = -1};
  if (st->kind == PROGRAM_STEP_LAUNCH) {
    const program_kernel *k = &p->kernels.items[st->kernel];
    out->kernel_name = k->compiled->name;
    out->source = k->compiled->source;
    out->binary = k->compiled->binary;
    out->binary_size = k->compiled->binary_size;
    out->block = k->compiled->block;
    out->grid_expr = st->grid;
    out->nargs = k->kir.params.count;
    out->args = k->args;
    out->shared_bytes = k->compiled->smem;
    out->cluster = k->compiled->cluster > 1 ? k->compiled->cluster : 1;
  }
  return IC_OK;
}

/* Only handles ic gave out are valid: a buffer's dims or size, a launch's grid or sizes. */
static bool program_is_handle(const ic_program *p, int32_t expr) {
  for (int32_t i = 0; i < p->buffers.count; i++) {
    const program_buffer *b = &p->buffers.items[i];
    if (b->bytes == expr) return true;
    for (int32_t d = 0; d < b->ndim; d++)
      if (b->dims[d] == expr) return true;
  }
  for (int32_t i = 0; i < p->steps.count; i++)
    if (p->steps.items[i].kind == PROGRAM_STEP_LAUNCH && p->steps.items[i].grid == expr) return true;
  for (int32_t i = 0; i < p->kernels.count; i++)
    for (int32_t j = 0; j < p->kernels.items[i].kir.nsizes; j++)
      if (p->kernels.items[i].kir.size_exprs[j] == expr) return true;
  return false;
}

ic_status ic_program_eval(const ic_program *p, int32_t expr, const int64_t *symbols, int64_t *value) {
  if (!p || !value || (!symbols && p->names.nsymbols > 0))
    return error_set(IC_ERR_INVALID_ARGUMENT, "ic_program_eval: NULL argument");
  if (!program_is_handle(p, expr))
    return error_set(IC_ERR_INVALID_ARGUMENT, "ic_program_eval: %d is not an expression of this program", (int)expr);
  sym_env env = {.symbols = symbols, .nsymbols = p->names.nsymbols};
  sym_eval_status st = sym_eval_checked(program_syms(p), expr, &env, value);
  if (st != SYM_EVAL_OK)
    return error_set(st == SYM_EVAL_UNBOUND ? IC_ERR_INTERNAL : IC_ERR_INVALID_ARGUMENT,
                     "ic_program_eval: the expression %s for these sizes", sym_eval_status_text(st));
  return IC_OK;
}
