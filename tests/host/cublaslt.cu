// Host backend: cuBLASLt matmuls against a column-major reference in double,
// for every supported epilogue (the ReLU bit masks apart), transposes, row and column order, strided
// batches, C distinct from D, and the fp32 / fp16 / bf16 mixes GPT-style
// trainers use; then the calls it must refuse, with their status.
#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <math.h>
#include <stdlib.h>

#include <vector>

#include "check.h"

static double gelu(double x) { return 0.5 * x * (1 + tanh(0.7978845608028654 * (x + 0.044715 * x * x * x))); }

static double gelu_grad(double x) {
  const double s = 0.7978845608028654, t = tanh(s * (x + 0.044715 * x * x * x));
  return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * s * (1 + 3 * 0.044715 * x * x);
}

// One problem: shapes, operations, layouts and the epilogue.
struct lt_case {
  int m, n, k, batches;
  cublasOperation_t ta, tb;
  cublasLtOrder_t order;
  cublasLtEpilogue_t epilogue;
  double alpha, beta;
};

// Storage for one element type, converted to and from double.
template <class T>
struct typed {
  static T from(double x) { return (T)x; }
  static double to(T x) { return (double)x; }
};
template <>
struct typed<__half> {
  static __half from(double x) { return __double2half(x); }
  static double to(__half x) { return __half2float(x); }
};
template <>
struct typed<__nv_bfloat16> {
  static __nv_bfloat16 from(double x) { return __double2bfloat16(x); }
  static double to(__nv_bfloat16 x) { return __bfloat162float(x); }
};

static double small_value() { return (rand() % 17 - 8) / 8.0; }  // exact in every 16-bit format

// Matrix (r, c) of a rows x cols layout with leading dimension ld.
static size_t at(cublasLtOrder_t order, int r, int c, int ld) {
  return order == CUBLASLT_ORDER_ROW ? (size_t)r * ld + c : (size_t)r + (size_t)c * ld;
}

