/* An ETMv1 port capture (docs/etmv1.md 2) as a VCD (IEEE 1364 value
 * change dump) that a waveform viewer opens: docs/etmv1.md 8.
 *
 * Layout: timescale 1 ns, one time unit per half TRACECLK period.  Sample
 * k of the capture is cycle k: TRACECLK falls at time 2k, and PIPESTAT,
 * TRACESYNC and TRACEPKT take sample k's values there; TRACECLK rises at
 * 2k+1, in the middle of the stable values, where a trace port analyser
 * samples them.  After the last sample TRACECLK falls once more (2n) so
 * that the last cycle has its full width.  Only changed values are
 * written.  Cycles the capture dropped (idle TD cycles, 5.10) are not
 * put back: time counts capture samples, not core cycles.
 *
 * Streaming: capture bytes in any chunking, the text out through the
 * sink in pieces of at most 4 KB; memory is flat. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracebench/etmv2.h"

#define VCD_BUF 4096

struct tb_etmv1_vcd {
    tb_trace_sink sink;
    void *ctx;
    int err;                  /* sticky */
    bool finished;
    uint8_t part[TB_ETMV1_HDR_BYTES]; /* a header or sample not complete yet */
    size_t npart;
    bool have_header;
    unsigned ps_bits, width; /* PIPESTAT width (3 ETMv1, 4 ETMv2), TRACEPKT width */
    uint64_t samples;         /* samples written */
    tb_etmv1_sample last;
    size_t nout;
    char out[VCD_BUF];
};

static void flush(tb_etmv1_vcd *v)
{
    if (!v->err && v->nout && v->sink(v->ctx, (const uint8_t *)v->out, v->nout) != 0)
        v->err = TB_ERR_STOPPED;
    v->nout = 0;
}

static void put(tb_etmv1_vcd *v, const char *s, size_t n)
{
    while (n) {
        size_t k = VCD_BUF - v->nout < n ? VCD_BUF - v->nout : n;

        memcpy(v->out + v->nout, s, k);
        v->nout += k;
        s += k;
        n -= k;
        if (v->nout == VCD_BUF)
            flush(v);
    }
}

static void puts_(tb_etmv1_vcd *v, const char *s)
{
    put(v, s, strlen(s));
}

/* "b<bits> <id>\n", all `bits` digits (leading zeros kept: legible). */
static void put_vec(tb_etmv1_vcd *v, unsigned value, unsigned bits, char id)
{
    char b[32];
    size_t n = 0;

    b[n++] = 'b';
    for (unsigned i = bits; i-- > 0;)
        b[n++] = (char)('0' + ((value >> i) & 1));
    b[n++] = ' ';
    b[n++] = id;
    b[n++] = '\n';
    put(v, b, n);
}

static void put_time(tb_etmv1_vcd *v, uint64_t t)
{
    char b[32];
    int n = snprintf(b, sizeof b, "#%llu\n", (unsigned long long)t);

    put(v, b, (size_t)n);
}

/* Identifiers: ! TRACECLK, " PIPESTAT, # TRACESYNC, $ TRACEPKT. */
static int header(tb_etmv1_vcd *v, const uint8_t h[TB_ETMV1_HDR_BYTES])
{
    char b[512];
    unsigned etmcr = (unsigned)h[12] | (unsigned)h[13] << 8 | (unsigned)h[14] << 16 |
                     (unsigned)h[15] << 24;

    if (h[9] == 1) {
        if (tb_etmv1_capture_parse_header(h, NULL) < 0)
            return TB_ERR_FORMAT;
        v->ps_bits = 3;
    } else if (h[9] == 2) {
        if (tb_etmv2_capture_parse_header(h, NULL) < 0)
            return TB_ERR_FORMAT;
        v->ps_bits = 4; /* ETMv2: 4-bit PIPESTAT (docs/etmv2.md 2) */
    } else {
        return TB_ERR_FORMAT;
    }
    v->width = h[11];
    snprintf(b, sizeof b,
             "$version tracebench $end\n"
             "$comment ETMv%u.%u trace port, %u-bit TRACEPKT, ETMCR 0x%08x; one capture "
             "sample per TRACECLK cycle, values change on the falling edge, TRACECLK "
             "rises mid-cycle; cycles dropped from the capture are not shown $end\n"
             "$timescale 1ns $end\n"
             "$scope module etm_port $end\n"
             "$var wire 1 ! TRACECLK $end\n"
             "$var wire %u \" PIPESTAT [%u:0] $end\n"
             "$var wire 1 # TRACESYNC $end\n"
             "$var wire %u $ TRACEPKT [%u:0] $end\n"
             "$upscope $end\n"
             "$enddefinitions $end\n",
             (unsigned)h[9], (unsigned)h[10], v->width, etmcr, v->ps_bits, v->ps_bits - 1,
             v->width, v->width - 1);
    puts_(v, b);
    v->have_header = true;
    return 0;
}

