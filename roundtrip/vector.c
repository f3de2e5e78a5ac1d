/* The conformance vectors' runs (roundtrip/vector.h): the list, one
 * vector generated from its entry, the --check tree comparison.
 *
 * A vector is a round trip (sim -> encoder -> our decoder -> comparator)
 * that writes OUT/NAME/ (OpenCSD snapshot, truth.txt), then our decode in
 * addr format (decode.addr) and README.md.  A section with program2 has
 * two trace sources in one CoreSight buffer (run_vector2): per-source
 * files are named by trace ID.  Every vector must round-trip.  Output is
 * deterministic: no times, paths or host names, so regenerating gives
 * byte-identical files.
 */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../common/ini.h"
#include "../common/strf.h"
#include "tracebench/encoder.h"
#include "tracebench/frame.h"
#include "tracebench/roundtrip.h"
#include "tracebench/sim.h"
#include "tracebench/snapshot.h"
#include "tracebench/types.h"
#include "vector.h"

typedef tb_vector vec;

/* The list's string keys and where each goes in a vec. */
typedef struct vec_key {
    const char *key;
    size_t off, size;
} vec_key;

#define VEC_KEY(f) {#f, offsetof(vec, f), sizeof ((vec *)0)->f}
static const vec_key vec_keys[] = {
    VEC_KEY(program),  VEC_KEY(scenario),  VEC_KEY(protocol), VEC_KEY(options),
    VEC_KEY(buffer),   VEC_KEY(opencsd),   VEC_KEY(openocd),  VEC_KEY(about),
    VEC_KEY(program2),
    VEC_KEY(scenario2), VEC_KEY(protocol2), VEC_KEY(options2),
};
#undef VEC_KEY

static const vec_key *find_key(const char *k)
{
    for (size_t i = 0; i < sizeof vec_keys / sizeof vec_keys[0]; i++)
        if (!strcmp(k, vec_keys[i].key))
            return &vec_keys[i];
    return NULL;
}

/* Where tb_vector_list_load's reader puts each line. */
typedef struct list_ctx {
    vec *v;
    size_t n;
} list_ctx;

static int list_line(void *ctx, const char *section, const char *k, const char *val,
                     unsigned line, char *err, size_t errlen)
{
    list_ctx *l = ctx;
    vec *cur;
    const vec_key *vk;

    if (!k) { /* a section: a new vector */
        if (l->n == TB_VECTOR_MAX) {
            snprintf(err, errlen, "line %u: more than %d vectors: raise TB_VECTOR_MAX in "
                     "roundtrip/vector.h (and MAX_VEC in tests/test_vectors.c)", line,
                     TB_VECTOR_MAX);
            return TB_ERR_LIMIT;
        }
        if (strlen(section) >= sizeof l->v->name) {
            snprintf(err, errlen, "line %u: vector name too long", line);
            return TB_ERR_FORMAT;
        }
        for (size_t i = 0; i < l->n; i++)
            if (!strcmp(l->v[i].name, section)) {
                snprintf(err, errlen, "line %u: duplicate vector %s", line, section);
                return TB_ERR_FORMAT;
            }
        cur = &l->v[l->n++];
        memset(cur, 0, sizeof *cur);
        strcpy(cur->name, section);
        strcpy(cur->buffer, "coresight");
        return 0;
    }
    cur = &l->v[l->n - 1];
    vk = find_key(k);
    if (vk) {
        if (strlen(val) >= vk->size) {
            snprintf(err, errlen, "line %u: value of %s too long (at most %zu characters)",
                     line, k, vk->size - 1);
            return TB_ERR_FORMAT;
        }
        strcpy((char *)cur + vk->off, val);
    } else if (!strcmp(k, "max_insns") || !strcmp(k, "max_insns2")) {
        char *end;
        uint64_t *dst = k[9] ? &cur->max_insns2 : &cur->max_insns;

        errno = 0;
        *dst = strtoull(val, &end, 0);
        if (errno || *end || !*val) {
            snprintf(err, errlen, "line %u: bad value for %s: '%s'", line, k, val);
            return TB_ERR_FORMAT;
        }
    } else {
        snprintf(err, errlen, "line %u: unknown key '%s'", line, k);
        return TB_ERR_FORMAT;
    }
    return 0;
}

/* The vector list: INI, one section per vector (vectors/vectors.ini);
 * ';' and '#' start comments only at the start of a line (descriptions
 * hold them). */
int tb_vector_list_load(const char *path, vec *v, size_t *n, char *err, size_t errlen)
{
    list_ctx l = {v, 0};
    char msg[300];
    int r;

    *n = 0;
    if ((r = tb_ini_parse_flags(path, TB_INI_FULL_LINE_COMMENTS, list_line, &l, msg,
                                sizeof msg)) < 0) {
        /* The reader's own messages name the file; the callback's the line. */
        if (!strncmp(msg, "line ", 5))
            tb_strf(err, errlen, "%s:%s", path, msg + 5);
        else
            tb_strf(err, errlen, "%s", msg);
        return r;
    }
    *n = l.n;
    for (size_t i = 0; i < *n; i++) {
        const vec *c = &v[i];

        bool etmv1 = !strcmp(c->protocol, "etmv1");
        bool port = etmv1 || !strcmp(c->protocol, "etmv2");

        if (!c->program[0] ||
            (strcmp(c->protocol, "ptm") && strcmp(c->protocol, "etmv3") && !port) ||
            (strcmp(c->buffer, "coresight") && strcmp(c->buffer, "raw") &&
             strcmp(c->buffer, "tpiu") &&
             (strcmp(c->buffer, "dstream") || !c->program2[0])) ||
            !c->about[0]) {
            tb_strf(err, errlen, "%s: [%s] needs program, protocol "
                 "ptm|etmv3|etmv1|etmv2, buffer coresight|tpiu|raw (dstream with a "
                 "second source) and about", path, c->name);
            return TB_ERR_FORMAT;
        }
        /* ETMv1/ETMv2 is a trace port capture (docs/etmv1.md 2): never
         * CoreSight frames, one source, and OpenCSD has no decoder for it. */
        if (port && (strcmp(c->buffer, "raw") || c->program2[0] || c->opencsd[0])) {
            tb_strf(err, errlen, "%s: [%s] an %s vector needs buffer raw, "
                 "no second source and no opencsd key", path, c->name,
                 c->protocol);
            return TB_ERR_FORMAT;
        }
        if (c->openocd[0] && !etmv1) {
            tb_strf(err, errlen, "%s: [%s] openocd is for etmv1 vectors only",
                 path, c->name);
            return TB_ERR_FORMAT;
        }
        /* Two sources share one buffer: only CoreSight frames carry both. */
        if ((c->program2[0] || c->protocol2[0] || c->options2[0] || c->scenario2[0] ||
             c->max_insns2) &&
            (!c->program2[0] || (strcmp(c->protocol2, "ptm") && strcmp(c->protocol2, "etmv3")) ||
             !strcmp(c->buffer, "raw"))) {
            tb_strf(err, errlen, "%s: [%s] a second source needs program2, "
                 "protocol2 ptm|etmv3 and buffer coresight or dstream", path,
                 c->name);
            return TB_ERR_FORMAT;
        }
    }
    return 0;
}

