// analyze_row.c: row-wise kernels (RMSNorm, LayerNorm, softmax, residual +
// norm). A launch that is not pointwise becomes a row-wise IR op (a pointwise
// op over rows * H elements with IrPointwise.row = H and no body: the kernel
// runs as written) when the kernel can be proven to keep each block in its own
// row of H elements:
//
//   - the row: blockIdx.x, directly or through integer locals initialized
//     from it and never assigned;
//   - columns: loops `for (int j = threadIdx.x; j < H; j += blockDim.x)` (or a
//     positive constant step, whose writes may miss columns), j never assigned
//     or addressed in the body; H one scalar parameter;
//   - global memory only through the kernel's pointer parameters, at
//     [row * H + j] (the block's own row; also through a local pointer
//     `p = x + row * H` or an integer local `off = row * H`), at [j] (a
//     column, read only: gamma, bias) or at [row] (the row's own scalar: a
//     per-row scale read, or a per-row output such as LayerNorm's mean and
//     rstd, whose write under `if (threadIdx.x == 0)` still covers every
//     row); __ldg(&x[...]) reads; nothing else names those pointers (no helper
//     call, atomic, address or dereference), a buffer written is touched only
//     in its own row and in one way ([row * H + j] or [row]);
//   - the row index only to find the row (no `row == 0`, no seed + row, no
//     blockIdx.x in a helper):
//     the schedule launches the kernel on a part of the rows with its row
//     pointers moved to the part's first row ([row] pointers by rows);
//   - the rows: a parameter used only in tests `row < rows` (or >=, >, <=)
//     and the launch's grid equal to it; without one, the grid is the row
//     count;
//   - no gridDim, blockIdx.y/z or grid-wide sync (this_grid) in the kernel or
//     the __device__ helpers it calls, no file-scope variable it could write;
//   - or, for the rows, a grid-stride loop at the kernel's top level,
//     `for (int row = blockIdx.x; row < rows; row += gridDim.x)`: its variable
//     is the row inside it, the launch's grid may be anything (each block runs
//     the loop once in the schedule, which launches a block per row of a part).
//
// A row may also belong to a warp (row = blockIdx.x * (blockDim.x / 32) +
// threadIdx.x / 32, or the cooperative-groups tile's meta_group_rank; columns
// from the lane threadIdx.x % 32 stepping by 32) or to a thread (row =
// blockIdx.x * blockDim.x + threadIdx.x; columns from 0 stepping by 1). Then
// the launch has more warps (threads) than rows: every access comes after the
// rows test that stops the others, no shared memory or __syncthreads (nor, for
// a thread, shuffles) joins two rows, the warp's or thread's place is not a
// value (the lane and blockDim.x may be), and the schedule launches blocks
// enough for a part's rows after checking that the launch as written reaches
// every row. A row pointer tested against null (lane 0 storing mean[row] when
// the caller passed one) is checked to be there when the schedule runs.
//
// Shared memory, __syncthreads, warp shuffles and helpers that take values
// are the block's own business and stay as written. A write that might not
// happen for every column of a row (under a condition, in another loop, after
// an early return, in a loop of another step) counts as a read of the value it
// leaves, so that the layouts say what survives.
#include "analyze_impl.h"
#include "common/cuda_names.h"

#include <stdlib.h>
#include <string.h>


// The text of c without its blanks ("gridDim . x" -> "gridDim.x"; malloc'd).
static char *compact_text(Row *w, CXCursor c) {
  char *t = az_text_of(&w->az, c), *d = t;
  for (const char *p = t; *p; p++)
    if (*p != ' ' && *p != '\t' && *p != '\n') *d++ = *p;
  *d = '\0';
  return t;
}

bool row_in_list(const CXCursor *v, int n, CXCursor c) {
  for (int i = 0; i < n; i++)
    if (same(v[i], c)) return true;
  return false;
}



static enum CXChildVisitResult walk_child(CXCursor c, CXCursor parent, CXClientData data) {
  (void)parent;
  Row *w = data;
  if (row_failed(w)) return CXChildVisit_Break;
  row_walk(w, c);
  return CXChildVisit_Continue;
}

static void walk_kids(Row *w, CXCursor c) { clang_visitChildren(c, walk_child, w); }

