// A directive error: coconet-cc stops with the translator's diagnostic.
#include <nccl.h>

void f(float *g, int n, ncclComm_t comm, cudaStream_t s) {
#pragma coconet region frobnicate
  {
    ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, s);
  }
}
int main() { return 0; }
