// frontend_impl.h: the front end's libclang parse, private to its three files (its
// public side is front.h's frontend_* and fe_*).
//   frontend.c      the CUDA 13 flag set, the prelude and stand-in files (TMP),
//                   -p DIR, clang's errors, the cursor helpers
//   frontend_pch.c  the cache: the stand-in files and the precompiled preludes
//   frontend_reparse.c  the main file parsed again with the same flags: with
//                   copies appended, or with bytes changed in place
#ifndef COCONET_FRONTEND_IMPL_H
#define COCONET_FRONTEND_IMPL_H

#include "front/front.h"

// frontend.c

// A growing list of flags, each its own copy.
typedef struct Args {
  char **v;
  int n, cap;
} Args;
void fe_args_add(Args *a, const char *s);
void fe_args_free(Args *a);

// The files the parse finds in TMP: the prelude and the stand-ins.
typedef struct FeTmpFile {
  const char *name, *text;
} FeTmpFile;
extern const FeTmpFile FE_TMP_FILES[];
extern const size_t FE_NTMP_FILES;

// Parse fe->src (its bytes as read) with flags a into fe->tu.
enum CXErrorCode fe_parse_main(Frontend *fe, const Args *a);

// frontend_pch.c

// The cache directory, made when missing; NULL with COCONET_CACHE=off or none writable.
char *pch_cache_dir(void);
// CACHE/standins-HASH with the TMP files (written when missing), or NULL.
char *pch_standins(const char *cache);
// Parse fe with the precompiled prelude in place of the flags' -include PRELUDE
// (at `at`), built when missing; false (nothing kept) when there is none or its
// parse has an error: then parse without it.
bool pch_parse(Frontend *fe, Args *all, int at, const char *cache);
// Forget the headers pch_parse recorded in fe (fe->pch_deps).
void pch_forget_deps(Frontend *fe);

#endif
