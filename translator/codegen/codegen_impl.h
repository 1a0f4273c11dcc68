// codegen_impl.h: what codegen*.c share (not used outside them).
//
//   codegen.c         each op of a region's block: collectives on their
//                     spans, chunked GEMMs, launches of generated kernels,
//                     row-wise launches, statements kept as written
//   codegen_region.c  the block as a whole: the overlap loop, the kernels and
//                     state above the region's function, the run-time tests
//                     that pick the region as written (NULL tests, buffers that
//                     overlap), COCONET_CHECK=clauses' checks, codegen_region
//   codegen_fused.c   the call sites of fuse groups: the fused kernel's launch
//                     on symmetric memory, the NCCL schedule as its fallback
//   codegen_kernel.c  generated kernels: a run of scheduled pointwise ops
//                     becomes one __device__ element function (calling each
//                     kernel's own text, or from the IR expressions where there
//                     is none) and one grid-stride __global__ over [lo, hi);
//                     codegen_kernel_fused.c a fuse group's fused __global__ on
//                     the device API; codegen_text.c the kernels' own text
//                     (codegen_kernel_impl.h maps these three)
//   codegen_rows.c    the fused kernel of row-wise kernels: a __device__ copy
//                     of each kernel's body (one block of its grid; read from
//                     the file or the header that defines it, in its
//                     namespace) and the __global__ that runs it between the
//                     peers' rows
//   codegen_beside.c  what a host function seen through runs besides its
//                     collective, in a copy the block calls
//   codegen_comment.c the schedule comment and the flow text of fused kernels
//   codegen_expr.c    IR expressions as CUDA C++ text, with CUDA's conversions
//   codegen_unused.c  variables only the replaced launches used
//   codegen_buf.c     a growing text buffer, names made unique, text reindented
//   host.c            --target=host: a file's launches and dynamic shared memory
//                     lowered; host_include.c the user's headers that need it,
//                     their lowered text in place of their #include
#ifndef COCONET_CODEGEN_IMPL_H
#define COCONET_CODEGEN_IMPL_H

#include "codegen/codegen.h"
#include "common/text.h"

#include <stdarg.h>

//
// host.c
//

// host_lower's edits of one file, the main file or a header (offsets in it).
int host_lower_file(const Frontend *fe, CXFile file, Edit **edits);

//
// codegen_buf.c
//

typedef struct Buf {
  char *s;        // NUL-terminated (NULL while empty)
  size_t len, cap;
} Buf;

