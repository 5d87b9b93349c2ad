/* The program as text: one line a buffer, one line a step. Printing only reads the
 * program: a cached program is printed (ic_program_dump, IC_DUMP) while other threads
 * print or run it, so nothing here may intern an expression into its sym arena; every
 * expression printed was made at compile time. */
#include <inttypes.h>

#include "program/program.h"

/* Symbol k as sym_print prints its leaf (its name, else s<k>), without looking the leaf
 * up in the arena. */
static void program_print_symbol(const ic_program *p, int32_t k, sbuf *out) {
  if (k >= 0 && k < p->names.nsymbols && p->names.symbols && p->names.symbols[k]) sbuf_puts(out, p->names.symbols[k]);
  else sbuf_printf(out, "s%" PRId32, k);
}

static void program_print_buffer(const ic_program *p, int32_t b, sbuf *out) {
  static const char *const kinds[] = {"input", "output", "temp"};
  const program_buffer *buf = &p->buffers.items[b];
  sbuf_printf(out, "buf%" PRId32 " = %s %" PRId32 " : %s", b, kinds[buf->kind], buf->index, ic_dtype_name(buf->dtype));
  sym_print_list(program_syms(p), buf->ndim, buf->dims, &p->names, out);
  if (buf->kind == PROGRAM_TEMP) sbuf_printf(out, " slot %" PRId32, buf->slot);
  if (buf->kind == PROGRAM_INPUT) sbuf_printf(out, " \"%s\"", p->inputs[buf->index].name);
  if (buf->kind == PROGRAM_OUTPUT) sbuf_printf(out, " \"%s\"", p->outputs[buf->index].name);
  sbuf_puts(out, " (bytes ");
  sym_print(program_syms(p), buf->bytes, &p->names, out);
  sbuf_puts(out, ")\n");
}

void program_print(const ic_program *p, sbuf *out) {
  sbuf_printf(out, "program: %" PRId32 " inputs, %" PRId32 " outputs, %" PRId32 " kernels, %" PRId32
                      " temporary slots, backend %s\n",
                 p->ninputs, p->noutputs, p->kernels.count, p->nslots, p->backend->name);
  for (int32_t b = 0; b < p->buffers.count; b++) program_print_buffer(p, b, out);
  for (int32_t c = 0; c < p->checks.count; c++) {
    sbuf_printf(out, "check %s over ", ic_reduce_name(p->checks.items[c].op));
    sym_print(program_syms(p), p->checks.items[c].count, &p->names, out);
    sbuf_puts(out, " elements > 0 (before anything launches)\n");
  }
  for (int32_t i = 0; i < p->steps.count; i++) {
    const program_step *st = &p->steps.items[i];
    switch (st->kind) {
    case PROGRAM_STEP_OUTPUT: sbuf_printf(out, "output buf%" PRId32 "\n", st->buffer); break;
    case PROGRAM_STEP_ALLOC:
      sbuf_printf(out, "alloc buf%" PRId32 " in slot %" PRId32 "%s\n", st->buffer, p->buffers.items[st->buffer].slot,
                     st->reuse ? " (reused)" : "");
      break;
    case PROGRAM_STEP_FREE:
      sbuf_printf(out, "free buf%" PRId32 "%s\n", st->buffer, st->release ? " (slot released)" : "");
      break;
    case PROGRAM_STEP_LAUNCH: {
      const kir_kernel *k = &p->kernels.items[st->kernel].kir;
      sbuf_printf(out, "launch %s grid ", k->name);
      if (st->grid != SYM_NONE) sym_print(program_syms(p), st->grid, &p->names, out);
      else sbuf_puts(out, "?");
      sbuf_puts(out, " (");
      for (int32_t a = 0; a < k->params.count; a++) {
        const kir_param *pa = &k->params.items[a];
        if (a) sbuf_puts(out, ", ");
        if (pa->kind == KIR_PARAM_BUFFER) sbuf_printf(out, "buf%" PRId32, k->buffers.items[pa->index].ref);
        else if (pa->kind == KIR_PARAM_SYMBOL) program_print_symbol(p, pa->index, out);
        else if (pa->kind == KIR_PARAM_STRIDE)
          sbuf_printf(out, "stride(in%" PRId32 ", %" PRId32 ")", pa->index / IC_MAX_DIMS, pa->index % IC_MAX_DIMS);
        else sym_print(program_syms(p), k->size_exprs[pa->index - KIR_SIZE_PARAM_BASE], &p->names, out);
      }
      sbuf_puts(out, ")");
      /* what a launch needs besides the grid: clusters (the grid counts their blocks) and
       * dynamic shared memory */
      const backend_kernel *bk = p->kernels.items[st->kernel].compiled;
      if (bk && bk->cluster > 1) sbuf_printf(out, " clusters of %" PRId32, bk->cluster);
      if (bk && bk->smem > 0) sbuf_printf(out, " shared %" PRId32 " bytes", bk->smem);
      sbuf_puts(out, "\n");
      break;
    }
    }
  }
}
