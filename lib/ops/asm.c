/* Inline PTX operands: constraints, registers, the C template (asm.h). */
#include "ops/asm.h"

#include <inttypes.h>
#include <string.h>

#include "base/dtype.h"
#include "base/error.h"

static int32_t asm_bits(ic_dtype dt) { return dt == IC_BOOL ? 8 : (int32_t)ic_dtype_size(dt) * 8; }

static int32_t asm_letter_width(char c) {
  switch (c) {
  case 'h': return 16;
  case 'r': case 'f': return 32;
  case 'l': case 'd': return 64;
  default: return 0;
  }
}

/* The next constraint entry of s (from *at): its letter and whether it is an output;
 * false at the end, or with the error set for a malformed entry. */
static bool asm_next_entry(const char *what, const char *s, size_t *at, int32_t index, char *letter, bool *output,
                           ic_status *st) {
  size_t i = *at;
  while (s[i] == ' ' || s[i] == '\t') i++;
  if (!s[i]) return false;
  *output = s[i] == '=';
  if (*output) i++;
  while (s[i] == ' ' || s[i] == '\t') i++;
  *letter = s[i];
  if (s[i]) i++;
  while (s[i] == ' ' || s[i] == '\t') i++;
  if (s[i] && s[i] != ',') {
    *st = error_set(IC_ERR_INVALID_GRAPH, "%s: constraint %" PRId32 " is not one letter (an optional '=' and one of h, r, l, f, d)",
                    what, index);
    return false;
  }
  if (s[i] == ',') {
    i++;
    size_t j = i;
    while (s[j] == ' ' || s[j] == '\t') j++;
    if (!s[j]) {
      *st = error_set(IC_ERR_INVALID_GRAPH, "%s: the constraints end with a comma", what);
      return false;
    }
  }
  *at = i;
  if (*letter == 'c') {
    *st = error_set(IC_ERR_INVALID_GRAPH, "%s: constraint %" PRId32 " is 'c': NVRTC has no 8-bit register constraint; "
                    "bind 8-bit elements to h or r (several share a register at pack > 1)", what, index);
    return false;
  }
  if (!asm_letter_width(*letter)) {
    *st = error_set(IC_ERR_INVALID_GRAPH, "%s: constraint %" PRId32 " has the unknown letter '%c' (h, r, l, f or d)", what,
                    index, *letter ? *letter : '?');
    return false;
  }
  return true;
}

/* Operand k's register letter and count, checked against its dtype. */
static ic_status asm_fit(const char *what, const char *role, int32_t k, char letter, ic_dtype dt, int32_t pack,
                         bool input, asm_operand *op) {
  int32_t bits = asm_bits(dt), width = asm_letter_width(letter);
  *op = (asm_operand){.letter = letter, .bits = bits, .dtype = dt, .per_reg = 1, .regs = pack};
  if (letter == 'f' || letter == 'd') {
    bool ok = letter == 'd' ? dt == IC_F64 : dt == IC_F32 || (input && (dt == IC_F16 || dt == IC_BF16));
    if (!ok)
      return error_set(IC_ERR_INVALID_GRAPH, "%s: %s %" PRId32 " is %s, which does not fit '%c' (%s)", what, role, k,
                       ic_dtype_name(dt), letter,
                       letter == 'd' ? "f64 only" : input ? "f32, or f16 and bf16 converted to f32" : "f32 only");
    op->upcast = letter == 'f' && dt != IC_F32;
    return IC_OK;
  }
  if (bits <= 0 || width <= 0)
    return error_set(IC_ERR_INVALID_GRAPH, "%s: %s %" PRId32 " is %s, which no register '%c' holds", what, role, k,
                     ic_dtype_name(dt), letter);
  if (bits > width)
    return error_set(IC_ERR_INVALID_GRAPH, "%s: %s %" PRId32 " is %s (%" PRId32 " bits), which does not fit '%c' (%" PRId32
                     "-bit registers)", what, role, k, ic_dtype_name(dt), bits, letter, width);
  op->per_reg = width / bits < pack ? width / bits : pack;
  op->regs = pack / op->per_reg;
  return IC_OK;
}

