// comm/allreduce.cuh: the trainer's gradient AllReduce (tests/corpus/trainer-zero.cu):
// a datatype from the buffer's type, the call checked.
#pragma once
#include <nccl.h>

#define ncclCheck(cmd)                                   \
  do {                                                   \
    ncclResult_t r_ = (cmd);                             \
    if (r_ != ncclSuccess) std::exit(EXIT_FAILURE);      \
  } while (0)

template <typename T> struct NcclType;
template <> struct NcclType<float> { static constexpr ncclDataType_t value = ncclFloat; };

template <typename T> void all_reduce_grads(T *grads, size_t count, ncclComm_t comm, cudaStream_t stream) {
  ncclCheck(ncclAllReduce((const void *)grads, (void *)grads, count, NcclType<T>::value, ncclSum, comm, stream));
}
