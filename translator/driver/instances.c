// instances.c: the regions read per instance of their template (front.h's
// RegionInstance): each instance extracted, scheduled and generated on its own
// parse, and the region's statement replaced by an `if constexpr` on the
// template's parameters choosing the instance's block, the region as written
// for any other instance.
#include "driver/driver.h"
#include "analyze/analyze.h"
#include "codegen/codegen.h"
#include "common/text.h"
#include "output/output.h"
#include "transform/transform.h"

#include <stdlib.h>
#include <string.h>

Program instances_work(const Program *prog) {
  Program work = *prog;
  work.regions = NULL;
  work.nregions = 0;
  Region **tail = &work.regions;
  for (const Region *r = prog->regions; r; r = r->next) {
    if (r->ninstances || r->instance_why) continue;
    Region *copy = xcalloc(1, sizeof *copy);
    *copy = *r;
    copy->next = NULL;
    *tail = copy;
    tail = &copy->next;
    work.nregions++;
  }
  return work;
}

void instances_work_free(Program *work) {
  for (Region *r = work->regions; r;) {
    Region *next = r->next;
    free(r);
    r = next;
  }
  work->regions = NULL;
}

// One instance: extract, schedule and generate its region into code.
static int instance_code(const Options *o, const RegionInstance *ri, const IrCostModel *model, InstanceRun *run,
                         RegionCode *code) {
  const Region *fr = ri->prog.regions;
  run->fe = &ri->fe;
  run->fr = fr;
  run->ir = ir_program_new();
  IrSchedOptions opt = {.model = model};
  unsigned errors = diag_error_count();
  if (extract_program(&ri->fe, &ri->prog, run->ir, true) || !run->ir->regions || ir_schedule(run->ir->regions, &opt))
    return -1;
  char *indent = rewrite_line_indent(&ri->fe.src, fr->range.begin.offset);
  int rc = codegen_region(&ri->fe, fr, run->ir->regions, o->target, indent, code);
  free(indent);
  if (rc == 0) run->body = strdup(code->body);
  return rc || diag_error_count() > errors ? -1 : 0;
}

static void add_text(char **to, const char *text) {
  if (!text) return;
  char *joined = xasprintf("%s%s", *to ? *to : "", text);
  free(*to);
  *to = joined;
}

int instances_code(const Options *o, const Frontend *fe, const Region *r, const IrCostModel *model, RegionCode *code,
                   InstanceRuns *runs) {
  *code = (RegionCode){0};
  char *indent = rewrite_line_indent(&fe->src, r->range.begin.offset);
  Text body = {0};
  text_add(&body, "");
  char *line = r->instances_more
                   ? xasprintf("%s// coconet: region %s is in a template: the first %d instances this file makes "
                               "run their own schedules, any other the region as written\n",
                               indent, r->name, r->ninstances)
                   : xasprintf("%s// coconet: region %s is in a template: each instance this file makes runs its "
                               "own schedule, any other the region as written\n",
                               indent, r->name);
  char *wrapped = text_wrap(line, 100);
  text_add(&body, wrapped + strlen(indent));  // the statement's first line is indented already
  text_add(&body, indent);
  free(line);
  free(wrapped);
  int status = 0;
  for (int i = 0; i < r->ninstances; i++) {
    const RegionInstance *ri = &r->instances[i];
    InstanceRun *run = &runs->v[runs->n++];
    *run = (InstanceRun){.of = r, .label = ri->label};
    RegionCode c = {0};
    if (instance_code(o, ri, model, run, &c)) {
      diag_note(&r->pragma_range.begin, "region '%s' is in a template; coconet reads it in each instance this file "
                "makes: the errors above are its instance %s's", r->name, ri->label);
      region_code_free(&c);
      status = -1;
      continue;
    }
    char *head = xasprintf("%sif constexpr (%s) ", i ? " else " : "", ri->test);
    text_add(&body, head);
    text_add(&body, c.body);
    free(head);
    add_text(&code->kernels, c.kernels);
    add_text(&code->late, c.late);
    if (c.runtime && (!code->runtime || strcmp(c.runtime, "coconet_fused.h") == 0)) code->runtime = c.runtime;
    region_code_free(&c);
  }
  // Any other instance runs the region as written (lowered for the host backend).
  Edit *lowered = NULL;
  if (o->target == TARGET_HOST && host_lower_in(fe, r->cursor, &lowered)) status = -1;
  char *original = edits_apply_span(&fe->src, lowered, r->range.begin.offset, r->range.end.offset);
  edits_free(lowered);
  text_add(&body, " else ");
  text_add(&body, original);
  free(original);
  free(indent);
  code->body = body.s;
  CXCursor fn;
  code->kernels_at = code->kernels ? place_decl(fe, r->range.begin.offset) : 0;
  code->late_at = code->late ? place_fn(fe, r->range.begin.offset, &fn) : 0;
  return status;
}

void instances_runs_free(InstanceRuns *runs) {
  for (int i = 0; i < runs->n; i++) {
    ir_program_free(runs->v[i].ir);
    free(runs->v[i].body);
  }
  free(runs->v);
  *runs = (InstanceRuns){0};
}
