/* coconet host backend: the cuBLASLt subset that GPT-style trainers use, on
 * OpenBLAS.  cublasLtMatmul computes D = epilogue(alpha op(A) op(B) + beta C)
 * in float (double for 64F), column- or row-ordered layouts, strided batches,
 * and every epilogue cuBLASLt has: bias, ReLU and GELU (the tanh
 * approximation) with or without aux (the ReLU bit masks in column order),
 * DRELU, DGELU and their bias gradients, BGRADA and BGRADB.  Anything else is
 * refused: an unsupported attribute value returns CUBLAS_STATUS_NOT_SUPPORTED
 * with a warning naming it.  The names and values are cuBLASLt's. */
#ifndef COCONET_HOST_CUBLASLT_H
#define COCONET_HOST_CUBLASLT_H

#include <stddef.h>
#include <stdint.h>

#include "cublas_api.h"

#define CUBLASLT_VERSION CUBLAS_VERSION

typedef struct cublasLtContext *cublasLtHandle_t;

typedef struct {
  uint64_t data[8];
} cublasLtMatrixLayoutOpaque_t;
typedef cublasLtMatrixLayoutOpaque_t *cublasLtMatrixLayout_t;

typedef struct {
  uint64_t data[8];
} cublasLtMatmulAlgo_t;

typedef struct {
  uint64_t data[32];
} cublasLtMatmulDescOpaque_t;
typedef cublasLtMatmulDescOpaque_t *cublasLtMatmulDesc_t;

typedef struct {
  uint64_t data[8];
} cublasLtMatmulPreferenceOpaque_t;
typedef cublasLtMatmulPreferenceOpaque_t *cublasLtMatmulPreference_t;

typedef enum {
  CUBLASLT_ORDER_COL = 0,
  CUBLASLT_ORDER_ROW = 1,
  CUBLASLT_ORDER_COL32 = 2,
  CUBLASLT_ORDER_COL4_4R2_8C = 3,
  CUBLASLT_ORDER_COL32_2R_4R4 = 4
} cublasLtOrder_t;

typedef enum {
  CUBLASLT_MATRIX_LAYOUT_TYPE = 0,                  /* uint32_t (cudaDataType) */
  CUBLASLT_MATRIX_LAYOUT_ORDER = 1,                 /* int32_t (cublasLtOrder_t) */
  CUBLASLT_MATRIX_LAYOUT_ROWS = 2,                  /* uint64_t */
  CUBLASLT_MATRIX_LAYOUT_COLS = 3,                  /* uint64_t */
  CUBLASLT_MATRIX_LAYOUT_LD = 4,                    /* int64_t */
  CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT = 5,           /* int32_t */
  CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET = 6,  /* int64_t, elements */
  CUBLASLT_MATRIX_LAYOUT_PLANE_OFFSET = 7,          /* int64_t; only 0 */
  CUBLASLT_MATRIX_LAYOUT_BATCH_MODE = 8             /* uint32_t; only 0 (strided) */
} cublasLtMatrixLayoutAttribute_t;

typedef enum {
  CUBLASLT_POINTER_MODE_HOST = CUBLAS_POINTER_MODE_HOST,
  CUBLASLT_POINTER_MODE_DEVICE = CUBLAS_POINTER_MODE_DEVICE,
  CUBLASLT_POINTER_MODE_DEVICE_VECTOR = 2,
  CUBLASLT_POINTER_MODE_ALPHA_DEVICE_VECTOR_BETA_ZERO = 3,
  CUBLASLT_POINTER_MODE_ALPHA_DEVICE_VECTOR_BETA_HOST = 4
} cublasLtPointerMode_t;

