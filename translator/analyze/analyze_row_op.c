// analyze_row_op.c: a row-wise kernel's op, once analyze_row.c has walked its
// body: the checks that need every access (one buffer not read across rows
// where it is written, the row count and stride parameters told apart), the
// row-wise IR op, and the launch's grid for a warp or a thread per row; and
// whether a grid-stride loop over the rows carries a value from row to row.
#include "analyze_impl.h"

#include <stdlib.h>
#include <string.h>

// Two accesses of one buffer: the same parameter, or two passed the same pointer.
static bool same_buffer(const Row *w, const Access *a, const Access *b) {
  if (same(a->param, b->param)) return true;
  const char *x = az_launch_arg(&w->az, a->param), *y = az_launch_arg(&w->az, b->param);
  if (!x || !y) return true;
  while (*x || *y) {
    if (*x == ' ') x++;
    else if (*y == ' ') y++;
    else if (*x++ != *y++) return false;
  }
  return true;
}

// The checks that need every access: one buffer not read across rows where it
// is written, the row length known, the rows covered.
static void check_accesses(Row *w, CXCursor kernel) {
  bool writes = false;
  for (int i = 0; i < w->nacc && !row_failed(w); i++) {
    const Access *a = &w->acc[i];
    writes |= a->write;
    if (az_buffer_type(&w->az, a->param, a->at) == IR_VOID) break;
    for (int j = 0; j < i && !a->write; j++) {
      const Access *b = &w->acc[j];
      if (!same_buffer(w, a, b) || b->use == a->use || b->write) continue;
      char *t = az_text_of(&w->az, a->at), *u = az_text_of(&w->az, b->at);
      az_fail(&w->az, a->at, "kernel '%s' reads %s and %s: one buffer both per row and per column (or per row "
                             "element); coconet moves a buffer's pointer to the first row of a slice, or leaves it",
              w->az.launch->kernel, u, t);
      free(t);
      free(u);
      break;
    }
    for (int j = 0; j < w->nacc && a->write; j++) {
      const Access *b = &w->acc[j];
      if (!same_buffer(w, a, b) || b->use == a->use) continue;
      char *t = az_text_of(&w->az, b->at), *u = az_text_of(&w->az, a->at);
      if (b->use == USE_COL)
        az_fail(&w->az, b->at, "kernel '%s' reads %s, outside its block's row, of a buffer it writes (%s): rows "
                               "would depend on each other", w->az.launch->kernel, t, u);
      else
        az_fail(&w->az, b->at, "kernel '%s' %s %s and writes %s: one buffer both per row element ([row * H + j]) "
                               "and per row ([row]); coconet splits a buffer in rows of H elements or of one",
                w->az.launch->kernel, b->write ? "writes" : "reads", t, u);
      free(t);
      free(u);
      break;
    }
  }
  if (!row_failed(w) && (!writes || clang_Cursor_isNull(w->h)))
    az_fail(&w->az, kernel, "kernel '%s' writes no row of a buffer at [row * H + j]; it is not a row-wise kernel",
            w->az.launch->kernel);
}

