// output.h: what the driver writes: the commented pragma and marker comments
// around the edits (rewrite.c), symmetric memory's edits (symmetric.c), --diff
// (diff.c) and --dump=json (json.c).
#ifndef COCONET_OUTPUT_H
#define COCONET_OUTPUT_H

#include <stdio.h>

#include "front/front.h"

//
// rewrite.c: the commented pragma, the marker comments, a line's indentation
//

// What replaces a region's pragma, range [begin, end): the pragma as a line
// comment, continuation lines joined, marked "(translated by coconet)"; a
// block comment that the pragma line opens and does not close goes on from
// the next line.
char *rewrite_pragma_comment(const SourceFile *src, SrcRange pragma);
// The marker comments of generated code: a file that has one was written by
// coconet. Returns its offset, or -1 when there is none.
long rewrite_find_translated(const char *buf, size_t len);
// The whitespace that starts the line holding offset (malloc'd).
char *rewrite_line_indent(const SourceFile *src, unsigned offset);
// The one #include of coconet's runtime header (coconet.h or coconet_fused.h)
// that the generated code from offset `before` on needs: after the file's last
// #include before it (place_include), else above the declaration at `before`.
// It goes before any other text inserted at the same offset later.
void rewrite_runtime_include(const Frontend *fe, Edit **edits, const char *header, unsigned before);

//
// symmetric.c: `#pragma coconet symmetric`
//

// The annotated cudaMalloc calls become coconet_symmetric_malloc, every
// cudaFree and ncclCommDestroy call of the main file coconet_free and
// coconet_comm_destroy, which <coconet_fused.h> declares: *first gets where
// the declaration holding the first of them starts (it needs the header);
// nothing when the file has no symmetric directive. -1 after reporting errors.
int symmetric_edits(const Frontend *fe, const Program *prog, Edit **edits, unsigned *first);

//
// diff.c: --diff
//

// Write a unified diff (3 lines of context) that turns a into b, headed
// "--- old_path" and "+++ new_path", as `patch -p0` applies it; nothing when
// a and b are equal. Returns 0, or -1 after reporting a write error.
int diff_write(FILE *out, const char *old_path, const char *new_path, const char *a, size_t alen, const char *b,
               size_t blen);

//
// json.c
//

// Write --dump=json for the program (schema in docs/dump-json.md).
int json_dump(FILE *out, const Frontend *fe, const Program *prog);

#endif
