// Style: the NCCL datatype comes from a variable or a constexpr (a trainer that
// builds for fp32 or bf16 from one source), not a literal enumerator. The
// element type is then the buffer's pointer type, and the generated calls keep
// the user's datatype expression.
// RUN: %coconet %s | %FileCheck --check-prefix=CODE %s
// RUN: %coconet --verify=4 %s | %FileCheck --check-prefix=EXEC %s
// RUN: %expect 1 %coconet --check %s -- -DWRONG_TYPE 2>&1 | %FileCheck --check-prefix=WRONG %s
// RUN: %coconet --check %s -- -DUNKNOWN_OP 2>&1 | %FileCheck --check-prefix=OP %s
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <nccl.h>

typedef __nv_bfloat16 floatX;
constexpr ncclDataType_t ncclFloatX = ncclBfloat16;

__global__ void sgd(floatX *w, const floatX *g, float lr, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) w[i] = __float2bfloat16(__bfloat162float(w[i]) - lr * __bfloat162float(g[i]));
}

void step(floatX *w, floatX *g, float lr, int n, ncclDataType_t dtype, ncclRedOp_t op, ncclComm_t comm,
          cudaStream_t s) {
#if defined(WRONG_TYPE)
#pragma coconet region name(wrong) split
  {
    ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, s);
  }
#elif defined(UNKNOWN_OP)
#pragma coconet region name(unknown_op)
  {
    ncclAllReduce(g, g, n, ncclFloatX, op, comm, s);
  }
#else
#pragma coconet region name(floatx) split reorder scratch(g) replicated(w)
  {
    ncclAllReduce(g, g, n, ncclFloatX, ncclSum, comm, s);
    sgd<<<(n + 255) / 256, 256, 0, s>>>(w, g, lr, n);
  }
#endif
  (void)dtype;
  (void)op;
}

// CODE: ncclReduceScatter(g, g + coconet_p.slice_lo, coconet_p.s, ncclFloatX, ncclSum, comm, s)
// CODE: ncclAllGather(w + coconet_p.slice_lo, w, coconet_p.s, ncclBfloat16, comm, s)
// EXEC: verify floatx: output 'w' (bf16): max 0 ULP apart over 1..4 ranks x 3 inputs
// EXEC: verify floatx: ok
// WRONG: datatype-variable.cu:26:28: error: ncclAllReduce: datatype 'ncclFloat' is f32 but the buffer points to bf16
// WRONG-NOT: error
// OP: datatype-variable.cu:31:5: warning: ncclAllReduce is kept as written and no schedule applies to it: its reduction operator is not one of ncclSum, ncclProd, ncclMax, ncclMin, ncclAvg
