// copybw.cu: the device's copy bandwidth, the yardstick for bench/gpu/run.sh.
// cudaMemcpy device to device of BYTES (default 1 GiB), 3 warm-up copies, then the
// best and the median of 20 timed with CUDA events. Prints
//   copybw bytes=B best_gbps=X median_gbps=Y
// counting the bytes read plus the bytes written (2 B per copy), the convention of
// bench/gpu/run.sh's kernel figures (every byte a kernel loads or stores).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CK(x)                                                                        \
  do {                                                                               \
    cudaError_t e_ = (x);                                                            \
    if (e_ != cudaSuccess) {                                                         \
      fprintf(stderr, "copybw: %s: %s\n", #x, cudaGetErrorString(e_));              \
      return 1;                                                                      \
    }                                                                                \
  } while (0)

int main(int argc, char **argv) {
  size_t bytes = argc > 1 ? strtoull(argv[1], nullptr, 10) : (size_t)1 << 30;
  void *a, *b;
  CK(cudaMalloc(&a, bytes));
  CK(cudaMalloc(&b, bytes));
  CK(cudaMemset(a, 1, bytes));
  CK(cudaMemset(b, 2, bytes));
  cudaEvent_t t0, t1;
  CK(cudaEventCreate(&t0));
  CK(cudaEventCreate(&t1));
  for (int i = 0; i < 3; i++) CK(cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice));
  std::vector<float> ms;
  for (int i = 0; i < 20; i++) {
    CK(cudaEventRecord(t0));
    CK(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice));
    CK(cudaEventRecord(t1));
    CK(cudaEventSynchronize(t1));
    float m = 0;
    CK(cudaEventElapsedTime(&m, t0, t1));
    ms.push_back(m);
  }
  std::sort(ms.begin(), ms.end());
  double best = 2.0 * bytes / (ms.front() * 1e-3) / 1e9, med = 2.0 * bytes / (ms[ms.size() / 2] * 1e-3) / 1e9;
  printf("copybw bytes=%zu best_gbps=%.1f median_gbps=%.1f\n", bytes, best, med);
  CK(cudaFree(a));
  CK(cudaFree(b));
  return 0;
}
