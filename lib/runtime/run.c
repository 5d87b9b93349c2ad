/* Running a program: bind symbols from the inputs, check every tensor, then walk the
 * steps on the stream. Nothing is launched unless every check passed.
 *
 * Small stacks, no host allocation: a run's state (symbol values, strides, buffer
 * pointers, launch arguments) lives in a scratch block laid out at compile time for this
 * program (p->run, program_finish), not on the stack, so no frame here passes 4 KB (the
 * build checks it with -Wstack-usage on GCC) and embedders may run programs on fibers
 * and coroutines with small stacks. The block comes from a per-thread cache that grows
 * only when a program needs more than any the thread ran before, so a steady-state run
 * allocates nothing on the host; it is freed when the thread exits. Runs of one program
 * on several threads each have their own block; the program is only read. */
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "program/program.h"

/* ---------------------------------------------------------------- the scratch cache */

typedef struct run_cache {
  unsigned char *mem;
  size_t cap;
  bool busy; /* a run of this thread holds mem */
} run_cache;

static _Thread_local run_cache run_tls;
static pthread_key_t run_key; /* its value is run_tls.mem: the destructor frees it at thread exit */
static pthread_once_t run_key_once = PTHREAD_ONCE_INIT;
static bool run_key_made;

static void run_cache_free(void *mem) {
  free(mem);
  if (run_tls.mem == mem) run_tls = (run_cache){0};
}

static void run_key_make(void) { run_key_made = pthread_key_create(&run_key, run_cache_free) == 0; }

/* Unloading the library (dlclose) must not leave live threads a key destructor in
 * unmapped code: the key goes with the library (the blocks of threads alive then are
 * not freed). */
__attribute__((destructor)) static void run_key_unload(void) {
  if (run_key_made) pthread_key_delete(run_key); /* no run made it: nothing to delete */
}

/* The scratch block of one run: the thread's cached block, replaced by a larger one when
 * this program needs more. A run inside a run of the same thread (no backend makes one)
 * or a process out of thread keys gets a block of its own, freed when the run ends. */
static ic_status run_scratch_take(size_t bytes, unsigned char **mem, bool *own) {
  *mem = NULL;
  *own = pthread_once(&run_key_once, run_key_make) != 0 || !run_key_made || run_tls.busy;
  if (*own) {
    *mem = sys_malloc(bytes);
  } else if (bytes <= run_tls.cap) {
    *mem = run_tls.mem;
  } else {
    size_t cap = (bytes + 255) / 256 * 256;
    unsigned char *grown = sys_malloc(cap); /* nothing to keep: no realloc copy */
    if (grown && pthread_setspecific(run_key, grown) != 0) {
      free(grown); /* the key still holds the old block */
      grown = NULL;
    }
    if (grown) {
      free(run_tls.mem);
      run_tls.mem = grown;
      run_tls.cap = cap;
      *mem = grown;
    }
  }
  if (!*mem) return error_set(IC_ERR_OUT_OF_MEMORY, "out of memory for the state of a run (%zu bytes)", bytes);
  if (!*own) run_tls.busy = true;
  return IC_OK;
}

static void run_scratch_give(unsigned char *mem, bool own) {
  if (own) free(mem);
  else run_tls.busy = false;
}

/* ---------------------------------------------------------------- run state */

/* Pointers into the scratch block (p->run says where each array lies). */
typedef struct run_state {
  unsigned char *mem;
  bool own;
  int64_t *symbols;
  bool *bound;
  int64_t *strides; /* sym params: input strides */
  int64_t *out_bytes;
  bool *out_alloc;
  void **ptr;
  void **slot_ptr;
  bool *slot_held;
  uint64_t *slots;
  void **args;
  sym_env env;
} run_state;

