/* Equivalent spellings of real models' computations compile to the same kernels.
 *
 * Each computation below is written 3 or more ways a user might write it: a cast before
 * or after a broadcast, keepdim or a reshape of the result, an unsqueeze or a view, a
 * reduction over several trailing dims or over their flattened product, a 2-D or 3-D
 * view of the output. The spellings are equivalent under ic's semantics (the same values
 * rounded the same way, reductions in the same summation order), so they must compile
 * (sm_90a, strict) to as many kernels as the best spelling, with the same generated
 * source kernel for kernel, and give the same bits on the ref backend, fused and eager,
 * for random inputs at an odd size. */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "ic/ic.h"

#define OK(x) ck_assert_msg((x) == IC_OK, "%s: %s", #x, ic_last_error())

enum { MAX_SPELLINGS = 6, MAX_IO = 8 };

typedef struct formulation {
  const char *name;
  const char *spellings[MAX_SPELLINGS]; /* graph texts; the first is the best spelling */
} formulation;

/* The common part of a block of spellings is spelled out in each on purpose: a reader
 * sees every spelling whole. Inputs and outputs are the same (names, dtypes, shapes) in
 * every spelling of a computation. */
static const formulation formulations[] = {
    {"rms_norm_f32_weight",
     {/* the weight expanded over the rows, then cast */
      "symbol n\ninput x : bf16[n, 72]\ninput w : bf16[72]\neps = const 1e-6\nxf = cast(x, f32)\n"
      "sq = mul(xf, xf)\nms = mean(sq, [1], keepdim)\n%1 = add(ms, eps)\nr = rsqrt(%1)\nxn = mul(xf, r)\n"
      "we = expand(w, [n, 72])\nwf = cast(we, f32)\n%2 = mul(xn, wf)\ny = cast(%2, bf16)\noutput y\n",
      /* cast first, broadcast by the mul */
      "symbol n\ninput x : bf16[n, 72]\ninput w : bf16[72]\neps = const 1e-6\nxf = cast(x, f32)\n"
      "sq = mul(xf, xf)\nms = mean(sq, [1], keepdim)\n%1 = add(ms, eps)\nr = rsqrt(%1)\nxn = mul(xf, r)\n"
      "wf = cast(w, f32)\n%2 = mul(xn, wf)\ny = cast(%2, bf16)\noutput y\n",
      /* unsqueezed weight, cast, then the row statistic without keepdim */
      "symbol n\ninput x : bf16[n, 72]\ninput w : bf16[72]\neps = const 1e-6\nxf = cast(x, f32)\n"
      "sq = mul(xf, xf)\nms0 = mean(sq, [1])\nms = reshape(ms0, [n, 1])\n%1 = add(ms, eps)\nr = rsqrt(%1)\n"
      "xn = mul(xf, r)\nw1 = reshape(w, [1, 72])\nwf = cast(w1, f32)\n%2 = mul(xn, wf)\n"
      "y = cast(%2, bf16)\noutput y\n",
      /* the rows viewed as [n, 8, 9], normalized over both dims, viewed back */
      "symbol n\ninput x : bf16[n, 72]\ninput w : bf16[72]\neps = const 1e-6\nx3 = reshape(x, [n, 8, 9])\n"
      "xf = cast(x3, f32)\nsq = mul(xf, xf)\nms = mean(sq, [1, 2], keepdim)\n%1 = add(ms, eps)\n"
      "r = rsqrt(%1)\nxn3 = mul(xf, r)\nxn = reshape(xn3, [n, 72])\nwf = cast(w, f32)\n%2 = mul(xn, wf)\n"
      "y = cast(%2, bf16)\noutput y\n"}},
    {"layer_norm",
     {"symbol n\ninput x : f32[n, 40]\ninput w : f32[40]\ninput b : f32[40]\neps = const 1e-5\n"
      "m = mean(x, [1], keepdim)\nd = sub(x, m)\n%1 = mul(d, d)\nv = mean(%1, [1], keepdim)\n"
      "%2 = add(v, eps)\nr = rsqrt(%2)\n%3 = mul(d, r)\n%4 = mul(%3, w)\ny = add(%4, b)\noutput y\n",
      "symbol n\ninput x : f32[n, 40]\ninput w : f32[40]\ninput b : f32[40]\neps = const 1e-5\n"
      "m0 = mean(x, [1])\nm = reshape(m0, [n, 1])\nd = sub(x, m)\n%1 = mul(d, d)\nv0 = mean(%1, [1])\n"
      "v = reshape(v0, [n, 1])\n%2 = add(v, eps)\nr = rsqrt(%2)\n%3 = mul(d, r)\n%4 = mul(%3, w)\n"
      "y = add(%4, b)\noutput y\n",
      "symbol n\ninput x : f32[n, 40]\ninput w : f32[40]\ninput b : f32[40]\neps = const 1e-5\n"
      "m = mean(x, [1], keepdim)\nd = sub(x, m)\n%1 = mul(d, d)\nv = mean(%1, [1], keepdim)\n"
      "%2 = add(v, eps)\nr = rsqrt(%2)\n%3 = reshape(w, [1, 40])\nw2 = expand(%3, [n, 40])\n"
      "b2 = expand(b, [n, 40])\n%4 = mul(d, r)\n%5 = mul(%4, w2)\ny = add(%5, b2)\noutput y\n"}},
    {"softmax",
     {"symbol n\ninput x : f32[n, 40]\nm = max(x, [1], keepdim)\n%1 = sub(x, m)\ne = exp(%1)\n"
      "s = sum(e, [1], keepdim)\ny = div(e, s)\noutput y\n",
      "symbol n\ninput x : f32[n, 40]\nm0 = max(x, [1])\nm = reshape(m0, [n, 1])\n%1 = sub(x, m)\n"
      "e = exp(%1)\ns0 = sum(e, [1])\ns = reshape(s0, [n, 1])\ny = div(e, s)\noutput y\n",
      "symbol n\ninput x : f32[n, 40]\nx3 = reshape(x, [n, 1, 40])\nm = max(x3, [2], keepdim)\n"
      "%1 = sub(x3, m)\ne = exp(%1)\ns = sum(e, [2], keepdim)\ny3 = div(e, s)\ny = reshape(y3, [n, 40])\n"
      "output y\n",
      "symbol n\ninput x : f32[n, 40]\nx3 = reshape(x, [n, 5, 8])\nm = max(x3, [1, 2], keepdim)\n"
      "%1 = sub(x3, m)\ne = exp(%1)\ns = sum(e, [1, 2], keepdim)\ny3 = div(e, s)\n"
      "y = reshape(y3, [n, 40])\noutput y\n"}},
    {"log_softmax",
     {"symbol n\ninput x : f32[n, 40]\nm = max(x, [1], keepdim)\nd = sub(x, m)\n%1 = exp(d)\n"
      "s = sum(%1, [1], keepdim)\n%2 = log(s)\ny = sub(d, %2)\noutput y\n",
      "symbol n\ninput x : f32[n, 40]\nm0 = max(x, [1])\nm = reshape(m0, [n, 1])\nd = sub(x, m)\n"
      "%1 = exp(d)\ns0 = sum(%1, [1])\n%2 = log(s0)\nls = reshape(%2, [n, 1])\ny = sub(d, ls)\noutput y\n",
      "symbol n\ninput x : f32[n, 40]\nx3 = reshape(x, [n, 1, 40])\nm = max(x3, [2], keepdim)\n"
      "d = sub(x3, m)\n%1 = exp(d)\ns = sum(%1, [2], keepdim)\n%2 = log(s)\ny3 = sub(d, %2)\n"
      "y = reshape(y3, [n, 40])\noutput y\n"}},
    {"group_norm",
     {/* statistics over the flattened group */
      "symbol n\ninput x : f32[n, 16, 24]\ninput w : f32[16]\ninput b : f32[16]\neps = const 1e-5\n"
      "xg = reshape(x, [n, 4, 96])\nm = mean(xg, [2], keepdim)\nd = sub(xg, m)\n%1 = mul(d, d)\n"
      "v = mean(%1, [2], keepdim)\n%2 = add(v, eps)\n%3 = rsqrt(%2)\n%4 = mul(d, %3)\n"
      "xn = reshape(%4, [n, 16, 24])\n%5 = reshape(w, [16, 1])\n%6 = mul(xn, %5)\n"
      "%7 = reshape(b, [16, 1])\ny = add(%6, %7)\noutput y\n",
      /* statistics over the group's two trailing dims */
      "symbol n\ninput x : f32[n, 16, 24]\ninput w : f32[16]\ninput b : f32[16]\neps = const 1e-5\n"
      "xg = reshape(x, [n, 4, 4, 24])\nm = mean(xg, [2, 3], keepdim)\nd = sub(xg, m)\n%1 = mul(d, d)\n"
      "v = mean(%1, [2, 3], keepdim)\n%2 = add(v, eps)\n%3 = rsqrt(%2)\n%4 = mul(d, %3)\n"
      "xn = reshape(%4, [n, 16, 24])\n%5 = reshape(w, [16, 1])\n%6 = mul(xn, %5)\n"
      "%7 = reshape(b, [16, 1])\ny = add(%6, %7)\noutput y\n",
      /* the same without keepdim, unsqueezed back */
      "symbol n\ninput x : f32[n, 16, 24]\ninput w : f32[16]\ninput b : f32[16]\neps = const 1e-5\n"
      "xg = reshape(x, [n, 4, 4, 24])\n%1 = mean(xg, [2, 3])\nm = reshape(%1, [n, 4, 1, 1])\n"
      "d = sub(xg, m)\n%2 = mul(d, d)\n%3 = mean(%2, [2, 3])\nv = reshape(%3, [n, 4, 1, 1])\n"
      "%4 = add(v, eps)\n%5 = rsqrt(%4)\n%6 = mul(d, %5)\nxn = reshape(%6, [n, 16, 24])\n"
      "%7 = reshape(w, [16, 1])\n%8 = mul(xn, %7)\n%9 = reshape(b, [16, 1])\ny = add(%8, %9)\noutput y\n",
      /* a leading 1 (groups of one image), statistics without keepdim, viewed back as 1s */
      "symbol n\ninput x : f32[n, 16, 24]\ninput w : f32[16]\ninput b : f32[16]\neps = const 1e-5\n"
      "xg = reshape(x, [n, 1, 4, 4, 24])\nm0 = mean(xg, [3, 4])\nm = reshape(m0, [n, 1, 4, 1, 1])\nd = sub(xg, m)\n"
      "%1 = mul(d, d)\nv0 = mean(%1, [3, 4])\nv = reshape(v0, [n, 1, 4, 1, 1])\n%2 = add(v, eps)\n%3 = rsqrt(%2)\n"
      "%4 = mul(d, %3)\nxn = reshape(%4, [n, 16, 24])\n%5 = reshape(w, [16, 1])\n%6 = mul(xn, %5)\n"
      "%7 = reshape(b, [16, 1])\ny = add(%6, %7)\noutput y\n"}},
    {"block_fp8_quant",
     {/* 3-D outputs viewed back as 2-D */
      "symbol n\ninput x : bf16[n, 64]\ntiny = const 1e-12\nfmax = const 448\n%1 = reshape(x, [n, 4, 16])\n"
      "xf = cast(%1, f32)\n%2 = abs(xf)\namax = max(%2, [2], keepdim)\n%3 = maximum(amax, tiny)\n"
      "sc = div(%3, fmax)\n%4 = div(xf, sc)\nq = cast_saturate(%4, f8e4m3)\nvalues = reshape(q, [n, 64])\n"
      "scales = reshape(sc, [n, 4])\noutput values\noutput scales\n",
      /* amax without keepdim, unsqueezed to broadcast */
      "symbol n\ninput x : bf16[n, 64]\ntiny = const 1e-12\nfmax = const 448\n%1 = reshape(x, [n, 4, 16])\n"
      "xf = cast(%1, f32)\n%2 = abs(xf)\namax = max(%2, [2])\n%3 = maximum(amax, tiny)\n"
      "scales = div(%3, fmax)\nsc = reshape(scales, [n, 4, 1])\n%4 = div(xf, sc)\n"
      "q = cast_saturate(%4, f8e4m3)\nvalues = reshape(q, [n, 64])\noutput values\noutput scales\n",
      /* cast before the view, 4-D blocks */
      "symbol n\ninput x : bf16[n, 64]\ntiny = const 1e-12\nfmax = const 448\n%1 = cast(x, f32)\n"
      "xf = reshape(%1, [n, 4, 1, 16])\n%2 = abs(xf)\namax = max(%2, [3], keepdim)\n"
      "%3 = maximum(amax, tiny)\nsc = div(%3, fmax)\n%4 = div(xf, sc)\nq = cast_saturate(%4, f8e4m3)\n"
      "values = reshape(q, [n, 64])\nscales = reshape(sc, [n, 4])\noutput values\noutput scales\n"}},
    {"row_fp8_quant",
     {"symbol n\ninput x : bf16[n, 64]\ntiny = const 1e-12\nfmax = const 448\nxf = cast(x, f32)\n"
      "%1 = abs(xf)\namax = max(%1, [1], keepdim)\n%2 = maximum(amax, tiny)\nscales = div(%2, fmax)\n"
      "%3 = div(xf, scales)\nvalues = cast_saturate(%3, f8e4m3)\noutput values\noutput scales\n",
      "symbol n\ninput x : bf16[n, 64]\ntiny = const 1e-12\nfmax = const 448\nxf = cast(x, f32)\n"
      "%1 = abs(xf)\namax = max(%1, [1])\n%2 = maximum(amax, tiny)\ns1 = div(%2, fmax)\n"
      "scales = reshape(s1, [n, 1])\n%3 = div(xf, scales)\nvalues = cast_saturate(%3, f8e4m3)\n"
      "output values\noutput scales\n",
      "symbol n\ninput x : bf16[n, 64]\ntiny = const 1e-12\nfmax = const 448\n%1 = reshape(x, [n, 1, 64])\n"
      "xf = cast(%1, f32)\n%2 = abs(xf)\namax = max(%2, [2], keepdim)\n%3 = maximum(amax, tiny)\n"
      "s3 = div(%3, fmax)\n%4 = div(xf, s3)\nv3 = cast_saturate(%4, f8e4m3)\n"
      "values = reshape(v3, [n, 64])\nscales = reshape(s3, [n, 1])\noutput values\noutput scales\n"}},
    {"nll_loss",
     {/* per-row negative log-likelihood of one-hot targets */
      "symbol n\ninput x : f32[n, 40]\ninput onehot : f32[n, 40]\nm = max(x, [1], keepdim)\nd = sub(x, m)\n"
      "%1 = exp(d)\n%2 = sum(%1, [1], keepdim)\nls = log(%2)\nlogp = sub(d, ls)\n%3 = mul(onehot, logp)\n"
      "%4 = sum(%3, [1], keepdim)\nloss = neg(%4)\noutput loss\n",
      "symbol n\ninput x : f32[n, 40]\ninput onehot : f32[n, 40]\n%1 = max(x, [1])\n"
      "m = reshape(%1, [n, 1])\nd = sub(x, m)\n%2 = exp(d)\n%3 = sum(%2, [1])\n%4 = log(%3)\n"
      "ls = reshape(%4, [n, 1])\nlogp = sub(d, ls)\n%5 = mul(onehot, logp)\n%6 = sum(%5, [1])\n"
      "l0 = neg(%6)\nloss = reshape(l0, [n, 1])\noutput loss\n",
      "symbol n\ninput x : f32[n, 40]\ninput onehot : f32[n, 40]\nx3 = reshape(x, [n, 1, 40])\n"
      "m = max(x3, [2], keepdim)\nd = sub(x3, m)\n%1 = exp(d)\n%2 = sum(%1, [2], keepdim)\nls = log(%2)\n"
      "%3 = sub(d, ls)\nlogp = reshape(%3, [n, 40])\n%4 = mul(onehot, logp)\n%5 = sum(%4, [1], keepdim)\n"
      "loss = neg(%5)\noutput loss\n"}},
    {"mse_loss",
     {"symbol n\ninput p : f32[n, 40]\ninput t : f32[n, 40]\nd = sub(p, t)\n%1 = mul(d, d)\n"
      "loss = mean(%1, [0, 1])\noutput loss\n",
      "symbol n\ninput p : f32[n, 40]\ninput t : f32[n, 40]\n%1 = sub(p, t)\nd = reshape(%1, [40 * n])\n"
      "%2 = mul(d, d)\nloss = mean(%2, [0])\noutput loss\n",
      "symbol n\ninput p : f32[n, 40]\ninput t : f32[n, 40]\nd = sub(p, t)\n%1 = mul(d, d)\n"
      "l2 = mean(%1, [0, 1], keepdim)\nloss = reshape(l2, [])\noutput loss\n"}},
    {"sgd_momentum",
     {/* scalars as 0-d inputs, broadcast by the ops */
      "symbol n\ninput p : f32[n, 40]\ninput g : f32[n, 40]\ninput buf : f32[n, 40]\ninput lr : f32[]\n"
      "mom = const 0.9\n%1 = mul(buf, mom)\nnb = add(%1, g)\n%2 = mul(lr, nb)\npn = sub(p, %2)\noutput pn\n"
      "output nb\n",
      "symbol n\ninput p : f32[n, 40]\ninput g : f32[n, 40]\ninput buf : f32[n, 40]\ninput lr : f32[]\n"
      "mom = const 0.9\n%1 = mul(buf, mom)\nnb = add(%1, g)\nlre = expand(lr, [n, 40])\n%2 = mul(lre, nb)\n"
      "pn = sub(p, %2)\noutput pn\noutput nb\n",
      "symbol n\ninput p : f32[n, 40]\ninput g : f32[n, 40]\ninput buf : f32[n, 40]\ninput lr : f32[]\n"
      "mom = const 0.9\n%1 = mul(buf, mom)\nnb = add(%1, g)\nlr2 = reshape(lr, [1, 1])\n%2 = mul(lr2, nb)\n"
      "pn = sub(p, %2)\noutput pn\noutput nb\n"}},
    {"adam_step",
     {/* bias corrections as 0-d inputs (they change every step) */
      "symbol n\ninput p : f32[n, 40]\ninput g : f32[n, 40]\ninput m : f32[n, 40]\ninput v : f32[n, 40]\n"
      "input lr_c : f32[]\ninput v_c : f32[]\nb1 = const 0.9\nc1 = const 0.1\nb2 = const 0.999\n"
      "c2 = const 0.001\neps = const 1e-8\n%1 = mul(m, b1)\n%2 = mul(g, c1)\nmn = add(%1, %2)\n"
      "%3 = mul(v, b2)\n%4 = mul(g, g)\n%5 = mul(%4, c2)\nvn = add(%3, %5)\n%6 = div(vn, v_c)\n"
      "%7 = sqrt(%6)\nden = add(%7, eps)\n%8 = div(mn, den)\n%9 = mul(lr_c, %8)\npn = sub(p, %9)\n"
      "output pn\noutput mn\noutput vn\n",
      "symbol n\ninput p : f32[n, 40]\ninput g : f32[n, 40]\ninput m : f32[n, 40]\ninput v : f32[n, 40]\n"
      "input lr_c : f32[]\ninput v_c : f32[]\nb1 = const 0.9\nc1 = const 0.1\nb2 = const 0.999\n"
      "c2 = const 0.001\neps = const 1e-8\n%1 = mul(m, b1)\n%2 = mul(g, c1)\nmn = add(%1, %2)\n"
      "%3 = mul(v, b2)\n%4 = mul(g, g)\n%5 = mul(%4, c2)\nvn = add(%3, %5)\nvce = expand(v_c, [n, 40])\n"
      "lre = expand(lr_c, [n, 40])\n%6 = div(vn, vce)\n%7 = sqrt(%6)\nden = add(%7, eps)\n"
      "%8 = div(mn, den)\n%9 = mul(lre, %8)\npn = sub(p, %9)\noutput pn\noutput mn\noutput vn\n",
      "symbol n\ninput p : f32[n, 40]\ninput g : f32[n, 40]\ninput m : f32[n, 40]\ninput v : f32[n, 40]\n"
      "input lr_c : f32[]\ninput v_c : f32[]\nb1 = const 0.9\nc1 = const 0.1\nb2 = const 0.999\n"
      "c2 = const 0.001\neps = const 1e-8\n%1 = mul(m, b1)\n%2 = mul(g, c1)\nmn = add(%1, %2)\n"
      "%3 = mul(v, b2)\n%4 = mul(g, g)\n%5 = mul(%4, c2)\nvn = add(%3, %5)\nvc2 = reshape(v_c, [1, 1])\n"
      "lr2 = reshape(lr_c, [1])\n%6 = div(vn, vc2)\n%7 = sqrt(%6)\nden = add(%7, eps)\n%8 = div(mn, den)\n"
      "%9 = mul(lr2, %8)\npn = sub(p, %9)\noutput pn\noutput mn\noutput vn\n"}},
    {"std_unbiased",
     {"symbol n\ninput x : f32[n, 40]\nv = mean(x, [1], keepdim, correction=1)\ns = sqrt(v)\noutput s\n",
      "symbol n\ninput x : f32[n, 40]\nv = mean(x, [1], correction=1)\n%1 = sqrt(v)\n"
      "s = reshape(%1, [n, 1])\noutput s\n",
      "symbol n\ninput x : f32[n, 40]\nx3 = reshape(x, [n, 4, 10])\n"
      "v = mean(x3, [1, 2], keepdim, correction=1)\n%1 = sqrt(v)\ns = reshape(%1, [n, 1])\noutput s\n"}},
    {"gelu_bias_bf16",
     {/* a bf16 bias cast to f32 after it broadcasts */
      "symbol n\ninput x : f32[n, 40]\ninput b : bf16[40]\n%1 = expand(b, [n, 40])\nbf = cast(%1, f32)\n"
      "%2 = add(x, bf)\ny = gelu_tanh(%2)\noutput y\n",
      "symbol n\ninput x : f32[n, 40]\ninput b : bf16[40]\nbf = cast(b, f32)\n%1 = add(x, bf)\n"
      "y = gelu_tanh(%1)\noutput y\n",
      "symbol n\ninput x : f32[n, 40]\ninput b : bf16[40]\n%1 = reshape(b, [1, 40])\nbf = cast(%1, f32)\n"
      "%2 = add(x, bf)\ny = gelu_tanh(%2)\noutput y\n"}},
    {"scaled_residual_rms",
     {/* a residual add, then RMS norm with a scaled weight (1 + w), the weight side on [40] */
      "symbol n\ninput x : f32[n, 40]\ninput h : f32[n, 40]\ninput w : f32[40]\neps = const 1e-6\n"
      "one = const 1\nr = add(x, h)\n%1 = mul(r, r)\nms = mean(%1, [1], keepdim)\n%2 = add(ms, eps)\n"
      "%3 = rsqrt(%2)\n%4 = mul(r, %3)\n%5 = add(w, one)\ny = mul(%4, %5)\noutput y\noutput r\n",
      "symbol n\ninput x : f32[n, 40]\ninput h : f32[n, 40]\ninput w : f32[40]\neps = const 1e-6\n"
      "one = const 1\nr = add(x, h)\n%1 = mul(r, r)\nms = mean(%1, [1], keepdim)\n%2 = expand(w, [n, 40])\n"
      "w1 = add(%2, one)\n%3 = add(ms, eps)\n%4 = rsqrt(%3)\n%5 = mul(r, %4)\ny = mul(%5, w1)\noutput y\n"
      "output r\n",
      "symbol n\ninput x : f32[n, 40]\ninput h : f32[n, 40]\ninput w : f32[40]\neps = const 1e-6\n"
      "one = const 1\nr = add(x, h)\n%1 = mul(r, r)\n%2 = mean(%1, [1])\nms = reshape(%2, [n, 1])\n"
      "%3 = reshape(w, [1, 40])\nw1 = add(%3, one)\n%4 = add(ms, eps)\n%5 = rsqrt(%4)\n%6 = mul(r, %5)\n"
      "y = mul(%6, w1)\noutput y\noutput r\n"}},
    {"softmax_read_transposed",
     {/* a strided, transposed read of a fused result: its ops recomputed at the moved index */
      "symbol n\ninput x : f32[n, 40]\nm = max(x, [1], keepdim)\n%1 = sub(x, m)\ne = exp(%1)\n"
      "s = sum(e, [1], keepdim)\ny = div(e, s)\nyt = permute(y, [1, 0])\nz = slice(yt, 0, 3, 37, 2)\noutput z\n",
      "symbol n\ninput x : f32[n, 40]\nx3 = reshape(x, [n, 5, 8])\nm = max(x3, [1, 2], keepdim)\n%1 = sub(x3, m)\n"
      "e = exp(%1)\ns = sum(e, [1, 2], keepdim)\ny3 = div(e, s)\ny = reshape(y3, [n, 40])\nyt = permute(y, [1, 0])\n"
      "z = slice(yt, 0, 3, 37, 2)\noutput z\n",
      "symbol n\ninput x : f32[n, 40]\nx4 = reshape(x, [n, 5, 2, 4])\nm0 = max(x4, [1, 2, 3])\n"
      "m = reshape(m0, [n, 1, 1, 1])\n%1 = sub(x4, m)\ne = exp(%1)\ns0 = sum(e, [1, 2, 3])\n"
      "s = reshape(s0, [n, 1, 1, 1])\ny4 = div(e, s)\ny = reshape(y4, [n, 40])\nyt = permute(y, [1, 0])\n"
      "z = slice(yt, 0, 3, 37, 2)\noutput z\n"}},
};

