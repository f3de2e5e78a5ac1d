/*
 * Packet parser harnesses (ETMv3 and PTM): input = 4 configuration bytes
 * (fuzz_util.c) + the trace stream.  Two per protocol, on the same
 * inputs (issue 28: the checks that cost most have a harness of their
 * own, so that the fast one runs many more inputs):
 *
 * etmv3_parser, ptm_parser (fast): one pass through a parser made once
 * per configuration and reset, and these invariants beyond "no crash, no
 * sanitizer report":
 *  - packets tile the stream: each starts where the previous ended
 *    (NOTSYNC covers `count` bytes, any other packet `size` bytes, or
 *    `count` for a zero run longer than bytes[]), its bytes[] are the
 *    stream's bytes there, and after finish the packets cover the whole
 *    input (parser.h); push and finish return the packets they emitted;
 *  - fields are within their ranges (size <= TB_PKT_MAX_BYTES, atom
 *    counts agree with seq[], error kinds carry a negative err, ...);
 *  - the spec-coverage classifier (speccov.h), which reads each packet's
 *    bytes by its own rules, names known variants only.
 *
 * etmv3_parser_full, ptm_parser_full: the same, and
 *  - chunking invariance: the whole input through a new parser, the input
 *    cut in two at a point chosen from its bytes and small random chunks
 *    (both through the reset one) give the same packets, every field
 *    compared;
 *  - the printers (print.h) take every packet of the whole-input run.
 */
#include <stdio.h>
#include <string.h>

#include "fuzz.h"
#include "speccov.h"
#include "tracebench/parser.h"
#include "tracebench/print.h"

typedef struct pstate {
    const char *name;
    const tb_config *cfg;
    const uint8_t *stream;
    size_t len;
    uint64_t next;           /* stream index the next packet must start at */
    size_t count;
    bool classify;           /* the spec-coverage classifier on every packet */
    bool print;              /* printers on every packet */
    tb_fuzz_vec *rec;        /* record every packet (the reference run) */
    const tb_fuzz_vec *ref;  /* or compare every packet with the reference */
    const char *how;         /* this run's chunking, for messages */
} pstate;

