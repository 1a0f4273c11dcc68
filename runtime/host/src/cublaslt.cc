// coconet host backend: cuBLASLt matmuls on OpenBLAS.  Each batch entry
// widens op(A) and op(B) into dense column-major matrices of the compute
// type (float, or double for 64F), multiplies them with one sgemm/dgemm, and
// runs the epilogue element by element before rounding once into D:
//   v = alpha op(A) op(B) + beta C (+ bias[row]);  aux = v;  D = act(v)
// (for ReLU, aux is a bit mask of v > 0), or, for DGELU, D = v * gelu'(aux)
// and for DRELU, D = v where aux's bit is set.  Bias gradients are sums of
// D's rows (DGELU_BGRAD, DRELU_BGRAD), of op(A)'s rows (BGRADA) or of op(B)'s
// columns (BGRADB).
// GELU is the tanh approximation.  Descriptors live in the opaque storage
// cuBLASLt's types give them.
#include <cblas.h>
#include <math.h>
#include <string.h>

#include <new>
#include <vector>

#include "cublasLt.h"
#include "host.h"

struct cublasLtContext {
  int unused;
};

namespace coconet_host {

namespace {

struct layout {
  uint32_t type;
  int32_t order;
  uint64_t rows, cols;
  int64_t ld;
  int32_t batch_count;
  int64_t batch_offset;
  int64_t plane_offset;
  uint32_t batch_mode;
};

struct matmul_desc {
  int32_t compute, scale, pointer_mode;
  int32_t transa, transb, transc, fill;
  uint32_t epilogue;
  void *bias;
  int64_t bias_batch_stride;
  void *aux;
  int64_t aux_ld, aux_batch_stride, alpha_vector_batch_stride;
  int32_t sm_count, aux_type, bias_type;
  int8_t fast_accum;
};

struct preference {
  uint32_t search_mode;
  uint64_t max_workspace;
  uint32_t reduction_mask, align_a, align_b, align_c, align_d;
  float max_waves;
  uint64_t impl_mask;
};

static_assert(sizeof(layout) <= sizeof(cublasLtMatrixLayoutOpaque_t), "layout fits cuBLASLt's storage");
static_assert(sizeof(matmul_desc) <= sizeof(cublasLtMatmulDescOpaque_t), "descriptor fits cuBLASLt's storage");
static_assert(sizeof(preference) <= sizeof(cublasLtMatmulPreferenceOpaque_t), "preference fits cuBLASLt's storage");

layout *of(cublasLtMatrixLayout_t p) { return std::launder(reinterpret_cast<layout *>(p->data)); }
matmul_desc *of(cublasLtMatmulDesc_t p) { return std::launder(reinterpret_cast<matmul_desc *>(p->data)); }
preference *of(cublasLtMatmulPreference_t p) { return std::launder(reinterpret_cast<preference *>(p->data)); }

// Attribute values: exactly sizeof(field) bytes, as cuBLASLt requires.
template <class T>
cublasStatus_t put(T &field, const void *buf, size_t size) {
  if (!buf || size != sizeof(T)) return CUBLAS_STATUS_INVALID_VALUE;
  memcpy(&field, buf, sizeof(T));
  return CUBLAS_STATUS_SUCCESS;
}

template <class T>
cublasStatus_t get(const T &field, void *buf, size_t size, size_t *written) {
  if (size == 0) {
    if (!written) return CUBLAS_STATUS_INVALID_VALUE;
    *written = sizeof(T);
    return CUBLAS_STATUS_SUCCESS;
  }
  if (!buf || size != sizeof(T)) return CUBLAS_STATUS_INVALID_VALUE;
  memcpy(buf, &field, sizeof(T));
  if (written) *written = sizeof(T);
  return CUBLAS_STATUS_SUCCESS;
}

// Reads or writes attribute `attr` of a layout through `op` (put or get).
template <class Op>
cublasStatus_t layout_field(layout &l, int attr, Op op) {
  switch (attr) {
    case CUBLASLT_MATRIX_LAYOUT_TYPE: return op(l.type);
    case CUBLASLT_MATRIX_LAYOUT_ORDER: return op(l.order);
    case CUBLASLT_MATRIX_LAYOUT_ROWS: return op(l.rows);
    case CUBLASLT_MATRIX_LAYOUT_COLS: return op(l.cols);
    case CUBLASLT_MATRIX_LAYOUT_LD: return op(l.ld);
    case CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT: return op(l.batch_count);
    case CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET: return op(l.batch_offset);
    case CUBLASLT_MATRIX_LAYOUT_PLANE_OFFSET: return op(l.plane_offset);
    case CUBLASLT_MATRIX_LAYOUT_BATCH_MODE: return op(l.batch_mode);
  }
  COCONET_WARN(SUB_BLAS, "cublasLtMatrixLayout attribute %d is not supported by the host backend", attr);
  return CUBLAS_STATUS_INVALID_VALUE;
}

template <class Op>
cublasStatus_t desc_field(matmul_desc &d, int attr, Op op) {
  switch (attr) {
    case CUBLASLT_MATMUL_DESC_COMPUTE_TYPE: return op(d.compute);
    case CUBLASLT_MATMUL_DESC_SCALE_TYPE: return op(d.scale);
    case CUBLASLT_MATMUL_DESC_POINTER_MODE: return op(d.pointer_mode);
    case CUBLASLT_MATMUL_DESC_TRANSA: return op(d.transa);
    case CUBLASLT_MATMUL_DESC_TRANSB: return op(d.transb);
    case CUBLASLT_MATMUL_DESC_TRANSC: return op(d.transc);
    case CUBLASLT_MATMUL_DESC_FILL_MODE: return op(d.fill);
    case CUBLASLT_MATMUL_DESC_EPILOGUE: return op(d.epilogue);
    case CUBLASLT_MATMUL_DESC_BIAS_POINTER: return op(d.bias);
    case CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE: return op(d.bias_batch_stride);
    case CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER: return op(d.aux);
    case CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD: return op(d.aux_ld);
    case CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_BATCH_STRIDE: return op(d.aux_batch_stride);
    case CUBLASLT_MATMUL_DESC_ALPHA_VECTOR_BATCH_STRIDE: return op(d.alpha_vector_batch_stride);
    case CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET: return op(d.sm_count);
    case CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_DATA_TYPE: return op(d.aux_type);
    case CUBLASLT_MATMUL_DESC_FAST_ACCUM: return op(d.fast_accum);
    case CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE: return op(d.bias_type);
  }
  COCONET_WARN(SUB_BLAS, "cublasLtMatmulDesc attribute %d is not supported by the host backend", attr);
  return CUBLAS_STATUS_INVALID_VALUE;
}

template <class Op>
cublasStatus_t pref_field(preference &p, int attr, Op op) {
  switch (attr) {
    case CUBLASLT_MATMUL_PREF_SEARCH_MODE: return op(p.search_mode);
    case CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES: return op(p.max_workspace);
    case CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK: return op(p.reduction_mask);
    case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES: return op(p.align_a);
    case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES: return op(p.align_b);
    case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES: return op(p.align_c);
    case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES: return op(p.align_d);
    case CUBLASLT_MATMUL_PREF_MAX_WAVES_COUNT: return op(p.max_waves);
    case CUBLASLT_MATMUL_PREF_IMPL_MASK: return op(p.impl_mask);
  }
  COCONET_WARN(SUB_BLAS, "cublasLtMatmulPreference attribute %d is not supported by the host backend", attr);
  return CUBLAS_STATUS_INVALID_VALUE;
}

// ---- the problem, checked ------------------------------------------------

// A matrix operand: its layout, blas_element type and where entry (r, c) of batch b lies.
struct operand {
  const layout *l;
  blas_element type;
  int64_t at(uint64_t r, uint64_t c, int b) const {
    const int64_t rc = l->order == CUBLASLT_ORDER_ROW ? (int64_t)(r * l->ld + c) : (int64_t)(r + c * l->ld);
    return rc + b * l->batch_offset;
  }
};

enum epilogue_bits {
  EPI_RELU = 2, EPI_BIAS = 4, EPI_DRELU = 8, EPI_BGRAD = 16, EPI_GELU = 32, EPI_DGELU = 64, EPI_AUX = 128
};

bool epilogue_supported(uint32_t e) {
  switch (e) {
    case CUBLASLT_EPILOGUE_DEFAULT: case CUBLASLT_EPILOGUE_RELU: case CUBLASLT_EPILOGUE_RELU_AUX:
    case CUBLASLT_EPILOGUE_BIAS: case CUBLASLT_EPILOGUE_RELU_BIAS: case CUBLASLT_EPILOGUE_RELU_AUX_BIAS:
    case CUBLASLT_EPILOGUE_DRELU: case CUBLASLT_EPILOGUE_DRELU_BGRAD: case CUBLASLT_EPILOGUE_GELU:
    case CUBLASLT_EPILOGUE_GELU_AUX: case CUBLASLT_EPILOGUE_GELU_BIAS: case CUBLASLT_EPILOGUE_GELU_AUX_BIAS:
    case CUBLASLT_EPILOGUE_DGELU: case CUBLASLT_EPILOGUE_DGELU_BGRAD: case CUBLASLT_EPILOGUE_BGRADA:
    case CUBLASLT_EPILOGUE_BGRADB:
      return true;
  }
  return false;
}

// The ReLU epilogues' aux is a bit mask: bit i + j * ld (column order) is set where the ReLU's input was positive.
bool mask_epilogue(uint32_t e) { return (e & EPI_AUX) && (e & (EPI_RELU | EPI_DRELU)); }

bool mask_bit(const void *mask, int64_t bit) {
  return (static_cast<const unsigned char *>(mask)[bit >> 3] >> (bit & 7)) & 1;
}

void set_mask_bit(void *mask, int64_t bit, bool on) {
  unsigned char &byte = static_cast<unsigned char *>(mask)[bit >> 3];
  byte = (unsigned char)(on ? byte | (1u << (bit & 7)) : byte & ~(1u << (bit & 7)));
}

// Everything cublasLtMatmul needs, or the reason it cannot run.
struct problem {
  const matmul_desc *d;
  operand a, b, c, dd;
  blas_element bias_type, aux_type;
  uint64_t m, n, k;
  int batches;
  bool wide;  // 64F: double arithmetic
};

#define LT_REFUSE(status, ...)               \
  do {                                       \
    COCONET_WARN(SUB_BLAS, __VA_ARGS__);     \
    return status;                           \
  } while (0)

cublasStatus_t check_layout(const char *fn, const char *name, const layout *l) {
  if (l->order != CUBLASLT_ORDER_COL && l->order != CUBLASLT_ORDER_ROW)
    LT_REFUSE(CUBLAS_STATUS_NOT_SUPPORTED, "%s: %s has order %d; the host backend runs CUBLASLT_ORDER_COL and ROW",
              fn, name, l->order);
  if (l->plane_offset != 0 || l->batch_mode != 0)
    LT_REFUSE(CUBLAS_STATUS_NOT_SUPPORTED, "%s: %s is planar or a pointer-array batch; not supported by the host "
              "backend", fn, name);
  const uint64_t inner = l->order == CUBLASLT_ORDER_ROW ? l->cols : l->rows;
  if (l->ld < 1 || (uint64_t)l->ld < inner || l->batch_count < 1)
    LT_REFUSE(CUBLAS_STATUS_INVALID_VALUE, "%s: %s has ld=%lld for %llu x %llu (batch count %d)", fn, name,
              (long long)l->ld, (unsigned long long)l->rows, (unsigned long long)l->cols, l->batch_count);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t make_problem(const char *fn, cublasLtMatmulDesc_t desc, cublasLtMatrixLayout_t A,
                            cublasLtMatrixLayout_t B, cublasLtMatrixLayout_t C, cublasLtMatrixLayout_t D,
                            problem *p) {
  if (!desc || !A || !B || !C || !D) LT_REFUSE(CUBLAS_STATUS_INVALID_VALUE, "%s: a descriptor is NULL", fn);
  const matmul_desc *d = of(desc);
  const layout *la = of(A), *lb = of(B), *lc = of(C), *ld = of(D);
  const char *names[] = {"A", "B", "C", "D"};
  const layout *all[] = {la, lb, lc, ld};
  blas_element types[4];
  for (int i = 0; i < 4; ++i) {
    if (cublasStatus_t s = check_layout(fn, names[i], all[i])) return s;
    if (!blas_element_of((int32_t)all[i]->type, &types[i]))
      LT_REFUSE(CUBLAS_STATUS_NOT_SUPPORTED, "%s: %s has cudaDataType %u; the host backend runs 32F, 64F, 16F and "
                "16BF", fn, names[i], all[i]->type);
  }
  p->d = d;
  p->a = {la, types[0]};
  p->b = {lb, types[1]};
  p->c = {lc, types[2]};
  p->dd = {ld, types[3]};
  const bool ta = d->transa != CUBLAS_OP_N, tb = d->transb != CUBLAS_OP_N;
  if ((d->transa != CUBLAS_OP_N && d->transa != CUBLAS_OP_T) || (d->transb != CUBLAS_OP_N && d->transb != CUBLAS_OP_T)
      || d->transc != CUBLAS_OP_N)
    LT_REFUSE(CUBLAS_STATUS_NOT_SUPPORTED, "%s: transa=%d transb=%d transc=%d; the host backend runs N and T for A "
              "and B, N for C", fn, d->transa, d->transb, d->transc);
  p->m = ld->rows;
  p->n = ld->cols;
  p->k = ta ? la->rows : la->cols;
  const uint64_t am = ta ? la->cols : la->rows, bk = tb ? lb->cols : lb->rows, bn = tb ? lb->rows : lb->cols;
  if (am != p->m || bk != p->k || bn != p->n || lc->rows != p->m || lc->cols != p->n)
    LT_REFUSE(CUBLAS_STATUS_INVALID_VALUE, "%s: shapes do not agree: op(A) %llu x %llu, op(B) %llu x %llu, C %llu x "
              "%llu, D %llu x %llu", fn, (unsigned long long)am, (unsigned long long)p->k, (unsigned long long)bk,
              (unsigned long long)bn, (unsigned long long)lc->rows, (unsigned long long)lc->cols,
              (unsigned long long)p->m, (unsigned long long)p->n);
  p->batches = ld->batch_count;
  if (la->batch_count != p->batches || lb->batch_count != p->batches || lc->batch_count != p->batches)
    LT_REFUSE(CUBLAS_STATUS_INVALID_VALUE, "%s: batch counts differ (A %d, B %d, C %d, D %d)", fn, la->batch_count,
              lb->batch_count, lc->batch_count, ld->batch_count);
  if (lc->order != ld->order || types[2] != types[3])
    LT_REFUSE(CUBLAS_STATUS_NOT_SUPPORTED, "%s: C and D differ in type or order; not supported by the host backend",
              fn);
  const int32_t ct = d->compute;
  const bool f32_compute = ct == CUBLAS_COMPUTE_32F || ct == CUBLAS_COMPUTE_32F_PEDANTIC ||
                           ct == CUBLAS_COMPUTE_32F_FAST_16F || ct == CUBLAS_COMPUTE_32F_FAST_16BF ||
                           ct == CUBLAS_COMPUTE_32F_FAST_TF32;
  const bool f16_compute = ct == CUBLAS_COMPUTE_16F || ct == CUBLAS_COMPUTE_16F_PEDANTIC;
  const bool f64_compute = ct == CUBLAS_COMPUTE_64F || ct == CUBLAS_COMPUTE_64F_PEDANTIC;
  const blas_element ea = types[0], eb = types[1], ec = types[3];
  const bool ok = (f32_compute && ea == eb && ea != F64 && (ec == ea || ec == F32) && d->scale == CUDA_R_32F) ||
                  (f16_compute && ea == F16 && eb == F16 && ec == F16 &&
                   (d->scale == CUDA_R_16F || d->scale == CUDA_R_32F)) ||
                  (f64_compute && ea == F64 && eb == F64 && ec == F64 && d->scale == CUDA_R_64F);
  if (!ok)
    LT_REFUSE(CUBLAS_STATUS_NOT_SUPPORTED, "%s: A=%u B=%u D=%u with compute type %d and scale type %d is not "
              "supported by the host backend (32F/16F/16BF inputs with 32F compute and scale, 16F with 16F compute, "
              "64F with 64F)", fn, la->type, lb->type, ld->type, ct, d->scale);
  p->wide = f64_compute;
  if (d->pointer_mode != CUBLASLT_POINTER_MODE_HOST && d->pointer_mode != CUBLASLT_POINTER_MODE_DEVICE)
    LT_REFUSE(CUBLAS_STATUS_NOT_SUPPORTED, "%s: pointer mode %d is not supported by the host backend (HOST and "
              "DEVICE are)", fn, d->pointer_mode);
  const uint32_t e = d->epilogue;
  if (!epilogue_supported(e))
    LT_REFUSE(CUBLAS_STATUS_NOT_SUPPORTED, "%s: epilogue %u is not supported by the host backend", fn, e);
  const bool bias_in = (e & EPI_BIAS) != 0, bias_out = (e & EPI_BGRAD) || e == CUBLASLT_EPILOGUE_BGRADA ||
                                                        e == CUBLASLT_EPILOGUE_BGRADB;
  p->bias_type = ec;
  if (d->bias_type != -1 && !blas_element_of(d->bias_type, &p->bias_type))
    LT_REFUSE(CUBLAS_STATUS_NOT_SUPPORTED, "%s: bias data type %d is not supported by the host backend", fn,
              d->bias_type);
  if ((bias_in || bias_out) && !d->bias)
    LT_REFUSE(CUBLAS_STATUS_INVALID_VALUE, "%s: epilogue %u needs CUBLASLT_MATMUL_DESC_BIAS_POINTER", fn, e);
  p->aux_type = ec;
  if (d->aux_type != -1 && !blas_element_of(d->aux_type, &p->aux_type))
    LT_REFUSE(CUBLAS_STATUS_NOT_SUPPORTED, "%s: aux data type %d is not supported by the host backend", fn,
              d->aux_type);
  if (mask_epilogue(e)) {
    if (ld->order != CUBLASLT_ORDER_COL)
      LT_REFUSE(CUBLAS_STATUS_NOT_SUPPORTED, "%s: ReLU bit masks (epilogue %u) are run for CUBLASLT_ORDER_COL only "
                "by the host backend", fn, e);
    if (!d->aux || d->aux_ld < 1 || (uint64_t)d->aux_ld < p->m || d->aux_ld % 128 != 0 ||
        d->aux_batch_stride % 128 != 0)
      LT_REFUSE(CUBLAS_STATUS_INVALID_VALUE, "%s: epilogue %u needs CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER and an "
                "EPILOGUE_AUX_LD (and batch stride) in bits divisible by 128, the LD at least %llu (have %p, %lld)",
                fn, e, (unsigned long long)p->m, d->aux, (long long)d->aux_ld);
  } else if (e & EPI_AUX) {
    const uint64_t inner = ld->order == CUBLASLT_ORDER_ROW ? p->n : p->m;
    if (!d->aux || d->aux_ld < 1 || (uint64_t)d->aux_ld < inner || d->aux_ld % 8 != 0)
      LT_REFUSE(CUBLAS_STATUS_INVALID_VALUE, "%s: epilogue %u needs CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER and an "
                "EPILOGUE_AUX_LD of at least %llu divisible by 8 (have %p, %lld)", fn, e, (unsigned long long)inner,
                d->aux, (long long)d->aux_ld);
  }
  return CUBLAS_STATUS_SUCCESS;
}

// ---- the computation -----------------------------------------------------

void gemm(int m, int n, int k, const float *a, const float *b, float *c) {
  cblas_sgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, a, m > 1 ? m : 1, b, k > 1 ? k : 1, 0.0f, c,
              m > 1 ? m : 1);
}

void gemm(int m, int n, int k, const double *a, const double *b, double *c) {
  cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0, a, m > 1 ? m : 1, b, k > 1 ? k : 1, 0.0, c,
              m > 1 ? m : 1);
}

template <class T>
T gelu(T x) {
  const T s = (T)0.7978845608028654;  // sqrt(2 / pi)
  return (T)0.5 * x * ((T)1 + tanh(s * (x + (T)0.044715 * x * x * x)));
}

template <class T>
T gelu_grad(T x) {
  const T s = (T)0.7978845608028654;
  const T t = tanh(s * (x + (T)0.044715 * x * x * x));
  return (T)0.5 * ((T)1 + t) + (T)0.5 * x * ((T)1 - t * t) * s * ((T)1 + (T)3 * (T)0.044715 * x * x);
}

// op(X) of batch entry `batch` as a dense rows x cols column-major matrix.
template <class T>
std::vector<T> dense(const void *x, const operand &o, bool trans, uint64_t rows, uint64_t cols, int batch) {
  std::vector<T> out(rows * cols);
  for (uint64_t c = 0; c < cols; ++c)
    for (uint64_t r = 0; r < rows; ++r)
      out[c * rows + r] = (T)blas_load(x, trans ? o.at(c, r, batch) : o.at(r, c, batch), o.type);
  return out;
}

template <class T>
void run(const problem &p, T alpha, T beta, const void *A, const void *B, const void *C, void *D) {
  const matmul_desc &d = *p.d;
  const uint32_t e = d.epilogue;
  const uint64_t m = p.m, n = p.n, k = p.k;
  for (int batch = 0; batch < p.batches; ++batch) {
    const std::vector<T> a = dense<T>(A, p.a, d.transa != CUBLAS_OP_N, m, k, batch);
    const std::vector<T> b = dense<T>(B, p.b, d.transb != CUBLAS_OP_N, k, n, batch);
    std::vector<T> v(m * n);
    if (m && n && k) gemm((int)m, (int)n, (int)k, a.data(), b.data(), v.data());
    const int64_t bias_at = batch * d.bias_batch_stride, aux_batch = batch * d.aux_batch_stride;
    std::vector<T> bgrad(e == CUBLASLT_EPILOGUE_BGRADB ? n : m, (T)0);
    for (uint64_t j = 0; j < n; ++j)
      for (uint64_t i = 0; i < m; ++i) {
        T x = alpha * v[j * m + i];
        if (beta != (T)0) x += beta * (T)blas_load(C, p.c.at(i, j, batch), p.c.type);
        if (e & EPI_BIAS) x += (T)blas_load(d.bias, bias_at + (int64_t)i, p.bias_type);
        const int64_t aux_at = aux_batch + (p.dd.l->order == CUBLASLT_ORDER_ROW ? (int64_t)(i * d.aux_ld + j)
                                                                               : (int64_t)(i + j * d.aux_ld));
        if (e & EPI_DGELU) {
          x *= gelu_grad((T)blas_load(d.aux, aux_at, p.aux_type));
        } else if (e & EPI_DRELU) {
          x = mask_bit(d.aux, aux_at) ? x : (T)0;
        } else {
          if (mask_epilogue(e)) set_mask_bit(d.aux, aux_at, x > (T)0);
          else if (e & EPI_AUX) blas_store(x, d.aux, aux_at, p.aux_type);
          if (e & EPI_GELU) x = gelu(x);
          if (e & EPI_RELU) x = x > (T)0 ? x : (T)0;
        }
        if (e & EPI_BGRAD) bgrad[i] += x;
        blas_store(x, D, p.dd.at(i, j, batch), p.dd.type);
      }
    if (e == CUBLASLT_EPILOGUE_BGRADA)
      for (uint64_t i = 0; i < m; ++i)
        for (uint64_t q = 0; q < k; ++q) bgrad[i] += a[q * m + i];
    if (e == CUBLASLT_EPILOGUE_BGRADB)
      for (uint64_t j = 0; j < n; ++j)
        for (uint64_t q = 0; q < k; ++q) bgrad[j] += b[j * k + q];
    if ((e & EPI_BGRAD) || e == CUBLASLT_EPILOGUE_BGRADA || e == CUBLASLT_EPILOGUE_BGRADB)
      for (size_t i = 0; i < bgrad.size(); ++i) blas_store(bgrad[i], d.bias, bias_at + (int64_t)i, p.bias_type);
  }
}

template <class Storage, class Fields>
Storage *create(Fields init) {
  Storage *s = new (std::nothrow) Storage();
  if (s) new (s->data) decltype(init)(init);
  return s;
}

}  // namespace

}  // namespace coconet_host

