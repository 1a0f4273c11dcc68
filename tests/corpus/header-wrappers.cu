// Style: a tensor-parallel inference engine as files. Kernels in
// Inputs/engine/kernels.h, template `invoke` launchers in Inputs/engine/invoke.h
// (one calling another), the AllReduce wrapper in Inputs/engine/nccl_utils.h
// (a trait's datatype, a check macro, a group of its own); this file is the
// call site, with pragma lines only. coconet sees through the headers'
// functions where they are (headers are read, never rewritten), splits the
// AllReduce and runs each kernel on the slice, also fused; --target=host
// lowers the headers' launches into its output. The nearest refusals: a
// launcher with a statement after its launch, one reading a global.
// RUN: %coconet --verify=ir:4 %s -- -I%S/Inputs | %FileCheck --check-prefix=IR %s
// RUN: %coconet --verify=4 %s -- -I%S/Inputs | %FileCheck --check-prefix=EXEC %s
// RUN: %coconet --verify=4 %s -- -I%S/Inputs -DFUSE | %FileCheck --check-prefix=EXEC %s
// RUN: %coconet --explain %s -- -I%S/Inputs | %FileCheck --check-prefix=EXPLAIN %s
// RUN: cksum %S/Inputs/engine/* > %t.before
// RUN: %coconet %s -o %t.cu -- -I%S/Inputs && %FileCheck --check-prefix=CODE %s < %t.cu
// RUN: %coconet --target=host %s -o %t.host.cu -- -I%S/Inputs && %FileCheck --check-prefix=HOST %s < %t.host.cu
// RUN: cksum %S/Inputs/engine/* | cmp - %t.before
// RUN: %expect 1 %coconet --check %s -- -I%S/Inputs -DSECOND_STATEMENT 2>&1 | %FileCheck --check-prefix=SECOND %s
// RUN: %expect 1 %coconet --check %s -- -I%S/Inputs -DGLOBAL_BLOCK 2>&1 | %FileCheck --check-prefix=GLOBAL %s
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "engine/invoke.h"
#include "engine/nccl_utils.h"

#ifdef SECOND_STATEMENT
int g_launches = 0;
#endif

void attention_out(float *out, const float *bias, const float *res, int tokens, int hidden, NcclParam tp,
                   cudaStream_t s) {
#ifdef FUSE
#pragma coconet region name(attn_out) split reorder fuse replicated(bias, res)
#else
#pragma coconet region name(attn_out) split reorder replicated(bias, res)
#endif
  {
    ftNcclAllReduceSum(out, out, tokens * hidden, tp, s);
    invokeAddBiasResidual(out, bias, res, tokens, hidden, s);
  }
}

void ffn_in(__half *h, const __half *bias, int tokens, int inter, NcclParam tp, cudaStream_t s) {
#pragma coconet region name(ffn) split reorder replicated(bias)
  {
    ftNcclAllReduceSum(h, h, tokens * inter, tp, s);
    invokeGenericActivation<__half>(h, bias, tokens, inter, s);
  }
}

// IR: verify=ir attn_out: ok
// IR: verify=ir ffn: ok
// EXEC: verify attn_out: output 'out' (f32): max 0 ULP apart over 1..4 ranks x 3 inputs
// EXEC: verify attn_out: ok
// EXEC: verify ffn: output 'h' (f16): max 0 ULP apart over 1..4 ranks x 3 inputs
// EXEC: verify ffn: ok
// EXPLAIN: explain attn_out
// EXPLAIN: the call of 'ftNcclAllReduceSum<float>' ({{.*}}nccl_utils.h:{{[0-9]+}}:6) is the ncclAllReduce inside it, seen through
// EXPLAIN: the call of 'invokeAddBiasResidual<float>' ({{.*}}invoke.h:{{[0-9]+}}:6) is the launch of kernel 'addBiasResidual' inside it, seen through
// EXPLAIN: kernel 'addBiasResidual' ({{.*}}kernels.h:{{[0-9]+}}:{{[0-9]+}}) is a template: analyzed as its instance for <float>
// EXPLAIN: explain ffn
// EXPLAIN: the call of 'invokeGenericActivation<__half>' ({{.*}}invoke.h:{{[0-9]+}}:6) is the launch of kernel 'addBiasGelu' inside it (through 'invokeAddBiasGelu<__half>'), seen through
// The kernels run as their own text from the header, under the instance's arguments:
// CODE: namespace coconet_attn_out_slice_addBiasResidual {
// CODE: typedef float T;
// CODE: if (i < n) out = (T)((float)out + (float)bias[i % hidden] + (float)residual);
// CODE: ncclReduceScatter(out, out + coconet_p.s * coconet_p.rank, coconet_p.s, ncclFloat, ncclSum, tp.nccl_comm_, s)
// CODE: ncclReduceScatter(h, h + coconet_p.s * coconet_p.rank, coconet_p.s, ncclHalf, ncclSum, tp.nccl_comm_, s)
// HOST: #line 1 "{{.*}}Inputs/engine/invoke.h"
// HOST: coconet_host_launch(COCONET_HOST_SIMPLE, addBiasResidual<T>, grid, block, 0, stream, out, bias, residual, m * n, n);
// HOST: coconet_host_launch(COCONET_HOST_SIMPLE, addBiasGelu<T>, blocks, 256, 0, stream, out, bias, m * n, n);
// SECOND: error: reorder: no pointwise kernel consumes the result of a split AllReduce
// SECOND: note: the call of 'invokeAddBiasResidual<float>' ({{.*}}invoke.h:{{[0-9]+}}:6) is not seen through as the kernel launch or collective inside it: its body has a statement after the launch
// GLOBAL: note: the call of 'invokeGenericActivation<__half>' ({{.*}}invoke.h:{{[0-9]+}}:6) is not seen through as the kernel launch or collective inside it: a text of its launch reads a variable that is not the function's parameter or local
