/* coconet host backend: cooperative groups for one block: thread_block,
 * thread_block_tile<N> (N a power of two up to 32) and tiled_partition<N>.
 * Their syncs and shuffles are the __syncthreads/__*_sync operations, so a
 * kernel that uses them must be launched with COCONET_HOST_SYNC.
 * grid_group::sync() needs a cooperative launch and aborts. */
#ifndef COCONET_HOST_COOPERATIVE_GROUPS_H
#define COCONET_HOST_COOPERATIVE_GROUPS_H

#include "coconet_host_device.h"
#include "vector_types.h"

namespace cooperative_groups {

namespace details {
inline unsigned block_thread_rank() { return (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x; }
inline unsigned block_num_threads() { return blockDim.x * blockDim.y * blockDim.z; }
}  // namespace details

class thread_block {
 public:
  void sync() const { __syncthreads(); }
  unsigned long long thread_rank() const { return details::block_thread_rank(); }
  unsigned long long size() const { return details::block_num_threads(); }
  unsigned long long num_threads() const { return details::block_num_threads(); }
  dim3 group_index() const { return dim3(blockIdx); }
  dim3 thread_index() const { return dim3(threadIdx); }
  dim3 group_dim() const { return blockDim; }
  dim3 dim_threads() const { return blockDim; }
};

inline thread_block this_thread_block() { return thread_block(); }
inline void sync(const thread_block &g) { g.sync(); }

class grid_group {
 public:
  void sync() const {
    coconet_host::device_trap("cooperative_groups::grid_group::sync() (needs a cooperative launch)");
  }
  unsigned long long thread_rank() const {
    const unsigned long long block = (blockIdx.z * gridDim.y + blockIdx.y) * (unsigned long long)gridDim.x + blockIdx.x;
    return block * details::block_num_threads() + details::block_thread_rank();
  }
  unsigned long long size() const {
    return (unsigned long long)gridDim.x * gridDim.y * gridDim.z * details::block_num_threads();
  }
  unsigned long long num_threads() const { return size(); }
  bool is_valid() const { return false; }
};

inline grid_group this_grid() { return grid_group(); }

/* A tile of N consecutive threads of a warp. */
template <unsigned N>
class thread_block_tile {
  static_assert(N >= 1 && N <= 32 && (N & (N - 1)) == 0, "thread_block_tile size must be a power of two <= 32");

  static unsigned lane() { return details::block_thread_rank() % 32; }
  static unsigned first_lane() { return lane() & ~(N - 1); }

 public:
  static unsigned mask() { return (N == 32 ? 0xffffffffu : ((1u << N) - 1)) << first_lane(); }
  void sync() const { __syncwarp(mask()); }
  unsigned long long thread_rank() const { return lane() % N; }
  static constexpr unsigned long long size() { return N; }
  static constexpr unsigned long long num_threads() { return N; }
  unsigned long long meta_group_rank() const { return details::block_thread_rank() / N; }
  unsigned long long meta_group_size() const { return (details::block_num_threads() + N - 1) / N; }
  template <class T>
  T shfl(T var, int srcRank) const {
    return __shfl_sync(mask(), var, srcRank, N);
  }
  template <class T>
  T shfl_down(T var, unsigned delta) const {
    return __shfl_down_sync(mask(), var, delta, N);
  }
  template <class T>
  T shfl_up(T var, unsigned delta) const {
    return __shfl_up_sync(mask(), var, delta, N);
  }
  template <class T>
  T shfl_xor(T var, unsigned laneMask) const {
    return __shfl_xor_sync(mask(), var, (int)laneMask, N);
  }
  int any(int predicate) const { return __any_sync(mask(), predicate); }
  int all(int predicate) const { return __all_sync(mask(), predicate); }
  unsigned ballot(int predicate) const { return __ballot_sync(mask(), predicate) >> first_lane(); }
  template <class T>
  unsigned match_any(T value) const {
    return __match_any_sync(mask(), value) >> first_lane();
  }
  template <class T>
  unsigned match_all(T value, int &pred) const {
    return __match_all_sync(mask(), value, &pred) >> first_lane();
  }
};

template <unsigned N, class Parent>
inline thread_block_tile<N> tiled_partition(const Parent &) {
  return thread_block_tile<N>();
}

template <unsigned N>
inline void sync(const thread_block_tile<N> &g) {
  g.sync();
}

template <class T>
struct plus {
  T operator()(const T &a, const T &b) const { return a + b; }
};
template <class T>
struct less {
  T operator()(const T &a, const T &b) const { return b < a ? b : a; }
};
template <class T>
struct greater {
  T operator()(const T &a, const T &b) const { return a < b ? b : a; }
};
template <class T>
struct bit_and {
  T operator()(const T &a, const T &b) const { return a & b; }
};
template <class T>
struct bit_or {
  T operator()(const T &a, const T &b) const { return a | b; }
};
template <class T>
struct bit_xor {
  T operator()(const T &a, const T &b) const { return a ^ b; }
};

}  // namespace cooperative_groups

#endif
