/*
 * ETMv1 trace port harness (issue 23): input = 4 configuration bytes
 * (tb_fuzz_etmv1_config, fuzz_util.c) + the capture's sample words
 * (docs/etmv1.md 2).  The harness puts the capture header for the
 * configuration in front, unless configuration bit b1[3] says the input
 * carries its own header (the parser then reads its configuration from
 * it, tb_etmv1_parser_new(NULL)); with b1[4] the input's whole samples
 * are repeated up to 9000 cycles (past the parser's bounded queue).
 *
 * Two harnesses on these inputs (issue 28): etmv1 (fast) parses the
 * capture once through a parser and decoder made once per configuration
 * and reset, and checks every packet and element on its own (the first
 * lines below, without the chunkings and the listing of range
 * addresses), and leaves the looped captures (b1[4], 9000 samples: half
 * the samples of a corpus) to etmv1_full, which checks all of the
 * following.
 *
 * Invariants, beyond "no crash, no sanitizer report":
 *  - parser (tb_etmv1_parser): the whole capture, the capture cut in two
 *    at a point chosen from its bytes, and small random chunks (1..16
 *    bytes) give the same packets, every field compared, and the same
 *    push/finish return codes; push returns exactly the packets it
 *    emitted; packets are ETMv1 kinds (ATOM, BRANCH, TRIGGER and the
 *    error kinds) with indices at sample boundaries inside the capture,
 *    never going back; ATOM seq[] agrees with its counts (W only in
 *    cycle-accurate mode); BRANCH fields in range (address bits, ISA,
 *    alignment, reason, BE/BD, context ID only when configured and no
 *    wider than its size); DATA (ETMCR[3:2] != 0 only) an ID marker or
 *    1-2 data units (nibbles on a 4-bit port); error kinds carry a
 *    negative TB_ERR_* with a known string; at most a few packets per
 *    sample;
 *  - samples path: the longest prefix of whole samples that unpack gives,
 *    through tb_etmv1_parser_push_samples in random chunks, the packets
 *    the byte path gives for the same prefix;
 *  - decoder (tb_etmv1_decoder over the fixed image of fuzz_util.c):
 *    bounded work (instructions in ranges <= E/N statuses + branches,
 *    elements bounded by the packets), every element well formed (kind
 *    an ETMv1 one, ranges non-empty with count <= 32 and consistent
 *    addresses, cc in CA mode, errors negative TB_ERR_* with a known
 *    string, END once and last); the packets of each parser run above
 *    give the same elements (the split one into the same decoder after
 *    tb_etmv1_decoder_reset);
 *  - the generic path (tb_config_from_etmv1, tb_parser + tb_decoder_push
 *    cut in two) gives those elements too, and tb_decoder_range_addrs
 *    lists each range's instructions consistently; with cycle ranges
 *    (tb_fuzz_cycle_split) the same decode split, counts summed;
 *  - spec coverage (speccov.h): each packet classifies into known
 *    etmv1.* variants; the capture's port count returns 0 or a known
 *    error, one width, and no more statuses than samples nor APOs than
 *    branches.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../decoder/protocols.h"
#include "fuzz.h"
#include "speccov.h"
#include "tracebench/decoder.h"
#include "tracebench/etmv1.h"
#include "tracebench/parser.h"

#define E1_NAME "etmv1"
#define E1_MAX_RANGE 64u
#define E1_LOOP 9000u /* samples of a looped capture (b1[4]) */

typedef struct e1_dec {
    tb_etmv1_decoder *dec;   /* direct decoder, or NULL */
    bool hash_on;            /* hash every element (the full harness) */
    tb_decoder *gdec;        /* generic decoder (range_addrs), or NULL */
    const tb_etmv1_config *cfg;
    uint64_t hash;
    size_t elements;
    size_t data;              /* DATA elements among them */
    uint64_t last_index;
    bool ended;
    bool open;               /* the last range or exception has no count (CA) */
    uint64_t insns;          /* instructions in ranges */
    uint64_t statuses;       /* E/N letters + branches fed in */
    uint64_t packets;
} e1_dec;

typedef struct e1_run {
    const tb_etmv1_config *cfg; /* NULL until the header is read */
    const uint8_t *stream;
    size_t len;
    uint64_t hash;
    size_t count;
    uint64_t last_index;
    e1_dec *d;
    const tb_etmv1_parser *parser;
    bool full;               /* hash every packet (the full harness) */
    bool have_g;             /* g: the generic configuration of cfg */
    tb_config g;
} e1_run;

#define e1_known_err tb_fuzz_known_err

/* ---- elements ---- */

#define HF(f) h = tb_fuzz_hash(h, &el->f, sizeof el->f)

static uint64_t e1_hash_element(uint64_t h, const tb_element *el)
{
    HF(kind); HF(index); HF(reason); HF(isa); HF(start); HF(end);
    HF(count); HF(last_addr); HF(last_size); HF(last_wp); HF(last_atom);
    HF(atom_bits); HF(exc_num); HF(pref_return); HF(cancelled); HF(ts);
    HF(has_cc); HF(cc); HF(context_id); HF(vmid); HF(ns); HF(hyp);
    HF(err);
    return h;
}

