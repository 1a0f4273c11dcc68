// fuzz_pragmas.c: libFuzzer target for pragma_parse.
//
// Any input must parse or fail cleanly (the sanitizers catch memory errors and
// leaks); a parsed pragma must be well formed, and an error must point into
// the input and carry a message.
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pragma.h"

static void check(bool ok) {
  if (!ok) abort();
}

static void check_clause(const PragmaClause *c, size_t size) {
  check(c->name[0] != '\0' && c->offset < size);
  check(c->has_parens == (c->args != NULL));
  unsigned n = 0;
  for (const PragmaArg *a = c->args; a; a = a->next, n++) {
    check(a->text[0] != '\0' && a->offset < size);
    check(!a->key || (a->key[0] != '\0' && a->key_offset < a->offset));
  }
  check(n == c->nargs);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  Pragma *p = NULL;
  PragmaError err;
  if (pragma_parse((const char *)data, size, &p, &err) != 0) {
    check(p == NULL && err.offset <= size);
    check(err.message[0] != '\0' && memchr(err.message, '\0', sizeof err.message));
    return 0;
  }
  check(pragma_directive_name(p->directive) != NULL && p->directive_offset < size);
  for (const PragmaClause *c = p->clauses; c; c = c->next) {
    check_clause(c, size);
    check(pragma_find_clause(p, c->name) == c);
  }
  const PragmaArg *chunks = pragma_find_key(pragma_find_clause(p, "overlap"), "chunks");
  check(!chunks || pragma_arg_int(chunks) > 0);
  pragma_free(p);
  return 0;
}
