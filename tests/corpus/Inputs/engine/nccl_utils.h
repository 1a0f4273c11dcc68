// nccl_utils.h: the engine's NCCL layer (tests/corpus/header-wrappers.cu): a
// communicator in a struct, a datatype trait, the AllReduce in a check macro
// inside a group of its own. Read by coconet where it is, never rewritten.
#pragma once
#include <nccl.h>
#include <type_traits>

#define NCCLCHECK(cmd)             \
  do {                             \
    ncclResult_t r_ = (cmd);       \
    if (r_ != ncclSuccess) return; \
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
  NCCLCHECK(ncclGroupStart());
  NCCLCHECK(ncclAllReduce((const void *)send_buf, (void *)recv_buf, data_size, nccl_data_type, ncclSum,
                          nccl_param.nccl_comm_, stream));
  NCCLCHECK(ncclGroupEnd());
}
