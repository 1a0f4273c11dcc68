// text.c: small helpers on C text and memory (text.h).
#include "common/text.h"

#include <stdlib.h>
#include <string.h>

#include "common/diag.h"

bool text_ident_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

void text_drop(char *out, const char *in, const char *drop) {
  for (; *in; in++)
    if (!strchr(drop, *in)) *out++ = *in;
  *out = '\0';
}

char *text_without(const char *in, const char *drop) {
  char *out = malloc(strlen(in) + 1);
  if (!out) COCONET_BUG("out of memory");
  text_drop(out, in, drop);
  return out;
}

void *xcalloc(size_t n, size_t size) {
  void *p = calloc(n ? n : 1, size);
  if (!p) COCONET_BUG("out of memory");
  return p;
}
