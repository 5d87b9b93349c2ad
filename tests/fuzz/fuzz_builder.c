/* Builder call sequences from bytes: inputs of any dtype and small shapes, then ops,
 * casts, reductions, views, constants and matmuls on earlier values, then one or two
 * outputs.
 * The graph compiles fused and eager on the ref backend (both or neither), and the two
 * programs, run on the same inputs (raw bytes from the input: any bit pattern, NaNs
 * included), agree bit for bit (ic's promise: eager == fused). */
#include <string.h>

#include "fuzz.h"
#include "ic/ic.h"

enum { MAX_VALUES = 24, MAX_STEPS = 16 };

static ic_dtype fuzz_dtype(fuzz_bytes *b) { return (ic_dtype)(1 + fuzz_u8(b) % (IC_DTYPE_COUNT - 1)); }

static ic_value pick(fuzz_bytes *b, const ic_value *v, int n) { return v[fuzz_u8(b) % n]; }

/* Step bytes MATMUL_FIRST .. MATMUL_FIRST + 7 are a matmul; the others keep the meaning
 * they had before matmul. These 8 are the ones the corpus used least as a step (16 of its
 * inputs), so it keeps its meaning almost entirely. */
enum { MATMUL_FIRST = 186 };

/* a @ b, both cast to one matmul dtype (else most would be refused): b another value, or
 * a's transpose. */
static ic_value matmul(ic_graph *g, fuzz_bytes *b, ic_value a, const ic_value *v, int n) {
  static const ic_dtype dts[] = {IC_BF16, IC_F16, IC_F32, IC_F64, IC_I8};
  ic_dtype dt = dts[fuzz_u8(b) % 5];
  uint8_t form = fuzz_u8(b);
  ic_value other = pick(b, v, n);
  int32_t nd = ic_graph_value_ndim(g, a);
  if (form & 1 && nd >= 2) {
    int32_t perm[IC_MAX_DIMS];
    for (int32_t i = 0; i < nd && i < IC_MAX_DIMS; i++) perm[i] = i;
    perm[nd - 2] = nd - 1;
    perm[nd - 1] = nd - 2;
    other = ic_graph_permute(g, a, nd, perm);
  }
  if (form & 2) {
    ic_value t = a;
    a = other;
    other = t;
  }
  return ic_graph_matmul(g, ic_graph_cast(g, a, dt), ic_graph_cast(g, other, dt));
}

/* One builder step on the values so far; returns the new value (maybe invalid). */
static ic_value step(ic_graph *g, fuzz_bytes *b, const ic_value *v, int n) {
  ic_value a = pick(b, v, n);
  int32_t nd = ic_graph_value_ndim(g, a);
  uint8_t kind = fuzz_u8(b);
  if (kind >= MATMUL_FIRST && kind < MATMUL_FIRST + 8) return matmul(g, b, a, v, n);
  switch (kind % 11) {
  case 0:
  case 1:
  case 2: {
    ic_op op = (ic_op)(fuzz_u8(b) % IC_OP_COUNT);
    int32_t arity = ic_op_arity(op);
    ic_value args[4] = {a, a, a, a};
    for (int32_t i = 1; i < arity && i < 4; i++) args[i] = pick(b, v, n);
    return ic_graph_op(g, op, arity < 0 ? 1 : arity, args);
  }
  case 3: return ic_graph_cast(g, a, fuzz_dtype(b));
  case 4: return ic_graph_cast_saturate(g, a, fuzz_dtype(b));
  case 5: {
    int32_t axes[2] = {(int32_t)(fuzz_u8(b) % 5) - 2, (int32_t)(fuzz_u8(b) % 5) - 2};
    return ic_graph_reduce(g, (ic_reduce_op)(fuzz_u8(b) % IC_REDUCE_COUNT), a, 1 + fuzz_u8(b) % 2, axes,
                           fuzz_u8(b) & 1);
  }
  case 6: {
    int32_t perm[IC_MAX_DIMS];
    for (int32_t i = 0; i < nd && i < IC_MAX_DIMS; i++) perm[i] = nd - 1 - i;
    return fuzz_u8(b) & 1 ? ic_graph_permute(g, a, nd, perm) : ic_graph_unsqueeze(g, a, fuzz_u8(b) % 3);
  }
  case 7:
    return ic_graph_slice(g, a, (int32_t)(fuzz_u8(b) % 3), (int64_t)(fuzz_u8(b) % 7) - 3,
                          (int64_t)(fuzz_u8(b) % 9) - 4, 1 + fuzz_u8(b) % 3);
  case 8: {
    ic_value two[2] = {a, pick(b, v, n)};
    return ic_graph_concat(g, 2, two, (int32_t)(fuzz_u8(b) % 3) - 1);
  }
  case 9: {
    union {
      uint32_t u;
      float f;
    } bits = {fuzz_u32(b)};
    return ic_graph_constant(g, bits.f, fuzz_u8(b) & 1 ? IC_DTYPE_AUTO : fuzz_dtype(b));
  }
  default: {
    int64_t lo_hi[2] = {fuzz_u8(b) % 3, fuzz_u8(b) % 3};
    return fuzz_u8(b) & 1 ? ic_graph_pad(g, a, 1, lo_hi, -1.5) : ic_graph_where(g, pick(b, v, n), a, pick(b, v, n));
  }
  }
}