static ic_status run_begin(const ic_program *p, run_state *rs) {
  const program_run_layout *l = &p->run;
  ic_status s = run_scratch_take(l->bytes, &rs->mem, &rs->own);
  if (s) return s;
  unsigned char *m = rs->mem;
  rs->symbols = (int64_t *)(void *)(m + l->symbols);
  rs->bound = (bool *)(void *)(m + l->bound);
  rs->strides = (int64_t *)(void *)(m + l->strides);
  rs->out_bytes = (int64_t *)(void *)(m + l->out_bytes);
  rs->out_alloc = (bool *)(void *)(m + l->out_alloc);
  rs->ptr = (void **)(void *)(m + l->ptr);
  rs->slot_ptr = (void **)(void *)(m + l->slot_ptr);
  rs->slot_held = (bool *)(void *)(m + l->slot_held);
  rs->slots = (uint64_t *)(void *)(m + l->slots);
  rs->args = (void **)(void *)(m + l->args);
  memset(rs->bound, 0, sizeof(bool) * (size_t)p->names.nsymbols);
  memset(rs->strides, 0, sizeof(int64_t) * (size_t)p->ninputs * IC_MAX_DIMS);
  memset(rs->out_bytes, 0, sizeof(int64_t) * (size_t)p->noutputs);
  memset(rs->out_alloc, 0, sizeof(bool) * (size_t)p->noutputs);
  memset(rs->slot_held, 0, sizeof(bool) * (size_t)p->nslots);
  rs->env = (sym_env){.symbols = rs->symbols, .nsymbols = p->names.nsymbols, .params = rs->strides,
                      .nparams = p->ninputs * IC_MAX_DIMS};
  return IC_OK;
}

static void run_end(run_state *rs) { run_scratch_give(rs->mem, rs->own); }

/* The most bytes a tensor may span: every size, byte count and offset computed from the
 * caller's shapes and strides then fits in int64 with room for a kernel's arithmetic. */
#define RUN_MAX_BYTES (INT64_C(1) << 62)

static bool run_empty(int32_t ndim, const int64_t *shape) {
  for (int32_t d = 0; d < ndim; d++)
    if (shape[d] == 0) return true;
  return false;
}

/* Evaluates a size expression of the program for the bound symbols and strides. Its
 * failure is the caller's sizes' doing (an overflow, a division by zero): the message
 * says what (`what`, printf-style) and how. */
PRINTF_LIKE(5, 6)
static ic_status run_eval(const ic_program *p, const run_state *rs, sym_id e, int64_t *out, const char *what, ...) {
  sym_eval_status st = sym_eval_checked(program_syms(p), e, &rs->env, out);
  if (st == SYM_EVAL_OK) return IC_OK;
  char msg[256];
  va_list ap;
  va_start(ap, what);
  vsnprintf(msg, sizeof msg, what, ap);
  va_end(ap);
  if (st == SYM_EVAL_UNBOUND) return error_set(IC_ERR_INTERNAL, "cannot evaluate %s (an unbound symbol)", msg);
  sbuf expr = {0};
  sym_names names = p->names;
  names.plain_ints = true; /* for people: no C suffixes */
  sym_print(program_syms(p), e, &names, &expr);
  ic_status s = error_set(IC_ERR_INVALID_ARGUMENT, "%s, %s, %s for these input sizes", msg, expr.data ? expr.data : "?",
                          sym_eval_status_text(st));
  sbuf_free(&expr);
  return s;
}

/* The bytes tensor t spans (its last element's offset + 1, times the element size), with
 * strides (NULL: contiguous) and sizes >= 0; false when that overflows RUN_MAX_BYTES. */
static bool run_span_bytes(const ic_tensor *t, int64_t *bytes) {
  *bytes = 0;
  if (run_empty(t->ndim, t->shape)) return true;
  int64_t last = 0, contiguous = 1;
  for (int32_t d = t->ndim - 1; d >= 0; d--) {
    int64_t stride = t->strides ? t->strides[d] : contiguous, step;
    if (__builtin_mul_overflow(t->shape[d] - 1, stride, &step) || __builtin_add_overflow(last, step, &last) ||
        __builtin_mul_overflow(contiguous, t->shape[d], &contiguous))
      return false;
  }
  return !__builtin_add_overflow(last, 1, &last) && !__builtin_mul_overflow(last, (int64_t)ic_dtype_size(t->dtype), bytes) &&
         *bytes <= RUN_MAX_BYTES;
}

