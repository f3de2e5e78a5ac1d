/*
 * Ground-truth writers: one line per exec record, as text for people and
 * diff, and as JSON lines for tools.  The text form is frozen (the
 * vectors' truth.txt is read back by tb_truth_parse_text and by
 * vectors/expect.c); the JSON form uses the names of the element and
 * packet printers ("kind", "exc_num", "pref_return", "context_id", ...;
 * docs/formats.md maps the two).
 */
#include <stdio.h>
#include <string.h>

#include "tracebench/sim.h"

static int done(int n, size_t len)
{
    if (n < 0)
        return TB_ERR_INVAL;
    return (size_t)n >= len ? TB_ERR_NOSPACE : n;
}

static void flag_str(uint8_t f, char out[8])
{
    out[0] = (f & TB_INSN_COND_FAILED) ? 'N' : 'E';
    out[1] = (f & TB_INSN_TAKEN) ? 'T' : '-';
    out[2] = (f & TB_INSN_CONDITIONAL) ? 'C' : '-';
    out[3] = (f & TB_INSN_IN_IT) ? 'I' : '-';
    out[4] = (f & TB_INSN_EXC_RETURN) ? 'R' : '-';
    out[5] = '\0';
}

/* The name of a v7-M exception number ("SysTick", "IRQ3"). */
static const char *v7m_name(unsigned num, char out[24])
{
    const char *n = tb_v7m_exc_name(num, out, 24);

    return n ? n : "?";
}

int tb_truth_format_text(const tb_exec_record *r, char *buf, size_t len)
{
    char fl[8], nb[24];

    if (!r || !buf || !len)
        return TB_ERR_INVAL;
    switch (r->kind) {
    case TB_REC_INSN:
        flag_str(r->u.insn.flags, fl);
        return done(snprintf(buf, len,
                             "%llu %llu I %08x %s %u %0*x %s %s -> %08x %s",
                             (unsigned long long)r->seq, (unsigned long long)r->cycle,
                             r->u.insn.addr, tb_isa_name((tb_isa)r->u.insn.isa),
                             r->u.insn.size, r->u.insn.size * 2, r->u.insn.opcode, fl,
                             tb_wp_class_name((tb_wp_class)r->u.insn.wp_class),
                             r->u.insn.next_addr,
                             tb_isa_name((tb_isa)r->u.insn.next_isa)), len);
    case TB_REC_EXCEPTION:
        if (r->u.exc.kind == TB_EXC_V7M)
            /* v7-M: SEQ CYCLE X NAME ret= vector= ISA xpsr= exc=N
             * [tail-chain] [cancelled] */
            return done(snprintf(buf, len,
                                 "%llu %llu X %s ret=%08x vector=%08x %s xpsr=%08x exc=%u%s%s",
                                 (unsigned long long)r->seq, (unsigned long long)r->cycle,
                                 v7m_name(r->u.exc.num, nb), r->u.exc.pref_return,
                                 r->u.exc.vector, tb_isa_name((tb_isa)r->u.exc.isa),
                                 r->u.exc.cpsr, r->u.exc.num,
                                 r->u.exc.tailchain ? " tail-chain" : "",
                                 r->u.exc.cancelled ? " cancelled" : ""), len);
        return done(snprintf(buf, len,
                             "%llu %llu X %s ret=%08x vector=%08x %s cpsr=%08x%s",
                             (unsigned long long)r->seq, (unsigned long long)r->cycle,
                             tb_exc_kind_name((tb_exc_kind)r->u.exc.kind),
                             r->u.exc.pref_return, r->u.exc.vector,
                             tb_isa_name((tb_isa)r->u.exc.isa), r->u.exc.cpsr,
                             r->u.exc.cancelled ? " cancelled" : ""), len);
    case TB_REC_CONTEXT:
        return done(snprintf(buf, len, "%llu %llu C ctxid=%08x vmid=%u",
                             (unsigned long long)r->seq, (unsigned long long)r->cycle,
                             r->u.ctx.context_id, r->u.ctx.vmid), len);
    case TB_REC_END:
        return done(snprintf(buf, len, "%llu %llu END", (unsigned long long)r->seq,
                             (unsigned long long)r->cycle), len);
    case TB_REC_DATA:
        /* SEQ CYCLE D ld|st ADDR SIZE VALUE insn=ADDR [failed] [be] */
        return done(snprintf(buf, len, "%llu %llu D %s %08x %u %0*x insn=%08x%s%s",
                             (unsigned long long)r->seq, (unsigned long long)r->cycle,
                             r->u.data.flags & TB_DATA_STORE ? "st" : "ld", r->u.data.addr,
                             r->u.data.size, r->u.data.size * 2, r->u.data.value,
                             r->u.data.insn_addr,
                             r->u.data.flags & TB_DATA_STORE_FAILED ? " failed" : "",
                             r->u.data.flags & TB_DATA_BE ? " be" : ""), len);
    case TB_REC_STATE:
        /* SEQ CYCLE S ns=0|1 hyp=0|1 */
        return done(snprintf(buf, len, "%llu %llu S ns=%d hyp=%d",
                             (unsigned long long)r->seq, (unsigned long long)r->cycle,
                             r->u.state.ns ? 1 : 0, r->u.state.hyp ? 1 : 0), len);
    case TB_REC_EXC_RETURN:
        /* SEQ CYCLE R NAME exc=N excret=V ret=ADDR thread|handler
         * [tail-chain [preempted]] */
        return done(snprintf(buf, len, "%llu %llu R %s exc=%u excret=%08x ret=%08x %s%s%s",
                             (unsigned long long)r->seq, (unsigned long long)r->cycle,
                             v7m_name(r->u.eret.num, nb), r->u.eret.num, r->u.eret.exc_return,
                             r->u.eret.target, r->u.eret.to_thread ? "thread" : "handler",
                             r->u.eret.tailchain ? " tail-chain" : "",
                             r->u.eret.preempted ? " preempted" : ""), len);
    }
    return TB_ERR_INVAL;
}