/* Every $ of text is $$ or $N with N < nregs. */
static ic_status asm_check_refs(const char *what, const char *text, int32_t nregs) {
  for (const char *p = text; *p; p++) {
    if (*p != '$') continue;
    if (p[1] == '$') {
      p++;
      continue;
    }
    if (p[1] < '0' || p[1] > '9')
      return error_set(IC_ERR_INVALID_GRAPH, "%s: '$' at byte %td of the asm is not followed by an operand number or '$'",
                       what, p - text);
    int64_t n = 0;
    const char *q = p + 1;
    while (*q >= '0' && *q <= '9' && n <= ASM_MAX_REGS) n = n * 10 + (*q++ - '0');
    if (n >= nregs)
      return error_set(IC_ERR_INVALID_GRAPH, "%s: the asm names $%" PRId64 ", but its operands have %" PRId32
                       " registers ($0 to $%" PRId32 ")", what, n, nregs, nregs - 1);
    p = q - 1;
  }
  return IC_OK;
}

ic_status asm_plan(const char *what, const char *text, const char *constraints, int32_t pack, int32_t noutputs,
                   const ic_dtype *outputs, int32_t ninputs, const ic_dtype *inputs, asm_layout *out) {
  memset(out, 0, sizeof *out);
  if (pack < 1 || pack > ASM_MAX_PACK || (pack & (pack - 1)) != 0)
    return error_set(IC_ERR_INVALID_GRAPH, "%s: pack %" PRId32 " is not 1, 2, 4, 8 or 16", what, pack);
  out->noutputs = noutputs;
  out->ninputs = ninputs;
  size_t at = 0;
  int32_t entry = 0;
  for (int32_t k = 0; k < noutputs + ninputs; k++) {
    bool input = k >= noutputs;
    const char *role = input ? "input" : "output";
    int32_t index = input ? k - noutputs : k;
    ic_dtype dt = input ? inputs[index] : outputs[index];
    asm_operand *op = &out->ops[k];
    char letter = 0;
    bool is_output = false;
    ic_status st = IC_OK;
    for (int32_t r = 0; r == 0 || r < op->regs; r++, entry++) {
      char l;
      if (!asm_next_entry(what, constraints, &at, entry, &l, &is_output, &st)) {
        if (st) return st;
        return error_set(IC_ERR_INVALID_GRAPH, "%s: the constraints list %" PRId32 " registers; %s %" PRId32
                         " needs more (%s registers)", what, entry, role, index, r == 0 ? "its" : "all its");
      }
      if (is_output == input)
        return error_set(IC_ERR_INVALID_GRAPH, "%s: constraint %" PRId32 " (a register of %s %" PRId32 ") %s '='", what,
                         entry, role, index, input ? "must not have" : "needs");
      if (r == 0) {
        letter = l;
        if ((st = asm_fit(what, role, index, letter, dt, pack, input, op))) return st;
      } else if (l != letter) {
        return error_set(IC_ERR_INVALID_GRAPH, "%s: the registers of %s %" PRId32 " mix '%c' and '%c'", what, role, index,
                         letter, l);
      }
    }
    out->nregs += op->regs;
  }
  char l;
  bool o;
  ic_status st = IC_OK;
  if (asm_next_entry(what, constraints, &at, entry, &l, &o, &st))
    return error_set(IC_ERR_INVALID_GRAPH, "%s: the constraints list more than the %" PRId32 " registers of the operands",
                     what, out->nregs);
  if (st) return st;
  return asm_check_refs(what, text, out->nregs);
}

void asm_c_template(const char *text, sbuf *out) {
  for (const char *p = text; *p; p++) {
    if (*p == '%') {
      sbuf_puts(out, "%%");
    } else if (*p == '$' && p[1] == '$') {
      sbuf_puts(out, "$");
      p++;
    } else if (*p == '$') {
      sbuf_puts(out, "%");
    } else {
      char c[2] = {*p, 0};
      sbuf_puts(out, c);
    }
  }
}

void asm_quote(const char *s, sbuf *out) {
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    switch (*p) {
    case '\\': sbuf_puts(out, "\\\\"); break;
    case '"': sbuf_puts(out, "\\\""); break;
    case '\n': sbuf_puts(out, "\\n"); break;
    case '\t': sbuf_puts(out, "\\t"); break;
    case '\r': sbuf_puts(out, "\\r"); break;
    default:
      if (*p < 0x20 || *p >= 0x7f) sbuf_printf(out, "\\%03o", (unsigned)*p);
      else sbuf_printf(out, "%c", *p);
      break;
    }
  }
}
