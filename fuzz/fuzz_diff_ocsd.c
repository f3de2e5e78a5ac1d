/*
 * Differential harnesses against OpenCSD (issue 28 item 4): ocsd_etmv3
 * and ocsd_ptm.  The input is that of the decoder harnesses (4
 * configuration bytes, fuzz_util.c, then the trace); the same bytes,
 * registers and memory image go to our parser + decoder and to OpenCSD's
 * C API, in process.  The image is tb_fuzz_ocsd_image() (fuzz_util.c):
 * the decoder harnesses' layout with architecturally defined code only,
 * since on UNPREDICTABLE encodings two correct decoders may part; it
 * reaches OpenCSD through a memory-access callback, so both read
 * identical bytes.
 *
 * Each side's decode becomes an instruction sequence: (address, ISA,
 * E/N where the decoder knows it).  Ours: every INSN_RANGE expanded with
 * tb_decoder_range_addrs; ETMv3 ranges give each instruction's atom
 * (atom_bits), PTM ranges only the last one's.  OpenCSD's: every
 * INSTR_RANGE expanded by walking the image from st_addr to en_addr
 * (Thumb sizes from the first halfword, ARMv7-A ARM A6.1), its last
 * instruction carrying last_instr_exec.
 *
 * A side "reports an error" at its first:
 *   ours:    NO_SYNC for a bad packet or for atoms that contradict the
 *            image (tb_gap_reason BAD_PACKET, INCONSISTENT);
 *   OpenCSD: NO_SYNC after the initial one (its decoders emit one on
 *            their first packet and one for each bad packet), a message
 *            of its error logger (errors and warnings, e.g. an
 *            unsupported ISA), or a fatal datapath response.
 * Each sequence is cut where its side reported its first error (or at
 * the MAX_INSNS cap).  The two cut sequences must agree up to the
 * shorter one, and may differ in length only where the shorter one was
 * cut: where neither side reports an error the sequences are equal;
 * after an error each decoder resynchronises its own way, which the
 * harness does not judge.
 *
 * Documented OpenCSD faults (docs/opencsd-bugs.md) are recognised by
 * their signature where the sequences part (see ocsd_known_fault): the
 * comparison then resumes where both decoders are provably back in step
 * and the fault is counted, never hidden otherwise.  Anything else is a
 * finding: the harness prints both sequences around the difference and
 * aborts.
 *
 * The configuration is tb_fuzz_ocsd_config(): ETMv3 data trace off
 * (OpenCSD decodes no ETMv3 trace with data trace configured,
 * docs/opencsd-bugs.md 8, so nothing would be compared), and a PTM return
 * stack (ETMCR[29]) only with ETMCCER[23] saying it exists, which is when
 * OpenCSD uses it.
 *
 * Planting (to show the harness can fail): TB_FUZZ_OCSD_PLANT=1 in the
 * environment makes the harness drop the condition result of every
 * N atom of our decode (an N is taken for an E), the kind of slip a
 * decoder bug gives.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <opencsd/c_api/opencsd_c_api.h>

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(leak_sanitizer)
#define TB_FUZZ_LSAN 1
#endif
#elif defined(__SANITIZE_ADDRESS__)
#define TB_FUZZ_LSAN 1
#endif
#if TB_FUZZ_LSAN
#include <sanitizer/lsan_interface.h>
#endif

#include "fuzz.h"
#include "tracebench/classify.h"
#include "tracebench/decoder.h"
#include "tracebench/parser.h"
#include "tracebench/print.h"

#define MAX_INSNS (1u << 18)
#define TB_OCSD_MAX_BYTES (1u << 20)
#define MAX_RANGE (1u << 16)

typedef struct insn {
    uint64_t index;   /* packet that produced it */
    uint32_t addr;
    uint8_t isa;      /* tb_isa */
    char atom;        /* 'E', 'N', or 0 when the decoder does not know */
} insn;

typedef struct seq {
    insn *v;
    size_t n;
    bool full;        /* MAX_INSNS reached */
    bool err;
    size_t err_at;    /* instructions before the first error */
    uint64_t err_index;
    char why[200];
} seq;

/* Our packets that matter to the fault signatures, in stream order. */
typedef struct pkt_info {
    uint64_t index;
    uint32_t addr;
    uint8_t kind;     /* tb_pkt_kind */
    uint8_t isa;
    bool has_exc, cancel, altisa;
    bool lsip_cut;    /* ETMv3 LSiP I-sync OpenCSD cuts elsewhere (fault 11) */
    bool legacy_exc;  /* ETMv3 branch, deprecated byte-5 exception form */
    bool full;        /* sets the whole address and the ISA (full_state) */
    uint16_t zeros;   /* ASYNC: the zeros before its 0x80, padding too */
    uint16_t exc_num;
    uint8_t atoms;    /* ATOM: E and N atoms */
    uint8_t size;
    uint8_t last;     /* the packet's last byte */
    uint8_t next_isa; /* the ISA execution goes on in: an LSiP I-sync's
                         second address's (IHI0014Q 7.10.5), else isa */
    bool lsip;        /* an ETMv3 I-sync with LSiP */
} pkt_info;

typedef struct pkt_list {
    pkt_info *v;
    size_t n;
} pkt_list;

typedef struct ours_ctx {
    seq *s;
    pkt_list *pk;
    tb_decoder *dec;
    const tb_config *cfg;
    bool plant;
    bool async;        /* an A-sync seen */
    uint64_t bad_at;   /* our first malformed packet, or UINT64_MAX */
    const tb_ocsd_run *runs;
    size_t n_runs;
} ours_ctx;

/* The image of the current comparison: tb_fuzz_ocsd_image() for the
 * harnesses, a vector's for tb_ocsd_diff's other callers. */
static const tb_memimage *g_mem;

static void seq_reset(seq *s, insn *buf)
{
    memset(s, 0, sizeof *s);
    s->v = buf;
}

static void seq_add(seq *s, uint64_t index, uint32_t addr, uint8_t isa, char atom)
{
    if (s->n == MAX_INSNS) {
        s->full = true;
        return;
    }
    s->v[s->n++] = (insn){index, addr, isa, atom};
}

static void seq_error(seq *s, uint64_t index, const char *why)
{
    if (s->err)
        return;
    s->err = true;
    s->err_at = s->n;
    s->err_index = index;
    snprintf(s->why, sizeof s->why, "%s", why);
}

/* A side's packet processor met a malformed packet at index (one whose
 * bytes break the protocol, or alignment lost after an A-sync), maybe
 * before its decoder had synchronised, when the decoder says nothing of
 * it: from there on where packets start is each side's guess (IHI0014Q
 * 7.2, IHI0035B 4.11.2: only an A-sync sets packet boundaries), so the
 * side's sequence is cut there like at any of its errors (after its
 * instructions from earlier packets), unless an earlier error cut it. */
static void seq_bad_packet(seq *s, uint64_t index, const char *why)
{
    size_t k = 0;

    if (index == UINT64_MAX || (s->err && s->err_index <= index))
        return;
    while (k < s->n && s->v[k].index < index)
        k++;
    if (s->err && s->err_at < k)
        return;
    s->err = true;
    s->err_at = k;
    s->err_index = index;
    snprintf(s->why, sizeof s->why, "%s at packet %llu", why, (unsigned long long)index);
}

/* ---- ours ---- */

/* Our first bad packet, for the reason of a one-sided error. */
static char g_bad_pkt[96];

static int ours_on_element(void *ctx, const tb_element *el)
{
    static uint32_t addrs[MAX_RANGE];
    ours_ctx *o = ctx;
    int n, i;

    if (el->kind == TB_ELEM_NO_SYNC &&
        (el->reason == TB_GAP_BAD_PACKET || el->reason == TB_GAP_INCONSISTENT)) {
        char why[160];

        snprintf(why, sizeof why, "NO_SYNC (%s: %s) at packet %llu%s%s",
                 tb_gap_reason_name((tb_gap_reason)el->reason),
                 el->err ? tb_err_str(el->err) : "-", (unsigned long long)el->index,
                 g_bad_pkt[0] ? ", " : "", g_bad_pkt);
        seq_error(o->s, el->index, why);
    }
    if (el->kind != TB_ELEM_INSN_RANGE)
        return 0;
    n = tb_decoder_range_addrs(o->dec, el, addrs, MAX_RANGE);
    if (n != (int)el->count)
        tb_fuzz_fail("ocsd", "our range at 0x%08x lists %d of %u instructions",
                     el->start, n, el->count);
    for (i = 0; i < n; i++) {
        char atom = 0;

        if (o->cfg->protocol == TB_PROTO_ETMV3 && i < 32)
            atom = ((el->atom_bits >> i) & 1) ? 'N' : 'E';
        else if (i == n - 1)
            atom = el->last_atom;
        if (o->plant && atom == 'N')
            atom = 'E';
        seq_add(o->s, el->index, addrs[i], el->isa, atom);
    }
    return 0;
}

/* Whether the n bytes from index are all zero (within one run). */
static bool zero_bytes(const ours_ctx *o, uint64_t index, uint64_t n)
{
    size_t k;

    for (k = 0; k < o->n_runs; k++) {
        const tb_ocsd_run *r = &o->runs[k];

        if (index >= r->index && index + n <= r->index + r->len) {
            for (uint64_t i = 0; i < n; i++)
                if (r->data[index - r->index + i])
                    return false;
            return true;
        }
    }
    return false;
}

/* An A-sync's zeros, counted back from its 0x80 (our PTM parser keeps
 * at most 23 and reports older ones as skipped). */
static uint16_t async_zeros(const ours_ctx *o, const tb_packet *p)
{
    const uint64_t end = p->index + p->size - 1; /* the 0x80 */
    size_t k;

    if (p->kind != TB_PKT_ASYNC)
        return 0;
    for (k = 0; k < o->n_runs; k++) {
        const tb_ocsd_run *r = &o->runs[k];
        uint64_t i;

        if (end < r->index || end >= r->index + r->len)
            continue;
        for (i = end; i > r->index && !r->data[i - 1 - r->index] && end - i < 0xFFFF;)
            i--;
        return (uint16_t)(end - i);
    }
    return 0;
}

/* docs/opencsd-bugs.md 11: where OpenCSD ends an ETMv3 LSiP I-sync.
 * Once it has the bytes it expects without the LSiP address it ends the
 * packet at the first byte with bit 7 clear: the address's fourth byte
 * when bit 31 is clear, else the first such byte after the address,
 * however far (it knows no exception byte there, so the 6-byte form's
 * last byte is left to be read as a packet of its own).  True when that
 * is not where our parser ended it (IHI0014Q 7.10.5: the LSiP address in
 * branch address form, 7.3.5, exception bytes included). */
static bool lsip_cut_by_ocsd(const tb_config *cfg, const tb_packet *p)
{
    unsigned at = 1, k;

    if (p->kind != TB_PKT_ISYNC || !p->lsip || p->size > TB_PKT_MAX_BYTES)
        return false;
    if (p->bytes[0] == 0x70)
        while (at < p->size && at < 6 && (p->bytes[at++] & 0x80))
            ;
    at += cfg->ctxid_bytes + 1; /* the info byte */
    if (at + 4 > p->size)
        return true;
    if (!(p->bytes[at + 3] & 0x80))
        return at + 4 != p->size;
    for (k = at + 4; k < p->size; k++)
        if (!(p->bytes[k] & 0x80))
            return k + 1 != p->size;
    return true; /* OpenCSD reads on past our end */
}

/* A packet that sets the whole address and the ISA, for the resync after
 * a misread (aligned_addr_after, which also needs OpenCSD's AltISA clear
 * there): an I-sync, or a branch with all 32 address bits. */
static bool full_state(const tb_packet *p)
{
    return p->kind == TB_PKT_ISYNC || (p->kind == TB_PKT_BRANCH && p->addr_bits >= 32);
}

