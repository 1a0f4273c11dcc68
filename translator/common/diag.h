// diag.h: the one diagnostics path of the translator (clang-style messages).
//
// Every stage reports problems through diag_error/diag_warning/diag_note with a
// source location; the message is printed as clang prints its own:
//
//     file.cu:12:5: error: reorder: kernel 'k' reads g[i + 1]; ...
//         k<<<b, 256, 0, s>>>(g, n);
//         ^
//
// Source lines for the caret come from buffers registered with diag_add_file
// (the front end registers every file it reads). Errors are counted so the
// driver can decide its exit status and never write output after an error.
#ifndef COCONET_DIAG_H
#define COCONET_DIAG_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

// A point in a source file. offset is the byte offset in the file (the
// rewriter edits by offsets); line and col are 1-based, col counts bytes.
typedef struct SrcLoc {
  const char *file;  // path as given on the command line or by #include; NULL = no location
  unsigned line;
  unsigned col;
  unsigned offset;
} SrcLoc;

// A half-open byte range [begin.offset, end.offset) in one file.
typedef struct SrcRange {
  SrcLoc begin;
  SrcLoc end;
} SrcRange;

// Register a file's contents (not copied; must outlive the diagnostics).
void diag_add_file(const char *path, const char *buf, size_t len);

// Report at a location; loc may be NULL or have file == NULL (no caret then).
void diag_error(const SrcLoc *loc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void diag_warning(const SrcLoc *loc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void diag_note(const SrcLoc *loc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
// Print the source line of loc and a caret under its column (files registered
// with diag_add_file only).
void diag_print_source(const SrcLoc *loc);
void diag_vreport(const char *kind, const SrcLoc *loc, const char *fmt, va_list ap);

// An internal error is a bug in coconet: it says so, how to report it, and exits 3.
_Noreturn void diag_internal(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
#define COCONET_BUG(...) diag_internal(__FILE__, __LINE__, __VA_ARGS__)

// A malloc'd printf: running out of memory is an internal error.
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

unsigned diag_error_count(void);
// Muted (on: from now, afresh): reports are neither printed nor counted; the
// muted errors are counted apart and the first one's message kept (a trial the
// driver makes and drops).
void diag_mute(bool on);
unsigned diag_muted_errors(void);
const char *diag_muted_first(void);  // NULL when none
void diag_reset(void);  // forget counts and files (unit tests)

#endif
