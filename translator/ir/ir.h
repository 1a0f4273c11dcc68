// ir.h: the IR, the libclang-free middle of the translator (translator.h maps
// the whole pipeline). One IrRegion per `#pragma coconet region`: tensors,
// collectives, GEMMs, pointwise kernels (as expression DAGs), copies, events
// and opaque statements, in source order; after the schedule (transform/),
// region->sched, a new op list with spans and fused groups.
//
// Files of ir/ (sections below follow this order):
//   ir.c ir_expr.c ir_op.c   objects and builders (the extraction calls these)
//   ir_infer.c               versions and layouts
//   ir_print.c               --dump=ir (the format is described there)
//   cost.c                   alpha-beta cost model, --model=FILE
//   dot.c                    --emit-dot
//
// Memory: every IR object lives in its program's arena and is freed at once by
// ir_program_free. Every string handed to a builder is copied into the arena,
// so callers may pass temporary buffers (clang strings). Lists are singly
// linked through `next`, in source order, chibicc style.
//
// Errors are reported through diag.h (diag_error + diag_note with source
// locations); functions that can fail return 0 on success and -1 on error.
#ifndef COCONET_IR_H
#define COCONET_IR_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "common/diag.h"

typedef struct IrProgram IrProgram;
typedef struct IrRegion IrRegion;
typedef struct IrVar IrVar;
typedef struct IrSize IrSize;
typedef struct IrTensor IrTensor;
typedef struct IrExpr IrExpr;
typedef struct IrStmt IrStmt;
typedef struct IrParam IrParam;
typedef struct IrUse IrUse;
typedef struct IrOp IrOp;
typedef struct IrClause IrClause;
typedef struct IrName IrName;
typedef struct IrStep IrStep;

//
// ir.c: types, sizes, tensors, ops, regions and their builders
//

// Element types. 16-bit types are stored as 16-bit values and computed in
// float, rounded to nearest even after every operation (as CUDA's operators do).
typedef enum {
  IR_VOID,  // unknown / not a value
  IR_F32,
  IR_F16,   // __half
  IR_BF16,  // __nv_bfloat16
  IR_F64,
  IR_I32,   // wrapping two's complement (as on the GPU)
  IR_I64,
  IR_U32,
  IR_U8,    // unsigned char, uint8_t: only as a buffer's element type (values promote to int)
  IR_I8,    // signed char, char, int8_t: the same
  IR_BOOL,  // bool: the same; a value stored converts to 0 or 1
} IrType;

const char *ir_type_name(IrType t);  // "f32", "f16", ...
int ir_type_size(IrType t);          // bytes per element
bool ir_type_is_float(IrType t);
bool ir_type_is_narrow(IrType t);  // u8, i8, bool: stored in a byte, computed as int
// C's usual arithmetic conversions with CUDA's 16-bit rules (see IrExpr).
IrType ir_type_promote(IrType a, IrType b);
// The type of a NCCL datatype enumerator ("ncclFloat", "ncclHalf", "ncclBfloat16",
// "ncclInt32", ...) or a C/CUDA type name ("float", "__half", "int", ...); IR_VOID if unknown.
IrType ir_type_from_name(const char *name);
// Round a double to the nearest value of type t (nearest even), as CUDA does.
double ir_round(IrType t, double x);

// Layout of a tensor's value on the ranks (CoCoNet's terms).
typedef enum {
  IR_LAYOUT_NONE,        // not inferred yet
  IR_LAYOUT_REPLICATED,  // the same on every rank
  IR_LAYOUT_LOCAL,       // different on every rank
  IR_LAYOUT_SLICED,      // rank r holds slice r (and the tail, see IrSpan); other elements are stale
} IrLayout;

const char *ir_layout_name(IrLayout l);  // "replicated", "local", "sliced"

// A host value the region uses: a size (count, modulus, GEMM dimension) or a
// kernel's scalar argument. Identified by its source text: the same text is the
// same variable (so `n` as a count and `n` as a kernel argument agree). The
// interpreter draws random values for variables.
struct IrVar {
  IrVar *next;       // next variable of the region
  int id;            // 1-based, in order of first use
  const char *text;  // the host expression, whitespace removed: "n", "lr", "hidden*4"
  IrType type;       // I64 for sizes; the parameter's type for scalars
  bool is_size;      // used as a size: a positive integer
  IrVar *same;       // a variable the schedule assumes this one equals (ir_region_assume_equal), or NULL:
                     // sizes compare through it, and the interpreter and --verify give both one value
};

// The variable with this text (whitespace-insensitive), added with type if new.
IrVar *ir_var_get(IrRegion *r, const char *text, IrType type);

// A size expression: a constant, a variable, or a product of sizes.
typedef enum { IR_SIZE_CONST, IR_SIZE_VAR, IR_SIZE_MUL } IrSizeKind;

struct IrSize {
  IrSizeKind kind;
  long value;        // IR_SIZE_CONST
  IrVar *var;        // IR_SIZE_VAR
  IrSize *lhs, *rhs; // IR_SIZE_MUL
};

IrSize *ir_size_const(IrRegion *r, long value);
IrSize *ir_size_var(IrRegion *r, const char *text);  // marks the variable is_size
IrSize *ir_size_mul(IrRegion *r, IrSize *a, IrSize *b);
// Parse a host count expression: products of identifiers, integer literals and
// sizeof(T) for T a known type ("n", "tokens * hidden", "4 * n", "n * sizeof(float)"),
// parenthesized products among them ("layers * (2 * n)"). Casts to integer types
// like (size_t) are skipped. Anything else becomes one variable bound to
// the whole text.
IrSize *ir_size_parse(IrRegion *r, const char *text);
// Whether ir_size_parse skips a C-style cast to the type named so (its blanks dropped:
// "unsignedint"): an integer type of 32 bits or more by its standard name.
bool ir_size_cast_skipped(const char *type_name);
// Structural equality up to the order of factors (n*m == m*n; 2*3 == 6).
bool ir_size_equal(const IrSize *a, const IrSize *b);
// Evaluate with the given variable values (indexed by IrVar id; vals[0] unused).
long ir_size_eval(const IrSize *s, const double *vals);