void buf_puts(Buf *b, const char *s);
// The width generated lines are wrapped at (text_wrap); the user's text is kept as written.
enum { CG_WIDTH = 100 };
// b's text from offset `from` on wrapped at CG_WIDTH (text before it kept); b is emptied.
char *buf_take_wrapped(Buf *b, size_t from);
// Each line of text without the indentation all its lines share, indented by unit, onto b.
void cg_reindented(Buf *b, const char *text, const char *unit);
// The same in place: b's text from `from` on wrapped.
void buf_wrap_tail(Buf *b, size_t from);
void buf_printf(Buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
const char *buf_str(const Buf *b);  // "" while empty
char *buf_take(Buf *b);             // the text (malloc'd), b emptied
void buf_free(Buf *b);

// Names in one C++ scope: each name handed out once, made unique with _2, _3, ...;
// never one the user's file spells (a generated coconet_rank would hide the user's).
enum { NAMES_MAX = 512 };

typedef struct Names {
  char *v[NAMES_MAX];
  int n;
  const char *spelled;  // the user's file (NULL: none)
} Names;

const char *names_add(Names *ns, const char *want);  // the unique name (owned by ns)
void names_free(Names *ns);

// The C++ type of an IR element type ("float", "__half", "int64_t", ...).
// A NCCL reduction operator ("ncclSum").
const char *cg_nccl_red(IrRedOp op);
// The reduction as fused kernels name it (runtime/include/coconet_fused.h): "COCONET_SUM".
const char *cg_coconet_red(IrRedOp op);
// Whether text is a name or a member chain (a, a.b, a->b): usable before + or * as is.
bool cg_simple(const char *text);
// The host C++ text of a size ("n", "(size_t)tokens * hidden").
void cg_size(Buf *b, const IrSize *s);

// What an op is to the generator: a pointwise op the schedule moved onto a
// slice, the tail or a chunk (a generated kernel runs it).
static inline bool cg_pointwise_run(const IrOp *op) {
  return op->kind == IR_OP_POINTWISE && (op->span.part != IR_PART_ALL || op->span.nchunks > 1);
}
// The op of the region as written a scheduled op comes from.
static inline const IrOp *cg_orig(const IrOp *op) { return op->orig ? op->orig : op; }

//
// codegen_comment.c
//

// The ops in order as flow text: "ReduceScatter(g) -> adam on this rank's slice -> AllGather(w, m)".
void cg_flow(Buf *b, const IrOp **ops, int n);
// The text of the schedule comment (each line without its "// coconet: "; lines
// separated by '\n'): the clauses, the flow, and what happens to the tail.
void cg_schedule_comment(Buf *out, const IrRegion *r, const IrOp **ops, int n);

//
// codegen_expr.c
//

// How a generated element function refers to tensors, parameters, locals.
typedef struct ExprNames {
  const char *(*tensor)(void *ctx, const IrTensor *t, bool *elementwise);
  const char *(*param)(void *ctx, const IrParam *p);
  const char *(*size)(void *ctx, const IrSize *k);  // K of t[i % K], t[i / K], t[K]
  const char *(*local)(void *ctx, const IrStmt *let);
  const char *(*draw)(void *ctx, const IrExpr *philox);
  void *ctx;
} ExprNames;

// e as a value of type t.
void cg_expr(Buf *b, const ExprNames *nm, const IrExpr *e, IrType t);
// A read index (t[...]) that generated code can express.
bool cg_index_ok(const IrExpr *read);

//
// codegen_unused.c
//

// The local variables and parameters named by the grid, block or shared
// memory of the region's launches in replaced (statements the generated code
// replaces) that nothing else in their function uses: at most max names
// (malloc'd) into names, "&name" for a local that is not const (what the
// generated (void) takes); returns how many.
int unused_config(const Frontend *fe, const Region *fr, const SrcRange *replaced, int nreplaced, char **names, int max);

//
// codegen_kernel.c
//

// One generated kernel: the distinct ops of a run of scheduled pointwise ops.
typedef struct Kernel {
  const IrOp *ops[64];    // in order (the slice copy of each)
  int nops;
  char *name;             // coconet_REGION_slice, coconet_REGION_chunk (+ a number)
  char *args;             // the launch's arguments before lo, hi: "w, g, m, v, lr, hidden"
  bool sums;              // it sums into accumulators: one more argument after hi, whether
                          // this launch adds its sums (every rank its slice, rank 0 the tail)
  char *text;             // the element function and the __global__ (file scope)
  char *fused_name;       // kernel_fused: coconet_REGION_fused
  char *fused_args;       // its launch's arguments before lo, hi, tail_lo, tail_hi
  bool late;              // its text goes beside the region's function, in its namespace
                          // (RegionCode.late: it names that namespace's kernels)
} Kernel;

// A fuse group's collectives, for its fused kernel.
enum { FUSED_MAX_WINDOWS = 16 };
typedef struct FusedSpec {
  const IrTensor *source;     // ReduceScatter's input: read from every peer
  const IrTensor *reduced;    // its output, which the ops read at [i]
  IrRedOp red;
  IrType dtype;
  const IrTensor *gathered[FUSED_MAX_WINDOWS];  // AllGather outputs: written to every peer
  int ngathered;
  const char *window_names[FUSED_MAX_WINDOWS];  // the windows' buffers: source first, then gathered ones
  int nwindows;
  const char *flow;           // "ReduceScatter(g) -> momentum -> AllGather(w)"
  const char *args;           // the call site's coconet_fused_args variable
  bool oneshot;               // AllReduce + kernels: every rank reduces every element
} FusedSpec;

// Generate k->text and k->args for k->ops (unit: one indentation step); -1
// after reporting why it cannot.
int kernel_generate(const IrRegion *r, const char *unit, Kernel *k);
// After kernel_generate (or, one-shot, with k->text NULL: the element
// function first): append the fused __global__ of group f to k->text
// (k->fused_name set by the caller, k->fused_args); 1 when the group's
// buffers are read at another index than [i] (no fused kernel), -1 after
// reporting an error.
int kernel_fused(const IrRegion *r, const char *unit, Kernel *k, const FusedSpec *f);
void kernel_free(Kernel *k);
// The parameters of a generated kernel as another kernel takes them to call
// its _block function (below): declarations ", float *x, int n" and the call's
// arguments "x, n, " (both malloc'd), each tensor's name.
enum { KERNEL_BLOCK_MAX = 64 };
typedef struct KernelBlock {
  char *decls, *args;
  const IrTensor *tensors[KERNEL_BLOCK_MAX];
  const char *names[KERNEL_BLOCK_MAX];  // owned by the Names passed
  int ntensors;
} KernelBlock;
// After kernel_generate: append to k->text `__device__ void NAME_block(params,
// lo, hi)`, which runs elements [lo, hi) by the threads of one block (for the
// fused kernel of row-wise kernels, which runs elementwise kernels on a
// block's rows); out gets its parameters named unique in names, writable (if
// not NULL) taken as written. -1 after reporting an error.
int kernel_block(const IrRegion *r, const char *unit, Kernel *k, const IrTensor *writable, Names *names,
                 KernelBlock *out);

//
// codegen_rows.c: fused kernels of row-wise kernels
//

typedef struct Cg Cg;
typedef struct Scope Scope;
// The fused kernel of a fuse group of row-wise kernels, sc->ops[at..at+n)
// with collectives f: k->text gets a __device__ copy of each kernel (one
// block of its grid) and the fused __global__ (named k->fused_name),
// k->fused_args its launch's arguments and *config (malloc'd) the launch's
// "GRID, BLOCK, SHARED MEMORY". -1 after reporting an error.
int rows_fused(Cg *cg, const Scope *sc, int at, int n, const FusedSpec *f, Kernel *k, char **config);

//
// codegen.c: a region's block (shared with codegen_fused.c)
//

enum { MAX_PARTS = 32, MAX_RANKS = 16, MAX_KERNELS = 32, CG_BESIDES = 32 };

typedef struct Part {       // a coconet_part variable in scope
  IrSize count;             // key: elements (a copy: GEMM keys are built here)
  const IrSize *unit;       // key: chunk unit (NULL = 1)
  const IrSize *grain;      // key: slice grain, whole rows (NULL = 1)
  const char *comm;         // communicator of its rank (NULL: rank 0 of 1)
  const char *name;
} Part;

typedef struct Rank {
  const char *comm;
  const char *rank, *nranks;
} Rank;

struct Scope {              // the ops one level of the block runs
  const IrOp **ops;
  int n;
};

struct Cg {
  const Frontend *fe;
  const Region *fr;
  const IrRegion *r;
  Target target;
  Buf out;                  // the region's block
  const char *indent;       // the region's indentation
  char *unit;               // one indentation step
  int depth;                // 1 = the block's statements
  Names names;              // host names declared in the block
  Part parts[MAX_PARTS];
  int nparts;
  Rank ranks[MAX_RANKS];
  int nranks;
  int live_parts, live_ranks;  // parts and ranks before these may be stale: a statement
                               // kept as written may have changed a count or a communicator
  Kernel kernels[MAX_KERNELS];
  int nkernels;
  const char *cuda_check;   // the region's CUDA wrapper, else COCONET_CUDA_CHECK
  const char *chunk;        // the chunk index inside the overlap loop, else NULL
  int nchunks;
  const char *side;         // the second stream inside the overlap loop (after the GEMM)
  const char *last_comm;    // communicator of the latest collective: slices of kernels use its ranks
  int fuse_open;            // the fuse group whose markers are open
  bool fusing;              // emitting a fused group's NCCL path (no markers)
  bool written;             // emitting the region as written (an op inside another's text is in it)
  bool rows_checked;        // ... whose row-wise launches' checks come before the fused call site
  int nfused;               // fused kernels generated
  bool overlap;             // the region needs its static stream state
  bool pipeline;            // the region needs its static pipeline header buffer
  bool runtime;             // the block calls coconet.h
  // Ops whose host function runs statements besides them (IrBeside): those the block
  // runs as written (the function runs them), those whose copy it calls.
  const IrOp *beside_written[CG_BESIDES], *beside_called[CG_BESIDES];
  int nbeside_written, nbeside_called;
};

void cg_line(Cg *cg, const char *fmt, ...) __attribute__((format(printf, 2, 3)));  // one line of the block
void cg_line_as_written(Cg *cg, const char *text);  // the user's text at the block's depth, not wrapped
// The rank variables of a communicator (declared at the first use).
const Rank *cg_rank_for(Cg *cg, const char *comm);
// The coconet_part of sc->ops[at]'s span (declared at the first use).
const Part *cg_part_for(Cg *cg, const Scope *sc, int at, const IrOp *op);
// The stream an op runs on: the user's, or the second stream inside the overlap loop.
const char *cg_stream_of(const Cg *cg, const char *user);
// An op a clause changed or generated (not a statement kept as written).
bool cg_is_rewritten(const IrOp *op);
// An op on a span of the buffer: it needs the rank and rank count of its communicator.
bool cg_needs_rank(const IrOp *op);
// The communicator whose ranks an op's span uses; *last tracks the latest collective.
const char *cg_op_comm(const IrOp *op, const char **last);
// A statement kept as written, its hoisted arguments read from their locals and,
// for --target=host, the launches inside it (an `if`, a block) lowered as host.c
// lowers the file's. -1 after reporting an error.
int cg_emit_verbatim(Cg *cg, const IrOp *op);
// Emit sc->ops[at] (and the ops it takes with it); *consumed gets how many; -1 on errors.
int cg_emit_op(Cg *cg, const Scope *sc, int at, int *consumed);
// The launch a scheduled op comes from (NULL: not a launch of the region).
const Launch *cg_launch_of(const Cg *cg, const IrOp *op);
// A piece of a statement as the generated code reads it: its hoisted local, or its text.
const char *cg_piece(const Cg *cg, const Piece *p);
// The run-time checks a row-wise launch on this rank's rows needs first (null
// buffers, a row stride, the rows a warp or thread per row reaches).
void cg_row_checks(Cg *cg, const IrOp *op, const Launch *l);

//
// codegen_beside.c: the copies of what host functions seen through run besides
// their collectives (IrBeside), and their calls
//

// Op (a scheduled one: its original's) runs as written on the block's path: its function runs them.
void cg_beside_written(Cg *cg, const IrOp *op);
bool cg_beside_is_written(const Cg *cg, const IrOp *op);
// The call of op's copy here, unless the block calls it already.
void cg_beside_call(Cg *cg, const IrOp *op);
// After the block emitted sc->ops[at, at + n) from byte pos of cg->out on, at depth: the
// call of the copy of each of them that nothing ran, inserted at pos (before a split's
// ReduceScatter, a fused call site, an overlap loop).
void cg_beside_before(Cg *cg, const Scope *sc, int at, int n, size_t pos, int depth);
// The copies the block calls that go above the top-level declaration holding the region, or
// (late) beside its function: onto b (NULL: none written); how many.
int cg_beside_copies(const Cg *cg, Buf *b, bool late);

//
// codegen_fused.c
//

// Open or close the marker comments of the fuse group at sc->ops[at] (none past the end).
void cg_fuse_markers(Cg *cg, const Scope *sc, int at);
// The fuse group from sc->ops[at]: 0 when emitted, 1 when it gets no fused
// kernel (nothing emitted: the caller emits it on the NCCL path), -1 on errors.
int cg_emit_fused(Cg *cg, const Scope *sc, int at, int *consumed);

#endif
