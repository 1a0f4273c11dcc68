// NCCL groups and streams: a split AllReduce cannot stay in the user's group
// (NCCL orders nothing inside a group) when the group is needed (here the second
// AllReduce reads the first's result), a kernel inside a group is refused,
// and a region on two streams needs events that order them.
// RUN: %expect 1 %coconet --check %s -- -DCASE_SPLIT_IN_GROUP 2>&1 | %FileCheck --check-prefix=SPLIT %s
// RUN: %expect 1 %coconet %s -o %t.cu -- -DCASE_KERNEL_IN_GROUP 2>&1 | %FileCheck --check-prefix=KERNEL %s
// RUN: test ! -e %t.cu
// RUN: %expect 1 %coconet --check %s -- -DCASE_TWO_STREAMS 2>&1 | %FileCheck --check-prefix=STREAMS %s
// RUN: %expect 1 %coconet --check %s -- -DCASE_OTHER_STREAM_EVENTS 2>&1 | %FileCheck --check-prefix=OTHER %s
// RUN: %coconet --verify=3 %s -- -DCASE_EVENTS | %FileCheck --check-prefix=EVENTS %s
// A group the schedule does not touch stays as written:
// RUN: %coconet --verify=2 %s -- -DCASE_GROUP_KEPT | %FileCheck --check-prefix=KEPT %s
#include <cuda_runtime.h>
#include <nccl.h>

__global__ void sgd(float *w, const float *g, float lr, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) w[i] -= lr * g[i];
}

void step(float *w, float *g, float *h, float lr, int n, ncclComm_t comm, cudaStream_t s, cudaStream_t s2,
          cudaEvent_t done) {
#if defined(CASE_SPLIT_IN_GROUP)
#pragma coconet region name(split_in_group) split
  {
    ncclGroupStart();
    ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, s);
    ncclAllReduce(g, h, n, ncclFloat, ncclSum, comm, s);
    ncclGroupEnd();
  }
#elif defined(CASE_KERNEL_IN_GROUP)
#pragma coconet region name(kernel_in_group) split(h) replicated(w)
  {
    ncclGroupStart();
    ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, s);
    sgd<<<(n + 255) / 256, 256, 0, s>>>(w, g, lr, n);
    ncclGroupEnd();
    ncclAllReduce(h, h, n, ncclFloat, ncclSum, comm, s);
  }
#elif defined(CASE_TWO_STREAMS)
#pragma coconet region name(two_streams) split reorder scratch(g) replicated(w)
  {
    ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, s);
    sgd<<<(n + 255) / 256, 256, 0, s2>>>(w, g, lr, n);
  }
#elif defined(CASE_OTHER_STREAM_EVENTS)
#pragma coconet region name(other_stream) split reorder scratch(g) replicated(w)
  {
    cudaEventRecord(done, s2);
    ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, s);
    sgd<<<(n + 255) / 256, 256, 0, s2>>>(w, g, lr, n);
  }
#elif defined(CASE_EVENTS)
#pragma coconet region name(events) split scratch(g)
  {
    ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, s);
    cudaEventRecord(done, s);
    cudaStreamWaitEvent(s2, done, 0);
    sgd<<<(n + 255) / 256, 256, 0, s2>>>(w, g, lr, n);
  }
#elif defined(CASE_GROUP_KEPT)
#pragma coconet region name(group_kept) split(h)
  {
    ncclGroupStart();
    ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, s);
    ncclGroupEnd();
    ncclAllReduce(h, h, n, ncclFloat, ncclSum, comm, s);
  }
#endif
}

// SPLIT: groups-streams.cu:27:5: error: split: the AllReduce of 'g' is inside ncclGroupStart()/ncclGroupEnd(); its ReduceScatter and the AllGather that reads the ReduceScatter's output cannot share a group (NCCL runs a group's calls in no order); move the AllReduce out of the group
// KERNEL: groups-streams.cu:36:5: error: 'sgd' runs inside ncclGroupStart()/ncclGroupEnd(): NCCL starts the group's collectives only at ncclGroupEnd, after this work is queued, so coconet cannot order the schedule around it; move it after ncclGroupEnd()
// KERNEL: groups-streams.cu:34:5: note: the group starts here
// STREAMS: groups-streams.cu:44:5: error: 'sgd' runs on stream 's2' but 'AllReduce' before it on stream 's', and the region orders nothing between the two streams; coconet cannot tell which work may overlap: put the region's work on one stream, or order the streams with cudaEventRecord/cudaStreamWaitEvent inside the region
// STREAMS: groups-streams.cu:43:5: note: 'AllReduce' runs on 's' here
// OTHER: groups-streams.cu:51:5: error: reorder: kernel 'sgd' runs on stream 's2' but the AllReduce of 'g' on 's'; the schedule puts them in one order on one stream, which the program as written does not have
// EVENTS: verify events: output 'w' (f32): max 0 ULP apart over 1..3 ranks x 3 inputs
// EVENTS: verify events: ok
// KEPT: verify group_kept: output 'h' (f32): max 0 ULP apart over 1..2 ranks x 3 inputs
// KEPT: verify group_kept: ok
