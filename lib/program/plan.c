/* Memory planning: temporaries whose lives do not overlap share memory. A temporary
 * takes the slot of one freed earlier when their sizes are the same expression (so the
 * reuse holds for every value of the symbols); the plan is visible in the program text
 * and the step walk (slots, reuse and release on alloc/free steps). */
#include <stdlib.h>

#include "program/program.h"

bool program_plan_memory(ic_program *p) {
  int32_t nslots = 0;
  /* slot_free[s]: the slot's last temporary has been freed; slot_bytes[s]: its size
   * (a slot a temporary at most) */
  size_t n = (size_t)p->buffers.count + 1;
  bool *slot_free = sys_malloc(sizeof(bool) * n);
  sym_id *slot_bytes = sys_malloc(sizeof(sym_id) * n);
  int32_t *last_free_step = sys_malloc(sizeof(int32_t) * n);
  if (!slot_free || !slot_bytes || !last_free_step) {
    free(slot_free);
    free(slot_bytes);
    free(last_free_step);
    return false;
  }
  for (int32_t i = 0; i < p->steps.count; i++) {
    program_step *st = &p->steps.items[i];
    if (st->kind != PROGRAM_STEP_ALLOC && st->kind != PROGRAM_STEP_FREE) continue;
    program_buffer *b = &p->buffers.items[st->buffer];
    if (st->kind == PROGRAM_STEP_FREE) {
      slot_free[b->slot] = true;
      last_free_step[b->slot] = i;
      st->release = true; /* until a later temporary takes the slot */
      continue;
    }
    int32_t s = 0;
    while (s < nslots && !(slot_free[s] && slot_bytes[s] == b->bytes)) s++;
    if (s < nslots) {
      st->reuse = true;
      p->steps.items[last_free_step[s]].release = false;
    } else {
      s = nslots++;
      slot_bytes[s] = b->bytes;
    }
    slot_free[s] = false;
    b->slot = s;
  }
  p->nslots = nslots;
  free(slot_free);
  free(slot_bytes);
  free(last_free_step);
  return true;
}
