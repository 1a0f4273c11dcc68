// codegen_buf.c: the text buffer and the small naming helpers of codegen.
#include "codegen_impl.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void buf_reserve(Buf *b, size_t extra) {
  if (b->len + extra + 1 <= b->cap) return;
  size_t cap = b->cap ? b->cap : 256;
  while (cap < b->len + extra + 1) cap *= 2;
  b->s = realloc(b->s, cap);
  if (!b->s) COCONET_BUG("out of memory");
  b->cap = cap;
}

void buf_puts(Buf *b, const char *s) {
  size_t n = strlen(s);
  buf_reserve(b, n);
  memcpy(b->s + b->len, s, n + 1);
  b->len += n;
}

void buf_printf(Buf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0) COCONET_BUG("bad format '%s'", fmt);
  buf_reserve(b, (size_t)n);
  va_start(ap, fmt);
  vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
  va_end(ap);
  b->len += (size_t)n;
}

const char *buf_str(const Buf *b) { return b->s ? b->s : ""; }

char *buf_take(Buf *b) {
  char *s = b->s ? b->s : strdup("");
  if (!s) COCONET_BUG("out of memory");
  *b = (Buf){0};
  return s;
}

void buf_free(Buf *b) {
  free(b->s);
  *b = (Buf){0};
}

static bool names_has(const Names *ns, const char *name) {
  for (int i = 0; i < ns->n; i++)
    if (strcmp(ns->v[i], name) == 0) return true;
  return ns->spelled && text_has_ident(ns->spelled, name);
}

const char *names_add(Names *ns, const char *want) {
  if (ns->n == NAMES_MAX) COCONET_BUG("more than %d names in one generated scope", NAMES_MAX);
  char *name = NULL;
  if (names_has(ns, want)) {
    for (int k = 2; !name; k++) {
      if (asprintf(&name, "%s_%d", want, k) < 0) COCONET_BUG("out of memory");
      if (names_has(ns, name)) {
        free(name);
        name = NULL;
      }
    }
  } else if (!(name = strdup(want))) {
    COCONET_BUG("out of memory");
  }
  ns->v[ns->n++] = name;
  return name;
}

void names_free(Names *ns) {
  for (int i = 0; i < ns->n; i++) free(ns->v[i]);
  ns->n = 0;
}

const char *codegen_ctype(IrType t) {
  switch (t) {
  case IR_F32: return "float";
  case IR_F16: return "__half";
  case IR_BF16: return "__nv_bfloat16";
  case IR_F64: return "double";
  case IR_I32: return "int";
  case IR_I64: return "int64_t";
  case IR_U32: return "unsigned int";
  case IR_U8: return "uint8_t";  // one word: T{} and T(x) are C++
  case IR_I8: return "int8_t";
  case IR_BOOL: return "bool";
  case IR_VOID: break;
  }
  COCONET_BUG("no C++ type for IR type %d", (int)t);
}

const char *cg_coconet_red(IrRedOp op) {
  static const char *names[] = {"COCONET_SUM", "COCONET_SUM", "COCONET_PROD", "COCONET_MAX", "COCONET_MIN", "COCONET_AVG"};
  return names[op];
}

const char *cg_nccl_red(IrRedOp op) {
  static const char *names[] = {"ncclSum", "ncclSum", "ncclProd", "ncclMax", "ncclMin", "ncclAvg"};
  return names[op];
}

bool cg_simple(const char *text) {
  if (!*text || isdigit((unsigned char)*text)) return false;
  for (const char *p = text; *p; p++) {
    if (isalnum((unsigned char)*p) || *p == '_' || *p == '.') continue;
    if (p[0] == '-' && p[1] == '>') {
      p++;
      continue;
    }
    return false;
  }
  return true;
}

static bool is_number(const char *text) {
  for (const char *p = text; *p; p++)
    if (!isdigit((unsigned char)*p)) return false;
  return *text != '\0';
}

static void size_factor(Buf *b, const IrSize *s, bool first) {
  switch (s->kind) {
  case IR_SIZE_CONST: buf_printf(b, first ? "(size_t)%ld" : "%ld", s->value); return;
  case IR_SIZE_VAR: {
    const char *t = s->var->text;
    const char *cast = first && !is_number(t) ? "(size_t)" : "";
    buf_printf(b, cg_simple(t) || is_number(t) ? "%s%s" : "%s(%s)", cast, t);
    return;
  }
  case IR_SIZE_MUL:
    size_factor(b, s->lhs, first);
    buf_puts(b, " * ");
    size_factor(b, s->rhs, false);
    return;
  }
}

void cg_size(Buf *b, const IrSize *s) {
  if (s->kind != IR_SIZE_MUL) {
    size_factor(b, s, false);
    return;
  }
  size_factor(b, s, true);
}

char *buf_take_wrapped(Buf *b, size_t from) {
  char *text = buf_take(b);
  if (!text) return NULL;
  char *wrapped = text_wrap(text + from, CG_WIDTH);
  char *out = xasprintf("%.*s%s", (int)from, text, wrapped);
  free(text);
  free(wrapped);
  return out;
}

void buf_wrap_tail(Buf *b, size_t from) {
  char *text = buf_take_wrapped(b, from);
  if (text) buf_puts(b, text);
  free(text);
}

void cg_reindented(Buf *b, const char *text, const char *unit) {
  size_t common = (size_t)-1;
  for (const char *l = text; *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : l + strlen(l)) {
    size_t lead = strspn(l, " "), n = strcspn(l, "\n");
    if (lead < n && lead < common) common = lead;
  }
  for (const char *l = text; *l;) {
    size_t n = strcspn(l, "\n");
    if (strspn(l, " ") < n) buf_printf(b, "%s%.*s\n", unit, (int)(n - common), l + common);
    else if (n) buf_puts(b, "\n");
    l += n + (l[n] == '\n');
  }
}
