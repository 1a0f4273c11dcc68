// check.c: the clauses of `region` and of `pointwise(...)`, and the checks on
// each argument and each clause, run as soon as it is parsed so that the error
// reported is the leftmost one.
#include "internal.h"

#include <stdio.h>
#include <string.h>

static const KeySpec overlap_keys[] = {{"chunks", VAL_POSITIVE}, {NULL, VAL_EXPR}};
static const KeySpec pipeline_keys[] = {{"tag", VAL_IDENT}, {"group", VAL_EXPR}, {NULL, VAL_EXPR}};
static const KeySpec pointwise_keys[] = {{"index", VAL_IDENT}, {"count", VAL_EXPR}, {NULL, VAL_EXPR}};

static const ClauseSpec region_clauses[] = {
    {.name = "name", .args = ARGS_NAME, .parens_required = true},
    {.name = "shard", .args = ARGS_BUFFERS, .parens_required = true, .exclusive = "scratch"},
    {.name = "scratch", .args = ARGS_BUFFERS, .parens_required = true, .exclusive = "shard"},
    {.name = "replicated", .args = ARGS_BUFFERS, .parens_required = true},
    {.name = "split", .args = ARGS_BUFFERS, .manual = true},
    {.name = "reorder", .args = ARGS_NONE, .manual = true, .after = "split"},
    {.name = "fuse", .args = ARGS_NONE, .manual = true},
    {.name = "overlap", .args = ARGS_KEYS, .manual = true, .keys = overlap_keys},
    {.name = "pipeline", .args = ARGS_KEYS, .parens_required = true, .manual = true, .keys = pipeline_keys,
     .required_key = "tag"},
    {.name = "schedule", .args = ARGS_AUTO, .parens_required = true},
    {.name = NULL},
};

const ClauseSpec pointwise_spec = {
    .name = "pointwise", .args = ARGS_KEYS, .parens_required = true, .keys = pointwise_keys};

static const ClauseSpec *find_spec(const char *name, size_t len) {
  for (const ClauseSpec *s = region_clauses; s->name; s++)
    if (strlen(s->name) == len && memcmp(s->name, name, len) == 0) return s;
  return NULL;
}

const ClauseSpec *lookup_clause(const Token *name) {
  return find_spec(name->loc, name->len);
}

const ClauseSpec *region_clause(Parser *P, const Token *name) {
  const ClauseSpec *spec = lookup_clause(name);
  if (spec) return spec;
  char buf[CLIP_SIZE];
  spell(buf, name);
  for (int d = 0; pragma_directive_names[d]; d++)
    if (equal(name, pragma_directive_names[d]))
      fail(P, name->offset, "'%s' is a directive, not a clause of 'region'", buf);
  Suggestion s = {.word = name->loc, .len = name->len};
  for (spec = region_clauses; spec->name; spec++) suggest(&s, spec->name);
  if (s.best) fail(P, name->offset, "unknown clause '%s'; did you mean '%s'?", buf, s.best);
  fail(P, name->offset, "unknown clause '%s' for 'region'", buf);
}

static const char *text_of(char buf[CLIP_SIZE], const PragmaArg *a) {
  return clip(buf, a->text, strlen(a->text));
}

// Where an argument starts: its key if it has one.
static unsigned arg_start(const PragmaArg *a) {
  return a->key ? a->key_offset : a->offset;
}

static bool is_one_ident(const Token *begin, const Token *end) {
  return end - begin == 1 && begin->kind == TK_IDENT;
}

// The token after the bracket group opened at t (groups are balanced here).
static const Token *skip_group(const Token *t) {
  int depth = 0;
  do {
    if (t->kind == TK_PUNCT && t->len == 1 && strchr("([{", *t->loc)) depth++;
    if (t->kind == TK_PUNCT && t->len == 1 && strchr(")]}", *t->loc)) depth--;
    t++;
  } while (depth > 0);
  return t;
}

// A buffer is an identifier or a parenthesized expression followed by any
// number of `.field`, `->field` and `[index]`: m, s.m, p->v, bufs[0], (*pp)[1].
static void check_buffer_shape(Parser *P, const PragmaClause *c, const PragmaArg *a,
                               const Token *t, const Token *end) {
  char buf[CLIP_SIZE];
  if (t->kind == TK_IDENT) t++;
  else if (equal(t, "(") && !equal(t + 1, ")")) t = skip_group(t);
  else fail(P, a->offset, "'%s(%s)': expected a buffer expression", c->name, text_of(buf, a));
  for (;;) {
    if ((equal(t, ".") || equal(t, "->")) && t + 1 < end && t[1].kind == TK_IDENT) t += 2;
    else if (equal(t, "[") && !equal(t + 1, "]")) t = skip_group(t);
    else break;
  }
  if (t == end) return;
  if (t->kind == TK_IDENT && t[-1].kind == TK_IDENT)
    fail(P, t->offset, "expected ',' before '%s'", spell(buf, t));
  fail(P, t->offset, "'%s(%s)': expected a buffer expression", c->name, text_of(buf, a));
}

// Whether two argument texts spell the same expression, spaces aside.
static bool same_expr(const char *x, const char *y) {
  for (;; x++, y++) {
    while (*x == ' ') x++;
    while (*y == ' ') y++;
    if (*x != *y) return false;
    if (!*x) return true;
  }
}

