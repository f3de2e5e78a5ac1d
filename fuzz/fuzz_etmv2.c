/*
 * ETMv2 trace port harness (issue 23, docs/etmv2.md): input = 4
 * configuration bytes (tb_fuzz_etmv2_config) + the capture's sample
 * words.  The harness puts the capture header for the configuration in
 * front, unless b1[3] says the input carries its own (the parser then
 * reads its configuration from it); with b1[4] the input's whole samples
 * are repeated up to 9000 cycles (past the parser's bounded queue).
 *
 * Two harnesses on these inputs (issue 28): etmv2 (fast) parses the
 * capture once into the decoder, both made once per configuration and
 * reset, checking every packet (its spec-coverage classification included)
 * and element on its own, and leaves the looped captures (b1[4]) to
 * etmv2_full, which checks all of the following.
 *
 * Invariants, beyond "no crash, no sanitizer report":
 *  - parser (tb_etmv2_parser): the whole capture, the capture cut in two
 *    at a point chosen from its bytes, and small chunks (1..16 bytes)
 *    give the same packets (every field hashed) and return codes; push
 *    returns exactly the packets it emitted; packets are ETMv2 kinds
 *    (ISYNC, ATOM, BRANCH, CONTEXT_ID, TRIGGER, errors) with indices at
 *    sample boundaries inside the capture, never going back; ATOM seq[]
 *    agrees with its counts; ISYNC reason 0..3 with a 32-bit address;
 *    BRANCH: ISA ARM or Thumb, address aligned, the E bit only on a
 *    5-byte ARM address; data packets (configuration byte 1 bits 1:0 =
 *    ETMCR[3:2]) only with data trace: a value of 0/1/2/4 bytes only
 *    with value trace, an address only with address trace, a load-miss
 *    tag 0..3; errors carry a negative TB_ERR_* with a known string;
 *  - spec coverage (speccov.h): each packet classifies into known
 *    etmv2.* variants; the capture counter (tb_speccov_count_etmv2_
 *    capture) returns 0 or a known error, and on 0 one port width, no
 *    more statuses (phantom forms included) or TRs than samples, and no
 *    more split TFOs than TD cycles (none off a 4-bit port);
 *  - decoder (tb_etmv2_decoder over the fuzz image): bounded work, every
 *    element well formed (ranges non-empty, count <= 32), END once and
 *    last; cycle counts only in CA mode, a range's at least its
 *    instructions, a count left open only before a marker or the end;
 *    DATA elements only with data trace, their size 1, 2 or 4, NO_VALUE
 *    exactly without value trace (or a VNT), NO_ADDR always without
 *    address trace; the generic path (tb_config_from_etmv2, tb_parser +
 *    tb_decoder_push cut in two) gives the same elements; with cycle
 *    ranges (tb_fuzz_cycle_split) the same decode split, counts summed.
 */
#include <stdlib.h>
#include <string.h>

#include <stdio.h>

#include "../decoder/protocols.h"
#include "fuzz.h"
#include "speccov.h"
#include "tracebench/decoder.h"
#include "tracebench/etmv2.h"
#include "tracebench/parser.h"

#define E2_NAME "etmv2"
#define E2_LOOP 9000u

typedef struct e2_dec {
    tb_etmv2_decoder *dec;
    bool hash_on;            /* hash every element (the full harness) */
    uint64_t hash;
    size_t elements;
    bool ended;
    bool ca;                 /* the decoder's cycle_accurate */
    uint8_t dt;              /* its data_trace */
    bool open;               /* the last range or exception has no count (CA) */
    uint64_t insns, statuses;
} e2_dec;

typedef struct e2_run {
    const uint8_t *stream;
    size_t len;
    uint64_t hash;
    size_t count;
    uint64_t last_index;
    uint8_t dt;              /* data_trace the packets may show */
    e2_dec *d;
    const tb_config *g;      /* the source's configuration: classify */
    bool hash_on;            /* hash every packet (the full harness) */
} e2_run;

#define e2_known_err tb_fuzz_known_err