enum { RUN_N = 5 }; /* the symbol n at run time: odd, not a multiple of a vector */

static ic_context *ctx;

static void setup(void) {
  ic_context_options o = {.struct_size = sizeof o, .arch = "sm_90a", .flags = IC_CONTEXT_COMPILE_ONLY};
  OK(ic_context_create(&o, &ctx));
}

static void teardown(void) {
  ic_context_destroy(ctx);
  ctx = NULL;
}

static ic_graph *parse(const formulation *f, int s) {
  ic_graph *g = NULL;
  ck_assert_msg(ic_graph_parse(f->spellings[s], &g) == IC_OK, "%s, spelling %d: %s", f->name, s, ic_last_error());
  return g;
}

static int spelling_count(const formulation *f) {
  int n = 0;
  while (n < MAX_SPELLINGS && f->spellings[n]) n++;
  return n;
}

static ic_program *compile(const ic_graph *g, const char *backend, ic_compile_mode mode) {
  ic_compile_options o = {.struct_size = sizeof o, .mode = mode, .backend = backend, .flags = IC_COMPILE_STRICT};
  ic_program *p = NULL;
  ck_assert_msg(ic_compile(ctx, g, &o, &p) == IC_OK, "compile (%s): %s", backend, ic_last_error());
  return p;
}