// Runs case t with inputs of type In and outputs of type Out through
// cublasLtMatmul and compares D, aux and the bias gradient with the reference.
// Returns the number of wrong elements.
template <class In, class Out>
static int run_case(cublasLtHandle_t lt, const lt_case &t, cudaDataType in_type, cudaDataType out_type,
                    cublasComputeType_t compute, double tolerance) {
  const int arows = t.ta == CUBLAS_OP_N ? t.m : t.k, acols = t.ta == CUBLAS_OP_N ? t.k : t.m;
  const int brows = t.tb == CUBLAS_OP_N ? t.k : t.n, bcols = t.tb == CUBLAS_OP_N ? t.n : t.k;
  const bool row = t.order == CUBLASLT_ORDER_ROW;
  const int lda = (row ? acols : arows) + 2, ldb = (row ? bcols : brows) + 1, ldc = (row ? t.n : t.m) + 3;
  const int ldaux = ((row ? t.n : t.m) + 7) / 8 * 8 + 8;
  const long long sa = (long long)lda * (row ? arows : acols) + 5, sb = (long long)ldb * (row ? brows : bcols) + 2;
  const long long sc = (long long)ldc * (row ? t.m : t.n) + 1, saux = (long long)ldaux * (row ? t.m : t.n);
  const bool bgradb = t.epilogue == CUBLASLT_EPILOGUE_BGRADB;
  const int bias_len = bgradb ? t.n : t.m;
  const bool dgelu = t.epilogue == CUBLASLT_EPILOGUE_DGELU || t.epilogue == CUBLASLT_EPILOGUE_DGELU_BGRAD;
  const bool has_aux = (t.epilogue & 128) != 0;
  const bool bias_in = (t.epilogue & CUBLASLT_EPILOGUE_BIAS) != 0;
  const bool bias_out = (t.epilogue & 16) || t.epilogue == CUBLASLT_EPILOGUE_BGRADA || bgradb;

  std::vector<double> A(sa * t.batches), B(sb * t.batches), C(sc * t.batches), aux(saux * t.batches),
      bias((size_t)bias_len * t.batches);
  for (double &x : A) x = small_value();
  for (double &x : B) x = small_value();
  for (double &x : C) x = small_value();
  for (double &x : aux) x = small_value();
  for (double &x : bias) x = small_value();

  In *a, *b;
  Out *c, *d, *x, *g;
  cudaMalloc(&a, A.size() * sizeof(In));
  cudaMalloc(&b, B.size() * sizeof(In));
  cudaMalloc(&c, C.size() * sizeof(Out));
  cudaMalloc(&d, C.size() * sizeof(Out));
  cudaMalloc(&x, aux.size() * sizeof(Out));
  cudaMalloc(&g, bias.size() * sizeof(Out));
  for (size_t i = 0; i < A.size(); ++i) a[i] = typed<In>::from(A[i]);
  for (size_t i = 0; i < B.size(); ++i) b[i] = typed<In>::from(B[i]);
  for (size_t i = 0; i < C.size(); ++i) c[i] = typed<Out>::from(C[i]), d[i] = typed<Out>::from(-99);
  for (size_t i = 0; i < aux.size(); ++i) x[i] = typed<Out>::from(aux[i]);
  for (size_t i = 0; i < bias.size(); ++i) g[i] = typed<Out>::from(bias[i]);

  cublasLtMatmulDesc_t desc;
  CHECK(cublasLtMatmulDescCreate(&desc, compute, CUDA_R_32F) == CUBLAS_STATUS_SUCCESS);
  CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &t.ta, sizeof t.ta) == 0);
  CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &t.tb, sizeof t.tb) == 0);
  CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &t.epilogue, sizeof t.epilogue) == 0);
  if (bias_in || bias_out) {
    void *p = g;
    const long long stride = bias_len;
    CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &p, sizeof p) == 0);
    CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE, &stride, sizeof stride) == 0);
  }
  if (has_aux) {
    void *p = x;
    const long long ld = ldaux;
    CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, &p, sizeof p) == 0);
    CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, &ld, sizeof ld) == 0);
    CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_BATCH_STRIDE, &saux,
                                         sizeof saux) == 0);
  }
  cublasLtMatrixLayout_t la, lb, lc, ld;
  CHECK(cublasLtMatrixLayoutCreate(&la, in_type, arows, acols, lda) == 0);
  CHECK(cublasLtMatrixLayoutCreate(&lb, in_type, brows, bcols, ldb) == 0);
  CHECK(cublasLtMatrixLayoutCreate(&lc, out_type, t.m, t.n, ldc) == 0);
  CHECK(cublasLtMatrixLayoutCreate(&ld, out_type, t.m, t.n, ldc) == 0);
  const cublasLtMatrixLayout_t layouts[] = {la, lb, lc, ld};
  const long long strides[] = {sa, sb, sc, sc};
  for (int i = 0; i < 4; ++i) {
    CHECK(cublasLtMatrixLayoutSetAttribute(layouts[i], CUBLASLT_MATRIX_LAYOUT_ORDER, &t.order, sizeof t.order) == 0);
    CHECK(cublasLtMatrixLayoutSetAttribute(layouts[i], CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &t.batches,
                                           sizeof t.batches) == 0);
    CHECK(cublasLtMatrixLayoutSetAttribute(layouts[i], CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &strides[i],
                                           sizeof strides[i]) == 0);
  }
  cublasLtMatmulPreference_t pref;
  CHECK(cublasLtMatmulPreferenceCreate(&pref) == 0);
  const size_t workspace = 32 << 20;
  CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace,
                                             sizeof workspace) == 0);
  cublasLtMatmulHeuristicResult_t heuristic;
  int found = 0;
  CHECK(cublasLtMatmulAlgoGetHeuristic(lt, desc, la, lb, lc, ld, pref, 1, &heuristic, &found) == 0);
  CHECK(found == 1 && heuristic.state == CUBLAS_STATUS_SUCCESS);
  const float alpha = (float)t.alpha, beta = (float)t.beta;
  CHECK(cublasLtMatmul(lt, desc, &alpha, a, la, b, lb, &beta, c, lc, d, ld, &heuristic.algo, nullptr, 0, 0) ==
        CUBLAS_STATUS_SUCCESS);

  int bad = 0;
  for (int q = 0; q < t.batches; ++q) {
    std::vector<double> grad(bias_len, 0.0);
    for (int j = 0; j < t.n; ++j)
      for (int i = 0; i < t.m; ++i) {
        double acc = 0;
        for (int p = 0; p < t.k; ++p) {
          const double av = t.ta == CUBLAS_OP_N ? A[q * sa + at(t.order, i, p, lda)] : A[q * sa + at(t.order, p, i, lda)];
          const double bv = t.tb == CUBLAS_OP_N ? B[q * sb + at(t.order, p, j, ldb)] : B[q * sb + at(t.order, j, p, ldb)];
          acc += av * bv;
          if (t.epilogue == CUBLASLT_EPILOGUE_BGRADA && j == 0) grad[i] += av;
          if (bgradb && i == 0) grad[j] += bv;
        }
        double v = t.alpha * acc + t.beta * C[q * sc + at(t.order, i, j, ldc)];
        if (bias_in) v += bias[(size_t)q * bias_len + i];
        const size_t xi = q * saux + at(t.order, i, j, ldaux);
        if (dgelu) {
          v *= gelu_grad(aux[xi]);
        } else {
          if (has_aux) bad += !(fabs(typed<Out>::to(x[xi]) - v) <= tolerance * (1 + fabs(v)));
          if (t.epilogue & CUBLASLT_EPILOGUE_GELU) v = gelu(v);
          if (t.epilogue & CUBLASLT_EPILOGUE_RELU) v = v > 0 ? v : 0;
        }
        if (t.epilogue & 16) grad[i] += v;
        const double have = typed<Out>::to(d[q * sc + at(t.order, i, j, ldc)]);
        bad += !(fabs(have - v) <= tolerance * (1 + fabs(v)));
      }
    if (bias_out)
      for (int i = 0; i < bias_len; ++i) {
        const double have = typed<Out>::to(g[(size_t)q * bias_len + i]);
        bad += !(fabs(have - grad[i]) <= tolerance * (1 + fabs(grad[i])) * (1 + t.n + t.k));
      }
  }
  // Nothing outside D's rows changed: the padding of every leading dimension keeps its -99.
  for (int q = 0; q < t.batches; ++q)
    for (int j = 0; j < (row ? t.m : t.n); ++j)
      for (int i = row ? t.n : t.m; i < ldc; ++i) bad += typed<Out>::to(d[q * sc + (size_t)j * ldc + i]) != -99;

  cublasLtMatmulPreferenceDestroy(pref);
  for (cublasLtMatrixLayout_t l : layouts) cublasLtMatrixLayoutDestroy(l);
  cublasLtMatmulDescDestroy(desc);
  cudaFree(a);
  cudaFree(b);
  cudaFree(c);
  cudaFree(d);
  cudaFree(x);
  cudaFree(g);
  return bad;
}

