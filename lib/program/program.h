/* lib/program: the program (wrapper) IR. A compiled graph is a list of steps over
 * buffers whose sizes and grids are symbolic: the runtime binds the symbols from the
 * input shapes and walks the steps.
 *
 * Buffers: inputs first (buffer i = input i), then outputs, then temporaries. Steps:
 *   OUTPUT o   bind output o's memory (the caller's, or allocated by ic)
 *   ALLOC t    allocate temporary t (stream-ordered)
 *   LAUNCH k   launch kernel k over its grid expression with its parameters
 *   FREE t     release temporary t after its last reader */
#ifndef IC_PROGRAM_H
#define IC_PROGRAM_H

#include <stdatomic.h>

#include "backend/backend.h"
#include "lower/lower.h"
#include "sched/sched.h"

typedef enum program_buffer_kind { PROGRAM_INPUT, PROGRAM_OUTPUT, PROGRAM_TEMP } program_buffer_kind;

typedef struct program_buffer {
  program_buffer_kind kind;
  int32_t index; /* input, output or temporary number */
  int32_t slot;  /* temporaries: the memory slot the plan gives it, -1 otherwise */
  ic_dtype dtype;
  int32_t ndim;
  sym_id dims[IC_MAX_DIMS];
  sym_id bytes;
} program_buffer;

typedef enum program_step_kind { PROGRAM_STEP_OUTPUT, PROGRAM_STEP_ALLOC, PROGRAM_STEP_LAUNCH, PROGRAM_STEP_FREE } program_step_kind;

typedef struct program_step {
  program_step_kind kind;
  int32_t buffer; /* OUTPUT, ALLOC, FREE */
  int32_t kernel; /* LAUNCH */
  sym_id grid;    /* LAUNCH: blocks */
  sym_id when;    /* LAUNCH: SYM_NONE, or 0 or 1 at run time (kir_split_when), the grid's factor */
  bool reuse;     /* ALLOC: the slot's memory is already held (freed by an earlier temp) */
  bool release;   /* FREE: no later temporary reuses the slot: give the memory back */
} program_step;

typedef struct program_kernel {
  kir_kernel kir;
  char *ir_text;
  backend_kernel *compiled;
  ic_step_arg *args; /* the launch ABI for the step walk (kir.params as public args) */
  int32_t group;     /* the schedule group it computes (a two-stage reduction: two kernels) */
} program_kernel;

/* A run-time condition: a reduction that needs elements (max, min, argmax, argmin) over
 * a count that only the bound symbols fix must not be empty. */
typedef struct program_check {
  sym_id count;
  ic_reduce_op op;
} program_check;

typedef struct program_output {
  char *name;
  int32_t buffer;
} program_output;

/* The per-run state of ic_program_run and ic_program_output_shape, sized at compile time
 * (program_finish): byte offsets of its arrays in one scratch block of `bytes` bytes
 * (every offset aligned for int64 and pointers). The runtime takes the block from a
 * per-thread cache, so a run keeps its stack small and, in steady state, allocates
 * nothing on the host. */
typedef struct program_run_layout {
  size_t symbols;   /* int64[names.nsymbols]: bound symbol values */
  size_t bound;     /* bool[names.nsymbols] */
  size_t strides;   /* int64[ninputs * IC_MAX_DIMS]: sym params (lower_stride_param) */
  size_t out_bytes; /* int64[noutputs] */
  size_t out_alloc; /* bool[noutputs]: ic allocated the output */
  size_t ptr;       /* void *[buffers.count] */
  size_t slot_ptr;  /* void *[nslots] */
  size_t slot_held; /* bool[nslots] */
  size_t slots;     /* uint64[max_params]: one launch's argument values */
  size_t args;      /* void *[max_params]: pointers to them */
  int32_t max_params; /* the most params of any kernel */
  size_t bytes;     /* the whole block, > 0 */
} program_run_layout;

struct ic_program {
  atomic_int refs;
  const backend_vtable *backend;
  backend_state *bs;   /* the backend's state in the compiling context */
  lowered *graph;      /* owned once compiled: the arena, symbol names and inputs */
  sym_arena *syms;     /* graph->syms */
  sym_names names;     /* symbol names for printing */
  const lower_input *inputs;
  int32_t ninputs;
  program_output *outputs;
  int32_t noutputs;
  struct { program_buffer *items; int32_t count, cap; } buffers;
  struct { program_step *items; int32_t count, cap; } steps;
  struct { program_kernel *items; int32_t count, cap; } kernels;
  struct { program_check *items; int32_t count, cap; } checks;
  int32_t nslots; /* memory slots of the temporaries */
  program_run_layout run; /* set by program_finish */
};

/* The arena of a compiled program, read-only: printing, the accessors and runs go
 * through it, so handing it to a constructor (sym_const, sym_add, ...) there is a
 * discarded-qualifiers warning, an error under IC_WERROR. */
static inline const sym_arena *program_syms(const ic_program *p) { return p->syms; }

/* Builds the program's buffers, kernel IR and steps from a lowered graph and its
 * schedule. The program borrows l (its arena, names, inputs) until the caller hands it
 * over by setting p->graph. Kernels are not compiled yet; program_set_grids sets the
 * launch grids once they are. */
ic_status program_build(const backend_vtable *backend, backend_state *bs, lowered *l, const schedule *s,
                        ic_program **out);
/* Memory planning (plan.c): gives every temporary a slot, reusing the slot of a freed
 * temporary of the same symbolic size, and marks the alloc/free steps that take and give
 * back memory. False when out of memory. */
bool program_plan_memory(ic_program *p);
/* After the backend compiled the kernels: launch grids, the public launch ABI and the
 * run layout. The last step that writes the program or its sym arena: from here on a
 * program is immutable (cached programs are printed, inspected and run by several
 * threads at once), so printing, the accessors and runs only read it. */
ic_status program_finish(ic_program *p);
void program_destroy(ic_program *p);
/* The program as text: buffers, then one line a step. */
void program_print(const ic_program *p, sbuf *out);

#endif
