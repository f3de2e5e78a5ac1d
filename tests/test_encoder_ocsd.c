/*
 * Encoder acceptance against OpenCSD, a decoder nobody here wrote: every
 * vector program x both protocols x option sets is run in the simulator,
 * encoded, written as a snapshot, and decoded by trc_pkt_lister -decode
 * (OpenCSD 1.3.3).  Its instruction ranges must give back the ground
 * truth instruction for instruction (address, ISA, size; E/N where the
 * protocol states it), all of it where the configuration leaves no gaps
 * (the ViewInst filter's gaps are known exactly), and in order within
 * each trace-on segment where FIFO overflow loses trace.
 *
 * Where OpenCSD 1.3.3 is known to be wrong the mismatch is checked to be
 * exactly that and counted apart (docs/opencsd-bugs.md; each bug is
 * proved with a minimal snapshot in tests/test_ocsd_bugs.c): ETMv3 loses
 * a BLX(imm) ISA change across P-headers (protocol-notes 4.4), and it
 * drops a Cancel unless the cancelled atom's range was alone in its
 * element list (modelled packet by packet in ocsd_model below, so a
 * cancelled instruction is accepted in OpenCSD's output only where
 * OpenCSD's own code cannot drop it).
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tb_test.h"
#include "tracebench/encoder.h"
#include "tracebench/sim.h"

typedef struct {
    uint32_t addr;
    uint8_t size, isa, wp, failed, blx_switch;
    uint8_t cancelled;
    uint8_t ocsd_keeps; /* cancelled, but OpenCSD 1.3.3 will not drop it */
    uint8_t after_exc;  /* an exception came before it: its vector's branch
                         * address is in the trace */
    uint64_t seq;
} tinsn;

/* OpenCSD 1.3.3's ETMv3 output element list, as far as its cancel
 * handling goes (docs/opencsd-bugs.md, bug 2).  Its decoder holds back
 * ("pends") a P-header's last instruction range so that a following
 * branch packet with Cancel can delete it, but the hold only takes when
 * the list has no other element at that moment: the test in its
 * pendLastNElem() is "at least as many to pend as elements in the list".
 * Elements a packet leaves pended are committed at the next packet but
 * sent only after it, so they count too.  The list is kept here as a
 * string of element kinds: 'R' instruction range, 'X' anything else. */
typedef struct {
    char list[64];
    unsigned len, npend;
} ocsd_model;

static void model_add(ocsd_model *m, char kind)
{
    if (m->len < sizeof m->list)
        m->list[m->len++] = kind;
}

/* One packet as OpenCSD's ETMv3 decoder takes it; returns 1 when it is a
 * branch with Cancel that OpenCSD will not apply, 0 otherwise. */
static int model_packet(ocsd_model *m, const tb_packet *p, bool ca)
{
    int ignored = 0;

    if (p->kind == TB_PKT_BRANCH) {
        if (p->has_exc && p->exc_cancel) {
            /* Deletes the pended elements, if any; the pend count is
             * not cleared, so what comes next stays held too. */
            bool range = false;
            for (unsigned i = m->len >= m->npend ? m->len - m->npend : 0; i < m->len; i++)
                range |= m->list[i] == 'R';
            ignored = !range;
            m->len = m->len >= m->npend ? m->len - m->npend : 0;
        } else {
            m->npend = 0;
        }
        if (p->has_exc && p->exc_num)
            model_add(m, 'X');
    } else {
        m->npend = 0; /* any other packet commits first */
        switch (p->kind) {
        case TB_PKT_ATOM:
            if (p->atom_count)
                for (unsigned i = 0; i < p->atom_count; i++)
                    model_add(m, 'R');
            else if (ca)
                model_add(m, 'X'); /* W only: a cycle-count element */
            if (p->atom_count && m->len <= 1)
                m->npend = 1;
            break;
        case TB_PKT_EXC_RETURN: {
            /* Holds the return and the range before it (A/R profile). */
            unsigned want;
            model_add(m, 'X');
            want = m->len > 1 && m->list[m->len - 2] == 'R' ? 2 : 1;
            if (want >= m->len)
                m->npend = want;
            break;
        }
        default:
            break; /* its elements, if any, go out with the rest */
        }
    }
    /* Everything not pended is sent. */
    if (m->len > m->npend) {
        unsigned keep = m->npend;
        memmove(m->list, m->list + m->len - keep, keep);
        m->len = keep;
    }
    return ignored;
}

