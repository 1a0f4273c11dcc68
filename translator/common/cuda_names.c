// cuda_names.c: the tables of cuda_names.h.
#include "common/cuda_names.h"

#include <stddef.h>
#include <string.h>

bool cuda_name_in(const char *name, const char *const *table) {
  for (; *table; table++)
    if (strcmp(name, *table) == 0) return true;
  return false;
}

const char *const NCCL_CALLS[] = {
    "ncclAllReduce", "ncclReduceScatter", "ncclAllGather", "ncclBroadcast", "ncclReduce",
    "ncclSend",      "ncclRecv",          "ncclGroupStart", "ncclGroupEnd", NULL,
};
const char *const GEMM_CALLS[] = {"cublasSgemm", "cublasHgemm", "cublasGemmEx", NULL};
const char *const CUDA_CALLS[] = {
    "cudaMemcpyAsync", "cudaMemsetAsync", "cudaEventRecord", "cudaStreamWaitEvent", NULL,
};

const char *const CUDA_CACHE_LOADS[] = {"__ldg", "__ldca", "__ldcg", "__ldcs", "__ldlu", "__ldcv", NULL};
const char *const CUDA_CACHE_STORES[] = {"__stcs", "__stcg", "__stwb", "__stwt", NULL};
const char *const CUDA_BLOCK_BARRIERS[] = {"__syncthreads", "__syncthreads_count", "__syncthreads_and",
                                           "__syncthreads_or", NULL};
const char *const CUDA_WARP_CALLS[] = {"__ballot_sync",   "__any_sync",        "__all_sync", "__activemask",
                                       "__syncwarp",      "tiled_partition",   "coalesced_threads",
                                       "reduce",          NULL};
const char *const CUDA_LEGACY_WARP_CALLS[] = {
    "__activemask", "__shfl", "__shfl_up", "__shfl_down", "__shfl_xor", "__any", "__all", "__ballot", NULL,
};
const char *const CUDA_GROUP_QUERIES[] = {
    "this_thread_block", "this_grid",  "this_thread",     "thread_rank",     "block_rank", "size",
    "num_threads",       "num_blocks", "thread_index",    "block_index",     "group_index", "group_dim",
    "dim_threads",       "dim_blocks", "meta_group_rank", "meta_group_size", "is_valid",   NULL,
};
const char *const CUDA_SYNC_WORDS[] = {"barrier", "arrive", "wait", "pipeline", "memcpy_async",
                                       "latch", "semaphore", NULL};
const char *const CUDA_BUILTINS[] = {"threadIdx", "blockIdx", "blockDim", "gridDim", "warpSize", NULL};
const char *const CUDA_QUERIES[] = {"cudaGetDevice", "cudaGetDeviceCount", "cudaGetDeviceProperties",
                                    "cudaDeviceGetAttribute", "cudaRuntimeGetVersion", "cudaDriverGetVersion",
                                    "cudaMemGetInfo", "cudaPointerGetAttributes", "cudaGetErrorString",
                                    "cudaGetErrorName", "ncclGetErrorString", "ncclGetVersion", NULL};

const char *const HOST_PURE_MATH[] = {"pow",  "powf",  "sqrt",  "sqrtf",  "exp",  "expf",  "log",  "logf", "log2",
                                      "log2f", "fabs", "fabsf", "ceil",   "ceilf", "floor", "floorf", "fmin",
                                      "fminf", "fmax", "fmaxf", "abs",   "labs",  "llabs", NULL};

const char *cuda_nccl_type_of(const char *ctype) {
  static const struct { const char *c, *nccl; } types[] = {
      {"float", "ncclFloat"},         {"double", "ncclDouble"},        {"__half", "ncclHalf"},
      {"__nv_bfloat16", "ncclBfloat16"}, {"int", "ncclInt32"},          {"unsigned int", "ncclUint32"},
      {"long", "ncclInt64"},          {"long long", "ncclInt64"},      {"unsigned long", "ncclUint64"},
      {"unsigned long long", "ncclUint64"}, {"signed char", "ncclInt8"}, {"char", "ncclInt8"},
      {"unsigned char", "ncclUint8"},
  };
  for (size_t i = 0; ctype && i < sizeof types / sizeof *types; i++)
    if (strcmp(types[i].c, ctype) == 0) return types[i].nccl;
  return NULL;
}
