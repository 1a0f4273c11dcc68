/* coconet host backend: cub::BlockReduce, a block-wide reduction whose result
 * thread 0 gets (as on a GPU, other threads get no defined value: here their
 * own input). Every thread of the block stores its input in TempStorage, and
 * after a barrier thread 0 combines them in thread order; a second barrier
 * lets the storage be reused. Without num_valid the block must have the
 * BLOCK_DIM_X x BLOCK_DIM_Y x BLOCK_DIM_Z threads the type names; with it, at
 * most that many, and num_valid at most the block's threads (on a GPU other
 * shapes give wrong sums): otherwise the kernel stops with a message. */
#ifndef COCONET_HOST_CUB_BLOCK_REDUCE_CUH
#define COCONET_HOST_CUB_BLOCK_REDUCE_CUH

#include <cuda_runtime.h>

#include <stdio.h>

namespace cub {

enum BlockReduceAlgorithm {
  BLOCK_REDUCE_RAKING_COMMUTATIVE_ONLY,
  BLOCK_REDUCE_RAKING,
  BLOCK_REDUCE_WARP_REDUCTIONS,
};

template <typename T, int BLOCK_DIM_X, BlockReduceAlgorithm ALGORITHM = BLOCK_REDUCE_WARP_REDUCTIONS,
          int BLOCK_DIM_Y = 1, int BLOCK_DIM_Z = 1>
class BlockReduce {
  static constexpr int BLOCK_THREADS = BLOCK_DIM_X * BLOCK_DIM_Y * BLOCK_DIM_Z;
  struct Items {
    T item[BLOCK_THREADS];
  };

 public:
  struct TempStorage {
    Items items;
  };

  __device__ BlockReduce() : items_(private_storage().items) {}
  __device__ explicit BlockReduce(TempStorage &temp_storage) : items_(temp_storage.items) {}

  template <typename ReductionOp>
  __device__ T Reduce(T input, ReductionOp reduction_op) {
    return reduce(input, reduction_op, BLOCK_THREADS, true);
  }

  template <typename ReductionOp>
  __device__ T Reduce(T input, ReductionOp reduction_op, int num_valid) {
    return reduce(input, reduction_op, num_valid, false);
  }

  template <int ITEMS_PER_THREAD, typename ReductionOp>
  __device__ T Reduce(T (&inputs)[ITEMS_PER_THREAD], ReductionOp reduction_op) {
    T partial = inputs[0];
    for (int i = 1; i < ITEMS_PER_THREAD; i++) partial = reduction_op(partial, inputs[i]);
    return Reduce(partial, reduction_op);
  }

  __device__ T Sum(T input) { return Reduce(input, plus); }
  __device__ T Sum(T input, int num_valid) { return Reduce(input, plus, num_valid); }
  template <int ITEMS_PER_THREAD>
  __device__ T Sum(T (&inputs)[ITEMS_PER_THREAD]) {
    return Reduce(inputs, plus);
  }

 private:
  template <typename ReductionOp>
  T reduce(T input, ReductionOp reduction_op, int num_valid, bool full) {
    int tid = check_block(num_valid, full);
    if (tid < num_valid) items_.item[tid] = input;
    __syncthreads();
    T result = input;
    if (tid == 0)
      for (int i = 1; i < num_valid && i < BLOCK_THREADS; i++) result = reduction_op(result, items_.item[i]);
    __syncthreads();
    return result;
  }

  static T plus(const T &a, const T &b) { return a + b; }

  static TempStorage &private_storage() {
    static thread_local TempStorage storage;  // one block at a time per OS thread, like __shared__
    return storage;
  }

  // This thread's rank in the block, which must have the type's shape (full)
  // or at most its threads and num_valid of them.
  static int check_block(int num_valid, bool full) {
    int threads = (int)(blockDim.x * blockDim.y * blockDim.z);
    bool shape = (int)blockDim.x == BLOCK_DIM_X && (int)blockDim.y == BLOCK_DIM_Y && (int)blockDim.z == BLOCK_DIM_Z;
    if (full ? !shape : threads > BLOCK_THREADS || num_valid > threads) {
      char what[200];
      int len = snprintf(what, sizeof what, "cub::BlockReduce for blocks of %d x %d x %d threads in a block of %u x %u x %u",
                         BLOCK_DIM_X, BLOCK_DIM_Y, BLOCK_DIM_Z, blockDim.x, blockDim.y, blockDim.z);
      if (!full) snprintf(what + len, sizeof what - (size_t)len, " with num_valid %d", num_valid);
      coconet_host::device_trap(what);
    }
    return (int)((threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x);
  }

  Items &items_;
};

}  // namespace cub

#endif