// A tensor: one device buffer the region touches, by the text of its pointer.
struct IrTensor {
  IrTensor *next;      // next tensor of the region
  IrRegion *region;    // owner
  int id;              // 1-based, in order of first use
  const char *name;    // display name: the text if it is an identifier, else "t<id>"
  const char *text;    // the buffer expression as written: "grad", "d_out + off"
  IrType type;         // element type
  IrSize *count;       // number of elements (the count of the first op that uses it)
  IrSize *also[4];     // other counts later ops use it with (the --verify harness allocates the largest)
  int nalso;
  IrLayout layout_in;  // layout of its value at region entry (ir_infer)
  IrLayout layout_out; // layout of its value at region exit as written (ir_infer)
  IrLayout layout_sched; // layout at region exit as scheduled (ir_schedule)
  bool written;        // some op of the region writes it (ir_infer)
  bool replicated;     // declared replicated(...)
  bool live_after;     // contents matter after the region (default; cleared by shard/scratch)
  bool shard;          // shard(...): valid after the region only on this rank's slice
  bool scratch;        // scratch(...): contents unspecified after the region
  bool apart;          // tested apart from the region's other buffers at run time (a
                       // collective of a group moved past the kernels that use it)
  SrcLoc first_use;    // where the region first uses it
};

// The tensor with this text (whitespace-insensitive), added if new.
// count may be NULL when unknown (set by the first op that has one).
IrTensor *ir_tensor_get_or_add(IrRegion *r, const char *text, IrType type, IrSize *count,
                               SrcLoc loc);
// An op uses t over count elements: its count when it has none, else one of its others (also).
void ir_tensor_count(IrTensor *t, IrSize *count);
IrTensor *ir_tensor_find(const IrRegion *r, const char *text);

// One tensor as an op uses it: the tensor, and after ir_infer the version of its
// value (0 = value at region entry, k = after its k-th write) and that value's layout.
typedef struct IrRef {
  IrTensor *t;
  int version;
  IrLayout layout;
} IrRef;

// Index forms of a pointwise read. K is an IrSize (a kernel parameter K is
// bound to its launch argument's text by the extraction).
typedef enum {
  IR_IDX_I,      // t[i]
  IR_IDX_MOD,    // t[i % K]  (broadcast: bias over rows)
  IR_IDX_DIV,    // t[i / K]  (broadcast: per-row scale)
  IR_IDX_CONST,  // t[K]      (one element for all)
  IR_IDX_OTHER,  // anything else (kept as text): the op cannot be sliced or interpreted
} IrIndexKind;

// A tensor an op reads or writes; ops keep lists of these (IrOp.reads/.writes).
struct IrUse {
  IrUse *next;
  IrRef ref;            // tensor, version and layout (ir_infer)
  IrIndexKind index;    // reads: the least slice-friendly form seen (I < MOD,DIV < CONST < OTHER);
                        // writes: I, or DIV for a row-wise kernel's per-row output (t[row])
  const IrExpr *expr;   // pointwise reads: the read node with that form (for messages)
  SrcLoc loc;           // where (the read node's loc if set, else the op's)
};

// Pointwise expressions: a DAG evaluated per element i. Each node has a type;
// constructors infer it with C's usual conversions, where __half op __half stays
// __half, 16-bit mixed with anything else is f32, and comparisons are i32.
typedef enum {
  IR_E_INT,     // integer constant (ival)
  IR_E_FLOAT,   // floating constant (fval)
  IR_E_INDEX,   // the element index i (i64, absolute: a slice keeps global indices)
  IR_E_READ,    // tensor[index]
  IR_E_PARAM,   // a scalar kernel parameter
  IR_E_LOCAL,   // the value of a let statement
  IR_E_UNARY,   // uop a
  IR_E_BINARY,  // a bop b
  IR_E_SELECT,  // a ? b : c
  IR_E_CAST,    // (type) a, rounding to nearest even for 16-bit types and f32
  IR_E_CALL,    // math function (fn) of a [, b [, c]]
  IR_E_PHILOX,  // curand Philox4x32-10 uniform draw, see below
  IR_E_BITCAST, // the bits of a as another 32-bit type (__float_as_uint and friends)
  IR_E_OPAQUE,  // a call the IR does not model (a CUDA or library function of values, `text` as
                // written) of a [, b [, c]]: the generated code runs the kernel's own text, which
                // calls it; the interpreter models it as a fixed function of its arguments
} IrExprKind;

typedef enum { IR_NEG, IR_NOT, IR_BITNOT } IrUnaryOp;

typedef enum {
  IR_ADD, IR_SUB, IR_MUL, IR_DIV, IR_MOD,
  IR_LT, IR_LE, IR_GT, IR_GE, IR_EQ, IR_NE,
  IR_LAND, IR_LOR,
  IR_BITAND, IR_BITOR, IR_BITXOR, IR_SHL, IR_SHR,
} IrBinaryOp;

typedef enum {
  IR_FN_SQRT, IR_FN_RSQRT, IR_FN_EXP, IR_FN_EXP2, IR_FN_LOG, IR_FN_LOG2, IR_FN_LOG1P,
  IR_FN_TANH, IR_FN_ERF, IR_FN_SIN, IR_FN_COS, IR_FN_FABS, IR_FN_FLOOR, IR_FN_CEIL,
  IR_FN_FMIN, IR_FN_FMAX, IR_FN_POW, IR_FN_COPYSIGN,
  IR_FN_FMA,   // fma(a, b, c): a * b + c rounded once
} IrMathFn;

