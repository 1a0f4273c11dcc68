// ir_test_util.h: hand-built regions and helpers shared by the IR unit tests.
#ifndef IR_TEST_UTIL_H
#define IR_TEST_UTIL_H

#include "interp/interp.h"
#include "transform/transform.h"

// A location in the test's pretend source file.
SrcLoc L(const char *file, unsigned line, unsigned col);
SrcRange R(const char *file, unsigned line, unsigned col);

// Add clauses parsed from text like "split reorder shard(m, v) overlap(chunks=4)
// schedule(auto) replicated(residual)"; columns count from col.
void add_clauses(IrRegion *r, const char *text, SrcLoc at);

// The data-parallel Adam step of the design (adam.cu:57..60):
//   AllReduce(sum, g) in place, then adam_update(w, g, m, v, n, lr, beta1, beta2, eps, t).
IrRegion *build_adam(IrProgram *p, const char *clauses);
// The Megatron row-parallel linear (megatron.cu:70..74): cublasSgemm(y = w2 * act),
// AllReduce(y), bias_dropout_residual(out, y, bias[i % hidden], residual, Philox).
IrRegion *build_megatron(IrProgram *p, const char *clauses);

// Run f(arg) with stderr captured; returns the text (free it).
char *capture_stderr(void (*f)(void *), void *arg);
// ir_schedule with stderr captured: *out gets the text (free it); returns its result.
int schedule_captured(IrRegion *r, char **out);
// ir_dump into a string (free it).
char *dump_string(const IrRegion *r, bool scheduled);

#endif
