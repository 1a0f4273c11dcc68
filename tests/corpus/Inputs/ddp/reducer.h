// ddp/reducer.h: data-parallel gradient averaging (tests/corpus/lion-ddp.cu): one
// bucket's AllReduce with ncclAvg, the datatype chosen by overloads.
#pragma once
#include <cuda_bf16.h>
#include <nccl.h>

#include <stdexcept>

namespace ddp {

inline ncclDataType_t dtype_of(const float *) { return ncclFloat; }
inline ncclDataType_t dtype_of(const __nv_bfloat16 *) { return ncclBfloat16; }

template <typename T>
void all_reduce_bucket(T *bucket, size_t numel, ncclComm_t comm, cudaStream_t stream) {
  if (ncclAllReduce(bucket, bucket, numel, dtype_of(bucket), ncclAvg, comm, stream) != ncclSuccess)
    throw std::runtime_error("ncclAllReduce failed");
}

}  // namespace ddp
