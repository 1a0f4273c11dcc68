// Style: an inference library's decoder block as files (Inputs/ft/): the
// attention output's AllReduce through the library's ftNcclAllReduceSum
// (nccl_utils.h: NcclParam passed by value, the datatype from a function
// template, a group of its own, NCCLCHECK), then add bias + residual +
// LayerNorm through invokeAddBiasResidualLayerNorm (layernorm_kernels.h: one
// block per token, a shared-memory block sum in a __device__ template, dim3
// locals). The call site has pragma lines only: split reorder runs the norm on
// this rank's tokens, fp16 and fp32 (-DFP32). The nearest refusal: the bias not
// declared identical on every rank (NO_REPLICATED).
// RUN: %coconet --verify=4 %s -- -I%S/Inputs | %FileCheck --check-prefix=EXEC %s
// RUN: %coconet --verify=2 %s -- -I%S/Inputs -DFP32 | %FileCheck --check-prefix=EXEC %s
// RUN: %expect 1 %coconet --check %s -- -I%S/Inputs -DNO_REPLICATED 2>&1 | %FileCheck --check-prefix=REPL %s
#include <algorithm>

#include "ft/layernorm_kernels.h"
#include "ft/nccl_utils.h"

#ifdef FP32
typedef float T;
#else
typedef half T;
#endif

void decoder_block_output(T *attention_out, const T *residual, const T *bias, const T *gamma, const T *beta,
                          int tokens, int hidden, fastertransformer::NcclParam tensor_para, cudaStream_t stream) {
#if defined(NO_REPLICATED)
#pragma coconet region name(post_attn) split reorder replicated(residual, gamma, beta)
#else
#pragma coconet region name(post_attn) split reorder replicated(residual, bias, gamma, beta)
#endif
  {
    fastertransformer::ftNcclAllReduceSum(attention_out, attention_out, tokens * hidden, tensor_para, stream);
    fastertransformer::invokeAddBiasResidualLayerNorm(attention_out, residual, bias, gamma, beta, 1e-6f, tokens,
                                                      hidden, stream);
  }
}

// EXEC: verify post_attn: ok
// REPL: error: reorder: 'attention_out' differs per rank (kernel 'fastertransformer::addBiasResidualPostLayerNorm<__half>' computes it from local 'bias')