using namespace coconet_host;

cublasStatus_t cublasLtCreate(cublasLtHandle_t *lightHandle) {
  if (!lightHandle) return CUBLAS_STATUS_INVALID_VALUE;
  openblas_set_num_threads(1);
  *lightHandle = new cublasLtContext{0};
  COCONET_INFO(SUB_BLAS, "cublasLtCreate: handle %p", (void *)*lightHandle);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtDestroy(cublasLtHandle_t lightHandle) {
  if (!lightHandle) return CUBLAS_STATUS_NOT_INITIALIZED;
  delete lightHandle;
  return CUBLAS_STATUS_SUCCESS;
}

const char *cublasLtGetStatusName(cublasStatus_t status) { return cublasGetStatusName(status); }
const char *cublasLtGetStatusString(cublasStatus_t status) { return cublasGetStatusString(status); }
size_t cublasLtGetVersion(void) { return CUBLASLT_VERSION; }

cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t *matLayout, cudaDataType type, uint64_t rows,
                                          uint64_t cols, int64_t ld) {
  if (!matLayout) return CUBLAS_STATUS_INVALID_VALUE;
  *matLayout = create<cublasLtMatrixLayoutOpaque_t>(layout{(uint32_t)type, CUBLASLT_ORDER_COL, rows, cols, ld, 1, 0,
                                                           0, 0});
  return *matLayout ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_ALLOC_FAILED;
}

cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t matLayout) {
  delete matLayout;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatrixLayoutSetAttribute(cublasLtMatrixLayout_t matLayout,
                                                cublasLtMatrixLayoutAttribute_t attr, const void *buf,
                                                size_t sizeInBytes) {
  if (!matLayout) return CUBLAS_STATUS_INVALID_VALUE;
  return layout_field(*of(matLayout), attr, [&](auto &f) { return put(f, buf, sizeInBytes); });
}

cublasStatus_t cublasLtMatrixLayoutGetAttribute(cublasLtMatrixLayout_t matLayout,
                                                cublasLtMatrixLayoutAttribute_t attr, void *buf, size_t sizeInBytes,
                                                size_t *sizeWritten) {
  if (!matLayout) return CUBLAS_STATUS_INVALID_VALUE;
  return layout_field(*of(matLayout), attr, [&](auto &f) { return get(f, buf, sizeInBytes, sizeWritten); });
}

cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t *matmulDesc, cublasComputeType_t computeType,
                                        cudaDataType_t scaleType) {
  if (!matmulDesc) return CUBLAS_STATUS_INVALID_VALUE;
  matmul_desc d{};
  d.compute = computeType;
  d.scale = scaleType;
  d.pointer_mode = CUBLASLT_POINTER_MODE_HOST;
  d.transa = d.transb = d.transc = CUBLAS_OP_N;
  d.epilogue = CUBLASLT_EPILOGUE_DEFAULT;
  d.aux_type = d.bias_type = -1;
  *matmulDesc = create<cublasLtMatmulDescOpaque_t>(d);
  return *matmulDesc ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_ALLOC_FAILED;
}

cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t matmulDesc) {
  delete matmulDesc;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t matmulDesc, cublasLtMatmulDescAttributes_t attr,
                                              const void *buf, size_t sizeInBytes) {
  if (!matmulDesc) return CUBLAS_STATUS_INVALID_VALUE;
  return desc_field(*of(matmulDesc), attr, [&](auto &f) { return put(f, buf, sizeInBytes); });
}

cublasStatus_t cublasLtMatmulDescGetAttribute(cublasLtMatmulDesc_t matmulDesc, cublasLtMatmulDescAttributes_t attr,
                                              void *buf, size_t sizeInBytes, size_t *sizeWritten) {
  if (!matmulDesc) return CUBLAS_STATUS_INVALID_VALUE;
  return desc_field(*of(matmulDesc), attr, [&](auto &f) { return get(f, buf, sizeInBytes, sizeWritten); });
}

cublasStatus_t cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t *pref) {
  if (!pref) return CUBLAS_STATUS_INVALID_VALUE;
  *pref = create<cublasLtMatmulPreferenceOpaque_t>(preference{});
  return *pref ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_ALLOC_FAILED;
}

cublasStatus_t cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t pref) {
  delete pref;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t pref,
                                                    cublasLtMatmulPreferenceAttributes_t attr, const void *buf,
                                                    size_t sizeInBytes) {
  if (!pref) return CUBLAS_STATUS_INVALID_VALUE;
  return pref_field(*of(pref), attr, [&](auto &f) { return put(f, buf, sizeInBytes); });
}

