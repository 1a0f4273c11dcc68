// Style: a tensor-parallel engine's decoder (FasterTransformer's
// ParallelGptDecoder<T> and the like): a class template over the element type,
// explicitly instantiated for float and half at the end of its file; its
// AllReduce, run only with more than one rank (guarded-collective.cu), behind a
// wrapper template whose datatype comes from a trait of T
// (tinst/nccl_param.h), its kernels templates launched through invoke wrapper
// templates (tinst/decoder_kernels.h); a trainer's function template over the
// element type and the block size, called for two instances. Every statement
// of these regions depends on the template's parameters, so coconet reads each
// region in each instance the file makes (the file parsed again with the
// template's head bound to the instance's arguments; an explicit instantiation
// of a function template read from its text), schedules each on its
// own, and the region becomes an `if constexpr` on the parameters choosing the
// instance's code, the region as written for any other instance. Shapes: a
// member defined out of its class (attn_out), one defined in it (mlp_act), a
// function template with a non-type parameter (mean). Refused, with the
// reason: a member template of a class template (MEMBER_TEMPLATE).
// RUN: %coconet --verify=2 %s -- -I%S/Inputs | %FileCheck --check-prefix=EXEC %s
// RUN: %coconet %s -- -I%S/Inputs | %FileCheck --check-prefix=CODE %s
// RUN: %coconet --check %s -- -I%S/Inputs | %FileCheck --check-prefix=CHECK %s
// RUN: %expect 1 %coconet --check %s -- -I%S/Inputs -DMEMBER_TEMPLATE 2>&1 | %FileCheck --check-prefix=MEMBER %s
#include <cuda_runtime.h>

#include "tinst/decoder_kernels.h"
#include "tinst/nccl_param.h"

template <typename T>
class Decoder {
 public:
  Decoder(NcclParam tensor_para, cudaStream_t stream) : tensor_para_(tensor_para), stream_(stream) {}
  void attentionOut(T *attn_out, const T *residual, const T *bias, int m, int n);
  void mlp(T *x, int count) {
#pragma coconet region name(mlp_act) split reorder
    {
      allReduceSum(x, x, (size_t)count, tensor_para_, stream_);
      gelu<T><<<(count + 255) / 256, 256, 0, stream_>>>(x, count);
    }
  }
#if defined(MEMBER_TEMPLATE)
  template <typename S>
  void scaled(T *x, S s, int count);
#endif

 private:
  NcclParam tensor_para_;
  cudaStream_t stream_;
};

template <typename T>
void Decoder<T>::attentionOut(T *attn_out, const T *residual, const T *bias, int m, int n) {
#pragma coconet region name(attn_out) split reorder replicated(residual, bias)
  {
    if (tensor_para_.world_size > 1) {
      allReduceSum(attn_out, attn_out, (size_t)m * n, tensor_para_, stream_);
    }
    invokeAddBiasResidual(attn_out, residual, bias, m, n, stream_);
  }
}

#if defined(MEMBER_TEMPLATE)
template <typename T>
template <typename S>
void Decoder<T>::scaled(T *x, S s, int count) {
#pragma coconet region name(scaled) split reorder
  {
    allReduceSum(x, x, (size_t)count, tensor_para_, stream_);
    gelu<T><<<(count + 255) / 256, 256, 0, stream_>>>(x, count);
  }
}
#endif

template <typename T, int BLOCK>
void allReduceMean(T *grad, size_t count, NcclParam param, cudaStream_t stream) {
#pragma coconet region name(mean) split reorder
  {
    allReduceSum(grad, grad, count, param, stream);
    scaleGrads<T><<<(count + BLOCK - 1) / BLOCK, BLOCK, 0, stream>>>(grad, 1.0f / param.world_size, count);
  }
}

template class Decoder<float>;
template class Decoder<__half>;
template void allReduceMean<float, 512>(float *, size_t, NcclParam, cudaStream_t);

