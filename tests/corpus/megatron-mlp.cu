// Style: a tensor-parallel transformer's MLP output as files (Inputs/megatron/):
// the row-parallel linear's GEMM (cuBLAS, in the region), the reduce of its
// partial output through the framework's function (tensor_parallel.h: the
// datatype from a function template, the communicator in a struct, the result
// checked by a function), then bias + dropout + residual through a template invoke function
// in a namespace (fused_kernels.cuh: a hash mask keyed by the element index, the
// bias read at [i % hidden], a CEIL_DIV grid). The call site has pragma lines
// only: split reorder runs the fused epilogue on this rank's slice. The nearest
// refusal: the residual not declared identical on every rank (NO_REPLICATED).
// RUN: %coconet --verify=4 %s -- -I%S/Inputs | %FileCheck --check-prefix=EXEC %s
// RUN: %coconet --explain %s -- -I%S/Inputs | %FileCheck --check-prefix=EXPLAIN %s
// RUN: %expect 1 %coconet --check %s -- -I%S/Inputs -DNO_REPLICATED 2>&1 | %FileCheck --check-prefix=REPL %s
#include <cublas_v2.h>

#include "megatron/fused_kernels.cuh"
#include "megatron/tensor_parallel.h"

void mlp_output(float *out, float *partial, const float *weight, const float *act, const float *bias,
                const float *residual, int tokens, int hidden, int ffn_shard, float dropout_p, uint32_t seed,
                const megatron::ParallelState &ps, cublasHandle_t handle, cudaStream_t stream) {
  const float one = 1.0f, zero = 0.0f;
#if defined(NO_REPLICATED)
#pragma coconet region name(mlp_out) split reorder scratch(partial)
#else
#pragma coconet region name(mlp_out) split reorder scratch(partial) replicated(bias, residual)
#endif
  {
    cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, hidden, tokens, ffn_shard, &one, weight, hidden, act, ffn_shard,
                &zero, partial, hidden);
    megatron::reduce_from_tensor_model_parallel_region(partial, (size_t)tokens * hidden, ps, stream);
    megatron::invokeBiasDropoutAdd(out, partial, bias, residual, dropout_p, seed, tokens, hidden, stream);
  }
}

// EXEC: verify mlp_out: ok
// EXPLAIN: is the ncclAllReduce inside it, seen through
// EXPLAIN: is the launch of kernel 'megatron::bias_dropout_add_kernel' inside it
// REPL: error: reorder: 'out' differs per rank (kernel 'megatron::bias_dropout_add_kernel<float>' computes it from local 'residual')
