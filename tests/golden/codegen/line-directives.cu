// --line-directives: after each rewritten span that changes the number of
// lines a #line resynchronises the numbering, so compiler messages about the code that follows name the
// original file and line (coconet-cc always asks for it); a #line 1 first names
// the input from the first line on (__FILE__ too), with or without regions.
// RUN: %coconet --line-directives %s -o %t.cu
// RUN: %FileCheck %s < %t.cu
// RUN: grep -v 'pragma coconet' %s > %t-plain.cu
// RUN: %coconet --line-directives %t-plain.cu | %FileCheck --check-prefix=PLAIN %s
// RUN: %coconet-cc --target=host -c %s -o %t.o 2>&1 | %FileCheck --check-prefix=WARN %s
#include <cuda_runtime.h>
#include <nccl.h>

__global__ void scale(float *x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = a * x[i];
}

void step(float *x, int n, ncclComm_t comm, cudaStream_t s) {
#pragma coconet region name(step) split reorder
  {
    ncclAllReduce(x, x, n, ncclFloat, ncclSum, comm, s);
    scale<<<(n + 255) / 256, 256, 0, s>>>(x, 0.5f, n);
  }
}

#warning the line after the region
// CHECK: {{^}}#line 1 "{{.*}}line-directives.cu"
// CHECK-NEXT: // --line-directives: after each rewritten span
// CHECK: // coconet: end generated code for region step
// CHECK: #line 18 "{{.*}}line-directives.cu"
// CHECK-NEXT: void step(
// CHECK: // #pragma coconet region name(step) split reorder (translated by coconet)
// CHECK-NOT: #line 19
// CHECK: #line 24 "{{.*}}line-directives.cu"
// WARN: line-directives.cu:26:2: warning: {{(#warning )?}}the line after the region
// PLAIN: {{^}}#line 1 "{{.*}}line-directives.cu.tmp-plain.cu"
// PLAIN-NEXT: // --line-directives: after each rewritten span
