// analyze_impl.h: the kernel analysis' own header (analyze.c: the element loop and
// the entry point; analyze_cursor.c: cursors, types, built-ins and the element
// index; analyze_expr.c: expressions and addresses; analyze_call.c:
// calls, intrinsics and the inlining of helpers;
// analyze_stmt.c: the statements of the element body and of helpers;
// analyze_sum.c: a running sum added after the loop, also once a warp or the
// block has summed it;
// analyze_vector.c: kernels whose element is a vector, float4 or __half2;
// analyze_text.c: the kernel's own text for one element, for code generation;
// analyze_row.c: row-wise kernels, one block (warp, thread) per row, kept as
// written: their bodies walked; analyze_row_index.c: the row, columns and
// pointers into rows their indices are made of; analyze_row_op.c: their accesses checked
// together and their op; analyze_place.c: a thread's place in the grid for
// those; analyze_copy.c: whether one can be copied into a fused kernel;
// analyze_slice.c: multi-tensor launches, a grid whose y picks a slice;
// analyze_helper.c: an element loop written in a __device__ helper the kernel calls;
// analyze_macros.c: whether the macros of a kernel's text mean the same where it is copied;
// analyze_names.c: whether its names do).
// What the analysis accepts is described in analyze.c.
#ifndef COCONET_ANALYZE_IMPL_H
#define COCONET_ANALYZE_IMPL_H

#include "analyze/analyze.h"

typedef struct Binding {
  CXCursor decl;     // a local VarDecl or a helper's ParmDecl
  IrExpr *value;     // its value (NULL for a pointer)
  CXCursor buffer;   // a helper's pointer parameter: the kernel's pointer parameter it points into
  bool element;      // ... and it points at that buffer's element i (&t[i], t + i), not at t
  bool vector;       // a vector local (float4 v): its lanes' values
  IrExpr *lane[4];
  bool partial;      // a thread's running sum: declared 0 before the grid-stride loop, only
                     // `s += e` in it (never read there), added to a buffer after it
  IrExpr *sum;       // ... what one element adds to it (NULL: nothing yet)
  int reduced;       // ... summed over the threads of a warp (32) or of the block (-1) after the
                     // loop: one of them adds it (0: each thread's own)
  bool loop_read;    // declared before the grid-stride loop and read in it
  bool slice;        // a pointer to slice blockIdx.y of buffer (analyze_slice.c): p[i] is element e
  CXCursor stride;   // ... the slices' stride as written
  CXCursor arg;      // a parameter of the helper holding the element loop: the kernel's argument for it
  bool index;        // a helper's integer parameter passed the element index as it is (`ld(bias, i)`,
                     // at least as wide): it is the index (az_is_index)
} Binding;

