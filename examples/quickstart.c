/* quickstart: y = gelu_tanh(x * w + b) for x of shape [n, 4096] with a symbolic n, fused
 * into one kernel and checked against plain C. On a GPU it runs on the cuda backend;
 * without one on the ref backend, a host interpreter of the same kernel IR.
 *
 *   quickstart          compile, run, check
 *   quickstart --cuda   also print the generated CUDA C (for sm_90a when there is no GPU) */
#include <ic/ic.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(call)                                                                            \
  do {                                                                                         \
    ic_status s_ = (call);                                                                     \
    if (s_ != IC_OK) {                                                                         \
      fprintf(stderr, "%s failed: %s: %s\n", #call, ic_status_string(s_), ic_last_error()); \
      return 1;                                                                                \
    }                                                                                          \
  } while (0)

enum { ROWS = 1000, COLS = 4096 };

static float gelu_tanh_ref(float x) {
  float inner = 0.7978845608028654f * (x + 0.044715f * (x * x * x));
  return (0.5f * x) * (1.0f + tanhf(inner));
}

/* The ref backend takes host pointers; cuda takes device memory, a copy of the host's. */
static ic_status place(ic_context *ctx, int gpu, void *host, size_t bytes, void **out) {
  if (!gpu) {
    *out = host;
    return IC_OK;
  }
  ic_status s = ic_malloc(ctx, bytes, out);
  return s == IC_OK ? ic_memcpy_htod(ctx, *out, host, bytes) : s;
}

int main(int argc, char **argv) {
  int show_cuda = argc > 1 && strcmp(argv[1], "--cuda") == 0;

  /* The local GPU; without one the context serves the ref backend (and, to show CUDA C,
   * compiles for sm_90a unless IC_ARCH names another arch). */
  ic_context *ctx = NULL;
  CHECK(ic_context_create(NULL, &ctx));
  int gpu = ic_context_has_device(ctx);
  if (show_cuda && !gpu && !ic_context_arch(ctx)[0]) {
    ic_context_destroy(ctx);
    ic_context_options opts = {.struct_size = sizeof opts, .arch = "sm_90a"};
    CHECK(ic_context_create(&opts, &ctx));
  }

  /* The graph. Builder errors are sticky: ic_graph_output reports the first one. */
  ic_graph *g = NULL;
  CHECK(ic_graph_create(&g));
  ic_dim n = ic_graph_symbol(g, "n"); /* one program serves every n */
  ic_value x = ic_graph_input(g, "x", IC_F32, 2, (ic_dim[]){n, COLS}, IC_LAYOUT_CONTIGUOUS);
  ic_value w = ic_graph_input(g, "w", IC_F32, 1, (ic_dim[]){COLS}, IC_LAYOUT_CONTIGUOUS);
  ic_value b = ic_graph_input(g, "b", IC_F32, 1, (ic_dim[]){COLS}, IC_LAYOUT_CONTIGUOUS);
  ic_value xw = ic_graph_binary(g, IC_OP_MUL, x, w); /* w broadcasts over rows */
  ic_value y = ic_graph_unary(g, IC_OP_GELU_TANH, ic_graph_binary(g, IC_OP_ADD, xw, b));
  CHECK(ic_graph_output(g, "y", y));

  if (show_cuda) {
    ic_program *cu = NULL;
    CHECK(ic_compile(ctx, g, NULL, &cu)); /* options NULL: the cuda backend */
    printf("/* CUDA C for %s */\n%s\n", ic_context_arch(ctx), ic_program_kernel_source(cu, 0));
    ic_program_release(cu);
  }

  ic_compile_options copts = {.struct_size = sizeof copts, .backend = gpu ? "cuda" : "ref"};
  ic_program *prog = NULL;
  CHECK(ic_compile(ctx, g, &copts, &prog));
  ic_graph_destroy(g);

  /* Inputs on the host, then where the backend wants them. */
  size_t nx = (size_t)ROWS * COLS;
  float *hx = malloc(nx * sizeof(float)), *hy = calloc(nx, sizeof(float));
  float hw[COLS], hb[COLS];
  if (!hx || !hy) return 1;
  for (size_t i = 0; i < nx; i++) hx[i] = (float)((int)(i % 97) - 48) / 16.0f;
  for (int c = 0; c < COLS; c++) {
    hw[c] = 1.0f + (float)(c % 7) / 8.0f;
    hb[c] = (float)(c % 5) / 4.0f - 0.5f;
  }
  void *dx, *dw, *db, *dy;
  CHECK(place(ctx, gpu, hx, nx * sizeof(float), &dx));
  CHECK(place(ctx, gpu, hw, sizeof hw, &dw));
  CHECK(place(ctx, gpu, hb, sizeof hb, &db));
  CHECK(place(ctx, gpu, hy, nx * sizeof(float), &dy));

  int64_t xs[2] = {ROWS, COLS}, vs[1] = {COLS}; /* binds n = ROWS */
  ic_tensor in[3] = {{dx, IC_F32, 2, xs, NULL}, {dw, IC_F32, 1, vs, NULL}, {db, IC_F32, 1, vs, NULL}};
  ic_tensor out[1] = {{dy, IC_F32, 2, xs, NULL}};
  CHECK(ic_program_run(prog, in, 3, out, 1, NULL)); /* NULL: the default stream */
  if (gpu) CHECK(ic_memcpy_dtoh(ctx, hy, dy, nx * sizeof(float)));

  size_t bad = 0;
  for (size_t i = 0; i < nx; i++) {
    float ref = gelu_tanh_ref(hx[i] * hw[i % COLS] + hb[i % COLS]);
    if (fabsf(hy[i] - ref) > 1e-5f * (1.0f + fabsf(ref))) bad++;
  }
  printf("y = gelu_tanh(x * w + b), x [%d, %d]: %d kernel(s) on %s; %zu of %zu values differ "
         "from the host reference\n",
         ROWS, COLS, (int)ic_program_kernel_count(prog), gpu ? ic_context_arch(ctx) : "the ref backend (no GPU)",
         bad, nx);

  if (gpu) {
    ic_free(ctx, dx);
    ic_free(ctx, dw);
    ic_free(ctx, db);
    ic_free(ctx, dy);
  }
  free(hx);
  free(hy);
  ic_program_release(prog);
  ic_context_destroy(ctx);
  return bad ? 1 : 0;
}
