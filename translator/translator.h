// translator.h: the map of the coconet translator. It declares nothing: each
// stage's header (STAGE/STAGE.h) is what later stages may use of it, and a
// family's own header (*_impl.h) is used only inside its folder.
//
// The stages, in the order they run. A stage calls only its own files and the
// stages above it: each folder is a static library, linked whole against the
// ones above it alone (translator.mk), so a call into a later stage does not
// link; tests/layout/ checks the includes and this map.
//
// common/     what every stage uses
//   diag.c          clang-style diagnostics (diag.h): file:line:col, the source
//                   line, a caret; error counts; internal errors
//   options.h       the command line as the stages read it (driver/main.c parses it)
//   text.c          identifier characters, text without its blanks, the wrapping of
//                   generated lines at 100 columns, xcalloc (text.h)
//   cuda_names.c    the names of CUDA, NCCL and cuBLAS the stages recognise, as
//                   tables apart from the code that reads them (cuda_names.h)
//
// front/      libclang: the file, its directives and the statements of each region
//   source.c        reading and writing files; the lexical scan that lets
//                   pragma-free files pass through byte for byte without libclang;
//                   whether an expression's text has side effects
//   frontend.c      the CUDA 13 flag set, user flags (-p DIR, after `--`), clang's
//                   errors, the cursor helpers, a file's #include lines as the
//                   parse saw them (frontend_impl.h maps it,
//                   frontend_pch.c, the cache of precompiled include lines and prelude,
//                   and frontend_reparse.c, the main file parsed again)
//   directives.c    every `#pragma coconet` found by tokens, parsed (pragmas/),
//                   attached to the statement that follows, validated
//   classify.c      each statement of a region: NCCL call, kernel launch, cuBLAS
//                   GEMM, async CUDA call, or opaque; exact source ranges for all
//   wrapper.c       a launch or an NCCL collective inside small host functions
//                   (templates too, any depth, in headers too), seen through (wrapper_impl.h maps
//                   it, wrapper_text.c, their texts in the caller's terms, wrapper_pure.c,
//                   what a text runs that it does not show, wrapper_dispatch.c, a
//                   launcher that picks its kernel at run time, wrapper_beside.c,
//                   what a function runs besides its collective, for a copy, and a
//                   statement that only checks for errors, and wrapper_nccl.c,
//                   the collective a chain ends in)
//   macro.c         a macro's definition read from its tokens: pure function-like
//                   macros (CEIL_DIV), the ceiling-division form of a grid macro
//   instantiate.c   kernel templates: an instance parse with a copy of each
//                   launched template as a plain function of its arguments
//   instance_region.c  a region in a template whose statements depend on its
//                   parameters: a parse per instance the file makes, the
//                   template's head bound in place (same offsets)
//   places.c        where generated text goes: above the declaration that holds
//                   a region, or beside its function inside its namespaces; the
//                   runtime's #include after the file's own
//   edit.c          byte-range edits of the file and the text they make
//
// ir/         the IR (ir.h maps it): objects and builders (ir.c, ir_expr.c,
//             ir_op.c), versions and layouts (ir_infer.c), --dump=ir
//             (ir_print.c), the cost model (cost.c), --emit-dot (dot.c)
//
// analyze/    from the front end's regions to the IR (analyze.h)
//   extract.c       each statement of a region becomes an op, in source order
//                   (assume.c: the schedule's run-time preconditions)
//   effects.c       arguments with side effects, evaluated once in the order
//                   written (call_changes.c: what the functions they call change)
//   beside.c        what a host function seen through runs besides its
//                   collective, checked for the schedule's copy of it
//   coverage.c      whether a launch gives every element of its count a thread
//   analyze*.c      a launch's kernel as a pointwise op (a multi-tensor launch's
//                   slices: analyze_slice.c; an element loop in a helper the
//                   kernel calls: analyze_helper.c) or as a row-wise one
//                   (analyze_row.c, analyze_row_index.c, analyze_row_op.c,
//                   analyze_place.c); whether
//                   a row-wise kernel can be copied (analyze_copy.c, for fuse);
//                   analyze_impl.h maps them
//
// transform/  the schedule (transform.h; transform_impl.h maps the files)
//   schedule.c      ir_schedule: error checks after the kernels that follow
//                   them, the clauses in the order written, the information
//                   clauses, the final checks, --explain
//   legal.c         what every schedule needs first
//   split.c reorder.c fuse.c overlap.c auto.c pipeline.c
//                   one file per transformation, named for its clause
//                   (pipeline runs last, from the final checks)
//
// interp/     the reference interpreter for N simulated ranks and --verify=ir
//             (interp.h; interp_impl.h maps interp.c, interp_coll.c,
//             interp_eval.c, interp_verify.c)
//
// codegen/    scheduled regions become CUDA or host text (codegen.h;
//             codegen_impl.h maps codegen*.c: codegen_region.c the block as a
//             whole, codegen.c its ops, codegen_kernel.c generated kernels, ...;
//             codegen_kernel_impl.h maps codegen_kernel.c, codegen_kernel_fused.c
//             and codegen_text.c, the kernels' own text for an element);
//             host.c lowers the file's launches and dynamic shared memory for
//             the host backend (--target=host), host_include.c the user's
//             headers that need it, in place of their #include
//
// output/     what is written (output.h)
//   rewrite.c       the commented pragma and the marker comments around the edits
//   symmetric.c     `#pragma coconet symmetric`: the file's allocations and frees
//   diff.c          --diff
//   json.c          --dump=json (schema: docs/dump-json.md)
//
// driver/     the command line and the steps in order
//   main.c          options, exit codes, the stages run in order
//   instances.c     a region read per instance: each scheduled and generated on
//                   its own parse, the region an `if constexpr` choosing among them
//   verify_exec.c   --verify: the region as written and as scheduled, run on
//                   the host backend by a generated harness, compared (driver.h;
//                   verify_impl.h maps it, verify_harness.c, the harness's text
//                   (verify_harness.h maps it, verify_inputs.c, its inputs),
//                   verify_globals.c, the file's variables set back between the runs,
//                   verify_members.c, the struct members that hold the rank count or rank, and
//                   verify_cache.c, COCONET_VERIFY_CACHE: a test run's memo of harness runs)
//
// cc/         coconet-cc, the nvcc drop-in: runs coconet, then nvcc or the host
//             compiler (a program of its own, without libclang)
#ifndef COCONET_TRANSLATOR_H
#define COCONET_TRANSLATOR_H
#endif
