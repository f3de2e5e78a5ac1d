/* tb_writer: one front for the per-protocol packet writers. */
#include <stdlib.h>

#include "tracebench/writer.h"
#include "writers.h"
#include "../common/struct_size.h"

struct tb_writer {
    tb_protocol protocol;
    union {
        tb_etmv3_writer *etmv3;
        tb_ptm_writer *ptm;
    } u;
};

tb_writer *tb_writer_new(const tb_config *cfg)
{
    tb_writer *w;
    tb_config own; /* the caller's, as this build's (struct_size.h) */

    cfg = tb_config_take(&own, cfg, NULL, 0);
    if (!cfg || (cfg->protocol != TB_PROTO_ETMV3 && cfg->protocol != TB_PROTO_PTM))
        return NULL;
    w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    w->protocol = cfg->protocol;
    if (w->protocol == TB_PROTO_ETMV3)
        w->u.etmv3 = tb_etmv3_writer_new(cfg);
    else
        w->u.ptm = tb_ptm_writer_new(cfg);
    if (!w->u.etmv3 && !w->u.ptm) {
        free(w);
        return NULL;
    }
    return w;
}

void tb_writer_free(tb_writer *w)
{
    if (!w)
        return;
    if (w->protocol == TB_PROTO_ETMV3)
        tb_etmv3_writer_free(w->u.etmv3);
    else
        tb_ptm_writer_free(w->u.ptm);
    free(w);
}

int tb_writer_write(tb_writer *w, const tb_packet *pkt, uint8_t *out,
                    size_t cap)
{
    if (!w || !pkt || !out)
        return TB_ERR_INVAL;
    if (w->protocol == TB_PROTO_ETMV3)
        return tb_etmv3_writer_write(w->u.etmv3, pkt, out, cap);
    return tb_ptm_writer_write(w->u.ptm, pkt, out, cap);
}

void tb_writer_reset(tb_writer *w)
{
    if (!w)
        return;
    if (w->protocol == TB_PROTO_ETMV3)
        tb_etmv3_writer_reset(w->u.etmv3);
    else
        tb_ptm_writer_reset(w->u.ptm);
}
