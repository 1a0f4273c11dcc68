// pipeline(tag=T[, group=C]): a sending region sends each rank's slice of a
// buffer split reorder computes on slices and gathers; a receiving region
// receives the peer's slice and gathers on its own group. What would send
// something else than the ncclSend as written is refused, with the reason.
// RUN: %coconet %s -o - -- -DCASE_OK | grep -v "^// " | %FileCheck --check-prefix=OK %s
// RUN: %coconet %s -o - -- -DCASE_LIVE | grep -v "^// " | %FileCheck --check-prefix=LIVE %s
// The interpreter compares what each rank's peer receives, as written and as scheduled:
// RUN: %coconet --verify=ir:3 %s -- -DCASE_OK | %FileCheck --check-prefix=VERIFY %s
// RUN: %expect 1 %coconet %s -o %t.cu -- -DCASE_LOCAL 2>&1 | %FileCheck --check-prefix=LOCAL %s
// RUN: test ! -e %t.cu
// RUN: %expect 1 %coconet --check %s -- -DCASE_UNSPLIT 2>&1 | %FileCheck --check-prefix=UNSPLIT %s
// RUN: %expect 1 %coconet --check %s -- -DCASE_GROUPED 2>&1 | %FileCheck --check-prefix=GROUPED %s
// RUN: %expect 1 %coconet --check %s -- -DCASE_HALF 2>&1 | %FileCheck --check-prefix=HALF %s
// RUN: %expect 1 %coconet --check %s -- -DCASE_RECV_NO_GROUP 2>&1 | %FileCheck --check-prefix=RECV-NO-GROUP %s
// RUN: %expect 1 %coconet --check %s -- -DCASE_SEND_GROUP 2>&1 | %FileCheck --check-prefix=SEND-GROUP %s
// RUN: %expect 1 %coconet --check %s -- -DCASE_NONE 2>&1 | %FileCheck --check-prefix=NONE %s
// RUN: %expect 1 %coconet --check %s -- -DCASE_NO_TAG 2>&1 | %FileCheck --check-prefix=NO-TAG %s
// RUN: %expect 1 %coconet --check %s -- -DCASE_BAD_KEY 2>&1 | %FileCheck --check-prefix=BAD-KEY %s
#include <cuda_runtime.h>
#include <nccl.h>

__global__ void bias_relu(float *out, const float *y, const float *bias, int n, int hidden) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    out[i] = fmaxf(y[i] + bias[i % hidden], 0.0f);
}

void send_stage(float *y, float *h, const float *bias, int n, int hidden, int next, ncclComm_t tp, ncclComm_t world,
                cudaStream_t s) {
#if defined(CASE_OK)
#pragma coconet region name(fwd) split reorder replicated(bias) scratch(h) pipeline(tag=act)
#elif defined(CASE_LIVE)
#pragma coconet region name(fwd) split reorder replicated(bias) pipeline(tag=act)
#elif defined(CASE_LOCAL)
#pragma coconet region name(fwd) split reorder scratch(h) pipeline(tag=act)
#elif defined(CASE_UNSPLIT)
#pragma coconet region name(fwd) replicated(bias) pipeline(tag=act)
#elif defined(CASE_SEND_GROUP)
#pragma coconet region name(fwd) split reorder replicated(bias) scratch(h) pipeline(tag=act, group=tp)
#elif defined(CASE_NONE)
#pragma coconet region name(fwd) split reorder replicated(bias) scratch(h) pipeline(tag=act)
#elif defined(CASE_NO_TAG)
#pragma coconet region name(fwd) split reorder pipeline(group=tp)
#elif defined(CASE_BAD_KEY)
#pragma coconet region name(fwd) split reorder pipeline(tag=act, chunks=2)
#else
#pragma coconet region name(fwd) split reorder replicated(bias) scratch(h) pipeline(tag=act)
#endif
  {
    ncclAllReduce(y, y, n, ncclFloat, ncclSum, tp, s);
    bias_relu<<<(n + 255) / 256, 256, 0, s>>>(h, y, bias, n, hidden);
#if defined(CASE_GROUPED)
    ncclGroupStart();
    ncclSend(h, n, ncclFloat, next, world, s); ncclSend(y, n, ncclFloat, next, world, s);
    ncclGroupEnd();
#elif defined(CASE_HALF)
    ncclSend(h, n / 2, ncclFloat, next, world, s);
#elif !defined(CASE_NONE)
    ncclSend(h, n, ncclFloat, next, world, s);
#endif
  }
}

