/* The contraction generator's state, shared by its files: codegen_matmul.c (the decode, the
 * lambdas and the tensor-core kernel), codegen_matmul_simt.c (the FMA kernel). */
#ifndef IC_BACKEND_CUDA_CODEGEN_MATMUL_H
#define IC_BACKEND_CUDA_CODEGEN_MATMUL_H

#include "backend/cuda/codegen.h"

typedef struct mm_gen {
  codegen *cg;
  const kir_kernel *k;
  int32_t contract;           /* the CONTRACT instruction */
  ic_dtype dt;                /* the operands' dtype */
  int32_t mdim, ndim, kdim;   /* M's and N's dims (-1: none), K's */
  bool *side[2];              /* the instructions A's (B's) element value reads */
  bool *epi;                  /* the epilogue: what the stores need, the CONTRACT aside */
  /* tensor cores: element bytes, elements a 16-byte chunk, K elements a stage row */
  int32_t es, ce, kt;
  int32_t stage_bytes;
  bool fast[2];               /* operand s has a cp.async path (taken where mm_f<s> holds) */
  bool mn_major[2];           /* operand s's stage is a row a k (ldmatrix.trans) */
  int32_t threads, smem;      /* the launch: block, dynamic shared bytes */
} mm_gen;

/* Whether operands of dt run on tensor cores (mma.sync); kir_contract_plan agrees. */
bool mm_tensor_cores(ic_dtype dt, bool allow_tf32);
/* M, N, K, the block's batch vars and tile origin (mm_m0, mm_n0) for tiles of bm x bn,
 * then the lambdas mm_a, mm_b, mm_epi. */
void mm_decode(mm_gen *mg, int32_t bm, int32_t bn);
/* The FMA kernel (codegen_matmul_simt.c). */
ic_status mm_simt_kernel(mm_gen *mg);

/* Contraction kernels (codegen_matmul.c). */
ic_status cuda_codegen_matmul(const kir_kernel *k, const char *entry, int32_t sm, cuda_codegen_result *res);

#endif
