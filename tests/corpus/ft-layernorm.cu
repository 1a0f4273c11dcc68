// Style: an inference library's decoder block as files (Inputs/ft/): the
// attention output's AllReduce through the library's ftNcclAllReduceSum
// (nccl_utils.h: NcclParam passed by value, the datatype from a function
// template, a group of its own, NCCLCHECK), then add bias + residual +
// LayerNorm through invokeAddBiasResidualLayerNorm (layernorm_kernels.h: one
// block per token, a shared-memory block sum in a __device__ template, dim3
// locals). The call site has pragma lines only: split reorder runs the norm on
// this rank's tokens, fp16 and fp32 (-DFP32). The library logs in its NCCL
// functions (FT_LOG_DEBUG, logger.h): the schedule runs those lines in a copy of
// their own, with a warning that __PRETTY_FUNCTION__ there is the copy's (COPY;
// tests/golden/host/beside-logs.cu runs such a program). The nearest refusals: the
// bias not declared identical on every rank (NO_REPLICATED); a build for one GPU,
// whose #ifndef leaves the AllReduce out of the wrapper (SINGLE_GPU: the library's
// own macro was missing from a first try): the error names the directive and its
// lines, and comes first (it came after one about the launcher's path).
// RUN: %coconet --verify=4 %s -- -I%S/Inputs | %FileCheck --check-prefix=EXEC %s
// RUN: %coconet --verify=2 %s -- -I%S/Inputs -DFP32 | %FileCheck --check-prefix=EXEC %s
// RUN: %expect 1 %coconet --check %s -- -I%S/Inputs -DNO_REPLICATED 2>&1 | %FileCheck --check-prefix=REPL %s
// RUN: %coconet %s -- -I%S/Inputs 2>&1 | %FileCheck --check-prefix=COPY %s
// RUN: %expect 1 %coconet --check %s -- -I%S/Inputs -DSINGLE_GPU 2>&1 | %FileCheck --check-prefix=SINGLE %s
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
// SINGLE: error: split: region 'post_attn' has no ncclAllReduce to split
// SINGLE: note: the call of 'ftNcclAllReduceSum<__half>' ({{.*}}nccl_utils.h:{{[0-9]+}}:6) is not seen through as the kernel launch or collective inside it: its body has no kernel launch or NCCL collective as the program is read; '#ifndef SINGLE_GPU' at nccl_utils.h:[[IF:[0-9]+]] leaves out lines [[IF]]-{{[0-9]+}} of it: coconet reads the program as the flags after `--` define it, so give it the macros its build defines;
// SINGLE-NOT: error:
// REPL: error: reorder: 'attention_out' differs per rank (kernel 'fastertransformer::addBiasResidualPostLayerNorm<__half>' computes it from local 'bias')
// COPY: warning: region 'post_attn': 'ftNcclAllReduceSum<__half>' runs statements besides its ncclAllReduce that read __PRETTY_FUNCTION__ (nccl_utils.h:{{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}); the schedule runs them in a copy, fastertransformer::coconet_post_attn_1::ftNcclAllReduceSum, and __PRETTY_FUNCTION__ there is the copy's
// COPY: // coconet: region post_attn runs what 'ftNcclAllReduceSum<__half>' (nccl_utils.h:{{[0-9]+}}) runs besides
// COPY-NEXT: // its collective, its own statements (nccl_utils.h:[[START:[0-9]+]], [[TYPE:[0-9]+]], [[STOP:[0-9]+]]), in this copy (its
// COPY-NEXT: // __PRETTY_FUNCTION__ is the copy's)
// COPY: namespace fastertransformer {
// COPY-NEXT: namespace coconet_post_attn_1 {
// COPY-NEXT: typedef __half T;
// COPY-NEXT: static void ftNcclAllReduceSum()
// COPY-NEXT: {
// COPY-NEXT:   FT_LOG_DEBUG("%s start", __PRETTY_FUNCTION__);
// COPY-NEXT:   {{\[\[}}maybe_unused]] ncclDataType_t nccl_data_type = getNcclDataType<T>();
// COPY-NEXT:   FT_LOG_DEBUG("%s stop", __PRETTY_FUNCTION__);
// COPY-NEXT: }
// COPY-NEXT: }  // namespace coconet_post_attn_1
// COPY-NEXT: }  // namespace fastertransformer
// COPY: // coconet: what 'ftNcclAllReduceSum<__half>' runs besides its collective (nccl_utils.h:[[START]],
// COPY-NEXT: // [[TYPE]], [[STOP]]), in its copy
// COPY-NEXT: ::fastertransformer::coconet_post_attn_1::ftNcclAllReduceSum();
