// Style: sums in the chain after a data-parallel AllReduce, written the way
// trainers write gradient clipping and LAMB: the squared norm of the gradient
// summed with atomicAdd (one per element, or a thread's running sum of the
// finite elements added after its grid-stride loop), the accumulator zeroed with cudaMemsetAsync in the
// region, then an update that reads the norm; LAMB's two norms (weights and
// update) in one kernel into norms[0] and norms[1]; an int counter of the
// nonzero gradients. `split reorder` sums this rank's slice (rank 0 also adds
// the tail), all-reduces the partial sums right after the kernel, and runs the
// update on the slice. Each -D variant below is a kernel or region coconet
// must refuse, with its reason, but BLOCK_REDUCE (a block's tree written in the
// kernel), which runs equal.
// RUN: %coconet --verify=ir:4 %s | %FileCheck --check-prefix=IR %s
// RUN: %coconet --verify=4 %s | %FileCheck --check-prefix=EXEC %s
// RUN: %coconet %s | %FileCheck --check-prefix=CODE %s
// RUN: %coconet --dump=ir %s | %FileCheck --check-prefix=DUMP %s
// RUN: %coconet --explain %s | %FileCheck --check-prefix=EXPLAIN %s
// RUN: %expect 1 %coconet --check %s -- -DNO_MEMSET 2>&1 | %FileCheck --check-prefix=NO_MEMSET %s
// RUN: %expect 1 %coconet --check %s -- -DLOCAL_SUM 2>&1 | %FileCheck --check-prefix=LOCAL_SUM %s
// RUN: %expect 1 %coconet --check %s -- -DREADS_SUM 2>&1 | %FileCheck --check-prefix=READS_SUM %s
// RUN: %expect 1 %coconet --check %s -- -DRUNNING 2>&1 | %FileCheck --check-prefix=RUNNING %s
// RUN: %expect 1 %coconet --check %s -- -DFUSE 2>&1 | %FileCheck --check-prefix=FUSE %s
// RUN: %expect 1 %coconet --check %s -- -DTWO_SUMS 2>&1 | %FileCheck --check-prefix=TWO_SUMS %s
// RUN: %expect 1 %coconet --check %s -- -DHALF_SUM 2>&1 | %FileCheck --check-prefix=HALF_SUM %s
// RUN: %expect 1 %coconet --check %s -- -DHELPER 2>&1 | %FileCheck --check-prefix=HELPER %s
// RUN: %coconet --verify=4 %s -- -DBLOCK_REDUCE | %FileCheck --check-prefix=BLOCK_REDUCE %s
// RUN: %expect 1 %coconet --check %s -- -DNONZERO_START 2>&1 | %FileCheck --check-prefix=NONZERO_START %s
// RUN: %expect 1 %coconet --check %s -- -DBEYOND 2>&1 | %FileCheck --check-prefix=BEYOND %s
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <nccl.h>

// One atomicAdd per element, under the bounds guard.
__global__ void grad_norm2(const float *g, float *norm2, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
#if defined(READS_SUM)
    if (norm2[0] < 1e30f) atomicAdd(norm2, g[i] * g[i]);
#else
    atomicAdd(norm2, g[i] * g[i]);
#endif
  }
}

__global__ void clipped_sgd(float *w, const float *g, const float *norm2, float lr, float max_norm, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
    const float scale = fminf(1.0f, max_norm / (sqrtf(norm2[0]) + 1e-6f));
    w[i] -= lr * scale * g[i];
  }
}

// A thread's running sum, added once after the grid-stride loop; and an int counter.
__global__ void norm_and_count(const float *__restrict__ g, float *norm2, int *nonzero, size_t n) {
#if defined(NONZERO_START)
  float acc = 1.0f;
#else
  float acc = 0.0f;
#endif
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
    const float x = g[i];
#if defined(RUNNING)
    if (acc < 1e30f) acc += x * x;
#else
    if (isfinite(x)) acc += x * x;
#endif
    if (x != 0.0f) atomicAdd(nonzero, 1);
  }
  atomicAdd(norm2, acc);
}

__global__ void clip_momentum(float *w, float *mom, const float *g, const float *norm2, float lr, float beta,
                              float max_norm, size_t n) {
  const float clip = fminf(1.0f, max_norm * rsqrtf(*norm2 + 1e-12f));
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
    const float m = beta * mom[i] + clip * g[i];
    mom[i] = m;
    w[i] -= lr * m;
  }
}