/* Every spelling: as many kernels as the best (the fewest), and where a spelling has as
 * many as the first, the first's sources. */
START_TEST(test_same_kernels) {
  int checked = 0;
  for (size_t i = 0; i < sizeof formulations / sizeof *formulations; i++) {
    const formulation *f = &formulations[i];
    int n = spelling_count(f);
    ck_assert_int_ge(n, 3);
    ic_program *p[MAX_SPELLINGS];
    int32_t best = INT32_MAX;
    for (int s = 0; s < n; s++) {
      ic_graph *g = parse(f, s);
      p[s] = compile(g, "cuda", IC_MODE_FUSED);
      ic_graph_destroy(g);
      if (ic_program_kernel_count(p[s]) < best) best = ic_program_kernel_count(p[s]);
    }
    for (int s = 0; s < n; s++) {
      ck_assert_msg(ic_program_kernel_count(p[s]) == best, "%s, spelling %d: %d kernels, the best spelling %d", f->name,
                    s, (int)ic_program_kernel_count(p[s]), (int)best);
      for (int32_t k = 0; s > 0 && k < best; k++) {
        const char *a = ic_program_kernel_source(p[0], k), *b = ic_program_kernel_source(p[s], k);
        ck_assert_ptr_nonnull(a);
        ck_assert_ptr_nonnull(b);
        ck_assert_msg(strcmp(a, b) == 0, "%s: kernel %d of spelling %d differs from spelling 0's:\n%s\n----\n%s",
                      f->name, (int)k, s, ic_program_kernel_ir(p[0], k), ic_program_kernel_ir(p[s], k));
        checked++;
      }
    }
    for (int s = 0; s < n; s++) ic_program_release(p[s]);
  }
  ck_assert_int_gt(checked, 0);
}
END_TEST

