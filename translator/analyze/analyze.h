// analyze.h: from the front end's regions to the IR (ir/ir.h): extract.c
// turns each statement of a region into an op (assume.c, its run-time
// preconditions), coverage.c proves a launch
// gives every element a thread, analyze*.c read a launch's kernel as a
// pointwise op or a row-wise one (analyze_impl.h is their own map).
#ifndef COCONET_ANALYZE_H
#define COCONET_ANALYZE_H

#include "front/front.h"
#include "ir/ir.h"

// Build the IR of every region of the program into ir. Statements become IR
// ops; a launch whose kernel cannot be proven pointwise becomes an opaque op,
// and is an error (with the reason) when scheduling and the region's schedule
// needs it. Returns -1 after reporting errors.
int extract_program(const Frontend *fe, const Program *prog, IrProgram *ir, bool scheduling);

// assume.c, for extract.c: the schedule's precondition for a launch whose
// launcher picks its kernel at run time (Launch.when), and --explain's notes on
// the kernels the schedule is not for; 0, or -1 with the reason reported when a
// statement of region r that coconet does not see into could change what a
// precondition reads first.
void extract_launch_paths(const Frontend *fe, IrRegion *ir, const Stmt *s);
int extract_check_assumptions(const Frontend *fe, const Region *r, const IrRegion *ir);

// effects.c: the arguments with side effects of a scheduled region's statements,
// evaluated once at the top of the generated block in the order written (ir->hoists),
// with the kernel arguments before them that read what they change; 0, or -1 with
// the reason reported where that would change the program. Their names,
// coconet_argN, are none of fe_names_in_use.
int extract_hoist_effects(const Frontend *fe, const Region *r, IrRegion *ir);
bool extract_stmt_has_effects(const Stmt *s);  // an argument it evaluates has side effects
// An error check using a singleton's static local (Stmt.check_through, `getLogger`): another
// statement of r that calls that function too (`scale<<<...>>>(x, config().alpha, n)`), or NULL.
const Stmt *extract_check_reached(const Frontend *fe, const Region *r, const Stmt *check, char *name, size_t size);
// s is an error check (Stmt.error_check) no other statement of r reaches the state of.
bool extract_is_check(const Frontend *fe, const Region *r, const Stmt *s);

// beside.c: what a host function seen through runs besides its collective (s->beside),
// for the schedule's copy of it above r's function; NULL, reported, when the copy
// could mean something else there (NULL too when s has none).
const IrBeside *extract_beside(const Frontend *fe, const Region *r, IrRegion *ir, const Stmt *s);

// call_changes.c: what the calls of an argument's text may change, read in the
// bodies of the functions they call (and the bodies those call): variables
// assigned by name, memory through a pointer, a reference or `this` (which may
// be any variable of the file or whose address escaped), or anything (a call
// coconet cannot see into).
typedef struct CallChanges CallChanges;
CallChanges *call_changes(const Frontend *fe, const Piece *p);
// The same for a statement, its own assignments too (`rm = 1 - rm;` through a reference).
CallChanges *call_changes_stmt(const Frontend *fe, CXCursor stmt);
// The first thing reader's text reads (or a function it calls reads) that those
// calls may change (its text written into buf), with where the change is (*at), or NULL.
const char *call_changes_read(const CallChanges *cc, const Piece *reader, char *buf, size_t size, SrcLoc *at);
// The same for the variables the calls assign by name only (a global count), not what they may
// change through a pointer, a reference or a call coconet cannot see into.
const char *call_changes_read_named(const CallChanges *cc, const Piece *reader, char *buf, size_t size, SrcLoc *at);
// When the change call_changes_read found at `at` is a call coconet cannot see
// into: *why not, and its function (NULL: a call through a pointer); else *why NULL.
const char *call_changes_unseen(const CallChanges *cc, SrcLoc at, const char **why);
// Whether the text calls what it does not show as a call: through a pointer
// (`(*fp)(x)`, `(obj.*pm)()`), an operator of a class (`g_sched + 1`), a class's
// conversion or copy: a side effect, evaluated once.
bool call_changes_hidden(const CallChanges *cc);
// Whether the text is one object of a class of the user's with a conversion or
// a constructor of its own (`g_conv`, passed to a float parameter).
bool call_changes_class_value(const CallChanges *cc);
// Whether every call of the text was read with its parameters' types: then what
// it is passed by a non-const reference is among what it changes (else the
// text's arguments are taken to be passed by reference).
bool call_changes_args_read(const CallChanges *cc);
void call_changes_free(CallChanges *cc);

