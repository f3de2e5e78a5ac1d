/*
 * Full decoder harnesses (ETMv3 and PTM): input = 4 configuration bytes
 * (fuzz_util.c) + the trace stream, decoded over the fixed image of
 * fuzz_util.c (parser -> decoder, as tb_decode_snapshot does).
 *
 * Invariants, beyond "no crash, no sanitizer report":
 *  - the decoder returns no error (decoder.h: errors in the trace are
 *    elements) and reports exactly the elements it emitted;
 *  - element indices never go back (END has none); END comes once, last, from finish;
 *  - DATA elements (ETMv3 data trace) are well formed (check_data);
 *  - each instruction range is consistent: count >= 1 (<= 32 for ETMv3,
 *    decoder.h), its instructions listed by tb_decoder_range_addrs start
 *    at start, step by the ISA's sizes, the last is last_addr and ends at
 *    end; last_atom is E or N; the ISA is one the image can run;
 *  - chunking invariance and reset: the stream parsed whole into a new
 *    decoder, and cut in two into the same decoder after
 *    tb_decoder_reset (warm block cache), give the same elements;
 *  - the fused path (tb_decoder_push, which skips the tb_packet of
 *    ETMv3 P-headers and PTM atom packets) gives those elements too,
 *    again cut in two;
 *  - spans (types.h tb_span_map): the input cut into segments of 1..40
 *    bytes (the cut and the indices derived from the input, indices
 *    jumping forward as the deformatter's runs do across frames),
 *    grouped into spans of 1..64 segments: tb_decoder_push_span gives
 *    exactly the elements of tb_decoder_push per segment at its index;
 *    and apart from the index, those of the packet path above (indices
 *    label elements, they never steer the decode);
 *  - trace health (health.h): the packet path and the fused path (the
 *    decoder counting the packets it is handed, tb_decoder_set_health)
 *    count the same A-syncs, unsynchronised bytes, bad packets, syncs,
 *    instructions and losses, and diagnose the same cause; the buffer
 *    guess (tb_health_guess_buffer) on the same bytes stays within its
 *    contract (formatted only with no frame error and 1-16 IDs).
 */
#include <string.h>

#include "fuzz.h"
#include "tracebench/decoder.h"
#include "tracebench/health.h"
#include "tracebench/parser.h"

#define MAX_RANGE (1u << 16)

typedef struct xstate {
    const char *name;
    const tb_config *cfg;
    tb_decoder *dec;
    uint64_t hash;
    uint64_t hash_noidx;     /* every field but index */
    size_t elements;
    uint64_t last_index;
    bool ended;
    uint64_t insns;
    bool print;              /* format every element (first run only) */
    tb_health *health;       /* elements counted here too, when set */
} xstate;

#define HF(f) h = tb_fuzz_hash(h, &el->f, sizeof el->f)

/* Field by field (never the padding). */
static uint64_t hash_element(uint64_t h, const tb_element *el, bool with_index)
{
    HF(kind);
    if (with_index)
        HF(index);
    HF(reason); HF(isa); HF(start); HF(end);
    HF(count); HF(last_addr); HF(last_size); HF(last_wp); HF(last_atom);
    HF(atom_bits); HF(exc_num); HF(pref_return); HF(cancelled); HF(ts);
    HF(has_cc); HF(cc); HF(context_id); HF(vmid); HF(ns); HF(hyp);
    HF(err);
    /* DATA (they share space with exc_num and ts: hashed again by name). */
    HF(data_size); HF(data_flags); HF(data_addr); HF(data_value);
    return h;
}