typedef struct {
    tinsn *v;
    size_t n, cap;
    tb_encoder *enc;
    const tb_encoder_opts *o;
    uint8_t *trace;
    size_t tlen, tcap;
    /* Truth index of the instruction the encoder handles now (it runs
     * one record behind), and where each overflow I-sync resumed. */
    size_t cur_idx;
    size_t resume[4096];
    unsigned n_resume;
    ocsd_model model;
    unsigned cancels, cancels_ignored;
    bool exc_seen;       /* an exception since the last instruction */
} run_ctx;

static int on_pkt(void *ctx, const tb_packet *p)
{
    run_ctx *r = ctx;

    if (p->kind == TB_PKT_ISYNC && p->reason == TB_ISYNC_OVERFLOW &&
        r->n_resume < sizeof r->resume / sizeof r->resume[0])
        r->resume[r->n_resume++] = r->cur_idx;
    if (p->protocol == TB_PROTO_ETMV3 &&
        model_packet(&r->model, p, r->o->cycle_accurate) && r->n &&
        r->v[r->n - 1].cancelled)
        /* The exception record that set Cancel came right after the
         * instruction it cancels (on_rec), so that is the last one. */
        r->v[r->n - 1].ocsd_keeps = 1;
    if (p->kind == TB_PKT_BRANCH && p->has_exc && p->exc_cancel) {
        r->cancels++;
        r->cancels_ignored += r->n && r->v[r->n - 1].ocsd_keeps;
    }
    return 0;
}

/* The FIFO overflowed after the trace of instruction shown_seq went out
 * (tb_overflow_cb): if an exception cancelled it, the packet with the
 * Cancel went with the lost trace, so every decoder shows it executed
 * (as the round trip's tb_compare_mark_lost). */
static void on_overflow(void *ctx, bool have_shown, uint64_t shown_seq)
{
    run_ctx *r = ctx;

    for (size_t i = r->n; have_shown && i-- > 0;)
        if (r->v[i].seq == shown_seq) {
            r->v[i].cancelled = 0;
            break;
        }
}

static int sink(void *ctx, const uint8_t *d, size_t len)
{
    run_ctx *r = ctx;

    if (r->tlen + len > r->tcap) {
        r->tcap = (r->tlen + len) * 2 + 4096;
        r->trace = realloc(r->trace, r->tcap);
        cr_assert(r->trace);
    }
    memcpy(r->trace + r->tlen, d, len);
    r->tlen += len;
    return 0;
}

static int on_rec(void *ctx, const tb_exec_record *rec)
{
    run_ctx *r = ctx;
    size_t idx = r->n;
    int rc;

    if (rec->kind == TB_REC_INSN && tb_encoder_in_filter(r->o, rec->u.insn.addr)) {
        if (r->n == r->cap) {
            r->cap = r->cap * 2 + 1024;
            r->v = realloc(r->v, r->cap * sizeof *r->v);
            cr_assert(r->v);
        }
        r->v[r->n++] = (tinsn){rec->u.insn.addr, rec->u.insn.size, rec->u.insn.isa,
                               rec->u.insn.wp_class,
                               (rec->u.insn.flags & TB_INSN_COND_FAILED) != 0,
                               rec->u.insn.wp_class == TB_WP_DIRECT_LINK &&
                                   rec->u.insn.isa != rec->u.insn.next_isa &&
                                   !(rec->u.insn.flags & TB_INSN_COND_FAILED),
                               0, 0, r->exc_seen, rec->seq};
        r->exc_seen = false;
    } else if (rec->kind == TB_REC_EXCEPTION && rec->u.exc.cancelled && r->n &&
               r->v[r->n - 1].addr == rec->u.exc.pref_return) {
        /* Did not complete: cancelled (ETMv3) or never traced (PTM). */
        r->v[r->n - 1].cancelled = 1;
    }
    if (rec->kind == TB_REC_EXCEPTION)
        r->exc_seen = true;
    rc = tb_encoder_push(r->enc, rec) < 0;
    if (rec->kind == TB_REC_INSN)
        r->cur_idx = idx; /* handled when the next record comes */
    return rc;
}

