/* Strings for the vocabulary in types.h, and register decoding. */
#include "tracebench/types.h"

const char *tb_err_str(int err)
{
    switch (err) {
    case TB_OK: return "success";
    case TB_ERR_NOMEM: return "out of memory";
    case TB_ERR_INVAL: return "invalid argument";
    case TB_ERR_IO: return "input/output error";
    case TB_ERR_FORMAT: return "file format error";
    case TB_ERR_CONFIG: return "configuration missing or inconsistent";
    case TB_ERR_NOSPACE: return "output buffer too small";
    case TB_ERR_BAD_PACKET: return "bad packet";
    case TB_ERR_TRUNCATED: return "input ends inside a packet or record";
    case TB_ERR_NO_SYNC: return "no synchronisation found";
    case TB_ERR_NOT_IN_IMAGE: return "code address not in the memory image";
    case TB_ERR_UNSUPPORTED: return "not supported";
    case TB_ERR_NOT_FOUND: return "not found";
    case TB_ERR_EMULATOR: return "emulator error";
    case TB_ERR_FAULT: return "unexpected fault in the emulated program";
    case TB_ERR_LIMIT: return "limit reached";
    case TB_ERR_MISMATCH: return "mismatch";
    case TB_ERR_STATE: return "call not valid in this state";
    case TB_ERR_BAD_FRAME: return "corrupt CoreSight frame stream";
    case TB_ERR_STOPPED: return "stopped by callback";
    }
    return "unknown error";
}

const char *tb_isa_name(tb_isa isa)
{
    switch (isa) {
    case TB_ISA_ARM: return "A32";
    case TB_ISA_THUMB: return "T32";
    case TB_ISA_THUMBEE: return "TEE";
    case TB_ISA_JAZELLE: return "Jazelle";
    case TB_ISA_UNKNOWN: break;
    }
    return "unknown";
}

const char *tb_protocol_name(tb_protocol p)
{
    switch (p) {
    case TB_PROTO_ETMV3: return "etmv3";
    case TB_PROTO_PTM: return "ptm";
    case TB_PROTO_ETMV1: return "etmv1";
    case TB_PROTO_ETMV2: return "etmv2";
    case TB_PROTO_NONE: break;
    }
    return "none";
}

const char *tb_pkt_kind_name(tb_pkt_kind k)
{
    static const char *const names[TB_PKT_KIND_COUNT] = {
        [TB_PKT_NOTSYNC] = "NOTSYNC",
        [TB_PKT_ASYNC] = "ASYNC",
        [TB_PKT_ISYNC] = "ISYNC",
        [TB_PKT_ATOM] = "ATOM",
        [TB_PKT_BRANCH] = "BRANCH_ADDRESS",
        [TB_PKT_WP_UPDATE] = "WP_UPDATE",
        [TB_PKT_CYCLE_COUNT] = "CYCLE_COUNT",
        [TB_PKT_TIMESTAMP] = "TIMESTAMP",
        [TB_PKT_CONTEXT_ID] = "CONTEXT_ID",
        [TB_PKT_VMID] = "VMID",
        [TB_PKT_TRIGGER] = "TRIGGER",
        [TB_PKT_IGNORE] = "IGNORE",
        [TB_PKT_EXC_RETURN] = "EXCEPTION_RETURN",
        [TB_PKT_EXC_ENTRY] = "EXCEPTION_ENTRY",
        [TB_PKT_DATA] = "DATA",
        [TB_PKT_OOO_DATA] = "OOO_DATA",
        [TB_PKT_OOO_PLACEHOLDER] = "OOO_PLACEHOLDER",
        [TB_PKT_STORE_FAILED] = "STORE_FAILED",
        [TB_PKT_DATA_SUPPRESSED] = "DATA_SUPPRESSED",
        [TB_PKT_VALUE_NOT_TRACED] = "VALUE_NOT_TRACED",
        [TB_PKT_RESERVED] = "RESERVED",
        [TB_PKT_BAD_SEQUENCE] = "BAD_SEQUENCE",
        [TB_PKT_BAD_TRACEMODE] = "BAD_TRACEMODE",
        [TB_PKT_INCOMPLETE] = "INCOMPLETE",
    };
    if ((unsigned)k < TB_PKT_KIND_COUNT && names[k])
        return names[k];
    return "UNKNOWN";
}

const char *tb_wp_class_name(tb_wp_class c)
{
    switch (c) {
    case TB_WP_NONE: return "none";
    case TB_WP_DIRECT: return "direct";
    case TB_WP_DIRECT_LINK: return "direct-link";
    case TB_WP_INDIRECT: return "indirect";
    case TB_WP_INDIRECT_LINK: return "indirect-link";
    case TB_WP_ISB: return "isb";
    case TB_WP_BARRIER: return "barrier";
    }
    return "unknown";
}

const char *tb_exc_kind_name(tb_exc_kind k)
{
    switch (k) {
    case TB_EXC_NONE: return "none";
    case TB_EXC_RESET: return "reset";
    case TB_EXC_UNDEF: return "undef";
    case TB_EXC_SVC: return "svc";
    case TB_EXC_PREFETCH_ABORT: return "prefetch-abort";
    case TB_EXC_DATA_ABORT: return "data-abort";
    case TB_EXC_IRQ: return "irq";
    case TB_EXC_FIQ: return "fiq";
    case TB_EXC_SMC: return "smc";
    case TB_EXC_HVC: return "hvc";
    case TB_EXC_ASYNC_ABORT: return "async-abort";
    case TB_EXC_DEBUG_HALT: return "debug-halt";
    case TB_EXC_V7M: return "v7m";
    }
    return "unknown";
}