typedef struct Az {
  const Frontend *fe;     // the kernel's (a template's instance has its own)
  const Frontend *region_fe;  // the region's
  IrRegion *ir;
  IrOp *op;
  const Launch *launch;
  CXCursor kernel;        // the __global__ definition
  CXCursor index;         // the element index variable
  CXCursor index_alias;   // a local holding the index that the loop's index was initialized from (null if none)
  CXCursor count;         // the count parameter (null when the bound is an expression)
  CXCursor bound;         // the element loop's bound as written (`n`, `rows * cols`, `p.n`)
  char *count_text;       // an expression bound in the launch's terms ("R * C"), else NULL
  bool guarded;           // the element loop is a guard (if (i < n)), not grid-stride
  const char *slices;     // a multi-tensor launch: Y of its grid dim3(X, Y), in the launch's terms
                          // (analyze_slice.c; NULL: none): the op's element e is i = e % n of slice e / n
  CXCursor slice_off;     // ... a local `off = blockIdx.y * S` (null: none)
  CXCursor slice_stride;  // ... its S
  CXCursor slice_alias;   // ... a local `row = blockIdx.y` (null: none)
  long long block_x;      // the launch's blockDim.x when it is a constant, else 0
  CXCursor stride;        // a local holding blockDim.x * gridDim.x (null if none); never read otherwise
  const char *hint_index; // from #pragma coconet pointwise
  const char *hint_count;
  Binding *locals;
  int nlocals, cap;
  int carried;            // in a grid-stride loop's body, the locals bound before it (locals[0..carried)):
                          // assigning one would carry a value from one element to the thread's next
  CXCursor philox;        // the curandStatePhilox4_32_10_t variable (null if none)
  IrExpr *seed, *offset;
  int draws;
  IrExpr *draw_outer, *draw_cond;  // the conditions curand_init ran under: draws must run under them
  int depth;              // inlining depth of __device__ helpers
  bool stores_ok;         // the helper being inlined was called as a statement: it may store
  IrExpr *outer;          // the condition the inlined helper was called under (NULL: always)
  IrExpr *cond;           // the condition the current statement runs under in its function (NULL: always)
  IrExpr *returned;       // when the current function has returned (NULL: not yet)
  IrExpr *ret;            // the value it returns (helpers)
  IrType ret_type;        // ... of the helper's result type
  bool ret_vector;        // the helper returns a vector: its lanes' values are ret_lane
  IrExpr *ret_lane[4];
  bool done;              // it has returned on every path: the rest does not run
  int lazy;               // > 0 in an operand evaluated only sometimes (a ?: branch, && or ||'s right)
  CXCursor counters[8];   // the counters of the constant-trip loops being unrolled
  int ncounters;
  int unrolled;           // iterations unrolled so far (bounded)
  int hand_sums;          // calls of a block sum written by hand (analyze_sum.c)
  bool hand_fenced;       // the last one ends with a __syncthreads() after its reads
  CXCursor tree;          // a __shared__ array the kernel sums its running sum through, a tree in the
                          // kernel itself (analyze_sum.c; null: none)
  int tree_stage;         // 1 a thread's sum stored at [threadIdx.x], 2 synced, 3 the block's sum in [0]
  int tree_local;         // locals[tree_local] is the running sum stored there
  int lanes;              // > 1: the element is a vector of this many lanes (i counts vectors; analyze_vector.c)
  int lane;               // the lane this pass computes: element lanes * i + lane
  const char *lane_text[4];  // the index text of each lane's element in other lanes' reads
  bool lane_store;        // the store being made is a vector store's lane
  IrExpr *tail_guard;     // the elements a vector kernel over n / lanes vectors reaches (NULL: all)
  CXCursor opaque;        // the first call the IR does not model (null: none): the op needs its text
  CXCursor kbody;         // the kernel's body, or the body of the helper holding the element loop
  CXCursor body_fn;       // the function kbody is of: the kernel, or that helper (analyze_helper.c)
  const char *loop_helper;  // ... the helper's name (NULL: the kernel holds the loop)
  CXCursor loop_call;     // ... the kernel's call of it
  int loop_at;            // the element loop's statement in it (its position among kbody's)
  int loop_form;          // how the element loop is written (LOOP_FOR ...; 0: not found)
  char *why;              // the first reason it is not pointwise
  SrcLoc why_loc;
} Az;

// The forms of the element loop: `for (i = INDEX; i < n; i += STRIDE) BODY`,
// `while (i < n) { BODY; i += STRIDE; }`, `if (i < n) BODY`, `if (i >= n) return; BODY...`.
// `if (i < n && A) BODY` and `if (i >= n || A) return; BODY...` are LOOP_IF_AND and
// LOOP_RETURN_OR: the guard's statement is the element's (its bound holds for every element).
enum { LOOP_FOR = 1, LOOP_WHILE, LOOP_IF, LOOP_RETURN, LOOP_IF_AND, LOOP_RETURN_OR };

typedef FeKids Kids;
static inline Kids kids(CXCursor c) { return fe_kids(c); }
static inline enum CXCursorKind kind(CXCursor c) { return clang_getCursorKind(c); }
static inline bool same(CXCursor a, CXCursor b) { return clang_equalCursors(a, b) != 0; }

typedef enum { B_NONE, B_BLOCKIDX_X, B_BLOCKDIM_X, B_THREADIDX_X, B_GRIDDIM_X } Builtin;