int tb_vector_make_dirs(const char *path)
{
    char tmp[1024];

    if (strlen(path) >= sizeof tmp)
        return -1;
    strcpy(tmp, path);
    for (char *p = tmp + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = 0;
        if (mkdir(tmp, 0777) < 0 && errno != EEXIST)
            return -1;
        *p = '/';
    }
    if (mkdir(tmp, 0777) < 0 && errno != EEXIST)
        return -1;
    return 0;
}

/* Removes a directory tree (a vector's old output, the --check copy). */
int tb_vector_remove_tree(const char *path)
{
    DIR *d = opendir(path);
    struct dirent *de;
    int r = 0;

    if (!d)
        return errno == ENOENT ? 0 : remove(path);
    while ((de = readdir(d))) {
        char sub[2048];
        struct stat st;

        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
            continue;
        tb_strf(sub, sizeof sub, "%s/%s", path, de->d_name);
        if (lstat(sub, &st) == 0 && S_ISDIR(st.st_mode))
            r |= tb_vector_remove_tree(sub);
        else
            r |= remove(sub);
    }
    closedir(d);
    return r | rmdir(path);
}

static uint64_t file_size(const char *path)
{
    struct stat st;

    return stat(path, &st) == 0 ? (uint64_t)st.st_size : 0;
}

void tb_vector_bits_per_insn(char *buf, size_t len, uint64_t bytes, uint64_t insns)
{
    /* Integer arithmetic: the same digits on every host. */
    uint64_t milli = insns ? bytes * 8 * 1000 / insns : 0;

    tb_strf(buf, len, "%llu.%03llu", (unsigned long long)(milli / 1000),
             (unsigned long long)(milli % 1000));
}