// Find a CUDA math function by name: "sqrtf" -> (IR_FN_SQRT, f32), "sqrt" ->
// (IR_FN_SQRT, f64), "__expf" -> (IR_FN_EXP, f32), "rsqrtf", "fmaxf", "powf",
// "fmaf", "__fmaf_rn", "copysignf", ...
bool ir_math_lookup(const char *name, IrMathFn *fn, IrType *type);
int ir_math_arity(IrMathFn fn);
const char *ir_math_name(IrMathFn fn, IrType type);  // "sqrtf" for (SQRT, f32)

struct IrExpr {
  IrExprKind kind;
  IrType type;          // type of the value
  SrcLoc loc;           // optional (ir_expr_at): where the expression is in the kernel
  int64_t ival;         // IR_E_INT
  double fval;          // IR_E_FLOAT
  IrTensor *tensor;     // IR_E_READ
  IrIndexKind index;    // IR_E_READ
  IrSize *k;            // IR_E_READ: K of MOD/DIV/CONST
  const char *text;     // IR_E_READ with IR_IDX_OTHER: the index as written; IR_E_OPAQUE: the call
  IrParam *param;       // IR_E_PARAM
  IrStmt *let;          // IR_E_LOCAL
  int op;               // IR_E_UNARY: IrUnaryOp; IR_E_BINARY: IrBinaryOp
  IrMathFn fn;          // IR_E_CALL
  IrExpr *a, *b, *c;    // operands (SELECT: a ? b : c; PHILOX: a = seed, b = offset)
  int draw;             // IR_E_PHILOX: which uniform after curand_init (0, 1, 2, ...)
  bool sometimes;       // IR_E_READ: the program as written reads it only under a condition (an if,
                        // a later operand of && or ||, a ?: branch, after a return), even where the
                        // IR reads it for every element (a local's value)
};

IrExpr *ir_expr_int(IrRegion *r, int64_t v, IrType type);
IrExpr *ir_expr_float(IrRegion *r, double v, IrType type);
IrExpr *ir_expr_index(IrRegion *r);
// A read t[i], t[i % k], t[i / k], t[k]; k is NULL for IR_IDX_I.
IrExpr *ir_expr_read(IrRegion *r, IrTensor *t, IrIndexKind index, IrSize *k);
// A read at an index the analyzer cannot express (text as written, e.g. "i + 1").
IrExpr *ir_expr_read_other(IrRegion *r, IrTensor *t, const char *index_text);
IrExpr *ir_expr_param(IrRegion *r, IrParam *p);
IrExpr *ir_expr_unary(IrRegion *r, IrUnaryOp op, IrExpr *a);
IrExpr *ir_expr_binary(IrRegion *r, IrBinaryOp op, IrExpr *a, IrExpr *b);
IrExpr *ir_expr_select(IrRegion *r, IrExpr *cond, IrExpr *a, IrExpr *b);
IrExpr *ir_expr_cast(IrRegion *r, IrType type, IrExpr *a);
IrExpr *ir_expr_call(IrRegion *r, IrMathFn fn, IrType type, IrExpr *a, IrExpr *b);
IrExpr *ir_expr_fma(IrRegion *r, IrType type, IrExpr *a, IrExpr *b, IrExpr *c);  // fma(a, b, c)
// curand_init(seed, i, offset, &st) then the (draw+1)-th curand_uniform(&st):
// a float in (0, 1]. The subsequence is always the absolute element index i, so
// a slice draws the same numbers as the whole.
IrExpr *ir_expr_philox(IrRegion *r, IrExpr *seed, IrExpr *offset, int draw);
// __float_as_uint(a), __uint_as_float(a), __float_as_int(a), __int_as_float(a):
// a's bits as type (f32 <-> u32 or i32).
IrExpr *ir_expr_bitcast(IrRegion *r, IrType type, IrExpr *a);
// A call the IR does not model, as written (`text`), of up to three values.
IrExpr *ir_expr_opaque(IrRegion *r, IrType type, const char *text, IrExpr *a, IrExpr *b, IrExpr *c);
// The first such call in a pointwise op's statements (NULL: none).
const IrExpr *ir_pw_opaque(const IrOp *op);
IrExpr *ir_expr_at(IrExpr *e, SrcLoc loc);  // set e->loc, return e

// A scalar parameter of a pointwise kernel, bound to its launch argument.
struct IrParam {
  IrParam *next;
  const char *name;      // the kernel's parameter name
  const char *arg_text;  // the launch argument as written
  IrType type;
  IrVar *var;            // the region variable with that text
};

// Per-element statements of a pointwise kernel, executed in order. A
// reduction (atomicAdd(&acc[K], v) in the kernel) adds every element's value
// to one element of an accumulator that the kernel does not otherwise touch:
// the sum is over the op's span, in an order that is not defined (the
// interpreter sums exactly and rounds once per op).
typedef enum { IR_S_LET, IR_S_STORE, IR_S_REDUCE } IrStmtKind;

struct IrStmt {
  IrStmtKind kind;
  IrStmt *next;
  const char *name;   // IR_S_LET: the local's name as written
  IrTensor *tensor;   // IR_S_STORE: tensor[i] = value; IR_S_REDUCE: tensor[K] += value
  IrExpr *target;     // IR_S_REDUCE: tensor[K] as read (IR_IDX_CONST; the op reads the old sum)
  IrExpr *value;
  SrcLoc loc;
  bool sometimes;     // IR_S_STORE: the program as written stores only under a condition
};

// Collectives (NCCL).
typedef enum {
  IR_ALLREDUCE, IR_REDUCESCATTER, IR_ALLGATHER, IR_BROADCAST, IR_REDUCE, IR_SEND, IR_RECV,
} IrCollKind;

typedef enum { IR_RED_NONE, IR_RED_SUM, IR_RED_PROD, IR_RED_MAX, IR_RED_MIN, IR_RED_AVG } IrRedOp;