#undef HF

TB_FUZZ_NOCOV static void e1_check_range(e1_dec *s, const tb_element *el)
{
    const char *h = E1_NAME;
    uint32_t span = el->end - el->start;

    TB_FUZZ_CHECK(h, el->count >= 1 && el->count <= 32,
                  "range of %u instructions (1..32)", el->count);
    TB_FUZZ_CHECK(h, el->isa == TB_ISA_ARM || el->isa == TB_ISA_THUMB,
                  "range in ISA %u", el->isa);
    TB_FUZZ_CHECK(h, el->last_atom == 'E' || el->last_atom == 'N',
                  "last atom '%c'", el->last_atom);
    TB_FUZZ_CHECK(h, el->last_wp <= TB_WP_BARRIER, "last_wp %u", el->last_wp);
    TB_FUZZ_CHECK(h, el->last_size == 4 || (el->isa == TB_ISA_THUMB && el->last_size == 2),
                  "last_size %u in %s", el->last_size, tb_isa_name((tb_isa)el->isa));
    TB_FUZZ_CHECK(h, (uint32_t)(el->last_addr + el->last_size) == el->end,
                  "range [0x%08x,0x%08x): last 0x%08x+%u", el->start, el->end,
                  el->last_addr, el->last_size);
    TB_FUZZ_CHECK(h, span >= 2u * el->count && span <= 4u * el->count,
                  "range [0x%08x,0x%08x) spans %u bytes for %u instructions",
                  el->start, el->end, span, el->count);
    TB_FUZZ_CHECK(h, el->count == 32 || (el->atom_bits >> el->count) == 0,
                  "atom_bits 0x%x beyond %u instructions", el->atom_bits, el->count);
    /* CA: a count, unless it was left open (a marker or the end after a
     * WT, docs/etmv1.md 5), which the element after it checks. */
    TB_FUZZ_CHECK(h, !el->has_cc || s->cfg->cycle_accurate,
                  "range has_cc %d in %s mode", el->has_cc,
                  s->cfg->cycle_accurate ? "CA" : "plain");
    if (el->has_cc)
        TB_FUZZ_CHECK(h, el->cc >= el->count, "range of %u instructions with cc %u",
                      el->count, (unsigned)el->cc);
    if (s->gdec) {
        uint32_t addrs[E1_MAX_RANGE], sum = 0;
        int n = tb_decoder_range_addrs(s->gdec, el, addrs, E1_MAX_RANGE);

        TB_FUZZ_CHECK(h, n == (int)el->count,
                      "range [0x%08x,0x%08x) of %u instructions lists %d",
                      el->start, el->end, el->count, n);
        TB_FUZZ_CHECK(h, addrs[0] == el->start && addrs[n - 1] == el->last_addr,
                      "range [0x%08x,0x%08x): first 0x%08x, last 0x%08x",
                      el->start, el->end, addrs[0], addrs[n - 1]);
        for (int i = 1; i < n; i++) {
            uint32_t st = addrs[i] - addrs[i - 1];

            TB_FUZZ_CHECK(h, st == 4 || (el->isa == TB_ISA_THUMB && st == 2),
                          "range at 0x%08x: step %u", el->start, st);
            sum += st;
        }
        TB_FUZZ_CHECK(h, span == sum + el->last_size,
                      "range [0x%08x,0x%08x) does not end after its last "
                      "instruction", el->start, el->end);
    }
    s->insns += el->count;
}