static void add_access(Row *w, CXCursor param, RowUse use, bool write, bool read, CXCursor at) {
  if ((int)(sizeof w->acc / sizeof *w->acc) == w->nacc) {
    az_fail(&w->az, at, "kernel '%s': more than %d global accesses", w->az.launch->kernel, w->nacc);
    return;
  }
  if (w->group != GROUP_BLOCK && !w->guarded && !w->in_guard) {
    char *t = az_text_of(&w->az, at);
    az_fail(&w->az, at, "kernel '%s' reaches %s before it tests its row against the row count; with one %s per row "
                        "coconet launches blocks enough for a slice's rows, so every access must come after `if "
                        "(row >= rows) return;` or inside `if (row < rows)`", w->az.launch->kernel, t,
            w->group == GROUP_WARP ? "warp" : "thread");
    free(t);
    return;
  }
  // One thread of each row's owner writes the row's own element: that covers the row.
  int cond = w->cond - (use == USE_OWN ? w->one_thread : 0);
  bool partial = write && (cond > 0 || w->irregular);
  w->acc[w->nacc++] = (Access){param, use, write, read, partial, at};
}

// A width above 1 the accesses use (their pointers' elements are k of the
// buffer's): the schedule needs H % k == 0.
static void note_scale(Row *w, int k, CXCursor at) {
  for (int i = 0; i < w->nscales; i++)
    if (w->scales[i] == k) return;
  if (k < 2) return;
  if (w->nscales == (int)(sizeof w->scales / sizeof *w->scales)) {
    az_fail(&w->az, at, "kernel '%s' reads its rows through pointers of more than %d widths", w->az.launch->kernel,
            w->nscales);
    return;
  }
  if (!w->nscales) w->scale_at = at;
  w->scales[w->nscales++] = k;
}

// An access through a pointer to k elements at a time with an index of other units.
static void scale_mismatch(Row *w, CXCursor s, const char *t, int scale, int index) {
  az_fail(&w->az, s, "kernel '%s' accesses %s, an index in units of %d element%s, through a pointer to %d element%s "
                     "at a time; a row read k elements at a time is indexed by row * H / k + j, j from a loop to "
                     "H / k, or by such a j alone", w->az.launch->kernel, t, index, index == 1 ? "" : "s", scale,
          scale == 1 ? "" : "s");
}

// base[index], written and/or read at s (a subscript, or a cache-hinted load or
// store of its address; base the pointer expression): the access it is, or the
// reason it is not one.
static void element_access(Row *w, CXCursor s, CXCursor base, CXCursor index, bool write, bool read) {
  char *t = az_text_of(&w->az, s);
  int scale = 0, col = row_col(w, index);
  bool at_row;
  CXCursor param = row_pointer(w, base, &scale, &at_row);
  if (clang_Cursor_isNull(param)) {
    az_fail(&w->az, s, "kernel '%s' accesses %s through a pointer coconet cannot follow", w->az.launch->kernel, t);
  } else if (at_row) {
    w->row_elements |= col != 0;
    if (col && col != scale) scale_mismatch(w, s, t, scale, col);
    else if (col) add_access(w, param, USE_ROW, write, read, s);
    else az_fail(&w->az, s, "kernel '%s' accesses %s: a pointer to the block's row is read and written only at a "
                            "column of a threadIdx-strided loop below the row length", w->az.launch->kernel, t);
    if (col == scale) note_scale(w, scale, s);
  }
  if (clang_Cursor_isNull(param) || at_row) {
    free(t);
    return;
  }
  int element = row_element(w, index), off, units;
  w->row_elements |= element != 0;
  if (!element && row_mixed_units(w, index, &off, &units)) {
    row_units_fail(w, s, off, units);
    free(t);
    return;
  }
  if (element == scale) add_access(w, param, USE_ROW, write, read, s);
  else if (col == scale && !write) add_access(w, param, USE_COL, false, true, s);
  else if (scale == 1 && row_is_row(w, index)) add_access(w, param, USE_OWN, write, read, s);
  else if (row_is_row(w, index))
    az_fail(&w->az, s, "kernel '%s' %s %s, the row's own element, through a pointer to %d elements at a time; a "
                       "row's own element ([row]) is %s through a pointer to the buffer's own elements",
            w->az.launch->kernel, write ? "writes" : "reads", t, scale, write ? "written" : "read");
  else if (element || (col && !write)) scale_mismatch(w, s, t, scale, element ? element : col);
  else
    az_fail(&w->az, s, "kernel '%s' %s %s; a row-wise kernel %s global memory only at [row * H + j] (its block's row, "
                       "j from a loop `for (j = threadIdx.x; j < H; j += blockDim.x)`)%s", w->az.launch->kernel,
            write ? "writes" : "reads", t, write ? "writes" : "reads", write ? " or [row]" : ", [j] or [row]");
  if (!row_failed(w)) note_scale(w, scale, s);
  free(t);
}