typedef enum {
  CUBLASLT_MATMUL_DESC_COMPUTE_TYPE = 0,                 /* int32_t (cublasComputeType_t) */
  CUBLASLT_MATMUL_DESC_SCALE_TYPE = 1,                   /* int32_t (cudaDataType) */
  CUBLASLT_MATMUL_DESC_POINTER_MODE = 2,                 /* int32_t; HOST or DEVICE */
  CUBLASLT_MATMUL_DESC_TRANSA = 3,                       /* int32_t (cublasOperation_t) */
  CUBLASLT_MATMUL_DESC_TRANSB = 4,                       /* int32_t */
  CUBLASLT_MATMUL_DESC_TRANSC = 5,                       /* int32_t; only CUBLAS_OP_N */
  CUBLASLT_MATMUL_DESC_FILL_MODE = 6,                    /* int32_t; ignored */
  CUBLASLT_MATMUL_DESC_EPILOGUE = 7,                     /* uint32_t (cublasLtEpilogue_t) */
  CUBLASLT_MATMUL_DESC_BIAS_POINTER = 8,                 /* void * */
  CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE = 10,           /* int64_t, elements */
  CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER = 11,        /* void * */
  CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD = 12,             /* int64_t */
  CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_BATCH_STRIDE = 13,   /* int64_t, elements */
  CUBLASLT_MATMUL_DESC_ALPHA_VECTOR_BATCH_STRIDE = 14,   /* int64_t; ignored */
  CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET = 15,             /* int32_t; ignored */
  CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_DATA_TYPE = 22,      /* int32_t (cudaDataType); -1: D's type */
  CUBLASLT_MATMUL_DESC_FAST_ACCUM = 25,                  /* int8_t; ignored */
  CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE = 26               /* int32_t (cudaDataType); -1: D's type */
} cublasLtMatmulDescAttributes_t;

typedef enum {
  CUBLASLT_EPILOGUE_DEFAULT = 1,
  CUBLASLT_EPILOGUE_RELU = 2,
  CUBLASLT_EPILOGUE_RELU_AUX = (CUBLASLT_EPILOGUE_RELU | 128),
  CUBLASLT_EPILOGUE_BIAS = 4,
  CUBLASLT_EPILOGUE_RELU_BIAS = (CUBLASLT_EPILOGUE_RELU | CUBLASLT_EPILOGUE_BIAS),
  CUBLASLT_EPILOGUE_RELU_AUX_BIAS = (CUBLASLT_EPILOGUE_RELU_AUX | CUBLASLT_EPILOGUE_BIAS),
  CUBLASLT_EPILOGUE_DRELU = 8 | 128,
  CUBLASLT_EPILOGUE_DRELU_BGRAD = CUBLASLT_EPILOGUE_DRELU | 16,
  CUBLASLT_EPILOGUE_GELU = 32,
  CUBLASLT_EPILOGUE_GELU_AUX = (CUBLASLT_EPILOGUE_GELU | 128),
  CUBLASLT_EPILOGUE_GELU_BIAS = (CUBLASLT_EPILOGUE_GELU | CUBLASLT_EPILOGUE_BIAS),
  CUBLASLT_EPILOGUE_GELU_AUX_BIAS = (CUBLASLT_EPILOGUE_GELU_AUX | CUBLASLT_EPILOGUE_BIAS),
  CUBLASLT_EPILOGUE_DGELU = 64 | 128,
  CUBLASLT_EPILOGUE_DGELU_BGRAD = CUBLASLT_EPILOGUE_DGELU | 16,
  CUBLASLT_EPILOGUE_BGRADA = 256,
  CUBLASLT_EPILOGUE_BGRADB = 512
} cublasLtEpilogue_t;

typedef enum { CUBLASLT_SEARCH_BEST_FIT = 0, CUBLASLT_SEARCH_LIMITED_BY_ALGO_ID = 1 } cublasLtMatmulSearch_t;

typedef enum {
  CUBLASLT_MATMUL_PREF_SEARCH_MODE = 0,             /* uint32_t */
  CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES = 1,     /* uint64_t */
  CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK = 3,   /* uint32_t */
  CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES = 5,   /* uint32_t */
  CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES = 6,   /* uint32_t */
  CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES = 7,   /* uint32_t */
  CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES = 8,   /* uint32_t */
  CUBLASLT_MATMUL_PREF_MAX_WAVES_COUNT = 9,         /* float */
  CUBLASLT_MATMUL_PREF_IMPL_MASK = 12               /* uint64_t */
} cublasLtMatmulPreferenceAttributes_t;

