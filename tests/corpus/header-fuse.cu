// Style: `split reorder fuse` of row kernels a project keeps in a header
// (Inputs/header-fuse.cuh), the call sites here with pragma lines only: a
// LayerNorm in the project's namespace, summing through the block-reduction
// helper it calls unqualified, fused from a function at global scope (the copy
// goes above it, in the kernel's namespace) and from a function in that
// namespace (beside it); an RMSNorm at global scope. The fused kernel copies
// each kernel's text from the header, which is never rewritten; --verify runs
// the fused kernels (on the host backend, at 1..4 ranks) against the program as
// written. Refused: a kernel whose macro a file #undefs after it (UNDEF_AFTER:
// the copy would not mean what the kernel means), one using __LINE__ (WHERE), a
// kernel using a name the file declares again before the copy's place: an
// overload of rsqrtf (OVERLOAD_AFTER), a proj::rsqrtf that hides ::rsqrtf for
// the copy beside post_mlp, not for post_attention's above it (HIDES).
// RUN: %coconet --verify=4 %s -- -I%S/Inputs | %FileCheck --check-prefix=EXEC %s
// RUN: %coconet %s -- -I%S/Inputs | %FileCheck --check-prefix=CODE %s
// RUN: %expect 1 %coconet --check %s -- -I%S/Inputs -DUNDEF_AFTER 2>&1 | %FileCheck --check-prefix=UNDEF %s
// RUN: %expect 1 %coconet --check %s -- -I%S/Inputs -DWHERE 2>&1 | %FileCheck --check-prefix=WHERE %s
// RUN: %expect 1 %coconet --check %s -- -I%S/Inputs -DOVERLOAD_AFTER 2>&1 | %FileCheck --check-prefix=OVERLOAD %s
// RUN: %expect 1 %coconet --check %s -- -I%S/Inputs -DHIDES 2>&1 | %FileCheck --check-prefix=HIDES %s
#include <cuda_runtime.h>
#include <nccl.h>

#include "header-fuse.cuh"

#if defined(OVERLOAD_AFTER)
__device__ __forceinline__ double rsqrtf(double v) { return 1.0 / sqrt(v); }
#endif

void post_attention(float *out, const float *residual, const float *bias, const float *gamma, const float *beta,
                    int m, int n, ncclComm_t comm, cudaStream_t s) {
#pragma coconet region name(post_attn) split reorder replicated(residual, bias, gamma, beta) fuse
  {
    ncclAllReduce(out, out, (size_t)m * n, ncclFloat, ncclSum, comm, s);
    proj::add_bias_residual_layernorm<<<m, 256, 0, s>>>(out, residual, bias, gamma, beta, 1e-5f, m, n);
  }
}

namespace proj {
#if defined(HIDES)
__device__ __forceinline__ float rsqrtf(float v) { return 1.0f / sqrtf(v); }
#endif

void post_mlp(float *out, const float *residual, const float *bias, const float *gamma, const float *beta, int m,
              int n, ncclComm_t comm, cudaStream_t s) {
#pragma coconet region name(post_mlp) split reorder replicated(residual, bias, gamma, beta) fuse
  {
    ncclAllReduce(out, out, (size_t)m * n, ncclFloat, ncclSum, comm, s);
    add_bias_residual_layernorm<<<m, 128, 0, s>>>(out, residual, bias, gamma, beta, 1e-5f, m, n);
  }
}
}  // namespace proj

void rms(float *x, const float *weight, int rows, int hidden, ncclComm_t comm, cudaStream_t s) {
#pragma coconet region name(rms) split reorder replicated(weight) fuse
  {
    ncclAllReduce(x, x, (size_t)rows * hidden, ncclFloat, ncclSum, comm, s);
    rms_rows<<<rows, 64, 0, s>>>(x, weight, rows, hidden);
  }
}

// EXEC: verify post_attn: ok
// EXEC: verify post_mlp: ok
// EXEC: verify rms: ok
// The copies, the header's text in the kernel's namespace: above the function at
// global scope, beside the one in the namespace.
// CODE: // coconet: begin generated code for region post_attn
// CODE: // coconet: proj::add_bias_residual_layernorm (header-fuse.cuh:32) as one block of the grid it is
// CODE: namespace proj {
// CODE-NEXT: __device__ __forceinline__ void coconet_post_attn_add_bias_residual_layernorm(float *out,
// CODE: float v = out[blockIdx.x * n + idx] + residual[blockIdx.x * n + idx] + coconet_ld(&bias[idx]);
// CODE: mean = block_sum<float>(mean);
// CODE: }  // namespace proj
// CODE: proj::coconet_post_attn_add_bias_residual_layernorm(out + coconet_lo, residual + coconet_lo,
// CODE: void post_attention(
// CODE: namespace proj {
// CODE: // coconet: begin generated code for region post_mlp, beside its function
// CODE: __device__ __forceinline__ void coconet_post_mlp_add_bias_residual_layernorm(float *out,
// CODE: void post_mlp(
// CODE: // coconet: rms_rows (header-fuse.cuh:61) as one block of the grid it is launched with (blockIdx and
// CODE: s = proj::block_sum<float>(s);
// UNDEF: header-fuse.cuh:{{[0-9]+}}:{{[0-9]+}}: error: fuse: kernel 'rms_rows' uses macro 'RMS_EPS', which a file of yours #undefs or #defines again; the fused kernel's copy of the kernel's text, above the region's function, would not mean what it means in the kernel: drop fuse
// WHERE: header-fuse.cuh:{{[0-9]+}}:{{[0-9]+}}: error: fuse: kernel 'rms_rows' uses '__LINE__', whose value is where the text is written; the fused kernel's copy of the kernel's text, above the region's function, would differ: drop fuse
// OVERLOAD: header-fuse.cuh:{{[0-9]+}}:{{[0-9]+}}: error: fuse: kernel 'proj::add_bias_residual_layernorm' uses 'rsqrtf', and a file of yours declares 'rsqrtf' again after the kernel (header-fuse.cu:26); the fused kernel's copy of the kernel's text, above the region's function, could mean that one (another overload, a name that hides the kernel's): drop fuse, or rename it
// HIDES-NOT: region 'post_attn'
// HIDES: header-fuse.cuh:{{[0-9]+}}:{{[0-9]+}}: error: fuse: kernel 'add_bias_residual_layernorm' uses 'rsqrtf', and a file of yours declares 'rsqrtf' again after the kernel (header-fuse.cu:40)
// HIDES-NOT: error:
