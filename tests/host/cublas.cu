// Host backend: cuBLAS GEMMs against a naive column-major triple loop in
// double, for every transpose combination, leading dimensions larger than
// the matrices, several shapes and scalars, and each supported type mix.
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <vector>

#include "check.h"

// C = alpha op(A) op(B) + beta C, column-major, in double.
static void reference(cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, double alpha,
                      const std::vector<double> &A, int lda, const std::vector<double> &B, int ldb, double beta,
                      std::vector<double> &C, int ldc) {
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      double acc = 0;
      for (int p = 0; p < k; ++p) {
        const double a = ta == CUBLAS_OP_N ? A[i + (size_t)p * lda] : A[p + (size_t)i * lda];
        const double b = tb == CUBLAS_OP_N ? B[p + (size_t)j * ldb] : B[j + (size_t)p * ldb];
        acc += a * b;
      }
      C[i + (size_t)j * ldc] = alpha * acc + (beta == 0 ? 0 : beta * C[i + (size_t)j * ldc]);
    }
}

static std::vector<double> random_matrix(size_t elements) {
  std::vector<double> v(elements);
  for (double &x : v) x = (rand() % 17 - 8) / 4.0;  // exact in every 16-bit format
  return v;
}

struct shape {
  int m, n, k;
};

static const shape shapes[] = {{1, 1, 1}, {5, 3, 7}, {17, 9, 4}, {32, 33, 31}, {3, 40, 1}};
static const cublasOperation_t ops[] = {CUBLAS_OP_N, CUBLAS_OP_T};

// Runs one GEMM per shape x transpose pair through run(), which receives the
// inputs converted to the element types, and compares against reference().
template <class Run>
static int check_all(double alpha, double beta, double tolerance, Run run) {
  int bad = 0;
  for (const shape &s : shapes)
    for (cublasOperation_t ta : ops)
      for (cublasOperation_t tb : ops) {
        const int arows = ta == CUBLAS_OP_N ? s.m : s.k, acols = ta == CUBLAS_OP_N ? s.k : s.m;
        const int brows = tb == CUBLAS_OP_N ? s.k : s.n, bcols = tb == CUBLAS_OP_N ? s.n : s.k;
        const int lda = arows + 3, ldb = brows + 1, ldc = s.m + 2;
        const std::vector<double> A = random_matrix((size_t)lda * acols), B = random_matrix((size_t)ldb * bcols);
        std::vector<double> C = random_matrix((size_t)ldc * s.n);
        std::vector<double> got = C;
        run(ta, tb, s.m, s.n, s.k, alpha, A, lda, B, ldb, beta, got, ldc);
        reference(ta, tb, s.m, s.n, s.k, alpha, A, lda, B, ldb, beta, C, ldc);
        for (int j = 0; j < s.n; ++j)
          for (int i = 0; i < ldc; ++i) {
            const double want = C[i + (size_t)j * ldc], have = got[i + (size_t)j * ldc];
            bad += !(fabs(want - have) <= tolerance * (1 + fabs(want)));
          }
      }
  return bad;
}

template <class T, class From>
static T *device_copy(const std::vector<double> &v, From convert) {
  T *p;
  cudaMalloc(&p, v.size() * sizeof(T));
  for (size_t i = 0; i < v.size(); ++i) p[i] = convert(v[i]);
  return p;
}

template <class T, class To>
static void copy_back(const T *p, std::vector<double> &v, To convert) {
  for (size_t i = 0; i < v.size(); ++i) v[i] = convert(p[i]);
}

static float to_float(double x) { return (float)x; }
static double from_float(float x) { return x; }
static __half to_half(double x) { return __double2half(x); }
static double from_half(__half x) { return __half2float(x); }
static __nv_bfloat16 to_bf16(double x) { return __double2bfloat16(x); }
static double from_bf16(__nv_bfloat16 x) { return __bfloat162float(x); }