static void subscript(Row *w, CXCursor s, bool write, bool read) {
  Kids k = kids(s);
  element_access(w, s, k.v[0], k.last, write, read);
}

// A pointer parameter, a view of one or a pointer to the block's row (through casts of pointers).
static bool global_pointer(const Row *w, CXCursor c) {
  int scale;
  bool at_row;
  return !clang_Cursor_isNull(row_pointer(w, c, &scale, &at_row));
}

static bool global_subscript(const Row *w, CXCursor c) {
  c = az_strip(c);
  return kind(c) == CXCursor_ArraySubscriptExpr && kids(c).n == 2 && global_pointer(w, kids(c).v[0]);
}

// &x[k], x + k or k + x for a global pointer x: true, with x and k.
static bool element_address(const Row *w, CXCursor e, CXCursor *base, CXCursor *index) {
  e = az_strip(e);
  Kids k = kids(e);
  CXCursor a, b;
  if (kind(e) == CXCursor_UnaryOperator && k.n == 1 && global_subscript(w, k.v[0])) {
    Kids s = kids(az_strip(k.v[0]));
    *base = s.v[0];
    *index = s.last;
    return true;
  }
  if (!az_is_binary(&w->az, e, "+", &a, &b)) return false;
  if (global_pointer(w, b)) {
    CXCursor t = a;
    a = b;
    b = t;
  }
  if (!global_pointer(w, a)) return false;
  *base = a;
  *index = b;
  return true;
}

// p != nullptr, p == NULL, p != 0 (either order) for a pointer parameter p:
// true when c is one (p is recorded: the translation requires a buffer there).
static bool null_test(Row *w, CXCursor c) {
  CXCursor a, b;
  if (!az_is_binary(&w->az, c, "!=", &a, &b) && !az_is_binary(&w->az, c, "==", &a, &b)) return false;
  CXCursor p = row_ref_decl(a), other = b;
  if (clang_Cursor_isNull(p) || !row_is_pointer_param(w, p)) {
    p = row_ref_decl(b);
    other = a;
  }
  other = az_uncast(other);
  bool null = kind(other) == CXCursor_CXXNullPtrLiteralExpr || kind(other) == CXCursor_GNUNullExpr ||
              az_int_is(other, 0);
  if (clang_Cursor_isNull(p) || !row_is_pointer_param(w, p) || !null) return false;
  if (!row_in_list(w->nulls, w->nnulls, p) && w->nnulls < ROW_MAX) w->nulls[w->nnulls++] = p;
  return true;
}


static bool tracked(const Row *w, CXCursor d) {
  return row_in_list(w->cols, w->ncols, d) || row_in_list(w->rowoffs, w->nrowoffs, d) ||
         row_in_list(w->rowelems, w->nrowelems, d) ||
         row_in_list(w->aliases, w->naliases, d) || row_in_list(w->views, w->nviews, d) || row_is_param(w, d) ||
         row_builtin_local(w, d) ||
         (w->group != GROUP_BLOCK && row_derived_local(w, d));
}

static void assigned(Row *w, CXCursor lhs, bool read, CXCursor at) {
  CXCursor l = az_strip(lhs);
  if (w->helper_depth == 0 && global_subscript(w, l)) {
    subscript(w, l, true, read);
    return;
  }
  CXCursor d = row_ref_decl(l);
  if (w->helper_depth == 0 && !clang_Cursor_isNull(d) && tracked(w, d)) {
    char *t = az_text_of(&w->az, at), *name = fe_spelling(d);
    az_fail(&w->az, at, "kernel '%s' assigns '%s' in %s; a row-wise kernel's row, columns, row length, row "
                        "pointers and parameters are not assigned", w->az.launch->kernel, name, t);
    free(t);
    free(name);
    return;
  }
  row_walk(w, lhs);
}

