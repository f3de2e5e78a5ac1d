/*
 * Full decoder harnesses (ETMv3 and PTM): input = 4 configuration bytes
 * (fuzz_util.c) + the trace stream, decoded over the fixed image of
 * fuzz_util.c.  Two per protocol, on the same inputs (issue 28):
 *
 * etmv3_decoder, ptm_decoder (fast): one pass through the path the CLI
 * takes (tb_decoder_push: parser and decoder fused), with a parser and
 * decoder made once per configuration and reset, and these invariants
 * beyond "no crash, no sanitizer report":
 *  - the decoder returns no error (decoder.h: errors in the trace are
 *    elements) and reports exactly the elements it emitted;
 *  - element indices never go back (END has none); END comes once, last,
 *    from finish;
 *  - DATA elements (ETMv3 data trace) are well formed (check_data);
 *  - each instruction range is consistent on its own: count >= 1 (<= 32
 *    for ETMv3, decoder.h), start and last_addr aligned for the ISA,
 *    last_addr inside, the last instruction ending at end, as many bytes
 *    as count instructions of the ISA can take (ARM exactly 4 each);
 *    last_atom is E or N; the ISA is one the image can run.
 *
 * etmv3_decoder_full, ptm_decoder_full: the same, and
 *  - each range's instructions listed by tb_decoder_range_addrs start at
 *    start, step by the ISA's sizes, the last is last_addr and ends at
 *    end;
 *  - the printers (print.h) take every element of the reference run;
 *  - the packet path (tb_parser_push into tb_decoder_packet) through a
 *    new parser and decoder is the reference; the input cut in two into
 *    the reset ones (warm block cache), the fused path cut in two, and
 *    the input cut into segments of 1..40 bytes (the cut and the indices
 *    derived from the input, indices jumping forward as the
 *    deformatter's runs do across frames) grouped into spans of 1..64
 *    segments, per segment through tb_decoder_push and per span through
 *    tb_decoder_push_span (types.h tb_span_map), give its elements,
 *    every field compared (the segments' apart from the index: indices
 *    label elements, they never steer the decode; the spans' with the
 *    index, as the segments');
 *  - trace health (health.h): the packet path and the fused path (the
 *    decoder counting the packets it is handed, tb_decoder_set_health)
 *    count the same A-syncs, unsynchronised bytes, bad packets, syncs,
 *    instructions and losses, and diagnose the same cause; the buffer
 *    guess (tb_health_guess_buffer) on the same bytes stays within its
 *    contract (formatted only with no frame error and 1-16 IDs).
 */
#include <stdio.h>
#include <string.h>

#include "fuzz.h"
#include "tracebench/decoder.h"
#include "tracebench/health.h"
#include "tracebench/parser.h"
#include "tracebench/pipeline.h"

#define MAX_RANGE (1u << 16)

typedef struct xstate {
    const char *name;
    const tb_config *cfg;
    tb_decoder *dec;
    size_t elements;
    uint64_t last_index;
    bool ended;
    uint64_t insns;
    bool print;              /* format every element */
    bool expand;             /* list every range's instructions */
    tb_fuzz_vec *rec;        /* record every element (a reference run) */
    const tb_fuzz_vec *ref;  /* or compare every element with a reference */
    bool ref_index;          /* ... index included */
    const char *how;         /* this run, for messages */
    tb_health *health;       /* elements counted here too, when set */
} xstate;