static const cublasLtEpilogue_t epilogues[] = {
    CUBLASLT_EPILOGUE_DEFAULT,   CUBLASLT_EPILOGUE_RELU,          CUBLASLT_EPILOGUE_BIAS,
    CUBLASLT_EPILOGUE_RELU_BIAS, CUBLASLT_EPILOGUE_GELU,          CUBLASLT_EPILOGUE_GELU_AUX,
    CUBLASLT_EPILOGUE_GELU_BIAS, CUBLASLT_EPILOGUE_GELU_AUX_BIAS, CUBLASLT_EPILOGUE_DGELU,
    CUBLASLT_EPILOGUE_DGELU_BGRAD, CUBLASLT_EPILOGUE_BGRADA,      CUBLASLT_EPILOGUE_BGRADB};

// Every epilogue x transpose pair x order, on two shapes and two batch counts.
template <class In, class Out>
static void check_type(cublasLtHandle_t lt, const char *what, cudaDataType in_type, cudaDataType out_type,
                       double tolerance) {
  int bad = 0, cases = 0;
  const int shapes[][3] = {{5, 3, 7}, {17, 9, 16}};
  for (const auto &s : shapes)
    for (cublasLtEpilogue_t e : epilogues)
      for (cublasOperation_t ta : {CUBLAS_OP_N, CUBLAS_OP_T})
        for (cublasOperation_t tb : {CUBLAS_OP_N, CUBLAS_OP_T})
          for (cublasLtOrder_t order : {CUBLASLT_ORDER_COL, CUBLASLT_ORDER_ROW}) {
            const lt_case t{s[0], s[1], s[2], 1 + cases % 2, ta, tb, order, e, 0.75, cases % 3 ? 0.5 : 0.0};
            const int wrong = run_case<In, Out>(lt, t, in_type, out_type, CUBLAS_COMPUTE_32F, tolerance);
            CHECK_MSG(wrong == 0, "%s: %d wrong values for m=%d n=%d k=%d epilogue %d ta=%d tb=%d order %d", what,
                      wrong, t.m, t.n, t.k, (int)e, (int)ta, (int)tb, (int)order);
            bad += wrong;
            ++cases;
          }
  printf("cublaslt: %s: %d cases, %d wrong values\n", what, cases, bad);
}

