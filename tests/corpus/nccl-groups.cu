// Style: a trainer's gradient AllReduces issued together in one
// ncclGroupStart()/ncclGroupEnd() (one per parameter group, one communicator,
// one stream), then each group's update. coconet leaves the group out, splits
// each AllReduce on its own and moves each down to the update that reads it.
// RUN: %coconet --verify=ir:4 %s | %FileCheck --check-prefix=IR %s
// RUN: %coconet --verify=4 %s | %FileCheck --check-prefix=EXEC %s
// RUN: %coconet --explain %s | %FileCheck --check-prefix=EXPLAIN %s
// RUN: %coconet %s | %FileCheck --check-prefix=CODE %s
// Two communicators (one thread driving two devices needs the group), or one
// collective reading another's result: the group is kept, and split says why not.
// RUN: %expect 1 %coconet --check %s -- -DTWO_COMMS 2>&1 | %FileCheck --check-prefix=KEPT %s
// RUN: %expect 1 %coconet --check %s -- -DDEPENDENT 2>&1 | %FileCheck --check-prefix=KEPT %s
// A kernel passed over may reach a collective's buffer by another name (here a
// local alias): the block tests the buffers apart and runs as written if not.
// (w3 is used with two counts, n2 and n3: the harness allocates the larger.)
// RUN: %coconet %s -- -DALIAS | %FileCheck --check-prefix=ALIAS %s
// RUN: %coconet --verify=2 %s -- -DALIAS | %FileCheck --check-prefix=ALIAS_EXEC %s
#include <cuda_runtime.h>
#include <nccl.h>

#define NCCLCHECK(cmd) \
  do {                 \
    if ((cmd) != ncclSuccess) return; \
  } while (0)

__global__ void sgd(float *w, const float *g, float lr, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) w[i] -= lr * g[i];
}

__global__ void momentum(float *w, float *m, const float *g, float lr, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
    m[i] = 0.9f * m[i] + g[i];
    w[i] -= lr * m[i];
  }
}

void step(float *w1, float *g1, int n1, float *w2, float *m2, float *g2, int n2, float *w3, float *g3, int n3,
          ncclComm_t comm, ncclComm_t other, cudaStream_t s) {
  (void)other;
#ifdef ALIAS
  float *view = g2;  // the second group's gradient, under another name
#endif
#pragma coconet region name(grouped) split reorder replicated(w1, w2, w3) shard(m2) scratch(g1, g2, g3)
  {
    NCCLCHECK(ncclGroupStart());
    NCCLCHECK(ncclAllReduce(g1, g1, n1, ncclFloat, ncclSum, comm, s));
#if defined(TWO_COMMS)
    NCCLCHECK(ncclAllReduce(g2, g2, n2, ncclFloat, ncclSum, other, s));
#elif defined(DEPENDENT)
    NCCLCHECK(ncclAllReduce(g1, g2, n2, ncclFloat, ncclSum, comm, s));
#else
    NCCLCHECK(ncclAllReduce(g2, g2, n2, ncclFloat, ncclSum, comm, s));
#endif
    NCCLCHECK(ncclAllReduce(g3, g3, n3, ncclFloat, ncclAvg, comm, s));
    NCCLCHECK(ncclGroupEnd());
#ifdef ALIAS
    sgd<<<(n2 + 255) / 256, 256, 0, s>>>(view, w3, 0.5f, n2);
#endif
    sgd<<<(n1 + 255) / 256, 256, 0, s>>>(w1, g1, 0.1f, n1);
    momentum<<<120, 256, 0, s>>>(w2, m2, g2, 0.05f, n2);
    sgd<<<(n3 + 255) / 256, 256, 0, s>>>(w3, g3, 0.01f, n3);
  }
}

// IR: verify=ir grouped: ok
// EXEC: verify grouped: output 'w1' (f32): max 0 ULP apart over 1..4 ranks x 3 inputs
// EXEC: verify grouped: shard 'm2' (f32): max 0 ULP apart
// EXEC: verify grouped: output 'w2' (f32): max 0 ULP apart over 1..4 ranks x 3 inputs
// EXEC: verify grouped: output 'w3' (f32): max 0 ULP apart over 1..4 ranks x 3 inputs
// EXEC: verify grouped: ok
// EXPLAIN: explain grouped
// EXPLAIN-NEXT: - analysis: ncclGroupStart()/ncclGroupEnd() at {{.*}}nccl-groups.cu:{{[0-9]+}}:5 hold 3 collectives on one communicator and stream that do not read each other's results: the schedule leaves the group out and splits each on its own, each moved down to the first statement that uses its buffers
// EXPLAIN: reorder: kernel 'sgd' ({{.*}}nccl-groups.cu:{{[0-9]+}}:5) runs on this rank's slice of 'g1'
// EXPLAIN: reorder: kernel 'momentum' ({{.*}}nccl-groups.cu:{{[0-9]+}}:5) runs on this rank's slice of 'g2'
// EXPLAIN: reorder: kernel 'sgd' ({{.*}}nccl-groups.cu:{{[0-9]+}}:5) runs on this rank's slice of 'g3'
// The scheduled block issues the collectives in the order it runs them, with the user's check:
// CODE: {{^[^/]*}}NCCLCHECK(ncclReduceScatter(g1,
// CODE: {{^[^/]*}}coconet_grouped_slice<<<
// CODE: {{^[^/]*}}NCCLCHECK(ncclReduceScatter(g2,
// CODE: {{^[^/]*}}NCCLCHECK(ncclReduceScatter(g3,
// KEPT: error: split: the AllReduce of 'g1' is inside ncclGroupStart()/ncclGroupEnd(); its ReduceScatter and the AllGather that reads the ReduceScatter's output cannot share a group
// ALIAS: {{^[^/]*}}if (coconet_disjoint(
// ALIAS: {view, n2 * sizeof(float), true}
// ALIAS_EXEC: verify grouped: ok
// Where the buffers are not apart, the region as written runs: its group, its order.
// ALIAS: {{^ *}}} else {
// ALIAS-NEXT: {{^ *}}NCCLCHECK(ncclGroupStart());