/* Binds the symbols of input i from its shape, or checks them against earlier inputs. */
static ic_status run_bind_input(const ic_program *p, run_state *rs, int32_t i, const ic_tensor *t) {
  const lower_input *in = &p->inputs[i];
  if (t->dtype != in->dtype)
    return error_set(IC_ERR_SHAPE_MISMATCH, "dtype mismatch: %s vs %s: input %" PRId32 " '%s': got %s, compiled for %s",
                     ic_dtype_name(t->dtype), ic_dtype_name(in->dtype), i, in->name, ic_dtype_name(t->dtype),
                     ic_dtype_name(in->dtype));
  if (t->ndim != in->ndim)
    return error_set(IC_ERR_SHAPE_MISMATCH, "input %" PRId32 " '%s': got %s with %" PRId32 " dims, compiled for %s with %" PRId32,
                        i, in->name, ic_dtype_name(t->dtype), t->ndim, ic_dtype_name(in->dtype), in->ndim);
  if (in->ndim > 0 && !t->shape)
    return error_set(IC_ERR_INVALID_ARGUMENT, "input %" PRId32 " '%s': shape is NULL", i, in->name);
  for (int32_t d = 0; d < in->ndim; d++) {
    int64_t got = t->shape[d], want;
    if (got < 0)
      return error_set(IC_ERR_INVALID_ARGUMENT, "input %" PRId32 " '%s': dim %" PRId32 " is negative", i, in->name, d);
    if (sym_kind_of(program_syms(p), in->dims[d]) == SYM_SYMBOL) {
      int32_t k = sym_leaf_index(program_syms(p), in->dims[d]);
      if (!rs->bound[k]) {
        rs->bound[k] = true;
        rs->symbols[k] = got;
        continue;
      }
      want = rs->symbols[k];
    } else {
      ic_status s = run_eval(p, rs, in->dims[d], &want, "input %" PRId32 " '%s': dim %" PRId32, i, in->name, d);
      if (s) return s;
    }
    if (got != want)
      return error_set(IC_ERR_SHAPE_MISMATCH, "input %" PRId32 " '%s': dim %" PRId32 " is %" PRId64 ", expected %" PRId64 "%s%s",
                          i, in->name, d, got, want, sym_kind_of(program_syms(p), in->dims[d]) == SYM_SYMBOL ? " (symbol " : "",
                          sym_kind_of(program_syms(p), in->dims[d]) == SYM_SYMBOL ? "bound by an earlier input)" : "");
  }
  return IC_OK;
}

/* Checks input i's strides against its layout and records them as kernel params. */
static ic_status run_check_strides(const ic_program *p, run_state *rs, int32_t i, const ic_tensor *t) {
  const lower_input *in = &p->inputs[i];
  int64_t contiguous = 1, span;
  bool empty = run_empty(t->ndim, t->shape);
  for (int32_t d = 0; d < in->ndim && t->strides; d++)
    if (t->strides[d] < 0)
      return error_set(IC_ERR_SHAPE_MISMATCH, "input %" PRId32 " '%s': negative stride in dim %" PRId32, i, in->name, d);
  if (!run_span_bytes(t, &span))
    return error_set(IC_ERR_INVALID_ARGUMENT, "input %" PRId32 " '%s': its shape and strides span more than 2^62 bytes", i,
                     in->name);
  for (int32_t d = in->ndim - 1; d >= 0; d--) {
    int64_t stride = t->strides ? t->strides[d] : contiguous;
    int64_t size = t->shape[d]; /* contiguous stays below 2^62: run_span_bytes */
    bool must_be_contiguous = in->layout == IC_LAYOUT_CONTIGUOUS || (in->layout == IC_LAYOUT_INNER_CONTIGUOUS && d == in->ndim - 1);
    if (must_be_contiguous && !empty && size > 1 && stride != contiguous)
      return error_set(IC_ERR_SHAPE_MISMATCH,
                          "input %" PRId32 " '%s': stride %" PRId64 " in dim %" PRId32 " breaks its %s layout (expected %" PRId64 ")", i,
                          in->name, stride, d, in->layout == IC_LAYOUT_CONTIGUOUS ? "contiguous" : "inner-contiguous", contiguous);
    rs->strides[lower_stride_param(i, d)] = stride;
    /* past the span check only for an empty tensor, whose other dims may be anything */
    if (__builtin_mul_overflow(contiguous, size, &contiguous)) contiguous = INT64_MAX;
  }
  if (!t->data && !empty)
    return error_set(IC_ERR_INVALID_ARGUMENT, "input %" PRId32 " '%s': data is NULL", i, in->name);
  return IC_OK;
}

static ic_status run_bind_inputs(const ic_program *p, run_state *rs, const ic_tensor *inputs, int32_t ninputs) {
  if (ninputs != p->ninputs || (ninputs > 0 && !inputs))
    return error_set(IC_ERR_INVALID_ARGUMENT, "the program takes %" PRId32 " inputs, got %" PRId32, p->ninputs, ninputs);
  for (int32_t i = 0; i < ninputs; i++) {
    ic_status s = run_bind_input(p, rs, i, &inputs[i]);
    if (!s) s = run_check_strides(p, rs, i, &inputs[i]);
    if (s) return s;
  }
  return IC_OK;
}