static int write_readme(const char *dir, const vec *v, const tb_rt_result *res,
                        const char *scn_name, tb_sim_cpu cpu)
{
    bool m = tb_sim_cpu_is_m(cpu);
    char path[1024], bpi[32];
    bool etmv1 = !strcmp(v->protocol, "etmv1");
    bool etmv2 = !strcmp(v->protocol, "etmv2");
    FILE *f;

    tb_strf(path, sizeof path, "%s/README.md", dir);
    f = fopen(path, "w");
    if (!f)
        return -1;
    tb_vector_bits_per_insn(bpi, sizeof bpi, v->bytes, v->insns);
    fprintf(f, "# Vector %s\n\n%s.\n\n", v->name, v->about);
    fprintf(f, "| | |\n|---|---|\n");
    fprintf(f, "| program | `%s` (vectors/programs) |\n", v->program);
    fprintf(f, "| scenario | `%s` |\n", scn_name);
    fprintf(f, "| protocol | %s |\n", !strcmp(v->protocol, "ptm")     ? "PTM (PFT)"
                                      : etmv1                         ? "ETMv1"
                                      : etmv2                         ? "ETMv2"
                                      : cpu == TB_SIM_CPU_M4          ? "ETMv3, the ETM-M4 of a "
                                                                        "Cortex-M4 (docs/cortex-m.md)"
                                      : m                             ? "ETMv3, the ETM-M3 of a "
                                                                        "Cortex-M3 (docs/cortex-m.md)"
                                                                      : "ETMv3");
    fprintf(f, "| options | `%s` |\n", v->options[0] ? v->options : "(plain)");
    if (etmv1 || etmv2)
        fprintf(f, "| trace ID | none (ETMv%d has no trace ID) |\n", etmv1 ? 1 : 2);
    else
        fprintf(f, "| trace ID | 0x%02X |\n", v->trace_id);
    fprintf(f, "| buffer | %s (`%s`) |\n",
            etmv1                      ? "ETMv1 trace port capture, a sample per cycle "
                                         "(docs/etmv1.md 2)"
            : etmv2                    ? "ETMv2 trace port capture, a sample per cycle "
                                         "(docs/etmv2.md 2)"
            : !strcmp(v->buffer, "raw") ? "raw source stream"
            : !strcmp(v->buffer, "tpiu") ? "CoreSight frames as a TPIU sends them: FSYNCs "
                                           "between frames, HSYNCs where the port idled "
                                           "(docs/vectors.md)"
                                        : "CoreSight formatted frames",
            etmv1 ? "etmv1_port" : etmv2 ? "etmv2_port"
            : !strcmp(v->buffer, "raw") ? "source_data"
            : !strcmp(v->buffer, "tpiu") ? "tpiu_coresight" : "coresight");
    fprintf(f, "| instruction cap | %llu |\n", (unsigned long long)v->max_insns);
    fprintf(f, "| instructions executed | %llu (stop: %s) |\n",
            (unsigned long long)res->sim.insns, tb_sim_stop_name(res->sim.stop));
    fprintf(f, "| instructions traced | %llu |\n", (unsigned long long)res->enc.traced);
    fprintf(f, "| exceptions | %llu |\n", (unsigned long long)res->sim.exceptions);
    fprintf(f, "| trace bytes | %llu (buffer file %llu) |\n", (unsigned long long)v->bytes,
            (unsigned long long)v->buf_bytes);
    fprintf(f, "| bits per instruction | %s |\n", bpi);
    fprintf(f, "| FIFO overflows | %llu |\n", (unsigned long long)res->enc.overflows);
    fprintf(f, "| round trip | match: %llu instructions checked, %llu exceptions, "
               "%llu contexts, %llu timestamps, %llu cycle checks, %llu untraced |\n",
            (unsigned long long)res->cmp.checked, (unsigned long long)res->cmp.exceptions,
            (unsigned long long)res->cmp.contexts, (unsigned long long)res->cmp.timestamps,
            (unsigned long long)res->cmp.cycle_checks, (unsigned long long)res->cmp.untraced);
    if (etmv1)
        fprintf(f, "| OpenOCD 0.12 `etm analyze` | %s |\n",
                v->openocd[0] ? v->openocd : "lists decode.addr's instructions");
    else if (etmv2)
        fprintf(f, "| independent decoder | none exists (no open ETMv2 decoder was found) |\n");
    else
        fprintf(f, "| OpenCSD 1.3.3 | %s |\n",
                !strcmp(v->opencsd, "tpiu-format-unnamed")
                    ? "decodes it to the ground truth given -tpiu_hsync; the snapshot alone "
                      "it reads as ETB frames (tpiu-format-unnamed, docs/opencsd-bugs.md)"
                : v->opencsd[0] ? v->opencsd
                                : "decodes it to the ground truth");
    fprintf(f, "\n## Files\n\n"
               "- `snapshot.ini`, `trace.ini`, device and core `.ini` files, memory dumps and "
               "the trace buffer: an OpenCSD / DS-5 trace snapshot.\n"
               "- `truth.txt`: the simulator's ground truth, one record per line "
               "(`tb_truth_format_text`).\n"
               "- `decode.addr`: the expected decode, one executed instruction per line "
               "(address, ISA, E/N) and `# gap WHY` lines where trace was off or lost "
               "(docs/vectors.md).  It is derived from `truth.txt` alone by "
               "`vectors/expect.c` (tb_expect), and CI checks that tracebench's "
               "`decode --format addr` equals it.%s\n",
            m ? "  A Cortex-M vector's also has `# exception N NAME` lines (N the ARMv7-M "
                "exception number; `tail-chain` when entered at a return, without a new "
                "frame) and `# return` lines where the trace shows them." : "");
    if (res->enc.overflows)
        fprintf(f, "- `overflow.txt`: where FIFO overflows lost trace and where it "
                   "resumed (truth seqs).\n");
    if (v->n_ranges)
        fprintf(f, "- `filter.txt`: the ViewInst address ranges.\n");
    fprintf(f, "\n");
    if (etmv2)
        fprintf(f, "## UNVERIFIED encoding\n\n"
                   "This capture rests on the unverified ETMv2 values of docs/etmv2.md 6 "
                   "(include/tracebench/etmv2.h): the PIPESTAT codes (IHI0014Q Table 6.1), "
                   "the TFO header bytes (Table 6.6) and the TFO value layout were not found "
                   "in any public source.  Its bytes are tracebench's model, not the spec; "
                   "decode.addr, derived from the ground truth, does not depend on them.\n\n");
    if (etmv2 && strstr(v->options, "data="))
        /* docs/etmv2.md 9: the data packet headers are confirmed (Table
         * 6.2), their sizes and address layout are not. */
        fprintf(f, "Its data packets rest on U8 of that table too: the SS value sizes and "
                   "the data address layout (IHI0014Q Figure 6.3) were not found; the "
                   "header bytes (Table 6.2) were.\n\n");
    if (etmv1 || etmv2)
        /* OpenCSD has no ETMv1/v2 decoder; OpenOCD reads ETMv1 captures in
         * their `etm load` form (tests/test_vectors.c writes it). */
        fprintf(f, "## Decoding it\n\n```\ntracebench decode . --format addr\n```\n");
    else
        /* tpiu_coresight is tracebench's name: OpenCSD's reader needs
         * the deformatter mode said (docs/vectors.md). */
        fprintf(f, "## Decoding it\n\n```\ntrc_pkt_lister -ss_dir . -id 0x%02X -decode%s\n"
                   "tracebench decode . --id 0x%02X --format addr\n```\n",
                v->trace_id, !strcmp(v->buffer, "tpiu") ? " -tpiu_hsync" : "", v->trace_id);
    return fclose(f) == 0 ? 0 : -1;
}

/* The encoder's overflows in order: where each one's lost trace starts
 * (after the newest instruction already shown, or from the segment's
 * start) and where its overflow I-sync resumed trace. */
typedef struct overflows {
    struct {
        bool resume, have_seq;
        uint64_t seq;
    } ev[8192];
    size_t n;
    bool full;
} overflows;

static void note_event(overflows *o, bool resume, bool have_seq, uint64_t seq)
{
    if (o->n == sizeof o->ev / sizeof o->ev[0]) {
        o->full = true;
        return;
    }
    o->ev[o->n].resume = resume;
    o->ev[o->n].have_seq = have_seq;
    o->ev[o->n++].seq = seq;
}

static void note_resume(void *ctx, uint64_t seq)
{
    note_event(ctx, true, true, seq);
}

static void note_overflow(void *ctx, bool have_shown, uint64_t shown_seq)
{
    note_event(ctx, false, have_shown, shown_seq);
}

/* Empties ovf and makes it the record of c's overflows and resumes. */
static void watch_overflows(tb_rt_case *c, overflows *ovf)
{
    ovf->n = 0;
    ovf->full = false;
    c->on_resume = note_resume;
    c->resume_ctx = ovf;
    c->on_overflow = note_overflow;
    c->overflow_ctx = ovf;
}

/* filter.txt: the ViewInst ranges, which a saved truth cannot show, for
 * the expected decode (vectors/expect.c) and any decoder's check. */
