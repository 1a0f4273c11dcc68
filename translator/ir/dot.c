// dot.c: Graphviz text of a region (--emit-dot): the region as written and,
// when scheduled, as scheduled, side by side. Ops are boxes; values (tensor
// versions) are ellipses coloured by layout (replicated blue, local yellow,
// sliced pink); edges go from the values an op reads to the op and from the op
// to the values it writes; a fused group is a dashed cluster. A legend cluster
// says what the shapes and colours mean.
#include "ir/ir.h"

static const char *colour(IrLayout l) {
  switch (l) {
  case IR_LAYOUT_REPLICATED: return "lightblue";
  case IR_LAYOUT_LOCAL: return "lightyellow";
  case IR_LAYOUT_SLICED: return "pink";
  case IR_LAYOUT_NONE: return "white";
  }
  return "white";
}

static void quoted(FILE *f, const char *s) {
  fputc('"', f);
  for (; *s; s++) {
    if (*s == '"' || *s == '\\') fputc('\\', f);
    fputc(*s, f);
  }
  fputc('"', f);
}

static void value_node(FILE *f, char side, const IrUse *u) {
  char name[128];
  ir_version_name(&u->ref, name, sizeof name);
  fprintf(f, "    %c_v%d_%d [shape=ellipse, style=filled, fillcolor=%s, label=\"%s\\n%s\"];\n", side,
          u->ref.t->id, u->ref.version, colour(u->ref.layout), name, ir_layout_name(u->ref.layout));
}

static void op_node(FILE *f, char side, int n, const IrOp *op) {
  char label[256];
  const IrSpan *sp = &op->span;
  int at = snprintf(label, sizeof label, "%s",
                    op->kind == IR_OP_OPAQUE && op->text ? op->text : ir_op_title(op));
  if (sp->nchunks > 1 && at < (int)sizeof label)
    at += snprintf(label + at, sizeof label - (size_t)at, " chunk %d/%d", sp->chunk + 1, sp->nchunks);
  if (sp->part != IR_PART_ALL && at < (int)sizeof label)
    snprintf(label + at, sizeof label - (size_t)at, " @%s", ir_part_name(sp->part));
  fprintf(f, "    %c_op%d [shape=box, label=", side, n);
  quoted(f, label);
  fputs("];\n", f);
  for (const IrUse *u = op->reads; u; u = u->next) {
    value_node(f, side, u);
    fprintf(f, "    %c_v%d_%d -> %c_op%d;\n", side, u->ref.t->id, u->ref.version, side, n);
  }
  for (const IrUse *u = op->writes; u; u = u->next) {
    value_node(f, side, u);
    fprintf(f, "    %c_op%d -> %c_v%d_%d;\n", side, n, side, u->ref.t->id, u->ref.version);
  }
}

static void list(FILE *f, char side, const IrOp *ops) {
  int n = 0, group = 0;
  for (const IrOp *op = ops; op; op = op->next) {
    if (op->fuse_group != group) {
      if (group) fputs("    }\n", f);
      group = op->fuse_group;
      if (group)
        fprintf(f, "    subgraph cluster_%c_fuse%d {\n    label=\"fused kernel %d\"; style=dashed;\n", side, group, group);
    }
    op_node(f, side, ++n, op);
  }
  if (group) fputs("    }\n", f);
}

// What the shapes and colours mean, as a cluster of its own.
static void legend(FILE *f) {
  fputs("  subgraph cluster_legend {\n    label=\"legend\"; style=dotted;\n"
        "    legend_op [shape=box, label=\"an op\\n@slice: this rank's slice\\n@tail: the count % nranks left "
        "over\\n@body: the part nranks divides\"];\n"
        "    legend_replicated [shape=ellipse, style=filled, fillcolor=lightblue, label=\"a value, replicated:"
        "\\nthe same on every rank\"];\n"
        "    legend_local [shape=ellipse, style=filled, fillcolor=lightyellow, label=\"a value, local:\\nthis "
        "rank's own\"];\n"
        "    legend_sliced [shape=ellipse, style=filled, fillcolor=pink, label=\"a value, sliced:\\nright on "
        "this rank's slice\"];\n"
        "    legend_fused [shape=box, style=dashed, label=\"a dashed box around ops:\\none fused kernel\"];\n"
        "    legend_op -> legend_replicated [label=\"writes\"];\n"
        "    legend_local -> legend_op [label=\"reads\"];\n"
        "  }\n", f);
}

void ir_emit_dot(FILE *f, const IrRegion *r) {
  fputs("digraph ", f);
  quoted(f, r->name);
  fputs(" {\n  rankdir=TB;\n  node [fontname=\"monospace\"];\n", f);
  fprintf(f, "  subgraph cluster_written {\n    label=\"%s as written\";\n", r->name);
  list(f, 'a', r->ops);
  fputs("  }\n", f);
  if (r->sched) {
    fprintf(f, "  subgraph cluster_scheduled {\n    label=\"%s scheduled\";\n", r->name);
    list(f, 's', r->sched);
    fputs("  }\n", f);
  }
  legend(f);
  fputs("}\n", f);
}