TB_FUZZ_NOCOV static int e1_on_element(void *ctx, const tb_element *el)
{
    e1_dec *s = ctx;
    const char *h = E1_NAME;

    TB_FUZZ_CHECK(h, !s->ended, "element after END");
    TB_FUZZ_CHECK(h, el->kind == TB_ELEM_NO_SYNC || el->kind == TB_ELEM_TRACE_ON ||
                  el->kind == TB_ELEM_INSN_RANGE || el->kind == TB_ELEM_EXCEPTION ||
                  el->kind == TB_ELEM_CONTEXT || el->kind == TB_ELEM_EVENT ||
                  el->kind == TB_ELEM_ADDR_NACC || el->kind == TB_ELEM_END ||
                  (el->kind == TB_ELEM_DATA && s->cfg->data_trace),
                  "element kind %d from ETMv1", (int)el->kind);
    TB_FUZZ_CHECK(h, el->err == 0 || e1_known_err(el->err),
                  "%s element with err %d", tb_elem_kind_name(el->kind), el->err);
    if (el->kind != TB_ELEM_END) {
        TB_FUZZ_CHECK(h, el->index >= s->last_index,
                      "%s element at index %llu after one at %llu",
                      tb_elem_kind_name(el->kind), (unsigned long long)el->index,
                      (unsigned long long)s->last_index);
        s->last_index = el->index;
    }
    /* An open count ends only where a marker or the end follows. */
    TB_FUZZ_CHECK(h, !s->open || el->kind == TB_ELEM_TRACE_ON || el->kind == TB_ELEM_END ||
                  el->kind == TB_ELEM_CONTEXT || el->kind == TB_ELEM_EVENT,
                  "%s after an element with no cycle count", tb_elem_kind_name(el->kind));
    if (el->kind == TB_ELEM_TRACE_ON || el->kind == TB_ELEM_END)
        s->open = false;
    if (s->cfg && s->cfg->cycle_accurate &&
        (el->kind == TB_ELEM_INSN_RANGE || el->kind == TB_ELEM_EXCEPTION))
        s->open = !el->has_cc;
    switch (el->kind) {
    case TB_ELEM_INSN_RANGE:
        e1_check_range(s, el);
        break;
    case TB_ELEM_NO_SYNC:
        TB_FUZZ_CHECK(h, el->reason <= TB_GAP_INCONSISTENT, "NO_SYNC reason %u",
                      el->reason);
        break;
    case TB_ELEM_TRACE_ON:
        TB_FUZZ_CHECK(h, el->reason <= TB_ISYNC_DEBUG_EXIT, "TRACE_ON reason %u",
                      el->reason);
        TB_FUZZ_CHECK(h, el->isa == TB_ISA_ARM || el->isa == TB_ISA_THUMB,
                      "TRACE_ON in ISA %u", el->isa);
        break;
    case TB_ELEM_EXCEPTION:
        TB_FUZZ_CHECK(h, el->err == 0 || el->err == TB_ERR_NO_SYNC,
                      "EXCEPTION with err %d", el->err);
        TB_FUZZ_CHECK(h, !el->has_cc || (s->cfg->cycle_accurate && el->cc >= 1),
                      "EXCEPTION has_cc %d cc %u in %s mode", el->has_cc, (unsigned)el->cc,
                      s->cfg->cycle_accurate ? "CA" : "plain");
        break;
    case TB_ELEM_CONTEXT:
        TB_FUZZ_CHECK(h, s->cfg->ctxid_bytes == 4 ||
                      el->context_id < (1u << (8 * s->cfg->ctxid_bytes)),
                      "context ID 0x%x wider than %u bytes", el->context_id,
                      s->cfg->ctxid_bytes);
        break;
    case TB_ELEM_DATA:
        /* Size from the opcode; no address or value the ETMCR does not
         * trace (5.4). */
        TB_FUZZ_CHECK(h, el->data_size == 1 || el->data_size == 2 || el->data_size == 4,
                      "DATA of %u bytes", el->data_size);
        TB_FUZZ_CHECK(h, ((s->cfg->data_trace & 2) || (el->data_flags & TB_DATA_NO_ADDR)) &&
                      ((s->cfg->data_trace & 1) || (el->data_flags & TB_DATA_NO_VALUE)),
                      "DATA flags 0x%x with ETMCR[3:2] = %u", el->data_flags,
                      s->cfg->data_trace);
        s->data++;
        break;
    case TB_ELEM_END:
        s->ended = true;
        break;
    default:
        break;
    }
    if (s->hash_on)
        s->hash = e1_hash_element(s->hash, el);
    s->elements++;
    /* Bounded work: a status walks at most one instruction. */
    TB_FUZZ_CHECK(h, s->insns <= s->statuses,
                  "%llu instructions in ranges from %llu statuses",
                  (unsigned long long)s->insns, (unsigned long long)s->statuses);
    /* ... and a data instruction gives at most 64 DATA elements. */
    TB_FUZZ_CHECK(h, s->elements - s->data <= 4 * (s->statuses + s->packets) + 2 &&
                      s->data <= 64 * s->statuses,
                  "%zu elements (%zu DATA) from %llu packets", s->elements, s->data,
                  (unsigned long long)s->packets);
    return 0;
}

TB_FUZZ_NOCOV static void e1_dec_count(e1_dec *s, const tb_packet *p)
{
    s->packets++;
    if (p->kind == TB_PKT_ATOM)
        s->statuses += p->atom_count;
    if (p->kind == TB_PKT_BRANCH)
        s->statuses++;
}

TB_FUZZ_NOCOV static void e1_dec_packet(e1_dec *s, const tb_packet *p)
{
    size_t before = s->elements;
    int rc;

    e1_dec_count(s, p);
    rc = tb_etmv1_decoder_packet(s->dec, p, e1_on_element, s);
    TB_FUZZ_CHECK(E1_NAME, rc >= 0 && (size_t)rc == s->elements - before,
                  "tb_etmv1_decoder_packet returned %d for %zu elements (%s at %llu)",
                  rc, s->elements - before, tb_pkt_kind_name(p->kind),
                  (unsigned long long)p->index);
}