// `if (row >= rows) return;` or `if (row < rows) { ... }` and the like: a test of
// the row against the rows parameter (true when c is one). *in: 1 when it holds
// exactly for the rows below the count (row < rows), -1 exactly for the others
// (row >= rows), 0 for neither (row <= rows).
static bool rows_test(Row *w, CXCursor c, int *in) {
  static const char *const ops[] = {"<", ">=", ">", "<="};
  static const int row_left[] = {1, -1, 0, 0}, row_right[] = {0, 0, 1, -1};
  for (int i = 0; i < 4; i++) {
    CXCursor a, b;
    if (!az_is_binary(&w->az, c, ops[i], &a, &b)) continue;
    bool left = row_is_row(w, a);
    CXCursor rows = left ? row_ref_decl(b) : row_is_row(w, b) ? row_ref_decl(a) : clang_getNullCursor();
    if (clang_Cursor_isNull(rows) || !row_is_param(w, rows) || az_is_pointer(rows)) return false;
    if (!clang_Cursor_isNull(w->rows) && !same(w->rows, rows)) return false;
    w->rows = rows;
    *in = left ? row_left[i] : row_right[i];
    return true;
  }
  return false;
}

static bool returns_only(CXCursor s) {
  s = az_strip(s);
  if (kind(s) == CXCursor_CompoundStmt) {
    Kids k = kids(s);
    return k.n == 1 && kind(k.v[0]) == CXCursor_ReturnStmt && !kids(k.v[0]).n;
  }
  return kind(s) == CXCursor_ReturnStmt && !kids(s).n;
}

// True in one thread of every row's owner: threadIdx.x == 0 with a block per
// row, lane == 0 with a warp (either order), also && tests of pointers
// against null.
static bool first_thread_test(Row *w, CXCursor c) {
  CXCursor a, b;
  if (az_is_binary(&w->az, c, "&&", &a, &b))
    return (first_thread_test(w, a) && null_test(w, b)) || (null_test(w, a) && first_thread_test(w, b));
  return w->group != GROUP_THREAD && az_first_thread(&w->az, c, w->group == GROUP_WARP);
}

static void if_stmt(Row *w, CXCursor s) {
  Kids k = kids(s);
  int in;
  if (k.n == 2 && rows_test(w, k.v[0], &in)) {
    // The rows test: its early return or its body covers the kernel's rows
    // (and with a warp or a thread per row, stops the extra ones).
    if (returns_only(k.v[1])) {
      w->guarded |= in < 0 && w->cond == 0 && w->helper_depth == 0;
    } else {
      w->in_guard += in > 0;
      row_walk(w, k.v[1]);
      w->in_guard -= in > 0;
    }
    return;
  }
  row_walk(w, k.v[0]);
  bool first = k.n == 2 && first_thread_test(w, k.v[0]);
  w->cond++;
  w->one_thread += first;
  for (int i = 1; i < k.n; i++) row_walk(w, k.v[i]);
  w->one_thread -= first;
  w->cond--;
}

static bool helper_of_user(const Row *w, CXCursor def) {
  return !clang_Cursor_isNull(def) && clang_isCursorDefinition(def) &&
         fe_in_user_code(w->az.fe, clang_getCursorLocation(def));
}

// The row index used as a value (not as a row's place): the schedule launches
// the kernel on a part of the rows, where blockIdx.x counts from that part's
// first row.
static void row_value(Row *w, CXCursor c) {
  char *t = az_text_of(&w->az, c);
  az_fail(&w->az, c, "kernel '%s' uses its row index '%s' as a value; a row-wise kernel uses it only to find its "
                     "row (row * H + j, [row], a test against the row count), because the schedule runs the kernel "
                     "on a part of the rows, where blockIdx.x counts from the part's first row",
          w->az.launch->kernel, t);
  free(t);
}

// A thread's place in the block used as a value with a warp or a thread per row.
static void moved_position(Row *w, CXCursor c) {
  char *t = az_text_of(&w->az, c);
  az_fail(&w->az, c, "kernel '%s' uses '%s', which depends on where its row runs; with one %s per row the "
                     "schedule runs the kernel on a part of the rows, where a row's %s sits elsewhere in the grid "
                     "(%sblockDim.x may be used)", w->az.launch->kernel, t, w->group == GROUP_WARP ? "warp" : "thread",
          w->group == GROUP_WARP ? "warp" : "thread",
          w->group == GROUP_WARP ? "the lane threadIdx.x % 32 and " : "");
  free(t);
}