/* ---------------------------------------------------------------- ref runs */

typedef struct host_io {
  void *data[MAX_IO];
  ic_dtype dtype[MAX_IO];
  int32_t ndim[MAX_IO];
  int64_t shape[MAX_IO][IC_MAX_DIMS];
  size_t bytes[MAX_IO];
  int32_t count;
} host_io;

static uint64_t rng_state;

static double uniform(double lo, double hi) {
  rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
  return lo + (hi - lo) * (double)(rng_state >> 11) / 9007199254740992.0;
}

/* Random inputs of p's dtypes and shapes (n = RUN_N): uniform in [-3, 3], rounded to the
 * dtype; an input named "onehot" gets a 1 at a random place of each row, "v" (a second
 * moment) and the 0-d inputs positive values. */
static void make_inputs(const ic_program *p, host_io *in) {
  memset(in, 0, sizeof *in);
  in->count = ic_program_input_count(p);
  ck_assert_int_le(in->count, MAX_IO);
  int64_t symbols[1] = {RUN_N};
  ck_assert_int_le(ic_program_symbol_count(p), 1);
  for (int32_t i = 0; i < in->count; i++) {
    ic_buffer_info b;
    OK(ic_program_buffer(p, i, &b));
    ck_assert_int_eq(b.kind, IC_BUFFER_INPUT);
    in->dtype[i] = b.dtype;
    in->ndim[i] = b.ndim;
    int64_t numel = 1;
    for (int32_t d = 0; d < b.ndim; d++) {
      OK(ic_program_eval(p, b.dims_expr[d], symbols, &in->shape[i][d]));
      numel *= in->shape[i][d];
    }
    size_t es = ic_dtype_size(b.dtype);
    in->bytes[i] = (size_t)numel * es;
    in->data[i] = calloc((size_t)numel + 1, es);
    ck_assert_ptr_nonnull(in->data[i]);
    const char *name = b.name;
    int64_t row = b.ndim ? in->shape[i][b.ndim - 1] : 1;
    for (int64_t e = 0; e < numel; e++) {
      double v = uniform(-3, 3);
      if (strcmp(name, "onehot") == 0) v = 0;
      else if (strcmp(name, "v") == 0 || b.ndim == 0) v = uniform(0.01, 2);
      OK(ic_element_store(b.dtype, v, (char *)in->data[i] + (size_t)e * es));
    }
    if (strcmp(name, "onehot") == 0)
      for (int64_t r = 0; r < numel / row; r++) {
        int64_t at = r * row + (int64_t)uniform(0, (double)row);
        OK(ic_element_store(b.dtype, 1, (char *)in->data[i] + (size_t)at * es));
      }
  }
}

