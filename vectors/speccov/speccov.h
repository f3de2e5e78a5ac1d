/*
 * Spec coverage: which packet kinds and variants of ETMv3 (IHI0014Q
 * ch.7), PTM (IHI0035B ch.4), the ETMv1 trace port (IHI0014Q ch.5) and
 * the CoreSight formatter a set of trace snapshots exercises, and the
 * ETMv2 trace port (IHI0014Q ch.6).
 *
 * The catalogue (vectors/spec-coverage.tsv) lists every variant with its spec
 * section and whether the encoder can produce it.  The classifier tells
 * the variants of one packet (as the parser gives it), of one decoded
 * element (PTM return-stack hits need the image) and of one formatter
 * frame, from the bytes themselves: never from the encoder's options.
 * tb_speccov_count_dir() counts them over a directory of snapshots (the vectors).
 *
 * Tooling for the vectors (library tb_speccov), not part of libtracebench:
 * this header is private and not installed.  "Spec coverage" is not code
 * coverage (tracebench/codecov.h, `tracebench coverage`).
 */
#ifndef TB_SPECCOV_H
#define TB_SPECCOV_H

#include "tracebench/frame.h"
#include "tracebench/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A variant: an index below tb_speccov_variant_count(). */
typedef uint16_t tb_speccov_id;

/* Room for every variant: tb_speccov_variant_count() <= it. */
#define TB_SPECCOV_MAX 384

/* Variants the classifier knows, their stable names ("etmv3.phdr.fmt1",
 * "ptm.atom.ca.cont", "formatter.id_odd"...), and the reverse look-up
 * (TB_ERR_NOT_FOUND for an unknown name). */
unsigned tb_speccov_variant_count(void);
const char *tb_speccov_variant_name(tb_speccov_id v);
int tb_speccov_variant_find(const char *name);

/* The variants pkt exhibits (cfg: its source's configuration), written
 * to out (max entries).  Returns how many, 0 for packets that are not
 * trace (NOTSYNC, bad or incomplete packets), or TB_ERR_INVAL /
 * TB_ERR_NOSPACE. */
int tb_speccov_classify_packet(const tb_config *cfg, const tb_packet *pkt,
                                tb_speccov_id *out, size_t max);

/* The variants an element exhibits that the decoder produced while
 * decoding pkt: a PTM return-stack hit is an E atom on an indirect
 * waypoint, which only the image can tell (IHI0035B B.3.2).  Same
 * returns as tb_speccov_classify_packet(). */
int tb_speccov_classify_element(const tb_config *cfg, const tb_packet *pkt,
                                 const tb_element *el, tb_speccov_id *out,
                                 size_t max);

/* The formatter variants of one 16-byte frame (CoreSight formatter
 * frames: the CoreSight Architecture Specification, IHI0029).
 * *cur_id is the ID in force before it (0xFF: none yet) and is updated.
 * Same returns as tb_speccov_classify_packet(). */
int tb_speccov_classify_frame(const uint8_t frame[TB_FRAME_SIZE],
                               unsigned *cur_id, tb_speccov_id *out,
                               size_t max);

/* Occurrences of each variant over a set of snapshots. */
typedef struct tb_speccov_tally {
    uint64_t count[TB_SPECCOV_MAX];   /* occurrences */
    uint32_t vectors[TB_SPECCOV_MAX]; /* snapshots with at least one */
    uint32_t n_vectors;                /* snapshots counted */
    uint64_t packets;                  /* packets classified */
    uint64_t bad;                      /* bad or incomplete packets seen */
} tb_speccov_tally;

/* Adds the formatter variants of a formatted buffer (deformatter flags
 * as tb_snap_buffer_frame_flags() gives them) to counts[TB_SPECCOV_MAX]:
 * its frames (FSYNCs and HSYNCs between them in sync mode) and, from the
 * deformatter's runs, whether several sources share it.  Returns 0 or
 * TB_ERR_*. */