static void check_range(xstate *s, const tb_element *el)
{
    static uint32_t addrs[MAX_RANGE];
    const char *h = s->name;
    const uint32_t span = el->end - el->start;
    const unsigned align = el->isa == TB_ISA_ARM ? 3u : 1u;
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
    /* Per range, without walking it: aligned ends, the last instruction
     * inside and ending at end, 2..4 bytes an instruction (4 in ARM). */
    TB_FUZZ_CHECK(h, !(el->start & align) && !(el->last_addr & align),
                  "range [0x%08x,0x%08x) in %s: last 0x%08x unaligned", el->start, el->end,
                  tb_isa_name((tb_isa)el->isa), el->last_addr);
    TB_FUZZ_CHECK(h, (uint32_t)(el->last_addr + el->last_size) == el->end &&
                  el->last_addr - el->start < span,
                  "range [0x%08x,0x%08x): last instruction 0x%08x+%u", el->start, el->end,
                  el->last_addr, el->last_size);
    TB_FUZZ_CHECK(h, el->isa == TB_ISA_ARM ? span == 4u * el->count
                                           : span >= 2u * el->count && span <= 4u * el->count,
                  "range [0x%08x,0x%08x) of %u %s instructions spans %u bytes", el->start,
                  el->end, el->count, tb_isa_name((tb_isa)el->isa), span);
    s->insns += el->count;
    if (!s->expand)
        return;
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
    TB_FUZZ_CHECK(h, !(fl & ~0xFFu), "DATA flags 0x%x", fl);
    TB_FUZZ_CHECK(h, el->reason <= 3, "DATA tag %u", el->reason);
    /* Data-only mode (ETMCR[20]): every transfer, and only then, without
     * instruction, direction or size (TB_DATA_NO_DIR). */
    TB_FUZZ_CHECK(h, !(fl & TB_DATA_NO_DIR) == !s->cfg->data_only,
                  "DATA flags 0x%x with data-only mode %s", fl,
                  s->cfg->data_only ? "on" : "off");
    if (fl & TB_DATA_NO_DIR) {
        TB_FUZZ_CHECK(h, el->data_size == 0 && el->isa == TB_ISA_UNKNOWN &&
                      el->last_addr == 0 && !(fl & (TB_DATA_STORE | TB_DATA_SUPPRESSED)),
                      "data-only DATA with an instruction: size %u isa %u at 0x%08x, flags "
                      "0x%x", el->data_size, el->isa, el->last_addr, fl);
        TB_FUZZ_CHECK(h, !(fl & TB_DATA_NO_ADDR) || el->data_addr == 0,
                      "untraced data address 0x%08x", el->data_addr);
        TB_FUZZ_CHECK(h, !(fl & TB_DATA_NO_VALUE) || el->data_value == 0,
                      "untraced data value 0x%08x", el->data_value);
        return;
    }
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
    if (s->print) {
        char buf[1024];
        int n = tb_elem_format_json(el, buf, sizeof buf);

        TB_FUZZ_CHECK(h, n > 0 && (size_t)n < sizeof buf, "JSON length %d", n);
        n = tb_elem_format(el, buf, sizeof buf);
        TB_FUZZ_CHECK(h, n > 0 && (size_t)n < sizeof buf, "text length %d", n);
    }
    if (s->health)
        tb_health_element(s->health, el);
    if (s->rec)
        tb_fuzz_vec_push(s->rec, el);
    if (s->ref) {
        const char *f;

        TB_FUZZ_CHECK(h, s->elements < s->ref->n, "%s: more elements than the reference's %zu",
                      s->how, s->ref->n);
        f = tb_fuzz_element_diff(tb_fuzz_vec_at(s->ref, s->elements), el, s->ref_index);
        TB_FUZZ_CHECK(h, f == NULL, "%s: element %zu (%s at %llu) differs from the "
                      "reference in %s", s->how, s->elements, tb_elem_kind_name(el->kind),
                      (unsigned long long)el->index, f);
    }
    s->elements++;
    return 0;
}