// LAMB: the Adam direction u and the two norms LAMB's trust ratio needs.
__global__ void lamb_direction(float *u, float *m, float *v, const float *g, const float *w, float *norms, float beta1,
                               float beta2, float eps, float wd, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
    const float mi = beta1 * m[i] + (1.0f - beta1) * g[i];
    const float vi = beta2 * v[i] + (1.0f - beta2) * g[i] * g[i];
    m[i] = mi;
    v[i] = vi;
    const float ui = mi / (sqrtf(vi) + eps) + wd * w[i];
    u[i] = ui;
    atomicAdd(&norms[0], w[i] * w[i]);
    atomicAdd(norms + 1, ui * ui);
  }
}

__global__ void lamb_apply(float *w, const float *u, const float *norms, float lr, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
    const float wn = sqrtf(norms[0]), un = sqrtf(norms[1]);
    const float ratio = wn > 0.0f && un > 0.0f ? wn / un : 1.0f;
    w[i] -= lr * ratio * u[i];
  }
}

#if defined(LOCAL_SUM)
__global__ void local_norm(const float *h, float *norm2, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(norm2, h[i] * h[i]);
}
#endif

#if defined(HALF_SUM)
__global__ void half_norm(const float *g, __half *norm2, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(norm2, __float2half(g[i] * g[i]));
}
#endif

#if defined(HELPER)
__device__ void add_square(float *acc, float x) { atomicAdd(acc, x * x); }
__global__ void helper_norm(const float *g, float *norm2, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) add_square(norm2, g[i]);
}
#endif

#if defined(BLOCK_REDUCE)
__global__ void block_norm(const float *g, float *norm2, int n) {
  __shared__ float part[256];
  float acc = 0.0f;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) acc += g[i] * g[i];
  part[threadIdx.x] = acc;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s /= 2) {
    if (threadIdx.x < s) part[threadIdx.x] += part[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) atomicAdd(norm2, part[0]);
}
#endif

void clip_step(float *w, float *g, float *norm2, float *h, int n, float lr, float max_norm, ncclComm_t comm,
               cudaStream_t stream) {
#if defined(FUSE)
#pragma coconet region name(clip) split reorder fuse replicated(w) scratch(g)
#else
#pragma coconet region name(clip) split reorder replicated(w) scratch(g)
#endif
  {
    ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, stream);
#if !defined(NO_MEMSET)
    cudaMemsetAsync(norm2, 0, sizeof(float), stream);
#endif
#if defined(LOCAL_SUM)
    local_norm<<<(n + 255) / 256, 256, 0, stream>>>(h, norm2, n);
#elif defined(HALF_SUM)
    half_norm<<<(n + 255) / 256, 256, 0, stream>>>(g, (__half *)norm2, n);
#elif defined(HELPER)
    helper_norm<<<(n + 255) / 256, 256, 0, stream>>>(g, norm2, n);
#elif defined(BLOCK_REDUCE)
    block_norm<<<64, 256, 0, stream>>>(g, norm2, n);
#else
    grad_norm2<<<(n + 255) / 256, 256, 0, stream>>>(g, norm2, n);
#endif
#if defined(TWO_SUMS)
    grad_norm2<<<(n + 255) / 256, 256, 0, stream>>>(g, norm2, n);
#endif
    clipped_sgd<<<64, 256, 0, stream>>>(w, g, norm2, lr, max_norm, n);
  }
  (void)h;
}

void momentum_step(float *w, float *mom, float *g, float *norm2, int *nonzero, size_t n, float lr, float beta,
                   float max_norm, ncclComm_t comm, cudaStream_t stream) {
#pragma coconet region name(momentum) split reorder replicated(w) shard(mom) scratch(g)
  {
    ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, stream);
    cudaMemsetAsync(norm2, 0, sizeof(float), stream);
    cudaMemsetAsync(nonzero, 0, sizeof(int), stream);
    norm_and_count<<<120, 256, 0, stream>>>(g, norm2, nonzero, n);
    clip_momentum<<<120, 256, 0, stream>>>(w, mom, g, norm2, lr, beta, max_norm, n);
  }
}