int main(void) {
  srand(7);
  cublasHandle_t handle;
  CHECK(cublasCreate(&handle) == CUBLAS_STATUS_SUCCESS);
  cudaStream_t stream;
  cudaStreamCreate(&stream);
  CHECK(cublasSetStream(handle, stream) == CUBLAS_STATUS_SUCCESS);
  CHECK(cublasSetMathMode(handle, CUBLAS_TF32_TENSOR_OP_MATH) == CUBLAS_STATUS_SUCCESS);

  for (double beta : {0.0, 1.5}) {
    // Sgemm; beta == 0 must ignore whatever C holds, NaN included.
    CHECK(check_all(0.75, beta, 1e-6, [&](cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, double al,
                                         const std::vector<double> &A, int lda, const std::vector<double> &B, int ldb,
                                         double be, std::vector<double> &C, int ldc) {
            float *a = device_copy<float>(A, to_float), *b = device_copy<float>(B, to_float);
            float *c = device_copy<float>(C, to_float);
            if (be == 0)
              for (int j = 0; j < n; ++j) c[(size_t)j * ldc] = NAN;
            const float fa = (float)al, fb = (float)be;
            CHECK(cublasSgemm(handle, ta, tb, m, n, k, &fa, a, lda, b, ldb, &fb, c, ldc) == CUBLAS_STATUS_SUCCESS);
            std::vector<double> rows_kept = C;
            copy_back(c, C, from_float);
            for (int j = 0; j < n; ++j)
              for (int i = m; i < ldc; ++i) CHECK(C[i + (size_t)j * ldc] == rows_kept[i + (size_t)j * ldc]);
            cudaFree(a);
            cudaFree(b);
            cudaFree(c);
          }) == 0);

    // Dgemm with the scalars in device memory (pointer mode device).
    CHECK(check_all(-1.25, beta, 1e-12, [&](cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                                            double al, const std::vector<double> &A, int lda,
                                            const std::vector<double> &B, int ldb, double be, std::vector<double> &C,
                                            int ldc) {
            double *a, *b, *c, *scalars;
            cudaMalloc(&a, A.size() * sizeof(double));
            cudaMalloc(&b, B.size() * sizeof(double));
            cudaMalloc(&c, C.size() * sizeof(double));
            cudaMalloc(&scalars, 2 * sizeof(double));
            cudaMemcpy(a, A.data(), A.size() * sizeof(double), cudaMemcpyHostToDevice);
            cudaMemcpy(b, B.data(), B.size() * sizeof(double), cudaMemcpyHostToDevice);
            cudaMemcpy(c, C.data(), C.size() * sizeof(double), cudaMemcpyHostToDevice);
            scalars[0] = al;
            scalars[1] = be;
            cublasSetPointerMode(handle, CUBLAS_POINTER_MODE_DEVICE);
            CHECK(cublasDgemm(handle, ta, tb, m, n, k, scalars, a, lda, b, ldb, scalars + 1, c, ldc) ==
                  CUBLAS_STATUS_SUCCESS);
            cublasSetPointerMode(handle, CUBLAS_POINTER_MODE_HOST);
            cudaMemcpy(C.data(), c, C.size() * sizeof(double), cudaMemcpyDeviceToHost);
            cudaFree(a);
            cudaFree(b);
            cudaFree(c);
            cudaFree(scalars);
          }) == 0);

    // Hgemm: half in and out, float accumulation, one rounding: within half an ulp.
    CHECK(check_all(0.5, beta, 1.0 / 1024, [&](cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                                               double al, const std::vector<double> &A, int lda,
                                               const std::vector<double> &B, int ldb, double be,
                                               std::vector<double> &C, int ldc) {
            __half *a = device_copy<__half>(A, to_half), *b = device_copy<__half>(B, to_half);
            __half *c = device_copy<__half>(C, to_half);
            const __half ha = __double2half(al), hb = __double2half(be);
            CHECK(cublasHgemm(handle, ta, tb, m, n, k, &ha, a, lda, b, ldb, &hb, c, ldc) == CUBLAS_STATUS_SUCCESS);
            copy_back(c, C, from_half);
            cudaFree(a);
            cudaFree(b);
            cudaFree(c);
          }) == 0);

    // GemmEx: bf16 in, float out, float compute.
    CHECK(check_all(2.0, beta, 1e-6, [&](cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, double al,
                                         const std::vector<double> &A, int lda, const std::vector<double> &B, int ldb,
                                         double be, std::vector<double> &C, int ldc) {
            __nv_bfloat16 *a = device_copy<__nv_bfloat16>(A, to_bf16), *b = device_copy<__nv_bfloat16>(B, to_bf16);
            float *c = device_copy<float>(C, to_float);
            const float fa = (float)al, fb = (float)be;
            CHECK(cublasGemmEx(handle, ta, tb, m, n, k, &fa, a, CUDA_R_16BF, lda, b, CUDA_R_16BF, ldb, &fb, c,
                               CUDA_R_32F, ldc, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_SUCCESS);
            copy_back(c, C, from_float);
            cudaFree(a);
            cudaFree(b);
            cudaFree(c);
          }) == 0);

    // GemmEx: bf16 in and out (within half a bf16 ulp), through the legacy cudaDataType compute argument.
    CHECK(check_all(1.0, beta, 1.0 / 128, [&](cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                                              double al, const std::vector<double> &A, int lda,
                                              const std::vector<double> &B, int ldb, double be,
                                              std::vector<double> &C, int ldc) {
            __nv_bfloat16 *a = device_copy<__nv_bfloat16>(A, to_bf16), *b = device_copy<__nv_bfloat16>(B, to_bf16);
            __nv_bfloat16 *c = device_copy<__nv_bfloat16>(C, to_bf16);
            const float fa = (float)al, fb = (float)be;
            CHECK(cublasGemmEx(handle, ta, tb, m, n, k, &fa, a, CUDA_R_16BF, lda, b, CUDA_R_16BF, ldb, &fb, c,
                               CUDA_R_16BF, ldc, CUDA_R_32F, CUBLAS_GEMM_DEFAULT_TENSOR_OP) == CUBLAS_STATUS_SUCCESS);
            copy_back(c, C, from_bf16);
            cudaFree(a);
            cudaFree(b);
            cudaFree(c);
          }) == 0);

    // Strided batches of half GEMMs: every batch entry against the reference.
    CHECK(check_all(1.0, beta, 1.0 / 1024, [&](cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                                               double al, const std::vector<double> &A, int lda,
                                               const std::vector<double> &B, int ldb, double be,
                                               std::vector<double> &C, int ldc) {
            const int batches = 3;
            std::vector<double> A3, B3, C3;
            for (int i = 0; i < batches; ++i) {
              A3.insert(A3.end(), A.begin(), A.end());
              B3.insert(B3.end(), B.begin(), B.end());
              C3.insert(C3.end(), C.begin(), C.end());
            }
            __half *a = device_copy<__half>(A3, to_half), *b = device_copy<__half>(B3, to_half);
            __half *c = device_copy<__half>(C3, to_half);
            const float fa = (float)al, fb = (float)be;
            CHECK(cublasGemmStridedBatchedEx(handle, ta, tb, m, n, k, &fa, a, CUDA_R_16F, lda, (long long)A.size(), b,
                                             CUDA_R_16F, ldb, (long long)B.size(), &fb, c, CUDA_R_16F, ldc,
                                             (long long)C.size(), batches, CUBLAS_COMPUTE_32F,
                                             CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_SUCCESS);
            std::vector<double> last(C.size());
            for (int i = 0; i < batches; ++i) {
              copy_back(c + i * C.size(), last, from_half);
              if (i == 0)
                C = last;
              else
                CHECK(last == C);
            }
            cudaFree(a);
            cudaFree(b);
            cudaFree(c);
          }) == 0);
  }

  float x = 1, y = 0;
  CHECK(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, 4, 4, 4, &x, &y, 3, &y, 4, &x, &y, 4) ==
        CUBLAS_STATUS_INVALID_VALUE);
  CHECK(cublasSgemm(handle, CUBLAS_OP_T, CUBLAS_OP_N, 4, 4, 4, &x, &y, 4, &y, 4, &x, &y, 3) ==
        CUBLAS_STATUS_INVALID_VALUE);
  CHECK(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, -1, 4, 4, &x, &y, 4, &y, 4, &x, &y, 4) ==
        CUBLAS_STATUS_INVALID_VALUE);
  CHECK(strcmp(cublasGetStatusName(CUBLAS_STATUS_INVALID_VALUE), "CUBLAS_STATUS_INVALID_VALUE") == 0);
  CHECK(strlen(cublasGetStatusString(CUBLAS_STATUS_SUCCESS)) > 0);
  cudaStream_t got;
  CHECK(cublasGetStream(handle, &got) == CUBLAS_STATUS_SUCCESS && got == stream);
  CHECK(cublasDestroy(handle) == CUBLAS_STATUS_SUCCESS);
  cudaStreamDestroy(stream);
  return check_summary("host cublas");
}