static void check_range(xstate *s, const tb_element *el)
{
    static uint32_t addrs[MAX_RANGE];
    const char *h = s->name;
    uint32_t sum = 0;
    int n, i;

    TB_FUZZ_CHECK(h, el->count >= 1 && el->count <= MAX_RANGE,
                  "range of %u instructions", el->count);
    if (s->cfg->protocol == TB_PROTO_ETMV3)
        TB_FUZZ_CHECK(h, el->count <= 32, "ETMv3 range of %u instructions "
                      "(decoder.h: at most 32)", el->count);
    TB_FUZZ_CHECK(h, el->isa == TB_ISA_ARM || el->isa == TB_ISA_THUMB ||
                  el->isa == TB_ISA_THUMBEE, "range in ISA %u", el->isa);
    TB_FUZZ_CHECK(h, el->last_atom == 'E' || el->last_atom == 'N',
                  "last atom '%c'", el->last_atom);
    TB_FUZZ_CHECK(h, el->last_wp <= TB_WP_BARRIER, "last_wp %u", el->last_wp);
    TB_FUZZ_CHECK(h, el->last_size == (el->isa == TB_ISA_ARM ? 4 : el->last_size) &&
                  (el->last_size == 2 || el->last_size == 4),
                  "last_size %u in %s", el->last_size,
                  tb_isa_name((tb_isa)el->isa));
    n = tb_decoder_range_addrs(s->dec, el, addrs, MAX_RANGE);
    TB_FUZZ_CHECK(h, n == (int)el->count,
                  "range [0x%08x,0x%08x) of %u instructions lists %d",
                  el->start, el->end, el->count, n);
    TB_FUZZ_CHECK(h, addrs[0] == el->start && addrs[n - 1] == el->last_addr,
                  "range [0x%08x,0x%08x): first 0x%08x, last 0x%08x, "
                  "last_addr 0x%08x", el->start, el->end, addrs[0],
                  addrs[n - 1], el->last_addr);
    for (i = 1; i < n; i++) {
        uint32_t step = addrs[i] - addrs[i - 1];
        TB_FUZZ_CHECK(h, step == 4 || (el->isa != TB_ISA_ARM && step == 2),
                      "range at 0x%08x: step %u", el->start, step);
        sum += step;
    }
    TB_FUZZ_CHECK(h, el->end - el->start == sum + el->last_size,
                  "range [0x%08x,0x%08x) does not end after its last "
                  "instruction 0x%08x (+%u)", el->start, el->end,
                  el->last_addr, el->last_size);
    s->insns += el->count;
}

/* A DATA element (docs/formats.md): only with data trace; a transfer
 * of 1, 2 or 4 bytes (a suppression mark: none) whose value fits it;
 * no address or value where the flags say none; tags 1..3. */
static void check_data(xstate *s, const tb_element *el)
{
    const char *h = s->name;
    const unsigned fl = el->data_flags;

    TB_FUZZ_CHECK(h, s->cfg->protocol == TB_PROTO_ETMV3 && s->cfg->data_trace,
                  "DATA element without data trace (ETMCR[3:2] = %u)", s->cfg->data_trace);
    TB_FUZZ_CHECK(h, !(fl & ~0x7Fu), "DATA flags 0x%x", fl);
    TB_FUZZ_CHECK(h, el->reason <= 3, "DATA tag %u", el->reason);
    if ((fl & TB_DATA_SUPPRESSED) && !(fl & TB_DATA_OOO)) {
        TB_FUZZ_CHECK(h, el->data_size == 0 && (fl & TB_DATA_NO_ADDR) &&
                      (fl & TB_DATA_NO_VALUE), "suppression mark with a transfer");
        return;
    }
    TB_FUZZ_CHECK(h, el->data_size == 1 || el->data_size == 2 || el->data_size == 4,
                  "DATA size %u", el->data_size);
    TB_FUZZ_CHECK(h, el->isa == TB_ISA_ARM || el->isa == TB_ISA_THUMB,
                  "DATA of an instruction in ISA %u", el->isa);
    TB_FUZZ_CHECK(h, !(fl & TB_DATA_NO_ADDR) || el->data_addr == 0,
                  "untraced data address 0x%08x", el->data_addr);
    TB_FUZZ_CHECK(h, !(fl & TB_DATA_NO_VALUE) || el->data_value == 0,
                  "untraced data value 0x%08x", el->data_value);
    TB_FUZZ_CHECK(h, el->data_size == 4 || el->data_value >> (8 * el->data_size) == 0,
                  "value 0x%x wider than %u bytes", el->data_value, el->data_size);
    TB_FUZZ_CHECK(h, !(fl & TB_DATA_STORE_FAILED) || (fl & TB_DATA_STORE),
                  "a load that failed to store");
}