// analyze_cursor.c: cursors, their text and types, built-ins, the element index, guards' operands, failures
bool az_failed(const Az *az);
// Record the first reason the kernel is not pointwise, at a cursor; returns NULL.
IrExpr *az_fail(Az *az, CXCursor at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
char *az_text_of(const Az *az, CXCursor c);               // source text (malloc'd)
CXCursor az_strip(CXCursor c);                            // without implicit nodes and parentheses
CXCursor az_referenced(CXCursor ref);
CXCursor az_callee(CXCursor call);                        // the function called, also through a template parameter
bool az_refers_to(CXCursor e, CXCursor decl);            // e (az_strip) names decl
bool az_is_shared(CXCursor var);                          // a __shared__ variable
char *az_type_spelling(CXCursor c);                       // its canonical type's spelling (malloc'd)
bool az_type_has(CXCursor c, const char *part);           // ... contains part ("cub::", "thread_block_tile<32")
char *az_op_between(const Az *az, CXCursor lhs, CXCursor rhs);  // the operator text (malloc'd)
char *az_unary_op(const Az *az, CXCursor c, CXCursor operand);  // a unary operator's text (malloc'd)
IrType az_type_of(CXType t);
IrType az_element_type_of(CXType t);                      // a buffer's: none for plain char
IrType az_expr_type(CXCursor c);                          // az_type_of its type
bool az_is_pointer(CXCursor decl);
bool az_is_integer_var(CXCursor d);
// `A op B op C` as its operands in order into out (at most max; -1: more)
int az_operands(const Az *az, CXCursor c, const char *op, CXCursor *out, int max);
// The element loop's bound `i op n` moved first among a guard's operands, after plain ones only (false: none)
bool az_bound_first(const Az *az, CXCursor *conds, int n, const char *op);
// A growing list of cursors; az_list_add is a visitor (and a call) that appends one.
typedef struct AzList {
  CXCursor *v;
  int n, cap;
} AzList;
enum CXChildVisitResult az_list_add(CXCursor c, CXCursor parent, CXClientData data);
Builtin az_builtin(const Az *az, CXCursor c);             // blockIdx.x and friends
bool az_is_binary(const Az *az, CXCursor c, const char *op, CXCursor *lhs, CXCursor *rhs);
bool az_is_product(const Az *az, CXCursor c, Builtin x, Builtin y);
bool az_is_index_expr(const Az *az, CXCursor c);          // blockIdx.x * blockDim.x + threadIdx.x
bool az_is_index(const Az *az, CXCursor c);               // a reference to the element index
int az_param_position(const Az *az, CXCursor decl);
const char *az_launch_arg(const Az *az, CXCursor param);  // the launch's argument for a parameter
bool az_simple_name(const char *t);                        // a name or a member chain

// analyze_expr.c: expressions and addresses
bool az_int_constant(CXCursor c, long long *v);          // an integer constant expression, and its value
IrExpr *az_expr(Az *az, CXCursor c);                      // an expression (NULL: failed, reason recorded)
IrExpr *az_cast_to(Az *az, IrType t, IrExpr *e);
// The op's scalar parameter NAME (added once, bound to the host text `host`), as a value.
IrExpr *az_param(Az *az, const char *name, IrType type, const char *host);
IrExpr *az_binary_expr(Az *az, CXCursor c, CXCursor lhs, CXCursor rhs, const char *op);
Binding *az_find_local(Az *az, CXCursor decl);
Binding *az_bind(Az *az, CXCursor decl, IrExpr *value);   // (re)binds decl to a value (not a pointer)
void az_bind_pointer(Az *az, CXCursor decl, CXCursor buffer, bool element);  // a pointer into buffer (at element i)
// The condition a statement runs under: the caller's, the enclosing ifs', and
// not yet returned; NULL when unconditional.
IrExpr *az_cond(Az *az);
bool az_constant_truth(const IrExpr *e, bool *truth);    // a constant (through casts), and its truth
bool az_buffer(Az *az, CXCursor c, CXCursor *buffer, bool *element);  // a pointer the kernel names
bool az_element_of(Az *az, CXCursor e, CXCursor *decl);  // &t[i], t + i (or p at t[i]): t (false: not one)
IrExpr *az_subscript(Az *az, CXCursor c);                 // a read p[k]
IrExpr *az_read(Az *az, IrExpr *read, SrcLoc loc);        // a read made here: its place, whether sometimes
// What t[i] holds after this element stored it (the element reads back its own store:
// `out[i] = g[i]; out[i] += r[i];`), when the stored value means the same here; else NULL.
IrExpr *az_stored(Az *az, const IrTensor *t);
IrTensor *az_element_address(Az *az, CXCursor e);         // &t[i], t + i, ...: t (NULL: not one)
IrTensor *az_element_target(Az *az, CXCursor lhs);        // t[i], *p, ... as assigned (NULL: failed)
IrTensor *az_buffer_tensor(Az *az, CXCursor decl, CXCursor at);  // the tensor a pointer parameter is bound to
// The element type of a pointer parameter's buffer; IR_VOID (reason recorded) when the
// launch passes NULL or the type is not one coconet handles (8- and 16-bit integers).
IrType az_buffer_type(Az *az, CXCursor decl, CXCursor at);
bool az_is_null_constant(CXCursor c);                     // NULL, nullptr, 0, (T *)0

// analyze_call.c: calls, intrinsics, helpers
IrExpr *az_call_expr(Az *az, CXCursor c);                 // a call expression (NULL: failed, reason recorded)
IrExpr *az_inline_helper(Az *az, CXCursor call, CXCursor def, bool as_stmt);
// Bind helper def's parameter to the call's argument (a value, a buffer, &t[i]; name: as a let).
bool az_bind_argument(Az *az, CXCursor call, CXCursor def, CXCursor param, CXCursor arg, bool name);
// A helper that returns a vector (float4 add4(float4 a, float4 b)): its lanes into out.
bool az_inline_vector_helper(Az *az, CXCursor call, CXCursor def, IrExpr **out);

// analyze_stmt.c: the statements of the element body and of helpers
bool az_is_assignment(const Az *az, CXCursor s, CXCursor *lhs, CXCursor *rhs, char **op);
bool az_writes(const Az *az, CXCursor within, CXCursor var);  // var assigned, ++/--'d or its address taken in it
void az_decl_stmt(Az *az, CXCursor s);                    // locals
void az_stmt(Az *az, CXCursor s);                         // one statement
// if (conds[0] op conds[1] ...) then: the rest of an element loop's guard, `i < n && A` or `i >= n || A`
void az_if_all(Az *az, const CXCursor *conds, int n, IrBinaryOp op, CXCursor then);
void az_store(Az *az, CXCursor at, IrTensor *t, IrExpr *value);  // t[i] = value, under the current condition
IrExpr *az_assigned_value(Az *az, CXCursor s, CXCursor lhs, CXCursor rhs, const char *op);  // of x = e, x op= e
bool az_carries(Az *az, CXCursor s, const Binding *b);    // assigning b would carry across elements (reason recorded)
// The buffer and element an atomicAdd statement sums into (NULL: the reason is recorded).
IrTensor *az_sum_target(Az *az, CXCursor s, long long *at);

// analyze_sum.c: after the grid-stride loop, a thread's running sum s added with
// atomicAdd(acc, s), or once a warp (shuffles, a cooperative-groups tile of 32) or the
// block (cub::BlockReduce) has summed it, by one thread of each. True when s is such a
// statement (its reduction added, or the reason recorded).
bool az_after_loop(Az *az, CXCursor s);
// `__shared__ T red[K];` (a floating type; CUDA has no initializer for it): the array of a block sum
// written in the kernel (a tree after the loop); true when s declares one (az->tree).
bool az_tree_decl(Az *az, CXCursor s);
// After the kernel's last statement: a tree array declared but not used as a block sum
// is refused (reason recorded).
void az_tree_done(Az *az);

// analyze.c: --explain's note that a launch is seen through the host function l->wrapper
void az_wrapper_note(IrRegion *ir, const Launch *l);

// analyze_slice.c: multi-tensor launches (az->slices)
// Y of a grid written dim3(X, Y) or dim3{X, Y}, or a local `dim3 grid(X, Y)` kept (NULL: other)
const char *az_slices_of(const Frontend *fe, IrRegion *ir, const Launch *l);
bool az_is_slice_number(const Az *az, CXCursor c);        // blockIdx.y or its local, in a multi-tensor launch
bool az_slice_alias_decl(Az *az, CXCursor s);             // `int row = blockIdx.y;` never assigned: noted
bool az_index_local_decl(Az *az, CXCursor s);             // `size_t idx = row * n + col;` before the loop
bool az_slice_in_grid(const Az *az, CXCursor cond, const char *op);  // `row < Y` ("<"), `row >= Y` (">=")
// Is base[idx] the op's element e? (One-dimensional: idx is i. Slices: base is a slice
// pointer and idx is i, or idx is i + blockIdx.y * n; a slice stride not proven to be
// n records the reason.)
bool az_at_element(Az *az, CXCursor base, CXCursor idx);
bool az_slice_decl(Az *az, CXCursor var);                // `off = blockIdx.y * S`, `T *p = buf + off`: bound
bool az_slice_decls(Az *az, CXCursor s);                 // ... every variable a DeclStmt declares
bool az_slice_pointer(Az *az, CXCursor v, CXCursor e);    // pointer v = e, `buf + blockIdx.y * S`: bound
IrExpr *az_slice_index(Az *az, CXCursor at);             // the kernel's i: e % n (NULL: reason recorded)
IrExpr *az_slice_number(Az *az, CXCursor at);            // blockIdx.y: e / n
IrSize *az_slice_count(Az *az);                          // n, in the launch's terms
void az_slice_done(Az *az);                               // after the loop: what slices cannot hold refused

// analyze_helper.c: the element loop in a __device__ helper the kernel's body calls: the
// helper's body read as the kernel's (az->kbody), its parameters bound to the arguments
// (false: not that form; a reason may be recorded)
bool az_loop_helper(Az *az, CXCursor kbody);
// The call statement s is, or the first call inside it (null: none).
CXCursor az_statement_call(CXCursor s);
// The cursor a bound `i < n` names n by, in the kernel's terms: the kernel's argument
// for a parameter of that helper, else c.
CXCursor az_kernel_terms(Az *az, CXCursor c);

// analyze_macros.c: a name the kernel's text (or the call of the helper holding its
// loop) depends on whose macro definition may differ where generated code goes (#undef'd,
// or #defined again in a file of the user's): its name (malloc'd), else NULL
char *az_macro_gone(const Az *az);
// ... of a body (of fe's translation unit) copied to byte `place` of the translated
// file, or a name whose value is where it is written (macro_name_is_where), first.
char *macro_gone_at(const Frontend *fe, CXCursor body, unsigned place);
// ... of the statements texts[0, n) (a use of a macro: its arguments too); with where, a name
// whose value is where it is written first. A name a macro's body uses, and the statements do
// not, is taken for a macro where the body is expanded (the statements compiled there: one
// #define of it is that macro's).
char *macro_gone_in(const Frontend *fe, const CXCursor *texts, int ntexts, unsigned place, bool where);
// analyze_names.c: a name a kernel's text uses (of a declaration at namespace
// scope) that a declaration of the user's between the kernel and byte `place` of
// the translated file also has (another overload, a name hiding it): its name
// (malloc'd; *at: that declaration), else NULL. A copy of the text at `place`
// could mean that one.
char *copy_name_clash(const Frontend *fe, CXCursor kernel, unsigned place, SrcLoc *at);
// Whether a name's value is where it is written (__LINE__, __FILE__, __COUNTER__,
// __func__, ...).
bool macro_name_is_where(const char *name);

// analyze_text.c: the user's own text for one element (op->pw.text), or why
// there is none (op->pw.text_why), once the kernel is proven pointwise.
void az_text(Az *az);

// analyze_place.c: a thread's place in the grid, for a row per warp or per thread
// (PLACE_MOVED: another place: a thread's rank in its block, the block's index)
typedef enum { PLACE_NONE, PLACE_LANE, PLACE_WARP, PLACE_WARPS, PLACE_WARP_ROW, PLACE_THREAD_ROW, PLACE_MOVED } AzPlace;
CXCursor az_uncast(CXCursor c);                           // az_strip, and without casts
bool az_int_is(CXCursor c, long long want);               // an integer constant equal to want
bool az_is_warp_size(CXCursor c);                         // 32, WARP_SIZE, warpSize, warp.size()
// threadIdx.x % 32 (the lane), threadIdx.x / 32 (the warp), blockDim.x / 32 (warps per block),
// blockIdx.x * warps + warp (a warp's row), blockIdx.x * blockDim.x + threadIdx.x (a thread's
// row), also through the kernel's integer locals and cooperative-groups tiles of 32.
AzPlace az_place(const Az *az, CXCursor c);
// c is `threadIdx.x == 0` (the block's first thread) or, warp, `lane == 0` (either order).
bool az_first_thread(const Az *az, CXCursor c, bool warp);

// analyze_vector.c: vector elements (float2, float4, double2, __half2, __nv_bfloat162)
int az_vector_type(CXType t, IrType *comp);               // its lanes (0: not a vector) and lane type
int az_kernel_lanes(Az *az);                              // the lanes of the vectors the kernel uses (0: none)
bool az_vector_expr(Az *az, CXCursor c, IrExpr **out);   // a vector value's lanes (false: failed)
IrExpr *az_vector_lane(Az *az, CXCursor c, bool *handled);  // v.x, __low2float(h) (*handled: c is one)
void az_vector_decl(Az *az, CXCursor var);                // float4 v = ...;
// v = w, v.x op= e, v4[i] = v: true when s is one of these (handled, or the reason recorded).
bool az_vector_assign(Az *az, CXCursor s, CXCursor lhs, CXCursor rhs, const char *op);
IrSize *az_vector_elements(Az *az, const char *vectors, bool *tail);  // a count of vectors in elements

// analyze_row.c, analyze_row_index.c and analyze_row_op.c: a row-wise kernel.
// analyze_row.c walks the body into a Row (its accesses, loops, the row's
// owner), analyze_row_index.c reads its index forms, analyze_row_op.c checks
// the accesses together and builds the op.
enum { ROW_MAX = 32 };

typedef enum { USE_ROW, USE_COL, USE_OWN } RowUse;  // [row * H + j], [j], [row]

// Who owns a row: a block (row = blockIdx.x), a warp (blockIdx.x * (blockDim.x
// / 32) + threadIdx.x / 32, columns from the lane threadIdx.x % 32) or a thread
// (blockIdx.x * blockDim.x + threadIdx.x, columns from 0).
typedef enum { GROUP_BLOCK, GROUP_WARP, GROUP_THREAD } RowGroup;


typedef struct Access {
  CXCursor param;    // the kernel's pointer parameter
  RowUse use;
  bool write, read;
  bool partial;      // a write that may not cover the row
  CXCursor at;
} Access;

typedef struct Row {
  Az az;              // fe, kernel, launch, why (az_fail, az_builtin, az_text_of)
  CXCursor h;         // the row length parameter (null until a column loop names it)
  CXCursor rows;      // the row count parameter (null: none)
  CXCursor stride;    // a row stride parameter other than H (`row * input_stride`), null if none: the
                      // generated code checks that it equals H
  RowGroup group;
  bool guarded;       // past `if (row >= rows) return;` at the kernel's top level
  int in_guard;       // > 0 inside `if (row < rows) { ... }`
  CXCursor nulls[ROW_MAX];  // pointer parameters the kernel tests against null
  int nnulls;
  bool row_elements;  // an access at [row * H + j] was seen
  CXCursor cols[ROW_MAX];   // column loop variables
  int col_scale[ROW_MAX];   // ... the elements each of its units stands for (loops to H / k: k)
  int ncols;
  CXCursor strided[ROW_MAX];  // variables of loops from threadIdx.x to a constant (over shared memory)
  int nstrided;
  CXCursor rowoffs[ROW_MAX];  // integer locals holding row * H
  int rowoff_scale[ROW_MAX], nrowoffs;
  CXCursor rowelems[ROW_MAX];  // integer locals holding row * H + j, j a column (`int id = blockIdx.x * n + idx;`)
  int rowelem_scale[ROW_MAX], nrowelems;
  CXCursor aliases[ROW_MAX], alias_of[ROW_MAX];  // pointer locals at the row, and their parameter
  int naliases;
  CXCursor views[ROW_MAX], view_of[ROW_MAX];  // pointer locals at a parameter's start (`T2 *p = (T2 *)x;`)
  int nviews;
  int scales[4], nscales;  // the scales above 1 of the accesses (the schedule's H % k == 0)
  CXCursor scale_at;       // the first such access
  CXCursor row_load_helper;  // a call of a load helper reading a row element (`ldg(&x[row * H + j])`), or null
  Access acc[64];
  int nacc;
  int cond;           // > 0 inside a condition, another loop, or a column loop that may skip columns
  int one_thread;     // how many of those conditions are `threadIdx.x == 0` (one thread of every block)
  bool irregular;     // a return (other than the rows test), break, continue or goto
  bool saw_row;       // blockIdx.x appears
  SrcLoc row_loc;
  int helper_depth;   // > 0 while checking a __device__ helper's body
  CXCursor row_loop;  // a grid-stride loop over the rows at the kernel's top level (null: none)
  CXCursor row_var;   // its variable: the row, inside the loop only
  bool in_row_loop;
} Row;

static inline bool row_failed(const Row *w) { return az_failed(&w->az); }
bool row_in_list(const CXCursor *v, int n, CXCursor c);
static inline CXCursor row_ref_decl(CXCursor c) {
  c = az_uncast(c);
  return clang_getCursorKind(c) == CXCursor_DeclRefExpr ? clang_getCursorReferenced(c) : clang_getNullCursor();
}
static inline bool row_is_param(const Row *w, CXCursor d) {
  return clang_getCursorKind(d) == CXCursor_ParmDecl && az_param_position(&w->az, d) >= 0;
}
static inline bool row_is_pointer_param(const Row *w, CXCursor d) { return row_is_param(w, d) && az_is_pointer(d); }

// analyze_row_index.c: what an expression or a local of the kernel is. A
// scale is the elements of a buffer one unit of the form stands for (k for
// H / k over a view of k-wide elements, 1 without one); 0: not that form.
AzPlace row_place(const Row *w);               // the place of the row's owner (a warp's row, a thread's)
bool row_is_row(Row *w, CXCursor c);           // the row index (noted where it is first seen)
int row_col(const Row *w, CXCursor c);         // a column variable: its scale
int row_offset(Row *w, CXCursor c);            // row * H, (row * H) / k, row * (H / k), or a local of one
int row_element(Row *w, CXCursor c);           // a row offset + a column of the same scale, or a local of one
bool row_mixed_units(Row *w, CXCursor c, int *off, int *col);  // a row offset + a column of another scale
void row_units_fail(Row *w, CXCursor at, int off, int col);    // ... refused, at at
bool row_derived_local(const Row *w, CXCursor d);  // a local the grid position rests on
bool row_builtin_local(const Row *w, CXCursor d);  // a local holding a built-in (blockIdx.x, ...)
bool row_column_loop(Row *w, CXCursor f);      // a column loop: its variable recorded, its body walked
bool row_local(Row *w, CXCursor var);          // a local of the forms above, or a pointer view/alias: recorded
// A pointer expression (through casts of pointers) that is a pointer parameter, a view of
// one or a pointer to the row: the parameter, its scale, whether it points at the row; else null.
CXCursor row_pointer(const Row *w, CXCursor e, int *scale, bool *at_row);
// Walk a statement or expression of the kernel (or of a helper it calls) into w.
void row_walk(Row *w, CXCursor c);
// The grid-stride loop over the rows at the body's top level, if any (w->row_loop).
void row_find_loop(Row *w, CXCursor body);
// A variable that loop (body its body) writes and reads before assigning it,
// declared before it or __shared__: carried from one row to the block's next
// (analyze_row_op.c; null: none).
CXCursor row_carried(const Row *w, CXCursor loop, CXCursor body);

#endif
