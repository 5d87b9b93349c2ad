/* CUDA C for inline PTX (KIR_ASM): one C asm statement a group of pack elements, its
 * registers built from the inputs' elements and taken apart into the outputs' (ic.h,
 * "inline PTX"; the register layout is the one the builder checked, kept in the spec). */
#include <inttypes.h>
#include <stdio.h>

#include "backend/cuda/codegen.h"

/* The C type of a register of letter c. */
static const char *asm_reg_type(char c) {
  switch (c) {
  case 'h': return "ic_u16";
  case 'r': return "ic_u32";
  case 'l': return "ic_u64";
  case 'f': return "float";
  default: return "double";
  }
}

/* Element `e` (a C expression of the element index within the body's P) of instruction
 * j, as the body names it: a scalar for P == 1, for constants and for a reduction
 * kernel's row values, else v<j>[e]. */
static void asm_elem(codegen *cg, int32_t j, const char *e, char *buf, size_t size) {
  if (cg->pack == 1 || cg->k->instrs.items[j].kind == KIR_CONST || (cg->element && !cg->element[j]))
    snprintf(buf, size, "v%" PRId32, j);
  else snprintf(buf, size, "v%" PRId32 "[%s]", j, e);
}

/* Whether an output operand's elements are narrow floats in an integer register: their
 * storage bits (canonical NaN) are kept in a<i>_b<k> for a store (cg_asm_result_bits). */
static bool asm_keeps_bits(const asm_operand *ao) {
  return ao->letter != 'f' && ao->letter != 'd' && dtype_is_narrow_float(ao->dtype);
}

/* The low `bits` bits (1 to 64). */
static uint64_t asm_lane_mask(int32_t bits) { return bits >= 64 ? ~0ull : (1ull << bits) - 1; }

