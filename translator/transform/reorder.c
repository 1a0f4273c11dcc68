// reorder.c: reorder, pointwise work moves between ReduceScatter and
// AllGather and runs on this rank's slice (and the tail).
#include "transform_impl.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

// A size as the program writes it, for messages: a hoisted argument's name
// (coconet_argN) is shown as its text.
static char *size_text(IrRegion *r, const IrSize *s) {
  char *buf = NULL, *out = NULL;
  size_t len = 0, n = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f) COCONET_BUG("out of memory");
  ir_print_size(f, s);
  fclose(f);
  f = open_memstream(&out, &n);
  if (!f) COCONET_BUG("out of memory");
  for (const char *p = buf; *p;) {
    size_t id = isalpha((unsigned char)*p) || *p == '_' ? 1 : 0;
    while (id && (isalnum((unsigned char)p[id]) || p[id] == '_')) id++;
    if (!id) {
      fputc(*p++, f);
      continue;
    }
    char *name = strndup(p, id);
    if (!name) COCONET_BUG("out of memory");
    fputs(ir_text_as_written(r, name), f);
    free(name);
    p += id;
  }
  fclose(f);
  char *text = ir_strdup(r, out);
  free(buf);
  free(out);
  return text;
}

static char *index_text(IrRegion *r, const IrUse *u) {
  const IrExpr *e = u->expr;
  switch (u->index) {
  case IR_IDX_I: return "i";
  case IR_IDX_MOD: return ir_printf(r, "i %% %s", size_text(r, e->k));
  case IR_IDX_DIV: return ir_printf(r, "i / %s", size_text(r, e->k));
  case IR_IDX_CONST: return size_text(r, e->k);
  case IR_IDX_OTHER: return ir_strdup(r, e->text);
  }
  return "?";
}

// The kernel that sums into what a cudaMemsetAsync zeroes: the first of the
// memsets and kernels after it that touches the buffer, when it sums into it;
// NULL otherwise.
static const IrOp *sum_kernel_of(const IrOp *p) {
  if (p->kind != IR_OP_MEMSET) return NULL;
  for (const IrOp *q = p->next; q && (q->kind == IR_OP_MEMSET || q->kind == IR_OP_POINTWISE); q = q->next) {
    if (ir_pw_sums_into(q, p->memset.dst)) return q;
    if (tf_read(q, p->memset.dst) || tf_writes(q, p->memset.dst)) return NULL;
  }
  return NULL;
}

int tf_chain(const IrOp *after, const IrTensor *x, IrOp **chain, int max) {
  int n = 0;
  for (IrOp *p = after->next; p && n < max; p = p->next) {
    if (!tf_same_chunk(p, after) || p->span.part != IR_PART_ALL) break;
    if (sum_kernel_of(p)) {
      chain[n++] = p;
      continue;
    }
    if (p->kind != IR_OP_POINTWISE) break;
    bool consumes = tf_read(p, x) != NULL;
    for (int i = 0; i < n && !consumes; i++)
      for (const IrUse *w = chain[i]->writes; w; w = w->next) consumes |= tf_read(p, w->ref.t) != NULL;
    if (!consumes) break;
    chain[n++] = p;
  }
  if (n && chain[n - 1]->kind == IR_OP_MEMSET) n--;  // no kernel of the chain sums into what it zeroes
  return n;
}

static bool chain_writes(const IrTensor *t, const IrTensor *x, IrOp **chain, int n) {
  if (t == x) return true;
  for (int i = 0; i < n; i++)
    if (tf_writes(chain[i], t)) return true;
  return false;
}

// A sum of the chain (atomicAdd into t): all-reduced right after its kernel.
static bool chain_sum(const IrTensor *t, IrOp **chain, int n) {
  for (int i = 0; i < n; i++)
    if (ir_pw_sums_into(chain[i], t)) return true;
  return false;
}

