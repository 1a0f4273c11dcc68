// A project's NCCL helpers: each returns NCCL's result for the caller to check.
#pragma once
#include <cstdio>
#include <nccl.h>

namespace comm {

template <typename T> ncclDataType_t nccl_type();
template <> inline ncclDataType_t nccl_type<float>() { return ncclFloat; }
template <> inline ncclDataType_t nccl_type<double>() { return ncclDouble; }

// Returns the collective's result directly; the reduction is a default argument.
inline ncclResult_t all_reduce_op(float *buf, size_t count, ncclComm_t comm, cudaStream_t stream,
                                  ncclRedOp_t op = ncclSum) {
  return ncclAllReduce(buf, buf, count, ncclFloat, op, comm, stream);
}

// Calls another helper, keeps its result in a local and logs a failure.
inline ncclResult_t all_reduce_logged(float *buf, size_t count, ncclComm_t comm, cudaStream_t stream) {
  ncclResult_t r = all_reduce_op(buf, count, comm, stream);
  if (r != ncclSuccess) fprintf(stderr, "all_reduce_logged: %s\n", ncclGetErrorString(r));
  return r;
}

// Logs a failure, then returns the result.
template <typename T>
ncclResult_t all_reduce(T *buf, size_t count, ncclComm_t comm, cudaStream_t stream) {
  ncclResult_t r = ncclAllReduce((const void *)buf, (void *)buf, count, nccl_type<T>(), ncclSum, comm, stream);
  if (r != ncclSuccess) fprintf(stderr, "all_reduce of %zu elements: %s\n", count, ncclGetErrorString(r));
  return r;
}

#if defined(COUNTED)
int g_all_reduces = 0;
// Counts its calls in a local's initializer: the generated code, which does not call it, would not count.
inline ncclResult_t all_reduce_counted(float *buf, size_t count, ncclComm_t comm, cudaStream_t stream) {
  const int call = ++g_all_reduces;
  (void)call;
  return ncclAllReduce(buf, buf, count, ncclFloat, ncclSum, comm, stream);
}
#endif

#if defined(COUNTED_AFTER)
int g_reduced = 0;
// Counts after the helper it calls: the statement in the way is this function's.
inline ncclResult_t all_reduce_noted(float *buf, size_t count, ncclComm_t comm, cudaStream_t stream) {
  ncclResult_t r = all_reduce_op(buf, count, comm, stream);
  g_reduced++;
  return r;
}
#endif

#if defined(DEFAULT_EFFECTS)
int g_reductions = 0;
inline ncclRedOp_t counted_op() { return ++g_reductions > 0 ? ncclSum : ncclMax; }
// Its default argument counts: the generated code, which does not call it, would not count.
inline ncclResult_t all_reduce_counted_op(float *buf, size_t count, ncclComm_t comm, cudaStream_t stream,
                                          ncclRedOp_t op = counted_op()) {
  return ncclAllReduce(buf, buf, count, ncclFloat, op, comm, stream);
}
#endif

#if defined(OTHER_RETURN)
// Folds every failure into one code: what it returns is not the collective's result.
inline ncclResult_t all_reduce_folded(float *buf, size_t count, ncclComm_t comm, cudaStream_t stream) {
  return ncclAllReduce(buf, buf, count, ncclFloat, ncclSum, comm, stream) == ncclSuccess ? ncclSuccess
                                                                                          : ncclSystemError;
}
#endif

}  // namespace comm