typedef struct {
  cublasLtMatmulAlgo_t algo;
  size_t workspaceSize;
  cublasStatus_t state;
  float wavesCount;
  int reserved[4];
} cublasLtMatmulHeuristicResult_t;

#ifdef __cplusplus
extern "C" {
#endif

cublasStatus_t cublasLtCreate(cublasLtHandle_t *lightHandle);
cublasStatus_t cublasLtDestroy(cublasLtHandle_t lightHandle);
const char *cublasLtGetStatusName(cublasStatus_t status);
const char *cublasLtGetStatusString(cublasStatus_t status);
size_t cublasLtGetVersion(void);

cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t *matLayout, cudaDataType type, uint64_t rows,
                                          uint64_t cols, int64_t ld);
cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t matLayout);
cublasStatus_t cublasLtMatrixLayoutSetAttribute(cublasLtMatrixLayout_t matLayout,
                                                cublasLtMatrixLayoutAttribute_t attr, const void *buf,
                                                size_t sizeInBytes);
cublasStatus_t cublasLtMatrixLayoutGetAttribute(cublasLtMatrixLayout_t matLayout,
                                                cublasLtMatrixLayoutAttribute_t attr, void *buf, size_t sizeInBytes,
                                                size_t *sizeWritten);

cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t *matmulDesc, cublasComputeType_t computeType,
                                        cudaDataType_t scaleType);
cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t matmulDesc);
cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t matmulDesc, cublasLtMatmulDescAttributes_t attr,
                                              const void *buf, size_t sizeInBytes);
cublasStatus_t cublasLtMatmulDescGetAttribute(cublasLtMatmulDesc_t matmulDesc, cublasLtMatmulDescAttributes_t attr,
                                              void *buf, size_t sizeInBytes, size_t *sizeWritten);

cublasStatus_t cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t *pref);
cublasStatus_t cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t pref);
cublasStatus_t cublasLtMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t pref,
                                                    cublasLtMatmulPreferenceAttributes_t attr, const void *buf,
                                                    size_t sizeInBytes);
cublasStatus_t cublasLtMatmulPreferenceGetAttribute(cublasLtMatmulPreference_t pref,
                                                    cublasLtMatmulPreferenceAttributes_t attr, void *buf,
                                                    size_t sizeInBytes, size_t *sizeWritten);

/* One algorithm (workspace 0) when the problem is one cublasLtMatmul runs,
 * else CUBLAS_STATUS_NOT_SUPPORTED with the reason as a warning. */
cublasStatus_t cublasLtMatmulAlgoGetHeuristic(cublasLtHandle_t lightHandle, cublasLtMatmulDesc_t operationDesc,
                                              cublasLtMatrixLayout_t Adesc, cublasLtMatrixLayout_t Bdesc,
                                              cublasLtMatrixLayout_t Cdesc, cublasLtMatrixLayout_t Ddesc,
                                              cublasLtMatmulPreference_t preference, int requestedAlgoCount,
                                              cublasLtMatmulHeuristicResult_t heuristicResultsArray[],
                                              int *returnAlgoCount);
/* algo may be NULL; the workspace is not used. */
cublasStatus_t cublasLtMatmul(cublasLtHandle_t lightHandle, cublasLtMatmulDesc_t computeDesc, const void *alpha,
                              const void *A, cublasLtMatrixLayout_t Adesc, const void *B,
                              cublasLtMatrixLayout_t Bdesc, const void *beta, const void *C,
                              cublasLtMatrixLayout_t Cdesc, void *D, cublasLtMatrixLayout_t Ddesc,
                              const cublasLtMatmulAlgo_t *algo, void *workspace, size_t workspaceSizeInBytes,
                              cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