void cg_asm_block(codegen *cg, int32_t i) {
  const kir_kernel *k = cg->k;
  const kir_instr *in = &k->instrs.items[i];
  const asm_spec *spec = in->spec;
  sbuf *o = &cg->out;
  const asm_layout lay = spec->layout; /* the builder's */
  int32_t P = cg->pack, p = spec->pack;
  /* the outputs' element values, P of them (scalars at P == 1) */
  for (int32_t out = 0; out < spec->noutputs; out++) {
    if (P == 1) sbuf_printf(o, "  %s a%" PRId32 "_o%" PRId32 ";\n", cg_ctype(spec->outputs[out]), i, out);
    else sbuf_printf(o, "  %s a%" PRId32 "_o%" PRId32 "[%" PRId32 "];\n", cg_ctype(spec->outputs[out]), i, out, P);
    /* narrow floats in integer registers keep their storage bits too (a store takes them) */
    if (!asm_keeps_bits(&lay.ops[out])) continue;
    if (P == 1) sbuf_printf(o, "  ic_u32 a%" PRId32 "_b%" PRId32 ";\n", i, out);
    else sbuf_printf(o, "  ic_u32 a%" PRId32 "_b%" PRId32 "[%" PRId32 "];\n", i, out, P);
  }
  if (P > 1) sbuf_printf(o, "#pragma unroll\n  for (int q0 = 0; q0 < %" PRId32 "; q0 += %" PRId32 ") {\n", P, p);
  else sbuf_puts(o, "  {\n    const int q0 = 0;\n    (void)q0;\n");
  /* registers x<n>, numbered as the asm numbers them */
  int32_t reg = 0;
  for (int32_t op = 0; op < lay.noutputs + lay.ninputs; op++) {
    const asm_operand *ao = &lay.ops[op];
    bool input = op >= lay.noutputs;
    for (int32_t r = 0; r < ao->regs; r++, reg++) {
      const char *t = asm_reg_type(ao->letter);
      if (!input) {
        sbuf_printf(o, "    %s x%" PRId32 ";\n", t, reg);
        continue;
      }
      int32_t src = in->args[op - lay.noutputs];
      sbuf_printf(o, "    const %s x%" PRId32 " = ", t, reg);
      if (ao->letter == 'f' || ao->letter == 'd') {
        char e[32], name[48];
        snprintf(e, sizeof e, "q0 + %" PRId32, r);
        asm_elem(cg, src, e, name, sizeof name);
        sbuf_printf(o, "(%s)%s;\n", t, name); /* f16 and bf16 compute as f32 already: exact */
        continue;
      }
      uint64_t mask = asm_lane_mask(ao->bits);
      sbuf_printf(o, "(%s)(", t);
      for (int32_t e = 0; e < ao->per_reg; e++) {
        char idx[32], name[48];
        snprintf(idx, sizeof idx, "q0 + %" PRId32, r * ao->per_reg + e);
        asm_elem(cg, src, idx, name, sizeof name);
        sbuf_printf(o, "%s(((ic_u64)ic_pack_%s(%s) & 0x%" PRIx64 "ull) << %" PRId32 ")", e ? " | " : "",
                    cg_dtname(ao->dtype), name, mask, e * ao->bits);
      }
      sbuf_puts(o, ");\n");
    }
  }
  /* the statement: outputs first, then inputs, in register order */
  sbuf_printf(o, "    asm%s(\"", spec->pure ? "" : " volatile");
  sbuf tmpl = {0};
  asm_c_template(spec->text, &tmpl);
  if (tmpl.data) asm_quote(tmpl.data, o);
  cg->oom |= tmpl.oom;
  sbuf_free(&tmpl);
  sbuf_puts(o, "\"\n        :");
  reg = 0;
  for (int32_t op = 0; op < lay.noutputs + lay.ninputs; op++) {
    const asm_operand *ao = &lay.ops[op];
    if (op == lay.noutputs) sbuf_puts(o, "\n        :");
    for (int32_t r = 0; r < ao->regs; r++, reg++)
      sbuf_printf(o, "%s \"%s%c\"(x%" PRId32 ")", r == 0 && (op == 0 || op == lay.noutputs) ? "" : ",",
                  op < lay.noutputs ? "=" : "", ao->letter, reg);
  }
  sbuf_puts(o, ");\n");
  /* the outputs' elements */
  reg = 0;
  for (int32_t out = 0; out < lay.noutputs; out++) {
    const asm_operand *ao = &lay.ops[out];
    /* a register of several narrow floats: its NaN lanes made canonical a 32-bit word at
     * a time (ic_canon_<dt>x<lanes>), then taken apart */
    bool whole = asm_keeps_bits(ao) && ao->per_reg > 1;
    for (int32_t r = 0; r < ao->regs; r++, reg++) {
      if (whole) {
        const char *dt = cg_dtname(ao->dtype);
        int32_t lanes = 32 / ao->bits;
        if (ao->letter == 'l')
          sbuf_printf(o, "    const ic_u64 x%" PRId32 "_c = (ic_u64)ic_canon_%sx%" PRId32 "((ic_u32)(x%" PRId32 " >> 32)) << 32 | ic_canon_%sx%" PRId32 "((ic_u32)x%" PRId32 ");\n",
                      reg, dt, lanes, reg, dt, lanes, reg);
        else
          sbuf_printf(o, "    const ic_u32 x%" PRId32 "_c = ic_canon_%sx%" PRId32 "((ic_u32)x%" PRId32 ");\n", reg, dt, lanes, reg);
      }
      for (int32_t e = 0; e < ao->per_reg; e++) {
        int32_t idx = r * ao->per_reg + e;
        char elem[48];
        if (P == 1) snprintf(elem, sizeof elem, "%s", "");
        else snprintf(elem, sizeof elem, "[q0 + %" PRId32 "]", idx);
        if (ao->letter == 'f' || ao->letter == 'd') {
          sbuf_printf(o, "    a%" PRId32 "_o%" PRId32 "%s = x%" PRId32 ";\n", i, out, elem, reg);
        } else if (whole) {
          sbuf_printf(o, "    a%" PRId32 "_b%" PRId32 "%s = (ic_u32)(((ic_u64)x%" PRId32 "_c >> %" PRId32 ") & 0x%" PRIx64 "ull);\n",
                      i, out, elem, reg, e * ao->bits, asm_lane_mask(ao->bits));
          sbuf_printf(o, "    a%" PRId32 "_o%" PRId32 "%s = ic_unpack_%s(a%" PRId32 "_b%" PRId32 "%s);\n", i, out, elem,
                      cg_dtname(ao->dtype), i, out, elem);
        } else if (asm_keeps_bits(ao)) {
          uint64_t mask = asm_lane_mask(ao->bits);
          sbuf_printf(o, "    a%" PRId32 "_b%" PRId32 "%s = ic_canon_%s((ic_u32)(((ic_u64)x%" PRId32 " >> %" PRId32 ") & 0x%" PRIx64 "ull));\n",
                      i, out, elem, cg_dtname(ao->dtype), reg, e * ao->bits, mask);
          sbuf_printf(o, "    a%" PRId32 "_o%" PRId32 "%s = ic_unpack_%s(a%" PRId32 "_b%" PRId32 "%s);\n", i, out, elem,
                      cg_dtname(ao->dtype), i, out, elem);
        } else {
          uint64_t mask = asm_lane_mask(ao->bits);
          sbuf_printf(o, "    a%" PRId32 "_o%" PRId32 "%s = ic_unpack_%s((%s)(((ic_u64)x%" PRId32 " >> %" PRId32 ") & 0x%" PRIx64 "ull));\n",
                      i, out, elem, cg_dtname(ao->dtype), ao->bits == 64 ? "ic_u64" : "ic_u32", reg, e * ao->bits, mask);
        }
      }
    }
  }
  sbuf_puts(o, "  }\n");
}