// The size a count argument stands for: its text, or for a local never
// assigned after its initializer, a product of names and literals, that product.
const char *extract_size_text(const Frontend *fe, IrRegion *ir, const Piece *p);

// coverage.c: a guarded (not grid-stride) kernel computes only the elements
// that have a thread. True when grid.x * block.x >= the kernel's bound (the
// element loop's `i < BOUND`, its parameters bound to the launch arguments)
// is proven from the launch configuration (the forms are listed in
// coverage.c); else *why (malloc'd) says so, quoting the launch and count (the
// bound in the launch's terms). kfe and kernel: the kernel's front end and
// definition (a template's instance, instantiate.c), where bound is.
bool launch_covers(const Frontend *fe, const Stmt *s, const Frontend *kfe, CXCursor kernel, CXCursor bound,
                   const char *count, char **why);
// The launch's grid.x is its kernel argument arg (a row-wise kernel's row
// count): the same expression, also through locals never assigned after their
// initializer and dim3(...) (`dim3 grid(num_tokens); k<<<grid, ...>>>(..., num_tokens)`),
// its y and z 1.
bool launch_grid_is_arg(const Frontend *fe, const Stmt *s, int arg);
// The launch's grid and block are one-dimensional (no dim3 with a y or z other than 1).
bool launch_is_1d(const Frontend *fe, const Stmt *s);
// ... its block is.
bool launch_block_is_1d(const Frontend *fe, const Stmt *s);
// blockDim.x of a launch when it is a constant (`256`, `dim3(kBlock)`), else 0.
long long launch_block_x(const Frontend *fe, const Stmt *s);
// A variable or parameter that keeps its value through its function: const,
// or never assigned, ++/--'d, its address taken or passed by non-const
// reference after its initializer (`int n = rows * cols;`).
bool never_assigned(const Frontend *fe, CXCursor decl);
// An integer type (bool and the character types too); one of 32 bits or more, which holds
// any count a collective or launch passes (a uint8_t holds it modulo 256).
bool integer_type(CXType t);
bool wide_integer_type(CXType t);
// decl may be assigned at or after offset of its file (a global, or a local of another function: true).
bool assigned_after(const Frontend *fe, CXCursor decl, unsigned offset);
// Argument i of the kernel call of a launch (in a wrapper seen through, as written there); null if none.
CXCursor launch_argument(const Launch *l, int i);


// Analyze a launch statement's kernel. Returns its pointwise op, appended to
// ir, or NULL with *why (malloc'd) and *why_loc saying what could not be proven.
IrOp *analyze_launch(const Frontend *fe, IrRegion *ir, const Stmt *s, const Program *prog,
                     char **why, SrcLoc *why_loc);
// analyze_row.c: a launch that is not pointwise as a row-wise op (one block,
// warp or thread per row, the kernel kept as written; IrPointwise.row), or NULL
// with the reason.
// *rowish says whether the kernel has the shape of one (a column loop), so
// that its reason is the one to report.
IrOp *analyze_rowwise(const Frontend *fe, IrRegion *ir, const Stmt *s, bool *rowish, char **why, SrcLoc *why_loc);
// analyze_copy.c: why the row-wise kernel that launch s calls cannot be
// copied into a fused kernel (malloc'd; *loc says where), or NULL when it can.
char *rows_copy_why(const Frontend *fe, const Stmt *s, SrcLoc *loc);

#endif