const char *ir_coll_name(IrCollKind k);  // "AllReduce", ...
// What messages call an op: its kernel, GEMM function, collective, CUDA call, or "statement".
const char *ir_op_title(const IrOp *op);
const char *ir_red_name(IrRedOp op);     // "sum", ...
const char *ir_nccl_type_name(IrType t);          // IR_F32 -> "ncclFloat"

// What kernel a fuse group becomes, told by its first op: the split form
// (ReduceScatter, kernels on the slice and the tail, AllGathers), the one-shot
// form (AllReduce + kernels as written), or none (not a group's first op, or a
// group inside overlap chunks: it runs unfused).
typedef enum { IR_FUSED_NONE, IR_FUSED_SPLIT, IR_FUSED_ONESHOT } IrFusedForm;
IrFusedForm ir_fused_form(const IrOp *op);
#define IR_ONESHOT_MAX_BYTES (1u << 20)  // = COCONET_ONESHOT_MAX_BYTES (runtime/include/coconet_fused.h)
IrRedOp ir_red_from_name(const char *nccl_name);  // "ncclSum" -> IR_RED_SUM; IR_RED_NONE if unknown

typedef struct IrCollective {
  IrCollKind kind;
  IrRedOp red;            // AllReduce, ReduceScatter, Reduce
  IrTensor *in;           // sendbuff (NULL for Recv)
  IrTensor *out;          // recvbuff (NULL for Send); == in when in place
  IrSize *count;          // NCCL's count argument (RS: recvcount, AG: sendcount); see IrSpan
  IrType dtype;
  const char *dtype_text; // "ncclFloat"
  const char *count_text; // as written
  const char *comm;       // communicator text
  const char *stream;     // stream text
  const char *wrapper;    // "NCCLCHECK" / "ncclCheck" when the call is wrapped, else NULL
  const char *root;       // Broadcast/Reduce root text, else NULL
  const char *peer;       // Send/Recv peer text, else NULL
  const char *pipe_tag;   // pipeline: a Send of this rank's slice or a Recv of the peer's (NULL: as written)
  const char *pipe_group; // pipeline Recv: the communicator the received slices are all-gathered on
  IrVar *root_var;        // set by ir_op_collective from root
} IrCollective;

// cuBLAS GEMM (column-major): C[m x n] = alpha * op(A)[m x k] * op(B)[k x n] + beta * C.
// Element (row, col) of C is c[row + col * ldc]: a column is contiguous, so
// overlap chunks C by columns (ranges of n).
#define IR_GEMM_MAX_ARGS 24
typedef struct IrGemm {
  const char *fn;                      // "cublasSgemm", "cublasHgemm", "cublasGemmEx"
  const char *args[IR_GEMM_MAX_ARGS];  // every argument as written, in order
  int nargs;
  const char *wrapper;                 // "CUBLASCHECK" when wrapped, else NULL
  bool transa, transb;                 // CUBLAS_OP_T / CUBLAS_OP_C
  IrSize *m, *n, *k, *lda, *ldb, *ldc;
  const char *alpha, *beta;            // texts (e.g. "&one")
  bool alpha_known, beta_known;        // literal or known values
  double alpha_value, beta_value;
  IrVar *alpha_var, *beta_var;         // set by ir_op_gemm when not known ("&alpha" -> alpha)
  IrTensor *a, *b, *c;
  IrType compute;                      // accumulation type (f32 unless f64)
} IrGemm;

typedef struct IrCopy {                // cudaMemcpyAsync(dst, src, bytes, kind, stream)
  IrTensor *dst, *src;
  IrSize *count;                       // elements
  const char *bytes_text, *kind_text, *stream;
} IrCopy;

typedef struct IrMemset {              // cudaMemsetAsync(dst, value, bytes, stream)
  IrTensor *dst;
  int value;                           // the byte value
  IrSize *count;                       // elements
  const char *bytes_text, *stream;
} IrMemset;

typedef struct IrEvent {               // cudaEventRecord(event, stream) / cudaStreamWaitEvent(stream, event)
  bool wait;
  const char *event, *stream;
} IrEvent;

// The user's own text for one element of a pointwise kernel (analyze_text.c):
// what the generated code runs for element i, so that a schedule computes each
// element with the kernel as written (codegen_text.c). It is the element loop's
// statements, the locals before the loop they use and, when they read where
// the thread is, threadIdx/blockIdx/blockDim/gridDim as the launch as written
// gives them to the thread of element i. Its parameters are the kernel's that
// the text names, in the kernel's order, and the element index.
typedef struct IrTextParam {
  const char *name;       // as the kernel names it
  const char *decl;       // a scalar's or the index's declaration ("float lr", "size_t i"); a buffer's
                          // type as declared ("const float *__restrict__")
  const char *elem;       // a buffer's element type as declared ("const float")
  IrTensor *tensor;       // a buffer (NULL: a scalar or the index)
  IrParam *param;         // a scalar (NULL: a buffer or the index)
  bool raw;               // the text uses the buffer otherwise than as name[index]: passed as a pointer
  bool lazy;              // ... reads it only under a condition (ir_pw_reads_lazily): a pointer unless another
                          // op of the generated kernel reads it for every element (the text has its index)
} IrTextParam;

typedef struct IrTextEdit {
  unsigned at, len;       // bytes of the body replaced
  int param;              // name[index] of buffer params[param], by the element when it is passed as
                          // one (-1: an edit by `repl`)
  const char *repl;       // `return` for the element loop's `continue`
} IrTextEdit;

