/*
 * Trace health (health.h): counts of what a parse and a decode showed,
 * and the likely cause when trace was lost.  Prints nothing; the CLI
 * turns the cause into a message naming the option to check.
 */
#include <stdlib.h>
#include <string.h>

#include "tracebench/frame.h"
#include "tracebench/health.h"
#include "tracebench/parser.h"
#include "../common/struct_size.h"

/* No A-sync in fewer bytes than this is no sign of a wrong
 * configuration: A-syncs come every 1024 bytes or so by default
 * (ETMSYNCFR), and a buffer may hold a source's last few bytes only. */
#define SUSPECT_NO_ASYNC_BYTES 2048u
/* Atoms with no address are normal after code the image lacks (ADDR_NACC
 * until the next address) or a trace start before any address; when they
 * are a fifth of the instructions decoded or more, and far more than
 * missing code explains, the packets are being misread: cycle-accurate
 * ETMv3 read without ETMCR[12] gave 43447 of them against 12835
 * instructions (TC2 0x10), and 347501 against 543763 (a run of
 * long_run, where 200000 ran); real captures decoded right give a few
 * dozen (TC2 0x13: 23 against 16 NACC). */
#define UNKNOWN_ATOMS_MIN 64u
#define UNKNOWN_PER_NACC 16u
#define INSNS_PER_UNKNOWN 4u

const char *tb_health_cause_name(tb_health_cause c)
{
    switch (c) {
    case TB_HEALTH_OK: return "ok";
    case TB_HEALTH_EMPTY: return "empty";
    case TB_HEALTH_NO_ASYNC: return "no-async";
    case TB_HEALTH_NO_ISYNC: return "no-isync";
    case TB_HEALTH_BAD_PACKETS: return "bad-packets";
    case TB_HEALTH_DECODE_ERRORS: return "decode-errors";
    case TB_HEALTH_NO_ADDRESS: return "no-address";
    }
    return "unknown";
}

void tb_health_init(tb_health *h)
{
    if (h)
        memset(h, 0, sizeof *h);
}

void tb_health_bytes(tb_health *h, uint64_t n)
{
    if (h)
        h->bytes += n;
}

void tb_health_packet(tb_health *h, const tb_packet *pkt)
{
    if (!h || !pkt)
        return;
    h->packets++;
    switch (pkt->kind) {
    case TB_PKT_NOTSYNC:
        h->unsynced_bytes += pkt->count;
        break;
    case TB_PKT_ASYNC:
        h->asyncs++;
        break;
    case TB_PKT_RESERVED:
    case TB_PKT_BAD_SEQUENCE:
    case TB_PKT_BAD_TRACEMODE:
        if (!h->bad_packets++)
            h->first_bad_index = pkt->index;
        h->last_bad_index = pkt->index;
        break;
    case TB_PKT_INCOMPLETE:
        h->truncated = true;
        break;
    default:
        break;
    }
}

void tb_health_element(tb_health *h, const tb_element *el)
{
    if (!h || !el)
        return;
    h->elements++;
    switch (el->kind) {
    case TB_ELEM_TRACE_ON:
        h->syncs++;
        break;
    case TB_ELEM_INSN_RANGE:
        h->insns += el->count;
        break;
    case TB_ELEM_ADDR_UNKNOWN:
        h->unknown_atoms++;
        break;
    case TB_ELEM_ADDR_NACC:
        h->nacc++;
        break;
    case TB_ELEM_NO_SYNC:
        /* A trace that ends inside a packet (an ETB stopped mid-packet)
         * loses only that packet's bytes, at the very end: no loss. */
        if (el->err == TB_ERR_TRUNCATED)
            break;
        if (el->reason != TB_GAP_BAD_PACKET && el->reason != TB_GAP_INCONSISTENT)
            break;
        if (!h->lost++) {
            h->first_lost_index = el->index;
            h->first_lost_reason = el->reason;
        }
        /* The decoder's NO_SYNC for a bad packet the parser reported
         * (fed first) is that packet; any other is the decoder's own. */
        if (!(h->bad_packets && el->index == h->last_bad_index))
            h->decode_errors++;
        break;
    default:
        break;
    }
}

void tb_health_diagnose(const tb_health *h, bool port, tb_health_diag *d)
{
    if (!d)
        return;
    memset(d, 0, sizeof *d);
    if (!h)
        return;
    if (!h->bytes) {
        d->cause = TB_HEALTH_EMPTY;
        return;
    }
    /* Nothing decoded: the parser never found an A-sync, or (with the
     * decoder's elements) the decoder never an address. */
    if (!port && h->packets && !h->asyncs) {
        d->cause = TB_HEALTH_NO_ASYNC;
        d->lost = true;
        d->count = h->bytes;
        d->config_suspect = h->bytes >= SUSPECT_NO_ASYNC_BYTES;
        return;
    }
    if (h->elements && !h->syncs && !h->insns) {
        d->cause = TB_HEALTH_NO_ISYNC;
        d->lost = true;
        d->count = h->bytes;
        d->config_suspect = h->bytes >= SUSPECT_NO_ASYNC_BYTES;
        return;
    }
    if (h->bad_packets) {
        d->cause = TB_HEALTH_BAD_PACKETS;
        d->lost = true;
        d->count = h->bad_packets;
        d->index = h->first_bad_index;
        d->config_suspect = h->bad_packets >= 2;
        return;
    }
    if (h->decode_errors) {
        d->cause = TB_HEALTH_DECODE_ERRORS;
        d->lost = true;
        d->count = h->decode_errors;
        d->index = h->first_lost_index;
        d->config_suspect = h->decode_errors >= 2;
        return;
    }
    if (h->unknown_atoms >= UNKNOWN_ATOMS_MIN && h->unknown_atoms * INSNS_PER_UNKNOWN >= h->insns &&
        h->unknown_atoms > UNKNOWN_PER_NACC * h->nacc) {
        d->cause = TB_HEALTH_NO_ADDRESS;
        d->lost = true;
        d->count = h->unknown_atoms;
        d->config_suspect = true;
        return;
    }
    d->cause = TB_HEALTH_OK;
}