static int write_filter(const char *dir, const char *fname, const tb_encoder_opts *o)
{
    char path[1100];
    FILE *f;

    tb_strf(path, sizeof path, "%s/%s", dir, fname);
    if (!(f = fopen(path, "w")))
        return -1;
    fprintf(f, "# ViewInst ranges (docs/vectors.md): include|exclude LO HI, HI exclusive\n"
               "# (0: the top of the address space); traced: in an include range, or\n"
               "# there is none, and in no exclude range\n");
    for (unsigned i = 0; i < o->n_ranges && i < TB_ENC_MAX_RANGES; i++)
        fprintf(f, "%s 0x%08x 0x%08x\n", o->ranges[i].exclude ? "exclude" : "include",
                o->ranges[i].lo, o->ranges[i].hi);
    return fclose(f) == 0 ? 0 : -1;
}

/* overflow.txt (or a source's overflow-0xID.txt): the encoder's
 * overflows, for the expected decode (tb_expect). */
static int write_overflow(const char *dir, const char *fname, const char *name,
                          const tb_rt_result *res, const overflows *ovf, char *err,
                          size_t errlen)
{
    char path[1200];
    FILE *f;

    tb_strf(path, sizeof path, "%s/%s", dir, fname);
    if (!(f = fopen(path, "w"))) {
        tb_strf(err, errlen, "%s: cannot write %s", name, path);
        return TB_ERR_IO;
    }
    fprintf(f, "# trace lost to FIFO overflow, in order (docs/vectors.md):\n"
               "# lost-after S  the FIFO overflowed; the newest instruction whose trace\n"
               "#               had gone out is truth seq S (-: none since the last resume)\n"
               "# resume R      an overflow I-sync resumed trace at truth seq R\n"
               "# lost-tail     the run ended before trace resumed\n");
    for (size_t i = 0; i < ovf->n; i++) {
        if (ovf->ev[i].resume)
            fprintf(f, "resume %llu\n", (unsigned long long)ovf->ev[i].seq);
        else if (ovf->ev[i].have_seq)
            fprintf(f, "lost-after %llu\n", (unsigned long long)ovf->ev[i].seq);
        else
            fprintf(f, "lost-after -\n");
    }
    if (res->lost_tail)
        fprintf(f, "lost-tail\n");
    if (ovf->full) {
        fclose(f);
        tb_strf(err, errlen, "%s: more than %zu overflows: use a larger "
             "FIFO or fewer instructions", name, ovf->n);
        return TB_ERR_LIMIT;
    }
    if (fclose(f)) {
        tb_strf(err, errlen, "%s: cannot write %s", name, path);
        return TB_ERR_IO;
    }
    return 0;
}

/* One source into its own buffer (no program2). */
static int run_vector(vec *v, const tb_vector_env *p, const char *out, tb_rt_result *res,
                      overflows *ovf, char *err, size_t errlen)
{
    char elf[1024], scn[1024], dir[1024], msg[512] = "", scn_name[160];
    tb_rt_case c;
    tb_protocol proto = !strcmp(v->protocol, "ptm")     ? TB_PROTO_PTM
                        : !strcmp(v->protocol, "etmv1") ? TB_PROTO_ETMV1
                        : !strcmp(v->protocol, "etmv2") ? TB_PROTO_ETMV2
                                                        : TB_PROTO_ETMV3;
    int r;

    tb_strf(elf, sizeof elf, "%s/%s.elf", p->programs, v->program);
    if (v->scenario[0]) {
        tb_strf(scn, sizeof scn, "%s/%s", p->scenarios, v->scenario);
        tb_strf(scn_name, sizeof scn_name, "vectors/scenarios/%s", v->scenario);
    } else {
        tb_strf(scn, sizeof scn, "%s/%s.ini", p->default_scn, v->program);
        tb_strf(scn_name, sizeof scn_name, "vectors/programs/%s.ini", v->program);
    }
    if (!tb_strf(dir, sizeof dir, "%s/%s", out, v->name) ||
        !tb_strf(elf, sizeof elf, "%s/%s.elf", p->programs, v->program) ||
        (v->scenario[0] && !tb_strf(scn, sizeof scn, "%s/%s", p->scenarios, v->scenario))) {
        tb_strf(err, errlen, "%s: path too long", v->name);
        return TB_ERR_LIMIT;
    }
    if (tb_vector_remove_tree(dir) != 0 || tb_vector_make_dirs(dir) != 0) {
        tb_strf(err, errlen, "%s: cannot create %s", v->name, dir);
        return TB_ERR_IO;
    }
    tb_rt_case_init(&c, proto);
    c.name = v->name;
    c.program = elf;
    c.scenario = scn;
    c.max_insns = v->max_insns;
    /* ETMv1: the port capture (buffer raw, checked by tb_vector_list_load). */
    c.formatted = !strcmp(v->buffer, "coresight") || !strcmp(v->buffer, "tpiu");
    c.tpiu = !strcmp(v->buffer, "tpiu");
    c.out_dir = dir;
    if (v->options[0] && tb_rt_case_options(&c, v->options, msg, sizeof msg) < 0) {
        tb_strf(err, errlen, "%s: options '%s': %s", v->name, v->options, msg);
        return TB_ERR_CONFIG;
    }
    /* Where trace was lost and where overflow I-syncs resumed it:
     * encoder facts a saved truth cannot show, so the expected decode
     * (tb_expect) and another decoder's check need them. */
    watch_overflows(&c, ovf);
    memset(res, 0, sizeof *res);
    r = tb_rt_run(&c, res, msg, sizeof msg);
    if (r >= 0 && res->enc.overflows &&
        (r = write_overflow(dir, "overflow.txt", v->name, res, ovf, err, errlen)) < 0)
        return r;
    if (r < 0) {
        tb_strf(err, errlen, "%s: %s", v->name, msg[0] ? msg : tb_err_str(r));
        return r;
    }
    v->n_ranges = c.opts.n_ranges;
    if (c.opts.n_ranges && write_filter(dir, "filter.txt", &c.opts) < 0) {
        tb_strf(err, errlen, "%s: cannot write filter.txt", v->name);
        return TB_ERR_IO;
    }
    if (!res->match) {
        tb_strf(err, errlen, "%s: ROUND TRIP MISMATCH\n%s", v->name,
             res->report);
        return TB_ERR_MISMATCH;
    }
    if (res->verdict != TB_RT_MATCH) {
        /* A vector that checked nothing would promise nothing. */
        tb_strf(err, errlen, "%s: round trip %s: %llu instructions checked",
             v->name, tb_rt_verdict_name(res->verdict), (unsigned long long)res->cmp.checked);
        return TB_ERR_MISMATCH;
    }
    v->trace_id = c.opts.trace_id;
    v->insns = res->sim.insns;
    v->bytes = res->enc.bytes;
    v->exceptions = (unsigned)res->sim.exceptions;
    {
        char buf[1100];

        tb_strf(buf, sizeof buf, "%s/trace_buffer.bin", dir);
        v->buf_bytes = file_size(buf);
    }
    /* ETMv1/v2 have no trace ID: the snapshot's only source (-1). */
    r = p->write_addr(dir, "decode.addr", tb_protocol_is_port(proto) ? -1 : v->trace_id, msg,
                      sizeof msg);
    if (r < 0) {
        tb_strf(err, errlen, "%s: decode.addr: %s", v->name, msg);
        return r;
    }
    if (write_readme(dir, v, res, scn_name, c.has_cpu ? c.cpu : tb_scenario_cpu(scn)) < 0) {
        tb_strf(err, errlen, "%s: cannot write README.md", v->name);
        return TB_ERR_IO;
    }
    return 0;
}