static void e1_dec_finish(e1_dec *s)
{
    size_t before = s->elements;
    int rc = tb_etmv1_decoder_finish(s->dec, e1_on_element, s);

    TB_FUZZ_CHECK(E1_NAME, rc >= 1 && (size_t)rc == s->elements - before,
                  "tb_etmv1_decoder_finish returned %d for %zu elements", rc,
                  s->elements - before);
    TB_FUZZ_CHECK(E1_NAME, s->ended, "no END element after finish");
}

/* ---- packets ---- */

#define HF(f) h = tb_fuzz_hash(h, &p->f, sizeof p->f)

static uint64_t e1_hash_packet(uint64_t h, const tb_packet *p)
{
    HF(kind); HF(protocol); HF(index); HF(size); HF(bytes); HF(count);
    HF(err); HF(atom_count); HF(w_count); HF(seq_len); HF(seq);
    HF(phdr_format); HF(addr); HF(addr_bits); HF(isa); HF(isa_changed);
    HF(addr_known); HF(has_exc); HF(exc_cancel); HF(exc_num);
    HF(exc_resume); HF(exc_bytes); HF(has_cc); HF(cc); HF(ts);
    HF(has_ctxid); HF(context_id); HF(vmid); HF(reason); HF(jazelle);
    return h;
}

#undef HF

TB_FUZZ_NOCOV static void e1_check_packet(e1_run *s, const tb_packet *p)
{
    const char *h = E1_NAME;
    const tb_etmv1_config *c;

    if (!s->cfg) /* read from the header during this push */
        s->cfg = tb_etmv1_parser_config(s->parser);
    c = s->cfg;
    TB_FUZZ_CHECK(h, p->protocol == TB_PROTO_ETMV1, "packet protocol %d",
                  (int)p->protocol);
    TB_FUZZ_CHECK(h, p->kind == TB_PKT_ATOM || p->kind == TB_PKT_BRANCH ||
                  p->kind == TB_PKT_TRIGGER || p->kind == TB_PKT_RESERVED ||
                  p->kind == TB_PKT_BAD_SEQUENCE || p->kind == TB_PKT_INCOMPLETE ||
                  p->kind == TB_PKT_DATA,
                  "packet kind %d from ETMv1", (int)p->kind);
    TB_FUZZ_CHECK(h, p->index >= s->last_index,
                  "%s packet at index %llu after one at %llu",
                  tb_pkt_kind_name(p->kind), (unsigned long long)p->index,
                  (unsigned long long)s->last_index);
    s->last_index = p->index;
    /* A cut header is reported at 0; everything else at a sample. */
    TB_FUZZ_CHECK(h, (p->kind == TB_PKT_INCOMPLETE && p->index == 0) ||
                  (p->index >= TB_ETMV1_HDR_BYTES && p->index < s->len &&
                   (p->index - TB_ETMV1_HDR_BYTES) % TB_ETMV1_SAMPLE_BYTES == 0),
                  "%s packet at index %llu of a %zu-byte capture",
                  tb_pkt_kind_name(p->kind), (unsigned long long)p->index, s->len);
    TB_FUZZ_CHECK(h, c != NULL || p->kind == TB_PKT_INCOMPLETE,
                  "%s packet before the header", tb_pkt_kind_name(p->kind));
    switch (p->kind) {
    case TB_PKT_ATOM: {
        unsigned e = 0, w = 0, i;

        TB_FUZZ_CHECK(h, p->seq_len > 0 && p->seq_len <= sizeof p->seq,
                      "seq_len %u", p->seq_len);
        for (i = 0; i < p->seq_len; i++) {
            TB_FUZZ_CHECK(h, p->seq[i] == 'E' || p->seq[i] == 'N' ||
                          ((p->seq[i] == 'W' || p->seq[i] == 'T') && c->cycle_accurate),
                          "atom '%c' (%s mode)", p->seq[i],
                          c->cycle_accurate ? "CA" : "plain");
            if (p->seq[i] == 'W' || p->seq[i] == 'T')
                w++;
            else
                e++;
        }
        TB_FUZZ_CHECK(h, e == p->atom_count && w == p->w_count,
                      "atom packet at %llu: seq has %u E/N and %u W, counts say %u and %u",
                      (unsigned long long)p->index, e, w, p->atom_count, p->w_count);
        break;
    }
    case TB_PKT_BRANCH:
        if (p->abandoned && !p->addr_bits) {
            /* An abandoned branch whose address read is not told apart
             * (docs/etmv1.md 3): no bytes, no address. */
            TB_FUZZ_CHECK(h, p->size == 0 && !p->addr_known && !p->has_ctxid,
                          "abandoned branch without address: %u bytes", p->size);
            TB_FUZZ_CHECK(h, p->phdr_format == TB_ETMV1_BE || p->phdr_format == TB_ETMV1_BD,
                          "branch status %u", p->phdr_format);
            break;
        }
        TB_FUZZ_CHECK(h, p->size >= 1 && p->size <= 5 + c->ctxid_bytes,
                      "branch of %u bytes", p->size);
        TB_FUZZ_CHECK(h, p->addr_bits == 7 || p->addr_bits == 14 || p->addr_bits == 21 ||
                      p->addr_bits == 28 || p->addr_bits == 32,
                      "addr_bits %u", p->addr_bits);
        TB_FUZZ_CHECK(h, p->isa == TB_ISA_ARM || p->isa == TB_ISA_THUMB ||
                      p->isa == TB_ISA_JAZELLE, "branch ISA %u", p->isa);
        TB_FUZZ_CHECK(h, (p->addr & (p->isa == TB_ISA_ARM ? 3u : 1u)) == 0,
                      "%s branch to 0x%08x", tb_isa_name((tb_isa)p->isa), p->addr);
        TB_FUZZ_CHECK(h, p->reason <= TB_ETMV1_R_PERIODIC &&
                      (p->reason == 0 || p->addr_bits == 32),
                      "reason %u with %u address bits", p->reason, p->addr_bits);
        TB_FUZZ_CHECK(h, p->phdr_format == TB_ETMV1_BE || p->phdr_format == TB_ETMV1_BD,
                      "branch status %u", p->phdr_format);
        TB_FUZZ_CHECK(h, !p->addr_known || p->addr_bits == 32 || s->count > 0,
                      "address known from the first partial address");
        if (p->has_ctxid)
            TB_FUZZ_CHECK(h, c->ctxid_bytes && p->addr_bits == 32 &&
                          (c->ctxid_bytes == 4 ||
                           p->context_id < (1u << (8 * c->ctxid_bytes))),
                          "context ID 0x%x (%u bytes configured)", p->context_id,
                          c->ctxid_bytes);
        break;
    case TB_PKT_TRIGGER:
        break;
    case TB_PKT_DATA:
        TB_FUZZ_CHECK(h, c->data_trace, "DATA packet without data trace");
        TB_FUZZ_CHECK(h, (p->size == 0 && p->phdr_format == TB_ETMV1_ID) ||
                      (p->phdr_format == 0 && p->size >= 1 &&
                       p->size <= (c->port_width == 16 ? 2 : 1) &&
                       (c->port_width != 4 || p->bytes[0] < 16)),
                      "DATA packet of %u units, status %u", p->size, p->phdr_format);
        break;
    default:
        TB_FUZZ_CHECK(h, e1_known_err(p->err), "%s packet with err %d",
                      tb_pkt_kind_name(p->kind), p->err);
        break;
    }
    if (c && !s->have_g)
        s->have_g = tb_config_from_etmv1(&s->g, tb_etmv1_etmcr(c), c->minor,
                                         c->vector_base) == 0;
    if (s->have_g && p->kind < TB_PKT_RESERVED) {
        /* The spec-coverage classifier reads ETMv1 packets by its own rules
         * (speccov.h): every variant it names is a known etmv1 one. */
        tb_speccov_id ids[32];
        int k = tb_speccov_classify_packet(&s->g, p, ids, 32);

        tb_fuzz_check_speccov(h, k, ids, "etmv1.");
    }
    if (s->full)
        s->hash = e1_hash_packet(s->hash, p);
    s->count++;
    if (s->d)
        e1_dec_packet(s->d, p);
}

