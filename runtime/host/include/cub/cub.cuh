/* coconet host backend: the part of CUB it runs (cub::BlockReduce). */
#ifndef COCONET_HOST_CUB_CUH
#define COCONET_HOST_CUB_CUH

#include "block/block_reduce.cuh"

#endif
