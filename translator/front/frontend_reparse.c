// frontend_reparse.c: the main file parsed again with base's flags: with the
// copies of templates appended (instantiate.c's instance parse), or with bytes
// changed in place (instance_region.c's shadows).
#include "front/frontend_impl.h"

#include "common/text.h"

#include <stdlib.h>
#include <string.h>

// The appended parse keeps its macro expansions, as the main parse does: a kernel
// template's copy is read there (macros in its text are told from names by them),
// with or without the precompiled prelude (whose record it would otherwise inherit).
enum { APPENDED_PARSE = CXTranslationUnit_DetailedPreprocessingRecord };

enum CXErrorCode frontend_parse_text(const Frontend *base, const char *text, size_t len, Frontend *out) {
  char *const *flags = out->nargs ? out->args : base->args;
  int nargs = out->nargs ? out->nargs : base->nargs;
  char **args = xcalloc((size_t)nargs + 1, sizeof *args);
  memcpy(args, flags, sizeof *args * (size_t)nargs);
  out->index = clang_createIndex(0, 0);
  struct CXUnsavedFile unsaved = {base->src.path, text, (unsigned long)len};
  enum CXErrorCode err = clang_parseTranslationUnit2(out->index, base->src.path, (const char *const *)args, nargs,
                                                     &unsaved, 1, APPENDED_PARSE, &out->tu);
  // The precompiled prelude the base parse used may be gone since (another coconet's cache evicted it):
  // once more with the prelude itself.
  for (int i = 0; err != CXError_Success && base->tmpdir && i + 1 < nargs; i++) {
    if (strcmp(args[i], "-include-pch") != 0) continue;
    char *prelude = xasprintf("%s/coconet_prelude.h", base->tmpdir);
    args[i] = "-include";
    args[i + 1] = prelude;
    if (out->tu) clang_disposeTranslationUnit(out->tu);
    out->tu = NULL;
    err = clang_parseTranslationUnit2(out->index, base->src.path, (const char *const *)args, nargs, &unsaved, 1,
                                      APPENDED_PARSE, &out->tu);
    free(prelude);
    break;
  }
  free(args);
  if (err == CXError_Success && !out->tu) err = CXError_Failure;
  if (err == CXError_Success) out->file = clang_getFile(out->tu, base->src.path);
  return err;
}

int frontend_parse_appended(const Frontend *base, const char *extra, FeCopy *copies, int ncopies, Frontend *out,
                            char **error) {
  memset(out, 0, sizeof *out);
  out->src = base->src;
  out->copies = copies;
  out->ncopies = ncopies;
  *error = NULL;
  size_t n = strlen(extra);
  char *text = malloc(base->src.len + n + 1);
  if (!text) COCONET_BUG("out of memory");
  memcpy(text, base->src.buf, base->src.len);
  memcpy(text + base->src.len, extra, n + 1);
  enum CXErrorCode err = frontend_parse_text(base, text, base->src.len + n, out);
  free(text);
  if (err != CXError_Success) {
    if (asprintf(error, "libclang could not parse it (error %d)", err) < 0) COCONET_BUG("out of memory");
    return -1;
  }
  // The main file's own bytes parsed in base (a shadow's errors outside the region are not the copies').
  unsigned nd = clang_getNumDiagnostics(out->tu);
  for (unsigned i = 0; i < nd && !*error; i++) {
    CXDiagnostic d = clang_getDiagnostic(out->tu, i);
    CXFile file;
    unsigned offset;
    clang_getFileLocation(clang_getDiagnosticLocation(d), &file, NULL, NULL, &offset);
    bool before = file && clang_File_isEqual(file, out->file) && offset < base->src.len;
    if (clang_getDiagnosticSeverity(d) >= CXDiagnostic_Error && !before) {
      CXString s = clang_getDiagnosticSpelling(d);
      *error = strdup(clang_getCString(s));
      clang_disposeString(s);
    }
    clang_disposeDiagnostic(d);
  }
  return *error ? -1 : 0;
}
