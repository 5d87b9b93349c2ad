/* Public accessors of a compiled program, and its reference count. */
#include <string.h>

#include "program/program.h"

void ic_program_retain(ic_program *p) {
  if (p) atomic_fetch_add_explicit(&p->refs, 1, memory_order_relaxed);
}

void ic_program_release(ic_program *p) {
  if (p && atomic_fetch_sub_explicit(&p->refs, 1, memory_order_acq_rel) == 1) program_destroy(p);
}

int32_t ic_program_input_count(const ic_program *p) { return p ? p->ninputs : 0; }
int32_t ic_program_output_count(const ic_program *p) { return p ? p->noutputs : 0; }
int32_t ic_program_kernel_count(const ic_program *p) { return p ? p->kernels.count : 0; }

int32_t ic_program_input_index(const ic_program *p, const char *name) {
  for (int32_t i = 0; p && name && i < p->ninputs; i++)
    if (strcmp(p->inputs[i].name, name) == 0) return i;
  return -1;
}

int32_t ic_program_output_index(const ic_program *p, const char *name) {
  for (int32_t i = 0; p && name && i < p->noutputs; i++)
    if (strcmp(p->outputs[i].name, name) == 0) return i;
  return -1;
}

const char *ic_program_kernel_source(const ic_program *p, int32_t i) {
  if (!p || i < 0 || i >= p->kernels.count || !p->kernels.items[i].compiled) return NULL;
  return p->kernels.items[i].compiled->source;
}

const char *ic_program_kernel_ir(const ic_program *p, int32_t i) {
  if (!p || i < 0 || i >= p->kernels.count) return NULL;
  return p->kernels.items[i].ir_text;
}
