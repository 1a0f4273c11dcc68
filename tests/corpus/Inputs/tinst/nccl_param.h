// An inference engine's NCCL layer: the datatype from a trait of the element
// type, the collective behind a wrapper template that casts its buffers and
// groups its call.
#pragma once
#include <cuda_fp16.h>
#include <nccl.h>

struct NcclParam {
  int rank = 0;
  int world_size = 1;
  ncclComm_t comm = nullptr;
};

template <typename T>
struct NcclTypeOf;
template <>
struct NcclTypeOf<float> {
  static constexpr ncclDataType_t value = ncclFloat;
};
template <>
struct NcclTypeOf<__half> {
  static constexpr ncclDataType_t value = ncclHalf;
};

template <typename T>
void allReduceSum(const T *send, T *recv, size_t count, NcclParam param, cudaStream_t stream) {
  ncclGroupStart();
  ncclAllReduce((const void *)send, (void *)recv, count, NcclTypeOf<T>::value, ncclSum, param.comm, stream);
  ncclGroupEnd();
}