/* ---- is it formatted? ---- */

typedef struct guess_ctx {
    tb_buffer_guess *g;
    const tb_config *cfg;
    uint64_t bytes[128];
    tb_parser *parser[128];
    tb_health health[TB_GUESS_MAX_IDS];
    unsigned slot[128];        /* ID -> health slot + 1, 0: none yet */
    unsigned n_slots;
    int err;
} guess_ctx;

static int count_packet(void *ctx, const tb_packet *pkt)
{
    tb_health_packet(ctx, pkt);
    return 0;
}

static int count_run(void *ctx, uint8_t id, uint64_t index, const uint8_t *data, size_t len)
{
    guess_ctx *c = ctx;

    id &= 0x7F;
    c->bytes[id] += len;
    if (!c->cfg || c->err)
        return 0;
    if (!c->slot[id]) {
        if (c->n_slots == TB_GUESS_MAX_IDS)
            return 0; /* too many sources to be a formatter's: decided below */
        c->parser[id] = tb_parser_new(c->cfg);
        if (!c->parser[id]) {
            c->err = TB_ERR_NOMEM;
            return 0;
        }
        c->slot[id] = ++c->n_slots;
    }
    /* Bad packets are counted, not fatal. */
    (void)tb_parser_push(c->parser[id], data, len, index, count_packet,
                         &c->health[c->slot[id] - 1]);
    return 0;
}

int tb_health_guess_buffer(const uint8_t *data, size_t len, const tb_config *cfg,
                           tb_buffer_guess *g)
{
    tb_deformatter *df;
    guess_ctx *c;
    size_t whole = len - len % TB_FRAME_SIZE;
    uint64_t errors = 0, last = 0, delivered = 0;
    unsigned n = 0;
    int rc = 0;
    tb_config own;

    if (!g || (!data && len))
        return TB_ERR_INVAL;
    /* cfg is optional; one given is read as this build's (a size 0 one
     * is refused rather than taken for a parse failure). */
    if (cfg && !(cfg = tb_config_take(&own, cfg, NULL, 0)))
        return TB_ERR_INVAL;
    memset(g, 0, sizeof *g);
    g->frames = whole / TB_FRAME_SIZE;
    if (!whole)
        return 0;
    c = calloc(1, sizeof *c);
    df = tb_deformatter_new(TB_FRAME_MEM_ALIGNED);
    if (!c || !df) {
        free(c);
        tb_deformatter_free(df);
        return TB_ERR_NOMEM;
    }
    c->g = g;
    c->cfg = cfg;
    /* Frame errors are counted, not fatal: the deformatter goes on. */
    (void)tb_deformatter_push(df, data, whole, 0, count_run, c);
    (void)tb_deformatter_finish(df, count_run, c);
    tb_deformatter_error_info(df, &errors, &last);
    tb_deformatter_free(df);
    g->frame_errors = errors;
    for (unsigned id = 0x01; id < 0x70; id++) {
        if (!c->bytes[id])
            continue;
        delivered += c->bytes[id];
        if (n < TB_GUESS_MAX_IDS) {
            g->ids[n] = (uint8_t)id;
            g->id_bytes[n] = c->bytes[id];
            if (c->slot[id]) {
                tb_health *h = &c->health[c->slot[id] - 1];

                (void)tb_parser_finish(c->parser[id], count_packet, h);
                g->id_asyncs[n] = h->asyncs;
                g->id_bad[n] = h->bad_packets;
                g->n_clean += h->asyncs && !h->bad_packets;
            }
        }
        n++;
    }
    for (unsigned id = 0; id < 128; id++)
        tb_parser_free(c->parser[id]);
    g->n_ids = n;
    rc = c->err;
    free(c);
    /* Formatter frames name a few sources and never a reserved ID; one
     * source's own bytes read as frames mostly name reserved IDs within
     * a few frames (every byte with bit 0 set in an even place is an ID
     * byte, and branch address bytes 0b1xxxxxx1 are 0x40-0x7F).  At least
     * 4 frames, most of the data under a valid ID (a run of atoms has no
     * ID byte at all), and with a configuration one ID whose bytes parse
     * cleanly. */
    g->formatted = g->frames >= 4 && !g->frame_errors && n >= 1 && n <= TB_GUESS_MAX_IDS &&
                   delivered * 2 >= (uint64_t)whole && (!cfg || g->n_clean >= 1);
    return rc;
}