// The op, built once every check has passed.
static IrOp *row_op(Row *w, IrRegion *ir, const Stmt *s, IrSize *rows) {
  const Launch *l = s->launch;
  const Az *az = &w->az;
  char *kernel = l->template_args ? ir_printf(ir, "%s<%s>", l->kernel, l->template_args) : ir_strdup(ir, l->kernel);
  char *args = ir_strdup(ir, ""), *roles = ir_alloc(ir, (size_t)l->nargs + 1);
  for (int i = 0; i < l->nargs; i++) {
    args = ir_printf(ir, "%s%s%s", args, i ? ", " : "", l->args[i].text);
    roles[i] = 'x';
  }
  int n = clang_Cursor_getNumArguments(az->kernel);
  for (int i = 0; i < n && i < l->nargs; i++)
    if (!clang_Cursor_isNull(w->rows) && same(clang_Cursor_getArgument(az->kernel, (unsigned)i), w->rows)) roles[i] = 'r';
    else if (!clang_Cursor_isNull(w->stride) && same(clang_Cursor_getArgument(az->kernel, (unsigned)i), w->stride))
      roles[i] = 's';
  for (int i = 0; i < w->nacc; i++) {
    const Access *a = &w->acc[i];
    bool null = row_in_list(w->nulls, w->nnulls, a->param);
    if (a->use != USE_COL) roles[az_param_position(az, a->param)] = a->use == USE_ROW ? (null ? 'P' : 'p') : (null ? 'O' : 'o');
  }
  IrSize *h = ir_size_parse(ir, az_launch_arg(az, w->h));
  IrPointwise info = {
      .kernel = kernel, .grid = l->grid.text, .block = l->block.text,
      .shmem = l->shmem.text ? l->shmem.text : "0", .stream = l->stream.text ? l->stream.text : "0",
      .args_text = args, .count = ir_size_mul(ir, rows, h), .row = h, .row_roles = roles, .row_loc = w->row_loc,
      .row_threads = w->group == GROUP_WARP ? 32 : w->group == GROUP_THREAD ? 1 : 0,
  };
  if (!clang_Cursor_isNull(w->row_load_helper)) {
    // The fused kernel's copy makes the kernel's own __ldg coherent, not a helper's.
    char *t = az_text_of(&w->az, w->row_load_helper);
    info.row_fuse_why = ir_printf(ir, "fuse: kernel '%s' reads a row element through a helper's cache-hinted load "
                                      "(%s); the fused kernel reads rows it has just written, which that cache does "
                                      "not see, and its copy makes only the kernel's own __ldg coherent (coconet does "
                                      "not tell which buffers a helper's load may meet): load with __ldg in the "
                                      "kernel itself, or drop fuse", l->kernel, t);
    info.row_fuse_loc = fe_loc(az->fe, clang_getCursorLocation(w->row_load_helper));
    free(t);
  }
  IrOp *op = ir_op_pointwise(ir, s->range, &info);
  for (int i = 0; i < w->nscales; i++)
    ir_region_assume_divides(ir, az_launch_arg(az, w->h), w->scales[i], kernel,
                             fe_any_loc(az->fe, clang_getCursorLocation(w->scale_at)));
  for (int i = 0; i < n && i < l->nargs; i++) {
    CXCursor p = clang_Cursor_getArgument(az->kernel, (unsigned)i);
    if (roles[i] == 'x' && !az_is_pointer(p)) {
      char *name = fe_spelling(p);
      ir_pw_param(ir, op, name, az_type_of(clang_getCursorType(p)), l->args[i].text);
      free(name);
    }
  }
  for (int i = 0; i < w->nacc; i++) {
    const Access *a = &w->acc[i];
    int at = az_param_position(az, a->param);
    SrcLoc loc = fe_loc(az->fe, clang_getCursorLocation(a->at));
    IrIndexKind index = a->use == USE_ROW ? IR_IDX_I : a->use == USE_COL ? IR_IDX_MOD : IR_IDX_DIV;
    IrSize *count = a->use == USE_ROW ? op->pw.count : a->use == USE_COL ? h : rows;
    IrTensor *t = ir_tensor_get_or_add(ir, l->args[at].text, az_buffer_type(&w->az, a->param, a->at), count, loc);
    if (a->read || a->partial) {
      IrUse *u = ir_use_add(ir, &op->reads, t, loc);
      bool first = u->expr == NULL;
      if (first || index > u->index) {
        u->index = index;
        u->expr = index == IR_IDX_I ? ir_expr_read(ir, t, IR_IDX_I, NULL) : ir_expr_read(ir, t, index, h);
      }
    }
    if (a->write) ir_use_add(ir, &op->writes, t, loc)->index = index;
  }
  return op;
}

// Who owns a row, from the first row of a warp or of a thread the body computes (a block if none).
static enum CXChildVisitResult group_child(CXCursor c, CXCursor parent, CXClientData data) {
  (void)parent;
  Row *w = data;
  if (kind(c) != CXCursor_BinaryOperator) return CXChildVisit_Recurse;
  AzPlace d = az_place(&w->az, c);
  if (d == PLACE_WARP_ROW || d == PLACE_THREAD_ROW) {
    w->group = d == PLACE_WARP_ROW ? GROUP_WARP : GROUP_THREAD;
    return CXChildVisit_Break;
  }
  return CXChildVisit_Recurse;
}