typedef struct IrText {
  IrTextParam *params;
  int nparams;
  const char *body;       // the statements, each line indented as written
  const char *scope;      // a template's parameters declared as the launch's arguments ("typedef float T;\n"),
                          // the declarations the text is read under (NULL: none)
  const char *ns_open;    // the kernel's namespaces, reopened around the text ("namespace fw {\n"; "": none)
  const char *ns_close;   // ... and closed ("}  // namespace fw\n")
  const char *ns_prefix;  // ... and how a call names what is in them ("fw::")
  bool beside;            // the kernel is defined in the region's function's namespaces, after the place above
                          // them where generated code goes: the generated kernel goes beside the function
  IrTextEdit *edits;      // in order of `at`
  int nedits;
  const char *index_decl; // the element index as declared ("int i"), for a text that does not take it: it
                          // takes it first when the element function holds a buffer it edits as a pointer
                          // (another op of the kernel needs it so), whose t[i] stays as written
  SrcLoc loc;             // where the element's statements start
} IrText;

typedef struct IrPointwise {
  const char *kernel;                  // the kernel as named at the launch (with template args)
  const char *grid, *block, *shmem, *stream;  // launch configuration texts ("0" when omitted)
  const char *args_text;               // all launch arguments as written
  IrSize *count;                       // elements: i runs over [0, count)
  IrParam *params;                     // scalar parameters
  IrStmt *body;                        // per-element statements (NULL for a row-wise kernel)
  // A row-wise kernel (analyze_row.c): one block (warp, thread) per row of
  // `row` elements (count = rows * row), each row computed from the same row
  // of the buffers read at [i] and from columns [i % row] of the others; its
  // body is kept as the user wrote it and the schedule launches it on a span
  // of whole rows.
  IrSize *row;                         // elements per row (NULL: an elementwise kernel)
  const char *row_roles;               // one letter per launch argument: 'p' a pointer to rows (moved to
                                       // the span's first element), 'o' a pointer to one element per row
                                       // (moved by the span's first row), 'r' the row count, 'x' as written;
                                       // 'P', 'O': as 'p', 'o', and the kernel tests the pointer against null;
                                       // 's' a row stride, as written (checked to equal the row length)
  int row_threads;                     // threads per row: 0 a block (the grid becomes the span's row count),
                                       // 32 a warp or 1 a thread (the grid: blocks enough for the span's rows)
  SrcLoc row_loc;                      // where the kernel shows it is row-wise (its row index)
  const char *row_fuse_why;            // why `fuse` cannot take it (its body is copied into the fused kernel,
                                       // codegen_rows.c); NULL: it can
  SrcLoc row_fuse_loc;                 // where that reason points
  IrText *text;                        // the user's text for an element (NULL: generated from `body`)
  const char *text_why;                // ... why there is none
} IrPointwise;

// Which elements an op touches. An op's range of a tensor of `count` elements:
// the chunk c of K (K = nchunks, 0 or 1 = no chunking) covers units
// [c*q, c == K-1 ? U : (c+1)*q) with U = count/unit and q = U/K (floor), i.e.
// elements [B, B+L). Within the chunk, with s = L/N (floor) for N ranks and
// rank r:
//   IR_PART_ALL    [B, B+L)                   every element
//   IR_PART_SLICE  [B+r*s, B+(r+1)*s)         this rank's slice
//   IR_PART_BODY   [B, B+N*s)                 the part that divides evenly (RS/AG)
//   IR_PART_TAIL   [B+N*s, B+L)               the remainder: every rank does it
// A ReduceScatter on BODY leaves rank r's reduced slice at B+r*s (NCCL's in-place
// convention), an AllGather on BODY gathers the slices there; the tail is
// reduced by an AllReduce on TAIL and computed redundantly by every rank.
typedef enum { IR_PART_ALL, IR_PART_SLICE, IR_PART_BODY, IR_PART_TAIL } IrPart;

typedef struct IrSpan {
  IrPart part;
  int chunk, nchunks;
  IrSize *unit;        // chunk boundaries are multiples of unit elements (NULL = 1)
  IrSize *grain;       // slices are multiples of grain elements (whole rows of a row-wise
                       // kernel; NULL = 1): s = (L / grain / N) * grain
} IrSpan;

const char *ir_part_name(IrPart p);  // "all", "slice", "body", "tail"
// The element range [*lo, *hi) of a span; count, unit and grain evaluated.
void ir_span_bounds(const IrSpan *sp, long count, long unit, long grain, int rank, int nranks, long *lo,
                    long *hi);

typedef enum {
  IR_OP_COLLECTIVE, IR_OP_GEMM, IR_OP_POINTWISE, IR_OP_COPY, IR_OP_MEMSET, IR_OP_EVENT,
  IR_OP_OPAQUE,   // any other statement: kept in place, an ordering barrier
} IrOpKind;

// What a host function seen through runs besides its collective (front.h's
// Beside): its statements as written, which the schedule runs in a copy of its
// own inside the function's namespaces (codegen), once, where the op's scheduled
// work starts; not when the op runs as written (the function runs them).
typedef struct IrBeside {
  const char *name, *title;  // "ftNcclAllReduceSum", as explained "ftNcclAllReduceSum<float>"
  const char *text;          // the statements, each from its line's start
  const char *ns_open, *ns_close, *ns_prefix;  // the function's namespaces
  const char *scope;         // its template's parameters as the instance's arguments, or ""
  SrcLoc loc;                // the function
  const char *lines;         // where the statements are ("63, 64, 69")
  const char *space;         // the copy's namespace, inside the function's ("coconet_post_attn_1")
  const char *where;         // a name they read whose value is where it is written ("__PRETTY_FUNCTION__"), or NULL
  bool late;                 // the copy goes beside the region's function, inside its namespaces (ns_open and
                             // ns_close then open the function's others only): it is defined in them, after the
                             // top-level declaration holding the region begins
} IrBeside;

