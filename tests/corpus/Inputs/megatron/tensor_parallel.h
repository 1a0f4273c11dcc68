// tensor_parallel.h: the tensor-parallel group and the reduce of a row-parallel
// layer's partial output (tests/corpus/megatron-mlp.cu).
#pragma once
#include <nccl.h>

#include <cstdio>
#include <cstdlib>

namespace megatron {

struct ParallelState {
  ncclComm_t tp_comm;
  int tp_size;
};

template <typename T> ncclDataType_t nccl_type();
template <> inline ncclDataType_t nccl_type<float>() { return ncclFloat; }

inline void check_nccl(ncclResult_t r, const char *what) {
  if (r != ncclSuccess) {
    std::fprintf(stderr, "%s: %s\n", what, ncclGetErrorString(r));
    std::abort();
  }
}

template <typename T>
void reduce_from_tensor_model_parallel_region(T *x, size_t count, const ParallelState &ps, cudaStream_t stream) {
  ncclDataType_t dtype = nccl_type<T>();
  check_nccl(ncclAllReduce(x, x, count, dtype, ncclSum, ps.tp_comm, stream), "all-reduce");
}

}  // namespace megatron
