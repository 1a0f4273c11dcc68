// codegen_text.c: the user's own text for one element of an op (IrText, made by
// analyze_text.c) as a __device__ function the element function calls, so that
// the scheduled program computes each element with the kernel as written:
//
//   // coconet: element i of adam_update (adam.cu:158), the kernel's own text (adam.cu:116)
//   __device__ __forceinline__ void coconet_adam_step_slice_adam_update(float &w, const float &g,
//       ..., float grad_scale, ...)
//   {
//       const float grad = g * grad_scale;
//       ...
//   }
//
// Its parameters are the kernel's, as the kernel declares and names them: a
// buffer the element function holds as element i is a reference to it (the
// text's `g[i]` becomes `g`), one it holds as a pointer is the kernel's
// pointer (the text indexes it as written, i being the element's absolute
// index), scalars and the element index as declared. The text's lines keep
// their indentation relative to each other. A template's text goes in a
// namespace of the function's name that declares the template's parameters as
// the launch's arguments (`typedef float T;`), as in the instance coconet read;
// a kernel's namespaces are reopened around its text, so that its names
// resolve as in the kernel.
#include "codegen_kernel_impl.h"
#include "common/text.h"

#include <stdlib.h>
#include <string.h>

static int by_at(const void *a, const void *b) {
  const IrTextEdit *x = a, *y = b;
  return x->at < y->at ? -1 : x->at > y->at;
}

// Does the text take the element index first, not having it among its parameters? (A
// buffer whose t[i] it edits held as a pointer keeps t[i] as written, i the element's.)
static bool index_first(const IrText *t, const TextArg *args) {
  for (int e = 0; t->index_decl && e < t->nedits; e++) {
    int p = t->edits[e].param;
    if (p >= 0 && t->params[p].tensor && !args[p].element) return true;
  }
  return false;
}

static void params(Buf *b, const IrText *t, const TextArg *args) {
  bool first = index_first(t, args);
  if (first) buf_puts(b, t->index_decl);
  for (int i = 0; i < t->nparams; i++) {
    const IrTextParam *tp = &t->params[i];
    if (i || first) buf_puts(b, ", ");
    if (tp->tensor && args[i].element) {
      buf_printf(b, "%s &%s", tp->elem, tp->name);
    } else if (tp->tensor) {
      size_t n = strlen(tp->decl);
      buf_printf(b, "%s%s%s", tp->decl, n && tp->decl[n - 1] == '*' ? "" : " ", tp->name);
    } else {
      buf_puts(b, tp->decl);
    }
  }
}

// The body with its edits made (a buffer passed as its element named bare).
static char *edited(const IrText *t, const TextArg *args) {
  IrTextEdit *ed = malloc(sizeof *ed * (size_t)(t->nedits + 1));
  if (!ed) COCONET_BUG("out of memory");
  memcpy(ed, t->edits, sizeof *ed * (size_t)t->nedits);
  qsort(ed, (size_t)t->nedits, sizeof *ed, by_at);
  Buf out = {0};
  size_t at = 0, len = strlen(t->body);
  for (int i = 0; i < t->nedits; i++) {
    const char *repl = ed[i].param >= 0 ? (args[ed[i].param].element ? t->params[ed[i].param].name : NULL)
                                        : ed[i].repl;
    if (!repl || ed[i].at < at || ed[i].at + ed[i].len > len) continue;
    buf_printf(&out, "%.*s%s", (int)(ed[i].at - at), t->body + at, repl);
    at = ed[i].at + ed[i].len;
  }
  buf_puts(&out, t->body + at);
  free(ed);
  return buf_take(&out);
}

void text_function(Buf *b, const char *name, const IrOp *op, const TextArg *args, const char *unit, bool beside) {
  const IrText *t = op->pw.text;
  buf_printf(b, "// coconet: element i of %s (%s:%u), the kernel's own text (%s:%u)%s\n", op->pw.kernel,
             text_base_name(op->loc.file), op->loc.line, text_base_name(t->loc.file), t->loc.line,
             t->scope ? " under its template's arguments" : "");
  if (!beside) buf_puts(b, t->ns_open);
  if (t->scope) {
    // Integer arguments the text may not use are declared [[maybe_unused]] (nvcc warns of them).
    buf_printf(b, "namespace %s {\n", name);
    for (const char *l = t->scope; *l;) {
      size_t n = strcspn(l, "\n");
      buf_printf(b, "%s%.*s\n", strncmp(l, "constexpr ", 10) == 0 ? "[[maybe_unused]] " : "", (int)n, l);
      l += n + (l[n] == '\n');
    }
  }
  buf_printf(b, "__device__ __forceinline__ void %s(", t->scope ? "element" : name);
  params(b, t, args);
  buf_puts(b, ")\n{\n");
  char *body = edited(t, args);
  cg_reindented(b, body, unit);
  free(body);
  buf_puts(b, "}\n");
  if (t->scope) buf_printf(b, "}  // namespace %s\n", name);
  if (!beside) buf_puts(b, t->ns_close);
  buf_puts(b, "\n");
}

// Is type `elem` ("Tg", "const Tg") a template parameter the scope declares
// (`typedef float Tg;`)? Outside the namespace that declares it, it is named
// through that namespace.
static bool scope_type(const IrText *t, const char *elem) {
  if (!t->scope) return false;
  if (strncmp(elem, "const ", 6) == 0) elem += 6;
  size_t n = strlen(elem);
  for (const char *l = t->scope; *l;) {
    size_t len = strcspn(l, "\n");
    if (strncmp(l, "typedef ", 8) == 0 && len > n + 1 && l[len - 1] == ';' && strncmp(l + len - 1 - n, elem, n) == 0 &&
        l[len - 2 - n] == ' ')
      return true;
    l += len + (l[len] == '\n');
  }
  return false;
}

void text_call(Buf *b, const char *name, const IrOp *op, const TextArg *args, const char *unit, bool beside) {
  const IrText *t = op->pw.text;
  buf_printf(b, "%s%s%s%s(", unit, beside ? "" : t->ns_prefix, name, t->scope ? "::element" : "");
  bool first = index_first(t, args);
  if (first) buf_puts(b, "i");
  for (int i = 0; i < t->nparams; i++) {
    const IrTextParam *tp = &t->params[i];
    if (i || first) buf_puts(b, ", ");
    if (args[i].cast && scope_type(t, tp->elem)) {
      const char *e = strncmp(tp->elem, "const ", 6) == 0 ? tp->elem + 6 : tp->elem;
      buf_printf(b, "const_cast<%s%s::%s *>(%s)", beside ? "" : t->ns_prefix, name, e, args[i].name);
    } else if (args[i].cast) {
      buf_printf(b, "const_cast<%s *>(%s)", tp->elem, args[i].name);
    } else {
      buf_puts(b, args[i].name);
    }
  }
  buf_puts(b, ");\n");
}
