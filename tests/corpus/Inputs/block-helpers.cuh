// A block-wide max a project keeps in its own header (template-block-reduce.cu's
// HEADER_HELPER case): coconet does not read helpers outside the translated file.
#pragma once

__device__ inline float header_block_max(float v) {
  __shared__ float parked[32];
  for (int step = 16; step > 0; step /= 2) v = fmaxf(v, __shfl_xor_sync(0xFFFFFFFF, v, step));
  if (threadIdx.x % 32 == 0) parked[threadIdx.x / 32] = v;
  __syncthreads();
  v = threadIdx.x < blockDim.x / 32 ? parked[threadIdx.x] : -INFINITY;
  for (int step = 16; step > 0; step /= 2) v = fmaxf(v, __shfl_xor_sync(0xFFFFFFFF, v, step));
  return v;
}