static bool top_level_comma(const char *t) {
  int depth = 0;
  for (; *t; t++) {
    depth += *t == '(' || *t == '[' ? 1 : *t == ')' || *t == ']' ? -1 : 0;
    if (*t == ',' && depth == 0) return true;
  }
  return false;
}

// With a warp or a thread per row the launch as written has a grid that
// reaches every row (the generated code checks it, using the grid and block
// as numbers: a dim3 there does not compile), and the translation launches
// blocks enough for a slice's rows: the extra warps or threads stop at the
// rows test (every access is after it, so there is one). A comma inside
// parentheses is a call's (CEIL_DIV(N * 32, 256)).
static void check_group_launch(Row *w) {
  const Launch *l = w->az.launch;
  const char *who = w->group == GROUP_WARP ? "warp" : "thread";
  const char *texts[] = {l->grid.text, l->block.text};
  for (int i = 0; i < 2; i++)
    if (!texts[i] || strchr(texts[i], '{') || top_level_comma(texts[i]) || strstr(texts[i], "dim3"))
      az_fail(&w->az, w->az.kernel, "kernel '%s' runs one %s per row, but the launch's %s '%s' is not a number of "
                                    "%s; coconet computes the grid of a slice from a one-dimensional block",
              l->kernel, who, i ? "block" : "grid", texts[i] ? texts[i] : "", i ? "threads" : "blocks");
  if (!row_failed(w) && w->group == GROUP_WARP && w->az.block_x > 0 && w->az.block_x % 32)
    az_fail(&w->az, w->az.kernel, "kernel '%s' runs one warp per row with blocks of %lld threads, not whole warps; "
                                  "the last warp of every block would share a row with the next block's first",
            l->kernel, w->az.block_x);
}

// A loop shaped as a block's column loop: from threadIdx.x, stepping by blockDim.x.
static enum CXChildVisitResult find_column_shape(CXCursor c, CXCursor parent, CXClientData data) {
  (void)parent;
  Row *w = ((Row **)data)[0];
  Kids k = kids(c);
  if (kind(c) == CXCursor_ForStmt && k.n == 4) {
    char *init = az_text_of(&w->az, k.v[0]), *step = az_text_of(&w->az, k.v[2]);
    bool shape = strstr(init, "threadIdx.x") && strstr(step, "blockDim.x") && !strstr(step, "gridDim");
    free(init);
    free(step);
    if (shape) {
      *((bool **)data)[1] = true;
      return CXChildVisit_Break;
    }
  }
  return CXChildVisit_Recurse;
}