static int e2_on_elem(void *ctx, const tb_element *el)
{
    e2_dec *d = ctx;

    TB_FUZZ_CHECK(E2_NAME, !d->ended, "element after END");
    /* CA (docs/etmv2.md 5): counts only in CA mode; a count is left open
     * only where a marker (its CONTEXT first) or the end follows, with
     * the triggers that came while it was held. */
    TB_FUZZ_CHECK(E2_NAME, !el->has_cc || d->ca, "has_cc in plain mode");
    TB_FUZZ_CHECK(E2_NAME, !d->open || el->kind == TB_ELEM_TRACE_ON ||
                  el->kind == TB_ELEM_END || el->kind == TB_ELEM_CONTEXT ||
                  el->kind == TB_ELEM_EVENT,
                  "element kind %d after one with no cycle count", (int)el->kind);
    if (el->kind == TB_ELEM_TRACE_ON || el->kind == TB_ELEM_END)
        d->open = false;
    if (d->ca && (el->kind == TB_ELEM_INSN_RANGE || el->kind == TB_ELEM_EXCEPTION))
        d->open = !el->has_cc;
    switch (el->kind) {
    case TB_ELEM_INSN_RANGE:
        TB_FUZZ_CHECK(E2_NAME, el->count >= 1 && el->count <= 32, "range of %u",
                      (unsigned)el->count);
        TB_FUZZ_CHECK(E2_NAME, !el->has_cc || el->cc >= el->count,
                      "range of %u instructions with cc %u", (unsigned)el->count,
                      (unsigned)el->cc);
        TB_FUZZ_CHECK(E2_NAME, el->isa == TB_ISA_ARM || el->isa == TB_ISA_THUMB,
                      "range ISA %u", (unsigned)el->isa);
        d->insns += el->count;
        break;
    case TB_ELEM_END:
        d->ended = true;
        break;
    case TB_ELEM_DATA:
        TB_FUZZ_CHECK(E2_NAME, d->dt != 0, "data element without data trace");
        TB_FUZZ_CHECK(E2_NAME, el->data_size == 1 || el->data_size == 2 || el->data_size == 4,
                      "data size %u", (unsigned)el->data_size);
        TB_FUZZ_CHECK(E2_NAME, (d->dt & 1) || (el->data_flags & TB_DATA_NO_VALUE),
                      "a value without value trace");
        TB_FUZZ_CHECK(E2_NAME, (d->dt & 2) || (el->data_flags & TB_DATA_NO_ADDR),
                      "an address without address trace");
        break;
    case TB_ELEM_NO_SYNC:
    case TB_ELEM_TRACE_ON:
    case TB_ELEM_EXCEPTION:
    case TB_ELEM_CONTEXT:
    case TB_ELEM_EVENT:
    case TB_ELEM_ADDR_NACC:
        break;
    default:
        tb_fuzz_fail(E2_NAME, "element kind %d", (int)el->kind);
    }
    if (el->err)
        TB_FUZZ_CHECK(E2_NAME, e2_known_err(el->err), "element error %d", el->err);
    if (!d->hash_on) {
        d->elements++;
        return 0;
    }
    d->hash = tb_fuzz_hash(d->hash, &el->kind, sizeof el->kind);
    d->hash = tb_fuzz_hash(d->hash, &el->start, sizeof el->start);
    d->hash = tb_fuzz_hash(d->hash, &el->count, sizeof el->count);
    d->hash = tb_fuzz_hash(d->hash, &el->exc_num, sizeof el->exc_num);
    d->hash = tb_fuzz_hash(d->hash, &el->has_cc, sizeof el->has_cc);
    d->hash = tb_fuzz_hash(d->hash, &el->cc, sizeof el->cc);
    d->hash = tb_fuzz_hash(d->hash, &el->data_addr, sizeof el->data_addr);
    d->hash = tb_fuzz_hash(d->hash, &el->data_value, sizeof el->data_value);
    d->hash = tb_fuzz_hash(d->hash, &el->data_flags, sizeof el->data_flags);
    d->elements++;
    return 0;
}

#define HP(f) r->hash = tb_fuzz_hash(r->hash, &p->f, sizeof p->f)