int tb_speccov_count_buffer(const uint8_t *data, size_t len, unsigned flags,
                             uint64_t *counts);

/* The port variants of an ETMv1 capture file (docs/etmv1.md 2): its
 * width (once), each cycle's PIPESTAT code (a TR's and the status it
 * replaced), TRACESYNC, TD forms, and the APO of the two cycles after
 * each BE/BD (IHI0014Q 5.1, 5.4, 5.6.1, 5.10), added to
 * counts[TB_SPECCOV_MAX].  Returns 0, TB_ERR_TRUNCATED (no whole
 * header), TB_ERR_FORMAT / TB_ERR_CONFIG (bad header or sample). */
int tb_speccov_count_etmv1_capture(const uint8_t *data, size_t len,
                                    uint64_t *counts);

/* The port variants of an ETMv2 capture file (docs/etmv2.md 2): its
 * width (once), each cycle's PIPESTAT code (a TR's and the status it
 * replaced; a phantom form as its own variant), TD forms, and a 4-bit
 * port's TFO value over two cycles, with a TR between them (IHI0014Q
 * 6.1, 6.1.2, 6.1.6, 6.1.7; the codes and the split are the unverified
 * U1 and U4 of docs/etmv2.md 6).  Same returns as
 * tb_speccov_count_etmv1_capture(), and TB_ERR_FORMAT for TRACESYNC
 * set. */
int tb_speccov_count_etmv2_capture(const uint8_t *data, size_t len,
                                    uint64_t *counts);

/* Counts one snapshot directory into t: every ETMv3/PTM/ETMv1/ETMv2
 * source's packets (parsed with the project's parser), the port variants
 * of each ETMv1 and ETMv2 capture, PTM return-stack hits (decoded against the source's
 * memory when ETMCR[29] is set), and the formatter variants of each
 * formatted buffer.  Returns 0 or TB_ERR_* with a
 * reason in err. */
int tb_speccov_count_snapshot(const char *dir, tb_speccov_tally *t,
                               char *err, size_t errlen);

/* tb_speccov_count_snapshot() for every subdirectory of root holding a
 * snapshot.ini, in name order.  Returns how many, or TB_ERR_*. */
int tb_speccov_count_dir(const char *root, tb_speccov_tally *t, char *err,
                          size_t errlen);

/* ---- the catalogue (vectors/spec-coverage.tsv) ---- */

/* One row: tab-separated id, protocol (etmv3 | ptm | etmv1 | etmv2 |
 * formatter), spec section, description, status ("reachable", or
 * "unreachable: REASON (issue N)" / "(issue N, in progress)" / "(no
 * issue yet)"). */
typedef struct tb_speccov_row {
    char id[48];
    char protocol[16];
    char section[96];
    char desc[256];
    char status[512];
    tb_speccov_id var;            /* the classifier's variant */
} tb_speccov_row;

typedef struct tb_speccov_catalogue {
    size_t n;
    tb_speccov_row *rows;
} tb_speccov_catalogue;

/* Reads a catalogue; lines starting with '#' are comments, the first
 * other line is the header.  TB_ERR_FORMAT (reason in err) for a bad
 * row, a duplicate, a status of neither form, a row the classifier does
 * not know, or a variant the classifier knows with no row. */
int tb_speccov_catalogue_load(tb_speccov_catalogue *c, const char *path,
                               char *err, size_t errlen);
void tb_speccov_catalogue_free(tb_speccov_catalogue *c);
bool tb_speccov_row_reachable(const tb_speccov_row *r);

/* The catalogue with t's counts as a Markdown table (variant,
 * description, spec section, count, vectors, status; a reachable variant
 * at zero is marked), for the vectors README; like
 * snprintf: writes at most len bytes (NUL included) and returns the
 * length the whole table needs. */
int tb_speccov_format_markdown(const tb_speccov_catalogue *c,
                                const tb_speccov_tally *t, char *buf,
                                size_t len);

#ifdef __cplusplus
}
#endif

#endif