IrOp *analyze_rowwise(const Frontend *fe, IrRegion *ir, const Stmt *s, bool *rowish, char **why, SrcLoc *why_loc) {
  const Launch *l = s->launch;
  const KernelDef *def = l->def;
  bool instance = def->is_template && def->inst_fe;
  Row w = {.az = {.fe = instance ? def->inst_fe : fe, .region_fe = fe, .ir = ir, .launch = l,
                  .kernel = instance ? def->inst : def->cursor},
           .h = clang_getNullCursor(), .rows = clang_getNullCursor(), .stride = clang_getNullCursor(),
           .row_loop = clang_getNullCursor(), .row_var = clang_getNullCursor(),
           .row_load_helper = clang_getNullCursor()};
  // A constant the launch's block size equals stands for blockDim.x (a column loop's step).
  w.az.block_x = launch_block_x(fe, s);
  w.az.body_fn = w.az.kernel;
  *why = NULL;
  Kids k = kids(w.az.kernel);
  CXCursor body = k.n ? k.last : clang_getNullCursor();
  if (def->is_template && !instance) {
    az_fail(&w.az, def->cursor, "%s", def->why ? def->why : "kernel template: no instance");
  } else if (kind(body) != CXCursor_CompoundStmt) {
    az_fail(&w.az, w.az.kernel, "kernel '%s' has no body", l->kernel);
  } else {
    clang_visitChildren(body, group_child, &w);
    row_find_loop(&w, body);
    row_walk(&w, body);
  }
  if (!row_failed(&w) && !w.saw_row) az_fail(&w.az, w.az.kernel, "kernel '%s' has no row index (blockIdx.x)", l->kernel);
  if (!row_failed(&w)) check_accesses(&w, w.az.kernel);
  if (!row_failed(&w) && !clang_Cursor_isNull(w.rows) && !clang_Cursor_isNull(w.stride) && same(w.rows, w.stride)) {
    char *name = fe_spelling(w.stride);
    az_fail(&w.az, w.rows, "kernel '%s' uses '%s' as both its row count and a row stride; the schedule passes a "
                           "slice's row count, which would change the stride too", l->kernel, name);
    free(name);
  }
  if (!row_failed(&w) && !clang_Cursor_isNull(w.rows) && same(w.rows, w.h)) {
    char *name = fe_spelling(w.h);
    az_fail(&w.az, w.rows, "kernel '%s' uses '%s' as both its row count and its row length; the schedule passes a "
                           "slice's row count, which would change the row length too", l->kernel, name);
    free(name);
  }
  IrOp *op = NULL;
  if (!row_failed(&w) && w.group != GROUP_BLOCK) {
    check_group_launch(&w);
    if (!row_failed(&w)) op = row_op(&w, ir, s, ir_size_parse(ir, az_launch_arg(&w.az, w.rows)));
  } else if (!row_failed(&w) && !clang_Cursor_isNull(w.row_loop)) {
    op = row_op(&w, ir, s, ir_size_parse(ir, az_launch_arg(&w.az, w.rows)));  // any grid covers the rows
  } else if (!row_failed(&w)) {
    const char *rows_text = clang_Cursor_isNull(w.rows) ? l->grid.text : az_launch_arg(&w.az, w.rows);
    // Without a rows test the grid is the row count: through a local (`dim3 grid(num_tokens)`), in the
    // terms of the launch argument it equals.
    for (int i = 0; clang_Cursor_isNull(w.rows) && i < l->nargs; i++)
      if (!strchr(l->args[i].text, '(') && launch_grid_is_arg(fe, s, i)) {
        rows_text = l->args[i].text;
        break;
      }
    IrSize *rows = rows_text ? ir_size_parse(ir, rows_text) : NULL;
    // (the grid's text is parsed into the IR only when it names the rows, or it would add a variable)
    bool grid_is_rows = rows && (clang_Cursor_isNull(w.rows) ? rows_text != l->grid.text
                                                             : launch_grid_is_arg(fe, s, az_param_position(&w.az, w.rows)));
    if (rows && !grid_is_rows)
      grid_is_rows = !strchr(l->grid.text, '(') && !strchr(l->grid.text, '{') &&
                     ir_size_equal(rows, ir_size_parse(ir, l->grid.text));
    if (!grid_is_rows)
      az_fail(&w.az, w.az.kernel, "kernel '%s' is row-wise (one block per row), but the launch's grid '%s' is not "
                                  "its row count%s%s%s; coconet runs one block per row of a slice",
              l->kernel, l->grid.text, clang_Cursor_isNull(w.rows) ? "" : " '",
              clang_Cursor_isNull(w.rows) ? "" : rows_text, clang_Cursor_isNull(w.rows) ? "" : "'");
    else
      op = row_op(&w, ir, s, rows);
  }
  // A kernel over threads that fails here may be a pointwise kernel: its rows
  // show only in an access of a row element.
  *rowish = w.group == GROUP_THREAD ? w.row_elements
                                    : w.group == GROUP_WARP || w.ncols > 0 || w.saw_row || !clang_Cursor_isNull(w.row_loop);
  // Refused before its walk reached a row or a column (a cast pointer first: FasterTransformer's
  // `half2 *out_ptr = (half2 *)out;`): a column loop in its body still says it is meant row-wise.
  if (!*rowish && row_failed(&w) && kind(body) == CXCursor_CompoundStmt) {
    void *data[2] = {&w, rowish};
    clang_visitChildren(body, find_column_shape, data);
  }
  if (row_failed(&w)) {
    *why = w.az.why;
    *why_loc = w.az.why_loc;
    return NULL;
  }
  if (op && l->wrapper) az_wrapper_note(ir, l);
  return op;
}