struct IrOp {
  IrOpKind kind;
  IrOp *next;           // next op in the list holding it (region->ops or region->sched)
  int id;               // 1-based position in region->ops (scheduled copies keep it)
  SrcRange range;       // the source statement
  SrcLoc loc;           // where diagnostics point (range.begin)
  const char *text;     // the statement as written (may be NULL except for OPAQUE)
  const char *why_opaque;  // OPAQUE: why coconet does not see into it, when it nearly did (a host wrapper)
  const char *why_not_check;  // OPAQUE: why it is not read as an error check (front's walk), or NULL
  bool error_check;     // OPAQUE: an error check (cudaCheck(cudaGetLastError())) naming no buffer: reads and
                        // writes none, still an ordering barrier
  IrUse *reads;         // tensors read, one entry per tensor
  IrUse *writes;        // tensors written, one entry per tensor
  const IrOp *orig;     // scheduled ops: the original op it comes from (NULL in region->ops)
  IrSpan span;          // scheduled ops: which elements (ALL for original ops)
  bool generated;       // scheduled ops that split created (RS/AG/tail AR)
  int fuse_group;       // 0 = none; ops with the same nonzero group become one kernel (ir_fused_form)
  int nccl_group;       // 0, or k: inside the region's k-th ncclGroupStart()/ncclGroupEnd()
                        // (the Start and End statements themselves included)
  const IrBeside *beside;  // what a host function seen through runs besides the op, else NULL
  union {
    IrCollective coll;  // IR_OP_COLLECTIVE
    IrGemm gemm;        // IR_OP_GEMM
    IrPointwise pw;     // IR_OP_POINTWISE
    IrCopy copy;        // IR_OP_COPY
    IrMemset memset;    // IR_OP_MEMSET
    IrEvent event;      // IR_OP_EVENT
  };
};

// Append a use of t to an op's reads or writes list (once per tensor).
IrUse *ir_use_add(IrRegion *r, IrUse **list, IrTensor *t, SrcLoc loc);

// Op builders: append to region->ops. The info structs are copied (strings too);
// the reads/writes lists are derived.
IrOp *ir_op_collective(IrRegion *r, SrcRange range, const IrCollective *info);
IrOp *ir_op_gemm(IrRegion *r, SrcRange range, const IrGemm *info);
IrOp *ir_op_copy(IrRegion *r, SrcRange range, const IrCopy *info);
IrOp *ir_op_memset(IrRegion *r, SrcRange range, const IrMemset *info);
IrOp *ir_op_event(IrRegion *r, SrcRange range, const IrEvent *info);
IrOp *ir_op_opaque(IrRegion *r, SrcRange range, const char *text);
// After an error that a statement coconet does not see into may explain: a
// note for each opaque op of r that says why it is opaque.
void ir_note_opaque(const IrRegion *r);
// Whether a statement of r coconet does not see into names text (as a whole token).
bool ir_opaque_mentions(const IrRegion *r, const char *text);
// A pointwise kernel launch: info gives kernel, launch texts and count (params
// and body are built with the calls below).
IrOp *ir_op_pointwise(IrRegion *r, SrcRange range, const IrPointwise *info);
IrParam *ir_pw_param(IrRegion *r, IrOp *op, const char *name, IrType type, const char *arg_text);
IrExpr *ir_pw_let(IrRegion *r, IrOp *op, const char *name, IrExpr *value, SrcLoc loc);  // returns the IR_E_LOCAL
void ir_pw_store(IrRegion *r, IrOp *op, IrTensor *t, IrExpr *value, SrcLoc loc);      // t[i] = value
// t[k] += value, a sum over the elements (k a constant element of t).
void ir_pw_reduce(IrRegion *r, IrOp *op, IrTensor *t, long k, IrExpr *value, SrcLoc loc);
// The accumulator op reduces into (the first, when several; NULL: none).
const IrStmt *ir_pw_reduction(const IrOp *op);
// Whether op is a pointwise kernel that reduces into t.
bool ir_pw_sums_into(const IrOp *op, const IrTensor *t);
// Whether pointwise op reads t (at any index) where the program as written reads it for
// every element (not only under a condition: IrExpr.sometimes).
bool ir_pw_reads_always(const IrOp *op, const IrTensor *t);
// Whether t is a buffer of one of the region's collectives (it holds every element).
bool ir_region_collective_buffer(const IrRegion *r, const IrTensor *t);
// A buffer op reads, never writes, and reads only under a condition (`use_mask &&
// mask[i]`): it need not hold the elements (NULL while a flag is off), so generated
// code reads it only where the kernel's text does, never once per element.
bool ir_pw_reads_lazily(const IrRegion *r, const IrOp *op, const IrTensor *t);
// A buffer op reaches (reads or writes) only under a condition, no collective's buffer:
// it may be NULL where the program does not reach it.
bool ir_pw_reaches_sometimes(const IrRegion *r, const IrOp *op, const IrTensor *t);
// Whether op's IR, printed as C, reads t wherever its statement runs (not only under a
// later operand of && or ||, or a ?: branch): a local's value is computed for every element.
bool ir_pw_reads_eagerly(const IrOp *op, const IrTensor *t);
// The region's schedule sums on slices (reorder of a kernel that reduces): its
// sums run in another order than as written, and what depends on them differs by
// rounding, magnified where values cancel; the comparisons then bound the error
// by the tolerance times the largest magnitude of the buffer (a normwise bound).
bool ir_sched_reassociates(const IrRegion *r);
// Remove the stores a later store of the same tensor overwrites before anything
// reads it (`if (c) { t[i] = a; return; } t[i] = b;` leaves t[i] = c ? a : b),
// and with them their reads.
void ir_pw_drop_dead_stores(IrRegion *r, IrOp *op);
// Drops the lets no store uses (directly or through other lets); lets have no effects.
void ir_pw_drop_dead_lets(IrRegion *r, IrOp *op);
// The two ops store the same values in the same order (lets compared by value,
// tensors and parameters by name: the ops may be in different regions).
bool ir_pw_same_stores(const IrOp *a, const IrOp *b);