/* The spec-coverage counter's port side (tb_speccov_count_etmv1_capture):
 * 0 or a known error; on 0, one width, and no more statuses, TRACESYNCs
 * or APOs than the capture has samples and branches. */
static void e1_speccov(const uint8_t *cap, size_t len)
{
    static const char *const st[] = {"pipestat.ie", "pipestat.id", "pipestat.in",
                                     "pipestat.wt", "pipestat.be", "pipestat.bd",
                                     "pipestat.td"};
    static uint64_t c[TB_SPECCOV_MAX];
    size_t samples = len > TB_ETMV1_HDR_BYTES ? (len - TB_ETMV1_HDR_BYTES) / 4 : 0;

    if (!tb_fuzz_port_speccov(E1_NAME, "etmv1", tb_speccov_count_etmv1_capture, cap, len, st,
                              sizeof st / sizeof st[0], c))
        return;
#define E1_C(n) c[tb_speccov_variant_find(n)]
    TB_FUZZ_CHECK(E1_NAME, E1_C("etmv1.tracesync") <= samples,
                  "spec coverage: more TRACESYNCs than samples");
    TB_FUZZ_CHECK(E1_NAME, E1_C("etmv1.apo.zero") + E1_C("etmv1.apo.nonzero") +
                                   E1_C("etmv1.apo.abandoned") <=
                               E1_C("etmv1.pipestat.be") + E1_C("etmv1.pipestat.bd"),
                  "spec coverage: more APOs than branches");
#undef E1_C
}

TB_FUZZ_NOCOV static int e1_on_packet(void *ctx, const tb_packet *p)
{
    e1_check_packet(ctx, p);
    return 0;
}

/* The chunk ends of a run: one chunk, two (cut from the bytes) or small
 * random ones (1..16 bytes, then the rest). */