/* Output o's shape for the bound symbols: every dim evaluates, without overflow, to a size
 * >= 0 (the builder proves >= 0 from its form; checked all the same). */
static ic_status run_output_shape(const ic_program *p, const run_state *rs, int32_t o, int64_t *shape) {
  const program_buffer *b = &p->buffers.items[p->outputs[o].buffer];
  const char *name = p->outputs[o].name;
  for (int32_t d = 0; d < b->ndim; d++) {
    ic_status s = run_eval(p, rs, b->dims[d], &shape[d], "output %" PRId32 " '%s': dim %" PRId32, o, name, d);
    if (s) return s;
    if (shape[d] < 0)
      return error_set(IC_ERR_INVALID_ARGUMENT, "output %" PRId32 " '%s': dim %" PRId32 " is %" PRId64
                       " (negative) for these input sizes", o, name, d, shape[d]);
  }
  return IC_OK;
}

ic_status ic_program_output_shape(const ic_program *p, int32_t output, const ic_tensor *inputs, int32_t *ndim,
                                  int64_t *shape) {
  if (!p || !ndim || !shape) return error_set(IC_ERR_INVALID_ARGUMENT, "ic_program_output_shape: NULL argument");
  if (output < 0 || output >= p->noutputs)
    return error_set(IC_ERR_INVALID_ARGUMENT, "output %" PRId32 " out of range (%" PRId32 " outputs)", output, p->noutputs);
  run_state rs;
  ic_status s = run_begin(p, &rs);
  if (s) return s;
  s = run_bind_inputs(p, &rs, inputs, p->ninputs);
  if (!s) {
    const program_buffer *b = &p->buffers.items[p->outputs[output].buffer];
    s = run_output_shape(p, &rs, output, shape);
    if (!s) *ndim = b->ndim;
  }
  run_end(&rs);
  return s;
}

/* Checks output o against its computed shape; false data means ic allocates it. */
static ic_status run_check_output(const ic_program *p, const run_state *rs, int32_t o, const ic_tensor *t, int64_t *bytes) {
  const program_buffer *b = &p->buffers.items[p->outputs[o].buffer];
  const char *name = p->outputs[o].name;
  int64_t shape[IC_MAX_DIMS] = {0};
  ic_status s = run_output_shape(p, rs, o, shape);
  if (s) return s;
  if (t->dtype != b->dtype)
    return error_set(IC_ERR_SHAPE_MISMATCH, "dtype mismatch: %s vs %s: output %" PRId32 " '%s': got %s, the program makes %s",
                     ic_dtype_name(t->dtype), ic_dtype_name(b->dtype), o, name, ic_dtype_name(t->dtype),
                     ic_dtype_name(b->dtype));
  if (t->ndim != b->ndim)
    return error_set(IC_ERR_SHAPE_MISMATCH, "output %" PRId32 " '%s': got %s with %" PRId32 " dims, the program makes %s with %" PRId32,
                        o, name, ic_dtype_name(t->dtype), t->ndim, ic_dtype_name(b->dtype), b->ndim);
  /* ic checks the caller's memory against its shape: without one there is nothing to
   * check the computed shape against (ic allocates an output whose data is NULL). */
  if (t->data && b->ndim > 0 && !t->shape)
    return error_set(IC_ERR_INVALID_ARGUMENT, "output %" PRId32 " '%s': data is given but shape is NULL (an output in the "
                     "caller's memory must give its %" PRId32 " sizes)", o, name, b->ndim);
  int64_t contiguous = 1;
  for (int32_t d = b->ndim - 1; d >= 0; d--) {
    if (t->shape && t->shape[d] != shape[d])
      return error_set(IC_ERR_SHAPE_MISMATCH, "output %" PRId32 " '%s': dim %" PRId32 " is %" PRId64 ", the program makes %" PRId64,
                          o, name, d, t->shape[d], shape[d]);
    if (t->strides && shape[d] > 1 && t->strides[d] != contiguous)
      return error_set(IC_ERR_SHAPE_MISMATCH, "output %" PRId32 " '%s': outputs must be contiguous (dim %" PRId32 " stride %" PRId64 ")",
                          o, name, d, t->strides[d]);
    if (__builtin_mul_overflow(contiguous, shape[d], &contiguous)) contiguous = INT64_MAX;
  }
  if (__builtin_mul_overflow(contiguous, (int64_t)ic_dtype_size(b->dtype), bytes) || *bytes > RUN_MAX_BYTES)
    return error_set(IC_ERR_INVALID_ARGUMENT, "output %" PRId32 " '%s': its shape spans more than 2^62 bytes", o, name);
  return IC_OK;
}