static int dec_on_element(void *ctx, const tb_element *el)
{
    xstate *s = ctx;
    const char *h = s->name;
    char buf[1024];
    int n;

    TB_FUZZ_CHECK(h, !s->ended, "element after END");
    TB_FUZZ_CHECK(h, (unsigned)el->kind <= TB_ELEM_DATA, "element kind %d",
                  (int)el->kind);
    /* END belongs to no packet: its index is not checked. */
    if (el->kind != TB_ELEM_END) {
        TB_FUZZ_CHECK(h, el->index >= s->last_index,
                      "%s element at index %llu after one at %llu",
                      tb_elem_kind_name(el->kind), (unsigned long long)el->index,
                      (unsigned long long)s->last_index);
        s->last_index = el->index;
    }
    if (el->kind == TB_ELEM_INSN_RANGE)
        check_range(s, el);
    if (el->kind == TB_ELEM_DATA)
        check_data(s, el);
    if (el->kind == TB_ELEM_END)
        s->ended = true;
    if (s->health)
        tb_health_element(s->health, el);
    s->hash = hash_element(s->hash, el, true);
    s->hash_noidx = hash_element(s->hash_noidx, el, false);
    if (s->print) {
        n = tb_elem_format_json(el, buf, sizeof buf);
        TB_FUZZ_CHECK(h, n > 0 && (size_t)n < sizeof buf, "JSON length %d", n);
        n = tb_elem_format(el, buf, sizeof buf);
        TB_FUZZ_CHECK(h, n > 0 && (size_t)n < sizeof buf, "text length %d", n);
    }
    s->elements++;
    return 0;
}

static int dec_on_packet(void *ctx, const tb_packet *p)
{
    xstate *s = ctx;
    size_t before = s->elements;
    int rc = tb_decoder_packet(s->dec, p, dec_on_element, s);

    TB_FUZZ_CHECK(s->name, rc >= 0 && (size_t)rc == s->elements - before,
                  "tb_decoder_packet returned %d for %zu elements (%s packet "
                  "at %llu)", rc, s->elements - before,
                  tb_pkt_kind_name(p->kind), (unsigned long long)p->index);
    return 0;
}

static void decode(xstate *s, const uint8_t *data, size_t len, size_t cut)
{
    tb_parser *p = tb_parser_new(s->cfg);
    size_t before;
    int rc;

    TB_FUZZ_CHECK(s->name, p != NULL, "tb_parser_new failed");
    rc = tb_parser_push(p, data, cut, 0, dec_on_packet, s);
    TB_FUZZ_CHECK(s->name, rc >= 0, "parser push returned %d", rc);
    rc = tb_parser_push(p, data + cut, len - cut, cut, dec_on_packet, s);
    TB_FUZZ_CHECK(s->name, rc >= 0, "parser push returned %d", rc);
    rc = tb_parser_finish(p, dec_on_packet, s);
    TB_FUZZ_CHECK(s->name, rc >= 0, "parser finish returned %d", rc);
    tb_parser_free(p);
    before = s->elements;
    rc = tb_decoder_finish(s->dec, dec_on_element, s);
    TB_FUZZ_CHECK(s->name, rc >= 1 && (size_t)rc == s->elements - before,
                  "tb_decoder_finish returned %d for %zu elements", rc,
                  s->elements - before);
    TB_FUZZ_CHECK(s->name, s->ended, "no END element after finish");
}

/* decode() through tb_decoder_push. */
static void decode_fused(xstate *s, const uint8_t *data, size_t len, size_t cut)
{
    tb_parser *p = tb_parser_new(s->cfg);
    size_t before = s->elements;
    int rc;

    TB_FUZZ_CHECK(s->name, p != NULL, "tb_parser_new failed");
    rc = tb_decoder_push(s->dec, p, data, cut, 0, dec_on_element, s);
    TB_FUZZ_CHECK(s->name, rc >= 0 && (size_t)rc == s->elements - before,
                  "tb_decoder_push returned %d for %zu elements", rc, s->elements - before);
    before = s->elements;
    rc = tb_decoder_push(s->dec, p, data + cut, len - cut, cut, dec_on_element, s);
    TB_FUZZ_CHECK(s->name, rc >= 0 && (size_t)rc == s->elements - before,
                  "tb_decoder_push returned %d for %zu elements", rc, s->elements - before);
    before = s->elements;
    rc = tb_decoder_push_finish(s->dec, p, dec_on_element, s);
    TB_FUZZ_CHECK(s->name, rc >= 1 && (size_t)rc == s->elements - before,
                  "tb_decoder_push_finish returned %d for %zu elements", rc,
                  s->elements - before);
    TB_FUZZ_CHECK(s->name, s->ended, "no END element after finish");
    tb_parser_free(p);
}