static int ours_on_packet(void *ctx, const tb_packet *p)
{
    ours_ctx *o = ctx;

    if (p->kind == TB_PKT_ASYNC)
        o->async = true;
    /* Bytes skipped after an A-sync are a loss of alignment, unless they
     * are only zeros: the padding of an A-sync longer than our PTM
     * parser keeps, which it reports as skipped (IHI0035B 4.5.1: five or
     * more zeros, then 0x80). */
    if ((p->kind == TB_PKT_RESERVED || p->kind == TB_PKT_BAD_SEQUENCE ||
         p->kind == TB_PKT_BAD_TRACEMODE ||
         (p->kind == TB_PKT_NOTSYNC && o->async && !zero_bytes(o, p->index, p->count))) &&
        o->bad_at == UINT64_MAX)
        o->bad_at = p->index;
    if (p->kind >= TB_PKT_RESERVED && !g_bad_pkt[0]) {
        int n = snprintf(g_bad_pkt, sizeof g_bad_pkt, "%s [", tb_pkt_kind_name(p->kind));

        for (unsigned k = 0; k < p->size && n < (int)sizeof g_bad_pkt - 4; k++)
            n += snprintf(g_bad_pkt + n, sizeof g_bad_pkt - (size_t)n, k ? " %02x" : "%02x",
                          p->bytes[k]);
        snprintf(g_bad_pkt + n, sizeof g_bad_pkt - (size_t)n, "]");
    }

    /* At most one packet per input byte: the list cannot overflow.  Atom
     * packets only when they carry no E or N (fault 14's signature). */
    if (p->kind != TB_PKT_NOTSYNC && (p->kind != TB_PKT_ATOM || p->atom_count == 0))
        o->pk->v[o->pk->n++] = (pkt_info){p->index, p->addr, (uint8_t)p->kind,
                                          (uint8_t)p->isa, p->has_exc, p->exc_cancel,
                                          p->altisa,
                                          lsip_cut_by_ocsd(o->cfg, p),
                                          p->kind == TB_PKT_BRANCH && p->legacy_exc,
                                          full_state(p),
                                          async_zeros(o, p), p->exc_num, p->atom_count,
                                          p->size, p->size ? p->bytes[p->size - 1] : 0,
                                          (uint8_t)(p->kind == TB_PKT_ISYNC && p->lsip ? p->lsip_isa
                                                                                       : p->isa),
                                          p->kind == TB_PKT_ISYNC && p->lsip};

    return tb_decoder_packet(o->dec, p, ours_on_element, o) < 0 ? 1 : 0;
}

static void ours_decode(const tb_config *cfg, const tb_ocsd_run *runs, size_t n_runs, seq *s,
                        pkt_list *pk)
{
    tb_parser *p = tb_parser_new(cfg);
    ours_ctx o = {s, pk, tb_decoder_new(cfg, g_mem), cfg, false, false, UINT64_MAX, runs, n_runs};
    const char *plant = getenv("TB_FUZZ_OCSD_PLANT");
    size_t k;
    int rc = 0;

    o.plant = plant && plant[0] == '1';
    g_bad_pkt[0] = '\0';
    if (!p || !o.dec)
        tb_fuzz_fail("ocsd", "cannot make our parser/decoder");
    for (k = 0; k < n_runs && rc >= 0; k++)
        rc = runs[k].len ? tb_parser_push(p, runs[k].data, runs[k].len, runs[k].index,
                                          ours_on_packet, &o)
                         : tb_decoder_push_gap(o.dec, p, runs[k].index, ours_on_element, &o);
    if (rc < 0 || tb_parser_finish(p, ours_on_packet, &o) < 0 ||
        tb_decoder_finish(o.dec, ours_on_element, &o) < 0)
        tb_fuzz_fail("ocsd", "our parser/decoder returned an error");
    if (!getenv("TB_FUZZ_OCSD_NO_SIGNATURES"))
        seq_bad_packet(s, o.bad_at, g_bad_pkt[0] ? g_bad_pkt : "our packets lost alignment");
    tb_parser_free(p);
    tb_decoder_free(o.dec);
}

/* ---- OpenCSD ---- */

typedef struct theirs_ctx {
    seq *s;
    unsigned no_syncs;
    char last_log[160];
    uint64_t empty[64];   /* packets of INSTR_RANGEs of 0 instructions */
    size_t n_empty;
} theirs_ctx;

static uint32_t mem_read(const void *ctx, const ocsd_vaddr_t address,
                         const ocsd_mem_space_acc_t space, const uint32_t req,
                         uint8_t *buf)
{
    (void)ctx;
    (void)space;
    if (address > 0xFFFFFFFFull)
        return 0;
    return (uint32_t)tb_memimage_read(g_mem, (uint32_t)address, buf, req);
}

static uint8_t map_isa(ocsd_isa isa)
{
    switch (isa) {
    case ocsd_isa_arm: return TB_ISA_ARM;
    case ocsd_isa_thumb2: return TB_ISA_THUMB;
    case ocsd_isa_tee: return TB_ISA_THUMBEE;
    case ocsd_isa_jazelle: return TB_ISA_JAZELLE;
    default: return TB_ISA_UNKNOWN;
    }
}

/* Instruction size at addr in isa, from the image (ARMv7-A ARM A6.1: a
 * Thumb halfword 0b11101.., 0b11110.. or 0b11111.. starts a 32-bit
 * instruction); 0 when the image does not hold it. */
static unsigned insn_size(uint32_t addr, uint8_t isa)
{
    uint8_t b[2];

    if (isa == TB_ISA_ARM)
        return 4;
    if (tb_memimage_read(g_mem, addr, b, 2) < 2)
        return 0;
    return (b[1] >> 3) >= 0x1D ? 4 : 2;
}

static ocsd_datapath_resp_t theirs_on_elem(const void *ctx, const ocsd_trc_index_t index,
                                           const uint8_t chan,
                                           const ocsd_generic_trace_elem *el)
{
    theirs_ctx *t = (theirs_ctx *)ctx;
    uint32_t a, end;
    uint8_t isa;
    unsigned n = 0;

    (void)chan;
    if (el->elem_type == OCSD_GEN_TRC_ELEM_NO_SYNC) {
        if (t->no_syncs++ > 0) {
            char why[200];

            snprintf(why, sizeof why, "NO_SYNC at packet %llu%s%s",
                     (unsigned long long)index, t->last_log[0] ? " after: " : "",
                     t->last_log);
            seq_error(t->s, index, why);
        }
        return OCSD_RESP_CONT;
    }
    if (el->elem_type != OCSD_GEN_TRC_ELEM_INSTR_RANGE)
        return OCSD_RESP_CONT;
    if (el->num_instr_range == 0) {
        /* docs/opencsd-bugs.md 14: a P-header without E or N atoms makes
         * OpenCSD 1.3.3's ETMv3 decoder send an element it never filled
         * in (addresses of an older range or uninitialised, 0
         * instructions).  Kept aside: compare() checks that each came
         * from such a P-header of ours. */
        if (t->n_empty < sizeof t->empty / sizeof t->empty[0])
            t->empty[t->n_empty] = index;
        t->n_empty++;
        return OCSD_RESP_CONT;
    }
    isa = map_isa(el->isa);
    a = (uint32_t)el->st_addr;
    end = (uint32_t)el->en_addr;
    /* [st, en) in the image; en may wrap to 0 at the top of memory.  The
     * count is not always filled in (ETMv3 ranges of 1.3.3 can carry 0),
     * so the walk goes by the addresses and checks a count that is there. */
    while (a != end && n < MAX_RANGE) {
        unsigned sz = insn_size(a, isa);

        if (!sz)
            tb_fuzz_fail("ocsd", "OpenCSD range [0x%08x,0x%08x) runs out of the image "
                         "at 0x%08x", (uint32_t)el->st_addr, end, a);
        n++;
        seq_add(t->s, index, a, isa,
                a + sz == end ? (el->last_instr_exec ? 'E' : 'N') : 0);
        a += sz;
    }
    if (a != end || (el->num_instr_range && n != el->num_instr_range))
        tb_fuzz_fail("ocsd", "OpenCSD range [0x%08x,0x%08x) of %u instructions: %u "
                     "walked from the image", (uint32_t)el->st_addr, end,
                     el->num_instr_range, n);
    return OCSD_RESP_CONT;
}

static void theirs_on_log(const void *ctx, const char *msg, const int len)
{
    theirs_ctx *t = (theirs_ctx *)ctx;
    int l = len;

    if (!t->s)
        return; /* the Cancel scan's tree (cancel_cut): not the decode */
    while (l > 0 && (msg[l - 1] == '\n' || msg[l - 1] == '\r'))
        l--;
    snprintf(t->last_log, sizeof t->last_log, "%.*s", l, msg);
    seq_error(t->s, 0, t->last_log);
}

/* A new decode tree for every input: a tree kept from the previous input
 * and reset (OCSD_OP_RESET) does not always decode as a new one would
 * (seen: different instructions for the same input), and a finding must
 * not depend on the inputs before it.  OpenCSD 1.3.3 never frees the
 * element-callback object that ocsd_dt_set_gen_elem_outfn allocates (32
 * bytes, kept past ocsd_destroy_dcd_tree): LeakSanitizer is told to
 * ignore that one allocation, and the process grows by 32 bytes an input
 * (about 12 MB an hour at 100 inputs a second).  Since every input now
 * ends with one more malloc than free, libFuzzer would run a whole leak
 * scan after each (13 times the input's own cost): LLVMFuzzerInitialize
 * below turns the per-input scan off; the scan at exit still runs. */
static theirs_ctx g_theirs;

static dcd_tree_handle_t make_tree(const tb_config *cfg, bool formatted, theirs_ctx *log_ctx,
                                   int flags, unsigned char *csid_out)
{
    static bool logger;
    dcd_tree_handle_t tree;
    unsigned char csid;
    ocsd_err_t err;

    if (!logger) {
        /* Errors and warnings only, printed nowhere: theirs_on_log. */
        ocsd_def_errlog_init(OCSD_ERR_SEV_WARN, 1);
        ocsd_def_errlog_config_output(C_API_MSGLOGOUT_FLG_NONE, NULL);
        logger = true;
    }
    tree = formatted ? ocsd_create_dcd_tree(OCSD_TRC_SRC_FRAME_FORMATTED,
                                            OCSD_DFRMTR_FRAME_MEM_ALIGN)
                     : ocsd_create_dcd_tree(OCSD_TRC_SRC_SINGLE, 0);
    if (!tree)
        tb_fuzz_fail("ocsd", "ocsd_create_dcd_tree failed");
    ocsd_def_errlog_set_strprint_cb(tree, log_ctx, theirs_on_log);
    /* The trace ID picks the source of a formatted buffer; none in a
     * single-source decode. */
    if (cfg->protocol == TB_PROTO_ETMV3) {
        ocsd_etmv3_cfg c = {cfg->etmidr, cfg->etmcr, cfg->etmccer,
                            formatted ? cfg->trace_id : 0x10u, ARCH_V7, profile_CortexA};
        err = ocsd_dt_create_decoder(tree, OCSD_BUILTIN_DCD_ETMV3, flags, &c, &csid);
    } else {
        ocsd_ptm_cfg c = {cfg->etmidr, cfg->etmcr, cfg->etmccer,
                          formatted ? cfg->trace_id : 0x10u, ARCH_V7, profile_CortexA};
        err = ocsd_dt_create_decoder(tree, OCSD_BUILTIN_DCD_PTM, flags, &c, &csid);
    }
    if (err != OCSD_OK)
        tb_fuzz_fail("ocsd", "OpenCSD refused ETMCR 0x%08x ETMIDR 0x%08x ETMCCER 0x%08x "
                     "(error %d)", cfg->etmcr, cfg->etmidr, cfg->etmccer, (int)err);
    if (csid_out)
        *csid_out = csid;
    if (!(flags & OCSD_CREATE_FLG_FULL_DECODER))
        return tree;
#if TB_FUZZ_LSAN
    __lsan_disable();
#endif
    err = ocsd_dt_set_gen_elem_outfn(tree, theirs_on_elem, &g_theirs);
#if TB_FUZZ_LSAN
    __lsan_enable();
#endif
    if (err != OCSD_OK ||
        ocsd_dt_add_callback_mem_acc(tree, 0, 0xFFFFFFFFull, OCSD_MEM_SPACE_ANY,
                                     mem_read, NULL) != OCSD_OK)
        tb_fuzz_fail("ocsd", "cannot attach the element and memory callbacks");
    return tree;
}