// A grid position used as a value with a warp or a thread per row (true when
// c is one): the lane (with a warp per row) and the warps of a block are the
// same wherever the row runs; the row, the warp and the thread are not.
static bool position(Row *w, CXCursor c) {
  AzPlace d = az_place(&w->az, c);
  Builtin b = az_builtin(&w->az, c);
  if (d == PLACE_NONE && b != B_BLOCKIDX_X && b != B_THREADIDX_X) return false;
  if (d == PLACE_WARPS || (d == PLACE_LANE && w->group == GROUP_WARP)) return true;
  if (d == row_place(w) || b == B_BLOCKIDX_X) {
    row_is_row(w, c);
    row_value(w, c);
  } else {
    moved_position(w, c);
  }
  return true;
}

// A call through which threads of a block exchange values: block-wide with a
// warp per row (rows share the block), any with a thread per row.
static bool couples_threads(const Row *w, const char *name) {
  if (w->group == GROUP_BLOCK) return false;
  if (cuda_name_in(name, CUDA_BLOCK_BARRIERS)) return true;
  return w->group == GROUP_THREAD && (strncmp(name, "__shfl", 6) == 0 || strncmp(name, "__match_", 8) == 0 ||
                                      strncmp(name, "__reduce_", 9) == 0 || cuda_name_in(name, CUDA_WARP_CALLS));
}

// A helper the file defines is read as part of the kernel (its accesses,
// barriers and shuffles are the kernel's); a library's (a system header's:
// CUDA, cub, cooperative groups) is known by its name (call). A call coconet
// cannot follow (through a pointer, too deep) is
// refused: the function could couple threads that another part of the rows
// no longer shares, or touch other rows.
static void helper(Row *w, CXCursor c, CXCursor callee) {
  CXCursor def = clang_getCursorDefinition(callee);
  if (clang_Cursor_isNull(callee)) {
    char *t = az_text_of(&w->az, c);
    az_fail(&w->az, c, "kernel '%s' calls through a function pointer in %s; coconet reads the functions a row-wise "
                       "kernel calls and cannot tell which one this is: call it by name", w->az.launch->kernel, t);
    free(t);
  } else if (helper_of_user(w, def) && w->helper_depth == 4) {
    az_fail(&w->az, c, "kernel '%s': __device__ helpers nest more than 4 deep, past what coconet reads of a row-wise "
                       "kernel", w->az.launch->kernel);
  } else if (helper_of_user(w, def)) {
    w->helper_depth++;
    row_walk(w, kids(def).last);
    w->helper_depth--;
  }
}

// A __device__ helper of the user's that only loads through its one
// parameter, a pointer: `T ldg(const T *p) { return __ldg(p); }` (or another
// cache-hinted load, *p, p[0]). A call of it with &x[k] reads x[k].
static bool load_helper(const Row *w, CXCursor callee) {
  CXCursor def = clang_getCursorDefinition(callee), param = clang_getNullCursor();
  if (!helper_of_user(w, def)) return false;
  Kids k = kids(def);
  int nparams = 0;
  for (int i = 0; i < k.n; i++)
    if (kind(k.v[i]) == CXCursor_ParmDecl) param = k.v[nparams++, i];
  Kids body = kind(k.last) == CXCursor_CompoundStmt ? kids(k.last) : (Kids){0};
  if (nparams != 1 || body.n != 1 || kind(body.v[0]) != CXCursor_ReturnStmt || kids(body.v[0]).n != 1) return false;
  CXCursor e = az_strip(kids(body.v[0]).v[0]);
  // A struct returned by value (float2): its copy constructor around the load.
  if (kind(e) == CXCursor_CallExpr && kind(clang_getCursorReferenced(e)) == CXCursor_Constructor && kids(e).n == 1)
    e = az_strip(kids(e).v[0]);
  Kids ek = kids(e);
  if (kind(e) == CXCursor_CallExpr) {
    char *name = fe_spelling(e);
    bool load = cuda_name_in(name, CUDA_CACHE_LOADS) && ek.n == 2 && same(row_ref_decl(ek.last), param);
    free(name);
    return load;
  }
  long long zero;
  if (kind(e) == CXCursor_ArraySubscriptExpr)
    return ek.n == 2 && same(row_ref_decl(ek.v[0]), param) && az_int_constant(ek.last, &zero) && zero == 0;
  char *op = kind(e) == CXCursor_UnaryOperator && ek.n == 1 ? az_unary_op(&w->az, e, ek.v[0]) : NULL;
  bool deref = op && strcmp(op, "*") == 0 && same(row_ref_decl(ek.v[0]), param);
  free(op);
  return deref;
}