// t is a per-row output of the chain's row-wise kernels in rows of k elements:
// every chain write of it is a [row] write of a kernel on rows of k. A split in
// those rows gives each rank the rows of t its slice work reads at [i / k].
static bool per_row_output(const IrTensor *t, const IrSize *k, IrOp **chain, int n) {
  bool seen = false;
  for (int i = 0; i < n; i++)
    for (const IrUse *w = chain[i]->writes; w; w = w->next) {
      if (w->ref.t != t) continue;
      if (chain[i]->kind != IR_OP_POINTWISE || !chain[i]->pw.row || w->index != IR_IDX_DIV ||
          !ir_size_equal(chain[i]->pw.row, k))
        return false;
      seen = true;
    }
  return seen;
}

// The chain kernel that writes t once per row ([row]), if one does.
static const IrOp *per_row_writer(const IrTensor *t, IrOp **chain, int n) {
  for (int i = 0; i < n; i++)
    for (const IrUse *w = chain[i]->writes; w; w = w->next)
      if (w->ref.t == t && w->index == IR_IDX_DIV) return chain[i];
  return NULL;
}

int tf_check_slice(TfCtx *c, const char *clause, const IrOp *p, const IrOp *coll, IrOp **chain, int n,
                   bool report) {
  const IrSize *count = coll->coll.count;
  const IrTensor *x = coll->coll.out;
  bool quiet = c->quiet;
  c->quiet = quiet || !report;
  const char *can = strcmp(clause, "fuse") == 0 ? "can be fused with the collective" : "can be computed on a slice";
  bool reorder = strcmp(clause, "reorder") == 0;
  int rc = 0;
  char ks[256], cs[256];
  const IrStmt *sum = ir_pw_reduction(p);
  bool known = ir_op_stream(p, ks, sizeof ks) && ir_op_stream(coll, cs, sizeof cs);
  if (p->kind == IR_OP_MEMSET || (sum && !reorder)) {
    if (!reorder)
      rc = tf_fail(c, &p->loc,
                   "%s: kernel '%s' sums into '%s' (atomicAdd); %s does not take sums yet: use split reorder, "
                   "which sums this rank's slice and all-reduces the partial sums",
                   clause, p->kind == IR_OP_MEMSET ? sum_kernel_of(p)->pw.kernel : p->pw.kernel,
                   p->kind == IR_OP_MEMSET ? p->memset.dst->name : sum->tensor->name, clause);
    c->quiet = quiet;
    return rc;
  }
  if (known && strcmp(ks, cs) != 0) {
    rc = tf_fail(c, &p->loc,
                 "%s: kernel '%s' runs on stream '%s' but the %s of '%s' on '%s'; the schedule puts them "
                 "in one order on one stream, which the program as written does not have",
                 clause, p->pw.kernel, ir_text_as_written(c->r, ks),
                 ir_coll_name(coll->orig ? coll->orig->coll.kind : coll->coll.kind), x->name,
                 ir_text_as_written(c->r, cs));
  } else if (p->pw.row && strcmp(clause, "reorder") != 0) {
    rc = tf_fail(c, &p->loc,
                 "%s: kernel '%s' is row-wise (each block reduces a row of %s elements); %s without split does "
                 "not take row-wise kernels: use split reorder%s, which runs it on this rank's rows",
                 clause, p->pw.kernel, size_text(c->r, p->pw.row), clause,
                 strcmp(clause, "fuse") == 0 ? " fuse" : "");
  } else if (!ir_size_equal(p->pw.count, count)) {
    rc = tf_fail(c, &p->loc,
                 "%s: kernel '%s' runs over %s elements but '%s' has %s; work on a slice needs the "
                 "same count",
                 clause, p->pw.kernel, size_text(c->r, p->pw.count), x->name, size_text(c->r, count));
  }
  for (const IrUse *u = p->reads; u && rc == 0; u = u->next) {
    const IrTensor *t = u->ref.t;
    const IrOp *rows_writer = u->index == IR_IDX_I ? per_row_writer(t, chain, n) : NULL;
    if (rows_writer) {
      rc = tf_fail(c, &u->loc,
                   "%s: kernel '%s' reads %s[i], but kernel '%s' writes '%s' once per row ([row]): on this rank's "
                   "rows, [i] is the element of another row; read it at [i / %s]",
                   clause, p->pw.kernel, t->name, rows_writer->pw.kernel, t->name,
                   size_text(c->r, rows_writer->pw.row));
    } else if (u->index == IR_IDX_OTHER) {
      // A name as the index (a helper's narrower copy of the element index, say): say it is not that.
      const char *it = index_text(c->r, u);
      bool name = *it && strspn(it, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") == strlen(it);
      rc = tf_fail(c, &u->loc, "%s: kernel '%s' reads %s[%s]%s%s%s; only %s[i] %s", clause, p->pw.kernel, t->name, it,
                   name ? " ('" : "", name ? it : "", name ? "' is not the element's own index, or not all of it)" : "",
                   t->name, can);
    } else if (u->index != IR_IDX_I && chain_writes(t, x, chain, n) &&
               !(u->index == IR_IDX_CONST && chain_sum(t, chain, n)) &&
               !(u->index == IR_IDX_DIV && per_row_output(t, u->expr->k, chain, n))) {
      rc = tf_fail(c, &u->loc,
                   "%s: kernel '%s' reads %s[%s]; only %s[i] %s (broadcast reads are fine only "
                   "for buffers the region's slice work does not write)",
                   clause, p->pw.kernel, t->name, index_text(c->r, u), t->name, can);
    }
  }
  c->quiet = quiet;
  return rc;
}

// The tensors the chain writes, other than x and its sums, each once, in order
// of first write: what is all-gathered.
static int chain_outputs(const IrTensor *x, IrOp **chain, int n, IrUse **out, int max) {
  int k = 0;
  for (int i = 0; i < n; i++) {
    for (IrUse *w = chain[i]->writes; w; w = w->next) {
      bool seen = w->ref.t == x || chain_sum(w->ref.t, chain, n);
      for (int j = 0; j < k && !seen; j++) seen = out[j]->ref.t == w->ref.t;
      if (!seen && k < max) out[k++] = w;
    }
  }
  return k;
}

// The op of the region as written that produced version `version` of t (NULL: region entry).
static const IrOp *producer(const IrRegion *r, const IrTensor *t, int version) {
  for (const IrOp *op = r->ops; op && version > 0; op = op->next)
    for (const IrUse *u = op->writes; u; u = u->next)
      if (u->ref.t == t && u->ref.version == version) return op;
  return NULL;
}

// A buffer as the program writes it (`ws[l]`, not the IR's name for it): what a
// clause that names it must say.
static const char *as_written(const TfCtx *c, const IrTensor *t) { return ir_text_as_written(c->r, t->text); }

// Where a local value comes from: local reads are followed back to a buffer
// as it was at region entry (the one to declare replicated) or to the op that
// made it local from no local read (a Recv). *reader is the op that reads it.
static const IrUse *local_source(const IrRegion *r, const IrOp *op, const IrOp **reader) {
  for (int depth = 0; op && depth <= r->nops; depth++) {
    const IrUse *local = NULL;
    for (const IrUse *u = op->reads; u && !local; u = u->next)
      if (u->ref.layout == IR_LAYOUT_LOCAL) local = u;
    if (!local) return NULL;
    *reader = op;
    const IrOp *from = producer(r, local->ref.t, local->ref.version);
    if (!from) return local;
    op = from;
  }
  return NULL;
}

// A buffer a clause can name: a variable or a member chain (`p.w`, `cfg->acc`, `ns::w`).
static bool nameable(const char *t) {
  for (const char *p = t; *p; p++)
    if (!(isalnum((unsigned char)*p) || *p == '_' || *p == '.' || *p == '>' || *p == ':' ||
          (*p == '-' && p[1] == '>')))
      return false;
  return *t != '\0';
}

// What shard and scratch promise, said with every suggestion of them: a program
// that reads the rest after the region would compute something else.
#define ONLY_IF " (shard and scratch only if nothing after the region reads the other ranks' slices: " \
                "COCONET_CHECK=clauses catches such a read)"

// A value computed on a slice and then all-gathered must be the value every
// rank would have computed: it may depend only on reduced values, buffers
// proven or declared replicated, the element index and scalars. The split
// buffer x is gathered unless shard or scratch, and so is every other output.
static int check_gathered(TfCtx *c, const IrTensor *t, IrOp **chain, int n) {
  if (t->shard || t->scratch) return 0;
  for (int i = 0; i < n; i++) {
    const IrUse *w = NULL;
    for (const IrUse *u = chain[i]->writes; u && !w; u = u->next)
      if (u->ref.t == t && u->ref.layout != IR_LAYOUT_REPLICATED) w = u;
    if (!w) continue;
    const IrOp *reader = chain[i];
    const IrUse *local = local_source(c->r, chain[i], &reader);
    if (!local)
      return tf_fail(c, &chain[i]->loc,
                     "reorder: '%s' differs per rank, so gathering its slices after the region "
                     "would change it; declare it shard(%s) or scratch(%s)" ONLY_IF,
                     as_written(c, t), as_written(c, t), as_written(c, t));
    const IrTensor *src = local->ref.t;
    const IrOp *opaque = NULL;
    for (const IrOp *op = c->r->ops; op && op->id < chain[i]->id && !opaque; op = op->next)
      if (op->kind == IR_OP_OPAQUE && !op->error_check) opaque = op;
    if (opaque && (src->replicated || src->layout_in == IR_LAYOUT_REPLICATED)) {
      tf_fail(c, &chain[i]->loc,
              "reorder: kernel '%s' computes '%s' from '%s', which is replicated at region entry, but a statement "
              "coconet does not see into comes first in the region and may change it; gathering the slices of "
              "'%s' would then be wrong: move that statement out of the region, or declare shard(%s) or scratch(%s)" ONLY_IF,
              chain[i]->pw.kernel, as_written(c, t), as_written(c, src), as_written(c, t), as_written(c, t), as_written(c, t));
      tf_note(c, &opaque->loc, "this statement may change '%s'", as_written(c, src));
    } else if (src == t && local->ref.version == 0) {
      tf_fail(c, &chain[i]->loc,
              "reorder: kernel '%s' updates '%s' on this rank's slice and its slices are then "
              "gathered, but '%s' at region entry is not known to be identical on every rank; "
              "declare replicated(%s) if it is (data-parallel weights are), or shard(%s) or "
              "scratch(%s)" ONLY_IF,
              chain[i]->pw.kernel, as_written(c, t), as_written(c, t), as_written(c, t), as_written(c, t), as_written(c, t));
      tf_note(c, &local->loc, "'%s' at region entry is read here", as_written(c, t));
    } else if (local->ref.version == 0) {
      // Every buffer of the region's entry the kernel reads as local: one clause names them all; a
      // buffer passed as an expression (`keep ? acc : acc2`) is named by a local the user computes.
      const char *names = "", *quoted = "", *exprs = "";
      for (const IrUse *u = reader->reads; u; u = u->next)
        if (u == local || (u->ref.t != src && u->ref.t != t && u->ref.layout == IR_LAYOUT_LOCAL &&
                           !producer(c->r, u->ref.t, u->ref.version))) {
          const char *w = as_written(c, u->ref.t);
          if (!nameable(w)) {
            exprs = ir_printf(c->r, "%s%s'%s'", exprs, *exprs ? ", " : "", w);
          } else {
            names = ir_printf(c->r, "%s%s%s", names, *names ? ", " : "", w);
            quoted = ir_printf(c->r, "%s%s'%s'", quoted, *quoted ? ", " : "", w);
          }
        }
      const char *clause = *names ? ir_printf(c->r, ", or %s replicated(%s)", quoted, names) : "";
      const char *local_of = *exprs ? ir_printf(c->r, ", or compute %s into a local before the region and declare "
                                                      "it replicated", exprs) : "";
      tf_fail(c, &chain[i]->loc,
              "reorder: '%s' differs per rank (kernel '%s' computes it from local '%s'), so "
              "gathering its slices after the region would change it; declare it shard(%s) or "
              "scratch(%s)%s%s" ONLY_IF,
              as_written(c, t), chain[i]->pw.kernel, as_written(c, src), as_written(c, t), as_written(c, t), clause,
              local_of);
      tf_note(c, &src->first_use,
              "'%s' is local (may differ per rank) from here: nothing in the region makes it "
              "identical on every rank",
              as_written(c, src));
    } else {
      tf_fail(c, &chain[i]->loc,
              "reorder: '%s' differs per rank (kernel '%s' computes it from local '%s'), so "
              "gathering its slices after the region would change it; declare it shard(%s) or "
              "scratch(%s)" ONLY_IF,
              as_written(c, t), chain[i]->pw.kernel, as_written(c, src), as_written(c, t), as_written(c, t));
      tf_note(c, &reader->loc, "'%s' is local: %s makes it from data that differs per rank", as_written(c, src),
              ir_op_title(reader));
    }
    return -1;
  }
  return 0;
}

// A sum the chain computes on slices (atomicAdd into acc) is each rank's
// partial sum until an AllReduce adds them: that is the sum as written only
// when every rank sums the same values from zero, once.
static int check_sum(TfCtx *c, const IrOp *p, const IrTensor *acc, IrOp **chain, int n) {
  for (int i = 0; i < n; i++) {
    if (chain[i] == p || !tf_writes(chain[i], acc) || sum_kernel_of(chain[i]) == p)
      continue;
    tf_fail(c, &chain[i]->loc,
            "reorder: %s also writes '%s', which kernel '%s' sums into; coconet all-reduces a sum right after "
            "its kernel, so the work on a slice may write it only there",
            ir_op_title(chain[i]), acc->name, p->pw.kernel);
    tf_note(c, &p->loc, "kernel '%s' sums into '%s' here", p->pw.kernel, acc->name);
    return -1;
  }
  for (const IrStmt *s = p->pw.body; s; s = s->next) {
    if (s->kind != IR_S_REDUCE || s->tensor != acc) continue;
    long k = s->target->k->value;
    if (k == 0 || (acc->count && acc->count->kind == IR_SIZE_CONST && k < acc->count->value)) continue;
    tf_fail(c, &s->loc,
            "reorder: kernel '%s' sums into %s[%ld], beyond the %s element(s) of '%s' the region zeroes and an "
            "AllReduce would add; zero and size it so that it holds every element summed into",
            p->pw.kernel, acc->name, k, size_text(c->r, acc->count), acc->name);
    return -1;
  }
  const IrUse *old = tf_read(p, acc), *w = NULL;
  for (const IrUse *u = p->writes; u; u = u->next)
    if (u->ref.t == acc) w = u;
  const IrOp *zero = old ? producer(c->r, acc, old->ref.version) : NULL;
  if (!zero || zero->kind != IR_OP_MEMSET || zero->memset.value != 0 || !ir_size_equal(zero->memset.count, acc->count)) {
    tf_fail(c, &p->loc,
            "reorder: kernel '%s' sums into '%s' (atomicAdd), which the region does not zero before it; each rank "
            "sums its slice and an AllReduce adds the partial sums, which would count what '%s' held once per rank: "
            "zero all of it in the region first (cudaMemsetAsync(%s, 0, ...))",
            p->pw.kernel, acc->name, acc->name, acc->name);
    if (zero) tf_note(c, &zero->loc, "'%s' is last written here", acc->name);
    return -1;
  }
  if (w && w->ref.layout != IR_LAYOUT_REPLICATED) {
    const IrOp *reader = p;
    const IrUse *local = local_source(c->r, p, &reader);
    tf_fail(c, &p->loc,
            "reorder: kernel '%s' sums values that differ per rank into '%s'%s%s%s; the sum of this rank's slice "
            "all-reduced over the ranks would then not be the sum each rank computes as written",
            p->pw.kernel, acc->name, local ? " (from local '" : "", local ? local->ref.t->name : "", local ? "')" : "");
    if (local) tf_note(c, &local->loc, "'%s' is local (may differ per rank) here", local->ref.t->name);
    return -1;
  }
  return 0;
}

static int check_sums(TfCtx *c, IrOp **chain, int n) {
  for (int i = 0; i < n; i++)
    for (const IrStmt *s = chain[i]->kind == IR_OP_POINTWISE ? chain[i]->pw.body : NULL; s; s = s->next)
      if (s->kind == IR_S_REDUCE && check_sum(c, chain[i], s->tensor, chain, n)) return -1;
  return 0;
}

static int check_gathers(TfCtx *c, const IrTensor *x, IrOp **chain, int n) {
  if (check_gathered(c, x, chain, n)) return -1;
  for (int i = 0; i < n; i++)
    for (const IrUse *w = chain[i]->writes; w; w = w->next)
      if (w->index == IR_IDX_DIV && !per_row_output(w->ref.t, chain[i]->pw.row, chain, n))
        return tf_fail(c, &w->loc,
                       "reorder: kernel '%s' writes '%s' per row ([row]) but another kernel of the chain writes it "
                       "per element; coconet gathers a buffer in rows of one length or of one element",
                       chain[i]->pw.kernel, w->ref.t->name);
  IrUse *outs[TF_MAX_CHAIN * 4];
  int k = chain_outputs(x, chain, n, outs, TF_MAX_CHAIN * 4);
  for (int i = 0; i < k; i++)
    if (check_gathered(c, outs[i]->ref.t, chain, n)) return -1;
  return 0;
}

static IrOp *part_clone(TfCtx *c, const IrOp *p, IrPart part, IrSize *grain) {
  IrOp *op = tf_clone(c, p);
  op->span.part = part;
  op->span.grain = grain;
  return op;
}

// The rows a split must keep whole: the row length of the chain's row-wise
// kernels (NULL when it has none). Two row lengths are an error (*grain unset).
static int chain_grain(TfCtx *c, IrOp **chain, int n, IrSize **grain) {
  const IrOp *first = NULL;
  *grain = NULL;
  for (int i = 0; i < n; i++) {
    if (chain[i]->kind != IR_OP_POINTWISE || !chain[i]->pw.row) continue;
    if (first && !ir_size_equal(first->pw.row, chain[i]->pw.row)) {
      tf_fail(c, &chain[i]->loc,
              "reorder: kernel '%s' works on rows of %s elements but kernel '%s' on rows of %s; a split "
              "keeps whole rows of one length on each rank",
              chain[i]->pw.kernel, size_text(c->r, chain[i]->pw.row), first->pw.kernel, size_text(c->r, first->pw.row));
      tf_note(c, &first->loc, "kernel '%s' is here", first->pw.kernel);
      return -1;
    }
    if (!first) first = chain[i];
  }
  if (first) *grain = first->pw.row;
  return 0;
}

// The split of x (ReduceScatter, tail AllReduce, AllGather) in whole rows.
static void split_in_rows(TfCtx *c, const IrTensor *x, const IrOp *ag, IrSize *grain) {
  for (IrOp *op = c->list; op; op = op->next)
    if (op->kind == IR_OP_COLLECTIVE && op->generated && op->coll.out == x && tf_same_chunk(op, ag))
      op->span.grain = grain;
}

// The AllReduce (sum) of a chain kernel's partial sums into acc, on the split's communicator and stream.
static IrOp *sum_allreduce(TfCtx *c, const IrOp *ag, IrTensor *acc) {
  IrOp *ar = tf_collective(c, ag, IR_ALLREDUCE, acc, acc, IR_PART_ALL);
  ar->coll.red = IR_RED_SUM;
  ar->coll.count = acc->count;
  ar->coll.count_text = NULL;
  ar->coll.dtype = acc->type;
  ar->coll.dtype_text = ir_nccl_type_name(acc->type);
  ar->span.grain = NULL;
  return ar;
}

// RS, tail AR, [AG], chain...  ->  RS, tail AR, chain on slice and tail (each
// sum all-reduced after its kernel; the memsets that zero them as written), AG(x), AG(outputs).
static IrOp *rebuild(TfCtx *c, IrOp *ag, IrOp **chain, int n, IrSize *grain, IrOp ***last_next) {
  IrOp *head = NULL, **tail = &head;
  IrOp *rest = chain[n - 1]->next;
  for (int i = 0; i < n; i++) {
    if (chain[i]->kind == IR_OP_MEMSET) {
      *tail = tf_clone(c, chain[i]);
      tail = &(*tail)->next;
      continue;
    }
    *tail = part_clone(c, chain[i], IR_PART_SLICE, grain);
    tail = &(*tail)->next;
    *tail = part_clone(c, chain[i], IR_PART_TAIL, grain);
    tail = &(*tail)->next;
    for (const IrUse *w = chain[i]->writes; w; w = w->next) {
      if (!ir_pw_sums_into(chain[i], w->ref.t)) continue;
      *tail = sum_allreduce(c, ag, w->ref.t);
      tail = &(*tail)->next;
    }
  }
  *tail = ag;
  tail = &ag->next;
  IrUse *outs[TF_MAX_CHAIN * 4];
  int k = chain_outputs(ag->coll.out, chain, n, outs, TF_MAX_CHAIN * 4);
  for (int i = 0; i < k; i++) {
    IrTensor *t = outs[i]->ref.t;
    IrOp *g = tf_collective(c, ag, IR_ALLGATHER, t, t, IR_PART_BODY);
    g->coll.dtype = t->type;
    g->coll.dtype_text = ir_nccl_type_name(t->type);
    if (outs[i]->index == IR_IDX_DIV) {
      // A per-row output: one element per row, split like the rows (rows / N each).
      g->coll.count = t->count;
      g->coll.count_text = NULL;
      g->span.grain = NULL;
    }
    *tail = g;
    tail = &g->next;
  }
  *tail = rest;
  *last_next = tail;
  return head;
}

// "'norm2' and 'nonzero'": the buffers kernel p sums into.
static char *sum_names(IrRegion *r, const IrOp *p) {
  char *out = "";
  int k = 0, total = 0;
  for (const IrUse *w = p->writes; w; w = w->next) total += ir_pw_sums_into(p, w->ref.t);
  for (const IrUse *w = p->writes; w; w = w->next)
    if (ir_pw_sums_into(p, w->ref.t)) {
      k++;
      out = ir_printf(r, "%s%s'%s'", out, k == 1 ? "" : k == total ? " and " : ", ", w->ref.t->name);
    }
  return out;
}

static void explain_reorder(TfCtx *c, const IrTensor *x, IrOp **chain, int n) {
  for (int i = 0; i < n; i++) {
    const IrOp *p = chain[i];
    const IrStmt *sum = ir_pw_reduction(p);
    if (p->kind == IR_OP_MEMSET)
      tf_step(c, IR_CL_REORDER, "reorder: the cudaMemsetAsync of '%s' (%s:%u:%u) stays where it is: it zeroes the "
              "sum kernel '%s' computes", p->memset.dst->name, p->loc.file ? p->loc.file : "?", p->loc.line, p->loc.col,
              sum_kernel_of(p)->pw.kernel);
    else if (sum)
      tf_step(c, IR_CL_REORDER,
              "reorder: kernel '%s' (%s:%u:%u) sums into %s (atomicAdd) on this rank's slice of '%s' (rank 0 also "
              "adds the tail); an AllReduce (sum) of each right after it adds the ranks' partial sums: the same "
              "sums in another order (floating-point ones differ from the program as written only by rounding)",
              p->pw.kernel, p->loc.file ? p->loc.file : "?", p->loc.line, p->loc.col, sum_names(c->r, p), x->name);
    else if (p->pw.row)
      tf_step(c, IR_CL_REORDER,
              "reorder: kernel '%s' (%s:%u:%u) is row-wise (one block per row of %s elements, reads of what "
              "the slice work writes only in the block's own row): it runs as written on this rank's whole "
              "rows of '%s' (and the rows left over) between ReduceScatter and AllGather, which split in rows",
              p->pw.kernel, p->loc.file ? p->loc.file : "?", p->loc.line, p->loc.col, size_text(c->r, p->pw.row),
              x->name);
    else
      tf_step(c, IR_CL_REORDER,
              "reorder: kernel '%s' (%s:%u:%u) runs on this rank's slice of '%s' (and the tail) "
              "between ReduceScatter and AllGather: same count, reads of what the slice work "
              "writes only at [i]",
              p->pw.kernel, p->loc.file ? p->loc.file : "?", p->loc.line, p->loc.col, x->name);
  }
  IrUse *outs[TF_MAX_CHAIN * 4];
  int k = chain_outputs(x, chain, n, outs, TF_MAX_CHAIN * 4);
  for (int i = 0; i < k; i++) {
    const IrTensor *t = outs[i]->ref.t;
    tf_step(c, IR_CL_REORDER, "reorder: '%s' is %s", t->name,
            t->shard ? "shard: not gathered" : t->scratch ? "scratch: not gathered"
                                             : "replicated: all-gathered after the slice work");
  }
}

static bool is_split_gather(const IrOp *prev, const IrOp *op) {
  return op->kind == IR_OP_COLLECTIVE && op->generated && op->coll.kind == IR_ALLGATHER && prev &&
         prev->kind == IR_OP_COLLECTIVE && prev->generated && prev->coll.kind == IR_ALLREDUCE &&
         prev->span.part == IR_PART_TAIL;
}

// Where the chain stops: the first statement after an AllReduce of r that is
// not a kernel launch (a statement coconet does not see into, a copy, a GEMM).
static void note_next(const IrRegion *r) {
  bool after = false;
  for (const IrOp *op = r->ops; op; op = op->next) {
    if (op->kind == IR_OP_COLLECTIVE && op->coll.kind == IR_ALLREDUCE) {
      after = true;
      continue;
    }
    if (!after || op->kind == IR_OP_POINTWISE) continue;
    if (op->kind == IR_OP_OPAQUE && op->why_not_check)
      diag_note(&op->loc, "the AllReduce is followed by '%s', a statement coconet does not see into (nor reads as "
                          "an error check: %s)", op->text, op->why_not_check);
    else if (op->kind == IR_OP_OPAQUE)
      diag_note(&op->loc, "the AllReduce is followed by '%s', a statement coconet does not see into", op->text);
    else
      diag_note(&op->loc, "the AllReduce is followed by '%s', not a kernel launch", ir_op_title(op));
    return;
  }
}

int tf_reorder(TfCtx *c, const IrClause *cl) {
  if (!c->split)
    return tf_fail(c, &cl->loc,
                   "reorder: needs split before it (reorder moves kernels between the "
                   "ReduceScatter and the AllGather that split creates)");
  int moved = 0;
  IrOp *prev = NULL;
  for (IrOp **pp = &c->list; *pp; prev = *pp, pp = &(*pp)->next) {
    IrOp *ag = *pp;
    if (!is_split_gather(prev, ag)) continue;
    IrOp *chain[TF_MAX_CHAIN];
    int n = tf_chain(ag, ag->coll.out, chain, TF_MAX_CHAIN);
    if (n == 0) continue;
    for (int i = 0; i < n; i++)
      if (tf_check_slice(c, "reorder", chain[i], ag, chain, n, true)) return -1;
    if (check_sums(c, chain, n) || check_gathers(c, ag->coll.out, chain, n)) return -1;
    IrSize *grain;
    if (chain_grain(c, chain, n, &grain)) return -1;
    explain_reorder(c, ag->coll.out, chain, n);
    split_in_rows(c, ag->coll.out, ag, grain);
    IrOp **last_next;
    *pp = rebuild(c, ag, chain, n, grain, &last_next);
    moved += n;
    while (&(*pp)->next != last_next) pp = &(*pp)->next;
  }
  if (moved == 0) {
    tf_fail(c, &cl->loc,
            "reorder: no pointwise kernel consumes the result of a split AllReduce; there "
            "is nothing to move between ReduceScatter and AllGather");
    if (!c->quiet) note_next(c->r);
    if (!c->quiet) ir_note_opaque(c->r);
    return -1;
  }
  c->reorder = true;
  return 0;
}
