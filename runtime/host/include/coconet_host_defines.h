/* coconet host backend: the CUDA declaration qualifiers, spelled so that the
 * system C or C++ compiler accepts CUDA source.  Kernels become ordinary
 * functions and device variables ordinary globals.  A __shared__ variable
 * becomes thread_local, which at block scope means static storage (and,
 * unlike `static`, may follow the `static` that some code writes before
 * __shared__): the blocks of a grid run one after the other on one OS
 * thread, so that single copy is exactly one block's shared copy. */
#ifndef COCONET_HOST_DEFINES_H
#define COCONET_HOST_DEFINES_H

#define __COCONET_HOST__ 1

#define __global__
#define __device__
#define __host__
#define __constant__
#define __managed__
#define __shared__ thread_local
#define __grid_constant__
#define __forceinline__ __inline__ __attribute__((always_inline))
/* Empty rather than __attribute__((noinline)): libstdc++ itself writes
 * __attribute__((__noinline__)), which must keep compiling. */
#define __noinline__
#define __align__(n) __attribute__((aligned(n)))
#define __launch_bounds__(...)
#define __maxnreg__(n)
#define __cluster_dims__(...)
#define __builtin_align__(n) __attribute__((aligned(n)))
#define __device_builtin__
#define __cudart_builtin__
#define CUDARTAPI
#define CUBLASWINAPI
#define CUDAAPI

#endif
