// Style: an inference engine's vectorized row kernels in headers
// (Inputs/vecrows/): add bias + residual + LayerNorm reading fp16 rows a half2
// at a time through pointers cast from the kernel's parameters, the vector
// type from a trait (`T2 *out_ptr = (T2 *)out;`, rows of n / 2 at
// blockIdx.x * n / 2, columns from loops to n / 2, bias and gamma through the
// library's ldg helper), launched through a template wrapper, fused with the
// AllReduce; an RMSNorm reading four floats at a time through float4 pointers
// to the block's row (through a load helper returning *p) and a cast of its
// weight pointer; a residual add + RMSNorm over a packed vector of 8 halves (a
// struct with operators) through `auto *` views, the row length in vectors
// in a local (`const int vec_hidden_size = hidden_size / width;`).
// The call sites have pragma lines only. A row of n / 2 pairs is the row of n
// halves only when n is even: the schedule runs when (n) % 2 == 0 and the
// region as written otherwise; --verify runs both. Refused: a half2 pointer
// indexed in halves (WRONG_UNITS), a float buffer read through a half pointer
// (NARROW), a column loop one column past the row (PAST_ROW), and with fuse, a
// row element read through the ldg helper, whose cache-hinted load the fused
// kernel cannot make coherent (LDG_ROW).
// RUN: %coconet --verify=3 %s -- -I%S/Inputs | %FileCheck --check-prefix=EXEC %s
// RUN: %coconet %s -- -I%S/Inputs | %FileCheck --check-prefix=CODE %s
// RUN: %coconet --explain --check %s -- -I%S/Inputs | %FileCheck --check-prefix=EXPLAIN %s
// RUN: %expect 1 %coconet --check %s -- -I%S/Inputs -DWRONG_UNITS 2>&1 | %FileCheck --check-prefix=UNITS %s
// RUN: %expect 1 %coconet --check %s -- -I%S/Inputs -DNARROW 2>&1 | %FileCheck --check-prefix=NARROW %s
// RUN: %expect 1 %coconet --check %s -- -I%S/Inputs -DLDG_ROW 2>&1 | %FileCheck --check-prefix=LDG %s
// RUN: %expect 1 %coconet --check %s -- -I%S/Inputs -DPAST_ROW 2>&1 | %FileCheck --check-prefix=PAST %s
#include <nccl.h>

#include "vecrows/norm_kernels.h"

void post_attention(half *out, const half *residual, const half *bias, const half *gamma, const half *beta,
                    int tokens, int hidden, ncclComm_t comm, cudaStream_t stream) {
#pragma coconet region name(post_attn) split reorder replicated(residual, bias, gamma, beta) fuse
  {
    ncclAllReduce(out, out, (size_t)tokens * hidden, ncclHalf, ncclSum, comm, stream);
    engine::invokeAddBiasResidualLayerNorm2(out, residual, bias, gamma, beta, 1e-5f, tokens, hidden, stream);
  }
}

void final_norm(float *out, float *x, const float *weight, int tokens, int hidden, ncclComm_t comm,
                cudaStream_t stream) {
#pragma coconet region name(rms) split reorder replicated(weight)
  {
    ncclAllReduce(x, x, (size_t)tokens * hidden, ncclFloat, ncclSum, comm, stream);
    engine::rmsNormVec4<<<tokens, 128, 0, stream>>>(out, x, weight, 1e-6f, hidden);
  }
}

void decoder_layer_norm(half *hidden, half *residual, const half *weight, int tokens, int hidden_size,
                        ncclComm_t comm, cudaStream_t stream) {
#pragma coconet region name(add_rms) split reorder replicated(residual, weight)
  {
    ncclAllReduce(hidden, hidden, (size_t)tokens * hidden_size, ncclHalf, ncclSum, comm, stream);
    engine::fusedAddRmsNormVec<half, 8><<<tokens, 256, 0, stream>>>(hidden, residual, weight, 1e-6f, hidden_size);
  }
}

#if defined(NARROW)
void narrow(float *x, int rows, int hidden, ncclComm_t comm, cudaStream_t stream) {
#pragma coconet region name(narrow) split reorder
  {
    ncclAllReduce(x, x, (size_t)rows * hidden, ncclFloat, ncclSum, comm, stream);
    engine::scaleRowsHalf<<<rows, 128, 0, stream>>>(x, hidden);
  }
}
#endif