static void run_ref(ic_program *p, const host_io *in, host_io *out) {
  memset(out, 0, sizeof *out);
  ic_tensor ti[MAX_IO], to[MAX_IO];
  for (int32_t i = 0; i < in->count; i++) ti[i] = (ic_tensor){in->data[i], in->dtype[i], in->ndim[i], in->shape[i], NULL};
  out->count = ic_program_output_count(p);
  ck_assert_int_le(out->count, MAX_IO);
  for (int32_t o = 0; o < out->count; o++) {
    ic_buffer_info b;
    OK(ic_program_buffer(p, in->count + o, &b));
    ck_assert_int_eq(b.kind, IC_BUFFER_OUTPUT);
    OK(ic_program_output_shape(p, o, ti, &out->ndim[o], out->shape[o]));
    out->dtype[o] = b.dtype;
    int64_t numel = 1;
    for (int32_t d = 0; d < out->ndim[o]; d++) numel *= out->shape[o][d];
    out->bytes[o] = (size_t)numel * ic_dtype_size(b.dtype);
    to[o] = (ic_tensor){NULL, b.dtype, out->ndim[o], NULL, NULL};
  }
  OK(ic_program_run(p, ti, in->count, to, out->count, NULL));
  for (int32_t o = 0; o < out->count; o++) out->data[o] = to[o].data;
}