typedef struct {
    unsigned cases, insns_checked, mismatches, ocsd_blx_bug, gaps_truth_lost;
    unsigned sim_failed, ocsd_blx_lost, overflow_cases, ocsd_cancel_bug;
    unsigned cancels, cancels_ignored;
    unsigned keeps_unseen; /* ocsd_keeps instructions in skipped truth */
} totals;

/* Compares trc_pkt_lister's ranges with the truth.  gaps: overflow may
 * lose trace, so a segment may start further on. */
static unsigned compare(const char *log, const run_ctx *r, bool ptm, bool gaps,
                        const char *name, totals *t)
{
    FILE *f = fopen(log, "r");
    char line[1024];
    size_t p = 0;
    unsigned next_resume = 0;
    bool resync = false;
    unsigned bad = 0, checked = 0;

    cr_assert(f, "no OpenCSD log for %s", name);
    while (fgets(line, sizeof line, f) && bad < 3) {
        const char *s = strstr(line, "OCSD_GEN_TRC_ELEM_INSTR_RANGE(exec range=");
        unsigned start, end, num, sz;
        char isa[8], atom;

        if (strstr(line, "OCSD_GEN_TRC_ELEM_TRACE_ON") && strstr(line, "[overflow]")) {
            /* Resumes exactly where the encoder's overflow I-sync did. */
            size_t at = next_resume < r->n_resume ? r->resume[next_resume++] : (size_t)-1;
            if (at == (size_t)-1 || at < p) {
                cr_log_error("%s: overflow trace-on with no matching I-sync", name);
                bad++;
                continue;
            }
            t->gaps_truth_lost += (unsigned)(at - p);
            for (size_t i = p; i < at; i++)
                t->keeps_unseen += r->v[i].cancelled && r->v[i].ocsd_keeps;
            p = at;
            resync = false;
        }
        if (!s)
            continue;
        if (sscanf(s, "OCSD_GEN_TRC_ELEM_INSTR_RANGE(exec range=0x%x:[0x%x] num_i(%u) "
                      "last_sz(%u) (ISA=%7[^)]) %c", &start, &end, &num, &sz, isa,
                   &atom) != 6) {
            cr_log_error("%s: unparsed line %s", name, line);
            bad++;
            continue;
        }
        if (resync) {
            /* OpenCSD is lost until an address packet: take up again at
             * the first range that starts after an indirect branch or an
             * exception (its branch to the vector). */
            size_t q = p;
            tb_isa sisa = strcmp(isa, "A32") == 0 ? TB_ISA_ARM : TB_ISA_THUMB;
            while (q < r->n && !(q > 0 && r->v[q].addr == start && r->v[q].isa == sisa &&
                                 (r->v[q - 1].wp == TB_WP_INDIRECT ||
                                  r->v[q - 1].wp == TB_WP_INDIRECT_LINK || r->v[q].after_exc)))
                q++;
            if (q >= r->n)
                continue;
            t->ocsd_blx_lost += (unsigned)(q - p);
            for (size_t i = p; i < q; i++)
                t->keeps_unseen += r->v[i].cancelled && r->v[i].ocsd_keeps;
            p = q;
            resync = false;
        }
        for (unsigned k = 0; k < num; k++, p++) {
            uint32_t want = k == 0 ? start : r->v[p - 1].addr + r->v[p - 1].size;
            const tinsn *ti;

            /* A cancelled instruction is not in the decode, except
             * where OpenCSD 1.3.3 drops the Cancel (ocsd_model above;
             * tests/test_ocsd_bugs.c proves both ways it happens): there
             * it must show exactly that instruction, and nowhere else. */
            while (p < r->n && r->v[p].cancelled) {
                if (r->v[p].ocsd_keeps) {
                    if (r->v[p].addr == want && k == 0 && num == 1) {
                        t->ocsd_cancel_bug++;
                        break;
                    }
                    cr_log_error("%s: cancelled 0x%x: OpenCSD should have kept it but "
                                 "gives 0x%x", name, r->v[p].addr, want);
                    bad++;
                } else if (r->v[p].addr == want && k == 0) {
                    /* Would match the cancelled instruction: OpenCSD
                     * ignored a Cancel the model says it applies. */
                    cr_log_error("%s: cancelled 0x%x decoded by OpenCSD", name, want);
                    bad++;
                }
                p++;
            }
            ti = p < r->n ? &r->v[p] : NULL;
            if (ti && ti->cancelled)
                continue;
            tb_isa oisa = strcmp(isa, "A32") == 0 ? TB_ISA_ARM : TB_ISA_THUMB;
            bool last = k + 1 == num;

            if (!ti || ti->addr != want || ti->isa != oisa ||
                (last && ti->addr + ti->size != end)) {
                /* OpenCSD 1.3.3 decodes the atoms after a BLX(imm) at a
                 * P-header end in the old ISA (protocol-notes 4.4.1): the
                 * truth has a BLX ISA switch with no indirect branch since,
                 * and OpenCSD names the old ISA.  test_encoder.c proves
                 * it with a minimal snapshot. */
                if (!ptm && ti && ti->addr == want && ti->isa != oisa && k == 0) {
                    size_t b = p;
                    while (b > 0 && !r->v[b - 1].blx_switch &&
                           r->v[b - 1].wp != TB_WP_INDIRECT &&
                           r->v[b - 1].wp != TB_WP_INDIRECT_LINK)
                        b--;
                    if (b > 0 && r->v[b - 1].blx_switch) {
                        t->ocsd_blx_bug++;
                        resync = true;
                        break;
                    }
                }
                cr_log_error("%s: OpenCSD range 0x%x:[0x%x] n=%u %s insn %u: truth #%zu "
                             "is 0x%x size %u isa %u", name, start, end, num, isa, k, p,
                             ti ? ti->addr : 0, ti ? ti->size : 0, ti ? ti->isa : 9);
                bad++;
                break;
            }
            if (resync)
                break;
            /* E/N: every ETMv3 instruction has an atom; in PTM only the
             * range's last, a waypoint (a WP update's last is no atom). */
            if (last && (!ptm || (ti->wp != TB_WP_NONE && ti->wp != TB_WP_BARRIER)) &&
                (atom == 'N') != (ti->failed != 0)) {
                cr_log_error("%s: 0x%x: OpenCSD says %c, truth %c", name, ti->addr, atom,
                             ti->failed ? 'N' : 'E');
                bad++;
            }
            checked++;
        }
    }
    fclose(f);
    while (p < r->n && r->v[p].cancelled)
        p++;
    if (!bad && !gaps && !resync && p != r->n && !t->ocsd_blx_lost) {
        cr_log_error("%s: OpenCSD gave %zu of %zu instructions", name, p, r->n);
        bad++;
    }
    if (!bad && gaps && checked == 0) {
        cr_log_error("%s: nothing decoded", name);
        bad++;
    }
    t->insns_checked += checked;
    return bad;
}