int tb_truth_format_json(const tb_exec_record *r, char *buf, size_t len)
{
    char nb[24];

    if (!r || !buf || !len)
        return TB_ERR_INVAL;
    switch (r->kind) {
    case TB_REC_INSN: {
        uint8_t f = r->u.insn.flags;

        return done(snprintf(buf, len,
                             "{\"kind\":\"INSN\",\"seq\":%llu,\"cycle\":%llu,"
                             "\"addr\":%u,\"size\":%u,\"isa\":\"%s\",\"opcode\":%u,"
                             "\"wp\":\"%s\",\"exec\":%s,\"taken\":%s,"
                             "\"conditional\":%s,\"in_it\":%s,\"exc_return\":%s,"
                             "\"next_addr\":%u,\"next_isa\":\"%s\"}",
                             (unsigned long long)r->seq, (unsigned long long)r->cycle,
                             r->u.insn.addr, r->u.insn.size,
                             tb_isa_name((tb_isa)r->u.insn.isa), r->u.insn.opcode,
                             tb_wp_class_name((tb_wp_class)r->u.insn.wp_class),
                             (f & TB_INSN_COND_FAILED) ? "false" : "true",
                             (f & TB_INSN_TAKEN) ? "true" : "false",
                             (f & TB_INSN_CONDITIONAL) ? "true" : "false",
                             (f & TB_INSN_IN_IT) ? "true" : "false",
                             (f & TB_INSN_EXC_RETURN) ? "true" : "false",
                             r->u.insn.next_addr,
                             tb_isa_name((tb_isa)r->u.insn.next_isa)), len);
    }
    case TB_REC_EXCEPTION:
        if (r->u.exc.kind == TB_EXC_V7M)
            return done(snprintf(buf, len,
                                 "{\"kind\":\"EXCEPTION\",\"seq\":%llu,\"cycle\":%llu,"
                                 "\"exc_kind\":\"%s\",\"exc_num\":%u,\"pref_return\":%u,"
                                 "\"vector\":%u,\"isa\":\"%s\",\"xpsr\":%u,"
                                 "\"cancelled\":%s,\"tailchain\":%s}",
                                 (unsigned long long)r->seq, (unsigned long long)r->cycle,
                                 v7m_name(r->u.exc.num, nb), r->u.exc.num,
                                 r->u.exc.pref_return, r->u.exc.vector,
                                 tb_isa_name((tb_isa)r->u.exc.isa), r->u.exc.cpsr,
                                 r->u.exc.cancelled ? "true" : "false",
                                 r->u.exc.tailchain ? "true" : "false"), len);
        return done(snprintf(buf, len,
                             "{\"kind\":\"EXCEPTION\",\"seq\":%llu,\"cycle\":%llu,"
                             "\"exc_kind\":\"%s\",\"exc_num\":%d,\"pref_return\":%u,"
                             "\"vector\":%u,\"isa\":\"%s\",\"cpsr\":%u,"
                             "\"cancelled\":%s}",
                             (unsigned long long)r->seq, (unsigned long long)r->cycle,
                             tb_exc_kind_name((tb_exc_kind)r->u.exc.kind),
                             tb_exc_trace_number((tb_exc_kind)r->u.exc.kind),
                             r->u.exc.pref_return, r->u.exc.vector,
                             tb_isa_name((tb_isa)r->u.exc.isa), r->u.exc.cpsr,
                             r->u.exc.cancelled ? "true" : "false"), len);
    case TB_REC_CONTEXT:
        return done(snprintf(buf, len,
                             "{\"kind\":\"CONTEXT\",\"seq\":%llu,\"cycle\":%llu,"
                             "\"context_id\":%u,\"vmid\":%u}",
                             (unsigned long long)r->seq, (unsigned long long)r->cycle,
                             r->u.ctx.context_id, r->u.ctx.vmid), len);
    case TB_REC_END:
        return done(snprintf(buf, len, "{\"kind\":\"END\",\"seq\":%llu,\"cycle\":%llu}",
                             (unsigned long long)r->seq, (unsigned long long)r->cycle),
                    len);
    case TB_REC_DATA:
        return done(snprintf(buf, len,
                             "{\"kind\":\"DATA\",\"seq\":%llu,\"cycle\":%llu,"
                             "\"store\":%s,\"data_addr\":%u,\"data_size\":%u,"
                             "\"data_value\":%u,\"insn_addr\":%u,\"store_failed\":%s,"
                             "\"be\":%s}",
                             (unsigned long long)r->seq, (unsigned long long)r->cycle,
                             r->u.data.flags & TB_DATA_STORE ? "true" : "false",
                             r->u.data.addr, r->u.data.size, r->u.data.value,
                             r->u.data.insn_addr,
                             r->u.data.flags & TB_DATA_STORE_FAILED ? "true" : "false",
                             r->u.data.flags & TB_DATA_BE ? "true" : "false"), len);
    case TB_REC_STATE:
        return done(snprintf(buf, len,
                             "{\"kind\":\"STATE\",\"seq\":%llu,\"cycle\":%llu,"
                             "\"ns\":%s,\"hyp\":%s}",
                             (unsigned long long)r->seq, (unsigned long long)r->cycle,
                             r->u.state.ns ? "true" : "false",
                             r->u.state.hyp ? "true" : "false"), len);
    case TB_REC_EXC_RETURN:
        return done(snprintf(buf, len,
                             "{\"kind\":\"EXC_RETURN\",\"seq\":%llu,\"cycle\":%llu,"
                             "\"exc_kind\":\"%s\",\"exc_num\":%u,\"exc_return\":%u,"
                             "\"target\":%u,\"to_thread\":%s,\"tailchain\":%s,"
                             "\"preempted\":%s}",
                             (unsigned long long)r->seq, (unsigned long long)r->cycle,
                             v7m_name(r->u.eret.num, nb), r->u.eret.num, r->u.eret.exc_return,
                             r->u.eret.target, r->u.eret.to_thread ? "true" : "false",
                             r->u.eret.tailchain ? "true" : "false",
                             r->u.eret.preempted ? "true" : "false"), len);
    }
    return TB_ERR_INVAL;
}