static size_t e1_cuts(const uint8_t *data, size_t len, int how, size_t *cut,
                      size_t max)
{
    size_t n = 0, at = 0;
    uint64_t seed;

    if (how == 1)
        cut[n++] = tb_fuzz_split(data, len);
    if (how == 2) {
        seed = tb_fuzz_hash(TB_FUZZ_HASH_INIT ^ 1, data, len);
        while (at < len && n < max - 1) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            at += 1 + (size_t)((seed >> 33) % 16);
            if (at > len)
                at = len;
            cut[n++] = at;
        }
    }
    if (n == 0 || cut[n - 1] != len)
        cut[n++] = len;
    return n;
}

typedef struct e1_result {
    uint64_t hash;
    size_t count;
    int first_err;           /* first negative push/finish return, or 0 */
} e1_result;

/* The capture through tb_etmv1_parser_push in chunks; given != NULL:
 * the parser has that configuration, else it reads the header. */
static e1_result e1_parse(const tb_etmv1_config *given, const tb_etmv1_config *cfg,
                          const uint8_t *stream, size_t len, int how, e1_dec *d,
                          tb_etmv1_parser *reuse, bool full)
{
    e1_run s = {.cfg = given ? given : NULL, .stream = stream, .len = len,
                .hash = TB_FUZZ_HASH_INIT, .d = d, .full = full};
    e1_result r = {0, 0, 0};
    tb_etmv1_parser *p = reuse ? reuse : tb_etmv1_parser_new(given);
    size_t cut[80], ncut = e1_cuts(stream, len, how, cut, 80), at = 0, i;
    int rc;

    TB_FUZZ_CHECK(E1_NAME, p != NULL, "tb_etmv1_parser_new failed");
    s.parser = p;
    for (i = 0; i < ncut && !r.first_err; i++) {
        size_t before = s.count;

        rc = tb_etmv1_parser_push(p, stream + at, cut[i] - at, at, e1_on_packet, &s);
        if (rc < 0) {
            TB_FUZZ_CHECK(E1_NAME, e1_known_err(rc) && rc != TB_ERR_STOPPED,
                          "push returned %d", rc);
            r.first_err = rc;
        } else {
            TB_FUZZ_CHECK(E1_NAME, (size_t)rc == s.count - before,
                          "push returned %d for %zu packets", rc, s.count - before);
        }
        at = cut[i];
        if (!s.cfg)
            s.cfg = tb_etmv1_parser_config(p);
        if (!given && s.cfg) {
            TB_FUZZ_CHECK(E1_NAME, tb_fuzz_port_cfg_eq(s.cfg, cfg) || !d,
                          "parser read another configuration than the header's");
        }
    }
    {
        size_t before = s.count;

        rc = tb_etmv1_parser_finish(p, e1_on_packet, &s);
        TB_FUZZ_CHECK(E1_NAME, rc >= 0 && (size_t)rc == s.count - before,
                      "finish returned %d for %zu packets", rc, s.count - before);
    }
    TB_FUZZ_CHECK(E1_NAME, s.count <= 4 * (len / TB_ETMV1_SAMPLE_BYTES) + 3,
                  "%zu packets from %zu bytes", s.count, len);
    if (!reuse)
        tb_etmv1_parser_free(p);
    if (d)
        e1_dec_finish(d);
    r.hash = tb_fuzz_hash(s.hash, &r.first_err, sizeof r.first_err);
    r.count = s.count;
    return r;
}

/* n whole samples through push_samples in random chunks. */
static e1_result e1_parse_samples(const tb_etmv1_config *cfg, const tb_etmv1_sample *sm,
                                  size_t n, uint64_t seed)
{
    e1_run s = {.cfg = cfg, .len = TB_ETMV1_HDR_BYTES + TB_ETMV1_SAMPLE_BYTES * n,
                .hash = TB_FUZZ_HASH_INIT, .full = true};
    e1_result r = {0, 0, 0};
    tb_etmv1_parser *p = tb_etmv1_parser_new(cfg);
    size_t at = 0;
    int rc;

    TB_FUZZ_CHECK(E1_NAME, p != NULL, "tb_etmv1_parser_new failed");
    while (at < n) {
        size_t k, before = s.count;

        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        k = 1 + (size_t)((seed >> 33) % 8);
        if (k > n - at)
            k = n - at;
        rc = tb_etmv1_parser_push_samples(p, sm + at, k, at, e1_on_packet, &s);
        TB_FUZZ_CHECK(E1_NAME, rc >= 0 && (size_t)rc == s.count - before,
                      "push_samples returned %d for %zu packets", rc, s.count - before);
        at += k;
    }
    rc = tb_etmv1_parser_finish(p, e1_on_packet, &s);
    TB_FUZZ_CHECK(E1_NAME, rc >= 0, "finish returned %d", rc);
    tb_etmv1_parser_free(p);
    r.hash = tb_fuzz_hash(s.hash, &r.first_err, sizeof r.first_err);
    r.count = s.count;
    return r;
}