static bool have_lister(void)
{
    return system("trc_pkt_lister -help >/dev/null 2>&1") != -1 &&
           access("/usr/bin/trc_pkt_lister", X_OK) == 0;
}

static void run_case(const char *prog, tb_protocol proto, const char *opts, bool raw,
                     totals *t)
{
    char elf[1024], ini[1024], dir[256], log[300], cmd[1024], err[256], name[600];
    tb_encoder_opts o;
    tb_scenario sc;
    static run_ctx r;
    tb_sim_result res;
    tb_snap_region regs[8];
    uint8_t *img, *store = NULL;
    size_t ilen;
    int nr, rc;
    tb_sim *s;
    const tb_encoder_stats *st;
    bool ptm = proto == TB_PROTO_PTM;

    snprintf(name, sizeof name, "%s/%s/%s%s", prog, ptm ? "ptm" : "etmv3",
             *opts ? opts : "plain", raw ? "/raw" : "");
    snprintf(elf, sizeof elf, "%s/vectors/programs/%s.elf", TB_BINARY_DIR, prog);
    snprintf(ini, sizeof ini, "%s/vectors/programs/%s.ini", TB_SOURCE_DIR, prog);
    img = tb_test_read_file(elf, &ilen);
    cr_assert(img, "%s not built", elf);
    nr = tb_encoder_elf_regions(img, ilen, regs, 8, &store);
    cr_assert_gt(nr, 0);
    tb_encoder_opts_init(&o, proto);
    cr_assert_eq(tb_encoder_opts_parse(&o, strcmp(opts, "filter") ? opts : "", err,
                                       sizeof err), 0, "%s", err);
    if (!strcmp(opts, "filter")) {
        /* Trace the middle half of the image only. */
        o.n_ranges = 1;
        o.ranges[0] = (tb_encoder_range){regs[0].address + (uint32_t)regs[0].len / 4,
                                         regs[0].address + (uint32_t)regs[0].len * 3 / 4,
                                         false};
    }
    tb_scenario_init(&sc);
    cr_assert_eq(tb_scenario_load(&sc, ini, err, sizeof err), 0, "%s", err);
    if (!sc.max_insns || sc.max_insns > 12000)
        sc.max_insns = 12000; /* several sync periods; keeps the file fast */
    memset(&r, 0, sizeof r);
    r.o = &o;
    r.enc = tb_encoder_new(&o, sink, &r);
    cr_assert(r.enc, "%s: encoder", name);
    tb_encoder_set_packet_cb(r.enc, on_pkt, &r);
    tb_encoder_set_overflow_cb(r.enc, on_overflow, &r);
    s = tb_sim_new(sc.cpu);
    cr_assert(s);
    cr_assert_eq(tb_sim_load_elf(s, img, ilen), 0);
    cr_assert_eq(tb_sim_set_scenario(s, &sc), 0);
    rc = tb_sim_run(s, on_rec, &r, &res);
    if (rc < 0 && !tb_encoder_error(r.enc)) {
        t->sim_failed++;
        cr_assert_fail("%s: simulator: %s (%s)", name, tb_err_str(rc),
                       tb_sim_errmsg(s));
    }
    cr_assert_eq(tb_encoder_error(r.enc), 0, "%s: encoder error %s", name,
                 tb_err_str(tb_encoder_error(r.enc)));
    cr_assert_eq(tb_encoder_finish(r.enc), 0);
    st = tb_encoder_get_stats(r.enc);
    snprintf(dir, sizeof dir, "/tmp/tb_enc_%d", (int)getpid());
    cr_assert_eq(tb_encoder_write_snapshot(dir, tb_encoder_get_config(r.enc), regs,
                                           (size_t)nr, r.trace, r.tlen, !raw, err,
                                           sizeof err), 0, "%s", err);
    snprintf(log, sizeof log, "%s/ocsd.ppl", dir);
    remove(log); /* trc_pkt_lister appends to an existing log */
    snprintf(cmd, sizeof cmd,
             "trc_pkt_lister -ss_dir %s -id 0x%x -decode -no_time_print -logfilename %s "
             ">/dev/null 2>&1", dir, o.trace_id, log);
    cr_assert_eq(system(cmd), 0, "%s: trc_pkt_lister failed", name);
    t->cases++;
    {
        bool gaps = o.fifo_depth != 0 && st->overflows;
        unsigned bad = compare(log, &r, ptm, gaps, name, t);

        t->mismatches += bad;
        t->cancels += r.cancels;
        t->cancels_ignored += r.cancels_ignored;
        cr_expect_eq(bad, 0, "%s: %u mismatches (trace kept in %s)", name, bad, dir);
        if (o.fifo_depth && st->overflows)
            t->overflow_cases++;
        if (!bad) {
            snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
            cr_assert_eq(system(cmd), 0);
        }
    }
    tb_sim_free(s);
    tb_encoder_free(r.enc);
    free(r.v);
    free(r.trace);
    free(img);
    free(store);
}

