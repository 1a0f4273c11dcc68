// json.c: --dump=json, written with cJSON. The schema is docs/dump-json.md;
// its "version" changes whenever a field changes meaning or disappears.
#include "output/output.h"

#include <cJSON.h>
#include <stdlib.h>
#include <string.h>

#define DUMP_JSON_VERSION 1

static cJSON *loc_json(SrcLoc l) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddNumberToObject(o, "line", l.line);
  cJSON_AddNumberToObject(o, "col", l.col);
  cJSON_AddNumberToObject(o, "offset", l.offset);
  return o;
}

static cJSON *range_json(SrcRange r) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddItemToObject(o, "begin", loc_json(r.begin));
  cJSON_AddItemToObject(o, "end", loc_json(r.end));
  return o;
}

static cJSON *piece_json(const Piece *p) {
  if (!p->text) return cJSON_CreateNull();
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "text", p->text);
  cJSON_AddItemToObject(o, "range", range_json(p->range));
  return o;
}

static cJSON *pieces_json(const Piece *p, int n) {
  cJSON *a = cJSON_CreateArray();
  for (int i = 0; i < n; i++) cJSON_AddItemToArray(a, piece_json(&p[i]));
  return a;
}

static cJSON *str_or_null(const char *s) { return s ? cJSON_CreateString(s) : cJSON_CreateNull(); }

static cJSON *pragma_json(const Frontend *fe, const Pragma *p, SrcRange range) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "directive", pragma_directive_name(p->directive));
  cJSON_AddItemToObject(o, "range", range_json(range));
  cJSON *clauses = cJSON_AddArrayToObject(o, "clauses");
  unsigned base = range.begin.offset;
  const char *text = fe->src.buf + base;
  unsigned text_off = base + (unsigned)(strstr(text, "coconet") - text);
  for (const PragmaClause *c = p->clauses; c; c = c->next) {
    cJSON *co = cJSON_CreateObject();
    cJSON_AddStringToObject(co, "name", c->name);
    cJSON_AddItemToObject(co, "location", loc_json(source_loc(&fe->src, text_off + c->offset)));
    cJSON *args = cJSON_AddArrayToObject(co, "args");
    for (const PragmaArg *a = c->args; a; a = a->next) {
      cJSON *ao = cJSON_CreateObject();
      cJSON_AddItemToObject(ao, "key", str_or_null(a->key));
      cJSON_AddStringToObject(ao, "text", a->text);
      cJSON_AddItemToObject(ao, "location", loc_json(source_loc(&fe->src, text_off + a->offset)));
      cJSON_AddItemToArray(args, ao);
    }
    cJSON_AddItemToArray(clauses, co);
  }
  return o;
}

static cJSON *kernel_json(const KernelDef *k) {
  if (!k) return cJSON_CreateNull();
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "name", k->name);
  cJSON_AddBoolToObject(o, "template", k->is_template);
  cJSON_AddBoolToObject(o, "header", k->in_header);
  cJSON_AddItemToObject(o, "range", k->in_header ? cJSON_CreateNull() : range_json(k->range));
  cJSON_AddItemToObject(o, "body", k->in_header ? cJSON_CreateNull() : range_json(k->body));
  cJSON *params = cJSON_AddArrayToObject(o, "params");
  for (int i = 0; i < k->nparams; i++) {
    cJSON *p = cJSON_CreateObject();
    cJSON_AddStringToObject(p, "name", k->params[i].name);
    cJSON_AddStringToObject(p, "type", k->params[i].type);
    cJSON_AddItemToArray(params, p);
  }
  return o;
}

static cJSON *launch_json(const Launch *l) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "kernel", l->kernel);
  cJSON_AddItemToObject(o, "template_args", str_or_null(l->template_args));
  cJSON_AddItemToObject(o, "seen_through", str_or_null(l->wrapper));
  cJSON_AddItemToObject(o, "grid", piece_json(&l->grid));
  cJSON_AddItemToObject(o, "block", piece_json(&l->block));
  cJSON_AddItemToObject(o, "shmem", piece_json(&l->shmem));
  cJSON_AddItemToObject(o, "stream", piece_json(&l->stream));
  cJSON_AddItemToObject(o, "definition", kernel_json(l->def));
  return o;
}

static cJSON *stmt_json(const Frontend *fe, const Stmt *s) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "kind", stmt_kind_name(s->kind));
  cJSON_AddItemToObject(o, "range", range_json(s->range));
  char *text = fe_text(fe, s->range);
  cJSON_AddStringToObject(o, "text", text);
  free(text);
  if (s->kind == STMT_OPAQUE) return o;
  cJSON_AddStringToObject(o, "call", s->callee);
  cJSON *wrap = cJSON_CreateNull();
  if (s->wrap != WRAP_NONE) {
    cJSON_Delete(wrap);
    wrap = cJSON_CreateObject();
    cJSON_AddStringToObject(wrap, "name", s->wrapper);
    cJSON_AddStringToObject(wrap, "kind", wrap_kind_name(s->wrap));
  }
  cJSON_AddItemToObject(o, "wrapper", wrap);
  cJSON_AddItemToObject(o, "call_range", range_json(s->call_range));
  cJSON_AddItemToObject(o, "args", pieces_json(s->args, s->nargs));
  if (s->launch) cJSON_AddItemToObject(o, "launch", launch_json(s->launch));
  return o;
}

static cJSON *region_json(const Frontend *fe, const Region *r) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "name", r->name);
  cJSON_AddStringToObject(o, "function", r->function);
  cJSON_AddItemToObject(o, "function_start", loc_json(r->function_start));
  cJSON_AddItemToObject(o, "pragma", pragma_json(fe, r->pragma, r->pragma_range));
  cJSON_AddItemToObject(o, "range", range_json(r->range));
  cJSON *stmts = cJSON_AddArrayToObject(o, "statements");
  for (const Stmt *s = r->stmts; s; s = s->next) cJSON_AddItemToArray(stmts, stmt_json(fe, s));
  return o;
}

static cJSON *annotations_json(const Frontend *fe, const Annotation *a) {
  cJSON *arr = cJSON_CreateArray();
  for (; a; a = a->next) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "target", a->target);
    cJSON_AddItemToObject(o, "pragma", pragma_json(fe, a->pragma, a->pragma_range));
    cJSON_AddItemToObject(o, "range", range_json(a->range));
    cJSON_AddItemToArray(arr, o);
  }
  return arr;
}

int json_dump(FILE *out, const Frontend *fe, const Program *prog) {
  cJSON *root = cJSON_CreateObject();
  cJSON_AddNumberToObject(root, "version", DUMP_JSON_VERSION);
  cJSON_AddStringToObject(root, "file", fe->src.path);
  cJSON *regions = cJSON_AddArrayToObject(root, "regions");
  for (const Region *r = prog->regions; r; r = r->next)
    cJSON_AddItemToArray(regions, region_json(fe, r));
  cJSON_AddItemToObject(root, "symmetric", annotations_json(fe, prog->symmetric));
  cJSON_AddItemToObject(root, "pointwise", annotations_json(fe, prog->pointwise));
  char *text = cJSON_Print(root);
  cJSON_Delete(root);
  if (!text) COCONET_BUG("out of memory");
  int rc = fprintf(out, "%s\n", text) < 0 ? -1 : 0;
  cJSON_free(text);
  return rc;
}