/* Byte range [lo, hi) a tensor touches; empty when it has no elements. */
static void run_extent(const ic_tensor *t, int64_t bytes_hint, uintptr_t *lo, uintptr_t *hi) {
  *lo = *hi = (uintptr_t)t->data;
  if (!t->data) return;
  if (bytes_hint >= 0) {
    *hi += (uintptr_t)bytes_hint;
    return;
  }
  int64_t bytes = 0;
  if (run_span_bytes(t, &bytes)) *hi += (uintptr_t)bytes; /* an input: checked when bound */
}

static ic_status run_check_aliasing(const ic_program *p, const ic_tensor *inputs, const ic_tensor *outputs,
                                    const int64_t *out_bytes) {
  for (int32_t o = 0; o < p->noutputs; o++) {
    uintptr_t olo = 0, ohi = 0;
    run_extent(&outputs[o], out_bytes[o], &olo, &ohi);
    for (int32_t i = 0; olo < ohi && i < p->ninputs; i++) {
      uintptr_t ilo = 0, ihi = 0;
      run_extent(&inputs[i], -1, &ilo, &ihi);
      if (ilo < ihi && ilo < ohi && olo < ihi)
        return error_set(IC_ERR_INVALID_ARGUMENT, "output %" PRId32 " '%s' overlaps input %" PRId32 " '%s' (in-place runs are not supported)",
                            o, p->outputs[o].name, i, p->inputs[i].name);
    }
    for (int32_t q = 0; olo < ohi && q < o; q++) {
      uintptr_t qlo = 0, qhi = 0;
      run_extent(&outputs[q], out_bytes[q], &qlo, &qhi);
      if (qlo < ohi && olo < qhi)
        return error_set(IC_ERR_INVALID_ARGUMENT, "outputs %" PRId32 " and %" PRId32 " overlap", q, o);
    }
  }
  return IC_OK;
}

/* The argument values of one launch, in rs->slots, pointed to by rs->args. */
static ic_status run_launch_args(const ic_program *p, const run_state *rs, const program_kernel *k) {
  for (int32_t a = 0; a < k->kir.params.count; a++) {
    const kir_param *pa = &k->kir.params.items[a];
    uint64_t *slot = &rs->slots[a];
    if (pa->kind == KIR_PARAM_BUFFER) *slot = (uint64_t)(uintptr_t)rs->ptr[k->kir.buffers.items[pa->index].ref];
    else if (pa->kind == KIR_PARAM_SYMBOL) *slot = (uint64_t)rs->symbols[pa->index];
    else if (pa->kind == KIR_PARAM_STRIDE) *slot = (uint64_t)rs->strides[pa->index];
    else {
      int64_t v = 0;
      ic_status s = run_eval(p, rs, k->kir.size_exprs[pa->index - KIR_SIZE_PARAM_BASE], &v, "a size of %s", k->kir.name);
      if (s) return s;
      *slot = (uint64_t)v;
    }
    rs->args[a] = slot;
  }
  return IC_OK;
}

static ic_status run_launch(const ic_program *p, const run_state *rs, const program_step *st, void *stream) {
  const program_kernel *k = &p->kernels.items[st->kernel];
  int64_t blocks = 0;
  ic_status s = run_eval(p, rs, st->grid, &blocks, "the grid of %s", k->kir.name);
  if (s) return s;
  if (blocks == 0) return IC_OK; /* an empty iteration space launches nothing */
  if (blocks > INT32_MAX)
    return error_set(IC_ERR_UNSUPPORTED, "%s: %" PRId64 " blocks exceed the grid limit", k->kir.name, blocks);
  s = run_launch_args(p, rs, k);
  if (!s) s = p->backend->launch(p->bs, k->compiled, (uint32_t)blocks, rs->args, stream);
  if (s) error_prefix("running %s", k->kir.name);
  return s;
}