cublasStatus_t cublasLtMatmulPreferenceGetAttribute(cublasLtMatmulPreference_t pref,
                                                    cublasLtMatmulPreferenceAttributes_t attr, void *buf,
                                                    size_t sizeInBytes, size_t *sizeWritten) {
  if (!pref) return CUBLAS_STATUS_INVALID_VALUE;
  return pref_field(*of(pref), attr, [&](auto &f) { return get(f, buf, sizeInBytes, sizeWritten); });
}

cublasStatus_t cublasLtMatmulAlgoGetHeuristic(cublasLtHandle_t lightHandle, cublasLtMatmulDesc_t operationDesc,
                                              cublasLtMatrixLayout_t Adesc, cublasLtMatrixLayout_t Bdesc,
                                              cublasLtMatrixLayout_t Cdesc, cublasLtMatrixLayout_t Ddesc,
                                              cublasLtMatmulPreference_t preference, int requestedAlgoCount,
                                              cublasLtMatmulHeuristicResult_t heuristicResultsArray[],
                                              int *returnAlgoCount) {
  if (!lightHandle) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (requestedAlgoCount <= 0 || !heuristicResultsArray || !returnAlgoCount || !preference)
    return CUBLAS_STATUS_INVALID_VALUE;
  problem p;
  const char *fn = "cublasLtMatmulAlgoGetHeuristic";
  if (cublasStatus_t s = make_problem(fn, operationDesc, Adesc, Bdesc, Cdesc, Ddesc, &p)) {
    *returnAlgoCount = 0;
    return s;
  }
  memset(&heuristicResultsArray[0], 0, sizeof heuristicResultsArray[0]);
  heuristicResultsArray[0].state = CUBLAS_STATUS_SUCCESS;
  heuristicResultsArray[0].wavesCount = 1.0f;
  *returnAlgoCount = 1;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmul(cublasLtHandle_t lightHandle, cublasLtMatmulDesc_t computeDesc, const void *alpha,
                              const void *A, cublasLtMatrixLayout_t Adesc, const void *B,
                              cublasLtMatrixLayout_t Bdesc, const void *beta, const void *C,
                              cublasLtMatrixLayout_t Cdesc, void *D, cublasLtMatrixLayout_t Ddesc,
                              const cublasLtMatmulAlgo_t *algo, void *workspace, size_t workspaceSizeInBytes,
                              cudaStream_t stream) {
  (void)algo;
  (void)workspace;
  (void)workspaceSizeInBytes;
  if (!lightHandle) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (!stream_is_valid(stream)) return CUBLAS_STATUS_INVALID_VALUE;
  problem p;
  if (cublasStatus_t s = make_problem("cublasLtMatmul", computeDesc, Adesc, Bdesc, Cdesc, Ddesc, &p)) return s;
  if (!alpha || !beta || (p.k && (!A || !B)) || !D) return CUBLAS_STATUS_INVALID_VALUE;
  const bool half_scale = !p.wide && p.d->scale == CUDA_R_16F;
  const blas_element scale = p.wide ? F64 : half_scale ? F16 : F32;
  const double a = blas_load(alpha, 0, scale), b = blas_load(beta, 0, scale);
  if (b != 0 && !C) return CUBLAS_STATUS_INVALID_VALUE;
  COCONET_INFO(SUB_BLAS, "cublasLtMatmul: m=%llu n=%llu k=%llu batches=%d epilogue=%u", (unsigned long long)p.m,
               (unsigned long long)p.n, (unsigned long long)p.k, p.batches, p.d->epilogue);
  if (p.wide)
    run<double>(p, a, b, A, B, C, D);
  else
    run<float>(p, (float)a, (float)b, A, B, C, D);
  return CUBLAS_STATUS_SUCCESS;
}