static const char *const etm_sets[] = {
    "", "ca", "ts", "ca,ts", "ctxid=4,vmid", "bb", "alt", "v=3", "v=3,ca",
    "ca,bb,ctxid=2", "sync=64", "filter", "fifo=48:1/8", "fifo=64:1/4,ca,ts",
};
static const char *const ptm_sets[] = {
    "", "ca", "ts", "ca,ts", "ctxid=4,vmid", "bb", "rs", "rs,ca", "v=0,ts",
    "rs,bb", "sync=64,rs", "filter", "fifo=48:1/64", "fifo=64:1/8,ca,ts,rs",
};

static void run_matrix(tb_protocol proto)
{
    const char *const *sets = proto == TB_PROTO_PTM ? ptm_sets : etm_sets;
    size_t nsets = proto == TB_PROTO_PTM ? sizeof ptm_sets / sizeof *ptm_sets
                                         : sizeof etm_sets / sizeof *etm_sets;
    char pdir[1024];
    struct dirent *de;
    DIR *d;
    totals t = {0};

    if (!have_lister()) {
        if (getenv("CI") && !strcmp(getenv("CI"), "true"))
            cr_assert_fail("trc_pkt_lister (libopencsd-bin) is required under CI");
        fprintf(stderr, "\n*** SKIPPED: trc_pkt_lister not available ***\n\n");
        cr_skip_test("trc_pkt_lister not available");
    }
    snprintf(pdir, sizeof pdir, "%s/vectors/programs", TB_SOURCE_DIR);
    d = opendir(pdir);
    cr_assert(d);
    while ((de = readdir(d))) {
        char prog[256];
        size_t l = strlen(de->d_name);

        if (l < 5 || strcmp(de->d_name + l - 4, ".ini") || l - 4 >= sizeof prog)
            continue;
        memcpy(prog, de->d_name, l - 4);
        prog[l - 4] = 0;
        /* smc rewrites its own code: the simulator's branch check refuses
         * it by design (tests/test_sim.c proves that), so it has no truth
         * to encode.  Every other program must run. */
        if (!strcmp(prog, "smc"))
            continue;
        for (size_t i = 0; i < nsets; i++)
            run_case(prog, proto, sets[i], i == 0, &t);
    }
    closedir(d);
    fprintf(stderr,
            "encoder/OpenCSD matrix %s: %u cases, %u instructions checked, %u mismatches, "
            "%u OpenCSD BLX/P-header bug hits (%u truth insns skipped), %u truth insns in overflow gaps, "
            "%u OpenCSD ignored ETMv3 Cancels, %u runs the simulator refused\n",
            proto == TB_PROTO_PTM ? "PTM" : "ETMv3", t.cases, t.insns_checked,
            t.mismatches, t.ocsd_blx_bug, t.ocsd_blx_lost, t.gaps_truth_lost, t.ocsd_cancel_bug, t.sim_failed);
    fprintf(stderr, "  %u cases overflowed the small FIFO\n", t.overflow_cases);
    if (proto == TB_PROTO_ETMV3) {
        /* Both sides of the cancel model must be exercised: Cancels
         * OpenCSD applies and ones its element list drops. */
        fprintf(stderr, "  %u ETMv3 Cancels sent, %u of them dropped by OpenCSD as modelled\n",
                t.cancels, t.cancels_ignored);
        cr_expect_gt(t.cancels_ignored, 0);
        cr_expect_gt(t.cancels, t.cancels_ignored);
        /* Each dropped Cancel is seen, unless its instruction lies in
         * truth the comparison skipped (an overflow gap, or OpenCSD lost
         * after its BLX bug: exc_mix's Thumb part). */
        cr_expect_eq(t.ocsd_cancel_bug + t.keeps_unseen, t.cancels_ignored,
                     "%u seen + %u skipped != %u dropped", t.ocsd_cancel_bug, t.keeps_unseen,
                     t.cancels_ignored);
    }
    cr_expect_gt(t.cases, 100);
    cr_expect_gt(t.overflow_cases, 3);
    cr_expect_eq(t.mismatches, 0);
}

Test(encoder_ocsd, ptm_matrix, .timeout = 600)
{
    run_matrix(TB_PROTO_PTM);
}

Test(encoder_ocsd, etmv3_matrix, .timeout = 600)
{
    run_matrix(TB_PROTO_ETMV3);
}