static void check_packet(pstate *s, const tb_packet *p)
{
    const char *h = s->name;

    TB_FUZZ_CHECK(h, p->protocol == s->cfg->protocol, "packet protocol %d",
                  (int)p->protocol);
    TB_FUZZ_CHECK(h, (unsigned)p->kind < TB_PKT_KIND_COUNT, "kind %d",
                  (int)p->kind);
    TB_FUZZ_CHECK(h, p->index == s->next,
                  "%s packet at index %llu, expected %llu (packets must tile "
                  "the stream)", tb_pkt_kind_name(p->kind),
                  (unsigned long long)p->index, (unsigned long long)s->next);
    TB_FUZZ_CHECK(h, p->size <= TB_PKT_MAX_BYTES, "size %u", p->size);
    if (p->kind == TB_PKT_NOTSYNC) {
        TB_FUZZ_CHECK(h, p->size == 0 && p->count > 0,
                      "NOTSYNC at %llu: size %u count %llu",
                      (unsigned long long)p->index, p->size,
                      (unsigned long long)p->count);
        s->next += p->count;
    } else {
        /* A run of zeros longer than bytes[] (extra A-sync zeros, ETMv3)
         * keeps its first TB_PKT_MAX_BYTES and its length in count. */
        uint64_t covers = p->count > p->size ? p->count : p->size;
        TB_FUZZ_CHECK(h, p->size > 0, "empty %s packet at %llu",
                      tb_pkt_kind_name(p->kind), (unsigned long long)p->index);
        TB_FUZZ_CHECK(h, p->count == 0 ||
                      ((p->kind == TB_PKT_BAD_SEQUENCE ||
                        p->kind == TB_PKT_INCOMPLETE) &&
                       (p->count == p->size ||
                        (p->count > p->size && p->size == TB_PKT_MAX_BYTES))),
                      "%s packet at %llu with count %llu and size %u",
                      tb_pkt_kind_name(p->kind), (unsigned long long)p->index,
                      (unsigned long long)p->count, p->size);
        TB_FUZZ_CHECK(h, p->index + covers <= s->len &&
                      memcmp(p->bytes, s->stream + p->index, p->size) == 0,
                      "%s packet at %llu: bytes[] are not the stream's",
                      tb_pkt_kind_name(p->kind), (unsigned long long)p->index);
        s->next += covers;
    }
    TB_FUZZ_CHECK(h, s->next <= s->len, "packets run past the input (%llu > %zu)",
                  (unsigned long long)s->next, s->len);
    if (p->kind == TB_PKT_RESERVED || p->kind == TB_PKT_BAD_SEQUENCE ||
        p->kind == TB_PKT_BAD_TRACEMODE)
        TB_FUZZ_CHECK(h, p->err < 0, "%s packet with err %d",
                      tb_pkt_kind_name(p->kind), p->err);
    if (p->kind == TB_PKT_ATOM) {
        unsigned e = 0, w = 0, i;
        TB_FUZZ_CHECK(h, p->seq_len <= sizeof p->seq, "seq_len %u", p->seq_len);
        for (i = 0; i < p->seq_len; i++) {
            TB_FUZZ_CHECK(h, p->seq[i] == 'E' || p->seq[i] == 'N' ||
                          p->seq[i] == 'W', "atom '%c'", p->seq[i]);
            if (p->seq[i] == 'W')
                w++;
            else
                e++;
        }
        TB_FUZZ_CHECK(h, e == p->atom_count && w == p->w_count,
                      "atom packet at %llu: seq has %u E/N and %u W, counts "
                      "say %u and %u", (unsigned long long)p->index, e, w,
                      p->atom_count, p->w_count);
        /* ETMv3 0x80 without cycle accuracy is format 1 with no atoms
         * (protocol-notes 2.5); a PTM atom header always has one. */
        TB_FUZZ_CHECK(h, p->seq_len > 0 || p->protocol == TB_PROTO_ETMV3,
                      "atom packet without atoms at %llu",
                      (unsigned long long)p->index);
    }
    if (p->kind == TB_PKT_BRANCH || p->kind == TB_PKT_ISYNC ||
        p->kind == TB_PKT_WP_UPDATE)
        TB_FUZZ_CHECK(h, p->addr_bits <= 32 && (unsigned)p->isa <= TB_ISA_UNKNOWN,
                      "addr_bits %u isa %d", p->addr_bits, (int)p->isa);
    if (p->kind == TB_PKT_TIMESTAMP)
        TB_FUZZ_CHECK(h, p->ts_bits <= 64, "ts_bits %u", p->ts_bits);
    if (p->kind == TB_PKT_CONTEXT_ID || (p->kind == TB_PKT_ISYNC && p->has_ctxid))
        TB_FUZZ_CHECK(h, s->cfg->ctxid_bytes == 4 ||
                      p->context_id < (1u << (8 * s->cfg->ctxid_bytes)),
                      "context ID 0x%x wider than %u bytes", p->context_id,
                      s->cfg->ctxid_bytes);
    if (p->kind == TB_PKT_DATA || p->kind == TB_PKT_OOO_DATA)
        TB_FUZZ_CHECK(h, p->data_size <= 4 && p->data_size != 3,
                      "data size %u", p->data_size);
    /* The spec-coverage classifier reads the packet's bytes by its own rules
     * (speccov.h): every variant it names is a known one. */
    if (s->classify) {
        tb_speccov_id ids[64];
        int k = tb_speccov_classify_packet(s->cfg, p, ids, 64);

        tb_fuzz_check_speccov(h, k, ids, NULL);
    }

    if (s->print) {
        /* Library code that reads every field. */
        char buf[2048];
        int n = tb_packet_format_json(p, -1, buf, sizeof buf);

        TB_FUZZ_CHECK(h, n > 0 && (size_t)n < sizeof buf, "JSON length %d", n);
        n = tb_packet_format(p, buf, sizeof buf);
        TB_FUZZ_CHECK(h, n > 0 && (size_t)n < sizeof buf, "text length %d", n);
    }
    if (s->rec)
        tb_fuzz_vec_push(s->rec, p);
    if (s->ref) {
        const char *f;

        TB_FUZZ_CHECK(h, s->count < s->ref->n, "%s: more packets than the whole input's %zu",
                      s->how, s->ref->n);
        f = tb_fuzz_packet_diff(tb_fuzz_vec_at(s->ref, s->count), p);
        TB_FUZZ_CHECK(h, f == NULL, "%s: packet %zu (%s at %llu) differs from the whole "
                      "input's in %s", s->how, s->count, tb_pkt_kind_name(p->kind),
                      (unsigned long long)p->index, f);
    }
    s->count++;
}

static int parse_on_packet(void *ctx, const tb_packet *p)
{
    check_packet(ctx, p);
    return 0;
}

/* Parses the stream through p in the chunks given by cut[] (ascending
 * ends, the last = len); s is set up by the caller. */
