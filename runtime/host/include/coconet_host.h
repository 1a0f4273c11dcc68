/* coconet host backend: what the translator's host output calls.
 *
 *   k<<<grid, block, shmem, stream>>>(a, b)
 *     becomes  coconet_host_launch(COCONET_HOST_SIMPLE or COCONET_HOST_SYNC,
 *                                  k, grid, block, shmem, stream, a, b)
 *   extern __shared__ T name[];
 *     becomes  T *name = (T *)coconet_host_dynamic_shared();
 *
 * COCONET_HOST_SIMPLE runs every CUDA thread of the grid as one iteration of a
 * plain loop (the fast path; legal only when no thread can reach a barrier or
 * a warp-collective operation).  COCONET_HOST_SYNC runs the threads of a block
 * as fibers that switch at __syncthreads, __syncwarp, shuffles, votes and
 * cooperative-groups syncs.  Blocks always run one after the other, in x, y, z
 * order, on the calling OS thread; the launch returns when the grid is done.
 * README.md spells out the whole contract. */
#ifndef COCONET_HOST_H
#define COCONET_HOST_H

#include <stddef.h>

#include "device_launch_parameters.h"
#include "driver_types.h"

#define COCONET_HOST_SIMPLE 1
#define COCONET_HOST_SYNC 2

typedef struct ncclComm *ncclComm_t;

#ifdef __cplusplus
extern "C" {
#endif

/* This block's dynamic shared memory (the launch's shmem bytes, 128-byte aligned). */
void *coconet_host_dynamic_shared(void);

/* Where rank peer maps the symmetric-memory window that contains local_ptr
 * (registered with ncclCommWindowRegister on comm); aborts if there is none. */
void *coconet_host_peer_ptr(ncclComm_t comm, void *local_ptr, int peer);

/* A fused kernel's call site (coconet_fused_ready), compared across the ranks of
 * comm like a collective: a rank that takes the NCCL path instead, or a buffer
 * at another offset of its window (the fused kernel would read the wrong
 * elements), ends the job with every rank's call. */
void coconet_host_fused_check(ncclComm_t comm, const char *region, int nbufs, const size_t *offsets);

#ifdef __cplusplus
}

#include <tuple>
#include <utility>