void trainStep(float *grads, __half *half_grads, size_t count, NcclParam param, cudaStream_t stream) {
  allReduceMean<float, 256>(grads, count, param, stream);
  allReduceMean<__half, 128>(half_grads, count, param, stream);
}

// EXEC: verify mlp_act_float: ok
// EXEC: verify mlp_act_half: ok
// EXEC: verify attn_out_float: ok
// EXEC: verify attn_out_half: ok
// EXEC: verify mean_float_256: ok
// EXEC: verify mean_half_128: ok
// EXEC: verify mean_float_512: ok

// CHECK: region mlp_act ({{.*}}:{{[0-9]+}}) in mlp: opaque launch:gelu (read in each instance: T = float; T = __half)
// CHECK: region attn_out ({{.*}}:{{[0-9]+}}) in attentionOut: opaque opaque (read in each instance: T = float; T = __half)
// CHECK: region mean ({{.*}}:{{[0-9]+}}) in allReduceMean: opaque launch:scaleGrads (read in each instance: T = float, BLOCK = 256; T = __half, BLOCK = 128; T = float, BLOCK = 512)

// CODE: // coconet: begin generated code for region mlp_act_float
// CODE: // coconet: begin generated code for region mlp_act_half
// CODE-LABEL: void mlp(T *x, int count) {
// CODE: // coconet: region mlp_act is in a template: each instance this file makes runs its own
// CODE-NEXT: // schedule, any other the region as written
// CODE-NEXT: if constexpr (std::is_same<T, float>::value) {
// CODE: ncclReduceScatter(x, x + coconet_p.slice_lo, coconet_p.s, ncclFloat32,
// CODE: coconet_mlp_act_float_slice<<<
// CODE: } else if constexpr (std::is_same<T, __half>::value) {
// CODE: ncclReduceScatter(x, x + coconet_p.slice_lo, coconet_p.s, ncclFloat16,
// CODE: coconet_mlp_act_half_slice<<<
// CODE: } else {
// CODE-NEXT: allReduceSum(x, x, (size_t)count, tensor_para_, stream_);
// CODE-NEXT: gelu<T><<<(count + 255) / 256, 256, 0, stream_>>>(x, count);
// CODE-NEXT: }
// CODE: // coconet: begin generated code for region attn_out_float
// CODE: // coconet: begin generated code for region attn_out_half
// CODE-LABEL: void Decoder<T>::attentionOut(
// CODE: if constexpr (std::is_same<T, float>::value) {
// CODE: "attn_out_float", "residual", __FILE__, __LINE__);
// CODE: } else if constexpr (std::is_same<T, __half>::value) {
// CODE: "attn_out_half", "residual", __FILE__, __LINE__);
// CODE: } else {
// CODE-NEXT: if (tensor_para_.world_size > 1) {
// CODE-NEXT: allReduceSum(attn_out, attn_out, (size_t)m * n, tensor_para_, stream_);
// CODE-NEXT: }
// CODE-NEXT: invokeAddBiasResidual(attn_out, residual, bias, m, n, stream_);
// CODE-NEXT: }
// CODE: // coconet: begin generated code for region mean_float_256
// CODE: // coconet: begin generated code for region mean_half_128
// CODE-LABEL: void allReduceMean(T *grad, size_t count, NcclParam param, cudaStream_t stream) {
// CODE: if constexpr (std::is_same<T, float>::value && BLOCK == 256) {
// CODE: } else if constexpr (std::is_same<T, __half>::value && BLOCK == 128) {
// CODE: } else if constexpr (std::is_same<T, float>::value && BLOCK == 512) {
// CODE: } else {
// CODE-NEXT: allReduceSum(grad, grad, count, param, stream);
// CODE: template class Decoder<float>;

// MEMBER: template-instances.cu:{{[0-9]+}}:1: error: region 'scaled' is in a template and its statements depend on the template's parameters, so coconet reads it in each instance this file makes, and it cannot: it is in a member template of a class template
// MEMBER-NEXT: #pragma coconet region name(scaled) split reorder