static int e2_on_packet(void *ctx, const tb_packet *p)
{
    e2_run *r = ctx;

    TB_FUZZ_CHECK(E2_NAME, p->protocol == TB_PROTO_ETMV2, "protocol %d", (int)p->protocol);
    TB_FUZZ_CHECK(E2_NAME, p->index >= r->last_index, "index went back");
    TB_FUZZ_CHECK(E2_NAME, p->index < TB_ETMV1_HDR_BYTES + r->len ||
                               p->kind == TB_PKT_INCOMPLETE,
                  "index %llu past the capture", (unsigned long long)p->index);
    TB_FUZZ_CHECK(E2_NAME, p->index == 0 || p->index % 4 == 0, "index %llu off a sample",
                  (unsigned long long)p->index);
    r->last_index = p->index;
    switch (p->kind) {
    case TB_PKT_ATOM: {
        unsigned e = 0, w = 0;

        for (unsigned i = 0; i < p->seq_len; i++) {
            TB_FUZZ_CHECK(E2_NAME, strchr("ENW", p->seq[i]) != NULL, "atom %c", p->seq[i]);
            w += p->seq[i] == 'W';
            e += p->seq[i] != 'W';
        }
        TB_FUZZ_CHECK(E2_NAME, p->seq_len >= 1 && e == p->atom_count && w == p->w_count,
                      "atom counts");
        if (r->d)
            r->d->statuses += e;
        break;
    }
    case TB_PKT_ISYNC:
        TB_FUZZ_CHECK(E2_NAME, p->reason <= 3 && p->addr_bits == 32, "TFO fields");
        if (r->d)
            r->d->statuses++;
        break;
    case TB_PKT_BRANCH:
        TB_FUZZ_CHECK(E2_NAME, p->isa == TB_ISA_ARM || p->isa == TB_ISA_THUMB, "branch ISA");
        TB_FUZZ_CHECK(E2_NAME, !(p->addr & (p->isa == TB_ISA_ARM ? 3u : 1u)), "unaligned");
        TB_FUZZ_CHECK(E2_NAME, !p->exc_cancel || (p->size == 5 && p->isa == TB_ISA_ARM),
                      "E bit on a short or Thumb address");
        TB_FUZZ_CHECK(E2_NAME, p->size >= 1 && p->size <= 5, "branch size");
        break;
    case TB_PKT_CONTEXT_ID:
    case TB_PKT_TRIGGER:
        break;
    case TB_PKT_DATA:
    case TB_PKT_VALUE_NOT_TRACED:
    case TB_PKT_OOO_PLACEHOLDER:
    case TB_PKT_OOO_DATA:
        TB_FUZZ_CHECK(E2_NAME, r->dt != 0, "data packet without data trace");
        TB_FUZZ_CHECK(E2_NAME, p->data_size == 0 || p->data_size == 1 || p->data_size == 2 ||
                      p->data_size == 4, "data size %u", (unsigned)p->data_size);
        TB_FUZZ_CHECK(E2_NAME, !p->data_size || (r->dt & 1), "a value without value trace");
        TB_FUZZ_CHECK(E2_NAME, !p->has_data_addr || (r->dt & 2),
                      "an address without address trace");
        TB_FUZZ_CHECK(E2_NAME, p->data_tag <= 3, "tag %u", (unsigned)p->data_tag);
        break;
    case TB_PKT_RESERVED:
    case TB_PKT_BAD_SEQUENCE:
    case TB_PKT_BAD_TRACEMODE:
    case TB_PKT_INCOMPLETE:
        TB_FUZZ_CHECK(E2_NAME, e2_known_err(p->err), "error packet without error");
        break;
    default:
        tb_fuzz_fail(E2_NAME, "packet kind %d", (int)p->kind);
    }
    if (r->g && p->kind < TB_PKT_RESERVED) {
        /* The spec-coverage classifier reads ETMv2 packets by its own rules
         * (speccov.h): every variant it names is a known etmv2 one. */
        tb_speccov_id ids[32];
        int k = tb_speccov_classify_packet(r->g, p, ids, 32);

        tb_fuzz_check_speccov(E2_NAME, k, ids, "etmv2.");
    }
    if (!r->hash_on)
        goto hashed;
    HP(kind);
    HP(index);
    HP(addr);
    HP(isa);
    HP(reason);
    HP(exc_cancel);
    HP(context_id);
    HP(seq_len);
    HP(data_addr);
    HP(data_value);
    HP(data_size);
    r->hash = tb_fuzz_hash(r->hash, p->seq, p->seq_len);
    r->hash = tb_fuzz_hash(r->hash, p->bytes, p->size);
hashed:
    r->count++;
    if (r->d && r->d->dec)
        TB_FUZZ_CHECK(E2_NAME, tb_etmv2_decoder_packet(r->d->dec, p, e2_on_elem, r->d) >= 0,
                      "decoder refused a packet");
    return 0;
}