static void call(Row *w, CXCursor c) {
  CXCursor callee = az_callee(c);
  char *name = fe_spelling(callee);
  int nargs = clang_Cursor_getNumArguments(c);
  CXCursor base, index;
  bool load = nargs == 1 && cuda_name_in(name, CUDA_CACHE_LOADS);
  bool store = nargs == 2 && cuda_name_in(name, CUDA_CACHE_STORES);
  if (w->group != GROUP_BLOCK && position(w, c)) {
    // checked there
  } else if (w->group == GROUP_BLOCK && az_place(&w->az, c) == PLACE_MOVED && strstr(name, "index")) {
    row_value(w, c);  // block.group_index(): blockIdx
  } else if (strcmp(name, "this_grid") == 0 || strcmp(name, "sync") == 0) {
    az_fail(&w->az, c, "kernel '%s' calls %s(): a grid-wide operation couples the rows; coconet cannot run the "
                       "kernel on a part of them", w->az.launch->kernel, name);
  } else if (couples_threads(w, name)) {
    az_fail(&w->az, c, "kernel '%s' runs one %s per row and calls %s(), through which %s; coconet runs the kernel "
                       "on a part of the rows, where different rows share them", w->az.launch->kernel,
            w->group == GROUP_WARP ? "warp" : "thread", name,
            w->group == GROUP_WARP ? "the warps of a block meet" : "threads of a warp exchange values");
  } else if ((load || store) && w->helper_depth == 0 &&
             element_address(w, clang_Cursor_getArgument(c, 0), &base, &index)) {
    // __ldcs(&x[k]), __ldcs(x + k): a read of x[k]; __stcs(x + k, v): a write.
    if (store) row_walk(w, clang_Cursor_getArgument(c, 1));
    element_access(w, c, base, index, store, load);
  } else if (nargs == 1 && w->helper_depth == 0 && load_helper(w, callee) &&
             element_address(w, clang_Cursor_getArgument(c, 0), &base, &index)) {
    // ldg(&x[k]): a read of x[k] through the user's helper
    int nacc = w->nacc;
    element_access(w, c, base, index, false, true);
    if (w->nacc > nacc && w->acc[nacc].use == USE_ROW && clang_Cursor_isNull(w->row_load_helper))
      w->row_load_helper = c;
  } else {
    walk_kids(w, c);
    helper(w, c, callee);
  }
  free(name);
}

static void member(Row *w, CXCursor c) {
  if (clang_getCanonicalType(clang_getCursorType(c)).kind == CXType_Pointer) {
    char *t = az_text_of(&w->az, c);
    az_fail(&w->az, c, "kernel '%s' uses pointer member %s; a row-wise kernel reaches global memory only through its "
                       "pointer parameters, whose accesses coconet checks", w->az.launch->kernel, t);
    free(t);
    return;
  }
  char *t = compact_text(w, c);
  if (w->group != GROUP_BLOCK && strncmp(t, "threadIdx.", 10) == 0)
    moved_position(w, c);
  else if (strncmp(t, "gridDim", 7) == 0 || (strncmp(t, "blockIdx.", 9) == 0 && strcmp(t, "blockIdx.x") != 0))
    az_fail(&w->az, c, "kernel '%s' reads %s; a row-wise kernel is one block per row along blockIdx.x, and the "
                       "schedule changes the grid", w->az.launch->kernel, t);
  else if (strcmp(t, "blockIdx.x") == 0)
    row_value(w, c);  // in a helper too: there it can only be a value
  free(t);
  walk_kids(w, c);
}