/* Walks the steps. On failure, frees what it allocated (outputs it allocated too). */
static ic_status run_steps(const ic_program *p, run_state *rs, ic_tensor *outputs, void *stream) {
  const backend_vtable *be = p->backend;
  void **ptr = rs->ptr, **slot_ptr = rs->slot_ptr;
  ic_status s = IC_OK;
  for (int32_t i = 0; i < p->steps.count && !s; i++) {
    const program_step *st = &p->steps.items[i];
    const program_buffer *b = &p->buffers.items[st->buffer >= 0 ? st->buffer : 0]; /* launches have none */
    int64_t bytes = 0;
    switch (st->kind) {
    case PROGRAM_STEP_OUTPUT:
      ptr[st->buffer] = outputs[b->index].data;
      if (ptr[st->buffer] || rs->out_bytes[b->index] == 0) break;
      s = be->mem_alloc(p->bs, (size_t)rs->out_bytes[b->index], stream, &ptr[st->buffer]);
      rs->out_alloc[b->index] = !s;
      break;
    case PROGRAM_STEP_ALLOC:
      if (st->reuse) {
        ptr[st->buffer] = slot_ptr[b->slot];
        break;
      }
      slot_ptr[b->slot] = NULL;
      s = run_eval(p, rs, b->bytes, &bytes, "the bytes of temporary %" PRId32, b->index);
      if (!s && bytes > RUN_MAX_BYTES)
        s = error_set(IC_ERR_INVALID_ARGUMENT, "the inputs' sizes make a temporary of %" PRId64 " bytes, more than 2^62",
                      bytes);
      if (!s && bytes > 0) s = be->mem_alloc(p->bs, (size_t)bytes, stream, &slot_ptr[b->slot]);
      rs->slot_held[b->slot] = !s && bytes > 0;
      ptr[st->buffer] = slot_ptr[b->slot];
      break;
    case PROGRAM_STEP_FREE:
      if (st->release && rs->slot_held[b->slot]) s = be->mem_free(p->bs, slot_ptr[b->slot], stream);
      if (st->release) rs->slot_held[b->slot] = false;
      break;
    case PROGRAM_STEP_LAUNCH: s = run_launch(p, rs, st, stream); break;
    }
  }
  if (s) {
    for (int32_t k = 0; k < p->nslots; k++)
      if (rs->slot_held[k]) be->mem_free(p->bs, slot_ptr[k], stream);
    for (int32_t o = 0; o < p->noutputs; o++)
      if (rs->out_alloc[o]) be->mem_free(p->bs, ptr[p->outputs[o].buffer], stream);
  } else {
    for (int32_t o = 0; o < p->noutputs; o++) outputs[o].data = ptr[p->outputs[o].buffer];
  }
  return s;
}

/* Everything after the device is current: checks, then the step walk. */
static ic_status run_program(const ic_program *p, run_state *rs, const ic_tensor *inputs, int32_t ninputs,
                             ic_tensor *outputs, void *stream) {
  ic_status s = run_bind_inputs(p, rs, inputs, ninputs);
  for (int32_t c = 0; c < p->checks.count && !s; c++) {
    int64_t count = 0;
    s = run_eval(p, rs, p->checks.items[c].count, &count, "the element count of a %s",
                 ic_reduce_name(p->checks.items[c].op));
    if (!s && count == 0)
      s = error_set(IC_ERR_SHAPE_MISMATCH, "%s over no elements: its reduced dims have size 0 for these inputs",
                    ic_reduce_name(p->checks.items[c].op));
  }
  for (int32_t o = 0; o < p->noutputs && !s; o++) s = run_check_output(p, rs, o, &outputs[o], &rs->out_bytes[o]);
  if (!s) s = run_check_aliasing(p, inputs, outputs, rs->out_bytes);
  if (s) return s;
  for (int32_t b = 0; b < p->buffers.count; b++) rs->ptr[b] = b < p->ninputs ? inputs[b].data : NULL;
  return run_steps(p, rs, outputs, stream);
}

ic_status ic_program_run(ic_program *p, const ic_tensor *inputs, int32_t ninputs, ic_tensor *outputs, int32_t noutputs,
                         void *stream) {
  if (!p) return error_set(IC_ERR_INVALID_ARGUMENT, "ic_program_run: program is NULL");
  if (noutputs != p->noutputs || (noutputs > 0 && !outputs))
    return error_set(IC_ERR_INVALID_ARGUMENT, "the program makes %" PRId32 " outputs, got %" PRId32, p->noutputs, noutputs);
  const backend_vtable *be = p->backend;
  /* The device is current for the checks too: a compile-only context fails here first. */
  ic_status s = be->enter ? be->enter(p->bs) : IC_OK;
  if (s) return s;
  run_state rs;
  s = run_begin(p, &rs);
  if (!s) {
    s = run_program(p, &rs, inputs, ninputs, outputs, stream);
    run_end(&rs);
  }
  if (be->leave) be->leave(p->bs);
  return s;
}