// The way GPT-2 trainers call it: out (OC x B*T) = weight^T (OC x C) inp (C x B*T) + bias, GELU, keeping the
// pre-GELU values; row-major [B*T][C] tensors read as column-major transposes.
static void check_trainer_forward(cublasLtHandle_t lt) {
  const int BT = 12, C = 16, OC = 24;
  float *inp, *weight, *bias, *out, *pre_gelu;
  cudaMalloc(&inp, sizeof(float) * BT * C);
  cudaMalloc(&weight, sizeof(float) * OC * C);
  cudaMalloc(&bias, sizeof(float) * OC);
  cudaMalloc(&out, sizeof(float) * BT * OC);
  cudaMalloc(&pre_gelu, sizeof(float) * BT * OC);
  for (int i = 0; i < BT * C; ++i) inp[i] = (float)small_value();
  for (int i = 0; i < OC * C; ++i) weight[i] = (float)small_value();
  for (int i = 0; i < OC; ++i) bias[i] = (float)small_value();

  cublasLtMatmulDesc_t desc;
  cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F);
  const cublasOperation_t opT = CUBLAS_OP_T, opN = CUBLAS_OP_N;
  cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &opT, sizeof opT);
  cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &opN, sizeof opN);
  const cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_GELU_AUX_BIAS;
  cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof epilogue);
  cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias);
  cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, &pre_gelu, sizeof pre_gelu);
  const int64_t aux_ld = OC;
  cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, &aux_ld, sizeof aux_ld);
  cublasLtMatrixLayout_t wl, il, ol;
  cublasLtMatrixLayoutCreate(&wl, CUDA_R_32F, C, OC, C);
  cublasLtMatrixLayoutCreate(&il, CUDA_R_32F, C, BT, C);
  cublasLtMatrixLayoutCreate(&ol, CUDA_R_32F, OC, BT, OC);
  const float one = 1, zero = 0;
  cublasLtHandle_t none = nullptr;
  CHECK(cublasLtMatmul(none, desc, &one, weight, wl, inp, il, &zero, out, ol, out, ol, nullptr, nullptr, 0, 0) ==
        CUBLAS_STATUS_NOT_INITIALIZED);
  CHECK(cublasLtMatmul(lt, desc, &one, weight, wl, inp, il, &zero, out, ol, out, ol, nullptr, nullptr, 0, 0) == 0);
  int bad = 0;
  for (int r = 0; r < BT; ++r)
    for (int o = 0; o < OC; ++o) {
      double v = bias[o];
      for (int c = 0; c < C; ++c) v += (double)inp[r * C + c] * weight[o * C + c];
      bad += fabs(pre_gelu[r * OC + o] - v) > 1e-5 || fabs(out[r * OC + o] - gelu(v)) > 1e-5;
    }
  CHECK_MSG(bad == 0, "trainer forward: %d wrong values", bad);
  cublasLtMatrixLayoutDestroy(wl);
  cublasLtMatrixLayoutDestroy(il);
  cublasLtMatrixLayoutDestroy(ol);
  cublasLtMatmulDescDestroy(desc);
  cudaFree(inp);
  cudaFree(weight);
  cudaFree(bias);
  cudaFree(out);
  cudaFree(pre_gelu);
}