// Clauses of the region pragma, in the order written.
typedef enum {
  IR_CL_SPLIT,        // split / split(b, ...)
  IR_CL_REORDER,      // reorder
  IR_CL_SHARD,        // shard(b, ...)
  IR_CL_SCRATCH,      // scratch(b, ...)
  IR_CL_FUSE,         // fuse
  IR_CL_OVERLAP,      // overlap / overlap(chunks=K)
  IR_CL_AUTO,         // schedule(auto)
  IR_CL_REPLICATED,   // replicated(b, ...): inputs identical on every rank (information)
  IR_CL_PIPELINE,     // pipeline(tag=T[, group=C]): send and receive slices between stages
} IrClauseKind;

const char *ir_clause_name(IrClauseKind k);  // "split", ...

struct IrName {       // a clause argument
  IrName *next;
  const char *text;
  SrcLoc loc;
};

// overlap(chunks=K): the largest K; the runtime's COCONET_MAX_CHUNKS
// (runtime/include/coconet.h) is the same (tests/golden/legality checks it).
enum { IR_MAX_CHUNKS = 64 };

struct IrClause {
  IrClause *next;
  IrClauseKind kind;
  SrcLoc loc;         // the clause name
  IrName *args;       // buffer names (split, shard, scratch, replicated)
  int chunks;         // overlap: K (0 = not given: the default, 4)
  const char *tag;    // pipeline: tag=T, the name both ends give
  const char *group;  // pipeline: group=C, the receiving side's communicator text (NULL: not given)
  SrcLoc group_loc;   // pipeline: where group= is written
};

IrClause *ir_clause_add(IrRegion *r, IrClauseKind kind, SrcLoc loc);
void ir_clause_add_arg(IrRegion *r, IrClause *c, const char *text, SrcLoc loc);

// What ir_schedule did, step by step (for --explain).
struct IrStep {
  IrStep *next;
  IrClauseKind clause;
  const char *what;   // one line: what was checked and what changed
};

// An argument with side effects (a call, ++, an assignment) of a statement
// the schedule rewrites: evaluated exactly once, in source order, into
// `const auto NAME = TEXT;` at the top of the generated block; every use,
// generated or kept as written, reads NAME (the IR holds NAME in its place).
typedef struct IrHoist {
  struct IrHoist *next;
  const char *name;     // "coconet_arg1", ...
  const char *text;     // as written
  SrcRange range;       // where it is written
  IrType type;          // a kernel's scalar parameter's type, when the text is an object of a class the
                        // call converts (its conversion runs once, here); IR_VOID: auto
} IrHoist;

// A run-time precondition of the schedule: a pointer a kernel tests against
// NULL that the launch passes as a variable. The analysis takes the test as
// true; the generated block runs the schedule when `test` holds and the region
// as written otherwise (codegen.c).
typedef struct IrAssume {
  struct IrAssume *next;
  const char *var;      // the host variable, as the launch passes it ("master", "tensor.size")
  const char *other;    // NULL: var is not null; else var equals other ("shard.size")
  const char *test;     // "master != nullptr", "(size_t)(tensor.size) == (size_t)(shard.size)"
  const char *kernel;   // the kernel that tests it, or steps from slice to slice by var
  const char *param;    // that kernel's stride parameter (NULL for a null test)
  SrcLoc loc;           // the kernel's test, or its use of the stride
  bool sometimes;       // not a test of the kernel's: it reaches var's buffer only under a condition,
                        // where the program may pass NULL, and the schedule would reach it always
  const char *launcher; // the launcher that picks the kernel at run time: the schedule is for the
                        // kernel it launches when var (the path's conditions, = test) holds; else NULL
  int divisor;          // > 1: a row-wise kernel reads its rows `divisor` elements at a time, and var,
                        // the row length as passed, must be a multiple ("(var) % divisor == 0"); else 0
  bool guard;           // the region runs the collective `kernel` only under `if (test)`: the schedule
                        // is for it running
} IrAssume;

// What a text of the IR stands for in the source: the hoisted argument's
// text for "coconet_argN", else the text itself (for messages).
const char *ir_text_as_written(const IrRegion *r, const char *text);

struct IrRegion {
  IrRegion *next;       // next region of the program
  IrProgram *prog;      // owner (arena)
  const char *name;     // name(ID) or FUNCTION_LINE
  SrcLoc loc;           // the pragma
  SrcRange range;       // the statement the pragma applies to (what the rewriter replaces)
  IrClause *clauses;    // in the order written
  IrVar *vars;          // sizes and scalars, in order of first use
  int nvars;
  IrTensor *tensors;    // in order of first use
  int ntensors;
  IrOp *ops;            // the statements as written, in order
  int nops;
  IrOp **written;       // when extract dropped a group or moved a collective: ops as written, in
  int nwritten;         // source order, group calls included (the region as written runs them)
  IrHoist *hoists;      // arguments evaluated once at the top (extract), in source order
  IrHoist *locals;      // declarations in the region of locals of values nothing in it changes, emitted
                        // first, as written (extract; name NULL, text the statement), in source order
  IrStep *notes;        // what the analysis did that --explain says (a template read as its instance)
  IrAssume *assumes;    // run-time preconditions of the schedule (the region as written otherwise)
  bool inferred;        // ir_infer ran on ops
  // After ir_schedule (NULL / 0 before):
  IrOp *sched;          // the scheduled op list (copies of ops with spans, plus generated ops)
  int nfuse;            // fused groups are 1..nfuse
  int overlap_chunks;   // K when overlap ran, else 0
  bool split_done, reorder_done;
  IrStep *steps;        // explanation
};

struct IrProgram {
  IrRegion *regions;    // in source order
  struct IrArena *arena;
};

