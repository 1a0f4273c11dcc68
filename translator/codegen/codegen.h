// codegen.h: scheduled IR regions become CUDA (or host) text, and host.c
// lowers the file's launches for the host backend (codegen_impl.h maps the
// files).
#ifndef COCONET_CODEGEN_H
#define COCONET_CODEGEN_H

#include "front/front.h"
#include "ir/ir.h"

//
// codegen.c: scheduled IR regions become CUDA (or host) text (codegen_kernel.c:
// generated kernels from IR expressions, codegen_fused.c: the call sites of
// fused kernels, codegen_rows.c: fused kernels of row-wise kernels, which
// copy their bodies, codegen_comment.c: the schedule comment, codegen_expr.c:
// expressions; their private header is codegen_impl.h). What the text calls at run
// time is runtime/include/coconet.h.
//

// What replaces one region in the output, and what goes before its function.
typedef struct RegionCode {
  char *body;     // replaces the region's statement (Region.range); the
                  // pragma line is kept, commented, by the rewriter
  char *kernels;  // generated __global__ kernels and helpers, inserted before
                  // the enclosing function (Region.function_start), between
                  // marker comments; NULL when none
  unsigned kernels_at;  // where: the start of the top-level declaration that
                        // holds the region, above the comment lines on top of it
  char *late;           // generated code that names members of the namespace of the
                        // region's function (the fused kernel of row-wise kernels
                        // copies them): inserted at late_at, before that function,
                        // inside its namespace; NULL when none
  unsigned late_at;
  const char *runtime;  // the runtime header the generated code needs ("coconet.h",
                        // "coconet_fused.h"; NULL: none), included once per file by
                        // the driver (rewrite_runtime_include)
} RegionCode;

// The C++ type the generated code writes for an IR type ("float", "__half", "int64_t").
const char *codegen_ctype(IrType t);

// Generate the code of one scheduled region (r->sched; r->ops when
// --schedule=none). indent is the indentation of the region's first line.
// Returns -1 after reporting an error.
int codegen_region(const Frontend *fe, const Region *fr, const IrRegion *r, Target target,
                   const char *indent, RegionCode *out);
void region_code_free(RegionCode *c);
// --explain: what code generation does with fuse groups (a fused kernel with
// the NCCL path as fallback; AllReduce groups unfused, their call sites marked).
void codegen_explain(FILE *f, const IrRegion *r);

//
// host.c: --target=host, the launches and dynamic shared memory of the whole file
//

// Add the edits that lower the main file for the CPU backend (runtime/host):
// every kernel<<<grid, block[, shmem[, stream]]>>>(args) becomes
// coconet_host_launch(FLAGS, kernel, grid, block, shmem or 0, stream or 0, args),
// FLAGS = COCONET_HOST_SIMPLE when the kernel and everything it calls provably
// use no barrier or warp collective, else COCONET_HOST_SYNC; and every
// `extern __shared__ T name[];` becomes `T *name = (T *)coconet_host_dynamic_shared();`.
// A launch written in a macro's body is lowered in the #define (FLAGS then
// COCONET_HOST_SYNC: its uses may launch different kernels). Launches and declarations inside a range already edited (a region the code
// generator replaced) are left to that edit. A header of the user's that needs
// the same has its #include replaced by its lowered text between #line
// directives (host_include.c). Returns -1 after reporting errors.
int host_lower(const Frontend *fe, Edit **edits);
// The same inside cursor c only (a kernel body that code generation copies, also
// from a header; a statement kept as written), in the file c is written in,
// edits at that file's offsets: a launch in a macro's body is left to the
// file's lowering of the #define.
int host_lower_in(const Frontend *fe, CXCursor c, Edit **edits);

#endif