/* OpenCSD's own packets of the input (theirs_scan): where its packet
 * processor cuts the bytes, for the faults that are in its packet
 * processors (11, 13, 19, 20), the one that must not reach its decoder
 * (18), and its packet-level errors.  Kinds, across both protocols: */
enum { TK_OTHER, TK_ASYNC, TK_ISYNC, TK_BRANCH, TK_TIMESTAMP, TK_NOTSYNC, TK_BAD };

typedef struct theirs_pkt {
    uint64_t index;
    uint8_t kind;     /* TK_* */
    bool cancel;      /* ETMv3: a branch packet with Cancel (isExcepCancel) */
    bool altisa;      /* ETMv3: its AltISA state after the packet (fault 23) */
} theirs_pkt;

static struct {
    theirs_pkt *v;
    size_t n;
    uint64_t len;     /* bytes scanned: the last packet's end */
    uint64_t cut;     /* fault 18: index of the second Cancel in a row */
    bool async;       /* an A-sync seen */
    uint64_t sync_at; /* the first I-sync after an A-sync: where OpenCSD's
                         decoders start (WAIT_ASYNC, WAIT_ISYNC), or
                         UINT64_MAX */
    uint64_t bad_at;  /* its first malformed packet, or UINT64_MAX */
    bool in_eot;      /* the end of trace is being signalled */
    uint64_t eot_isync; /* fault 22: an I-sync its end of trace cut short,
                           or UINT64_MAX */
} g_tp;

/* docs/opencsd-bugs.md 18: OpenCSD 1.3.3's ETMv3 decoder does not clear
 * its count of held elements when a Cancel deletes them
 * (OcsdGenElemList::cancelPendElem), so a second branch packet with
 * Cancel straight after the first deletes that many elements again:
 * elements it never held (the first one's EXCEPTION), and when there are
 * fewer its element count goes negative and the list is read out of
 * bounds: garbage elements, or a crash inside the library (ASan: SEGV in
 * processBranchAddr or processPHdr).  No fault of theirs may end the
 * harness's process, so OpenCSD's decoder is given the trace only up to
 * such a packet.  Found on OpenCSD's own packets (its packet processor
 * alone, a tree of its own), since where the two parse differently ours
 * would not show where it is.  Any other packet between the two commits
 * the held elements (TrcPktDecodeEtmV3::decodePacket: commitAllPendElem)
 * and so clears the count. */
static void theirs_scan_add(uint64_t index, uint8_t kind, bool cancel, bool altisa)
{
    if (g_tp.n == TB_OCSD_MAX_BYTES)
        return;
    if (cancel && g_tp.n && g_tp.v[g_tp.n - 1].cancel && g_tp.cut == UINT64_MAX)
        g_tp.cut = index;
    if (kind == TK_ASYNC)
        g_tp.async = true;
    else if (kind == TK_ISYNC && g_tp.async && g_tp.sync_at == UINT64_MAX)
        g_tp.sync_at = index;
    /* A malformed packet, or lost alignment after an A-sync. */
    if ((kind == TK_BAD || (kind == TK_NOTSYNC && g_tp.async)) && g_tp.bad_at == UINT64_MAX)
        g_tp.bad_at = index;
    /* Only a packet still unfinished reaches the sink from the end of
     * trace (EtmV3PktProcImpl::onEOT sends it as it stands). */
    if (g_tp.in_eot && kind == TK_ISYNC)
        g_tp.eot_isync = index;
    g_tp.v[g_tp.n++] = (theirs_pkt){index, kind, cancel, altisa};
}

static ocsd_datapath_resp_t theirs_scan_etmv3(const void *ctx, const ocsd_datapath_op_t op,
                                              const ocsd_trc_index_t index, const void *pkt)
{
    const ocsd_etmv3_pkt *p = pkt;
    uint8_t kind = TK_OTHER;

    (void)ctx;
    if (op != OCSD_OP_DATA || !p)
        return OCSD_RESP_CONT;
    switch (p->type) {
    case ETM3_PKT_A_SYNC: kind = TK_ASYNC; break;
    case ETM3_PKT_I_SYNC: case ETM3_PKT_I_SYNC_CYCLE: kind = TK_ISYNC; break;
    case ETM3_PKT_BRANCH_ADDRESS: kind = TK_BRANCH; break;
    case ETM3_PKT_TIMESTAMP: kind = TK_TIMESTAMP; break;
    case ETM3_PKT_NOTSYNC: kind = TK_NOTSYNC; break;
    case ETM3_PKT_BAD_SEQUENCE: case ETM3_PKT_BAD_TRACEMODE: case ETM3_PKT_RESERVED:
        kind = TK_BAD;
        break;
    default: break;
    }
    theirs_scan_add(index, kind,
                    kind == TK_BRANCH && p->exception.bits.present && p->exception.bits.cancel,
                    p->context.curr_alt_isa);
    return OCSD_RESP_CONT;
}

static ocsd_datapath_resp_t theirs_scan_ptm(const void *ctx, const ocsd_datapath_op_t op,
                                            const ocsd_trc_index_t index, const void *pkt)
{
    const ocsd_ptm_pkt *p = pkt;
    uint8_t kind = TK_OTHER;

    (void)ctx;
    if (op != OCSD_OP_DATA || !p)
        return OCSD_RESP_CONT;
    switch (p->type) {
    case PTM_PKT_A_SYNC: kind = TK_ASYNC; break;
    case PTM_PKT_I_SYNC: kind = TK_ISYNC; break;
    case PTM_PKT_BRANCH_ADDRESS: kind = TK_BRANCH; break;
    case PTM_PKT_TIMESTAMP: kind = TK_TIMESTAMP; break;
    case PTM_PKT_NOTSYNC: kind = TK_NOTSYNC; break;
    case PTM_PKT_BAD_SEQUENCE: case PTM_PKT_RESERVED: kind = TK_BAD; break;
    default: break;
    }
    theirs_scan_add(index, kind, false, false);
    return OCSD_RESP_CONT;
}

static void theirs_scan(const tb_config *cfg, const uint8_t *data, size_t len, bool formatted)
{
    static theirs_ctx quiet; /* .s NULL: its log is not the decode's */
    dcd_tree_handle_t tree;
    unsigned char csid;
    size_t done = 0;

    g_tp.n = 0;
    g_tp.cut = UINT64_MAX;
    g_tp.len = len;
    g_tp.async = false;
    g_tp.sync_at = UINT64_MAX;
    g_tp.bad_at = UINT64_MAX;
    g_tp.in_eot = false;
    g_tp.eot_isync = UINT64_MAX;
    tree = make_tree(cfg, formatted, &quiet, OCSD_CREATE_FLG_PACKET_PROC, &csid);
    if (ocsd_dt_attach_packet_callback(tree, csid, OCSD_C_API_CB_PKT_SINK,
                                       cfg->protocol == TB_PROTO_ETMV3 ? (void *)theirs_scan_etmv3
                                                                       : (void *)theirs_scan_ptm,
                                       NULL) != OCSD_OK)
        tb_fuzz_fail("ocsd", "cannot attach the packet callback");
    while (done < len) {
        uint32_t used = 0;
        ocsd_datapath_resp_t r = ocsd_dt_process_data(tree, OCSD_OP_DATA, done,
                                                      (uint32_t)(len - done), data + done,
                                                      &used);

        if (OCSD_DATA_RESP_IS_FATAL(r) || used == 0)
            break;
        done += used;
    }
    g_tp.in_eot = true;
    ocsd_dt_process_data(tree, OCSD_OP_EOT, 0, 0, NULL, NULL);
    g_tp.in_eot = false;
    ocsd_destroy_dcd_tree(tree);
}

