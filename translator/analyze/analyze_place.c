// analyze_place.c: where a thread sits in the grid, for row-wise kernels that
// give a row to a warp or to a thread (analyze_row.c): its lane, its warp in
// the block, the warps of a block, the row of a warp or of a thread, written
// with threadIdx/blockIdx/blockDim and 32 (WARP_SIZE, warpSize), through
// integer locals of the kernel, or through a cooperative-groups tile of 32.
#include "analyze_impl.h"

#include <stdlib.h>
#include <string.h>

CXCursor az_uncast(CXCursor c) {
  c = az_strip(c);
  while (kind(c) == CXCursor_CStyleCastExpr || kind(c) == CXCursor_CXXStaticCastExpr ||
         kind(c) == CXCursor_CXXFunctionalCastExpr) {
    Kids k = kids(c);
    if (!k.n) break;
    c = az_strip(k.last);
  }
  return c;
}

// A cooperative-groups query g.name() (true when c is one): the method, and
// whether g is a tile of 32 threads (a warp of its block).
static bool cg_query(CXCursor c, char **name, bool *warp) {
  c = az_uncast(c);
  if (kind(c) != CXCursor_CallExpr || clang_Cursor_getNumArguments(c) != 0) return false;
  Kids k = kids(c);
  CXCursor callee = k.n ? az_strip(k.v[0]) : clang_getNullCursor();
  if (kind(callee) != CXCursor_MemberRefExpr || !kids(callee).n) return false;
  bool group = az_type_has(kids(callee).v[0], "cooperative_groups");
  *warp = az_type_has(kids(callee).v[0], "thread_block_tile<32");
  if (group) *name = fe_spelling(c);
  return group;
}

// 32, as written or through a macro (WARP_SIZE), warpSize, or the size of a
// warp's tile (warp.size(), warp.num_threads()).
bool az_is_warp_size(CXCursor c) {
  long long v;
  char *name;
  bool warp;
  c = az_uncast(c);
  if (az_int_constant(c, &v)) return v == 32;
  if (cg_query(c, &name, &warp)) {
    bool is = warp && (strcmp(name, "size") == 0 || strcmp(name, "num_threads") == 0);
    free(name);
    return is;
  }
  if (kind(c) != CXCursor_DeclRefExpr) return false;
  char *var = fe_spelling(clang_getCursorReferenced(c));
  bool is = strcmp(var, "warpSize") == 0;
  free(var);
  return is;
}

bool az_int_is(CXCursor c, long long want) {
  long long v;
  return az_int_constant(c, &v) && v == want;
}

// threadIdx.x % 32 (& 31): the lane; threadIdx.x / 32 (>> 5): the warp in the
// block; blockDim.x / 32: warps per block; blockIdx.x * warps + warp and
// blockIdx.x * blockDim.x + threadIdx.x: the row of a warp or of a thread.
// Also through an integer local of the kernel initialized with one.
static AzPlace place(const Az *az, CXCursor c, int depth) {
  c = az_uncast(c);
  if (depth > 8) return PLACE_NONE;
  if (kind(c) == CXCursor_DeclRefExpr) {
    CXCursor d = clang_getCursorReferenced(c);
    Kids init = kids(d);
    if (kind(d) != CXCursor_VarDecl || !az_is_integer_var(d) || !init.n ||
        !same(clang_getCursorSemanticParent(d), az->kernel))
      return PLACE_NONE;
    return place(az, init.last, depth + 1);
  }
  char *name;
  bool warp;
  if (cg_query(c, &name, &warp)) {
    // warp.thread_rank(), warp.meta_group_rank(), warp.meta_group_size(); any other group's
    // rank or index is a place in the grid.
    static const char *const places[] = {"thread_rank", "thread_index", "group_index", "block_index",
                                         "block_rank", "meta_group_rank"};
    AzPlace d = PLACE_NONE;
    if (warp && strcmp(name, "thread_rank") == 0) d = PLACE_LANE;
    else if (warp && strcmp(name, "meta_group_rank") == 0) d = PLACE_WARP;
    else if (warp && strcmp(name, "meta_group_size") == 0) d = PLACE_WARPS;
    for (size_t i = 0; d == PLACE_NONE && i < sizeof places / sizeof *places; i++)
      if (strcmp(name, places[i]) == 0) d = PLACE_MOVED;
    free(name);
    return d;
  }
  CXCursor a, b;
  if ((az_is_binary(az, c, "%", &a, &b) && az_is_warp_size(b)) || (az_is_binary(az, c, "&", &a, &b) && az_int_is(b, 31)))
    return az_builtin(az, a) == B_THREADIDX_X ? PLACE_LANE : PLACE_NONE;
  if ((az_is_binary(az, c, "/", &a, &b) && az_is_warp_size(b)) || (az_is_binary(az, c, ">>", &a, &b) && az_int_is(b, 5))) {
    Builtin x = az_builtin(az, a);
    return x == B_THREADIDX_X ? PLACE_WARP : x == B_BLOCKDIM_X ? PLACE_WARPS : PLACE_NONE;
  }
  if (az_is_index_expr(az, c)) return PLACE_THREAD_ROW;
  if (!az_is_binary(az, c, "+", &a, &b)) return PLACE_NONE;
  CXCursor base = place(az, b, depth + 1) == PLACE_WARP ? a : place(az, a, depth + 1) == PLACE_WARP ? b : clang_getNullCursor();
  CXCursor x, y;
  if (clang_Cursor_isNull(base) || !az_is_binary(az, az_uncast(base), "*", &x, &y)) return PLACE_NONE;
  if ((az_builtin(az, x) == B_BLOCKIDX_X && place(az, y, depth + 1) == PLACE_WARPS) ||
      (az_builtin(az, y) == B_BLOCKIDX_X && place(az, x, depth + 1) == PLACE_WARPS))
    return PLACE_WARP_ROW;
  return PLACE_NONE;
}

AzPlace az_place(const Az *az, CXCursor c) { return place(az, c, 0); }

bool az_first_thread(const Az *az, CXCursor c, bool warp) {
  CXCursor a, b;
  if (!az_is_binary(az, az_strip(c), "==", &a, &b)) return false;
  if (az_int_is(a, 0)) {
    CXCursor t = a;
    a = b;
    b = t;
  }
  if (!az_int_is(b, 0)) return false;
  return warp ? az_place(az, a) == PLACE_LANE : az_builtin(az, a) == B_THREADIDX_X;
}