namespace coconet_host {

/* A launch site, for messages: source position and the launch's argument text. */
struct launch_site {
  const char *file;
  int line;
  const char *text;
};

/* Validates the configuration and sets gridDim/blockDim and the dynamic
 * shared memory; false (with cudaGetLastError set, as CUDA does) when the
 * launch must not run. */
bool launch_begin(int flags, const launch_site *site, const void *kernel, dim3 grid, dim3 block, size_t shmem,
                  cudaStream_t stream);
void launch_end(void);
/* Runs the grid with one fiber per thread of a block; thread_main(ctx) is one thread. */
void launch_fibers(void (*thread_main)(void *), void *ctx);

template <class T>
struct same_type {
  using type = T;
};

template <class... P>
struct kernel_call {
  void (*kernel)(P...);
  std::tuple<P...> *params;
};

/* kernel(params...) with every thread's own copy of the parameters.  Spelled
 * out (not std::apply) and always inlined, so that the compiler sees a direct
 * call it can inline into the launch loop. */
template <class... P, size_t... I>
__attribute__((always_inline)) inline void call_kernel(void (*kernel)(P...), std::tuple<P...> &params,
                                                       std::index_sequence<I...>) {
  kernel(std::get<I>(params)...);
}

template <class... P>
void kernel_thread(void *ctx) {
  kernel_call<P...> *call = static_cast<kernel_call<P...> *>(ctx);
  call_kernel(call->kernel, *call->params, std::index_sequence_for<P...>());
}

/* thread() once per CUDA thread of the grid, in order, with blockIdx and
 * threadIdx set: a COCONET_HOST_SIMPLE launch. Always inlined, so that the
 * kernel's call is a direct call in the loop. */
template <class Thread>
__attribute__((always_inline)) inline void each_thread(dim3 grid, dim3 block, Thread thread) {
  for (unsigned bz = 0; bz < grid.z; ++bz)
    for (unsigned by = 0; by < grid.y; ++by)
      for (unsigned bx = 0; bx < grid.x; ++bx) {
        blockIdx = uint3{bx, by, bz};
        for (unsigned tz = 0; tz < block.z; ++tz)
          for (unsigned ty = 0; ty < block.y; ++ty)
            for (unsigned tx = 0; tx < block.x; ++tx) {
              threadIdx = uint3{tx, ty, tz};
              thread();
            }
      }
}

/* The arguments are converted to the kernel's parameter types at the call,
 * as with <<<>>>; every thread gets its own copy of them. */
template <int Flags, class... P>
__attribute__((always_inline)) inline void launch(const launch_site &site, void (*kernel)(P...), dim3 grid,
                                                  dim3 block, size_t shmem, cudaStream_t stream,
                                                  typename same_type<P>::type... args) {
  static_assert(Flags == COCONET_HOST_SIMPLE || Flags == COCONET_HOST_SYNC,
                "coconet_host_launch: FLAGS must be COCONET_HOST_SIMPLE or COCONET_HOST_SYNC");
  std::tuple<P...> params(args...);
  if (!launch_begin(Flags, &site, reinterpret_cast<const void *>(kernel), grid, block, shmem, stream)) return;
  if constexpr (Flags == COCONET_HOST_SIMPLE) {
    each_thread(grid, block, [&] { call_kernel(kernel, params, std::index_sequence_for<P...>()); });
  } else {
    kernel_call<P...> call{kernel, &params};
    launch_fibers(&kernel_thread<P...>, &call);
  }
  launch_end();
}

template <class Call, class Tuple>
struct callable_call {
  Call *call;
  Tuple *params;
};

template <class Call, class Tuple>
void callable_thread(void *ctx) {
  callable_call<Call, Tuple> *c = static_cast<callable_call<Call, Tuple> *>(ctx);
  std::apply(*c->call, *c->params);
}

/* A launch of a kernel template whose arguments depend on the enclosing
 * template (k<<<g, b>>>(x) inside template <class T> void f(T *x)): `call`
 * calls the kernel, so that its template arguments are deduced as at the
 * <<<>>>; the arguments are kept as given and converted at each thread's
 * call. The kernel's own attributes (cudaFuncSetAttribute) are not known
 * here: its dynamic shared memory is limited to the default. */
template <int Flags, class Call, class... A>
inline void launch_call(const launch_site &site, Call call, dim3 grid, dim3 block, size_t shmem,
                        cudaStream_t stream, A... args) {
  static_assert(Flags == COCONET_HOST_SIMPLE || Flags == COCONET_HOST_SYNC,
                "coconet_host_launch_call: FLAGS must be COCONET_HOST_SIMPLE or COCONET_HOST_SYNC");
  using params_t = std::tuple<A...>;
  params_t params(args...);
  if (!launch_begin(Flags, &site, nullptr, grid, block, shmem, stream)) return;
  if constexpr (Flags == COCONET_HOST_SIMPLE) {
    each_thread(grid, block, [&] { std::apply(call, params); });
  } else {
    callable_call<Call, params_t> c{&call, &params};
    launch_fibers(&callable_thread<Call, params_t>, &c);
  }
  launch_end();
}

}  // namespace coconet_host

#define coconet_host_launch(FLAGS, ...) \
  ::coconet_host::launch<FLAGS>(::coconet_host::launch_site{__FILE__, __LINE__, #__VA_ARGS__}, __VA_ARGS__)
#define coconet_host_launch_call(FLAGS, KERNEL, ...)                                       \
  ::coconet_host::launch_call<FLAGS>(::coconet_host::launch_site{__FILE__, __LINE__, #KERNEL}, \
                                     [](auto... coconet_args) { KERNEL(coconet_args...); }, __VA_ARGS__)

#endif

#endif
