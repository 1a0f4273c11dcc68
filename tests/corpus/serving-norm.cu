// Style: an inference engine's decoder layer as files (Inputs/serving/): the
// attention output's tensor-parallel AllReduce through the engine's wrapper
// (parallel_state.h: the communicator in a struct passed by reference, the
// datatype from a trait, a group of its own, a check macro), then the fused
// residual add + RMSNorm through its host entry point (layernorm.h: dim3 grid
// and block locals, a kernel template in a namespace in layernorm_kernels.cuh,
// cub::BlockReduce). The call site has pragma lines only: split reorder runs
// the norm on this rank's tokens (a row-wise launch seen through its host
// function), fp16 and bf16 (-DBF16). The nearest refusal: the norm over fewer
// tokens than the AllReduce holds (HALF_TOKENS).
// RUN: %coconet --verify=4 %s -- -I%S/Inputs | %FileCheck --check-prefix=EXEC %s
// RUN: %coconet --verify=2 %s -- -I%S/Inputs -DBF16 | %FileCheck --check-prefix=EXEC %s
// RUN: %coconet --explain %s -- -I%S/Inputs | %FileCheck --check-prefix=EXPLAIN %s
// RUN: %coconet %s -- -I%S/Inputs | %FileCheck --check-prefix=CODE %s
// RUN: %expect 1 %coconet --check %s -- -I%S/Inputs -DHALF_TOKENS 2>&1 | %FileCheck --check-prefix=HALF %s
// The entry point inside the kernel's namespace naming it as that namespace sees it: the
// generated launch names it whole (LAUNCHER_IN_NAMESPACE).
// RUN: %coconet --verify=2 %s -- -I%S/Inputs -DLAUNCHER_IN_NAMESPACE | %FileCheck --check-prefix=EXEC %s
// RUN: %coconet %s -- -I%S/Inputs -DLAUNCHER_IN_NAMESPACE | %FileCheck --check-prefix=CODE %s
#include "serving/layernorm.h"
#include "serving/parallel_state.h"

#ifdef BF16
typedef __nv_bfloat16 act_t;
#else
typedef __half act_t;
#endif

void decoder_layer_output(act_t *attn_out, act_t *residual, const act_t *norm_weight, int num_tokens,
                          int hidden_size, const TensorParallelGroup &tp, cudaStream_t stream) {
#pragma coconet region name(post_attn) split reorder replicated(residual, norm_weight)
  {
    tensor_model_parallel_all_reduce(attn_out, (size_t)num_tokens * hidden_size, tp, stream);
#ifdef HALF_TOKENS
    fused_add_rms_norm(attn_out, residual, norm_weight, 1e-6f, num_tokens / 2, hidden_size, stream);
#else
    fused_add_rms_norm(attn_out, residual, norm_weight, 1e-6f, num_tokens, hidden_size, stream);
#endif
  }
}

// EXEC: verify post_attn: ok
// EXPLAIN: the call of 'fused_add_rms_norm<__half>' ({{.*}}layernorm.h:{{[0-9]+}}:6) is the launch of kernel 'serving::fused_add_rms_norm_kernel' inside it
// CODE: serving::fused_add_rms_norm_kernel<
// HALF: error: reorder: kernel 'serving::fused_add_rms_norm_kernel<__half>' runs over (num_tokens/2) * hidden_size elements but 'attn_out' has num_tokens * hidden_size