static void check_buffer(Parser *P, const ClauseSpec *spec, const PragmaClause *c,
                         const PragmaArg *a, const Token *begin, const Token *end) {
  char buf[CLIP_SIZE];
  if (a->key)
    fail(P, a->key_offset, "'%s(' takes buffers, not key '%s='", c->name,
         clip(buf, a->key, strlen(a->key)));
  check_buffer_shape(P, c, a, begin, end);
  for (const PragmaArg *o = c->args; o != a; o = o->next)
    if (same_expr(o->text, a->text))
      fail(P, a->offset, "buffer '%s' appears twice in '%s('", text_of(buf, a), c->name);
  const PragmaClause *x = spec->exclusive ? pragma_find_clause(P->pragma, spec->exclusive) : NULL;
  for (const PragmaArg *o = x ? x->args : NULL; o; o = o->next)
    if (same_expr(o->text, a->text))
      fail(P, a->offset, "buffer '%s' is in both '%s' and '%s'", text_of(buf, a), x->name, c->name);
}

static void check_name(Parser *P, const PragmaClause *c, const PragmaArg *a, const Token *begin,
                       const Token *end) {
  char buf[CLIP_SIZE];
  if (a->key || c->nargs > 1) fail(P, arg_start(a), "'%s' takes one identifier", c->name);
  if (!is_one_ident(begin, end))
    fail(P, a->offset, "'%s(%s)': expected an identifier", c->name, text_of(buf, a));
}

static void check_auto(Parser *P, const PragmaClause *c, const PragmaArg *a) {
  if (a->key || c->nargs > 1 || strcmp(a->text, "auto") != 0)
    fail(P, arg_start(a), "'%s' accepts only 'auto'", c->name);
}

// The keys as "'index' or 'count'", each followed by suffix.
static const char *key_list(char *buf, size_t size, const KeySpec *keys, const char *suffix) {
  size_t n = 0;
  buf[0] = '\0';
  for (int i = 0; keys[i].name && n < size; i++) {
    const char *sep = i == 0 ? "" : keys[i + 1].name ? ", " : " or ";
    n += (size_t)snprintf(buf + n, size - n, "%s'%s%s'", sep, keys[i].name, suffix);
  }
  return buf;
}

static const KeySpec *find_key(Parser *P, const ClauseSpec *spec, const PragmaClause *c,
                               const PragmaArg *a) {
  for (const KeySpec *k = spec->keys; k->name; k++)
    if (strcmp(k->name, a->key) == 0) return k;
  char buf[CLIP_SIZE], list[64];
  clip(buf, a->key, strlen(a->key));
  Suggestion s = {.word = a->key, .len = strlen(a->key)};
  for (const KeySpec *k = spec->keys; k->name; k++) suggest(&s, k->name);
  if (s.best)
    fail(P, a->key_offset, "unknown key '%s' in '%s('; did you mean '%s'?", buf, c->name, s.best);
  fail(P, a->key_offset, "unknown key '%s' in '%s('; expected %s", buf, c->name,
       key_list(list, sizeof list, spec->keys, ""));
}

static void check_value(Parser *P, const PragmaClause *c, const KeySpec *k, const PragmaArg *a,
                        const Token *begin, const Token *end) {
  char buf[CLIP_SIZE];
  if (k->value == VAL_IDENT && !is_one_ident(begin, end))
    fail(P, a->offset, "'%s(%s=%s)': expected an identifier", c->name, a->key, text_of(buf, a));
  if (k->value != VAL_POSITIVE || pragma_arg_int(a) > 0) return;
  const char *s = a->text;
  bool digits = *s >= '1' && *s <= '9' && strspn(s, "0123456789") == strlen(s);
  fail(P, a->offset, "'%s(%s=...)' %s", c->name, a->key,
       digits ? "is too large" : "must be a positive integer");
}

static void check_key(Parser *P, const ClauseSpec *spec, const PragmaClause *c,
                      const PragmaArg *a, const Token *begin, const Token *end) {
  char list[64];
  if (!a->key)
    fail(P, a->offset, "expected %s in '%s('", key_list(list, sizeof list, spec->keys, "="),
         c->name);
  const KeySpec *k = find_key(P, spec, c, a);
  for (const PragmaArg *o = c->args; o != a; o = o->next)
    if (strcmp(o->key, a->key) == 0)
      fail(P, a->key_offset, "duplicate key '%s' in '%s('", a->key, c->name);
  if (begin == end) fail(P, a->offset, "expected a value after '%s='", a->key);
  check_value(P, c, k, a, begin, end);
}

void check_arg(Parser *P, const ClauseSpec *spec, const PragmaClause *c, const PragmaArg *a,
               const Token *begin, const Token *end) {
  if (spec->args == ARGS_BUFFERS) check_buffer(P, spec, c, a, begin, end);
  else if (spec->args == ARGS_NAME) check_name(P, c, a, begin, end);
  else if (spec->args == ARGS_AUTO) check_auto(P, c, a);
  else check_key(P, spec, c, a, begin, end);  // ARGS_KEYS; ARGS_NONE never has arguments
}

// schedule(auto) leaves the whole schedule to the cost model, so it excludes
// the hand-written clauses; and a clause may need another before it.
void check_clause(Parser *P, const ClauseSpec *spec, const PragmaClause *c) {
  for (const PragmaClause *o = P->pragma->clauses; o != c; o = o->next) {
    const ClauseSpec *os = find_spec(o->name, strlen(o->name));
    if ((spec->manual && os->args == ARGS_AUTO) || (os->manual && spec->args == ARGS_AUTO))
      fail(P, c->offset, "'schedule(auto)' cannot be combined with '%s'",
           spec->manual ? c->name : o->name);
  }
  if (spec->required_key && !pragma_find_key(c, spec->required_key))
    fail(P, c->offset, "'%s' needs '%s=NAME'", c->name, spec->required_key);
  if (spec->after && !pragma_find_clause(P->pragma, spec->after))
    fail(P, c->offset, "'%s' needs '%s' before it", c->name, spec->after);
}