static void free_io(host_io *io) {
  for (int32_t i = 0; i < io->count; i++) free(io->data[i]);
  memset(io, 0, sizeof *io);
}

/* Outputs b equal outputs a in shape, dtype and bits. */
static void expect_same_bits(const host_io *a, const host_io *b, const char *name, int s, const char *mode) {
  ck_assert_int_eq(a->count, b->count);
  for (int32_t o = 0; o < a->count; o++) {
    ck_assert_int_eq(a->dtype[o], b->dtype[o]);
    ck_assert_int_eq(a->ndim[o], b->ndim[o]);
    for (int32_t d = 0; d < a->ndim[o]; d++) ck_assert_int_eq(a->shape[o][d], b->shape[o][d]);
    ck_assert_msg(a->bytes[o] == b->bytes[o] && (a->bytes[o] == 0 || memcmp(a->data[o], b->data[o], a->bytes[o]) == 0),
                  "%s, spelling %d (%s): output %d differs in bits from spelling 0's fused result", name, s, mode,
                  (int)o);
  }
}

/* Every spelling, fused and eager, gives spelling 0's fused bits on random inputs. */
START_TEST(test_same_bits) {
  for (size_t i = 0; i < sizeof formulations / sizeof *formulations; i++) {
    const formulation *f = &formulations[i];
    rng_state = 0x9e3779b97f4a7c15ull + i;
    host_io in, want;
    ic_graph *g0 = parse(f, 0);
    ic_program *p0 = compile(g0, "ref", IC_MODE_FUSED);
    ic_graph_destroy(g0);
    make_inputs(p0, &in);
    run_ref(p0, &in, &want);
    ic_program_release(p0);
    /* the inputs are not all of one value: a result that ignored them would show */
    ck_assert_int_gt(want.count, 0);
    for (int s = 0; s < spelling_count(f); s++) {
      ic_graph *g = parse(f, s);
      for (int mode = 0; mode < 2; mode++) {
        ic_program *p = compile(g, "ref", mode ? IC_MODE_EAGER : IC_MODE_FUSED);
        host_io got;
        run_ref(p, &in, &got);
        expect_same_bits(&want, &got, f->name, s, mode ? "eager" : "fused");
        free_io(&got);
        ic_program_release(p);
      }
      ic_graph_destroy(g);
    }
    free_io(&want);
    free_io(&in);
  }
}
END_TEST