/* ---- two trace sources in one buffer ([NAME] with program2) ----
 *
 * Each source is its own round trip (its program in its own emulator,
 * encoder, our decoder, comparator against its own truth), as on TC2
 * where several cores trace into one ETB.  The runs give their raw trace
 * chunk by chunk with the cycle stamp of the record that produced it;
 * the chunks are merged by cycle (ties: the first source first) into one
 * formatter, whose frames are the vector's trace_buffer.bin.  Per source
 * (trace ID): truth-0xID.txt, decode-0xID.addr, filter-0xID.txt,
 * overflow-0xID.txt (the names tb_expect --id reads). */

typedef struct trace_chunk {
    uint64_t cycle;
    size_t off, len;
} trace_chunk;

typedef struct src_trace {
    uint8_t *data;
    size_t len, cap;
    trace_chunk *ch;
    size_t n, ncap;
    bool oom;
} src_trace;

static void keep_trace(void *ctx, uint64_t cycle, const uint8_t *data, size_t len)
{
    src_trace *t = ctx;

    if (t->oom || !len)
        return;
    if (t->len + len > t->cap) {
        size_t nc = t->cap ? t->cap * 2 : 65536;
        uint8_t *nb;

        while (nc < t->len + len)
            nc *= 2;
        if (!(nb = realloc(t->data, nc))) {
            t->oom = true;
            return;
        }
        t->data = nb;
        t->cap = nc;
    }
    if (t->n == t->ncap) {
        size_t nc = t->ncap ? t->ncap * 2 : 1024;
        trace_chunk *nb = realloc(t->ch, nc * sizeof *nb);

        if (!nb) {
            t->oom = true;
            return;
        }
        t->ch = nb;
        t->ncap = nc;
    }
    memcpy(t->data + t->len, data, len);
    t->ch[t->n++] = (trace_chunk){cycle, t->len, len};
    t->len += len;
}

/* One source of a two-source vector: what the list says and what the
 * run gave. */
typedef struct vsrc {
    const char *program, *scenario, *protocol, *options;
    uint64_t max_insns;
    char scn_name[160], dev[16], core[16];
    tb_encoder_opts opts;
    tb_config cfg;
    tb_rt_result res;
    src_trace tr;
    uint8_t *elf, *store;
    size_t elen;
    tb_snap_region regs[16];
    int nr;
} vsrc;

/* A run's large records, on the heap: no state outlives a call. */
typedef struct run_mem {
    tb_rt_result res;
    overflows ovf;
    vsrc s[2];
} run_mem;

