// Style: a project's NCCL function that logs (Inputs/logged/comm.h: a debug
// macro at its start and end, a datatype trait that logs, a counter of its
// calls), then a launcher. Those statements read none of the function's
// parameters and reach no kernel, CUDA or NCCL call: the schedule runs them as
// written in a copy of their own (a namespace of the region's inside the
// function's), once, before the ReduceScatter, and runs the region equal to the
// program as written. With fuse alone (-DONESHOT), the one-shot kernel's branch
// calls the copy, and its fallback calls the function as written. A wrapper
// this file defines in the namespace of the region's function, before it
// (region `local`), gets its copy beside that function, inside the namespace.
// The nearest refusals: a log line that reads a parameter (READS_PARAM), one
// that synchronizes the device (DEVICE), one calling a function whose body
// coconet does not see (UNSEEN), a launcher that logs (LAUNCHER_LOGS: the copy
// is for a collective's function), a debug macro the file #defines again before
// the region (REDEFINED), an argument with side effects after the logging call
// (HOISTED); after the collective, a call through a std::function (-DHOOK), a
// temporary whose destructor launches (-DDESTRUCTOR), a throw written there
// (-DTHROWS: in the copy it would come before the collective), a change of the
// global the region passes as the count (-DGLOBAL_COUNT: the copy runs before
// the collective reads it), an #ifdef inside the statement (-DDIRECTIVE).
// RUN: %coconet --verify=3 %s -- -I%S/Inputs 2>&1 | %FileCheck --check-prefix=EXEC %s
// RUN: %coconet %s -- -I%S/Inputs | %FileCheck --check-prefix=CODE %s
// RUN: %coconet --verify=2 %s -- -I%S/Inputs -DONESHOT 2>&1 | %FileCheck --check-prefix=EXEC %s
// RUN: %coconet %s -- -I%S/Inputs -DONESHOT | %FileCheck --check-prefix=ONESHOT %s
// RUN: %expect 1 %coconet --check %s -- -I%S/Inputs -DREADS_PARAM 2>&1 | %FileCheck --check-prefix=PARAM %s
// RUN: %expect 1 %coconet --check %s -- -I%S/Inputs -DDEVICE 2>&1 | %FileCheck --check-prefix=DEVICE %s
// RUN: %expect 1 %coconet --check %s -- -I%S/Inputs -DUNSEEN 2>&1 | %FileCheck --check-prefix=UNSEEN %s
// RUN: %expect 1 %coconet --check %s -- -I%S/Inputs -DLAUNCHER_LOGS 2>&1 | %FileCheck --check-prefix=LAUNCHER %s
// RUN: %expect 1 %coconet %s -o %t.cu -- -I%S/Inputs -DREDEFINED 2>&1 | %FileCheck --check-prefix=REDEFINED %s
// RUN: test ! -e %t.cu
// RUN: %expect 1 %coconet --check %s -- -I%S/Inputs -DHOISTED 2>&1 | %FileCheck --check-prefix=HOISTED %s
// RUN: %expect 1 %coconet --check %s -- -I%S/Inputs -DHOOK 2>&1 | %FileCheck --check-prefix=HOOK %s
// RUN: %expect 1 %coconet --check %s -- -I%S/Inputs -DDESTRUCTOR 2>&1 | %FileCheck --check-prefix=DTOR %s
// RUN: %expect 1 %coconet --check %s -- -I%S/Inputs -DTHROWS 2>&1 | %FileCheck --check-prefix=THROWS %s
// RUN: %expect 1 %coconet --check %s -- -I%S/Inputs -DGLOBAL_COUNT 2>&1 | %FileCheck --check-prefix=GCOUNT %s
// RUN: %expect 1 %coconet --check %s -- -I%S/Inputs -DDIRECTIVE 2>&1 | %FileCheck --check-prefix=DIRECTIVE %s
#include "logged/comm.h"

#if defined(REDEFINED)
#undef PROJ_DEBUG
#define PROJ_DEBUG(...) std::fprintf(stderr, __VA_ARGS__)
#endif

#if defined(HOISTED)
static float next_scale(int &calls) { return 0.5f + 0.25f * ++calls; }
#endif

void grad_step(float *g, const float *b, size_t n, ncclComm_t comm, cudaStream_t stream) {
#if defined(HOISTED)
  int calls = 0;
#endif
#if defined(ONESHOT)
#pragma coconet region name(step) fuse replicated(b)
#else
#pragma coconet region name(step) split reorder replicated(b)
#endif
  {
#if defined(GLOBAL_COUNT)
    proj::all_reduce_sum(g, proj::g_count, comm, stream);
#else
    proj::all_reduce_sum(g, n, comm, stream);
#endif
#if defined(HOISTED)
    proj::scale_add<float><<<(n + 255) / 256, 256, 0, stream>>>(g, b, next_scale(calls), n);
#else
    proj::invoke_scale_add(g, b, 0.5f, n, stream);
#endif
  }
}

namespace trainer {

template <typename T>
void sum_grads(T *g, size_t n, ncclComm_t comm, cudaStream_t stream) {
  PROJ_DEBUG("sum_grads");
  ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, stream);
}