/* ---- generic path: tb_parser + tb_decoder_push ---- */

static void e1_generic(const tb_config *gcfg, const tb_etmv1_config *cfg,
                       const uint8_t *stream, size_t len, e1_dec *s)
{
    tb_parser *p = tb_parser_new(gcfg);
    tb_decoder *d = tb_decoder_new(gcfg, tb_fuzz_image());
    size_t cut = tb_fuzz_split(stream + len / 2, len - len / 2) + len / 2, before;
    int rc;

    (void)cfg;
    TB_FUZZ_CHECK(E1_NAME, p && d, "tb_parser_new/tb_decoder_new refused ETMv1");
    s->gdec = d;
    /* Bounds are checked by the direct runs; these only count. */
    s->statuses = s->packets = UINT64_MAX / 16;
    before = s->elements;
    rc = tb_decoder_push(d, p, stream, cut, 0, e1_on_element, s);
    TB_FUZZ_CHECK(E1_NAME, rc >= 0 && (size_t)rc == s->elements - before,
                  "tb_decoder_push returned %d for %zu elements", rc, s->elements - before);
    before = s->elements;
    rc = tb_decoder_push(d, p, stream + cut, len - cut, cut, e1_on_element, s);
    TB_FUZZ_CHECK(E1_NAME, rc >= 0 && (size_t)rc == s->elements - before,
                  "tb_decoder_push returned %d for %zu elements", rc, s->elements - before);
    before = s->elements;
    rc = tb_decoder_push_finish(d, p, e1_on_element, s);
    TB_FUZZ_CHECK(E1_NAME, rc >= 1 && (size_t)rc == s->elements - before,
                  "tb_decoder_push_finish returned %d for %zu elements", rc,
                  s->elements - before);
    TB_FUZZ_CHECK(E1_NAME, s->ended, "no END element after finish");
    tb_parser_free(p);
    tb_decoder_free(d);
}

TB_FUZZ_PORT_OBJECTS(etmv1, E1_NAME)