/* OpenCSD's packet at index, or NULL. */
static const theirs_pkt *theirs_pkt_at(uint64_t index)
{
    size_t lo = 0, hi = g_tp.n;

    while (lo < hi) {
        size_t mid = (lo + hi) / 2;

        if (g_tp.v[mid].index < index)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < g_tp.n && g_tp.v[lo].index == index ? &g_tp.v[lo] : NULL;
}

/* Where OpenCSD's packet t ends: the next one's start. */
static uint64_t theirs_pkt_end(const theirs_pkt *t)
{
    return t + 1 < g_tp.v + g_tp.n ? t[1].index : g_tp.len;
}

static bool g_cancel_cut; /* this input's (counted in tb_ocsd_diff) */

static void theirs_decode(const tb_config *cfg, const uint8_t *data, size_t len,
                          bool formatted, seq *s)
{
    dcd_tree_handle_t tree;
    size_t done = 0;
    uint64_t cut = UINT64_MAX;
    uint32_t used;

    theirs_scan(cfg, data, len, formatted);
    if (!getenv("TB_FUZZ_OCSD_NO_SIGNATURES") && g_tp.cut < len)
        len = (size_t)(cut = g_tp.cut);
    g_theirs = (theirs_ctx){.s = s};
    tree = make_tree(cfg, formatted, &g_theirs, OCSD_CREATE_FLG_FULL_DECODER, NULL);
    while (done < len) {
        ocsd_datapath_resp_t r;

        used = 0;
        r = ocsd_dt_process_data(tree, OCSD_OP_DATA, done, (uint32_t)(len - done),
                                 data + done, &used);
        if (OCSD_DATA_RESP_IS_FATAL(r)) {
            char why[200];

            snprintf(why, sizeof why, "fatal datapath response %d near byte %zu%s%s",
                     (int)r, done + used, g_theirs.last_log[0] ? ": " : "",
                     g_theirs.last_log);
            seq_error(s, done + used, why);
            break;
        }
        if (OCSD_DATA_RESP_IS_WAIT(r))
            ocsd_dt_process_data(tree, OCSD_OP_FLUSH, 0, 0, NULL, NULL);
        else if (used == 0)
            tb_fuzz_fail("ocsd", "OpenCSD made no progress at byte %zu", done);
        done += used;
    }
    ocsd_dt_process_data(tree, OCSD_OP_EOT, 0, 0, NULL, NULL);
    ocsd_destroy_dcd_tree(tree);
    if (!getenv("TB_FUZZ_OCSD_NO_SIGNATURES"))
        seq_bad_packet(s, g_tp.bad_at, "OpenCSD's packet processor: a malformed packet");
    if (cut != UINT64_MAX) {
        /* Not judged from there on: the comparison ends at the shorter
         * side where it was cut. */
        seq_error(s, cut, "stopped before its second Cancel in a row (docs/opencsd-bugs.md 18)");
        g_cancel_cut = true;
    }
}

/* ---- comparison ---- */

static const char *isa_str(uint8_t isa)
{
    return tb_isa_name((tb_isa)isa);
}

static void show(const char *who, const seq *s, size_t at)
{
    const bool all = at == (size_t)-1;
    size_t from = all ? 0 : at > 6 ? at - 6 : 0, i;

    fprintf(stderr, "  %s (%zu instructions%s", who, s->n, s->full ? ", capped" : "");
    if (s->err)
        fprintf(stderr, "; first error after %zu: %s", s->err_at, s->why);
    fprintf(stderr, "):\n");
    for (i = from; i < s->n && (all || i < at + 6); i++)
        fprintf(stderr, "   %c%6zu  0x%08x %-6s %c  packet %llu\n", i == at ? '>' : ' ',
                i, s->v[i].addr, isa_str(s->v[i].isa), s->v[i].atom ? s->v[i].atom : '?',
                (unsigned long long)s->v[i].index);
}

/* Our packets around a difference, for the report. */
typedef struct pkt_window {
    uint64_t from, to;
} pkt_window;

static int print_packet(void *ctx, const tb_packet *p)
{
    const pkt_window *w = ctx;
    char line[512];

    if (p->index >= w->from && p->index <= w->to) {
        tb_packet_format(p, line, sizeof line);
        fprintf(stderr, "   %6llu  %s\n", (unsigned long long)p->index, line);
    }
    return p->index > w->to;
}

static void show_packets(const tb_config *cfg, const tb_ocsd_run *runs, size_t n_runs,
                         uint64_t from, uint64_t to)
{
    tb_parser *p = tb_parser_new(cfg);
    pkt_window w = {from, to};
    size_t k;

    fprintf(stderr, "  ETMCR 0x%08x ETMIDR 0x%08x ETMCCER 0x%08x; our packets %llu..%llu:\n",
            cfg->etmcr, cfg->etmidr, cfg->etmccer, (unsigned long long)from,
            (unsigned long long)to);
    if (p) {
        for (k = 0; k < n_runs; k++) {
            if (runs[k].len)
                (void)tb_parser_push(p, runs[k].data, runs[k].len, runs[k].index,
                                     print_packet, &w);
            else
                tb_parser_reset(p);
        }
        (void)tb_parser_finish(p, print_packet, &w);
        tb_parser_free(p);
    }
}

static bool same(const insn *a, const insn *b)
{
    return a->addr == b->addr && a->isa == b->isa &&
           (!a->atom || !b->atom || a->atom == b->atom);
}

/* The comparison's state: ours a[i..na), OpenCSD's b[j..nb). */
typedef struct cmp {
    const tb_config *cfg;
    const seq *a, *b;
    const pkt_list *pk;
    size_t i, j, na, nb;
    uint64_t realigned_q;  /* misparsed(): the resync point realigned at */
} cmp;

/* Whether one of our I-sync packets, or a branch packet with all 32
 * address bits, lies in (lo, hi]: two instructions
 * of packets on either side of one cannot be the same execution,
 * however alike their addresses (the pairing by address would otherwise
 * let a decode that begins later, at an I-sync the other side did not
 * need, pair its first instructions with the other's later ones, and
 * put the parting far from where it is: regressions ocsd_ptm
 * opencsd20-async-missed-ours-starts-first, ocsd_etmv3
 * opencsd19-then-paired-across-isync).  A full branch sets the address
 * as an I-sync does: after fault 12's NACC OpenCSD had nothing until an
 * exception branch, and our run before it was paired with OpenCSD's run
 * of the same code after it (a campaign at 9aabeef, regressions/
 * ocsd_etmv3/opencsd12-nacc-then-paired-across-branch; both corpora still
 * pass).  Not an A-sync: it ends no
 * range, and our range element carries the index of its first packet,
 * OpenCSD's of its last, so a straight run through an A-sync is one
 * execution with packets on both sides of it (regression ocsd_etmv3
 * harness-range-across-async).  The packet list is in index order. */
static bool sync_between(const cmp *c, uint64_t lo, uint64_t hi)
{
    size_t l = 0, h = c->pk->n;

    while (l < h) { /* the first packet after lo */
        size_t m = l + (h - l) / 2;

        if (c->pk->v[m].index <= lo)
            l = m + 1;
        else
            h = m;
    }
    for (; l < c->pk->n && c->pk->v[l].index <= hi; l++)
        if (c->pk->v[l].kind == TB_PKT_ISYNC ||
            (c->pk->v[l].kind == TB_PKT_BRANCH && c->pk->v[l].full))
            return true;
    return false;
}

/* ours a and OpenCSD's b are one instruction: same() from packets that
 * no synchronisation separates. */
static const pkt_info *pkt_at(const cmp *c, uint64_t index);

static bool paired(const cmp *c, const insn *a, const insn *b)
{
    const pkt_info *p;

    if (!same(a, b))
        return false;
    if (a->index == b->index)
        return true;
    /* The waypoint a PTM branch with a number-0 exception byte implies
     * (IHI0035B 4.5.4) is that packet's on both sides, or missing from
     * OpenCSD's (fault 17): never a later execution at the same address
     * (a campaign at 1d80de9 paired it with the next arrival at the IRQ
     * vector, 18 packets on: regressions/ocsd_ptm/
     * opencsd17-exc0-waypoint-paired-later). */
    if (c->cfg->protocol == TB_PROTO_PTM && (p = pkt_at(c, a->index)) != NULL &&
        p->kind == TB_PKT_BRANCH && p->has_exc && p->exc_num == 0)
        return false;
    /* The same for an LSiP I-sync's load/store (IHI0014Q 7.10.5), which
     * OpenCSD never reports (fault 21): a campaign at 1d80de9 met one
     * whose second address is its own (ARM, bit 1 set), and paired it
     * with OpenCSD's first instruction of the next atom packet
     * (regressions/ocsd_etmv3/opencsd21-lsip-insn-paired-with-the-next-packet). */
    if (c->cfg->protocol == TB_PROTO_ETMV3 && (p = pkt_at(c, a->index)) != NULL &&
        p->kind == TB_PKT_ISYNC && p->lsip)
        return false;
    return a->index < b->index ? !sync_between(c, a->index, b->index)
                               : !sync_between(c, b->index, a->index);
}

/* The last of our packets at or before index whose kind is kind. */
static const pkt_info *pkt_before(const cmp *c, uint64_t index, tb_pkt_kind kind)
{
    size_t k;

    for (k = c->pk->n; k-- > 0;)
        if (c->pk->v[k].index <= index && c->pk->v[k].kind == kind)
            return &c->pk->v[k];
    return NULL;
}

/* A PTM tracing with its return stack (ETMCR[29]) pops return addresses
 * the walk before pushed (IHI0035B B.3.2), so after a difference the two
 * decoders' stacks may hold different addresses until an I-sync empties
 * both (protocol-notes 4.4 item 10): only an I-sync puts them back in
 * step. */
static bool isync_only(const cmp *c)
{
    return c->cfg->protocol == TB_PROTO_PTM && c->cfg->return_stack;
}

/* Both decoders are back in step once a packet sets the address in full
 * or by replacing its low bits alike: an I-sync, or a branch address
 * packet (isync_only: an I-sync).  Skips every instruction that packets
 * up to the first such packet after index produced, on both sides.
 * False when there is none (the comparison then ends there, as both
 * sides do). */
static bool resync_after(cmp *c, uint64_t index)
{
    uint64_t q = UINT64_MAX;
    size_t k;

    for (k = 0; k < c->pk->n; k++) {
        const pkt_info *p = &c->pk->v[k];

        if (p->index > index &&
            (p->kind == TB_PKT_ISYNC || (p->kind == TB_PKT_BRANCH && !isync_only(c)))) {
            q = p->index;
            break;
        }
    }
    while (c->i < c->na && c->a->v[c->i].index <= q)
        c->i++;
    while (c->j < c->nb && c->b->v[c->j].index <= q)
        c->j++;
    return q != UINT64_MAX;
}

/* ---- documented OpenCSD faults: each recognises its own signature at
 * the point where the sequences part, and moves the comparison past it.
 * ---- */

/* docs/opencsd-bugs.md 12: an ARM address taken from an I-sync keeps
 * bit 1 (IHI0014Q 7.10.5 table 7.20 and IHI0035B 4.5.3: ARM state is
 * word aligned), so OpenCSD walks ARM code at a halfword offset until the
 * next address packet.  Signature: its instruction is ARM at addr & 3 ==
 * 2, ours is the same address aligned, and the I-sync that set the
 * address had bit 1 set. */
static bool fault_arm_isync_bit1(cmp *c)
{
    const insn *t = c->j < c->nb ? &c->b->v[c->j] : NULL;
    const insn *o = c->i < c->na ? &c->a->v[c->i] : NULL;
    const pkt_info *is;

    /* OpenCSD's walk from the halfword address may find no memory there
     * (at 0xfffffffe, say: a NACC, no instruction at all): then ours is
     * the ARM instruction the I-sync names and OpenCSD has none from its
     * packet (found by a campaign at 8aa0211, regressions/ocsd_etmv3/
     * opencsd12-arm-isync-bit1-nacc). */
    if (o && o->isa == TB_ISA_ARM && !(o->addr & 3) && (!t || t->index > o->index) &&
        (is = pkt_before(c, o->index, TB_PKT_ISYNC)) && is->isa == TB_ISA_ARM &&
        (is->addr & 3) == 2 && (is->addr & ~3u) == o->addr) {
        resync_after(c, o->index);
        return true;
    }
    if (!t || t->isa != TB_ISA_ARM || (t->addr & 3) != 2)
        return false;
    is = pkt_before(c, t->index, TB_PKT_ISYNC);
    if (!is || is->isa != TB_ISA_ARM || (is->addr & 3) != 2)
        return false;
    if (o && !(o->isa == TB_ISA_ARM && !(o->addr & 3)))
        return false;
    resync_after(c, t->index);
    return true;
}

/* The earlier of the packets that produced the two parting
 * instructions: the fault shows there, both sides agree before it. */
static uint64_t part_index(const cmp *c)
{
    uint64_t a = c->i < c->na ? c->a->v[c->i].index : UINT64_MAX;
    uint64_t b = c->j < c->nb ? c->b->v[c->j].index : UINT64_MAX;

    return a < b ? a : b;
}

/* docs/opencsd-bugs.md 1: OpenCSD starts every P-header in the ISA of
 * the last I-sync or branch packet, losing an ISA change by BLX(imm)
 * inside the previous header (either way: ARM to Thumb or back).  For an
 * LSiP I-sync that is the ISA where execution goes on, not the
 * load/store's (test_ocsd_fuzz_bugs blx_isa_lost_after_lsip_isync).
 * Signature: the same address, OpenCSD in the ISA of the last address
 * packet, ours in the other one; both back in step at the next address
 * packet. */
static bool fault_blx_isa_lost(cmp *c)
{
    const insn *o = c->i < c->na ? &c->a->v[c->i] : NULL;
    const insn *t = c->j < c->nb ? &c->b->v[c->j] : NULL;
    const pkt_info *is, *br, *last;

    if (c->cfg->protocol != TB_PROTO_ETMV3 || !o || !t || o->addr != t->addr ||
        o->isa == t->isa)
        return false;
    is = pkt_before(c, t->index, TB_PKT_ISYNC);
    br = pkt_before(c, t->index, TB_PKT_BRANCH);
    last = !is ? br : !br ? is : is->index > br->index ? is : br;
    if (!last || last->next_isa != t->isa)
        return false;
    resync_after(c, part_index(c));
    return true;
}

/* The instruction at addr in isa per our classifier (Capstone). */
static bool undefined_at(uint32_t addr, uint8_t isa)
{
    static tb_classifier *cls;
    uint8_t b[4];
    size_t n = tb_memimage_read(g_mem, addr, b, sizeof b);
    tb_insn in;

    if (isa != TB_ISA_ARM && isa != TB_ISA_THUMB)
        return false;
    if (!cls && !(cls = tb_classifier_new()))
        tb_fuzz_fail("ocsd", "cannot make a classifier");
    return n && tb_classifier_decode(cls, b, n, addr, (tb_isa)isa, &in) > 0 && in.undefined;
}

/* Not an OpenCSD fault: the architecture leaves it open
 * (docs/opencsd-bugs.md, "Where the two may rightly differ").  The trace
 * runs through an encoding the architecture does not define (an entry
 * into the middle of a 32-bit Thumb instruction, or a mutated branch
 * address, reaches one even in the defined image): a real core would
 * take an Undefined Instruction exception, so a trace that shows it
 * executing is not one a PE makes, and each decoder's reading of it
 * (OpenCSD's sees branches in some, e.g. 0xF854F8DD as LDR pc, 0xE9946808)
 * is as good as the other's.  Signature: the last instruction both
 * agree on, or either parting one, is undefined to our classifier; both
 * back in step at the next address packet. */
static bool open_undefined(cmp *c)
{
    const insn *cand[3] = {
        c->i > 0 && c->i <= c->na ? &c->a->v[c->i - 1] : NULL,
        c->i < c->na ? &c->a->v[c->i] : NULL,
        c->j < c->nb ? &c->b->v[c->j] : NULL,
    };
    size_t k;

    for (k = 0; k < 3; k++)
        if (cand[k] && undefined_at(cand[k]->addr, cand[k]->isa))
            break;
    if (k == 3)
        return false;
    resync_after(c, part_index(c));
    return true;
}

/* Our packet at index, or NULL. */
static const pkt_info *pkt_at(const cmp *c, uint64_t index)
{
    size_t lo = 0, hi = c->pk->n;

    while (lo < hi) {
        size_t mid = (lo + hi) / 2;

        if (c->pk->v[mid].index < index)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < c->pk->n && c->pk->v[lo].index == index ? &c->pk->v[lo] : NULL;
}

/* docs/opencsd-bugs.md 14, sent late: the stale range of an empty
 * P-header of ours comes out at a later packet (an I-sync that ends the
 * trace: fuzz/regressions/ocsd_etmv3/opencsd14-stale-range-at-next-packet).
 * Signature: OpenCSD's instructions of one packet P, each the address and
 * ISA of one it sent before our last empty P-header e before P, with no
 * instruction of ours from e up to P; all of them skipped. */
static bool fault_empty_pheader_late(cmp *c)
{
    const uint64_t at = c->b->v[c->j].index;
    const pkt_info *e = NULL;
    size_t k, j;

    if (c->cfg->protocol != TB_PROTO_ETMV3)
        return false;
    for (k = c->pk->n; k-- > 0 && !e;)
        if (c->pk->v[k].index < at && c->pk->v[k].kind == TB_PKT_ATOM &&
            c->pk->v[k].atoms == 0)
            e = &c->pk->v[k];
    if (!e || (c->i < c->na && c->a->v[c->i].index <= at))
        return false;
    for (k = 0; k < c->na; k++)
        if (c->a->v[k].index >= e->index && c->a->v[k].index <= at)
            return false;
    for (j = c->j; j < c->nb && c->b->v[j].index == at; j++) {
        bool seen = false;

        for (k = 0; k < c->j && !seen; k++)
            seen = c->b->v[k].index < e->index && c->b->v[k].addr == c->b->v[j].addr &&
                   c->b->v[k].isa == c->b->v[j].isa;
        if (!seen)
            return false;
    }
    c->j = j;
    return true;
}

/* docs/opencsd-bugs.md 14: an ETMv3 P-header with no E or N atom (0x80,
 * or a cycle-accurate one of W atoms only) makes OpenCSD send a range it
 * never filled in: an older range's addresses again.  Signature: its
 * instruction comes from a packet that is such a P-header of ours;
 * skipped. */
static bool fault_empty_pheader(cmp *c)
{
    const pkt_info *p;

    if (c->j >= c->nb)
        return false;
    p = pkt_at(c, c->b->v[c->j].index);
    if (p && p->kind == TB_PKT_ATOM && p->atoms == 0) {
        while (c->j < c->nb && c->b->v[c->j].index == p->index)
            c->j++;
        return true;
    }
    return fault_empty_pheader_late(c);
}

/* The instruction at addr in isa, by our classifier; false when the
 * image does not hold it. */
static bool classify_at(uint32_t addr, uint8_t isa, tb_insn *in)
{
    static tb_classifier *cls;
    uint8_t b[4];
    size_t n = tb_memimage_read(g_mem, addr, b, sizeof b);

    if (isa != TB_ISA_ARM && isa != TB_ISA_THUMB)
        return false;
    if (!cls && !(cls = tb_classifier_new()))
        tb_fuzz_fail("ocsd", "cannot make a classifier");
    return n && tb_classifier_decode(cls, b, n, addr, (tb_isa)isa, in) > 0;
}

/* docs/opencsd-bugs.md 15: a BLX(imm) whose atom is N (its condition
 * failed: ARMv7-A ARM A8.8.25, a Thumb BLX can be conditional in an IT
 * block) did not branch, yet OpenCSD switches the ISA for what follows.
 * Signature: the last instruction both agree on is a BLX(imm) with N,
 * and OpenCSD goes on at the next address in the other ISA; both back in
 * step at the next address packet. */
static bool fault_blx_n_switches_isa(cmp *c)
{
    const insn *last = c->i > 0 && c->i <= c->na ? &c->a->v[c->i - 1] : NULL;
    const insn *o = c->i < c->na ? &c->a->v[c->i] : NULL;
    const insn *t = c->j < c->nb ? &c->b->v[c->j] : NULL;
    tb_insn in;

    if (!last || !t || last->atom != 'N' || !classify_at(last->addr, last->isa, &in) ||
        in.wp_class != TB_WP_DIRECT_LINK || in.target_isa == last->isa ||
        t->addr != last->addr + in.size || t->isa == last->isa ||
        (o && (o->addr != t->addr || o->isa != last->isa)))
        return false;
    resync_after(c, part_index(c));
    return true;
}

/* docs/opencsd-bugs.md 16: OpenCSD reads a Thumb instruction as four
 * bytes, so one in the last halfword of a memory region (a 16-bit one,
 * all there) is not decoded: its range ends one instruction early, with
 * "code not accessible" there, and it waits for an address packet
 * (atoms before one are not decoded; with a return stack, a return it
 * would have popped is not popped).  Signature: ours is a Thumb
 * instruction whose image holds exactly two bytes; both back in step
 * after the next address packet (resync_after). */
static bool fault_thumb_last_halfword(cmp *c)
{
    const insn *o = c->i < c->na ? &c->a->v[c->i] : NULL;
    uint8_t b[4];

    if (!o || o->isa != TB_ISA_THUMB ||
        tb_memimage_read(g_mem, o->addr, b, 4) != 2)
        return false;
    c->i++;
    resync_after(c, o->index);
    return true;
}

static bool misparsed(cmp *c, bool (*shape)(const pkt_info *p, const theirs_pkt *t));

/* docs/opencsd-bugs.md 13: an ETMv3 timestamp has at most 7 (48-bit) or
 * 9 (64-bit) payload bytes, the last one full-width (protocol-notes 2.8);
 * OpenCSD reads on while bit 7 is set, swallowing the packets after it.
 * Signature (misparsed): one of our timestamps that long with bit 7 of
 * its last byte set, and OpenCSD's timestamp there longer. */
static bool ts_shape(const pkt_info *p, const theirs_pkt *t)
{
    return p->kind == TB_PKT_TIMESTAMP && (p->last & 0x80) && t->kind == TK_TIMESTAMP;
}

static bool fault_ts_unbounded(cmp *c)
{
    return misparsed(c, ts_shape);
}

/* docs/opencsd-bugs.md 19: a branch packet's address has at most five
 * bytes (IHI0014Q 7.3.5); a fifth byte with bit 7 set is the deprecated
 * form that carries its exception in itself, and no byte follows it.
 * With the alternative address encoding (ETMIDR[20], ETMv3.4+) OpenCSD's
 * packet processor reads on to the next byte with bit 7 clear (and, if
 * that byte's bit 6 is set, on through exception bytes), swallowing the
 * packets between.  Signature (misparsed): one of our 5-byte branch
 * packets in that form, and OpenCSD's branch packet there longer. */
static bool byte5_shape(const pkt_info *p, const theirs_pkt *t)
{
    return p->kind == TB_PKT_BRANCH && p->legacy_exc && p->size == 5 &&
           t->kind == TK_BRANCH;
}

static bool fault_alt_byte5(cmp *c)
{
    return misparsed(c, byte5_shape);
}

/* docs/opencsd-bugs.md 21: an LSiP I-sync implies that its load/store
 * instruction executed (IHI0014Q 7.14.2); OpenCSD's ETMv3 decoder goes
 * on at the I-sync's second address and never reports it.  Signature:
 * our instruction is the first one from an LSiP I-sync (the load/store)
 * and OpenCSD has none from that packet (one of a later packet at the
 * same address is the next execution: a campaign at cf440d4 met an LSiP
 * I-sync whose two addresses are the same, regressions/ocsd_etmv3/
 * opencsd21-lsip-insn-at-its-own-next-address); skipped. */
static bool fault_lsip_insn_missing(cmp *c)
{
    const insn *o = c->i < c->na ? &c->a->v[c->i] : NULL;
    const insn *t = c->j < c->nb ? &c->b->v[c->j] : NULL;
    const pkt_info *p = o ? pkt_at(c, o->index) : NULL;

    if (c->cfg->protocol != TB_PROTO_ETMV3 || !p || p->kind != TB_PKT_ISYNC || !p->lsip ||
        (c->i > 0 && c->a->v[c->i - 1].index == o->index) ||
        (t && t->index == o->index && same(o, t)))
        return false;
    c->i++;
    return true;
}

/* The first of our packets at or after index that sets the whole
 * address and the ISA (an I-sync, or a branch with all 32 address bits)
 * and that OpenCSD's packet processor also starts an address packet at,
 * with OpenCSD's decoder synchronised by then (an A-sync and an I-sync
 * of its own packets, g_tp.sync_at: the misread may have swallowed the
 * I-sync our decoder started at): from there both packet streams are in
 * step and both decoders know the address again (a shorter branch packet
 * would keep the upper bits of whatever address OpenCSD's misread
 * left).  UINT64_MAX when there is none. */
static uint64_t aligned_addr_after(const cmp *c, uint64_t index)
{
    size_t k;

    for (k = 0; k < c->pk->n; k++) {
        const pkt_info *p = &c->pk->v[k];
        const theirs_pkt *t;

        if (p->index < index || !p->full || p->index < g_tp.sync_at ||
            (isync_only(c) && p->kind != TB_PKT_ISYNC))
            continue;
        t = theirs_pkt_at(p->index);
        /* OpenCSD's AltISA, set by an exception byte its misread read,
         * outlives every I-sync (docs/opencsd-bugs.md 23) and makes its
         * next Thumb branch ThumbEE: not in step while it is set (found
         * by campaigns at 73481d3 and b71a737; regressions/ocsd_etmv3/
         * opencsd19-altisa-left-by-the-misread and -past-an-arm-branch,
         * opencsd23-altisa-outlives-the-isync).  Ours stops the
         * comparison where its own AltISA is set. */
        if (t && (t->kind == TK_BRANCH || t->kind == TK_ISYNC) && !t->altisa)
            return p->index;
    }
    return UINT64_MAX;
}

/* The first of s's instructions from `from` (below n) made by a packet
 * after index q; n when there is none. */
static size_t first_after(const seq *s, size_t from, size_t n, uint64_t q)
{
    while (from < n && s->v[from].index <= q)
        from++;
    return from;
}

/* Skips both sides' instructions of packets up to index q; with q
 * UINT64_MAX nothing further is compared. */
static void skip_to(cmp *c, uint64_t q)
{
    if (q == UINT64_MAX) {
        c->na = c->i;
        c->nb = c->j;
        return;
    }
    c->i = first_after(c->a, c->i, c->na, q);
    c->j = first_after(c->b, c->j, c->nb, q);
}

/* A fault of OpenCSD's ETMv3 packet processor: one of our packets
 * before the point of parting that shape() names, which OpenCSD's
 * packet processor (theirs_scan) also starts a packet of its kind at and
 * ends elsewhere, with the two packet streams not yet back in step at
 * the point of parting.  The comparison resumes after the first address
 * packet both streams start at once past both ends of that packet (or
 * ends, when there is none). */
static bool misparsed(cmp *c, bool (*shape)(const pkt_info *p, const theirs_pkt *t))
{
    const uint64_t at = part_index(c);
    size_t k;

    if (c->cfg->protocol != TB_PROTO_ETMV3)
        return false;
    for (k = c->pk->n; k-- > 0;) {
        const pkt_info *p = &c->pk->v[k];
        const theirs_pkt *t;
        uint64_t end, q;

        if (p->index > at)
            continue;
        t = theirs_pkt_at(p->index);
        if (!t || !shape(p, t) || theirs_pkt_end(t) == p->index + p->size)
            continue;
        end = theirs_pkt_end(t) > p->index + p->size ? theirs_pkt_end(t) : p->index + p->size;
        q = aligned_addr_after(c, end);
        if (q < at) {
            /* In step again at q, before the difference: a difference
             * of its own, unless the pairing by address went across q,
             * one side's instructions from inside the misread paired
             * with the other's after q (a loop at one address: found by
             * a campaign at cd50b69, regressions/ocsd_etmv3/
             * opencsd19-paired-across-the-misread).  Then the two sides
             * took different counts since q: compare again from q (the
             * pairing from there is in lockstep). */
            const size_t i2 = first_after(c->a, 0, c->na, q);
            const size_t j2 = first_after(c->b, 0, c->nb, q);

            /* Only ever forward (each point once, in order): the
             * comparison ends. */
            if ((c->realigned_q != UINT64_MAX && q <= c->realigned_q) || i2 > c->i ||
                j2 > c->j || c->i - i2 == c->j - j2)
                return false;
            c->realigned_q = q;
            c->i = i2;
            c->j = j2;
            return true;
        }
        skip_to(c, q);
        return true;
    }
    return false;
}

/* docs/opencsd-bugs.md 11: OpenCSD ends an ETMv3 LSiP I-sync at the
 * first byte with bit 7 clear once it has the bytes it expects without
 * the LSiP address: at the address's fourth byte when bit 31 is clear
 * (the LSiP address then read as packets of their own: a branch, or a
 * P-header of no atoms first), and, when the LSiP address's fifth byte
 * has bit 7 set, only at some later byte (swallowing the packets
 * between, any number); an exception byte after the LSiP address (the
 * 6-byte form, or bit 6 of a shorter one's last byte in the alternative
 * encoding) is left out, and read as a packet of its own.  Signature
 * (misparsed): such an I-sync of ours (lsip_cut_by_ocsd), and OpenCSD's
 * I-sync there of another length. */
static bool lsip_shape(const pkt_info *p, const theirs_pkt *t)
{
    return p->kind == TB_PKT_ISYNC && p->lsip_cut &&
           t->kind == TK_ISYNC;
}

static bool fault_lsip_isync(cmp *c)
{
    return misparsed(c, lsip_shape);
}

/* docs/opencsd-bugs.md 2: an ETMv3 Cancel (exception information, bit
 * 5) removes the last traced instruction; OpenCSD keeps it unless it was
 * alone in its element list.  Signature: OpenCSD has one instruction
 * more, ours had it cancelled: the first branch packet after it carries
 * Cancel, with no I-sync before it; skipped. */
static bool fault_cancel_ignored(cmp *c)
{
    const insn *t = c->j < c->nb ? &c->b->v[c->j] : NULL;
    size_t k;

    if (c->cfg->protocol != TB_PROTO_ETMV3 || !t)
        return false;
    for (k = 0; k < c->pk->n; k++) {
        const pkt_info *p = &c->pk->v[k];

        if (p->index <= t->index)
            continue;
        if (p->kind == TB_PKT_ISYNC)
            return false;
        if (p->kind != TB_PKT_BRANCH)
            continue;
        if (!p->cancel)
            return false;
        /* It is the last instruction before the Cancel: OpenCSD's next
         * one comes after the branch packet, or is ours again. */
        if (c->j + 1 < c->nb && c->b->v[c->j + 1].index < p->index &&
            !(c->i < c->na && same(&c->b->v[c->j + 1], &c->a->v[c->i])))
            return false;
        /* And ours had it cancelled: no instruction of ours from the
         * same packet at the same address is still to be paired.  (A
         * campaign at c38fcc9 met a Cancel of an instruction neither
         * side could show, the walk having lost the address at an
         * indirect branch; ours was one behind at a fault-21 load/store:
         * regressions/ocsd_etmv3/cancel-of-an-unseen-instruction.) */
        for (size_t i = c->i; i < c->na && c->a->v[i].index <= t->index; i++)
            if (same(&c->a->v[i], t))
                return false;
        c->j++;
        return true;
    }
    return false;
}

/* docs/opencsd-bugs.md 17: a PTM branch packet with exception bytes
 * whose exception number is 0 is no exception (IHI0035B 4.5.4: an
 * exception branch is one with a nonzero Exception field; a
 * non-exception branch implies an E atom); OpenCSD takes any branch with
 * exception bytes for an exception and drops the implied E atom, so the
 * range up to the waypoint is missing.  Signature: ours has instructions
 * from such a packet that OpenCSD lacks; skipped. */
static bool fault_exc0_drops_atom(cmp *c)
{
    const insn *o = c->i < c->na ? &c->a->v[c->i] : NULL;
    const pkt_info *p;

    if (c->cfg->protocol != TB_PROTO_PTM || !o)
        return false;
    p = pkt_at(c, o->index);
    if (!p || p->kind != TB_PKT_BRANCH || !p->has_exc || p->exc_num != 0)
        return false;
    while (c->i < c->na && c->a->v[c->i].index == p->index) {
        tb_insn in;

        /* A link waypoint pushed its return address on our return
         * stack and not on OpenCSD's, which never saw it (IHI0035B
         * B.3.2): the two stacks agree again only after an I-sync (a
         * campaign at 87bfea3 met the pop of that address two packets
         * on: regressions/ocsd_ptm/opencsd17-exc0-link-then-pop). */
        if (c->cfg->return_stack && classify_at(c->a->v[c->i].addr, c->a->v[c->i].isa, &in) &&
            in.link) {
            resync_after(c, p->index);
            return true;
        }
        c->i++;
    }
    return true;
}

/* Not a fault (as open_undefined): the walk that parted began where the
 * harnesses' image holds no instruction in the state the trace named: in
 * the middle of a 32-bit Thumb instruction, or in the other instruction
 * set's region (Thumb code read as ARM, ARM code read as Thumb;
 * tb_fuzz_ocsd_insn_start), both only by a fuzzed address packet.  The
 * two decoders then read bytes that were never instructions in that
 * state, where UNDEFINED and UNPREDICTABLE encodings abound (e.g.
 * AND.W pc, Rn, ..., which OpenCSD's classifier does not take for a
 * branch).  Signature: since the last address packet before the point of
 * parting, an instruction both sides agree on, or either side's parting
 * one when it is the first after the packet and at the packet's own
 * address, starts at no instruction start of the image; both back in
 * step at the next address packet.  Not a parting instruction elsewhere:
 * a decoder that strays into the wrong state or the middle of an
 * instruction by itself is a finding. */
static bool walk_from(const pkt_info *p, const insn *v)
{
    /* A PTM branch packet's own instructions end the walk before it
     * (its implied E atom, IHI0035B 4.5.4); an I-sync's start its own. */
    return v->index > p->index || (v->index == p->index && p->kind == TB_PKT_ISYNC);
}

static bool open_mid_insn(cmp *c)
{
    const uint64_t at = part_index(c);
    const insn *o = c->i < c->na ? &c->a->v[c->i] : NULL;
    const insn *t = c->j < c->nb ? &c->b->v[c->j] : NULL;
    const insn first = {at, 0, 0, 0};
    const pkt_info *p = NULL;
    size_t k;

    if (g_mem != tb_fuzz_ocsd_image())
        return false;
    /* The address packet whose walk the point of parting is in. */
    for (k = 0; k < c->pk->n && c->pk->v[k].index <= at; k++)
        if ((c->pk->v[k].kind == TB_PKT_ISYNC || c->pk->v[k].kind == TB_PKT_BRANCH) &&
            walk_from(&c->pk->v[k], &first))
            p = &c->pk->v[k];
    if (!p)
        return false;
    for (k = c->i; k-- > 0 && walk_from(p, &c->a->v[k]);)
        if (!tb_fuzz_ocsd_insn_start(c->a->v[k].addr, (tb_isa)c->a->v[k].isa))
            goto found;
    for (k = c->j; k-- > 0 && walk_from(p, &c->b->v[k]);)
        if (!tb_fuzz_ocsd_insn_start(c->b->v[k].addr, (tb_isa)c->b->v[k].isa))
            goto found;
    /* The packet's own address, where the walk began. */
    if (o && walk_from(p, o) && (c->i == 0 || !walk_from(p, &c->a->v[c->i - 1])) &&
        o->addr == p->addr && !tb_fuzz_ocsd_insn_start(o->addr, (tb_isa)o->isa))
        goto found;
    if (t && walk_from(p, t) && (c->j == 0 || !walk_from(p, &c->b->v[c->j - 1])) &&
        t->addr == p->addr && !tb_fuzz_ocsd_insn_start(t->addr, (tb_isa)t->isa))
        goto found;
    return false;
found:
    resync_after(c, at);
    return true;
}

/* Not a fault: the architecture leaves it open (docs/opencsd-bugs.md,
 * "Where the two may rightly differ").  Sequential execution past
 * 0xFFFFFFFF: we wrap to 0, OpenCSD stops.  Signature: an instruction we
 * agreed on that ends at 2^32, the last one or any before it that one
 * of ours followed at 0 (the pairing by address may have matched our
 * instructions after the wrap with OpenCSD's at the same addresses much
 * later: found by a campaign at 7cd542a, regressions/ocsd_etmv3/
 * open-wrap-then-paired-later); nothing further is compared. */
static bool open_wrap(cmp *c)
{
    tb_insn in;

    for (size_t k = c->i <= c->na ? c->i : c->na; k-- > 0;) {
        const insn *w = &c->a->v[k];

        if (!classify_at(w->addr, w->isa, &in) || (uint64_t)w->addr + in.size != 0x100000000ull)
            continue;
        if (k + 1 != c->i && c->a->v[k + 1].addr != 0)
            continue;
        c->na = c->i;
        c->nb = c->j;
        return true;
    }
    return false;
}

/* docs/opencsd-bugs.md 20: IHI0035B 4.5.1: an A-sync is five or more
 * zeros, then 0x80.  OpenCSD's PTM packet processor, hunting for one
 * (TrcPktProcPtm::waitASync, findAsync), counts a zero run to 16, throws
 * 11 of them away and counts again from 1 at the next zero, so the 0x80
 * after a run of 16k to 16k+4 zeros (k >= 1) finds no count or one
 * below five: the A-sync is missed and OpenCSD stays unsynchronised
 * until a later one.  Signature:
 * at the point of parting OpenCSD's decoder has not yet synchronised
 * (its first A-sync and I-sync, g_tp.sync_at, come later), and our last
 * A-sync before it has such a run and no A-sync of OpenCSD's ends where
 * it ends; the comparison resumes where both streams start a packet
 * that sets the whole address, OpenCSD synchronised. */
static bool missed_async(const pkt_info *p)
{
    if (p->zeros < 16 || p->zeros % 16 > 4)
        return false;
    for (size_t k = 0; k < g_tp.n; k++)
        if (g_tp.v[k].kind == TK_ASYNC && theirs_pkt_end(&g_tp.v[k]) == p->index + p->size)
            return false;
    return true;
}

/* The missed A-sync need not be our last one before the parting: a
 * campaign at 6443b74 met one (17 zeros) that OpenCSD missed, our I-sync
 * after it, and then a second A-sync both saw but with no I-sync after
 * it before the parting (regressions/ocsd_ptm/
 * opencsd20-missed-async-before-a-seen-one): any of ours before the
 * parting, OpenCSD not yet synchronised there. */
/* Whether OpenCSD's decoder synchronised on an A-sync of its own that
 * is none of ours (one read inside our packets, out of step): the last
 * of its A-syncs before its first I-sync ends where none of ours ends. */
static bool synced_on_a_misread(const cmp *c)
{
    const theirs_pkt *a = NULL;
    size_t k;

    for (k = 0; k < g_tp.n && g_tp.v[k].index < g_tp.sync_at; k++)
        if (g_tp.v[k].kind == TK_ASYNC)
            a = &g_tp.v[k];
    if (!a)
        return false;
    for (k = 0; k < c->pk->n; k++)
        if (c->pk->v[k].kind == TB_PKT_ASYNC &&
            c->pk->v[k].index + c->pk->v[k].size == theirs_pkt_end(a))
            return false;
    return true;
}

static bool fault_async_missed(cmp *c)
{
    const uint64_t at = part_index(c);
    size_t k;

    /* OpenCSD not synchronised by the parting, or synchronised only on
     * a misread (a campaign at 9aabeef: after the missed A-sync it found
     * one in our I-sync's zero payload: regressions/ocsd_ptm/
     * opencsd20-missed-async-then-one-inside-an-isync). */
    if (c->cfg->protocol != TB_PROTO_PTM || (g_tp.sync_at <= at && !synced_on_a_misread(c)))
        return false;
    for (k = c->pk->n; k-- > 0;) {
        const pkt_info *p = &c->pk->v[k];

        if (p->index > at || p->kind != TB_PKT_ASYNC || !missed_async(p))
            continue;
        skip_to(c, aligned_addr_after(c, p->index + p->size));
        return true;
    }
    return false;
}

/* Not a fault: the two read an impossible trace each their own way
 * (docs/opencsd-bugs.md, "Where the two may rightly differ").  A PTM
 * waypoint update names the most recent non-waypoint instruction
 * (IHI0035B 4.5.5), so none names a waypoint; a fuzzed one can.  We
 * follow B.3.2's analyze_waypoint_update, which does not pass a
 * waypoint: the walk stops at it and the atom or branch packet after the
 * update decodes it (tests/test_decoder.c
 * wp_update_naming_a_waypoint_leaves_it_to_the_next_atom).  OpenCSD's
 * walk (TrcPktDecodePtm::processWPUpdate) ends on it with an E atom and
 * follows it (taken, to its target; unknown, if indirect), so the next
 * atom or branch packet decodes another instruction.  Signature: OpenCSD's
 * range of our last WP update packet before the point of parting ends on
 * the instruction at the update's address, a PTM waypoint to our
 * classifier (DMB/DSB only with ETMCCER[24]), with no packet that puts
 * both in step between them; both back in step after the next one. */
static bool open_wp_update_on_waypoint(cmp *c)
{
    const uint64_t at = part_index(c);
    const pkt_info *w = NULL;
    const insn *t = NULL;
    uint64_t q = UINT64_MAX;
    bool crossed = false;
    tb_insn in;
    size_t k;

    if (c->cfg->protocol != TB_PROTO_PTM)
        return false;
    for (k = c->pk->n; k-- > 0;) {
        const pkt_info *p = &c->pk->v[k];

        if (p->index > at)
            continue;
        if (p->kind == TB_PKT_WP_UPDATE) {
            w = p;
            break;
        }
        if (p->index < at &&
            (p->kind == TB_PKT_ISYNC || (p->kind == TB_PKT_BRANCH && !isync_only(c)))) {
            /* Both were in step again at p, unless the pairing by
             * address went across it: the update's extra instruction
             * paired with our next one at the same address (a branch to
             * itself; found by CI's smoke at b768dc5, regressions/ocsd_ptm/
             * wp-update-on-waypoint-paired-across): then compare again
             * from the first address packet after the update, once. */
            crossed = true;
            q = p->index;
        }
    }
    if (!w)
        return false;
    for (k = 0; k < c->b->n && c->b->v[k].index <= w->index; k++)
        if (c->b->v[k].index == w->index)
            t = &c->b->v[k];
    if (!t || t->addr != (w->addr & (t->isa == TB_ISA_THUMB ? ~1u : ~3u)) ||
        !classify_at(t->addr, t->isa, &in) || in.wp_class == TB_WP_NONE ||
        (in.wp_class == TB_WP_BARRIER && !c->cfg->dmb_waypoint))
        return false;
    if (crossed) {
        const size_t i2 = first_after(c->a, 0, c->na, q);
        const size_t j2 = first_after(c->b, 0, c->nb, q);

        if ((c->realigned_q != UINT64_MAX && q <= c->realigned_q) || i2 > c->i || j2 > c->j ||
            c->i - i2 == c->j - j2)
            return false;
        c->realigned_q = q;
        c->i = i2;
        c->j = j2;
        return true;
    }
    resync_after(c, w->index);
    return true;
}

/* docs/opencsd-bugs.md 22: at the end of the trace OpenCSD's ETMv3
 * packet processor sends an unfinished packet as if it were whole, none
 * of its fields read; for an I-sync, the decoder's processISync takes an
 * output element and, with no context update and a periodic reason,
 * fills in nothing, so the element last held in that slot of its ring
 * (often an instruction range) is sent again.  Signature: the point of
 * parting is at or past such an I-sync (theirs_scan: an I-sync reaching
 * the sink from the end of trace); the trace ends there, so nothing more
 * is compared. */
static bool fault_isync_cut_by_eot(cmp *c)
{
    if (c->cfg->protocol != TB_PROTO_ETMV3 || g_tp.eot_isync == UINT64_MAX ||
        part_index(c) < g_tp.eot_isync)
        return false;
    skip_to(c, UINT64_MAX);
    return true;
}

typedef struct known_fault {
    const char *name;
    bool (*match)(cmp *c);
    unsigned hits;
} known_fault;

static known_fault faults[] = {
    {"opencsd-bugs 1: ETMv3 BLX(imm) ISA change lost at a P-header's end",
     fault_blx_isa_lost, 0},
    {"opencsd-bugs 2: ETMv3 Cancel ignored", fault_cancel_ignored, 0},
    {"opencsd-bugs 11: ETMv3 LSiP I-sync cut at its address's fourth byte",
     fault_lsip_isync, 0},
    {"opencsd-bugs 12: ARM I-sync address bit 1 kept", fault_arm_isync_bit1, 0},
    {"opencsd-bugs 13: ETMv3 timestamp read past its last byte", fault_ts_unbounded, 0},
    {"opencsd-bugs 14: ETMv3 P-header without atoms sends a stale range",
     fault_empty_pheader, 0},
    {"opencsd-bugs 15: BLX(imm) with an N atom switches the ISA", fault_blx_n_switches_isa, 0},
    {"opencsd-bugs 16: Thumb instruction in a region's last halfword dropped",
     fault_thumb_last_halfword, 0},
    {"opencsd-bugs 17: PTM branch with exception number 0 drops its E atom",
     fault_exc0_drops_atom, 0},
    {"opencsd-bugs 19: ETMv3 alternative encoding reads a branch past a fifth byte with "
     "bit 7 set", fault_alt_byte5, 0},
    {"opencsd-bugs 20: PTM A-sync after 16k..16k+4 zeros missed", fault_async_missed, 0},
    {"opencsd-bugs 21: ETMv3 LSiP I-sync's load/store instruction not reported",
     fault_lsip_insn_missing, 0},
    {"opencsd-bugs 22: ETMv3 I-sync cut short by the end of trace sends a stale element",
     fault_isync_cut_by_eot, 0},
    /* Not met in the comparison: OpenCSD is given the trace only up to
     * it (cancel_cut), counted in tb_ocsd_diff. */
    {"opencsd-bugs 18: ETMv3 second Cancel in a row cancels again (would crash)", NULL, 0},
    {"not a fault: an undefined encoding executed", open_undefined, 0},
    {"not a fault: a walk from no instruction start (mid-instruction, other ISA's code)",
     open_mid_insn, 0},
    {"not a fault: execution past 0xFFFFFFFF", open_wrap, 0},
    {"not a fault: a PTM waypoint update naming a waypoint", open_wp_update_on_waypoint, 0},
};
#define N_FAULTS (sizeof faults / sizeof faults[0])

/* docs/opencsd-bugs.md 14 met inside a misread of 11, 13 or 19: OpenCSD's
 * packet processor, out of step with ours after one of those faults
 * (misparsed()'s shapes), takes a byte inside one of our packets for a
 * P-header without atoms (0x80) and sends its stale range.  Signature:
 * the last packet of ours before the empty range that OpenCSD read as
 * another length
 * (an LSiP I-sync of fault 11, a timestamp of fault 13, a branch of
 * fault 19) left the two streams out of step up to past that index.
 * (Found by the ocsd_etmv3 smoke run of branch h15-fuzz: a fault-19
 * branch swallowed our I-sync's header byte, and OpenCSD read the
 * I-sync's 0x80 as a P-header; then by a campaign at 25e88c2: a 64-bit
 * fault-13 timestamp swallowed the next one's header, and OpenCSD read
 * its payload byte 0x80 as a P-header.)  The same while the packet
 * streams are in step again but OpenCSD's state is still the misread's,
 * up to the resync point: a campaign at 9f9657a met an N atom of a real
 * P-header walked in the Jazelle state a misread I-sync had set, for
 * which OpenCSD's code follower gives no range, so the element went out
 * as a range of 0 instructions (regressions/ocsd_etmv3/
 * opencsd19-empty-range-in-misread-jazelle). */
static bool empty_range_misread(const cmp *c, uint64_t at)
{
    size_t k;

    if (c->cfg->protocol != TB_PROTO_ETMV3 || !theirs_pkt_at(at))
        return false;
    for (k = c->pk->n; k-- > 0;) {
        const pkt_info *p = &c->pk->v[k];
        const theirs_pkt *t;
        uint64_t end;

        if (p->index >= at)
            continue;
        t = theirs_pkt_at(p->index);
        if (!t || !(byte5_shape(p, t) || lsip_shape(p, t) || ts_shape(p, t)) ||
            theirs_pkt_end(t) == p->index + p->size)
            continue;
        end = theirs_pkt_end(t) > p->index + p->size ? theirs_pkt_end(t) : p->index + p->size;
        return aligned_addr_after(c, end) > at;
    }
    return false;
}

/* index falls inside one of our fault-11 I-syncs (after its first byte). */
static bool inside_lsip_cut(const cmp *c, uint64_t index)
{
    size_t k;

    for (k = 0; k < c->pk->n && c->pk->v[k].index < index; k++)
        if (c->pk->v[k].lsip_cut && index < c->pk->v[k].index + c->pk->v[k].size)
            return true;
    return false;
}

/* True when the sequences agree, or part only where a documented fault
 * explains it; otherwise prints the report and returns false. */
static bool compare(const char *name, const tb_config *cfg, const seq *a, const seq *b,
                    const pkt_list *pk, const tb_ocsd_run *runs, size_t n_runs)
{
    const bool cut_a = a->err || a->full, cut_b = b->err || b->full;
    cmp c = {cfg, a, b, pk, 0, 0, a->err ? a->err_at : a->n, b->err ? b->err_at : b->n,
             UINT64_MAX};
    uint64_t scope;
    size_t k;

    /* Out of scope from the first packet that sets AltISA (ThumbEE, or a
     * combination IHI0014Q table 7.20 reserves) or Jazelle state: OpenCSD
     * decodes neither (ocsd_isa_tee and ocsd_isa_jazelle, "unsupported"),
     * its packet processors drop the AltISA state at a branch without
     * exception bytes while ours keeps it, and after a Jazelle I-sync it
     * walks the bytecode address as ARM code; ours decodes no bytecodes
     * (types.h TB_ISA_JAZELLE).  Both sides are cut at that packet. */
    for (k = 0; k < pk->n; k++)
        if (pk->v[k].altisa ||
            ((pk->v[k].kind == TB_PKT_ISYNC || pk->v[k].kind == TB_PKT_BRANCH) &&
             (pk->v[k].isa == TB_ISA_JAZELLE || pk->v[k].isa == TB_ISA_THUMBEE ||
              /* An LSiP I-sync goes on in its second address's ISA (a
               * campaign at 6443b74: Jazelle there, which OpenCSD then
               * walked as ARM code: regressions/ocsd_etmv3/
               * lsip-isync-into-jazelle-out-of-scope). */
              pk->v[k].next_isa == TB_ISA_JAZELLE || pk->v[k].next_isa == TB_ISA_THUMBEE)))
            break;
    scope = k < pk->n ? pk->v[k].index : UINT64_MAX;
    /* ETMv3: a packet one side rejects may carry, to the other, a Cancel
     * of the instruction before it (IHI0014Q 6.7.1): the instructions of
     * the last atom packet before a side's first error are not judged. */
    if (cfg->protocol == TB_PROTO_ETMV3) {
        if (a->err && c.na > 0) {
            const uint64_t q = a->v[c.na - 1].index;

            while (c.na > 0 && a->v[c.na - 1].index == q)
                c.na--;
        }
        if (b->err && c.nb > 0) {
            const uint64_t q = b->v[c.nb - 1].index;

            while (c.nb > 0 && b->v[c.nb - 1].index == q)
                c.nb--;
        }
    }
    while (c.na > 0 && a->v[c.na - 1].index >= scope)
        c.na--;
    while (c.nb > 0 && b->v[c.nb - 1].index >= scope)
        c.nb--;
    /* Fault 14's empty ranges: each from one of our atom packets without
     * E or N, or it is a finding.  Judged only where both decode (before
     * either's first error and the scope cut), and not inside a fault-11
     * I-sync (OpenCSD cuts it in pieces). */
    for (k = 0; k < g_theirs.n_empty && k < sizeof g_theirs.empty / sizeof g_theirs.empty[0];
         k++) {
        const uint64_t at = g_theirs.empty[k];
        const pkt_info *p = pkt_at(&c, at);

        if (at >= scope || (a->err && at >= a->err_index) || (b->err && at >= b->err_index) ||
            inside_lsip_cut(&c, at))
            continue;
        if (((p && p->kind == TB_PKT_ATOM && p->atoms == 0) || empty_range_misread(&c, at)) &&
            !getenv("TB_FUZZ_OCSD_NO_SIGNATURES")) {
            faults[5].hits++; /* fault_empty_pheader */
            continue;
        }
        /* Fault 22: the stale element an I-sync cut by the end of the
         * trace sends may be such an empty range (found by a campaign at
         * 5986ae9: twenty empty P-headers before it filled the ring). */
        if (g_tp.eot_isync != UINT64_MAX && at >= g_tp.eot_isync &&
            c.cfg->protocol == TB_PROTO_ETMV3 && !getenv("TB_FUZZ_OCSD_NO_SIGNATURES")) {
            for (size_t f = 0; f < N_FAULTS; f++)
                faults[f].hits += faults[f].match == fault_isync_cut_by_eot;
            continue;
        }
        fprintf(stderr, "tb_fuzz: %s: OpenCSD sent an INSTR_RANGE of 0 instructions at "
                "packet %llu%s\n", name, (unsigned long long)at,
                p && p->kind == TB_PKT_ATOM && p->atoms == 0
                    ? " (an atom packet without atoms: fault 14)"
                    : ", which is no atom packet without atoms");
        show_packets(cfg, runs, n_runs, at > 24 ? at - 24 : 0, at + 8);
        return false;
    }

    for (;;) {
        while (c.i < c.na && c.j < c.nb && paired(&c, &a->v[c.i], &b->v[c.j])) {
            c.i++;
            c.j++;
        }
        if (c.i == c.na && c.j == c.nb)
            return true;
        /* One side ran out where it was cut: what follows is not judged. */
        if ((c.i == c.na && cut_a) || (c.j == c.nb && cut_b))
            return true;
        /* TB_FUZZ_OCSD_NO_SIGNATURES: every difference is a finding (the
         * regression inputs must then fail: test_fuzz_ocsd). */
        for (k = getenv("TB_FUZZ_OCSD_NO_SIGNATURES") ? N_FAULTS : 0; k < N_FAULTS; k++) {
            const size_t i = c.i, j = c.j, na = c.na, nb = c.nb;
            const uint64_t rq = c.realigned_q;

            /* A signature must move the comparison on, or it does not
             * explain this difference; or realign it at a resync point
             * (misparsed(), once a point: no loop). */
            if (faults[k].match && faults[k].match(&c) &&
                (c.i > i || c.j > j || (c.i == c.na && c.j == c.nb) ||
                 c.realigned_q != rq)) {
                faults[k].hits++;
                if (getenv("TB_FUZZ_OCSD_HITS"))
                    /* Triage: each step a signature took, in order. */
                    fprintf(stderr, "tb_fuzz: %s: %s: ours %zu -> %zu, OpenCSD %zu -> %zu\n",
                            name, faults[k].name, i, c.i, j, c.j);
                break;
            }
            c.i = i;
            c.j = j;
            c.na = na;
            c.nb = nb;
            c.realigned_q = rq;
        }
        if (k == N_FAULTS)
            break;
    }
    fprintf(stderr, "tb_fuzz: %s: our decode and OpenCSD's part at instruction %zu "
            "(ours) / %zu (OpenCSD)\n", name, c.i, c.j);
    show("ours", a, c.i);
    show("OpenCSD", b, c.j);
    {
        uint64_t at = c.i < a->n ? a->v[c.i].index : c.j < b->n ? b->v[c.j].index : 0;
        uint64_t from = c.i > 2 && c.i - 2 < a->n ? a->v[c.i - 2].index : 0;

        if (c.j > 2 && c.j - 2 < b->n && b->v[c.j - 2].index < from)
            from = b->v[c.j - 2].index;
        show_packets(cfg, runs, n_runs, from, at + 24);
    }
    return false;
}

/* The last comparison's errors (tb_ocsd_diff_errors). */
static struct {
    bool ours_err, theirs_err;
    char ours_why[200], theirs_why[200];
} g_last;

int tb_ocsd_diff(const char *name, const tb_config *cfg, const tb_memimage *mem,
                 const tb_ocsd_run *runs, size_t n_runs, const uint8_t *buf, size_t len,
                 bool formatted)
{
    static insn *ours_buf, *theirs_buf;
    static pkt_info *pkts;
    size_t k, bytes = 0;
    pkt_list pk;
    seq ours, theirs;

    if (!ours_buf) {
        ours_buf = malloc(MAX_INSNS * sizeof *ours_buf);
        theirs_buf = malloc(MAX_INSNS * sizeof *theirs_buf);
        pkts = malloc(TB_OCSD_MAX_BYTES * sizeof *pkts);
        g_tp.v = malloc(TB_OCSD_MAX_BYTES * sizeof *g_tp.v);
        if (!ours_buf || !theirs_buf || !pkts || !g_tp.v)
            tb_fuzz_fail(name, "out of memory");
    }
    for (k = 0; k < n_runs; k++)
        bytes += runs[k].len;
    if (bytes > TB_OCSD_MAX_BYTES)
        return -1;
    g_mem = mem;
    pk = (pkt_list){pkts, 0};
    seq_reset(&ours, ours_buf);
    seq_reset(&theirs, theirs_buf);
    ours_decode(cfg, runs, n_runs, &ours, &pk);
    g_cancel_cut = false;
    theirs_decode(cfg, buf, len, formatted, &theirs);
    if (g_cancel_cut)
        for (k = 0; k < N_FAULTS; k++)
            if (!faults[k].match)
                faults[k].hits++;
    if (getenv("TB_FUZZ_OCSD_SHOW")) {
        /* Both sequences in full, for triage. */
        show("ours", &ours, (size_t)-1);
        show("OpenCSD", &theirs, (size_t)-1);
    }
    g_last.ours_err = ours.err;
    g_last.theirs_err = theirs.err;
    snprintf(g_last.ours_why, sizeof g_last.ours_why, "%s", ours.why);
    snprintf(g_last.theirs_why, sizeof g_last.theirs_why, "%s", theirs.why);
    return compare(name, cfg, &ours, &theirs, &pk, runs, n_runs) ? 0 : 1;
}

void tb_ocsd_diff_errors(bool *ours, bool *theirs, const char **ours_why,
                         const char **theirs_why)
{
    *ours = g_last.ours_err;
    *theirs = g_last.theirs_err;
    *ours_why = g_last.ours_why;
    *theirs_why = g_last.theirs_why;
}

size_t tb_ocsd_diff_hits(const char **names, unsigned *hits, size_t max)
{
    size_t k;

    for (k = 0; k < N_FAULTS && k < max; k++) {
        names[k] = faults[k].name;
        hits[k] = faults[k].hits;
    }
    return N_FAULTS;
}

static int fuzz_diff(const char *name, tb_protocol proto, const uint8_t *data, size_t len)
{
    tb_ocsd_run run;
    tb_config cfg;

    if (len < TB_FUZZ_CFG_BYTES)
        return 0;
    if (len > TB_FUZZ_MAX_INPUT)
        len = TB_FUZZ_MAX_INPUT;
    tb_fuzz_ocsd_config(proto, data, &cfg);
    run = (tb_ocsd_run){0, data + TB_FUZZ_CFG_BYTES, len - TB_FUZZ_CFG_BYTES};
    if (tb_ocsd_diff(name, &cfg, tb_fuzz_ocsd_image(), &run, 1, run.data, run.len, false))
        tb_fuzz_fail(name, "instruction sequences differ (see above)");
    if (getenv("TB_FUZZ_OCSD_HITS")) {
        /* Which documented faults explained differences (triage, and the
         * choice of regression inputs). */
        for (size_t k = 0; k < N_FAULTS; k++)
            if (faults[k].hits)
                fprintf(stderr, "tb_fuzz: %s: %u x %s\n", name, faults[k].hits, faults[k].name);
    }
    return 0;
}

#ifdef TB_FUZZ_OCSD_LIBFUZZER
/* libFuzzer reads its flags after this call: -detect_leaks=0 appended
 * (see make_tree). */
int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    static char flag[] = "-detect_leaks=0";
    /* As many as given: a fixed 256 dropped the inputs past the 254th of
     * a long command line and wrote past its end (xargs over a corpus). */
    char **args = malloc(((size_t)*argc + 2) * sizeof *args);
    int n = *argc;

    if (!args)
        return 0;
    memcpy(args, *argv, (size_t)n * sizeof *args);
    args[n++] = flag;
    args[n] = NULL;
    *argc = n;
    *argv = args;
    return 0;
}
#endif

int tb_fuzz_ocsd_etmv3(const uint8_t *data, size_t len)
{
    return fuzz_diff("ocsd_etmv3", TB_PROTO_ETMV3, data, len);
}

int tb_fuzz_ocsd_ptm(const uint8_t *data, size_t len)
{
    return fuzz_diff("ocsd_ptm", TB_PROTO_PTM, data, len);
}

#undef MAX_INSNS
#undef MAX_RANGE