// A variable of the kernel declared before the grid-stride loop over the rows
// (a local, a parameter, __shared__ memory) or __shared__ memory declared in
// it, that the loop's body writes, and reads before its first plain
// assignment there (`carry += 1.0f`, `out[k] = x[k] + acc`): it carries a
// value from one row to the block's next. The schedule runs a block per row,
// so the value would be lost.
typedef struct Carry {
  const Row *w;
  unsigned loop_begin, loop_end;
  CXCursor decls[ROW_MAX];   // variables seen in the body ...
  bool read_first[ROW_MAX];  // ... and whether their first access reads them
  int n;
  CXCursor carried;          // the first such variable written in the body (null: none)
} Carry;

static unsigned cursor_offset(CXCursor c) {
  unsigned off = 0;
  clang_getFileLocation(clang_getRangeStart(clang_getCursorExtent(c)), NULL, NULL, NULL, &off);
  return off;
}

// A variable the loop may carry state in: declared before it, or __shared__.
static bool carry_candidate(const Carry *cy, CXCursor d) {
  enum CXCursorKind k = kind(d);
  if ((k != CXCursor_VarDecl && k != CXCursor_ParmDecl) || same(d, cy->w->row_var)) return false;
  if (!same(clang_getCursorSemanticParent(d), cy->w->az.kernel)) return false;
  unsigned off = cursor_offset(d);
  return az_is_shared(d) || off < cy->loop_begin || off >= cy->loop_end;
}

static void carry_access(Carry *cy, CXCursor d, bool read) {
  for (int i = 0; i < cy->n; i++)
    if (same(cy->decls[i], d)) return;
  if (cy->n == ROW_MAX) return;
  cy->decls[cy->n] = d;
  cy->read_first[cy->n++] = read;
}

static enum CXChildVisitResult carry_child(CXCursor c, CXCursor parent, CXClientData data);

static void carry_walk(Carry *cy, CXCursor c) { clang_visitChildren(c, carry_child, cy); }

// Accesses in evaluation order: a plain assignment's right side before its
// target (`acc = acc + 1` reads acc first).
static enum CXChildVisitResult carry_child(CXCursor c, CXCursor parent, CXClientData data) {
  (void)parent;
  Carry *cy = data;
  CXCursor lhs, rhs;
  char *op = NULL;
  if (az_is_assignment(&cy->w->az, c, &lhs, &rhs, &op)) {
    bool plain = strcmp(op, "=") == 0;
    free(op);
    if (plain) {
      carry_walk(cy, rhs);
      CXCursor target = az_strip(lhs);
      if (kind(target) == CXCursor_ArraySubscriptExpr && kids(target).n == 2) {
        carry_walk(cy, kids(target).v[1]);
        target = az_strip(kids(target).v[0]);
      }
      CXCursor d = kind(target) == CXCursor_DeclRefExpr ? clang_getCursorReferenced(target) : clang_getNullCursor();
      if (!clang_Cursor_isNull(d) && carry_candidate(cy, d)) carry_access(cy, d, false);
      else carry_walk(cy, lhs);
      return CXChildVisit_Continue;
    }
  }
  if (kind(c) == CXCursor_DeclRefExpr) {
    CXCursor d = clang_getCursorReferenced(c);
    if (carry_candidate(cy, d)) carry_access(cy, d, true);
  }
  return CXChildVisit_Recurse;
}

CXCursor row_carried(const Row *w, CXCursor f, CXCursor body) {
  Carry cy = {.w = w, .carried = clang_getNullCursor()};
  cy.loop_begin = cursor_offset(f);
  clang_getFileLocation(clang_getRangeEnd(clang_getCursorExtent(f)), NULL, NULL, NULL, &cy.loop_end);
  carry_walk(&cy, body);
  for (int i = 0; i < cy.n && clang_Cursor_isNull(cy.carried); i++)
    if (cy.read_first[i] && az_writes(&w->az, body, cy.decls[i])) cy.carried = cy.decls[i];
  return cy.carried;
}