/* Runs p on the inputs; the outputs (ic-allocated, malloc'd by ref) go to out. */
static ic_status run(ic_program *p, const ic_tensor *in, int32_t nin, ic_tensor *out, int32_t nout) {
  for (int32_t i = 0; i < nout; i++) out[i].data = NULL;
  return ic_program_run(p, in, nin, out, nout, NULL);
}

static size_t out_bytes(ic_program *p, int32_t i, const ic_tensor *in, ic_dtype dt) {
  int32_t nd = 0;
  int64_t shape[IC_MAX_DIMS];
  if (ic_program_output_shape(p, i, in, &nd, shape) != IC_OK) return 0;
  size_t n = ic_dtype_size(dt);
  for (int32_t d = 0; d < nd; d++) n *= (size_t)shape[d];
  return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fuzz_bytes b = {data, size};
  ic_graph *g = NULL;
  if (ic_graph_create(&g) != IC_OK) return 0;
  ic_value v[MAX_VALUES];
  int n = 0;
  int32_t nin = 1 + fuzz_u8(&b) % 3;
  ic_tensor in[3];
  int64_t shapes[3][3];
  void *bufs[3] = {NULL, NULL, NULL};
  for (int32_t i = 0; i < nin; i++) {
    ic_dtype dt = fuzz_dtype(&b);
    int32_t nd = fuzz_u8(&b) % 4;
    ic_dim dims[3];
    size_t count = 1;
    for (int32_t d = 0; d < nd; d++) {
      static const int64_t sizes[] = {1, 2, 3, 5, 0, 7};
      dims[d] = sizes[fuzz_u8(&b) % 6];
      shapes[i][d] = dims[d];
      count *= (size_t)dims[d];
    }
    char name[8] = {'x', (char)('0' + i), 0};
    v[n++] = ic_graph_input(g, name, dt, nd, dims, IC_LAYOUT_CONTIGUOUS);
    size_t bytes = count * ic_dtype_size(dt);
    bufs[i] = malloc(bytes ? bytes : 1);
    for (size_t k = 0; k < bytes; k++) ((uint8_t *)bufs[i])[k] = fuzz_u8(&b);
    in[i] = (ic_tensor){bufs[i], dt, nd, shapes[i], NULL};
  }
  int steps = fuzz_u8(&b) % MAX_STEPS;
  for (int s = 0; s < steps && n < MAX_VALUES; s++) {
    ic_value r = step(g, &b, v, n);
    if (r == IC_INVALID_VALUE) break; /* the graph holds its error now */
    v[n++] = r;
  }
  int32_t nout = n > 1 && (fuzz_u8(&b) & 1) ? 2 : 1;
  ic_value outs[2] = {v[n - 1], v[(n - 1) / 2]};
  if (nout == 2 && outs[0] == outs[1]) nout = 1;
  ic_graph_output(g, "y0", outs[0]);
  if (nout == 2) ic_graph_output(g, "y1", outs[1]);

  ic_context *ctx = fuzz_context();
  ic_program *fused = NULL, *eager = NULL;
  ic_compile_options of = {.struct_size = sizeof of, .mode = IC_MODE_FUSED, .flags = IC_COMPILE_NO_CACHE, .backend = "ref"};
  ic_compile_options oe = of;
  oe.mode = IC_MODE_EAGER;
  ic_status sf = ic_compile(ctx, g, &of, &fused);
  ic_status se = ic_compile(ctx, g, &oe, &eager);
  FUZZ_REQUIRE((sf == IC_OK) == (se == IC_OK), "fused compile %s, eager %s: %s", ic_status_string(sf),
               ic_status_string(se), ic_last_error());
  if (sf == IC_OK) {
    ic_tensor of_out[2], oe_out[2];
    for (int32_t i = 0; i < nout; i++) {
      ic_dtype dt = ic_graph_value_dtype(g, outs[i]);
      of_out[i] = (ic_tensor){NULL, dt, ic_graph_value_ndim(g, outs[i]), NULL, NULL};
      oe_out[i] = of_out[i];
    }
    ic_status rf = run(fused, in, nin, of_out, nout);
    ic_status re = run(eager, in, nin, oe_out, nout);
    FUZZ_REQUIRE(rf == re, "fused run %s, eager run %s: %s", ic_status_string(rf), ic_status_string(re),
                 ic_last_error());
    for (int32_t i = 0; i < nout && rf == IC_OK; i++) {
      size_t bytes = out_bytes(fused, i, in, of_out[i].dtype);
      FUZZ_REQUIRE(!bytes || memcmp(of_out[i].data, oe_out[i].data, bytes) == 0,
                   "output %d: fused and eager differ", (int)i);
    }
    for (int32_t i = 0; i < nout; i++) {
      free(of_out[i].data);
      free(oe_out[i].data);
    }
  }
  ic_program_release(fused);
  ic_program_release(eager);
  ic_graph_destroy(g);
  for (int32_t i = 0; i < nin; i++) free(bufs[i]);
  return 0;
}
