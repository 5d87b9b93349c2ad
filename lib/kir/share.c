/* Kernel IR pass kir_share_equal_values: a value computed twice in a kernel is computed
 * once.
 *
 * Graphs repeat work: var and std of one tensor each build its mean and its squared
 * deviations, a user asks for mean(x) beside var(x), a pointwise expression appears in
 * two outputs. Each copy of a reduction is a pass over its rows in the generated kernel
 * (and its code: eight chunks of eight elements, unrolled), so the copies cost memory
 * traffic and compile time. Two instructions are the same value when they are of the same
 * kind, dtype and attributes over the same arguments: every op is a function of its
 * operands, and a reduction's order depends only on its kernel's shape, so the shared
 * value has the bits each copy had (eager kernels, which hold one op each, still agree).
 * Stores and asm statements are never merged (an asm statement's effects are its
 * author's); two results of one asm statement are. Later copies go, their uses renamed
 * to the first, in one walk with a hash table of the kept instructions. */
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "base/sys.h"
#include "kir/kir.h"

static bool kir_shareable(const kir_instr *in) { return in->kind != KIR_STORE && in->kind != KIR_ASM; }

/* The fields that make an instruction's value, as words (unused fields are zero in every
 * instruction the builder makes, and equal ones compare equal anyway). */
enum { SHARE_KEY_WORDS = 12 + KIR_MAX_ARGS };
static int32_t kir_share_key(const kir_instr *in, uint64_t *w) {
  uint64_t value_bits;
  memcpy(&value_bits, &in->value, sizeof value_bits);
  int32_t n = 0;
  w[n++] = (uint64_t)in->kind;
  w[n++] = (uint64_t)in->dtype;
  w[n++] = (uint64_t)in->op;
  w[n++] = (uint64_t)(uint32_t)in->nargs;
  w[n++] = (uint64_t)(uint32_t)in->buffer;
  w[n++] = (uint64_t)in->offset;
  w[n++] = (uint64_t)in->lo;
  w[n++] = (uint64_t)in->hi;
  w[n++] = value_bits;
  w[n++] = (uint64_t)in->reduce;
  w[n++] = (uint64_t)(uint32_t)in->result;
  w[n++] = (uint64_t)in->clamped;
  for (int32_t a = 0; a < in->nargs; a++) w[n++] = (uint64_t)(uint32_t)in->args[a];
  return n;
}

kir_pass_result kir_share_equal_values(kir_kernel *k) {
  const int32_t count = k->instrs.count;
  if (count < 2) return KIR_PASS_DONE;
  size_t cap = 16;
  while (cap < 2 * (size_t)count) cap <<= 1;
  int32_t *renamed = sys_malloc((size_t)count * sizeof *renamed);
  int32_t *slots = sys_calloc(cap, sizeof *slots); /* a kept instruction's index + 1; 0: empty */
  if (!renamed || !slots) {
    free(renamed);
    free(slots);
    return KIR_PASS_OUT_OF_MEMORY;
  }
  int32_t kept = 0;
  for (int32_t i = 0; i < count; i++) {
    kir_instr in = k->instrs.items[i];
    for (int32_t a = 0; a < in.nargs; a++) in.args[a] = renamed[in.args[a]];
    size_t at = 0;
    if (kir_shareable(&in)) {
      uint64_t key[SHARE_KEY_WORDS], other[SHARE_KEY_WORDS];
      const int32_t words = kir_share_key(&in, key);
      int32_t same = -1;
      for (at = XXH3_64bits(key, (size_t)words * sizeof *key) & (cap - 1); slots[at]; at = (at + 1) & (cap - 1)) {
        const int32_t j = slots[at] - 1;
        if (kir_share_key(&k->instrs.items[j], other) == words && memcmp(key, other, (size_t)words * sizeof *key) == 0) {
          same = j;
          break;
        }
      }
      if (same >= 0) {
        renamed[i] = same;
        continue;
      }
      slots[at] = kept + 1;
    }
    renamed[i] = kept;
    k->instrs.items[kept++] = in; /* kept <= i: nothing unread is overwritten */
  }
  k->instrs.count = kept;
  free(renamed);
  free(slots);
  return KIR_PASS_DONE;
}