static int fuzz_etmv1(const uint8_t *data, size_t len, bool full)
{
    uint8_t *stream;
    tb_etmv1_config cfg;
    tb_config gcfg;
    bool own_header, have_cfg;
    size_t slen;
    e1_result r0, r1, r2;
    e1_dec d0, d1, d2;
    tb_etmv1_decoder *dec = NULL;
    const uint8_t *cfg_bytes = data;
    bool loop;

    if (len < TB_FUZZ_CFG_BYTES)
        return TB_FUZZ_SKIP;
    if (len > TB_FUZZ_MAX_INPUT)
        len = TB_FUZZ_MAX_INPUT;
    own_header = tb_fuzz_etmv1_config(data, &cfg, &gcfg);
    data += TB_FUZZ_CFG_BYTES;
    len -= TB_FUZZ_CFG_BYTES;

    /* The capture: header + the input's samples, or the input alone.
     * b1[4]: the whole samples again and again, up to E1_LOOP samples:
     * more cycles than the parser holds (its queue is 8192 statuses)
     * from an input within run.sh's -max_len. */
    loop = full && !own_header && (cfg_bytes[1] & 0x10) && len >= TB_ETMV1_SAMPLE_BYTES;
    if (loop) {
        len -= len % TB_ETMV1_SAMPLE_BYTES;
        slen = TB_ETMV1_HDR_BYTES + (size_t)E1_LOOP * TB_ETMV1_SAMPLE_BYTES;
    } else {
        slen = own_header ? len : TB_ETMV1_HDR_BYTES + len;
    }
    /* Exactly the capture's size: a read past it is an ASan report. */
    stream = malloc(slen ? slen : 1);
    TB_FUZZ_CHECK(E1_NAME, stream != NULL, "out of memory");
    if (own_header) {
        memcpy(stream, data, len);
        have_cfg = false;
        if (len >= TB_ETMV1_HDR_BYTES) {
            tb_etmv1_config hc = cfg;

            if (tb_etmv1_capture_parse_header(stream, &hc) == 0) {
                hc.vector_base = 0;
                cfg = hc;
                have_cfg = true;
            }
        }
    } else {
        tb_etmv1_capture_header(&cfg, stream);
        if (loop) {
            for (size_t at = TB_ETMV1_HDR_BYTES; at < slen; at += len)
                memcpy(stream + at, data, len < slen - at ? len : slen - at);
            /* The looped capture is the input from here on. */
            data = stream + TB_ETMV1_HDR_BYTES;
            len = slen - TB_ETMV1_HDR_BYTES;
        } else if (len) {
            memcpy(stream + TB_ETMV1_HDR_BYTES, data, len);
        }
        have_cfg = true;
    }

    if (!full) {
        tb_etmv1_parser *p;

        etmv1_objects(own_header ? NULL : &cfg, &cfg, &p, have_cfg ? &dec : NULL);
        d0 = (e1_dec){.dec = dec, .cfg = &cfg};
        (void)e1_parse(own_header ? NULL : &cfg, &cfg, stream, slen, 0, dec ? &d0 : NULL, p,
                       false);
        free(stream);
        return 0;
    }

    if (have_cfg) {
        dec = tb_etmv1_decoder_new(&cfg, tb_fuzz_image());
        TB_FUZZ_CHECK(E1_NAME, dec != NULL, "tb_etmv1_decoder_new failed");
    }
    d0 = (e1_dec){.dec = dec, .cfg = &cfg, .hash = TB_FUZZ_HASH_INIT, .hash_on = true};
    r0 = e1_parse(own_header ? NULL : &cfg, &cfg, stream, slen, 0, dec ? &d0 : NULL, NULL,
                  true);
    if (dec)
        tb_etmv1_decoder_reset(dec);
    d1 = (e1_dec){.dec = dec, .cfg = &cfg, .hash = TB_FUZZ_HASH_INIT, .hash_on = true};
    r1 = e1_parse(own_header ? NULL : &cfg, &cfg, stream, slen, 1, dec ? &d1 : NULL, NULL,
                  true);
    TB_FUZZ_CHECK(E1_NAME, r0.hash == r1.hash && r0.count == r1.count,
                  "whole capture gives %zu packets (rc %d), cut in two %zu (rc %d) "
                  "(or different fields)", r0.count, r0.first_err, r1.count, r1.first_err);
    if (dec) {
        tb_etmv1_decoder_free(dec);
        dec = tb_etmv1_decoder_new(&cfg, tb_fuzz_image());
        TB_FUZZ_CHECK(E1_NAME, dec != NULL, "tb_etmv1_decoder_new failed");
    }
    d2 = (e1_dec){.dec = dec, .cfg = &cfg, .hash = TB_FUZZ_HASH_INIT, .hash_on = true};
    r2 = e1_parse(own_header ? NULL : &cfg, &cfg, stream, slen, 2, dec ? &d2 : NULL, NULL,
                  true);
    TB_FUZZ_CHECK(E1_NAME, r0.hash == r2.hash && r0.count == r2.count,
                  "whole capture gives %zu packets (rc %d), small chunks %zu (rc %d) "
                  "(or different fields)", r0.count, r0.first_err, r2.count, r2.first_err);
    if (dec) {
        TB_FUZZ_CHECK(E1_NAME, d0.hash == d1.hash && d0.elements == d1.elements,
                      "whole capture decodes to %zu elements, cut in two (after "
                      "reset) %zu (or different fields)", d0.elements, d1.elements);
        TB_FUZZ_CHECK(E1_NAME, d0.hash == d2.hash && d0.elements == d2.elements,
                      "whole capture decodes to %zu elements, small chunks %zu (or "
                      "different fields)", d0.elements, d2.elements);
        tb_etmv1_decoder_free(dec);
    }

    e1_speccov(stream, slen);
    if (!own_header) {
        /* Samples path over the longest prefix of samples that unpack. */
        size_t n = 0, max = len / TB_ETMV1_SAMPLE_BYTES;
        tb_etmv1_sample *sm = malloc((max ? max : 1) * sizeof *sm);

        TB_FUZZ_CHECK(E1_NAME, sm != NULL, "out of memory");
        while (n < max && tb_etmv1_sample_unpack(data + TB_ETMV1_SAMPLE_BYTES * n,
                                                 &sm[n]) == 0)
            n++;
        if (n) {
            size_t plen = TB_ETMV1_HDR_BYTES + TB_ETMV1_SAMPLE_BYTES * n;
            e1_result rb = e1_parse(&cfg, &cfg, stream, plen, 2, NULL, NULL, true);
            e1_result rs = e1_parse_samples(&cfg, sm, n,
                                            tb_fuzz_hash(TB_FUZZ_HASH_INIT ^ 2, data, len));

            TB_FUZZ_CHECK(E1_NAME, rb.hash == rs.hash && rb.count == rs.count,
                          "%zu samples as bytes give %zu packets, as samples %zu "
                          "(or different fields)", n, rb.count, rs.count);
        }
        free(sm);

        /* The generic parser/decoder (tb_parser, tb_decoder_push). */
        {
            e1_dec g = {.cfg = &cfg, .hash = TB_FUZZ_HASH_INIT, .hash_on = true};

            e1_generic(&gcfg, &cfg, stream, slen, &g);
            TB_FUZZ_CHECK(E1_NAME, g.hash == d0.hash && g.elements == d0.elements,
                          "tb_decoder_push gives %zu elements, the ETMv1 decoder %zu "
                          "(or different fields)", g.elements, d0.elements);
        }
        /* Cycle ranges (decode --cycles): the same decode, split. */
        if (full)
            tb_fuzz_cycle_split(E1_NAME, &gcfg, stream, slen);
    }
    free(stream);
    return 0;
}

TB_FUZZ_ENTRIES(etmv1)

#undef E1_NAME
#undef E1_MAX_RANGE
#undef E1_LOOP
#undef e1_known_err