/* The spec-coverage counter's port side (tb_speccov_count_etmv2_capture). */
static void e2_speccov(const uint8_t *cap, size_t len)
{
    static const char *const st[] = {
        "pipestat.ie", "pipestat.de", "pipestat.in", "pipestat.dn", "pipestat.wt",
        "pipestat.dw", "pipestat.td", "phantom.taken.ie", "phantom.taken.de",
        "phantom.taken.in", "phantom.taken.dn", "phantom.not_taken.ie",
        "phantom.not_taken.de", "phantom.not_taken.in", "phantom.not_taken.dn"};
    static uint64_t c[TB_SPECCOV_MAX];

    if (!tb_fuzz_port_speccov(E2_NAME, "etmv2", tb_speccov_count_etmv2_capture, cap, len, st,
                              sizeof st / sizeof st[0], c))
        return;
#define E2_C(n) c[tb_speccov_variant_find(n)]
    TB_FUZZ_CHECK(E2_NAME, E2_C("etmv2.tfo.split4") <= E2_C("etmv2.pipestat.td") &&
                               (E2_C("etmv2.port4") || !E2_C("etmv2.tfo.split4")) &&
                               E2_C("etmv2.tfo.split4.trigger") <= E2_C("etmv2.pipestat.tr") &&
                               E2_C("etmv2.td.idle") + E2_C("etmv2.ca.td") <=
                                   E2_C("etmv2.pipestat.td"),
                  "spec coverage: TD forms");
#undef E2_C
}

/* One parser run over the capture in pieces: split > 0 cuts there, chunk
 * > 0 pushes that many bytes at a time. */
static void e2_parse(const tb_etmv2_config *cfg, const uint8_t *cap, size_t len,
                     size_t split, size_t chunk, e2_run *r, tb_etmv2_parser *reuse)
{
    tb_etmv2_parser *p = reuse ? reuse : tb_etmv2_parser_new(cfg);
    size_t at = 0;
    int rc;

    TB_FUZZ_CHECK(E2_NAME, p != NULL, "parser");
    while (at < len) {
        size_t k = chunk ? chunk : split && at < split ? split : len - at;
        size_t before = r->count;

        if (k > len - at)
            k = len - at;
        rc = tb_etmv2_parser_push(p, cap + at, k, at, e2_on_packet, r);
        if (rc < 0) {
            TB_FUZZ_CHECK(E2_NAME, rc == TB_ERR_FORMAT || rc == TB_ERR_MISMATCH,
                          "push %d", rc);
            r->hash = tb_fuzz_hash(r->hash, &rc, sizeof rc);
            break;
        }
        TB_FUZZ_CHECK(E2_NAME, (size_t)rc == r->count - before, "push count");
        at += k;
    }
    rc = tb_etmv2_parser_finish(p, e2_on_packet, r);
    TB_FUZZ_CHECK(E2_NAME, rc >= 0, "finish %d", rc);
    if (!reuse)
        tb_etmv2_parser_free(p);
}

TB_FUZZ_PORT_OBJECTS(etmv2, E2_NAME)