/* Runs source k into dir: its truth, filter and overflow files. */
static int run_source(const vec *v, vsrc *s, int k, const tb_vector_env *p, const char *dir,
                      overflows *ovf, char *err, size_t errlen)
{
    char elf[1024], scn[1024], scratch[1100], from[1200], to[1200], fname[64];
    char msg[512] = "";
    tb_rt_case c;
    bool ptm = !strcmp(s->protocol, "ptm");
    int r;

    if (!tb_strf(elf, sizeof elf, "%s/%s.elf", p->programs, s->program) ||
        !tb_strf(scratch, sizeof scratch, "%s/.source%d", dir, k) ||
        !(s->scenario[0] ? tb_strf(scn, sizeof scn, "%s/%s", p->scenarios, s->scenario)
                         : tb_strf(scn, sizeof scn, "%s/%s.ini", p->default_scn, s->program))) {
        tb_strf(err, errlen, "%s: path too long", v->name);
        return TB_ERR_LIMIT;
    }
    if (s->scenario[0])
        tb_strf(s->scn_name, sizeof s->scn_name, "vectors/scenarios/%s", s->scenario);
    else
        tb_strf(s->scn_name, sizeof s->scn_name, "vectors/programs/%s.ini", s->program);
    tb_rt_case_init(&c, ptm ? TB_PROTO_PTM : TB_PROTO_ETMV3);
    c.name = v->name;
    c.program = elf;
    c.scenario = scn;
    c.max_insns = s->max_insns;
    /* The run's own buffer is raw and goes to a scratch directory: the
     * vector's buffer is the interleaved one. */
    c.formatted = false;
    c.out_dir = scratch;
    if (s->options[0] && tb_rt_case_options(&c, s->options, msg, sizeof msg) < 0) {
        tb_strf(err, errlen, "%s: options '%s': %s", v->name, s->options, msg);
        return TB_ERR_CONFIG;
    }
    {
        /* A Cortex-M scenario: its ETM-M3/M4 (tb_rt_run does the same). */
        tb_sim_cpu cpu = tb_scenario_cpu(scn);

        if (tb_sim_cpu_is_m(cpu))
            tb_encoder_opts_v7m(&c.opts, cpu == TB_SIM_CPU_M4 ? 4 : 3);
    }
    if (tb_encoder_config(&c.opts, &s->cfg) < 0) {
        tb_strf(err, errlen, "%s: options '%s' are inconsistent", v->name,
             s->options);
        return TB_ERR_CONFIG;
    }
    s->opts = c.opts;
    watch_overflows(&c, ovf);
    c.on_trace = keep_trace;
    c.trace_ctx = &s->tr;
    r = tb_rt_run(&c, &s->res, msg, sizeof msg);
    if (r < 0) {
        tb_strf(err, errlen, "%s: source 0x%02x: %s", v->name,
             s->cfg.trace_id, msg[0] ? msg : tb_err_str(r));
        tb_vector_remove_tree(scratch);
        return r;
    }
    tb_strf(fname, sizeof fname, "overflow-0x%02x.txt", s->cfg.trace_id);
    if (s->res.enc.overflows &&
        (r = write_overflow(dir, fname, v->name, &s->res, ovf, err, errlen)) < 0) {
        tb_vector_remove_tree(scratch);
        return r;
    }
    tb_strf(fname, sizeof fname, "filter-0x%02x.txt", s->cfg.trace_id);
    if (c.opts.n_ranges && write_filter(dir, fname, &c.opts) < 0) {
        tb_strf(err, errlen, "%s: cannot write %s", v->name, fname);
        tb_vector_remove_tree(scratch);
        return TB_ERR_IO;
    }
    tb_strf(from, sizeof from, "%s/truth.txt", scratch);
    tb_strf(to, sizeof to, "%s/truth-0x%02x.txt", dir, s->cfg.trace_id);
    r = rename(from, to);
    tb_vector_remove_tree(scratch);
    if (r != 0) {
        tb_strf(err, errlen, "%s: cannot move %s to %s", v->name, from, to);
        return TB_ERR_IO;
    }
    if (!s->res.match || s->res.verdict != TB_RT_MATCH) {
        tb_strf(err, errlen, "%s: source 0x%02x: round trip %s: %llu "
             "instructions checked\n%s", v->name, s->cfg.trace_id,
             tb_rt_verdict_name(s->res.verdict), (unsigned long long)s->res.cmp.checked,
             s->res.report);
        return TB_ERR_MISMATCH;
    }
    if (s->tr.oom) {
        tb_strf(err, errlen, "%s: out of memory", v->name);
        return TB_ERR_NOMEM;
    }
    /* The memory dumps: what the run loaded, as tb_rt_run writes them. */
    if (tb_snapshot_read_file(elf, &s->elf, &s->elen, msg, sizeof msg) < 0 ||
        (s->nr = tb_encoder_elf_regions(s->elf, s->elen, s->regs, 16, &s->store)) <= 0) {
        tb_strf(err, errlen, "%s: %s: no loadable segment", v->name, elf);
        return TB_ERR_FORMAT;
    }
    /* TC2's names: a PTM on a Cortex-A15, an ETM on a Cortex-A7. */
    tb_strf(s->dev, sizeof s->dev, "%s_%d", ptm ? "PTM" : "ETM", k);
    tb_strf(s->core, sizeof s->core, "cpu_%d", k);
    return 0;
}

/* Both sources' chunks by cycle stamp (ties: source 0 first) into one
 * formatter: the CoreSight buffer, as an ETB holds it, or as a TPIU sends
 * it to a DSTREAM probe (dstream: FSYNCs between frames, protocol-notes
 * 5.1), or with HSYNCs too where the port idled (tpiu, tb_formatter_tick). */
static int interleave(vsrc *s, tb_encoder_membuf *m, const char *buffer)
{
    tb_formatter *f = tb_formatter_new(!strcmp(buffer, "dstream") ? TB_FRAME_HAS_FSYNC
                                       : !strcmp(buffer, "tpiu")
                                           ? TB_FRAME_HAS_FSYNC | TB_FRAME_HAS_HSYNC
                                           : TB_FRAME_MEM_ALIGNED);
    size_t i[2] = {0, 0};
    int rc = f ? 0 : TB_ERR_NOMEM;

    while (rc >= 0 && (i[0] < s[0].tr.n || i[1] < s[1].tr.n)) {
        int k = i[1] >= s[1].tr.n ||
                        (i[0] < s[0].tr.n && s[0].tr.ch[i[0]].cycle <= s[1].tr.ch[i[1]].cycle)
                    ? 0 : 1;
        const trace_chunk *ch = &s[k].tr.ch[i[k]++];

        rc = tb_formatter_tick(f, ch->cycle, tb_encoder_mem_sink, m);
        if (rc >= 0)
            rc = tb_formatter_put(f, s[k].cfg.trace_id, s[k].tr.data + ch->off, ch->len,
                              tb_encoder_mem_sink, m);
    }
    if (rc >= 0)
        rc = tb_formatter_flush(f, tb_encoder_mem_sink, m);
    tb_formatter_free(f);
    return rc;
}

static void readme_row(FILE *f, const char *what, const char *a, const char *b)
{
    fprintf(f, "| %s | %s | %s |\n", what, a, b);
}

