// Style: a GPT trainer as files (Inputs/trainer/): its multi-tensor AdamW in
// optim/adamw.cuh (kernel template and launcher: the grid dim3(blocks, layers),
// a pointer to each buffer's layer, lerp with fmaf, bf16 stochastic rounding keyed
// by threadIdx.x, blockIdx.x and blockIdx.y, bias corrections with powf and an
// error check after the launch in the launcher), its gradient AllReduce in comm/allreduce.cuh (a trait datatype, a
// check macro), cudaCheck(cudaGetLastError()) after the update. The call site
// has pragma lines only: the flat gradient is split, the update runs on this
// rank's slice and the optimizer state is sharded (ZeRO-1); fp32 too (FP32).
// The nearest refusal: the update over another count than the AllReduce's (OTHER_COUNT).
// RUN: %coconet --verify=ir:4 %s -- -I%S/Inputs | %FileCheck --check-prefix=IR %s
// RUN: %coconet --verify=4 %s -- -I%S/Inputs | %FileCheck --check-prefix=EXEC %s
// RUN: %coconet --verify=4 %s -- -I%S/Inputs -DFP32 | %FileCheck --check-prefix=EXEC %s
// RUN: %coconet --explain %s -- -I%S/Inputs | %FileCheck --check-prefix=EXPLAIN %s
// RUN: %coconet %s -- -I%S/Inputs | %FileCheck --check-prefix=CODE %s
// RUN: %expect 1 %coconet --check %s -- -I%S/Inputs -DOTHER_COUNT 2>&1 | %FileCheck --check-prefix=COUNT %s
#include <cuda_bf16.h>

#include "trainer/comm/allreduce.cuh"
#include "trainer/optim/adamw.cuh"

#ifdef FP32
typedef float floatX;
#else
typedef __nv_bfloat16 floatX;
#endif

void train_step(floatX *params, float *master, float *grads, float *m, float *v, size_t n, size_t padded,
                int layers, float lr, int step, unsigned seed, ncclComm_t comm, cudaStream_t s) {
#pragma coconet region name(zero1) split reorder scratch(grads) shard(m, v, master) replicated(params)
  {
    all_reduce_grads(grads, (size_t)layers * n, comm, s);
#ifdef OTHER_COUNT
    adamw_update(params, master, grads, m, v, padded, layers, lr, 0.9f, 0.95f, step, 1e-8f, 0.1f, seed, s);
#else
    adamw_update(params, master, grads, m, v, n, layers, lr, 0.9f, 0.95f, step, 1e-8f, 0.1f, seed, s);
#endif
    cudaCheck(cudaGetLastError());
  }
  (void)padded;
}

// IR: verify=ir zero1: ok
// EXEC: verify zero1: shard 'm' (f32): max 0 ULP apart over 1..4 ranks x 3 inputs (this rank's slice and the tail)
// EXEC: verify zero1: output 'params' ({{bf16|f32}}): max 0 ULP apart over 1..4 ranks x 3 inputs
// EXEC: verify zero1: ok
// EXPLAIN: the call of 'all_reduce_grads<float>' ({{.*}}allreduce.cuh:{{[0-9]+}}:{{[0-9]+}}) is the ncclAllReduce inside it, seen through
// EXPLAIN: the call of 'adamw_update<__nv_bfloat16>' ({{.*}}adamw.cuh:{{[0-9]+}}:{{[0-9]+}}) is the launch of kernel 'adamw_kernel' inside it, seen through
// EXPLAIN: reorder: kernel 'adamw_kernel<__nv_bfloat16>' {{.*}} runs on this rank's slice of 'grads'
// The rounding helper reads where the thread is: the IR is printed, its coordinates rebuilt:
// CODE: generated from the IR (helper 'stochastic_round' reads where the thread is
// COUNT: error: reorder: kernel 'adamw_kernel<__nv_bfloat16>' runs over layers * padded elements but 'grads' has layers * n; work on a slice needs the same count