static int fuzz_etmv2(const uint8_t *data, size_t len, bool full)
{
    uint8_t *cap;
    tb_etmv2_config cfg;
    tb_config g;
    bool own;
    size_t n, clen = 0, split;
    e2_run whole = {0}, cut = {0}, small = {0};
    e2_dec d = {0}, d2 = {0};
    tb_etmv2_parser *fp = NULL;

    if (len < TB_FUZZ_CFG_BYTES)
        return TB_FUZZ_SKIP;
    if (len > TB_FUZZ_MAX_INPUT)
        len = TB_FUZZ_MAX_INPUT;
    own = tb_fuzz_etmv2_config(data, &cfg, &g);
    n = len - TB_FUZZ_CFG_BYTES;
    /* The capture's size first: exactly that is allocated, so that a read
     * past it is an ASan report. */
    clen = (own ? 0 : TB_ETMV1_HDR_BYTES) + n;
    if (full && ((data[1] >> 4) & 1)) { /* repeat the whole samples */
        size_t body = n - n % 4;

        while (body && clen + body <= TB_ETMV1_HDR_BYTES + 4 * E2_LOOP)
            clen += body;
    }
    cap = malloc(clen ? clen : 1);
    TB_FUZZ_CHECK(E2_NAME, cap != NULL, "out of memory");
    {
        size_t at = 0;

        if (!own) {
            tb_etmv2_capture_header(&cfg, cap);
            at = TB_ETMV1_HDR_BYTES;
        }
        memcpy(cap + at, data + TB_FUZZ_CFG_BYTES, n);
        for (size_t body = n - n % 4, base = at; at + n < clen; at += body)
            memcpy(cap + at + n, cap + base, body);
    }
    split = tb_fuzz_split(data, len) % (clen + 1); /* a point of the capture */

    whole.stream = cut.stream = small.stream = cap;
    whole.len = cut.len = small.len = clen;
    whole.hash = cut.hash = small.hash = TB_FUZZ_HASH_INIT;
    whole.hash_on = cut.hash_on = small.hash_on = full;
    d.hash = d2.hash = TB_FUZZ_HASH_INIT;
    d.hash_on = d2.hash_on = full;
    d.ca = d2.ca = cfg.cycle_accurate;
    d.dt = d2.dt = cfg.data_trace;
    /* An own header may name any data trace (the parser reads it). */
    whole.dt = cut.dt = small.dt = own ? 3 : cfg.data_trace;
    if (full) {
        d.dec = tb_etmv2_decoder_new(&cfg, tb_fuzz_image());
        TB_FUZZ_CHECK(E2_NAME, d.dec != NULL, "decoder");
    } else {
        etmv2_objects(own ? NULL : &cfg, &cfg, &fp, &d.dec);
    }
    whole.d = &d;
    whole.g = own ? NULL : &g;
    e2_parse(own ? NULL : &cfg, cap, clen, 0, 0, &whole, fp);
    TB_FUZZ_CHECK(E2_NAME, tb_etmv2_decoder_finish(d.dec, e2_on_elem, &d) >= 1, "finish");
    TB_FUZZ_CHECK(E2_NAME, d.ended, "no END");
    TB_FUZZ_CHECK(E2_NAME, d.insns <= 2 * d.statuses + 32, "%llu instructions from %llu "
                  "statuses", (unsigned long long)d.insns, (unsigned long long)d.statuses);
    if (!full) {
        free(cap);
        return 0;
    }
    tb_etmv2_decoder_free(d.dec);

    e2_parse(own ? NULL : &cfg, cap, clen, split, 0, &cut, NULL);
    e2_parse(own ? NULL : &cfg, cap, clen, 0, 1 + data[2] % 16, &small, NULL);
    TB_FUZZ_CHECK(E2_NAME, whole.hash == cut.hash && whole.count == cut.count,
                  "a cut at %zu changed the packets", split);
    TB_FUZZ_CHECK(E2_NAME, whole.hash == small.hash && whole.count == small.count,
                  "chunking changed the packets");

    e2_speccov(cap, clen);

    /* The generic path: tb_parser + tb_decoder_push, cut in two. */
    if (!own) {
        tb_parser *p = tb_parser_new(&g);
        tb_decoder *gd = tb_decoder_new(&g, tb_fuzz_image());
        int rc;

        TB_FUZZ_CHECK(E2_NAME, p && gd, "generic parser/decoder");
        rc = tb_decoder_push(gd, p, cap, split, 0, e2_on_elem, &d2);
        TB_FUZZ_CHECK(E2_NAME, rc >= 0, "generic push %d", rc);
        rc = tb_decoder_push(gd, p, cap + split, clen - split, split, e2_on_elem, &d2);
        TB_FUZZ_CHECK(E2_NAME, rc >= 0, "generic push %d", rc);
        rc = tb_decoder_push_finish(gd, p, e2_on_elem, &d2);
        TB_FUZZ_CHECK(E2_NAME, rc >= 0, "generic finish %d", rc);
        TB_FUZZ_CHECK(E2_NAME, d2.hash == d.hash && d2.elements == d.elements,
                      "the generic path gave other elements");
        tb_parser_free(p);
        tb_decoder_free(gd);
        /* Cycle ranges (decode --cycles): the same decode, split. */
        tb_fuzz_cycle_split(E2_NAME, &g, cap, clen);
    }
    free(cap);
    return 0;
}

TB_FUZZ_ENTRIES(etmv2)
