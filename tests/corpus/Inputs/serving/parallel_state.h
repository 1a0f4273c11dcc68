// parallel_state.h: the tensor-parallel group and its AllReduce (tests/corpus/serving-norm.cu):
// the communicator in a struct, the datatype from a trait, a group of its own.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <nccl.h>

#include <cstdio>
#include <cstdlib>

#define NCCL_CHECK(cmd)                                                                    \
  do {                                                                                     \
    ncclResult_t e_ = (cmd);                                                               \
    if (e_ != ncclSuccess) {                                                               \
      std::fprintf(stderr, "NCCL error %s:%d '%s'\n", __FILE__, __LINE__, ncclGetErrorString(e_)); \
      std::exit(1);                                                                        \
    }                                                                                      \
  } while (0)

struct TensorParallelGroup {
  ncclComm_t comm;
  int world_size;
  int rank;
};

template <typename T> struct NcclDtype;
template <> struct NcclDtype<__half> { static constexpr ncclDataType_t value = ncclHalf; };
template <> struct NcclDtype<__nv_bfloat16> { static constexpr ncclDataType_t value = ncclBfloat16; };

template <typename T>
void tensor_model_parallel_all_reduce(T *buf, size_t count, const TensorParallelGroup &tp, cudaStream_t stream) {
  NCCL_CHECK(ncclGroupStart());
  NCCL_CHECK(ncclAllReduce((const void *)buf, (void *)buf, count, NcclDtype<T>::value, ncclSum, tp.comm, stream));
  NCCL_CHECK(ncclGroupEnd());
}
