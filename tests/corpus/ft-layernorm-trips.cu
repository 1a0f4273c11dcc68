// Style: an inference library's fp16 add bias + residual + LayerNorm launcher that
// picks its kernel by the trips a row takes through the block (Inputs/ft/
// layernorm_trips.h: one or two trips keep the row in registers, a longer row goes to
// the general kernel reading half2 pairs), after the AllReduce through the library's
// ftNcclAllReduceSum. The call site has pragma lines only. The schedule is for the
// general kernel, so it runs when the row takes more than two trips and is even
// ((hidden) % 2 == 0); the region runs as written otherwise. The block is
// min(hidden, 1024) threads and every kernel sums with full-warp shuffles, so the
// program runs only with whole warps: --verify draws hidden as whole warps in every
// input, the first included (which makes a row length the schedule needs even odd
// elsewhere: 97 threads stopped the kernel as written on its partial warp), and its
// search for the schedule's path tries whole warps only. Two of its six runs take the
// schedule's branch (TAKEN).
// RUN: %coconet --verify=2 %s -- -I%S/Inputs | %FileCheck --check-prefix=EXEC %s
// RUN: %coconet %s -- -I%S/Inputs 2>/dev/null | %FileCheck --check-prefix=CODE %s
#include "ft/layernorm_trips.h"
#include "ft/nccl_utils.h"

void decoder_block_output(half *attention_out, const half *residual, const half *bias, const half *gamma,
                          const half *beta, int tokens, int hidden, fastertransformer::NcclParam tensor_para,
                          cudaStream_t stream) {
#pragma coconet region name(post_attn) split reorder replicated(residual, bias, gamma, beta)
  {
    fastertransformer::ftNcclAllReduceSum(attention_out, attention_out, tokens * hidden, tensor_para, stream);
    fastertransformer::invokeAddBiasResidualLayerNormTrips(attention_out, residual, bias, gamma, beta, 1e-6f,
                                                           tokens, hidden, stream);
  }
}

// EXEC: verify post_attn: run with (hidden) % 2 == 0 ({{.*}}the schedule's branch, taken in 2 of 6 runs; the others run the region as written)
// EXEC-NEXT: verify post_attn: ok (the region as written and as scheduled agree within 0 ULP)
// CODE: // coconet: 'invokeAddBiasResidualLayerNormTrips<__half>' picks its kernel at run time: the
// CODE: const bool coconet_path = !(((int)((hidden + ((unsigned)(std::min(hidden,
// CODE: if (coconet_path && (hidden) % 2 == 0 && coconet_disjoint({{[{][{]}}attention_out,