// EXEC: verify post_attn: output 'out' (f16): max 0 ULP apart over 1..3 ranks x 3 inputs
// EXEC: verify post_attn: run with (hidden) % 2 == 0 (kernel 'engine::addBiasResidualLayerNorm2<__half>' reads its rows 2 elements at a time: the schedule's branch, taken in {{[1-9][0-9]*}} of 9 runs; the others run the region as written)
// EXEC: verify post_attn: ok
// EXEC: verify rms: run with (hidden) % 4 == 0 (kernel 'engine::rmsNormVec4' reads its rows 4 elements at a time: the schedule's branch, taken in {{[1-9][0-9]*}} of 9 runs; the others run the region as written)
// EXEC: verify rms: ok
// EXEC: verify add_rms: run with (hidden_size) % 8 == 0 (kernel 'engine::fusedAddRmsNormVec<half, 8>' reads its rows 8 elements at a time: the schedule's branch, taken in {{[1-9][0-9]*}} of 9 runs; the others run the region as written)
// EXEC: verify add_rms: ok

// CODE: // coconet: engine::addBiasResidualLayerNorm2 (norm_kernels.h:{{[0-9]+}}) as one block of the grid it is
// CODE: T2 *out_ptr = (T2 *)out;
// CODE: // coconet: kernel 'engine::addBiasResidualLayerNorm2<__half>' reads its rows 2 elements at a
// CODE-NEXT: // time (norm_kernels.h:{{[0-9]+}}:{{[0-9]+}}): the schedule is for (hidden) % 2 == 0; the region runs as
// CODE: if ((hidden) % 2 == 0 && coconet_disjoint(
// CODE: coconet_post_attn_fused<<<coconet_fused_rows_grid(coconet_p.s / hidden,
// CODE: engine::addBiasResidualLayerNorm2<__half><<<(unsigned)(coconet_p.s / hidden),
// CODE-NEXT: std::min((hidden / 2 + 31) / 32 * 32, 1024), 0, stream>>>(out + coconet_p.slice_lo,
// CODE: } else {
// CODE-NEXT: ncclAllReduce(out, out, (size_t)tokens * hidden, ncclHalf, ncclSum, comm, stream);
// CODE-NEXT: engine::invokeAddBiasResidualLayerNorm2(out, residual, bias, gamma, beta, 1e-5f, tokens, hidden, stream);
// CODE: if ((hidden) % 4 == 0 &&

// EXPLAIN: kernel 'engine::addBiasResidualLayerNorm2<__half>' reads its rows 2 elements at a time ({{.*}}norm_kernels.h:{{[0-9]+}}:{{[0-9]+}}), rows of 'hidden' elements: the schedule is for (hidden) % 2 == 0, tested at the top of the region; the region runs as written otherwise

// UNITS: norm_kernels.h:{{[0-9]+}}:{{[0-9]+}}: error: kernel 'engine::addBiasResidualLayerNorm2' adds a row offset in units of 1 element and a column in units of 2 (int id = blockIdx.x * n + idx); a row read k elements at a time is indexed by row * H / k + j, j from a loop to H / k
// NARROW: norm_kernels.h:{{[0-9]+}}:{{[0-9]+}}: error: kernel 'engine::scaleRowsHalf' reads 'x' through 'h', whose elements are not a whole number of 'x''s; coconet follows a buffer through pointers to its elements or to k of them at a time (half2 over half, float4 over float)
// LDG: error: fuse: kernel 'engine::addBiasResidualLayerNorm2' reads a row element through a helper's cache-hinted load (ldg(&input_ptr[id])); the fused kernel reads rows it has just written, which that cache does not see, and its copy makes only the kernel's own __ldg coherent (coconet does not tell which buffers a helper's load may meet): load with __ldg in the kernel itself, or drop fuse
// PAST: norm_kernels.h:{{[0-9]+}}:{{[0-9]+}}: error: kernel 'engine::rmsNormVec4': the column loop runs while j <= hidden / 4, one column past the row; a row-wise kernel's column loops run below the row length (j < H)