// The ReLU epilogues with bit masks: RELU_AUX(_BIAS) writes bit i + j * ld where the input of the ReLU was
// positive; DRELU(_BGRAD) keeps the product where the bit is set (and sums D's rows into the bias gradient).
static void check_relu_masks(cublasLtHandle_t lt) {
  const int m = 37, n = 5, k = 9, ld_bits = 128;
  int bad = 0;
  for (cublasLtEpilogue_t e : {CUBLASLT_EPILOGUE_RELU_AUX, CUBLASLT_EPILOGUE_RELU_AUX_BIAS, CUBLASLT_EPILOGUE_DRELU,
                               CUBLASLT_EPILOGUE_DRELU_BGRAD}) {
    const bool backward = e == CUBLASLT_EPILOGUE_DRELU || e == CUBLASLT_EPILOGUE_DRELU_BGRAD;
    float *a, *b, *d, *bias;
    unsigned char *mask;
    cudaMalloc(&a, sizeof(float) * m * k);
    cudaMalloc(&b, sizeof(float) * k * n);
    cudaMalloc(&d, sizeof(float) * m * n);
    cudaMalloc(&bias, sizeof(float) * m);
    cudaMalloc(&mask, ld_bits / 8 * n);
    for (int i = 0; i < m * k; ++i) a[i] = (float)small_value();
    for (int i = 0; i < k * n; ++i) b[i] = (float)small_value();
    for (int i = 0; i < m; ++i) bias[i] = (float)small_value();
    for (int i = 0; i < ld_bits / 8 * n; ++i) mask[i] = (unsigned char)(backward ? rand() : 0xa5);
    std::vector<unsigned char> mask_in(mask, mask + ld_bits / 8 * n);
    cublasLtMatmulDesc_t desc;
    cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F);
    cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &e, sizeof e);
    void *bp = bias, *mp = mask;
    const int64_t ld = ld_bits;
    cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bp, sizeof bp);
    cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, &mp, sizeof mp);
    cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, &ld, sizeof ld);
    cublasLtMatrixLayout_t la, lb, lc;
    cublasLtMatrixLayoutCreate(&la, CUDA_R_32F, m, k, m);
    cublasLtMatrixLayoutCreate(&lb, CUDA_R_32F, k, n, k);
    cublasLtMatrixLayoutCreate(&lc, CUDA_R_32F, m, n, m);
    const float one = 1, zero = 0;
    CHECK(cublasLtMatmul(lt, desc, &one, a, la, b, lb, &zero, d, lc, d, lc, nullptr, nullptr, 0, 0) == 0);
    std::vector<double> grad(m, 0.0);
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < m; ++i) {
        double v = 0;
        for (int p = 0; p < k; ++p) v += (double)a[i + p * m] * b[p + j * k];
        const int bit = i + j * ld_bits;
        const bool set = (mask[bit / 8] >> (bit % 8)) & 1, was = (mask_in[bit / 8] >> (bit % 8)) & 1;
        if (backward) {
          v = was ? v : 0;
          grad[i] += v;
          bad += set != was;  // the mask is an input here
        } else {
          if (e == CUBLASLT_EPILOGUE_RELU_AUX_BIAS) v += bias[i];
          bad += set != (v > 0);
          v = v > 0 ? v : 0;
        }
        bad += fabs(d[i + j * m] - v) > 1e-5;
      }
    if (e == CUBLASLT_EPILOGUE_DRELU_BGRAD)
      for (int i = 0; i < m; ++i) bad += fabs(bias[i] - grad[i]) > 1e-4;
    // Bits past the matrix's rows in each column keep their values.
    if (!backward)
      for (int j = 0; j < n; ++j)
        for (int bit = j * ld_bits + m; bit < (j + 1) * ld_bits; ++bit)
          bad += ((mask[bit / 8] >> (bit % 8)) & 1) != ((mask_in[bit / 8] >> (bit % 8)) & 1);
    // A leading dimension not divisible by 128 is refused.
    const int64_t odd = 64;
    cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, &odd, sizeof odd);
    CHECK(cublasLtMatmul(lt, desc, &one, a, la, b, lb, &zero, d, lc, d, lc, nullptr, nullptr, 0, 0) ==
          CUBLAS_STATUS_INVALID_VALUE);
    cublasLtMatrixLayoutDestroy(la);
    cublasLtMatrixLayoutDestroy(lb);
    cublasLtMatrixLayoutDestroy(lc);
    cublasLtMatmulDescDestroy(desc);
    cudaFree(a);
    cudaFree(b);
    cudaFree(d);
    cudaFree(bias);
    cudaFree(mask);
  }
  CHECK_MSG(bad == 0, "ReLU bit masks: %d wrong values or bits", bad);
}

