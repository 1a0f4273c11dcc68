// nccl_utils.h: the library's NCCL parameters and AllReduce (tests/corpus/ft-layernorm.cu).
#pragma once
#include <cuda_fp16.h>
#include <nccl.h>

#include "logger.h"

#include <cstdio>
#include <cstdlib>
#include <type_traits>

#define NCCLCHECK(cmd)                                                                      \
  do {                                                                                      \
    ncclResult_t r = cmd;                                                                   \
    if (r != ncclSuccess) {                                                                 \
      printf("Failed, NCCL error %s:%d '%s'\n", __FILE__, __LINE__, ncclGetErrorString(r)); \
      exit(EXIT_FAILURE);                                                                   \
    }                                                                                       \
  } while (0)

namespace fastertransformer {

struct NcclParam {
  int rank_{0};
  int world_size_{1};
  ncclComm_t nccl_comm_ = nullptr;
};

// As the library writes it: the type's branch known in each instance, the others' error
// path (printf, exit) never taken there; a debug log line, as in all its NCCL functions;
// the NCCL calls left out of a build for one GPU (-DSINGLE_GPU), as the library leaves
// them out of one without its multi-GPU macro.
template <typename T>
ncclDataType_t getNcclDataType() {
  FT_LOG_DEBUG(__PRETTY_FUNCTION__);
  ncclDataType_t nccl_data_type;
  if (std::is_same<T, float>::value) {
    nccl_data_type = ncclFloat;
  } else if (std::is_same<T, half>::value) {
    nccl_data_type = ncclHalf;
  } else {
    printf("[ERROR] NCCL only support float and half.\n");
    exit(-1);
  }
  return nccl_data_type;
}

template <typename T>
void ftNcclAllReduceSum(const T *send_buf, T *recv_buf, const int data_size, NcclParam nccl_param,
                        cudaStream_t stream) {
  FT_LOG_DEBUG("%s start", __PRETTY_FUNCTION__);
#ifndef SINGLE_GPU
  ncclDataType_t nccl_data_type = getNcclDataType<T>();
  NCCLCHECK(ncclGroupStart());
  NCCLCHECK(ncclAllReduce((const void *)send_buf, (void *)recv_buf, data_size, nccl_data_type, ncclSum,
                          nccl_param.nccl_comm_, stream));
  NCCLCHECK(ncclGroupEnd());
#endif
  FT_LOG_DEBUG("%s stop", __PRETTY_FUNCTION__);
}

}  // namespace fastertransformer
