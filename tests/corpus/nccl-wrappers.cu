// Style: a tensor-parallel inference engine's layer. The AllReduce goes through
// the project's wrapper (a template, (const void *) casts, the datatype from a
// trait function in a local, the call in a check macro, a group of its own, the
// communicator in a struct passed by value); bias + residual go through a
// template invoke wrapper. Pragma lines only: coconet sees through both (the
// collective's datatype spelled from the buffer's type where the trait's call
// cannot move), splits the AllReduce and runs the kernel on the slice, also
// fused. A wrapper with a second collective or a statement after it is not.
// RUN: %coconet --verify=ir:4 %s | %FileCheck --check-prefix=IR %s
// RUN: %coconet --verify=4 %s | %FileCheck --check-prefix=EXEC %s
// RUN: %coconet --explain %s | %FileCheck --check-prefix=EXPLAIN %s
// RUN: %coconet %s | %FileCheck --check-prefix=CODE %s
// RUN: %coconet --verify=4 %s -- -DFUSE | %FileCheck --check-prefix=EXEC %s
// RUN: %expect 1 %coconet --check %s -- -DTWO_COLLECTIVES 2>&1 | %FileCheck --check-prefix=TWO %s
// The collective's result in a local, tested after it (RESULT): the failure's
// branch is left to the generated code's own check. Not a test with an else
// (RESULT_ELSE) or one that runs something when the collective succeeded
// (RESULT_ON_SUCCESS).
// RUN: %coconet --verify=3 %s -- -DRESULT | %FileCheck --check-prefix=EXEC %s
// RUN: %expect 1 %coconet --check %s -- -DRESULT_ELSE 2>&1 | %FileCheck --check-prefix=RESULT_ELSE %s
// RUN: %expect 1 %coconet --check %s -- -DRESULT_ON_SUCCESS 2>&1 | %FileCheck --check-prefix=RESULT_ON_SUCCESS %s
#include <cstdio>
#include <cstdlib>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <nccl.h>
#include <type_traits>

#define NCCLCHECK(cmd)                    \
  do {                                    \
    ncclResult_t r_ = (cmd);              \
    if (r_ != ncclSuccess) return;        \
  } while (0)

struct NcclParam {
  int rank_;
  int world_size_;
  ncclComm_t nccl_comm_;
};

template <typename T> ncclDataType_t getNcclDataType() {
  ncclDataType_t t;
  if (std::is_same<T, float>::value) t = ncclFloat;
  else t = ncclHalf;
  return t;
}

template <typename T>
void ftNcclAllReduceSum(const T *send_buf, T *recv_buf, const int data_size, NcclParam nccl_param,
                        cudaStream_t stream) {
  ncclDataType_t nccl_data_type = getNcclDataType<T>();
#if defined(RESULT) || defined(RESULT_ELSE) || defined(RESULT_ON_SUCCESS)
  const ncclResult_t result = ncclAllReduce((const void *)send_buf, (void *)recv_buf, data_size, nccl_data_type,
                                            ncclSum, nccl_param.nccl_comm_, stream);
#if defined(RESULT_ELSE)
  if (result != ncclSuccess) abort();
  else cudaStreamSynchronize(stream);
#elif defined(RESULT_ON_SUCCESS)
  if (result == ncclSuccess) cudaStreamSynchronize(stream);
#else
  if (result != ncclSuccess) {
    fprintf(stderr, "NCCL failure: %s\n", ncclGetErrorString(result));
    abort();
  }
#endif
#else
  NCCLCHECK(ncclGroupStart());
  NCCLCHECK(ncclAllReduce((const void *)send_buf, (void *)recv_buf, data_size, nccl_data_type, ncclSum,
                          nccl_param.nccl_comm_, stream));
  NCCLCHECK(ncclGroupEnd());
#endif
#ifdef TWO_COLLECTIVES
  NCCLCHECK(ncclAllReduce((const void *)send_buf, (void *)recv_buf, data_size, nccl_data_type, ncclSum,
                          nccl_param.nccl_comm_, stream));
#endif
}

template <typename T>
__global__ void addBiasResidual(T *out, const T *bias, const T *residual, int n, int hidden) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = (T)((float)out[i] + (float)bias[i % hidden] + (float)residual[i]);
}

template <typename T>
void invokeAddBiasResidual(T *out, const T *bias, const T *residual, const int m, const int n, cudaStream_t stream) {
  dim3 block(256);
  dim3 grid((m * n + block.x - 1) / block.x);
  addBiasResidual<T><<<grid, block, 0, stream>>>(out, bias, residual, m * n, n);
}

void layer_fp32(float *out, const float *bias, const float *res, int tokens, int hidden, NcclParam tp,
                cudaStream_t s) {
#ifdef FUSE
#pragma coconet region name(tp_layer) split reorder fuse replicated(bias, res)
#else
#pragma coconet region name(tp_layer) split reorder replicated(bias, res)
#endif
  {
    ftNcclAllReduceSum(out, out, tokens * hidden, tp, s);
    invokeAddBiasResidual(out, bias, res, tokens, hidden, s);
  }
}

void layer_half(__half *out, const __half *bias, const __half *res, int tokens, int hidden, NcclParam tp,
                cudaStream_t s) {
#pragma coconet region name(tp_half) split reorder replicated(bias, res)
  {
    ftNcclAllReduceSum(out, out, tokens * hidden, tp, s);
    invokeAddBiasResidual(out, bias, res, tokens, hidden, s);
  }
}

// IR: verify=ir tp_layer: ok
// IR: verify=ir tp_half: ok
// EXEC: verify tp_layer: ok (the region as written and as scheduled agree within 0 ULP)
// EXEC: verify tp_half: ok (the region as written and as scheduled agree within 0 ULP)
// EXPLAIN: explain tp_half
// EXPLAIN-NEXT: - analysis: the call of 'ftNcclAllReduceSum<__half>' ({{.*}}nccl-wrappers.cu:{{[0-9]+}}:6) is the ncclAllReduce inside it, seen through (its parameters stand for the call's arguments)
// EXPLAIN-NEXT: - analysis: the call of 'invokeAddBiasResidual<__half>' ({{.*}}) is the launch of kernel 'addBiasResidual' inside it, seen through
// The generated collectives use the caller's names and the datatype spelled from the buffer:
// CODE: {{^ *}}COCONET_NCCL_CHECK(ncclReduceScatter(out, out + coconet_p.slice_lo, coconet_p.s, ncclHalf,
// CODE-NEXT: {{^ *}}ncclSum, tp.nccl_comm_, s));
// TWO: note: the call of 'ftNcclAllReduceSum<__half>' ({{.*}}) is not seen through as the kernel launch or collective inside it: its body has a statement after the collective
// RESULT_ELSE: note: the call of 'ftNcclAllReduceSum<float>' ({{.*}}) is not seen through as the kernel launch or collective inside it: its body has a statement after the collective that coconet cannot run beside it ('if (result != ncclSuccess) abort();
// RESULT_ON_SUCCESS: note: the call of 'ftNcclAllReduceSum<float>' ({{.*}}) is not seen through as the kernel launch or collective inside it: its body has a statement after the collective that coconet cannot run beside it ('if (result == ncclSuccess) cudaStreamSynchronize(stream)' at nccl-wrappers.cu:{{[0-9]+}}: it reads local 'result' of the function)