static uint64_t seg_rand(uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

#define MAX_SEGS 64

/* The input as segments (see the top): per segment through
 * tb_decoder_push at its index (span false), or per span through
 * tb_decoder_push_span with its map.  The cut is the same for both. */
static void decode_segments(xstate *s, const uint8_t *data, size_t len, bool span)
{
    tb_parser *p = tb_parser_new(s->cfg);
    uint64_t rng = tb_fuzz_hash(TB_FUZZ_HASH_INIT, data, len) | 1;
    /* Small first index: segment indices below their span position
     * make the map's base wrap (decoder/span.h: modular). */
    uint64_t index = seg_rand(&rng) % 4096;
    size_t pos = 0, before;
    int rc;

    TB_FUZZ_CHECK(s->name, p != NULL, "tb_parser_new failed");
    while (pos < len) {
        size_t end[MAX_SEGS], n = 0, slen = 0;
        uint64_t idx[MAX_SEGS];
        const size_t want = 1 + (size_t)(seg_rand(&rng) % MAX_SEGS);

        while (n < want && pos + slen < len) {
            size_t l = 1 + (size_t)(seg_rand(&rng) % 40);

            if (l > len - pos - slen)
                l = len - pos - slen;
            idx[n] = index;
            slen += l;
            end[n++] = slen;
            index += l + seg_rand(&rng) % 32;
        }
        if (span) {
            const tb_span_map map = {n, end, idx};

            before = s->elements;
            rc = tb_decoder_push_span(s->dec, p, data + pos, slen, &map, dec_on_element, s);
            TB_FUZZ_CHECK(s->name, rc >= 0 && (size_t)rc == s->elements - before,
                          "tb_decoder_push_span (%zu bytes, %zu segments) returned %d for "
                          "%zu elements", slen, n, rc, s->elements - before);
        } else {
            for (size_t k = 0; k < n; k++) {
                const size_t from = k ? end[k - 1] : 0;

                before = s->elements;
                rc = tb_decoder_push(s->dec, p, data + pos + from, end[k] - from, idx[k],
                                     dec_on_element, s);
                TB_FUZZ_CHECK(s->name, rc >= 0 && (size_t)rc == s->elements - before,
                              "tb_decoder_push returned %d for %zu elements", rc,
                              s->elements - before);
            }
        }
        pos += slen;
    }
    before = s->elements;
    rc = tb_decoder_push_finish(s->dec, p, dec_on_element, s);
    TB_FUZZ_CHECK(s->name, rc >= 1 && (size_t)rc == s->elements - before,
                  "tb_decoder_push_finish returned %d for %zu elements", rc,
                  s->elements - before);
    TB_FUZZ_CHECK(s->name, s->ended, "no END element after finish");
    tb_parser_free(p);
}

/* The two paths' health agree (see the top), and the diagnosis and the
 * buffer guess keep their contracts. */
static void check_health(const char *name, const tb_config *cfg, const tb_health *a,
                         const tb_health *c, const uint8_t *data, size_t len)
{
    tb_health_diag da, dc;
    tb_buffer_guess g;

#define SAME(f)                                                                        \
    TB_FUZZ_CHECK(name, a->f == c->f, "health " #f ": packet path %llu, fused path %llu", \
                  (unsigned long long)a->f, (unsigned long long)c->f)
    SAME(bytes);
    SAME(unsynced_bytes);
    SAME(asyncs);
    SAME(bad_packets);
    SAME(first_bad_index);
    SAME(truncated);
    SAME(syncs);
    SAME(insns);
    SAME(unknown_atoms);
    SAME(nacc);
    SAME(lost);
    SAME(decode_errors);
#undef SAME
    tb_health_diagnose(a, false, &da);
    tb_health_diagnose(c, false, &dc);
    TB_FUZZ_CHECK(name, da.cause == dc.cause && da.lost == dc.lost && da.count == dc.count,
                  "health: the paths diagnose %s and %s", tb_health_cause_name(da.cause),
                  tb_health_cause_name(dc.cause));
    TB_FUZZ_CHECK(name, (unsigned)da.cause <= TB_HEALTH_NO_ADDRESS, "cause %d",
                  (int)da.cause);
    TB_FUZZ_CHECK(name, da.lost == (da.cause != TB_HEALTH_OK && da.cause != TB_HEALTH_EMPTY),
                  "health: lost %d with cause %s", da.lost, tb_health_cause_name(da.cause));
    TB_FUZZ_CHECK(name, tb_health_guess_buffer(data, len, cfg, &g) == 0, "guess failed");
    TB_FUZZ_CHECK(name, g.frames == len / 16, "guess: %llu frames of %zu bytes",
                  (unsigned long long)g.frames, len);
    TB_FUZZ_CHECK(name, g.n_clean <= g.n_ids && g.n_clean <= TB_GUESS_MAX_IDS,
                  "guess: %u clean of %u IDs", g.n_clean, g.n_ids);
    TB_FUZZ_CHECK(name, !g.formatted || (!g.frame_errors && g.n_ids >= 1 &&
                                         g.n_ids <= TB_GUESS_MAX_IDS && g.n_clean >= 1),
                  "guess: formatted with %llu frame errors, %u IDs, %u clean",
                  (unsigned long long)g.frame_errors, g.n_ids, g.n_clean);
}

static int fuzz_decoder(const char *name, tb_protocol proto,
                        const uint8_t *data, size_t len)
{
    const tb_memimage *mem = tb_fuzz_image();
    tb_config cfg;
    xstate a, b, c, e, f;
    tb_health ha, hc;
    tb_decoder *d;

    if (len < TB_FUZZ_CFG_BYTES)
        return 0;
    if (len > TB_FUZZ_MAX_INPUT)
        len = TB_FUZZ_MAX_INPUT;
    tb_fuzz_config(proto, data, &cfg);
    data += TB_FUZZ_CFG_BYTES;
    len -= TB_FUZZ_CFG_BYTES;

    d = tb_decoder_new(&cfg, mem);
    TB_FUZZ_CHECK(name, d != NULL, "tb_decoder_new failed");
    tb_health_init(&ha);
    tb_health_bytes(&ha, len);
    tb_decoder_set_health(d, &ha);
    a = (xstate){.name = name, .cfg = &cfg, .dec = d, .hash = TB_FUZZ_HASH_INIT,
                 .hash_noidx = TB_FUZZ_HASH_INIT, .print = true, .health = &ha};
    decode(&a, data, len, len);
    tb_decoder_set_health(d, NULL);

    tb_decoder_reset(d);
    b = (xstate){.name = name, .cfg = &cfg, .dec = d, .hash = TB_FUZZ_HASH_INIT};
    decode(&b, data, len, tb_fuzz_split(data, len));
    TB_FUZZ_CHECK(name, a.hash == b.hash && a.elements == b.elements,
                  "whole input gives %zu elements, split after reset gives "
                  "%zu (or different fields)", a.elements, b.elements);

    tb_decoder_reset(d);
    tb_health_init(&hc);
    tb_health_bytes(&hc, len);
    tb_decoder_set_health(d, &hc);
    c = (xstate){.name = name, .cfg = &cfg, .dec = d, .hash = TB_FUZZ_HASH_INIT,
                 .health = &hc};
    decode_fused(&c, data, len, tb_fuzz_split(data, len));
    tb_decoder_set_health(d, NULL);
    TB_FUZZ_CHECK(name, a.hash == c.hash && a.elements == c.elements,
                  "packet path gives %zu elements, fused path %zu (or different "
                  "fields)", a.elements, c.elements);
    check_health(name, &cfg, &ha, &hc, data, len);

    tb_decoder_reset(d);
    e = (xstate){.name = name, .cfg = &cfg, .dec = d, .hash = TB_FUZZ_HASH_INIT,
                 .hash_noidx = TB_FUZZ_HASH_INIT};
    decode_segments(&e, data, len, false);
    tb_decoder_reset(d);
    f = (xstate){.name = name, .cfg = &cfg, .dec = d, .hash = TB_FUZZ_HASH_INIT,
                 .hash_noidx = TB_FUZZ_HASH_INIT};
    decode_segments(&f, data, len, true);
    TB_FUZZ_CHECK(name, e.hash == f.hash && e.elements == f.elements,
                  "segments one by one give %zu elements, the same segments as spans "
                  "%zu (or different fields)", e.elements, f.elements);
    TB_FUZZ_CHECK(name, e.hash_noidx == a.hash_noidx && e.elements == a.elements,
                  "segments at their own indices give %zu elements, the packet path "
                  "%zu (or fields other than index differ)", e.elements, a.elements);
    tb_decoder_free(d);
    return 0;
}

int tb_fuzz_etmv3_decoder(const uint8_t *data, size_t len)
{
    return fuzz_decoder("etmv3_decoder", TB_PROTO_ETMV3, data, len);
}

int tb_fuzz_ptm_decoder(const uint8_t *data, size_t len)
{
    return fuzz_decoder("ptm_decoder", TB_PROTO_PTM, data, len);
}

#undef HF
#undef MAX_RANGE
#undef MAX_SEGS
