/*
 * Ground-truth writers: one line per exec record, as text for people and
 * diff, and as JSON lines for tools.
 */
#include <stdio.h>

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

int tb_truth_format_text(const tb_exec_record *r, char *buf, size_t len)
{
    char fl[8];

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
    }
    return TB_ERR_INVAL;
}

int tb_truth_format_json(const tb_exec_record *r, char *buf, size_t len)
{
    if (!r || !buf || !len)
        return TB_ERR_INVAL;
    switch (r->kind) {
    case TB_REC_INSN: {
        uint8_t f = r->u.insn.flags;

        return done(snprintf(buf, len,
                             "{\"rec\":\"insn\",\"seq\":%llu,\"cycle\":%llu,"
                             "\"addr\":%u,\"size\":%u,\"isa\":\"%s\",\"opcode\":%u,"
                             "\"wp\":\"%s\",\"exec\":%s,\"taken\":%s,"
                             "\"conditional\":%s,\"in_it\":%s,\"exc_return\":%s,"
                             "\"next\":%u,\"next_isa\":\"%s\"}",
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
        return done(snprintf(buf, len,
                             "{\"rec\":\"exception\",\"seq\":%llu,\"cycle\":%llu,"
                             "\"kind\":\"%s\",\"number\":%d,\"pref_return\":%u,"
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
                             "{\"rec\":\"context\",\"seq\":%llu,\"cycle\":%llu,"
                             "\"context_id\":%u,\"vmid\":%u}",
                             (unsigned long long)r->seq, (unsigned long long)r->cycle,
                             r->u.ctx.context_id, r->u.ctx.vmid), len);
    case TB_REC_END:
        return done(snprintf(buf, len, "{\"rec\":\"end\",\"seq\":%llu,\"cycle\":%llu}",
                             (unsigned long long)r->seq, (unsigned long long)r->cycle),
                    len);
    }
    return TB_ERR_INVAL;
}