static void parse_run(pstate *s, tb_parser *p, const size_t *cut, size_t ncut)
{
    size_t at = 0, i, before;
    int rc;

    for (i = 0; i < ncut; i++) {
        before = s->count;
        rc = tb_parser_push(p, s->stream + at, cut[i] - at, at, parse_on_packet, s);
        TB_FUZZ_CHECK(s->name, rc >= 0 && (size_t)rc == s->count - before,
                      "push returned %d for %zu packets", rc, s->count - before);
        at = cut[i];
    }
    before = s->count;
    rc = tb_parser_finish(p, parse_on_packet, s);
    TB_FUZZ_CHECK(s->name, rc >= 0 && (size_t)rc == s->count - before,
                  "finish returned %d for %zu packets", rc, s->count - before);
    TB_FUZZ_CHECK(s->name, s->next == s->len,
                  "packets cover %llu of %zu bytes after finish",
                  (unsigned long long)s->next, s->len);
    /* Packets per byte are bounded: at most one per byte plus the
     * NOTSYNC/INCOMPLETE at the end. */
    TB_FUZZ_CHECK(s->name, s->count <= s->len + 2, "%zu packets from %zu bytes",
                  s->count, s->len);
    if (s->ref)
        TB_FUZZ_CHECK(s->name, s->count == s->ref->n, "%s: %zu packets, the whole input %zu",
                      s->how, s->count, s->ref->n);
}

static int fuzz_parser(const char *name, tb_protocol proto, const uint8_t *data, size_t len,
                       bool full)
{
    static tb_fuzz_vec whole = {.size = sizeof(tb_packet)};
    const tb_fuzz_objs *o;
    size_t cuts[64], ncut, at;
    uint64_t seed;
    char how[64];
    pstate s;

    if (len < TB_FUZZ_CFG_BYTES)
        return TB_FUZZ_SKIP;
    if (len > TB_FUZZ_MAX_INPUT)
        len = TB_FUZZ_MAX_INPUT;
    o = tb_fuzz_objects(proto, data, false);
    data += TB_FUZZ_CFG_BYTES;
    len -= TB_FUZZ_CFG_BYTES;
    s = (pstate){.name = name, .cfg = &o->cfg, .stream = data, .len = len, .classify = true};
    cuts[0] = len;
    if (!full) {
        parse_run(&s, o->parser, cuts, 1);
        return 0;
    }

    /* The reference: a new parser, the printers, every packet kept. */
    {
        tb_parser *p = tb_parser_new(&o->cfg);

        TB_FUZZ_CHECK(name, p != NULL, "tb_parser_new failed");
        whole.n = 0;
        s.print = true;
        s.rec = &whole;
        parse_run(&s, p, cuts, 1);
        tb_parser_free(p);
    }

    cuts[0] = tb_fuzz_split(data, len);
    cuts[1] = len;
    snprintf(how, sizeof how, "cut at %zu", cuts[0]);
    s = (pstate){.name = name, .cfg = &o->cfg, .stream = data, .len = len, .ref = &whole,
                 .how = how};
    parse_run(&s, o->parser, cuts, 2);

    /* Short random chunks (1..16 bytes) over the start of the input. */
    seed = tb_fuzz_hash(TB_FUZZ_HASH_INIT ^ 1, data, len);
    ncut = 0;
    at = 0;
    while (at < len && ncut < 63) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        at += 1 + (size_t)((seed >> 33) % 16);
        if (at > len)
            at = len;
        cuts[ncut++] = at;
    }
    if (ncut == 0 || cuts[ncut - 1] != len)
        cuts[ncut++] = len;
    tb_parser_reset(o->parser);
    s = (pstate){.name = name, .cfg = &o->cfg, .stream = data, .len = len, .ref = &whole,
                 .how = "small chunks"};
    parse_run(&s, o->parser, cuts, ncut);
    return 0;
}

int tb_fuzz_etmv3_parser(const uint8_t *data, size_t len)
{
    return fuzz_parser("etmv3_parser", TB_PROTO_ETMV3, data, len, false);
}

int tb_fuzz_ptm_parser(const uint8_t *data, size_t len)
{
    return fuzz_parser("ptm_parser", TB_PROTO_PTM, data, len, false);
}

int tb_fuzz_etmv3_parser_full(const uint8_t *data, size_t len)
{
    return fuzz_parser("etmv3_parser_full", TB_PROTO_ETMV3, data, len, true);
}

int tb_fuzz_ptm_parser_full(const uint8_t *data, size_t len)
{
    return fuzz_parser("ptm_parser_full", TB_PROTO_PTM, data, len, true);
}