/* ---- reading the text form back (vectors' truth.txt) ---- */

static int name_index(const char *s, const char *(*name)(int), int lo, int hi)
{
    for (int i = lo; i <= hi; i++)
        if (!strcmp(s, name(i)))
            return i;
    return -1;
}

static const char *isa_n(int i) { return tb_isa_name((tb_isa)i); }
static const char *wp_n(int i) { return tb_wp_class_name((tb_wp_class)i); }
static const char *exc_n(int i) { return tb_exc_kind_name((tb_exc_kind)i); }

int tb_truth_parse_text(const char *line, tb_exec_record *r)
{
    unsigned long long seq, cycle;
    char kind[4], a[24], b[24], c[24], d[24], e[24];
    unsigned addr, size, opcode, next, vec, cpsr, ctx, vmid;
    int n = 0, i, j, k;

    if (!line || !r)
        return TB_ERR_INVAL;
    memset(r, 0, sizeof *r);
    if (sscanf(line, "%llu %llu %3s %n", &seq, &cycle, kind, &n) != 3)
        return TB_ERR_FORMAT;
    r->seq = seq;
    r->cycle = cycle;
    line += n;
    if (!strcmp(kind, "I")) {
        if (sscanf(line, "%x %23s %u %x %23s %23s -> %x %23s", &addr, a, &size, &opcode, b,
                   c, &next, d) != 8 ||
            strlen(b) != 5 || (size != 2 && size != 4) || (b[0] != 'E' && b[0] != 'N') ||
            (b[1] != 'T' && b[1] != '-') || (b[2] != 'C' && b[2] != '-') ||
            (b[3] != 'I' && b[3] != '-') || (b[4] != 'R' && b[4] != '-'))
            return TB_ERR_FORMAT;
        i = name_index(a, isa_n, TB_ISA_ARM, TB_ISA_JAZELLE);
        j = name_index(c, wp_n, TB_WP_NONE, TB_WP_BARRIER);
        k = name_index(d, isa_n, TB_ISA_ARM, TB_ISA_JAZELLE);
        if (i < 0 || j < 0 || k < 0)
            return TB_ERR_FORMAT;
        r->kind = TB_REC_INSN;
        r->u.insn.addr = addr;
        r->u.insn.next_addr = next;
        r->u.insn.opcode = opcode;
        r->u.insn.size = (uint8_t)size;
        r->u.insn.isa = (uint8_t)i;
        r->u.insn.next_isa = (uint8_t)k;
        r->u.insn.wp_class = (uint8_t)j;
        r->u.insn.flags = (uint8_t)((b[0] == 'N' ? TB_INSN_COND_FAILED : 0) |
                                    (b[1] == 'T' ? TB_INSN_TAKEN : 0) |
                                    (b[2] == 'C' ? TB_INSN_CONDITIONAL : 0) |
                                    (b[3] == 'I' ? TB_INSN_IN_IT : 0) |
                                    (b[4] == 'R' ? TB_INSN_EXC_RETURN : 0));
        return 0;
    }
    if (!strcmp(kind, "X") && strstr(line, " xpsr=")) {
        unsigned num;
        char f[24];
        int m = 0;

        /* v7-M: NAME ret= vector= ISA xpsr= exc=N [tail-chain] [cancelled] */
        if (sscanf(line, "%23s ret=%x vector=%x %23s xpsr=%x exc=%u%n", a, &addr, &vec, b, &cpsr,
                   &num, &m) != 6 ||
            num == 0 || num >= TB_V7M_MAX_EXC || !tb_v7m_exc_name(num, f, sizeof f) ||
            strcmp(f, a))
            return TB_ERR_FORMAT;
        k = name_index(b, isa_n, TB_ISA_ARM, TB_ISA_JAZELLE);
        if (k < 0)
            return TB_ERR_FORMAT;
        line += m;
        r->kind = TB_REC_EXCEPTION;
        r->u.exc.kind = TB_EXC_V7M;
        r->u.exc.num = (uint16_t)num;
        r->u.exc.isa = (uint8_t)k;
        if (!strncmp(line, " tail-chain", 11)) {
            r->u.exc.tailchain = true;
            line += 11;
        }
        if (!strncmp(line, " cancelled", 10)) {
            r->u.exc.cancelled = true;
            line += 10;
        }
        if (*line && *line != '\n' && *line != '\r')
            return TB_ERR_FORMAT;
        r->u.exc.pref_return = addr;
        r->u.exc.vector = vec;
        r->u.exc.cpsr = cpsr;
        return 0;
    }
    if (!strcmp(kind, "R")) {
        unsigned num, excret, target;
        char f[24];
        int m = 0;

        if (sscanf(line, "%23s exc=%u excret=%x ret=%x %23s%n", a, &num, &excret, &target, b,
                   &m) != 5 ||
            num == 0 || num >= TB_V7M_MAX_EXC || !tb_v7m_exc_name(num, f, sizeof f) ||
            strcmp(f, a) || (strcmp(b, "thread") && strcmp(b, "handler")))
            return TB_ERR_FORMAT;
        line += m;
        r->kind = TB_REC_EXC_RETURN;
        r->u.eret.num = (uint16_t)num;
        r->u.eret.exc_return = excret;
        r->u.eret.target = target;
        r->u.eret.to_thread = b[0] == 't';
        if (!strncmp(line, " tail-chain", 11)) {
            r->u.eret.tailchain = true;
            line += 11;
            if (!strncmp(line, " preempted", 10)) {
                r->u.eret.preempted = true;
                line += 10;
            }
        }
        if (*line && *line != '\n' && *line != '\r')
            return TB_ERR_FORMAT;
        return 0;
    }
    if (!strcmp(kind, "X")) {
        e[0] = '\0';
        if (sscanf(line, "%23s ret=%x vector=%x %23s cpsr=%x %23s", a, &addr, &vec, b, &cpsr,
                   e) < 5)
            return TB_ERR_FORMAT;
        i = name_index(a, exc_n, TB_EXC_RESET, TB_EXC_DEBUG_HALT);
        k = name_index(b, isa_n, TB_ISA_ARM, TB_ISA_JAZELLE);
        if (i < 0 || k < 0 || (e[0] && strcmp(e, "cancelled")))
            return TB_ERR_FORMAT;
        r->kind = TB_REC_EXCEPTION;
        r->u.exc.kind = (uint8_t)i;
        r->u.exc.isa = (uint8_t)k;
        r->u.exc.cancelled = e[0] != '\0';
        r->u.exc.pref_return = addr;
        r->u.exc.vector = vec;
        r->u.exc.cpsr = cpsr;
        return 0;
    }
    if (!strcmp(kind, "C")) {
        if (sscanf(line, "ctxid=%x vmid=%u", &ctx, &vmid) != 2 || vmid > 255)
            return TB_ERR_FORMAT;
        r->kind = TB_REC_CONTEXT;
        r->u.ctx.context_id = ctx;
        r->u.ctx.vmid = (uint8_t)vmid;
        return 0;
    }
    if (!strcmp(kind, "END")) {
        r->kind = TB_REC_END;
        return 0;
    }
    if (!strcmp(kind, "S")) {
        unsigned ns, hyp;

        if (sscanf(line, "ns=%u hyp=%u", &ns, &hyp) != 2 || ns > 1 || hyp > 1)
            return TB_ERR_FORMAT;
        r->kind = TB_REC_STATE;
        r->u.state.ns = ns != 0;
        r->u.state.hyp = hyp != 0;
        return 0;
    }
    if (!strcmp(kind, "D")) {
        unsigned value, insn;

        a[0] = b[0] = '\0';
        if (sscanf(line, "%3s %x %u %x insn=%x %23s %23s", c, &addr, &size, &value, &insn, a,
                   b) < 5 ||
            (strcmp(c, "ld") && strcmp(c, "st")) || (size != 1 && size != 2 && size != 4))
            return TB_ERR_FORMAT;
        r->kind = TB_REC_DATA;
        r->u.data.flags = (uint8_t)(!strcmp(c, "st") ? TB_DATA_STORE : 0);
        for (const char *w = a; w; w = w == a ? b : NULL) {
            if (!strcmp(w, "failed"))
                r->u.data.flags |= TB_DATA_STORE_FAILED;
            else if (!strcmp(w, "be"))
                r->u.data.flags |= TB_DATA_BE;
            else if (w[0])
                return TB_ERR_FORMAT;
        }
        r->u.data.addr = addr;
        r->u.data.size = (uint8_t)size;
        r->u.data.value = value;
        r->u.data.insn_addr = insn;
        return 0;
    }
    return TB_ERR_FORMAT;
}