static void decl_ref(Row *w, CXCursor c) {
  CXCursor d = clang_getCursorReferenced(c);
  char *name = fe_spelling(d);
  if (w->group != GROUP_BLOCK && position(w, c)) {
    // checked there
  } else if (w->helper_depth == 0 && (row_is_pointer_param(w, d) || row_in_list(w->aliases, w->naliases, d) ||
                                      row_in_list(w->views, w->nviews, d))) {
    az_fail(&w->az, c, "kernel '%s' uses pointer '%s' other than by an element of its block's row ([row * H + j]), "
                       "a column ([j]) or the row's own element ([row]); coconet cannot prove which rows it "
                       "touches", w->az.launch->kernel, name);
  } else if (w->helper_depth == 0 && (row_in_list(w->rowoffs, w->nrowoffs, d) ||
                                      row_in_list(w->rowelems, w->nrowelems, d) ||
                                      (row_builtin_local(w, d) && row_is_row(w, c)))) {
    row_value(w, c);
  } else if (w->helper_depth == 0 && !clang_Cursor_isNull(w->rows) && same(d, w->rows)) {
    az_fail(&w->az, c, "kernel '%s' uses '%s' other than in a test of the row (`row < %s`); the schedule runs the "
                       "kernel on a part of the rows and passes their count there", w->az.launch->kernel, name, name);
  } else if (kind(d) == CXCursor_VarDecl && clang_getCursorSemanticParent(d).kind == CXCursor_TranslationUnit &&
             !clang_isConstQualifiedType(clang_getCursorType(d)) && !az_is_shared(d)) {  // extern __shared__: the block's
    az_fail(&w->az, c, "kernel '%s' uses file-scope variable '%s'; a row-wise kernel keeps to its block's row, "
                       "and blocks sharing a variable are not proven to", w->az.launch->kernel, name);
  }
  free(name);
}


// `for (int row = blockIdx.x; row < rows; row += gridDim.x) BODY`: its variable, or null.
static CXCursor row_loop_var(Row *w, CXCursor f) {
  CXCursor none = clang_getNullCursor(), a, b, lhs, rhs;
  Kids k = kids(f);
  if (kind(f) != CXCursor_ForStmt || k.n != 4 || kind(k.v[0]) != CXCursor_DeclStmt) return none;
  Kids d = kids(k.v[0]);
  if (d.n != 1 || !row_builtin_local(w, d.v[0]) || az_builtin(&w->az, kids(d.v[0]).last) != B_BLOCKIDX_X) return none;
  CXCursor var = d.v[0], rows = clang_getNullCursor();
  if (az_is_binary(&w->az, k.v[1], "<", &a, &b) && same(row_ref_decl(a), var)) rows = row_ref_decl(b);
  if (clang_Cursor_isNull(rows) || !row_is_param(w, rows) || az_is_pointer(rows)) return none;
  char *op = NULL;
  if (!az_is_assignment(&w->az, k.v[2], &lhs, &rhs, &op)) return none;
  char *step = compact_text(w, az_strip(rhs));
  bool stride = strcmp(op, "+=") == 0 && same(row_ref_decl(lhs), var) && strcmp(step, "gridDim.x") == 0;
  free(op);
  free(step);
  return stride ? var : none;
}

// A block per row through a grid-stride loop over the rows at the kernel's
// top level: inside the loop its variable is the row (blockIdx.x is not); the
// loop's test is the rows test; its step, gridDim.x, is the only gridDim the
// kernel may read. The schedule launches a block per row of a part, so each
// block runs the loop once, as a kernel of one block per row.
static enum CXChildVisitResult row_loop_child(CXCursor c, CXCursor parent, CXClientData data) {
  (void)parent;
  Row *w = data;
  CXCursor var = row_loop_var(w, c);
  if (clang_Cursor_isNull(var)) return CXChildVisit_Continue;
  w->row_loop = c;
  w->row_var = var;
  return CXChildVisit_Break;
}

void row_find_loop(Row *w, CXCursor body) {
  if (w->group == GROUP_BLOCK) clang_visitChildren(body, row_loop_child, w);
}

static void row_loop(Row *w, CXCursor f) {
  Kids k = kids(f);
  int in;
  CXCursor carried = row_carried(w, f, k.v[3]);
  if (!clang_Cursor_isNull(carried)) {
    char *name = fe_spelling(carried);
    az_fail(&w->az, carried, "kernel '%s' writes '%s' in its grid-stride loop over the rows and reads it there "
                             "before assigning it: it carries a value from one row to the block's next, and the "
                             "schedule runs each row in a block of its own; compute it from the row alone",
            w->az.launch->kernel, name);
    free(name);
    return;
  }
  w->in_row_loop = true;
  rows_test(w, k.v[1], &in);
  row_walk(w, k.v[3]);
  w->in_row_loop = false;
}