static int write_readme2(const char *dir, const vec *v, const vsrc *s)
{
    char path[1024], a[2][512];
    FILE *f;

    tb_strf(path, sizeof path, "%s/README.md", dir);
    f = fopen(path, "w");
    if (!f)
        return -1;
    fprintf(f, "# Vector %s\n\n%s.\n\n", v->name, v->about);
    fprintf(f, "Two programs, each in its own emulator, trace into one CoreSight formatted "
               "buffer (`trace_buffer.bin`, format `%s`), as several cores do on "
               "TC2: each source's trace bytes go into the formatter in the order of the "
               "cycle stamps of the records that produced them (ties: source 1 first), so "
               "the frames interleave the two trace IDs.  Each program is linked at its "
               "own addresses: OpenCSD keeps one memory map for all cores and refuses "
               "overlapping dumps.\n\n",
            !strcmp(v->buffer, "dstream") ? "dstream_coresight"
            : !strcmp(v->buffer, "tpiu")  ? "tpiu_coresight"
                                          : "coresight");
    fprintf(f, "| | source 1 | source 2 |\n|---|---|---|\n");
#define ROW(what, ...)                                                                 \
    do {                                                                               \
        for (int k_ = 0; k_ < 2; k_++) {                                               \
            const vsrc *x = &s[k_];                                                    \
            tb_strf(a[k_], sizeof a[k_], __VA_ARGS__);                                    \
            (void)x;                                                                   \
        }                                                                              \
        readme_row(f, what, a[0], a[1]);                                               \
    } while (0)
    ROW("trace ID", "0x%02X", x->cfg.trace_id);
    ROW("program", "`%s` (vectors/programs)", x->program);
    ROW("scenario", "`%s`", x->scn_name);
    ROW("protocol", "%s", !strcmp(x->protocol, "ptm") ? "PTM (PFT)" : "ETMv3");
    ROW("options", "`%s`", x->options[0] ? x->options : "(plain)");
    ROW("trace source / core", "%s on %s", x->dev, x->core);
    ROW("instruction cap", "%llu", (unsigned long long)x->max_insns);
    ROW("instructions executed", "%llu (stop: %s)", (unsigned long long)x->res.sim.insns,
        tb_sim_stop_name(x->res.sim.stop));
    ROW("instructions traced", "%llu", (unsigned long long)x->res.enc.traced);
    ROW("exceptions", "%llu", (unsigned long long)x->res.sim.exceptions);
    ROW("trace bytes", "%llu", (unsigned long long)x->res.enc.bytes);
    {
        char bpi[2][32];

        for (int k = 0; k < 2; k++)
            tb_vector_bits_per_insn(bpi[k], sizeof bpi[k], s[k].res.enc.bytes, s[k].res.sim.insns);
        readme_row(f, "bits per instruction", bpi[0], bpi[1]);
    }
    ROW("FIFO overflows", "%llu", (unsigned long long)x->res.enc.overflows);
    ROW("round trip", "match: %llu instructions checked, %llu exceptions, %llu contexts, "
        "%llu timestamps, %llu cycle checks, %llu untraced",
        (unsigned long long)x->res.cmp.checked, (unsigned long long)x->res.cmp.exceptions,
        (unsigned long long)x->res.cmp.contexts, (unsigned long long)x->res.cmp.timestamps,
        (unsigned long long)x->res.cmp.cycle_checks, (unsigned long long)x->res.cmp.untraced);
#undef ROW
    fprintf(f, "\n| buffer | |\n|---|---|\n");
    fprintf(f, "| format | %s, both trace IDs |\n",
            !strcmp(v->buffer, "dstream")
                ? "CoreSight frames as a TPIU sends them, FSYNCs between frames "
                  "(`dstream_coresight`)"
            : !strcmp(v->buffer, "tpiu")
                ? "CoreSight frames as a TPIU sends them, FSYNCs between frames and "
                  "HSYNCs where the port idled (`tpiu_coresight`, docs/vectors.md)"
                : "CoreSight formatted frames (`coresight`)");
    fprintf(f, "| size | %llu bytes (%llu trace bytes) |\n", (unsigned long long)v->buf_bytes,
            (unsigned long long)v->bytes);
    fprintf(f, "| OpenCSD 1.3.3 | %s |\n",
            v->opencsd[0] ? v->opencsd : "decodes both sources to their ground truth");
    fprintf(f, "\n## Files\n\n"
               "- `snapshot.ini`, `trace.ini`, the two trace source and two core `.ini` "
               "files, each core's memory dumps and the trace buffer: an OpenCSD / DS-5 "
               "trace snapshot; `trace.ini` maps both sources to the one buffer.\n"
               "- `truth-0xID.txt`: each source's ground truth, one record per line "
               "(`tb_truth_format_text`).\n"
               "- `decode-0xID.addr`: each source's expected decode, one executed "
               "instruction per line (address, ISA, E/N) and `# gap WHY` lines where trace "
               "was off or lost (docs/vectors.md).  It is derived from `truth-0xID.txt` "
               "alone by `vectors/expect.c` (`tb_expect . --id ID`), and CI checks that "
               "tracebench's `decode --id ID --format addr` equals it.\n");
    for (int k = 0; k < 2; k++) {
        if (s[k].res.enc.overflows)
            fprintf(f, "- `overflow-0x%02x.txt`: where FIFO overflows lost source 0x%02X's "
                       "trace and where it resumed (truth seqs).\n",
                    s[k].cfg.trace_id, s[k].cfg.trace_id);
        if (s[k].opts.n_ranges)
            fprintf(f, "- `filter-0x%02x.txt`: source 0x%02X's ViewInst address ranges.\n",
                    s[k].cfg.trace_id, s[k].cfg.trace_id);
    }
    fprintf(f, "\n## Decoding it\n\n```\n");
    for (int k = 0; k < 2; k++)
        fprintf(f, "trc_pkt_lister -ss_dir . -id 0x%02X -decode%s\n"
                   "tracebench decode . --id 0x%02X --format addr\n",
                s[k].cfg.trace_id, !strcmp(v->buffer, "tpiu") ? " -tpiu_hsync" : "",
                s[k].cfg.trace_id);
    fprintf(f, "```\n");
    return fclose(f) == 0 ? 0 : -1;
}