static void run_done(xstate *s)
{
    TB_FUZZ_CHECK(s->name, s->ended, "%s: no END element after finish", s->how);
    if (s->ref)
        TB_FUZZ_CHECK(s->name, s->elements == s->ref->n, "%s: %zu elements, the reference %zu",
                      s->how, s->elements, s->ref->n);
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

/* The packet path: tb_parser_push into tb_decoder_packet, cut in two. */
static void decode(xstate *s, tb_parser *p, const uint8_t *data, size_t len, size_t cut)
{
    size_t before;
    int rc;

    rc = tb_parser_push(p, data, cut, 0, dec_on_packet, s);
    TB_FUZZ_CHECK(s->name, rc >= 0, "parser push returned %d", rc);
    rc = tb_parser_push(p, data + cut, len - cut, cut, dec_on_packet, s);
    TB_FUZZ_CHECK(s->name, rc >= 0, "parser push returned %d", rc);
    rc = tb_parser_finish(p, dec_on_packet, s);
    TB_FUZZ_CHECK(s->name, rc >= 0, "parser finish returned %d", rc);
    before = s->elements;
    rc = tb_decoder_finish(s->dec, dec_on_element, s);
    TB_FUZZ_CHECK(s->name, rc >= 1 && (size_t)rc == s->elements - before,
                  "tb_decoder_finish returned %d for %zu elements", rc,
                  s->elements - before);
    run_done(s);
}

/* The fused path: tb_decoder_push, cut in two (cut == len: whole). */
static void decode_fused(xstate *s, tb_parser *p, const uint8_t *data, size_t len, size_t cut)
{
    size_t before = s->elements;
    int rc;

    rc = tb_decoder_push(s->dec, p, data, cut, 0, dec_on_element, s);
    TB_FUZZ_CHECK(s->name, rc >= 0 && (size_t)rc == s->elements - before,
                  "tb_decoder_push returned %d for %zu elements", rc, s->elements - before);
    if (cut < len) {
        before = s->elements;
        rc = tb_decoder_push(s->dec, p, data + cut, len - cut, cut, dec_on_element, s);
        TB_FUZZ_CHECK(s->name, rc >= 0 && (size_t)rc == s->elements - before,
                      "tb_decoder_push returned %d for %zu elements", rc,
                      s->elements - before);
    }
    before = s->elements;
    rc = tb_decoder_push_finish(s->dec, p, dec_on_element, s);
    TB_FUZZ_CHECK(s->name, rc >= 1 && (size_t)rc == s->elements - before,
                  "tb_decoder_push_finish returned %d for %zu elements", rc,
                  s->elements - before);
    run_done(s);
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
static void decode_segments(xstate *s, tb_parser *p, const uint8_t *data, size_t len,
                            bool span)
{
    uint64_t rng = tb_fuzz_hash(TB_FUZZ_HASH_INIT, data, len) | 1;
    /* Small first index: segment indices below their span position
     * make the map's base wrap (decoder/span.h: modular). */
    uint64_t index = seg_rand(&rng) % 4096;
    size_t pos = 0, before;
    int rc;

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
    run_done(s);
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

/* The pipeline's packet tap: packets go on to the decoder. */
static int pipe_tap(void *ctx, const tb_packet *p)
{
    (void)ctx;
    (void)p;
    return 0;
}

/* The decode pipeline (pipeline.h), fused and with a packet tap, cut in
 * two: the reference's elements, with the counts its calls return. */
static void decode_pipeline(const char *name, const tb_fuzz_objs *o, const tb_fuzz_vec *ref,
                            const uint8_t *data, size_t len, size_t cut)
{
    char how[96];

    for (int tap = 0; tap < 2; tap++) {
        xstate x;
        tb_pipeline *pl;
        int a, b, c;

        snprintf(how, sizeof how, "pipeline (%s) cut at %zu", tap ? "packet tap" : "fused", cut);
        x = (xstate){.name = name, .cfg = &o->cfg, .ref = ref, .ref_index = true, .how = how};
        pl = tb_pipeline_new(&o->cfg, tb_fuzz_image(),
                             &(tb_pipeline_opts){.size = sizeof(tb_pipeline_opts),
                                                 .on_element = dec_on_element, .ctx = &x,
                                                 .on_packet = tap ? pipe_tap : NULL});
        TB_FUZZ_CHECK(name, pl != NULL, "tb_pipeline_new failed");
        a = tb_pipeline_push(pl, data, cut, 0);
        b = tb_pipeline_push(pl, data + cut, len - cut, cut);
        c = tb_pipeline_finish(pl);
        TB_FUZZ_CHECK(name, a >= 0 && b >= 0 && c >= 1 && (size_t)(a + b + c) == x.elements,
                      "%s: returned %d, %d, %d for %zu elements", how, a, b, c, x.elements);
        TB_FUZZ_CHECK(name, tb_pipeline_bytes(pl) == len, "%s: %llu bytes of %zu", how,
                      (unsigned long long)tb_pipeline_bytes(pl), len);
        run_done(&x);
        tb_pipeline_free(pl);
    }
}

static int fuzz_decoder(const char *name, tb_protocol proto, const uint8_t *data, size_t len,
                        bool full)
{
    static tb_fuzz_vec ref = {.size = sizeof(tb_element)};
    static tb_fuzz_vec segs = {.size = sizeof(tb_element)};
    const tb_fuzz_objs *o;
    size_t cut;
    char how[64];
    xstate x;
    tb_health ha, hc;

    if (len < TB_FUZZ_CFG_BYTES)
        return TB_FUZZ_SKIP;
    if (len > TB_FUZZ_MAX_INPUT)
        len = TB_FUZZ_MAX_INPUT;
    o = tb_fuzz_objects(proto, data, true);
    data += TB_FUZZ_CFG_BYTES;
    len -= TB_FUZZ_CFG_BYTES;
    if (!full) {
        x = (xstate){.name = name, .cfg = &o->cfg, .dec = o->decoder, .how = "fused"};
        decode_fused(&x, o->parser, data, len, len);
        return 0;
    }

    /* The reference: the packet path through a new parser and decoder,
     * every range listed, every element printed and kept. */
    {
        tb_parser *p = tb_parser_new(&o->cfg);
        tb_decoder *d = tb_decoder_new(&o->cfg, tb_fuzz_image());

        TB_FUZZ_CHECK(name, p && d, "tb_parser_new/tb_decoder_new failed");
        ref.n = 0;
        tb_health_init(&ha);
        tb_health_bytes(&ha, len);
        tb_decoder_set_health(d, &ha);
        x = (xstate){.name = name, .cfg = &o->cfg, .dec = d, .print = true, .expand = true,
                     .rec = &ref, .how = "packet path", .health = &ha};
        decode(&x, p, data, len, len);
        tb_decoder_set_health(d, NULL);
        tb_parser_free(p);
        tb_decoder_free(d);
    }

    cut = tb_fuzz_split(data, len);
    snprintf(how, sizeof how, "packet path cut at %zu (after reset)", cut);
    x = (xstate){.name = name, .cfg = &o->cfg, .dec = o->decoder, .ref = &ref,
                 .ref_index = true, .how = how};
    decode(&x, o->parser, data, len, cut);

    tb_parser_reset(o->parser);
    tb_decoder_reset(o->decoder);
    snprintf(how, sizeof how, "fused path cut at %zu", cut);
    tb_health_init(&hc);
    tb_health_bytes(&hc, len);
    tb_decoder_set_health(o->decoder, &hc);
    x = (xstate){.name = name, .cfg = &o->cfg, .dec = o->decoder, .ref = &ref,
                 .ref_index = true, .how = how, .health = &hc};
    decode_fused(&x, o->parser, data, len, cut);
    tb_decoder_set_health(o->decoder, NULL);
    check_health(name, &o->cfg, &ha, &hc, data, len);

    tb_parser_reset(o->parser);
    tb_decoder_reset(o->decoder);
    segs.n = 0;
    x = (xstate){.name = name, .cfg = &o->cfg, .dec = o->decoder, .ref = &ref,
                 .rec = &segs, .how = "segments at their own indices"};
    decode_segments(&x, o->parser, data, len, false);

    tb_parser_reset(o->parser);
    tb_decoder_reset(o->decoder);
    x = (xstate){.name = name, .cfg = &o->cfg, .dec = o->decoder, .ref = &segs,
                 .ref_index = true, .how = "the same segments as spans"};
    decode_segments(&x, o->parser, data, len, true);

    decode_pipeline(name, o, &ref, data, len, cut);
    return 0;
}

int tb_fuzz_etmv3_decoder(const uint8_t *data, size_t len)
{
    return fuzz_decoder("etmv3_decoder", TB_PROTO_ETMV3, data, len, false);
}

int tb_fuzz_ptm_decoder(const uint8_t *data, size_t len)
{
    return fuzz_decoder("ptm_decoder", TB_PROTO_PTM, data, len, false);
}

int tb_fuzz_etmv3_decoder_full(const uint8_t *data, size_t len)
{
    return fuzz_decoder("etmv3_decoder_full", TB_PROTO_ETMV3, data, len, true);
}

int tb_fuzz_ptm_decoder_full(const uint8_t *data, size_t len)
{
    return fuzz_decoder("ptm_decoder_full", TB_PROTO_PTM, data, len, true);
}

#undef MAX_RANGE
#undef MAX_SEGS