static int sample(tb_etmv1_vcd *v, const uint8_t in[4])
{
    uint32_t w = (uint32_t)in[0] | (uint32_t)in[1] << 8 | (uint32_t)in[2] << 16 |
                 (uint32_t)in[3] << 24;
    uint32_t reserved = 0xFF0000E0u | (uint32_t)(0xFFFFu << v->width & 0xFFFFu) << 8 |
                        (v->ps_bits == 3 ? 8u : 0u);
    tb_etmv1_sample s;

    if (w & reserved)
        return TB_ERR_FORMAT;
    s.pipestat = (uint8_t)(w & 15);
    s.tracesync = (uint8_t)((w >> 4) & 1);
    s.tracepkt = (uint16_t)(w >> 8);
    if (v->samples == 0) {
        puts_(v, "#0\n$dumpvars\n0!\n");
        put_vec(v, s.pipestat, v->ps_bits, '"');
        puts_(v, s.tracesync ? "1#\n" : "0#\n");
        put_vec(v, s.tracepkt, v->width, '$');
        puts_(v, "$end\n");
    } else {
        put_time(v, 2 * v->samples);
        puts_(v, "0!\n");
        if (s.pipestat != v->last.pipestat)
            put_vec(v, s.pipestat, v->ps_bits, '"');
        if (s.tracesync != v->last.tracesync)
            puts_(v, s.tracesync ? "1#\n" : "0#\n");
        if (s.tracepkt != v->last.tracepkt)
            put_vec(v, s.tracepkt, v->width, '$');
    }
    put_time(v, 2 * v->samples + 1);
    puts_(v, "1!\n");
    v->last = s;
    v->samples++;
    return 0;
}

tb_etmv1_vcd *tb_etmv1_vcd_new(tb_trace_sink sink, void *ctx)
{
    tb_etmv1_vcd *v;

    if (!sink || !(v = calloc(1, sizeof *v)))
        return NULL;
    v->sink = sink;
    v->ctx = ctx;
    return v;
}

void tb_etmv1_vcd_free(tb_etmv1_vcd *v)
{
    free(v);
}

int tb_etmv1_vcd_push(tb_etmv1_vcd *v, const uint8_t *data, size_t len)
{
    if (!v || (!data && len))
        return TB_ERR_INVAL;
    if (v->err)
        return v->err;
    if (v->finished)
        return TB_ERR_STATE;
    while (len && !v->err) {
        size_t need = v->have_header ? TB_ETMV1_SAMPLE_BYTES : TB_ETMV1_HDR_BYTES;
        const uint8_t *rec;
        int rc;

        if (v->npart == 0 && len >= need) {
            rec = data; /* whole record in place: no copy */
        } else {
            size_t k = need - v->npart < len ? need - v->npart : len;

            memcpy(v->part + v->npart, data, k);
            v->npart += k;
            data += k;
            len -= k;
            if (v->npart < need)
                break;
            rec = v->part;
            v->npart = 0;
            rc = v->have_header ? sample(v, rec) : header(v, rec);
            if (rc < 0)
                v->err = rc;
            continue;
        }
        rc = v->have_header ? sample(v, rec) : header(v, rec);
        if (rc < 0)
            v->err = rc;
        data += need;
        len -= need;
    }
    return v->err;
}

int tb_etmv1_vcd_finish(tb_etmv1_vcd *v)
{
    if (!v)
        return TB_ERR_INVAL;
    if (v->err)
        return v->err;
    if (v->finished)
        return 0;
    if (!v->have_header || v->npart)
        return v->err = TB_ERR_TRUNCATED;
    if (v->samples == 0) {
        /* No cycle at all: the clock low, the rest unknown. */
        puts_(v, "#0\n$dumpvars\n0!\nbx \"\nx#\nbx $\n$end\n");
    } else {
        put_time(v, 2 * v->samples);
        puts_(v, "0!\n");
    }
    flush(v);
    v->finished = true;
    return v->err;
}

uint64_t tb_etmv1_vcd_samples(const tb_etmv1_vcd *v)
{
    return v ? v->samples : 0;
}

static int file_sink(void *ctx, const uint8_t *data, size_t len)
{
    return fwrite(data, 1, len, ctx) == len ? 0 : 1;
}

int tb_etmv1_vcd_file(const char *capture, const char *vcd, char *err, size_t errlen)
{
    FILE *in = NULL, *out = NULL;
    tb_etmv1_vcd *v = NULL;
    uint8_t buf[65536];
    size_t n;
    int rc = 0;

    if (err && errlen)
        err[0] = '\0';
    if (!capture || !vcd)
        return TB_ERR_INVAL;
    if (!(in = fopen(capture, "rb"))) {
        if (err)
            snprintf(err, errlen, "%s: cannot read", capture);
        return TB_ERR_IO;
    }
    if (!(out = fopen(vcd, "w"))) {
        if (err)
            snprintf(err, errlen, "%s: cannot write", vcd);
        fclose(in);
        return TB_ERR_IO;
    }
    if (!(v = tb_etmv1_vcd_new(file_sink, out))) {
        rc = TB_ERR_NOMEM;
        goto done;
    }
    while ((n = fread(buf, 1, sizeof buf, in)) > 0)
        if ((rc = tb_etmv1_vcd_push(v, buf, n)) < 0)
            break;
    if (rc >= 0 && ferror(in)) {
        rc = TB_ERR_IO;
        if (err)
            snprintf(err, errlen, "%s: read error", capture);
        goto done;
    }
    if (rc >= 0)
        rc = tb_etmv1_vcd_finish(v);
    if (rc == TB_ERR_STOPPED) {
        rc = TB_ERR_IO;
        if (err)
            snprintf(err, errlen, "%s: write failed", vcd);
    } else if (rc < 0 && err) {
        snprintf(err, errlen, "%s: %s", capture,
                 rc == TB_ERR_TRUNCATED ? "capture cut short (header or last sample)"
                 : !v->have_header      ? "not an ETMv1 port capture (header)"
                                        : "reserved bits set in a sample");
    }
done:
    tb_etmv1_vcd_free(v);
    fclose(in);
    if (fclose(out) && rc >= 0) {
        rc = TB_ERR_IO;
        if (err)
            snprintf(err, errlen, "%s: write failed", vcd);
    }
    return rc;
}