void row_walk(Row *w, CXCursor c) {
  if (row_failed(w)) return;
  CXCursor lhs, rhs;
  char *op = NULL;
  switch (kind(c)) {
  case CXCursor_VarDecl:
    if (w->group != GROUP_BLOCK && az_is_shared(c)) {
      char *name = fe_spelling(c);
      az_fail(&w->az, c, "kernel '%s' runs one %s per row and declares shared memory '%s', which the rows of a block "
                         "share; coconet runs the kernel on a part of the rows, where different rows share a block",
              w->az.launch->kernel, w->group == GROUP_WARP ? "warp" : "thread", name);
      free(name);
      return;
    }
    if (w->helper_depth == 0 && row_local(w, c)) return;
    walk_kids(w, c);
    return;
  case CXCursor_ForStmt:
    if (w->helper_depth == 0 && !clang_Cursor_isNull(w->row_loop) && same(c, w->row_loop)) {
      row_loop(w, c);
      return;
    }
    if (w->helper_depth == 0 && row_column_loop(w, c)) return;
    w->cond++;
    walk_kids(w, c);
    w->cond--;
    return;
  case CXCursor_WhileStmt: case CXCursor_DoStmt: case CXCursor_SwitchStmt: case CXCursor_ConditionalOperator:
    w->cond++;
    walk_kids(w, c);
    w->cond--;
    return;
  case CXCursor_IfStmt: if_stmt(w, c); return;
  case CXCursor_ReturnStmt: case CXCursor_BreakStmt: case CXCursor_ContinueStmt: case CXCursor_GotoStmt:
    if (w->helper_depth == 0) w->irregular = true;
    walk_kids(w, c);
    return;
  case CXCursor_ArraySubscriptExpr:
    if (w->helper_depth == 0 && global_subscript(w, c)) subscript(w, c, false, true);
    else walk_kids(w, c);
    return;
  case CXCursor_CallExpr:
    if (az_is_assignment(&w->az, c, &lhs, &rhs, &op)) break;
    call(w, c);
    return;
  case CXCursor_BinaryOperator: case CXCursor_CompoundAssignOperator: {
    if (az_is_assignment(&w->az, c, &lhs, &rhs, &op)) break;
    if (w->group != GROUP_BLOCK && position(w, c)) return;
    if (w->helper_depth == 0 && null_test(w, c)) return;
    int in;
    if (w->helper_depth == 0 && rows_test(w, c, &in)) return;
    CXCursor a, b;
    // The right operand of && and || runs only sometimes.
    bool lazy = az_is_binary(&w->az, c, "&&", &a, &b) || az_is_binary(&w->az, c, "||", &a, &b);
    w->cond += lazy;
    walk_kids(w, c);
    w->cond -= lazy;
    return;
  }
  case CXCursor_UnaryOperator: {
    Kids k = kids(c);
    char *o = k.n ? az_unary_op(&w->az, c, k.v[0]) : strdup("");
    CXCursor operand = k.n == 1 ? row_ref_decl(k.v[0]) : clang_getNullCursor();
    if (k.n == 1 && (strstr(o, "++") || strstr(o, "--"))) assigned(w, k.v[0], true, c);
    else if (w->helper_depth == 0 && strchr(o, '&') && !clang_Cursor_isNull(operand) && tracked(w, operand)) {
      char *name = fe_spelling(operand);
      az_fail(&w->az, c, "kernel '%s' takes the address of '%s'; a row-wise kernel's row, columns, row length, "
                         "row pointers and parameters are not reached through pointers", w->az.launch->kernel, name);
      free(name);
    }
    else if (k.n == 1 && w->helper_depth == 0 && global_subscript(w, k.v[0]))
      az_fail(&w->az, c, "kernel '%s' takes the address of an element of a global buffer (%s); coconet cannot "
                         "follow where it is used", w->az.launch->kernel, o);
    else walk_kids(w, c);
    free(o);
    return;
  }
  case CXCursor_MemberRefExpr: member(w, c); return;
  case CXCursor_DeclRefExpr: decl_ref(w, c); return;
  default: walk_kids(w, c); return;
  }
  // An assignment: x = e, x op= e.
  bool read = strcmp(op, "=") != 0;
  free(op);
  row_walk(w, rhs);
  assigned(w, lhs, read, c);
}
