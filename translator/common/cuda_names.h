// cuda_names.h: the names of CUDA, NCCL and cuBLAS that the stages recognise,
// kept apart from the code that recognises them (cuda_names.c holds the
// tables). Each table ends with NULL.
#ifndef COCONET_CUDA_NAMES_H
#define COCONET_CUDA_NAMES_H

#include <stdbool.h>

// Whether name is one of table's.
bool cuda_name_in(const char *name, const char *const *table);

// The calls a region's statement is recognised by (front/classify.c).
extern const char *const NCCL_CALLS[];  // the collectives, send/recv, group start/end
extern const char *const GEMM_CALLS[];  // the cuBLAS GEMMs
extern const char *const CUDA_CALLS[];  // the asynchronous copies, memsets and events

// Loads and stores with a cache hint (__ldg, __stcs, ...): an element access each.
extern const char *const CUDA_CACHE_LOADS[];
extern const char *const CUDA_CACHE_STORES[];
// Barriers of the block (__syncthreads and its counting forms).
extern const char *const CUDA_BLOCK_BARRIERS[];
// Calls through which the threads of a warp meet: votes, __syncwarp, cooperative
// groups' tiles and reductions (the __shfl*, __match_* and __reduce_* families
// go by their prefixes).
extern const char *const CUDA_WARP_CALLS[];
// Warp intrinsics without _sync (legacy shuffles and votes) and __activemask.
extern const char *const CUDA_LEGACY_WARP_CALLS[];
// What cooperative_groups offers without synchronizing: the group queries.
extern const char *const CUDA_GROUP_QUERIES[];
// Words in the names of cuda:: (libcu++) barriers, latches, semaphores and pipelines.
extern const char *const CUDA_SYNC_WORDS[];
// The built-in variables a thread's place in the grid is read from.
extern const char *const CUDA_BUILTINS[];
// CUDA and NCCL calls that only read state (cudaGetDevice, cudaGetErrorString): they change nothing.
extern const char *const CUDA_QUERIES[];
// The C library's math functions a host computes without side effects (powf, sqrt, ceil, ...).
extern const char *const HOST_PURE_MATH[];

// The ncclDataType_t enumerator of a C element type as clang spells it
// ("float" -> "ncclFloat", "__nv_bfloat16" -> "ncclBfloat16"), or NULL.
const char *cuda_nccl_type_of(const char *ctype);

#endif