void recv_stage(float *x, int n, int prev, ncclComm_t tp, ncclComm_t world, cudaStream_t s) {
#if defined(CASE_RECV_NO_GROUP)
#pragma coconet region name(bwd) pipeline(tag=act)
#else
#pragma coconet region name(bwd) pipeline(tag=act, group=tp)
#endif
  {
    ncclRecv(x, n, ncclFloat, prev, world, s);
  }
}

// The sender's slice of h and the tail, over tp's ranks; h is scratch, so not gathered.
// OK:      static coconet_pipe_state coconet_fwd_pipe;
// OK:      // coconet: split reorder replicated(bias) scratch(h) pipeline(tag=act): ReduceScatter(y) ->
// OK-NEXT:      // bias_relu on this rank's slice -> AllGather(y) -> Send(h) of this rank's slice
// OK:      coconet_comm_info(tp, &coconet_rank, &coconet_nranks);
// OK-NEXT: const coconet_part coconet_p = coconet_slice(n, coconet_rank, coconet_nranks);
// OK-NOT:  {{^ *}}ncclAllGather(h
// OK:      ncclAllGather(y + coconet_p.slice_lo, y, coconet_p.s, ncclFloat, tp, s)
// OK-NOT:  {{^ *}}ncclAllGather(h
// OK:      // coconet: pipeline(tag=act): this rank's slice of h and the tail to its peer
// OK-NEXT:    coconet_pipe_send(&coconet_fwd_pipe, h, sizeof(float), n, coconet_p, coconet_rank,
// OK-NEXT:                      coconet_nranks, ncclFloat, next, world, s, "act", 58);
// OK-NOT:  {{^ *}}ncclSend(
// OK:      static coconet_pipe_state coconet_bwd_pipe;
// OK:      // coconet: pipeline(tag=act, group=tp): Recv(x) of the peer's slice -> AllGather(x) on tp
// OK:      coconet_pipe_recv(&coconet_bwd_pipe, x, sizeof(float), n, ncclFloat, prev, world, tp, s, "act",
// OK-NEXT:                        __FILE__, 70);
// OK-NOT:  {{^ *}}ncclRecv(

// VERIFY: verify=ir fwd: what the ncclSend of 'h' (line 58) sends (each rank's slice and the tail, as its peer's group assembles them): max relative error 0 over 1..3 ranks x 3 inputs
// VERIFY: verify=ir fwd: ok
// VERIFY: verify=ir bwd: the ncclRecv of 'x' (line 70) is modelled as receiving the same data on every rank (what a pipeline sender sends); the host backend runs the exchange itself
// VERIFY: verify=ir bwd: ok

// h is live after the region: its AllGather stays, the Send still sends the slice.
// LIVE:      ncclAllGather(h + coconet_p.slice_lo, h, coconet_p.s, ncclFloat, tp, s)
// LIVE:      coconet_pipe_send(&coconet_fwd_pipe, h, sizeof(float), n, coconet_p,

// LOCAL: pipeline.cu:58:5: error: pipeline: 'h' may differ from rank to rank of the sending group here, so sending each rank's slice would not send what this ncclSend sends; it must be computed from reduced values, the element index, scalars and buffers declared replicated(...)
// LOCAL: pipeline.cu:34:59: note: pipeline(tag=act) is requested here

// UNSPLIT: pipeline.cu:58:5: error: pipeline: 'h' is not gathered by split reorder before this ncclSend
// UNSPLIT: pipeline.cu:50:5: note: 'h' is last written here, by 'bias_relu'

// GROUPED: pipeline.cu:53:5: error: pipeline: this ncclSend is inside ncclGroupStart()/ncclGroupEnd(); a pipeline exchange checks its header before it receives the slices, which a group would defer to ncclGroupEnd: move the ncclSend out of the group

// HALF: pipeline.cu:56:5: error: pipeline: this ncclSend's count or datatype is not that of the AllGather of 'h' (n, ncclFloat); send the whole buffer, in its own datatype

// RECV-NO-GROUP: pipeline.cu:65:34: error: pipeline: region 'bwd' receives with ncclRecv, so pipeline needs 'group=COMM'
// RECV-NO-GROUP: pipeline.cu:70:5: note: the ncclRecv is here

// SEND-GROUP: pipeline.cu:38:100: error: pipeline: 'group=' is for a region that receives; region 'fwd' only sends

// NONE: pipeline.cu:40:76: error: pipeline: region 'fwd' has no ncclSend or ncclRecv

// NO-TAG: pipeline.cu:42:48: error: 'pipeline' needs 'tag=NAME'

// BAD-KEY: pipeline.cu:44:66: error: unknown key 'chunks' in 'pipeline('; expected 'tag' or 'group'
