// A harness that does not link says what is missing: the linker's "undefined reference"
// line (a constructor defined in a file the command line does not give), not only
// "ld returned 1"; and how to keep the harness to look at it.
// RUN: %expect 1 %coconet --verify=2 %s 2>&1 | %FileCheck %s
#include <nccl.h>
struct Logger {
  Logger();  // defined in another file of the program
  static Logger &get() {
    static Logger l;
    return l;
  }
};
__global__ void scale(float *x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= a;
}
void step(float *g, int n, ncclComm_t comm, cudaStream_t s) {
  Logger::get();
#pragma coconet region name(r) split reorder scratch(g)
  {
    ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, s);
    scale<<<(n + 255) / 256, 256, 0, s>>>(g, 0.5f, n);
  }
}
// CHECK: coconet: error: --verify: the harness does not build ({{.*}}harness.cpp, kept with COCONET_VERIFY_KEEP=1); the compiler said:
// CHECK-NEXT: undefined reference to `Logger::Logger()'
// CHECK-NEXT: ld returned 1 exit status