// Attributes round-trip with exact sizes; what the backend does not run is refused, not guessed.
static void check_refusals(cublasLtHandle_t lt) {
  cublasLtMatmulDesc_t desc;
  CHECK(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F) == 0);
  const int32_t ta = CUBLAS_OP_T;
  CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, 2) == CUBLAS_STATUS_INVALID_VALUE);
  CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, nullptr, 4) == CUBLAS_STATUS_INVALID_VALUE);
  CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta) == 0);
  int32_t back = 0;
  size_t written = 0;
  CHECK(cublasLtMatmulDescGetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, nullptr, 0, &written) == 0 && written == 4);
  CHECK(cublasLtMatmulDescGetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &back, sizeof back, &written) == 0 &&
        back == CUBLAS_OP_T);
  uint32_t epilogue = 0;
  CHECK(cublasLtMatmulDescGetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof epilogue, nullptr) == 0 &&
        epilogue == CUBLASLT_EPILOGUE_DEFAULT);

  cublasLtMatrixLayout_t a, b, c;
  CHECK(cublasLtMatrixLayoutCreate(&a, CUDA_R_32F, 8, 4, 8) == 0);  // op(A) = A^T: 4 x 8
  CHECK(cublasLtMatrixLayoutCreate(&b, CUDA_R_32F, 8, 6, 8) == 0);
  CHECK(cublasLtMatrixLayoutCreate(&c, CUDA_R_32F, 4, 6, 4) == 0);
  uint64_t rows = 0;
  CHECK(cublasLtMatrixLayoutGetAttribute(c, CUBLASLT_MATRIX_LAYOUT_ROWS, &rows, sizeof rows, &written) == 0 &&
        rows == 4);
  cublasLtMatmulPreference_t pref;
  cublasLtMatmulPreferenceCreate(&pref);
  cublasLtMatmulHeuristicResult_t h;
  int found = -1;
  CHECK(cublasLtMatmulAlgoGetHeuristic(lt, desc, a, b, c, c, pref, 1, &h, &found) == 0 && found == 1);
  CHECK(cublasLtMatmulAlgoGetHeuristic(lt, desc, a, b, c, c, pref, 0, &h, &found) == CUBLAS_STATUS_INVALID_VALUE);

  // Shapes that do not agree.
  CHECK(cublasLtMatmulAlgoGetHeuristic(lt, desc, b, b, c, c, pref, 1, &h, &found) == CUBLAS_STATUS_INVALID_VALUE &&
        found == 0);
  // An epilogue cuBLASLt does not have.
  epilogue = 1024;
  cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof epilogue);
  CHECK(cublasLtMatmulAlgoGetHeuristic(lt, desc, a, b, c, c, pref, 1, &h, &found) == CUBLAS_STATUS_NOT_SUPPORTED);
  // A bias epilogue without a bias.
  epilogue = CUBLASLT_EPILOGUE_BIAS;
  cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof epilogue);
  CHECK(cublasLtMatmulAlgoGetHeuristic(lt, desc, a, b, c, c, pref, 1, &h, &found) == CUBLAS_STATUS_INVALID_VALUE);
  // GELU_AUX with an aux leading dimension not divisible by 8.
  epilogue = CUBLASLT_EPILOGUE_GELU_AUX;
  float aux[64];
  void *auxp = aux;
  const int64_t aux_ld = 5;
  cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof epilogue);
  cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, &auxp, sizeof auxp);
  cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, &aux_ld, sizeof aux_ld);
  CHECK(cublasLtMatmulAlgoGetHeuristic(lt, desc, a, b, c, c, pref, 1, &h, &found) == CUBLAS_STATUS_INVALID_VALUE);
  // COL32 and the integer types are not run.
  const int32_t col32 = CUBLASLT_ORDER_COL32;
  cublasLtMatrixLayoutSetAttribute(c, CUBLASLT_MATRIX_LAYOUT_ORDER, &col32, sizeof col32);
  epilogue = CUBLASLT_EPILOGUE_DEFAULT;
  cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof epilogue);
  CHECK(cublasLtMatmulAlgoGetHeuristic(lt, desc, a, b, c, c, pref, 1, &h, &found) == CUBLAS_STATUS_NOT_SUPPORTED);
  cublasLtMatrixLayout_t i8;
  cublasLtMatrixLayoutCreate(&i8, CUDA_R_8I, 8, 4, 8);
  CHECK(cublasLtMatmulAlgoGetHeuristic(lt, desc, i8, b, c, c, pref, 1, &h, &found) == CUBLAS_STATUS_NOT_SUPPORTED);

  cublasLtMatrixLayoutDestroy(i8);
  cublasLtMatrixLayoutDestroy(a);
  cublasLtMatrixLayoutDestroy(b);
  cublasLtMatrixLayoutDestroy(c);
  cublasLtMatmulPreferenceDestroy(pref);
  cublasLtMatmulDescDestroy(desc);
}

int main(void) {
  srand(11);
  cublasLtHandle_t lt;
  CHECK(cublasLtCreate(&lt) == CUBLAS_STATUS_SUCCESS);
  CHECK(cublasLtGetVersion() >= 130000);
  check_type<float, float>(lt, "fp32", CUDA_R_32F, CUDA_R_32F, 1e-5);
  // 16-bit outputs: float accumulation, one rounding (half an ulp; bias gradients are rounded sums).
  check_type<__half, __half>(lt, "fp16", CUDA_R_16F, CUDA_R_16F, 1.0 / 1024);
  check_type<__nv_bfloat16, __nv_bfloat16>(lt, "bf16", CUDA_R_16BF, CUDA_R_16BF, 1.0 / 128);
  check_type<__nv_bfloat16, float>(lt, "bf16 -> fp32", CUDA_R_16BF, CUDA_R_32F, 1e-5);
  check_trainer_forward(lt);
  check_relu_masks(lt);
  check_refusals(lt);
  CHECK(cublasLtDestroy(lt) == CUBLAS_STATUS_SUCCESS);
  return check_summary("cublaslt");
}