/* A/R-profile exception numbers shared by ETMv3 and PFT (IHI0014Q
 * table 7-13; protocol-notes 2.7). */
int tb_exc_trace_number(tb_exc_kind k)
{
    switch (k) {
    case TB_EXC_NONE: return 0;
    case TB_EXC_DEBUG_HALT: return 1;
    case TB_EXC_SMC: return 2;
    case TB_EXC_HVC: return 3;
    case TB_EXC_ASYNC_ABORT: return 4;
    case TB_EXC_RESET: return 8;
    case TB_EXC_UNDEF: return 9;
    case TB_EXC_SVC: return 10;
    case TB_EXC_PREFETCH_ABORT: return 11;
    case TB_EXC_DATA_ABORT: return 12;
    case TB_EXC_IRQ: return 14;
    case TB_EXC_FIQ: return 15;
    case TB_EXC_V7M: break; /* the record's u.exc.num (tb_v7m_trace_number) */
    }
    return TB_ERR_INVAL;
}

int tb_config_from_regs(tb_config *cfg, uint32_t etmcr, uint32_t etmidr,
                        uint32_t etmccer, uint32_t traceidr)
{
    static const uint8_t ctxid_sizes[4] = {0, 1, 2, 4};
    unsigned major;

    if (!cfg)
        return TB_ERR_INVAL;
    tb_config_init(cfg, TB_PROTO_NONE);
    major = (etmidr >> 8) & 0xF;
    if (major == 2)
        cfg->protocol = TB_PROTO_ETMV3;
    else if (major == 3)
        cfg->protocol = TB_PROTO_PTM;
    else
        return TB_ERR_CONFIG;

    cfg->etmcr = etmcr;
    cfg->etmidr = etmidr;
    cfg->etmccer = etmccer;
    cfg->traceidr = traceidr;
    cfg->arch_minor = (etmidr >> 4) & 0xF;
    cfg->trace_id = traceidr & 0x7F;
    cfg->data_trace = (etmcr >> 2) & 3;
    cfg->branch_broadcast = (etmcr >> 8) & 1;
    cfg->cycle_accurate = (etmcr >> 12) & 1;
    cfg->ctxid_bytes = ctxid_sizes[(etmcr >> 14) & 3];
    cfg->timestamps = (etmcr >> 28) & 1;
    cfg->vmid = (etmcr >> 30) & 1;
    cfg->virt = (etmccer >> 26) & 1;
    cfg->ts_binary = (etmccer >> 28) & 1;
    cfg->ts64 = (etmccer >> 29) & 1;

    if (cfg->protocol == TB_PROTO_ETMV3) {
        cfg->data_only = (etmcr >> 20) & 1;
        /* ETMIDR[20] exists from ETMv3.4 (protocol-notes 1.2). */
        cfg->alt_branch = cfg->arch_minor >= 4 && ((etmidr >> 20) & 1);
        /* ETMIDR[16] "load PC first" (ETM11RV TRM DDI 0233B, etmv3-data.md
         * 1 [S*]): the order the decoder gives an LDM's transfers. */
        cfg->pc_first = (etmidr >> 16) & 1;
    } else {
        cfg->data_trace = 0; /* PFT has no data trace */
        cfg->return_stack = (etmcr >> 29) & 1;
        cfg->dmb_waypoint = (etmccer >> 24) & 1;
        if (cfg->arch_minor == 0)
            cfg->ts64 = false; /* PFT1.0 timestamps are 48-bit at most */
    }
    return TB_OK;
}

int tb_config_from_etmv1(tb_config *cfg, uint32_t etmcr, uint8_t minor,
                         uint32_t vector_base)
{
    static const uint8_t ctxid_sizes[4] = {0, 1, 2, 4};
    unsigned port = (etmcr >> 4) & 7;

    if (!cfg)
        return TB_ERR_INVAL;
    tb_config_init(cfg, TB_PROTO_NONE);
    /* Port size 000/001/010 = 4/8/16 pins; larger codes and ETMCR[21]
     * are ETMv3 (shared/docs/etmv1-v2.md §1, ETMCR table). */
    if (minor > 3 || port > 2 || ((etmcr >> 21) & 1))
        return TB_ERR_CONFIG;
    cfg->protocol = TB_PROTO_ETMV1;
    cfg->etmcr = etmcr;
    cfg->arch_minor = minor;
    cfg->port_width = (uint8_t)(4u << port);
    cfg->vector_base = vector_base;
    cfg->data_trace = (etmcr >> 2) & 3;
    cfg->branch_broadcast = (etmcr >> 8) & 1;
    cfg->cycle_accurate = (etmcr >> 12) & 1;
    cfg->ctxid_bytes = ctxid_sizes[(etmcr >> 14) & 3];
    if (cfg->ctxid_bytes && minor < 2)
        return TB_ERR_CONFIG; /* context IDs from ETMv1.2 (IHI0014Q 5.6.3) */
    return TB_OK;
}

const char *tb_port_format_name(tb_protocol p)
{
    return p == TB_PROTO_ETMV1 ? "etmv1_port" : p == TB_PROTO_ETMV2 ? "etmv2_port" : NULL;
}

int tb_config_from_etmv2(tb_config *cfg, uint32_t etmcr, uint8_t minor,
                         uint32_t vector_base)
{
    int rc;

    /* The ETMCR fields are ETMv1's (IHI0014Q 3.5.1); ETMv2.0 only. */
    if (minor != 0)
        return TB_ERR_CONFIG;
    if ((rc = tb_config_from_etmv1(cfg, etmcr, 3, vector_base)) < 0)
        return rc;
    cfg->protocol = TB_PROTO_ETMV2;
    cfg->arch_minor = minor;
    return TB_OK;
}
