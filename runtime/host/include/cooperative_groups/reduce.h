/* coconet host backend: cooperative_groups::reduce over a tile, with CUDA's
 * butterfly order (lane i combines with lane i ^ N/2, then i ^ N/4, ...). */
#ifndef COCONET_HOST_COOPERATIVE_GROUPS_REDUCE_H
#define COCONET_HOST_COOPERATIVE_GROUPS_REDUCE_H

#include "../cooperative_groups.h"

namespace cooperative_groups {

template <unsigned N, class T, class Op>
inline T reduce(const thread_block_tile<N> &g, T value, Op op) {
  for (unsigned mask = N >> 1; mask > 0; mask >>= 1) value = op(value, g.shfl_xor(value, mask));
  return value;
}

}  // namespace cooperative_groups

#endif