void local_step(float *g, const float *b, size_t n, ncclComm_t comm, cudaStream_t stream) {
#pragma coconet region name(local) split reorder replicated(b)
  {
    sum_grads(g, n, comm, stream);
    proj::invoke_scale_add(g, b, 0.25f, n, stream);
  }
}

}  // namespace trainer

// EXEC: verify step: ok
// EXEC: verify local: ok
// CODE: // coconet: region step runs what 'all_reduce_sum<float>' (comm.h:{{[0-9]+}}) runs besides its collective,
// CODE-NEXT: // its own statements (comm.h:{{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}), in this copy
// CODE: namespace proj {
// CODE-NEXT: namespace coconet_step_1 {
// CODE-NEXT: typedef float T;
// CODE-NEXT: static void all_reduce_sum()
// CODE-NEXT: {
// CODE-NEXT:   PROJ_DEBUG("all_reduce_sum start");
// CODE-NEXT:   {{\[\[}}maybe_unused]] const ncclDataType_t type = nccl_type_of<T>();
// CODE-NEXT:   PROJ_DEBUG("all_reduce_sum stop");
// CODE-NEXT:   count_collective();
// CODE-NEXT: }
// CODE-NEXT: }  // namespace coconet_step_1
// CODE-NEXT: }  // namespace proj
// CODE: ::proj::coconet_step_1::all_reduce_sum();
// CODE-NEXT: int coconet_rank, coconet_nranks;
// CODE: ncclReduceScatter(
// CODE: // coconet: begin generated code for region local, beside its function
// CODE: // coconet: region local runs what 'sum_grads<float>' (logged-wrappers.cu:{{[0-9]+}}) runs besides its
// CODE: namespace coconet_local_1 {
// CODE-NEXT: typedef float T;
// CODE-NEXT: static void sum_grads()
// CODE-NEXT: {
// CODE-NEXT:   PROJ_DEBUG("sum_grads");
// CODE-NEXT: }
// CODE-NEXT: }  // namespace coconet_local_1
// CODE: ::trainer::coconet_local_1::sum_grads();
// PARAM: note: the call of 'all_reduce_sum<float>' ({{.*}}comm.h:{{[0-9]+}}:{{[0-9]+}}) is not seen through as the kernel launch or collective inside it: its body has a statement that is not an initialized local, a launch, an NCCL collective or group call, a call of such a function, or one coconet can run beside its collective ('PROJ_DEBUG("all_reduce_sum of %zu", n)' at comm.h:{{[0-9]+}}: it reads parameter 'n' of the function)
// DEVICE: ('cudaDeviceSynchronize()' at comm.h:{{[0-9]+}}: it calls 'cudaDeviceSynchronize', which may touch the device)
// UNSEEN: ('trace_event("all_reduce_sum")' at comm.h:{{[0-9]+}}: it calls 'trace_event', whose body coconet does not see (it may launch a kernel or copy to the device))
// LAUNCHER: note: the call of 'invoke_scale_add<float>' ({{.*}}comm.h:{{[0-9]+}}:{{[0-9]+}}) is not seen through as the kernel launch or collective inside it: its body has a statement that is not an initialized local, a launch, an NCCL collective or group call, a call of such a function, or one coconet can run beside its collective ('PROJ_DEBUG("invoke_scale_add")' at comm.h:{{[0-9]+}}: coconet runs such statements beside a collective, not a launch)
// REDEFINED: error: region 'step': 'all_reduce_sum<float>' (comm.h:{{[0-9]+}}) runs statements besides its ncclAllReduce (comm.h:{{[0-9]+}}), which the schedule runs in a copy above the region's function; the copy could mean something else: they use macro 'PROJ_DEBUG'
// HOISTED: error: 'next_scale(calls)' has side effects; the schedule evaluates it once at the top of region 'step', before a statement coconet does not see into: compute it into a local before the region
// HOISTED: note: this statement comes first: 'all_reduce_sum<float>' runs statements besides its ncclAllReduce (comm.h:{{[0-9]+}})
// ONESHOT: if (coconet_fused_ready(
// ONESHOT: ::proj::coconet_step_1::all_reduce_sum();
// ONESHOT: } else {
// ONESHOT-NEXT: proj::all_reduce_sum(g, n, comm, stream);
// HOOK: ('if (after_hook) after_hook()' at comm.h:{{[0-9]+}}: it reads 'after_hook', a pointer to a function or a function object, whose target coconet does not see)
// DTOR: ('Span()' at comm.h:{{[0-9]+}}: it launches kernel 'mark')
// THROWS: at comm.h:{{[0-9]+}}: it may throw, which in the copy comes before the collective, as written after it)
// GCOUNT: error: region 'step': 'all_reduce_sum<float>' runs statements besides its ncclAllReduce, which the schedule runs before the collective reads its arguments; the one at comm.h:{{[0-9]+}} may change 'g_count', which this argument reads: compute it into a local before the region
// DIRECTIVE: it holds a preprocessor directive, which the copy would read again where it goes)