static int run_vector2(vec *v, const tb_vector_env *p, const char *out, vsrc *s,
                       overflows *ovf, char *err, size_t errlen)
{
    char dir[1024], msg[512] = "", fname[64];
    tb_snap_out_source so[2];
    tb_encoder_membuf m = {NULL, 0, 0};
    int r;

    if (!tb_strf(dir, sizeof dir, "%s/%s", out, v->name)) {
        tb_strf(err, errlen, "%s: path too long", v->name);
        return TB_ERR_LIMIT;
    }
    if (tb_vector_remove_tree(dir) != 0 || tb_vector_make_dirs(dir) != 0) {
        tb_strf(err, errlen, "%s: cannot create %s", v->name, dir);
        return TB_ERR_IO;
    }
    s[0].program = v->program;
    s[0].scenario = v->scenario;
    s[0].protocol = v->protocol;
    s[0].options = v->options;
    s[0].max_insns = v->max_insns;
    s[1].program = v->program2;
    s[1].scenario = v->scenario2;
    s[1].protocol = v->protocol2;
    s[1].options = v->options2;
    s[1].max_insns = v->max_insns2;
    for (int k = 0; k < 2; k++)
        if ((r = run_source(v, &s[k], k, p, dir, ovf, err, errlen)) < 0)
            goto out;
    if (s[0].cfg.trace_id == s[1].cfg.trace_id) {
        tb_strf(err, errlen, "%s: both sources have trace ID 0x%02x: give "
             "options2 another id=", v->name, s[0].cfg.trace_id);
        r = TB_ERR_CONFIG;
        goto out;
    }
    if ((r = interleave(s, &m, v->buffer)) < 0) {
        tb_strf(err, errlen, "%s: formatter: %s", v->name, tb_err_str(r));
        goto out;
    }
    for (int k = 0; k < 2; k++) {
        memset(&so[k], 0, sizeof so[k]);
        so[k].name = s[k].dev;
        so[k].cfg = &s[k].cfg;
        so[k].core = s[k].core;
        so[k].core_type = s[k].cfg.protocol == TB_PROTO_PTM ? "Cortex-A15" : "Cortex-A7";
        if (s[k].cfg.v7m)
            so[k].core_type = s[k].cfg.v7m == 4 ? "Cortex-M4" : "Cortex-M3";
        so[k].regions = s[k].regs;
        so[k].n_regions = (size_t)s[k].nr;
    }
    if ((r = tb_snapshot_write(dir, so, 2, m.buf, m.len,
                               !strcmp(v->buffer, "dstream") ? "dstream_coresight"
                               : !strcmp(v->buffer, "tpiu")  ? "tpiu_coresight"
                                                             : "coresight",
                               msg, sizeof msg)) < 0) {
        tb_strf(err, errlen, "%s: %s", v->name, msg);
        goto out;
    }
    for (int k = 0; k < 2; k++) {
        tb_strf(fname, sizeof fname, "decode-0x%02x.addr", s[k].cfg.trace_id);
        if ((r = p->write_addr(dir, fname, s[k].cfg.trace_id, msg, sizeof msg)) < 0) {
            tb_strf(err, errlen, "%s: %s: %s", v->name, fname, msg);
            goto out;
        }
    }
    v->trace_id = s[0].cfg.trace_id;
    v->insns = s[0].res.sim.insns + s[1].res.sim.insns;
    v->bytes = s[0].res.enc.bytes + s[1].res.enc.bytes;
    v->exceptions = (unsigned)(s[0].res.sim.exceptions + s[1].res.sim.exceptions);
    v->n_ranges = s[0].opts.n_ranges + s[1].opts.n_ranges;
    v->buf_bytes = m.len;
    if (write_readme2(dir, v, s) < 0) {
        tb_strf(err, errlen, "%s: cannot write README.md", v->name);
        r = TB_ERR_IO;
        goto out;
    }
    r = 0;
out:
    for (int k = 0; k < 2; k++) {
        free(s[k].tr.data);
        free(s[k].tr.ch);
        free(s[k].elf);
        free(s[k].store);
    }
    free(m.buf);
    return r;
}

int tb_vector_run(tb_vector *v, const tb_vector_env *env, const char *out, char *err,
                  size_t errlen)
{
    run_mem *rm = calloc(1, sizeof *rm);
    int r;

    if (!rm) {
        tb_strf(err, errlen, "%s: out of memory", v->name);
        return TB_ERR_NOMEM;
    }
    r = v->program2[0] ? run_vector2(v, env, out, rm->s, &rm->ovf, err, errlen)
                       : run_vector(v, env, out, &rm->res, &rm->ovf, err, errlen);
    free(rm);
    return r;
}

/* ---- --check: byte-for-byte comparison of two trees ---- */

static int same_file(const char *a, const char *b)
{
    FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
    int same = fa && fb;

    while (same) {
        char ba[8192], bb[8192];
        size_t na = fread(ba, 1, sizeof ba, fa), nb = fread(bb, 1, sizeof bb, fb);

        if (na != nb || memcmp(ba, bb, na))
            same = 0;
        if (na < sizeof ba)
            break;
    }
    if (fa)
        fclose(fa);
    if (fb)
        fclose(fb);
    return same;
}

/* Files under `want` missing from or different in `have` (and, with
 * both_ways, files only in `have`).  rel: path below the roots. */
static unsigned diff_tree(const char *want, const char *have, const char *rel, bool both_ways,
                          bool report_extra, tb_vector_diff_fn on_diff, void *ctx)
{
    char pa[2048], pb[2048];
    unsigned bad = 0;
    DIR *d;
    struct dirent *de;

    tb_strf(pa, sizeof pa, "%s%s%s", want, *rel ? "/" : "", rel);
    d = opendir(pa);
    if (!d) {
        on_diff(ctx, "missing", *rel ? rel : ".");
        return 1;
    }
    while ((de = readdir(d))) {
        char sub[1024];
        struct stat sa, sb;

        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
            continue;
        tb_strf(sub, sizeof sub, "%s%s%s", rel, *rel ? "/" : "", de->d_name);
        tb_strf(pa, sizeof pa, "%s/%s", want, sub);
        tb_strf(pb, sizeof pb, "%s/%s", have, sub);
        if (lstat(pa, &sa) != 0)
            continue;
        if (lstat(pb, &sb) != 0) {
            on_diff(ctx, report_extra ? "not generated" : "missing", sub);
            bad++;
            continue;
        }
        if (S_ISDIR(sa.st_mode) != S_ISDIR(sb.st_mode)) {
            on_diff(ctx, "differs", sub);
            bad++;
        } else if (S_ISDIR(sa.st_mode)) {
            bad += diff_tree(want, have, sub, false, report_extra, on_diff, ctx);
        } else if (!report_extra && !same_file(pa, pb)) {
            on_diff(ctx, "differs", sub);
            bad++;
        }
    }
    closedir(d);
    if (both_ways)
        bad += diff_tree(have, want, rel, false, !report_extra, on_diff, ctx);
    return bad;
}

unsigned tb_vector_diff_tree(const char *want, const char *have, tb_vector_diff_fn on_diff,
                             void *ctx)
{
    return diff_tree(want, have, "", true, false, on_diff, ctx);
}
