/* The trace-port encoders (port_model.c, etmv1_encoder.c,
 * etmv2_encoder.c) behind tb_encoder's ETMv1 and ETMv2 protocols
 * (port_adapter.c).  Inside the library: users encode through
 * tb_encoder, which writes the capture; the tests and the fuzz seed maker
 * also take the samples themselves, the address sequences as they enter
 * the FIFO and the cycle count.  Declared by one macro a port, so that
 * the two sets cannot drift apart. */
#ifndef TB_ENCODER_PORT_ENCODERS_H
#define TB_ENCODER_PORT_ENCODERS_H

#include "tracebench/encoder.h"
#include "tracebench/etmv2.h"
#include "../common/port_size.h"

/* The port encoders' options (tb_etmv1_encoder_opts_init,
 * tb_etmv2_encoder_opts_init: both sizes and the defaults). */
typedef struct tb_etmv1_encoder_opts {
    /* sizeof (tb_etmv1_encoder_opts) as the caller was built, as
     * tb_etm_port_config's: taken first, the later fields read as 0. */
    size_t size;
    /* Reused: arch_minor (ETMv1.x), cycle_accurate, branch_broadcast
     * (ETMCR[8]), ctxid_bytes, sync_period (CYCLES, IHI0014Q 5.6.2; 0: no
     * periodic sync), trigger_at, fifo_depth (bytes; 0: 4096),
     * n_ranges/ranges (ViewInst).  The rest is ignored.  Held by value,
     * so its size fixes where the fields after it lie: base.size must be
     * sizeof (tb_encoder_opts) of this library's build, else
     * TB_ERR_INVAL, NULL. */
    tb_encoder_opts base;
    uint8_t port_width;      /* 4, 8, 16 */
    uint32_t vector_base;    /* see tb_etm_port_config */
    bool keep_idle;          /* keep TD cycles without CA (else dropped) */
} tb_etmv1_encoder_opts;

typedef struct tb_etmv2_encoder_opts {
    size_t size;             /* as tb_etmv1_encoder_opts' */
    tb_encoder_opts base;    /* as ETMv1's */
    uint8_t port_width;
    uint32_t vector_base;
    bool keep_idle;
    bool no_phantoms;        /* never fold branches (U18, etmv2.h) */
} tb_etmv2_encoder_opts;

/* The smallest taken: size, base and port width. */
#define TB_ETMV1_ENCODER_OPTS_SIZE_MIN \
    (offsetof(tb_etmv1_encoder_opts, port_width) + sizeof(uint8_t))
#define TB_ETMV2_ENCODER_OPTS_SIZE_MIN \
    (offsetof(tb_etmv2_encoder_opts, port_width) + sizeof(uint8_t))

/* Receives samples in cycle order; non-zero stops the encoder. */
typedef int (*tb_etmv1_sample_cb)(void *ctx, const tb_etmv1_sample *s, size_t n);

/* Port v's encoder:
 *   _opts_defaults   the defaults into o's first o->size bytes (ETMv1.3 or
 *                    ETMv2.0, 8-bit port, sync every 1024 cycles, FIFO
 *                    4096 bytes): 0 or TB_ERR_INVAL; _opts_init (below)
 *                    is the call to make
 *   _opts_from       into v (initialised) from the generic options
 *                    (port_width, vector_base, keep_idle and the reused
 *                    fields): 0, or TB_ERR_INVAL for a size refused or a
 *                    setting v has no room for
 *   _config          the port configuration the options give into c
 *                    (initialised); TB_ERR_CONFIG if invalid
 *   _new / _new_bytes  samples out through cb, or capture bytes (header,
 *                    then 4 bytes a sample) through sink; NULL on bad
 *                    options or no memory
 *   _set_packet_cb   each address sequence (BRANCH packet: address,
 *                    reason, context ID) as it enters the FIFO; index =
 *                    the sample index of its BE cycle
 *   _set_overflow_cb as tb_encoder_set_overflow_cb (encoder.h)
 *   _push            one record; errors are sticky
 *   _finish          ends the trace: drains the FIFO (again: harmless)
 *   _cycles          samples out */
#define TB_PORT_ENCODER_DECLARE(v)                                                         \
    int tb_##v##_encoder_opts_defaults(tb_##v##_encoder_opts *o);                        \
    static inline void tb_##v##_encoder_opts_init(tb_##v##_encoder_opts *o)              \
    {                                                                                    \
        memset(o, 0, sizeof *o);                                                         \
        o->size = sizeof *o;                                                             \
        o->base.size = sizeof o->base;                                                   \
        (void)tb_##v##_encoder_opts_defaults(o);                                         \
    }                                                                                    \
    int tb_##v##_encoder_opts_from(tb_##v##_encoder_opts *dst, const tb_encoder_opts *o); \
    int tb_##v##_encoder_config(const tb_##v##_encoder_opts *o, tb_##v##_config *c);     \
    typedef struct tb_##v##_encoder tb_##v##_encoder;                                    \
    tb_##v##_encoder *tb_##v##_encoder_new(const tb_##v##_encoder_opts *o,               \
                                           tb_etmv1_sample_cb cb, void *ctx);            \
    tb_##v##_encoder *tb_##v##_encoder_new_bytes(const tb_##v##_encoder_opts *o,         \
                                                 tb_trace_sink sink, void *ctx);         \
    void tb_##v##_encoder_free(tb_##v##_encoder *e);                                     \
    void tb_##v##_encoder_set_packet_cb(tb_##v##_encoder *e, tb_packet_cb cb, void *ctx); \
    void tb_##v##_encoder_set_overflow_cb(tb_##v##_encoder *e, tb_overflow_cb cb,        \
                                          void *ctx);                                    \
    int tb_##v##_encoder_push(tb_##v##_encoder *e, const tb_exec_record *r);             \
    int tb_##v##_encoder_finish(tb_##v##_encoder *e);                                    \
    const tb_encoder_stats *tb_##v##_encoder_get_stats(const tb_##v##_encoder *e);       \
    uint64_t tb_##v##_encoder_cycles(const tb_##v##_encoder *e)

TB_PORT_ENCODER_DECLARE(etmv1);
TB_PORT_ENCODER_DECLARE(etmv2);

/* tb_<v>_encoder_opts_take / _give (common/port_size.h): the nested
 * base must be this build's, as above. */
TB_PORT_SIZE_FNS(tb_etmv1_encoder_opts, TB_ETMV1_ENCODER_OPTS_SIZE_MIN,
                 own->base.size == sizeof own->base)
TB_PORT_SIZE_FNS(tb_etmv2_encoder_opts, TB_ETMV2_ENCODER_OPTS_SIZE_MIN,
                 own->base.size == sizeof own->base)


#endif /* TB_ENCODER_PORT_ENCODERS_H */