IrProgram *ir_program_new(void);
void ir_program_free(IrProgram *p);  // frees every object of the program
IrRegion *ir_region_new(IrProgram *p, const char *name, SrcLoc loc, SrcRange range);
void ir_region_note(IrRegion *r, const char *what);  // appended to r->notes
// Records that the schedule needs `var != nullptr` (once per variable).
void ir_region_assume(IrRegion *r, const char *var, const char *kernel, SrcLoc loc);
// The variables a run-time precondition reads (at most max, each at most 255
// characters, each once): var's and other's bases; for a launcher's path conditions, a
// collective's guard and a divisor's row length every
// name not after '.', '->' or '::', not before '(' or '::' and not a word of C++ (`n`, not
// `std`, `min`, `float`); -1 when there are more than max.
int ir_assume_names(const IrAssume *a, char names[][256], int max);
// The schedule is for the kernel that launcher launches when `when` holds (loc: the launch).
void ir_region_assume_path(IrRegion *r, const char *when, const char *kernel, const char *launcher, SrcLoc loc);
// The region runs collective `callee` under `if (test)` (loc: the if): the
// schedule is for test holding (IrAssume.guard).
void ir_region_assume_guard(IrRegion *r, const char *test, const char *callee, SrcLoc loc);
// ... because the kernel reaches var's buffer only under a condition (IrAssume.sometimes).
void ir_region_assume_reached(IrRegion *r, const char *var, const char *kernel, SrcLoc loc);
// A row-wise kernel reads rows of `length` elements (as the launch passes it) k at a
// time: the schedule is for (length) % k == 0 (IrAssume.divisor).
void ir_region_assume_divides(IrRegion *r, const char *length, int k, const char *kernel, SrcLoc loc);
// A kernel steps from slice to slice by param, passed var, read as its count, passed
// other: the schedule is for var == other (the region as written otherwise).
void ir_region_assume_equal(IrRegion *r, const char *var, const char *other, const char *kernel, const char *param,
                            SrcLoc loc);
void *ir_alloc(IrRegion *r, size_t size);      // zeroed, lives in the program's arena
char *ir_strdup(IrRegion *r, const char *s);   // NULL stays NULL
char *ir_printf(IrRegion *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

// Layout inference over region->ops (CoCoNet's rules): region inputs are LOCAL
// unless declared replicated(...) or shard(...) (replicated state that each
// rank keeps only on its slice); nothing is assumed from how a buffer is used
// (a bias read as [i % K], weights updated in place). AllReduce
// and Broadcast outputs are REPLICATED, ReduceScatter outputs SLICED, AllGather
// inputs SLICED and outputs REPLICATED; pointwise and GEMM outputs combine their
// inputs (REPLICATED with X = X; SLICED with LOCAL is an error, reported with
// both locations). Assigns versions, sets layouts in every IrUse and tensor.
int ir_infer(IrRegion *r);
// The stream an op runs on, as written with blanks removed, and the default
// stream ("0", "NULL", "nullptr", omitted at a launch) as "0"; NULL when
// unknown (GEMMs run on their handle's stream; opaque statements).
const char *ir_op_stream(const IrOp *op, char *buf, size_t len);
// The same walk over region->sched (no errors: slice work makes SLICED values),
// setting tensor->layout_sched and the layouts in the scheduled ops' uses.
void ir_infer_sched(IrRegion *r);
// Layout combination (IR_LAYOUT_NONE on contradiction).
IrLayout ir_layout_join(IrLayout a, IrLayout b);

//
// ir_print.c: the text form (--dump=ir); the format is described there
//

void ir_dump(FILE *f, const IrRegion *r, bool scheduled);
void ir_print_expr(FILE *f, const IrExpr *e);
void ir_print_size(FILE *f, const IrSize *s);
// C's precedence of a binary operator (IrBinaryOp; higher binds tighter) and its spelling.
int ir_binary_prec(int op);
const char *ir_binary_text(int op);
// "g" for version 0, "g1", "g2", ... ("x1_2" when the name ends in a digit).
const char *ir_version_name(const IrRef *ref, char *buf, size_t len);

typedef struct IrCostModel IrCostModel;

//
// cost.c: alpha-beta cost model
//

struct IrCostModel {
  int nranks;            // GPUs in the communicator
  double link_bw;        // bytes/s: effective bus bandwidth per GPU of a ring collective
  double alpha;          // seconds per ring step (latency)
  double hbm_bw;         // bytes/s: device memory bandwidth
  double launch;         // seconds: kernel launch overhead
  double flops_f32;      // flop/s of a f32 GEMM (TF32 tensor cores)
  double flops_f16;      // flop/s of a f16/bf16 GEMM
  double flops_f64;      // flop/s of a f64 GEMM
  double default_count;  // value of a size variable used alone as a count (not listed below)
  double default_dim;    // value of a size variable used as a factor (m, n, hidden, ...)
  int nsizes;
  struct { char name[64]; double value; } sizes[32];  // size.NAME = value
};

void ir_cost_default(IrCostModel *m);  // an 8-GPU H200 NVLink node; sources in cost.c
// Parse `key = value` lines ('#' comments) into m (keys: nranks, link_bw_gbps,
// alpha_us, hbm_bw_gbps, launch_us, tflops_f32, tflops_f16, tflops_f64,
// default_count, default_dim, size.NAME). Errors name the file and line.
int ir_cost_parse(IrCostModel *m, const char *path, const char *text);
int ir_cost_load(IrCostModel *m, const char *path);  // read the file, then ir_cost_parse
// Predicted seconds of one op (with its span) and of a whole list.
double ir_cost_op(const IrOp *op, const IrCostModel *m);
double ir_cost_list(const IrOp *list, const IrCostModel *m);
// The collective-only formulas (bytes = whole buffer), for tests and --explain.
double ir_cost_allreduce(const IrCostModel *m, double bytes);
double ir_cost_reducescatter(const IrCostModel *m, double bytes);  // also AllGather

//
// dot.c: Graphviz (--emit-dot)
//

// The region as written and as scheduled (when scheduled): layouts as colours,
// fused groups as clusters.
void ir_emit_dot(FILE *f, const IrRegion *r);

#endif
