// verify_harness.h: the harness family's own header (verify_harness.c: a
// region's free variables, the region as written and as scheduled, the
// comparison; verify_inputs.c: the values each input gives them).
#ifndef COCONET_VERIFY_HARNESS_H
#define COCONET_VERIFY_HARNESS_H

#include "verify_impl.h"

enum { MAX_HVARS = 256 };

// A variable of the harness: a free variable of the region, or one that a
// free variable's initial value is computed from.
typedef struct HVar {
  CXCursor decl;
  char *name;
  char *type;        // as libclang spells it
  unsigned offset;   // where it is declared (the harness declares them in this order)
  char *init;        // its initializer's text when the harness recomputes it, else NULL
  IrType extra;      // a pointer the IR does not know (a statement coconet does not see
                     // into uses it): the harness gives it a buffer of this type; IR_VOID if none
  int extra_id;      // that buffer's number
  bool object;       // a pointer to a struct or class read only through `->` (`config->comm`):
                     // it points at a value-initialized object whose members the harness sets
  char *alias_of;    // a local reference to another variable (`int &rc = calls;`): that variable
} HVar;

typedef struct Harness {
  const Frontend *fe;
  const Region *fr;
  const IrRegion *r;
  HVar v[MAX_HVARS];
  int n;
  bool overflow;
  bool through_this;  // the region names a member through `this->`
  char *streams[8];   // distinct stream texts, in order
  int nstreams;
  char *events[8];
  int nevents;
  char pointees[16][256];  // pointer members given an object (`ctx.tp` of `ctx.tp->comm`), in order
  int npointees;
} Harness;

// verify_harness.c
// `a`, `a.b`, `a->b.c`: something the harness can assign; *base gets the first name's length.
bool harness_lvalue_chain(const char *t, size_t *base);
// The harness variable an assignable text starts from (NULL: not assignable here).
const HVar *harness_assign_base(const Harness *h, const char *text);
bool harness_is_arith(CXType t);  // a number (bool, an integer, an enum, float or double)

// verify_inputs.c
// Does the IR give v its value (v, or a member of it, is one of the IR's variables or buffers)?
bool harness_set_by_ir(const Harness *h, const HVar *v);
// The path a launcher that picks its kernel at run time takes when the
// schedule runs, and the row lengths it needs (the conjunction of those
// assumes, "true" when none; malloc'd).
char *harness_path_test(const Harness *h);
// The assignments of input `trial` (a case of the harness's switch).
void harness_print_init(Harness *h, FILE *f, int trial, char *const *members);

#endif