void lamb_step(float *w, float *u, float *m, float *v, float *g, float *norms, int n, float lr, float beta1,
               float beta2, float eps, float wd, ncclComm_t comm, cudaStream_t stream) {
#pragma coconet region name(lamb) split reorder replicated(w) shard(m, v) scratch(g, u)
  {
    ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, stream);
#if defined(BEYOND)
    cudaMemsetAsync(norms, 0, sizeof(float), stream);
#else
    cudaMemsetAsync(norms, 0, 2 * sizeof(float), stream);
#endif
    lamb_direction<<<96, 256, 0, stream>>>(u, m, v, g, w, norms, beta1, beta2, eps, wd, n);
    lamb_apply<<<96, 256, 0, stream>>>(w, u, norms, lr, n);
  }
}

// IR: verify=ir clip: output 'norm2' (f32): max relative error {{.*}} over 1..4 ranks x 3 inputs
// IR: verify=ir clip: output 'w' (f32): max relative error {{.*}} over 1..4 ranks x 3 inputs
// IR: verify=ir clip: kernel 'grad_norm2' sums into 'norm2' on each rank's slice, then an AllReduce adds the partial sums: the same sum in another order, so what depends on it is compared within the relative tolerance
// IR: verify=ir clip: ok
// IR: verify=ir momentum: output 'nonzero' (i32): max relative error 0 over 1..4 ranks x 3 inputs
// IR: verify=ir momentum: ok
// IR: verify=ir lamb: output 'norms' (f32): max relative error {{.*}} over 1..4 ranks x 3 inputs
// IR: verify=ir lamb: ok
// EXEC: verify clip: output 'norm2' (f32): max {{[0-9]+}} ULP apart over 1..4 ranks x 3 inputs
// EXEC: verify clip: ok (the region as written and as scheduled agree within 0 ULP, or where a sum in another order rounds differently within 1e-5 (f32), 1e-12 (f64) of the buffer's largest magnitude)
// EXEC: verify momentum: output 'nonzero' (i32): max 0 ULP apart over 1..4 ranks x 3 inputs
// EXEC: verify momentum: ok
// EXEC: verify lamb: output 'norms' (f32): max {{[0-9]+}} ULP apart over 1..4 ranks x 3 inputs
// EXEC: verify lamb: ok
// CODE: __device__ __forceinline__ void coconet_clip_slice_elem(float g, float &norm2_sum)
// CODE-NEXT: {
// CODE-NEXT: norm2_sum += g * g;
// CODE: __global__ void coconet_clip_slice(const float *g, float *norm2, size_t lo, size_t hi, bool add)
// CODE: float norm2_sum = 0;
// CODE: norm2_sum = coconet_block_sum(norm2_sum);
// CODE-NEXT: if (threadIdx.x == 0 && add) {
// CODE-NEXT: atomicAdd(norm2, norm2_sum);
// CODE: cudaMemsetAsync(norm2, 0, sizeof(float), stream);
// CODE-NEXT:    coconet_clip_slice<<<coconet_sum_grid_size(coconet_p.s), COCONET_BLOCK_SIZE, 0, stream>>>(g,
// CODE-NEXT:        norm2, coconet_p.slice_lo, coconet_p.slice_hi, true);
// CODE-NEXT: if (coconet_p.tail > 0) {
// CODE-NEXT:      coconet_clip_slice<<<coconet_sum_grid_size(coconet_p.tail), COCONET_BLOCK_SIZE, 0,
// CODE-NEXT:          stream>>>(g, norm2, coconet_p.tail_lo, coconet_p.hi, coconet_rank == 0);
// CODE: COCONET_NCCL_CHECK(ncclAllReduce(norm2, norm2, 1, ncclFloat, ncclSum, comm, stream));
// CODE-NEXT: coconet_clip_slice2<<<
// CODE: COCONET_NCCL_CHECK(ncclAllReduce(nonzero, nonzero, 1, ncclInt32, ncclSum, comm, stream));
// CODE-NEXT: COCONET_NCCL_CHECK(ncclAllReduce(norm2, norm2, 1, ncclFloat, ncclSum, comm, stream));
// CODE: norms_sum += w * w;
// CODE-NEXT: norms_sum1 += ui * ui;
// CODE: atomicAdd(norms, norms_sum);
// CODE-NEXT: atomicAdd(norms + 1, norms_sum1);
// CODE: COCONET_NCCL_CHECK(ncclAllReduce(norms, norms, 2, ncclFloat, ncclSum, comm, stream));
// CODE-NOT: ncclAllGather(u{{ }}+
// DUMP: norm2_2 = grad_norm2(g1, norm2_1)[i < n]
// DUMP-NEXT: norm2[0] += g[i] * g[i]
// DUMP: scheduled clip:
// DUMP: norm2_2 = grad_norm2(g2, norm2_1)[i < n] @slice
// DUMP-NEXT: norm2_3 = grad_norm2(g2, norm2_2)[i < n] @tail
// DUMP: norm2_4 = AllReduce(sum, norm2_3)[1]
// DUMP-NEXT: w1 = clipped_sgd(norm2_4, w, g2; max_norm, lr)[i < n] @slice
// DUMP: norm2[0] += fabsf(x) < inff ? x * x : (f32)0
// DUMP: norms[0] += w[i] * w[i]
// DUMP-NEXT: norms[1] += ui * ui
// EXPLAIN: - reorder: the cudaMemsetAsync of 'norm2' ({{.*}}reductions.cu:{{[0-9]+}}:5) stays where it is: it zeroes the sum kernel 'grad_norm2' computes
// EXPLAIN: - reorder: kernel 'grad_norm2' ({{.*}}reductions.cu:{{[0-9]+}}:5) sums into 'norm2' (atomicAdd) on this rank's slice of 'g' (rank 0 also adds the tail); an AllReduce (sum) of each right after it adds the ranks' partial sums
// EXPLAIN: - reorder: kernel 'norm_and_count' ({{.*}}) sums into 'nonzero' and 'norm2' (atomicAdd)
// NO_MEMSET: reductions.cu:{{[0-9]+}}:5: error: reorder: kernel 'grad_norm2' sums into 'norm2' (atomicAdd), which the region does not zero before it; each rank sums its slice and an AllReduce adds the partial sums, which would count what 'norm2' held once per rank: zero all of it in the region first (cudaMemsetAsync(norm2, 0, ...))
// LOCAL_SUM: reductions.cu:{{[0-9]+}}:5: error: reorder: kernel 'local_norm' sums values that differ per rank into 'norm2' (from local 'h'); the sum of this rank's slice all-reduced over the ranks would then not be the sum each rank computes as written
// LOCAL_SUM: note: 'h' is local (may differ per rank) here
// READS_SUM: reductions.cu:{{[0-9]+}}:9: error: kernel 'grad_norm2' reads 'norm2', which it also sums into with atomicAdd; coconet takes atomicAdd as a sum over the elements only into a buffer the kernel does not otherwise read or write
// RUNNING: reductions.cu:{{[0-9]+}}:22: error: kernel 'norm_and_count' assigns 'acc', declared before its grid-stride loop, in the loop: the value carries from one element to the next element of the same thread
// FUSE: reductions.cu:{{[0-9]+}}:5: error: fuse: kernel 'grad_norm2' sums into 'norm2' (atomicAdd) on this rank's slice; the fused kernel does not take sums yet: drop fuse (split reorder alone sums the slice and all-reduces the partial sums)
// TWO_SUMS: reductions.cu:{{[0-9]+}}:5: error: reorder: grad_norm2 also writes 'norm2', which kernel 'grad_norm2' sums into; coconet all-reduces a sum right after its kernel, so the work on a slice may write it only there
// TWO_SUMS: note: kernel 'grad_norm2' sums into 'norm2' here
// HALF_SUM: reductions.cu:{{[0-9]+}}:14: error: kernel 'half_norm': atomicAdd into 'norm2' of f16 elements: coconet sums into float, double, int and unsigned accumulators
// HELPER: reductions.cu:{{[0-9]+}}:51: error: kernel 'helper_norm': atomicAdd is taken as a sum over the elements only in the body of a kernel whose element is a scalar, not in a __device__ helper
// The block tree written in the kernel (it was refused) runs equal, the sums in another order:
// BLOCK_REDUCE: verify clip: ok (the region as written and as scheduled agree within 0 ULP, or where a sum in another order
// NONZERO_START: reductions.cu:{{[0-9]+}}:9: error: kernel 'norm_and_count' adds to 'acc' in its grid-stride loop, but 'acc' does not start at 0 there: a thread's running sum is taken as a sum over its elements only from 0 (a start value would be added once per thread, which depends on the grid)
// BEYOND: reductions.cu:{{[0-9]+}}:5: error: reorder: kernel 'lamb_direction' sums into norms[1], beyond the 1 element(s) of 'norms' the region zeroes and an AllReduce would add; zero and size it so that it holds every element summed into
