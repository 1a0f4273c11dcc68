// coconet host backend: cuBLAS GEMMs on OpenBLAS (one thread, so results do
// not depend on the machine's core count).  Column-major operands with
// cuBLAS's transposes and leading dimensions; 16-bit operands are widened to
// float, multiplied with sgemm (float accumulation) and rounded once to the
// output type.  Scalars are read through their pointers in either pointer
// mode (device memory is host memory here).
#include <cblas.h>
#include <string.h>

#include "cublas_v2.h"
#include "host.h"

struct cublasContext {
  cudaStream_t stream;
  cublasPointerMode_t pointer_mode;
  cublasMath_t math_mode;
};

namespace coconet_host {

// ---- shared with cublaslt.cc (host.h) -------------------------------------

bool blas_element_of(int type, blas_element *e) {
  switch (type) {
    case CUDA_R_32F: *e = F32; return true;
    case CUDA_R_64F: *e = F64; return true;
    case CUDA_R_16F: *e = F16; return true;
    case CUDA_R_16BF: *e = BF16; return true;
  }
  return false;
}

const char *blas_type_name(int type) {
  switch (type) {
    case CUDA_R_32F: return "CUDA_R_32F";
    case CUDA_R_64F: return "CUDA_R_64F";
    case CUDA_R_16F: return "CUDA_R_16F";
    case CUDA_R_16BF: return "CUDA_R_16BF";
  }
  return "an unsupported cudaDataType";
}

double blas_load(const void *p, int64_t i, blas_element t) {
  switch (t) {
    case F16: return half_to_float(static_cast<const unsigned short *>(p)[i]);
    case BF16: return bf16_to_float(static_cast<const unsigned short *>(p)[i]);
    case F64: return static_cast<const double *>(p)[i];
    case F32: break;
  }
  return static_cast<const float *>(p)[i];
}

void blas_store(double v, void *p, int64_t i, blas_element t) {
  switch (t) {
    case F16: static_cast<unsigned short *>(p)[i] = float_to_half_rn((float)v); return;
    case BF16: static_cast<unsigned short *>(p)[i] = float_to_bf16_rn((float)v); return;
    case F64: static_cast<double *>(p)[i] = v; return;
    case F32: break;
  }
  static_cast<float *>(p)[i] = (float)v;
}

namespace {

bool op_valid(cublasOperation_t op) { return op == CUBLAS_OP_N || op == CUBLAS_OP_T || op == CUBLAS_OP_C; }
CBLAS_TRANSPOSE cblas_op(cublasOperation_t op) { return op == CUBLAS_OP_N ? CblasNoTrans : CblasTrans; }
int at_least_one(int v) { return v > 1 ? v : 1; }

// cuBLAS's argument checks for C = alpha op(A) op(B) + beta C.
cublasStatus_t check_gemm(const char *fn, cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                          int m, int n, int k, int lda, int ldb, int ldc) {
  if (!handle) {
    COCONET_WARN(SUB_BLAS, "%s: handle is NULL", fn);
    return CUBLAS_STATUS_NOT_INITIALIZED;
  }
  const bool ok = op_valid(transa) && op_valid(transb) && m >= 0 && n >= 0 && k >= 0 &&
                  lda >= at_least_one(transa == CUBLAS_OP_N ? m : k) &&
                  ldb >= at_least_one(transb == CUBLAS_OP_N ? k : n) && ldc >= at_least_one(m);
  if (!ok) {
    COCONET_WARN(SUB_BLAS, "%s: invalid arguments (m=%d n=%d k=%d lda=%d ldb=%d ldc=%d)", fn, m, n, k, lda, ldb, ldc);
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  return CUBLAS_STATUS_SUCCESS;
}

// A rows x cols matrix with leading dimension ld, as dense column-major floats.
std::vector<float> widen_matrix(const void *p, blas_element t, int rows, int cols, int ld) {
  std::vector<float> out((size_t)rows * cols);
  for (int c = 0; c < cols; ++c)
    for (int r = 0; r < rows; ++r) out[(size_t)c * rows + r] = (float)blas_load(p, (int64_t)c * ld + r, t);
  return out;
}

// C = alpha op(A) op(B) + beta C with float arithmetic, for any blas_element types.
void gemm_float(cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k, float alpha, const void *A,
                blas_element ta, int lda, const void *B, blas_element tb, int ldb, float beta, void *C, blas_element tc, int ldc) {
  if (m == 0 || n == 0) return;
  if (ta == F32 && tb == F32 && tc == F32) {
    float *c = static_cast<float *>(C);
    if (beta == 0.0f)
      for (int j = 0; j < n; ++j) memset(c + (size_t)j * ldc, 0, sizeof(float) * m);
    cblas_sgemm(CblasColMajor, cblas_op(transa), cblas_op(transb), m, n, k, alpha, static_cast<const float *>(A), lda,
                static_cast<const float *>(B), ldb, beta, c, ldc);
    return;
  }
  const int arows = transa == CUBLAS_OP_N ? m : k, acols = transa == CUBLAS_OP_N ? k : m;
  const int brows = transb == CUBLAS_OP_N ? k : n, bcols = transb == CUBLAS_OP_N ? n : k;
  const std::vector<float> a = widen_matrix(A, ta, arows, acols, lda);
  const std::vector<float> b = widen_matrix(B, tb, brows, bcols, ldb);
  std::vector<float> c = beta == 0.0f ? std::vector<float>((size_t)m * n, 0.0f) : widen_matrix(C, tc, m, n, ldc);
  cblas_sgemm(CblasColMajor, cblas_op(transa), cblas_op(transb), m, n, k, alpha, a.data(), at_least_one(arows),
              b.data(), at_least_one(brows), beta, c.data(), m);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) blas_store(c[(size_t)j * m + i], C, (int64_t)j * ldc + i, tc);
}

void gemm_double(cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k, double alpha,
                 const double *A, int lda, const double *B, int ldb, double beta, double *C, int ldc) {
  if (m == 0 || n == 0) return;
  if (beta == 0.0)
    for (int j = 0; j < n; ++j) memset(C + (size_t)j * ldc, 0, sizeof(double) * m);
  cblas_dgemm(CblasColMajor, cblas_op(transa), cblas_op(transb), m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

bool float_compute(cublasComputeType_t t) {
  return t == CUBLAS_COMPUTE_32F || t == CUBLAS_COMPUTE_32F_PEDANTIC || t == CUBLAS_COMPUTE_32F_FAST_16F ||
         t == CUBLAS_COMPUTE_32F_FAST_16BF || t == CUBLAS_COMPUTE_32F_FAST_TF32;
}

size_t element_size(blas_element e) { return e == F64 ? 8 : e == F32 ? 4 : 2; }

// One GemmEx (batch entry); aborts on combinations this backend does not run.
void gemm_ex(const char *fn, cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k,
             const void *alpha, const void *A, cudaDataType Atype, int lda, const void *B, cudaDataType Btype, int ldb,
             const void *beta, void *C, cudaDataType Ctype, int ldc, cublasComputeType_t compute) {
  blas_element ea, eb, ec;
  const bool known = blas_element_of(Atype, &ea) && blas_element_of(Btype, &eb) && blas_element_of(Ctype, &ec);
  if (known && float_compute(compute) && ea == eb && ea != F64 && (ec == ea || ec == F32)) {
    gemm_float(transa, transb, m, n, k, *static_cast<const float *>(alpha), A, ea, lda, B, eb, ldb,
               *static_cast<const float *>(beta), C, ec, ldc);
    return;
  }
  if (known && (compute == CUBLAS_COMPUTE_16F || compute == CUBLAS_COMPUTE_16F_PEDANTIC) && ea == F16 && eb == F16 &&
      ec == F16) {
    gemm_float(transa, transb, m, n, k, (float)blas_load(alpha, 0, F16), A, ea, lda, B, eb, ldb, (float)blas_load(beta, 0, F16), C, ec, ldc);
    return;
  }
  if (known && (compute == CUBLAS_COMPUTE_64F || compute == CUBLAS_COMPUTE_64F_PEDANTIC) && ea == F64 && eb == F64 &&
      ec == F64) {
    gemm_double(transa, transb, m, n, k, *static_cast<const double *>(alpha), static_cast<const double *>(A), lda,
                static_cast<const double *>(B), ldb, *static_cast<const double *>(beta), static_cast<double *>(C), ldc);
    return;
  }
  fatal(fn, "A=%s B=%s C=%s with compute type %d is not supported by the host backend (supported: 32F/16F/16BF "
        "inputs with 32F compute, 16F with 16F compute, 64F with 64F compute)",
        blas_type_name(Atype), blas_type_name(Btype), blas_type_name(Ctype), (int)compute);
}

}  // namespace

}  // namespace coconet_host

using namespace coconet_host;

cublasStatus_t cublasCreate_v2(cublasHandle_t *handle) {
  if (!handle) return CUBLAS_STATUS_INVALID_VALUE;
  openblas_set_num_threads(1);
  *handle = new cublasContext{nullptr, CUBLAS_POINTER_MODE_HOST, CUBLAS_DEFAULT_MATH};
  COCONET_INFO(SUB_BLAS, "cublasCreate: handle %p", (void *)*handle);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasDestroy_v2(cublasHandle_t handle) {
  if (!handle) return CUBLAS_STATUS_NOT_INITIALIZED;
  delete handle;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGetVersion_v2(cublasHandle_t handle, int *version) {
  if (!handle) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (!version) return CUBLAS_STATUS_INVALID_VALUE;
  *version = CUBLAS_VERSION;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetStream_v2(cublasHandle_t handle, cudaStream_t streamId) {
  if (!handle) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (!stream_is_valid(streamId)) return CUBLAS_STATUS_INVALID_VALUE;
  handle->stream = streamId;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGetStream_v2(cublasHandle_t handle, cudaStream_t *streamId) {
  if (!handle) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (!streamId) return CUBLAS_STATUS_INVALID_VALUE;
  *streamId = handle->stream;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetPointerMode_v2(cublasHandle_t handle, cublasPointerMode_t mode) {
  if (!handle) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (mode != CUBLAS_POINTER_MODE_HOST && mode != CUBLAS_POINTER_MODE_DEVICE) return CUBLAS_STATUS_INVALID_VALUE;
  handle->pointer_mode = mode;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGetPointerMode_v2(cublasHandle_t handle, cublasPointerMode_t *mode) {
  if (!handle) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (!mode) return CUBLAS_STATUS_INVALID_VALUE;
  *mode = handle->pointer_mode;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode) {
  if (!handle) return CUBLAS_STATUS_NOT_INITIALIZED;
  handle->math_mode = mode;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGetMathMode(cublasHandle_t handle, cublasMath_t *mode) {
  if (!handle) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (!mode) return CUBLAS_STATUS_INVALID_VALUE;
  *mode = handle->math_mode;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetWorkspace_v2(cublasHandle_t handle, void *workspace, size_t workspaceSizeInBytes) {
  (void)workspace;
  (void)workspaceSizeInBytes;
  return handle ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_NOT_INITIALIZED;
}

const char *cublasGetStatusName(cublasStatus_t status) {
  switch (status) {
    case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "CUBLAS_STATUS_ARCH_MISMATCH";
    case CUBLAS_STATUS_MAPPING_ERROR: return "CUBLAS_STATUS_MAPPING_ERROR";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_INTERNAL_ERROR: return "CUBLAS_STATUS_INTERNAL_ERROR";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
    case CUBLAS_STATUS_LICENSE_ERROR: return "CUBLAS_STATUS_LICENSE_ERROR";
  }
  return "CUBLAS_STATUS_UNKNOWN";
}

const char *cublasGetStatusString(cublasStatus_t status) {
  switch (status) {
    case CUBLAS_STATUS_SUCCESS: return "the operation completed successfully";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "the library was not initialized";
    case CUBLAS_STATUS_ALLOC_FAILED: return "the resource allocation failed";
    case CUBLAS_STATUS_INVALID_VALUE: return "an invalid numeric value was used as an argument";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "an absent device architectural feature is required";
    case CUBLAS_STATUS_MAPPING_ERROR: return "an access to GPU memory space failed";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "the GPU program failed to execute";
    case CUBLAS_STATUS_INTERNAL_ERROR: return "an internal operation failed";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "the functionality requested is not supported";
    case CUBLAS_STATUS_LICENSE_ERROR: return "error detected trying to check the license";
  }
  return "unknown error";
}

cublasStatus_t cublasSgemm_v2(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n,
                              int k, const float *alpha, const float *A, int lda, const float *B, int ldb,
                              const float *beta, float *C, int ldc) {
  if (cublasStatus_t s = check_gemm("cublasSgemm", handle, transa, transb, m, n, k, lda, ldb, ldc)) return s;
  gemm_float(transa, transb, m, n, k, *alpha, A, F32, lda, B, F32, ldb, *beta, C, F32, ldc);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasDgemm_v2(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n,
                              int k, const double *alpha, const double *A, int lda, const double *B, int ldb,
                              const double *beta, double *C, int ldc) {
  if (cublasStatus_t s = check_gemm("cublasDgemm", handle, transa, transb, m, n, k, lda, ldb, ldc)) return s;
  gemm_double(transa, transb, m, n, k, *alpha, A, lda, B, ldb, *beta, C, ldc);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasHgemm(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n,
                           int k, const __half *alpha, const __half *A, int lda, const __half *B, int ldb,
                           const __half *beta, __half *C, int ldc) {
  if (cublasStatus_t s = check_gemm("cublasHgemm", handle, transa, transb, m, n, k, lda, ldb, ldc)) return s;
  gemm_float(transa, transb, m, n, k, __half2float(*alpha), A, F16, lda, B, F16, ldb, __half2float(*beta), C, F16,
             ldc);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSgemmStridedBatched(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                                         int m, int n, int k, const float *alpha, const float *A, int lda,
                                         long long int strideA, const float *B, int ldb, long long int strideB,
                                         const float *beta, float *C, int ldc, long long int strideC,
                                         int batchCount) {
  if (cublasStatus_t s = check_gemm("cublasSgemmStridedBatched", handle, transa, transb, m, n, k, lda, ldb, ldc))
    return s;
  if (batchCount < 0) return CUBLAS_STATUS_INVALID_VALUE;
  for (int i = 0; i < batchCount; ++i)
    gemm_float(transa, transb, m, n, k, *alpha, A + i * strideA, F32, lda, B + i * strideB, F32, ldb, *beta,
               C + i * strideC, F32, ldc);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasHgemmStridedBatched(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                                         int m, int n, int k, const __half *alpha, const __half *A, int lda,
                                         long long int strideA, const __half *B, int ldb, long long int strideB,
                                         const __half *beta, __half *C, int ldc, long long int strideC,
                                         int batchCount) {
  if (cublasStatus_t s = check_gemm("cublasHgemmStridedBatched", handle, transa, transb, m, n, k, lda, ldb, ldc))
    return s;
  if (batchCount < 0) return CUBLAS_STATUS_INVALID_VALUE;
  for (int i = 0; i < batchCount; ++i)
    gemm_float(transa, transb, m, n, k, __half2float(*alpha), A + i * strideA, F16, lda, B + i * strideB, F16, ldb,
               __half2float(*beta), C + i * strideC, F16, ldc);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n,
                            int k, const void *alpha, const void *A, cudaDataType Atype, int lda, const void *B,
                            cudaDataType Btype, int ldb, const void *beta, void *C, cudaDataType Ctype, int ldc,
                            cublasComputeType_t computeType, cublasGemmAlgo_t algo) {
  (void)algo;
  if (cublasStatus_t s = check_gemm("cublasGemmEx", handle, transa, transb, m, n, k, lda, ldb, ldc)) return s;
  gemm_ex("cublasGemmEx", transa, transb, m, n, k, alpha, A, Atype, lda, B, Btype, ldb, beta, C, Ctype, ldc,
          computeType);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGemmStridedBatchedEx(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                                          int m, int n, int k, const void *alpha, const void *A, cudaDataType Atype,
                                          int lda, long long int strideA, const void *B, cudaDataType Btype, int ldb,
                                          long long int strideB, const void *beta, void *C, cudaDataType Ctype,
                                          int ldc, long long int strideC, int batchCount,
                                          cublasComputeType_t computeType, cublasGemmAlgo_t algo) {
  (void)algo;
  if (cublasStatus_t s = check_gemm("cublasGemmStridedBatchedEx", handle, transa, transb, m, n, k, lda, ldb, ldc))
    return s;
  if (batchCount < 0) return CUBLAS_STATUS_INVALID_VALUE;
  blas_element ea, eb, ec;
  if (!blas_element_of(Atype, &ea) || !blas_element_of(Btype, &eb) || !blas_element_of(Ctype, &ec))
    fatal("cublasGemmStridedBatchedEx", "A=%s B=%s C=%s is not supported by the host backend", blas_type_name(Atype),
          blas_type_name(Btype), blas_type_name(Ctype));
  for (int i = 0; i < batchCount; ++i)
    gemm_ex("cublasGemmStridedBatchedEx", transa, transb, m, n, k, alpha,
            static_cast<const char *>(A) + i * strideA * (long long)element_size(ea), Atype, lda,
            static_cast<const char *>(B) + i * strideB * (long long)element_size(eb), Btype, ldb, beta,
            static_cast<char *>(C) + i * strideC * (long long)element_size(ec), Ctype, ldc, computeType);
  return CUBLAS_STATUS_SUCCESS;
}