/* The spellings that used to split, by count: the fused programs of the first spellings
 * of these computations are single kernels. */
START_TEST(test_single_kernel_cases) {
  static const char *const single[] = {"rms_norm_f32_weight", "block_fp8_quant", "row_fp8_quant", "softmax",
                                       "layer_norm", "gelu_bias_bf16", "scaled_residual_rms"};
  for (size_t j = 0; j < sizeof single / sizeof *single; j++)
    for (size_t i = 0; i < sizeof formulations / sizeof *formulations; i++) {
      if (strcmp(formulations[i].name, single[j]) != 0) continue;
      for (int s = 0; s < spelling_count(&formulations[i]); s++) {
        ic_graph *g = parse(&formulations[i], s);
        ic_program *p = compile(g, "cuda", IC_MODE_FUSED);
        ck_assert_msg(ic_program_kernel_count(p) == 1, "%s, spelling %d: %d kernels", single[j], s,
                      (int)ic_program_kernel_count(p));
        ic_program_release(p);
        ic_graph_destroy(g);
      }
    }
}
END_TEST

int main(int argc, char **argv) {
  Suite *s = suite_create("formulations");
  CHECK_CASE(s, test_same_kernels, setup, teardown);
  CHECK_CASE(s, test_same_bits, setup, teardown);
  CHECK_CASE(s, test_single_kernel_cases, setup, teardown);
  if (check_list_cases(argc, argv, s)) return 0;
  return check_run_suite(s);
}
