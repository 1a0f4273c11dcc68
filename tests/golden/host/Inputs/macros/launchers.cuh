// A launcher macro of a library header, as FasterTransformer writes them: the
// launch written in the #define's body, the kernel picked by the macro's use.
#pragma once

template <typename T, int N>
__global__ void add_n(T *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += (T)N;
}

#define LAUNCH_ADD_N(T, N, x, n, s) \
  add_n<T, N><<<((n) + 127) / 128, 128, 0, s>>>(x, \
                                                n)
