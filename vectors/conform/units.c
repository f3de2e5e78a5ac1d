/*
 * The vectors under a directory as units (conform.h): any directory of
 * snapshots with their expected decodes, whoever made them, so that new
 * vectors (another protocol, another core) need nothing here.
 */
#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "conform.h"
#include "tracebench/snapshot.h"
#include "tracebench/stream.h"
#include "tracebench/types.h"

static bool is_file(const char *path)
{
    struct stat st;

    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static bool is_vector(const char *dir)
{
    char p[TB_CONFORM_PATH + 16];

    snprintf(p, sizeof p, "%s/snapshot.ini", dir);
    return is_file(p);
}

/* A source's protocol when the library does not know its type (a newer
 * vector): the type's own name, lower-cased ("etm4.0"). */
static void proto_of_type(const char *type, char *out, size_t len)
{
    size_t k;

    if (!strncasecmp(type, "ETM3", 4) || !strncasecmp(type, "ETMv3", 5))
        snprintf(out, len, "etmv3");
    else if (!strncasecmp(type, "PTM", 3) || !strncasecmp(type, "PFT", 3))
        snprintf(out, len, "ptm");
    else if (!strncasecmp(type, "ETMv1", 5))
        snprintf(out, len, "etmv1");
    else if (!strncasecmp(type, "ETMv2", 5))
        snprintf(out, len, "etmv2");
    else {
        for (k = 0; type[k] && k + 1 < len; k++)
            out[k] = (char)tolower((unsigned char)type[k]);
        out[k] = '\0';
        if (!k)
            snprintf(out, len, "unknown");
    }
}

/* The core's dumps ("0x%08X:DIR/FILE" lines) into u->memory; every
 * dump of the snapshot when the source names no core. */
static void memory_of(const tb_snapshot *s, const tb_snap_source *src, tb_conform_unit *u)
{
    const tb_snap_device *core = src && src->core[0] ? tb_snapshot_device(s, src->core) : NULL;
    size_t used = 0;

    u->memory[0] = '\0';
    for (size_t d = 0; d < s->n_devices; d++) {
        const tb_snap_device *dev = &s->devices[d];

        if (core ? dev != core : strcmp(dev->cls, "core") != 0)
            continue;
        for (size_t k = 0; k < dev->n_dumps; k++) {
            int n = snprintf(u->memory + used, sizeof u->memory - used, "%s0x%08X:%s/%s",
                             used ? "\n" : "", (unsigned)dev->dumps[k].address, u->dir,
                             dev->dumps[k].file);

            if (n < 0 || (size_t)n >= sizeof u->memory - used) {
                u->memory[used] = '\0';
                return;
            }
            used += (size_t)n;
        }
    }
}

/* The source of trace ID id (< 0: the only one) of the loaded snapshot:
 * its protocol, trace ID and memory into u. */
static void describe(const tb_snapshot *s, int id, tb_conform_unit *u)
{
    const tb_snap_source *src = NULL;
    char err[256] = "";
    tb_config cfg;

    u->trace_id = id;
    for (size_t k = 0; k < s->n_sources && !src; k++) {
        const tb_snap_source *c = &s->sources[k];

        if (tb_snapshot_source_config(s, c, &cfg, err, sizeof err) >= 0) {
            if (id < 0 || cfg.trace_id == id) {
                src = c;
                snprintf(u->protocol, sizeof u->protocol, "%s", tb_protocol_name(cfg.protocol));
                u->trace_id = cfg.trace_id;
            }
        } else {
            /* A type the library does not decode: still a unit, named by
             * its type, its trace ID from its register when it has one. */
            const tb_snap_device *d = tb_snapshot_device(s, c->name);
            uint32_t tid = 0;
            int have = d ? tb_snap_device_reg(d, "ETMTRACEIDR", &tid) : -1;

            if (d && have < 0)
                have = tb_snap_device_reg(d, "TRCTRACEIDR", &tid);
            if (d && (id < 0 || (have >= 0 && (int)(tid & 0x7F) == id))) {
                src = c;
                proto_of_type(d->type, u->protocol, sizeof u->protocol);
                u->trace_id = have >= 0 ? (int)(tid & 0x7F) : id;
            }
        }
    }
    if (!src) {
        snprintf(u->load_error, sizeof u->load_error,
                 id < 0 ? "no trace source in its snapshot.ini"
                        : "no trace source with trace ID 0x%02x in its snapshot.ini", id);
        snprintf(u->protocol, sizeof u->protocol, "unknown");
    }
    memory_of(s, src, u);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The expected decodes of a vector: decode.addr, or decode-0xNN.addr per
 * source.  ids[] gets -1 for decode.addr.  Returns how many. */
static size_t expected_files(const char *dir, int *ids, size_t max)
{
    char p[TB_CONFORM_PATH + 32];
    DIR *d;
    struct dirent *e;
    size_t n = 0;

    snprintf(p, sizeof p, "%s/decode.addr", dir);
    if (is_file(p)) {
        ids[0] = -1;
        return 1;
    }
    d = opendir(dir);
    if (!d)
        return 0;
    while ((e = readdir(d)) && n < max) {
        unsigned id;
        char tail[8];

        if (sscanf(e->d_name, "decode-0x%2x.%7s", &id, tail) == 2 && !strcmp(tail, "addr") &&
            id <= 0x7F)
            ids[n++] = (int)id;
    }
    closedir(d);
    /* In ID order. */
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && ids[j - 1] > ids[j]; j--) {
            int t = ids[j];

            ids[j] = ids[j - 1];
            ids[j - 1] = t;
        }
    return n;
}

static int add_vector(const char *dir, const char *name, tb_conform_unit **v, size_t *n,
                      size_t *cap)
{
    int ids[32];
    size_t ne = expected_files(dir, ids, 32);
    tb_snapshot snap;
    char err[256] = "";
    bool loaded;

    memset(&snap, 0, sizeof snap);
    loaded = tb_snapshot_load_flags(&snap, dir, TB_SNAP_LOAD_DEFER_DUMPS, err, sizeof err) >= 0;
    for (size_t k = 0; k < (ne ? ne : 1); k++) {
        tb_conform_unit *u;

        if (*n == *cap) {
            size_t nc = *cap ? *cap * 2 : 64;
            tb_conform_unit *nv = realloc(*v, nc * sizeof *nv);

            if (!nv) {
                if (loaded)
                    tb_snapshot_fini(&snap);
                return TB_ERR_NOMEM;
            }
            *v = nv;
            *cap = nc;
        }
        u = &(*v)[(*n)++];
        memset(u, 0, sizeof *u);
        u->trace_id = -1;
        snprintf(u->vector, sizeof u->vector, "%s", name);
        snprintf(u->dir, sizeof u->dir, "%s", dir);
        snprintf(u->protocol, sizeof u->protocol, "unknown");
        u->n_sources = loaded ? (unsigned)snap.n_sources : 0;
        if (!ne) {
            snprintf(u->name, sizeof u->name, "%s", name);
            snprintf(u->load_error, sizeof u->load_error,
                     "no expected decode (decode.addr) in the vector");
            if (loaded)
                describe(&snap, -1, u);
            continue;
        }
        if (ids[k] < 0) {
            snprintf(u->name, sizeof u->name, "%s", name);
            snprintf(u->expect, sizeof u->expect, "%s/decode.addr", dir);
        } else {
            snprintf(u->name, sizeof u->name, "%s:0x%02x", name, (unsigned)ids[k]);
            snprintf(u->expect, sizeof u->expect, "%s/decode-0x%02x.addr", dir,
                     (unsigned)ids[k]);
        }
        if (!loaded) {
            snprintf(u->load_error, sizeof u->load_error, "%s", err);
            continue;
        }
        describe(&snap, ids[k], u);
    }
    if (loaded)
        tb_snapshot_fini(&snap);
    return 0;
}

int tb_conform_units(const char *root, tb_conform_unit **out, char *err, size_t errlen)
{
    tb_conform_unit *v = NULL;
    size_t n = 0, cap = 0, nd = 0, capd = 0;
    char **names = NULL;
    DIR *d;
    struct dirent *e;
    int r = 0;

    *out = NULL;
    if (is_vector(root)) {
        const char *base = strrchr(root, '/');
        char name[96];

        /* "DIR/" names its last component. */
        snprintf(name, sizeof name, "%s", base && base[1] ? base + 1 : root);
        r = add_vector(root, name, &v, &n, &cap);
        if (r < 0) {
            free(v);
            snprintf(err, errlen, "out of memory");
            return r;
        }
        *out = v;
        return (int)n;
    }
    d = opendir(root);
    if (!d) {
        snprintf(err, errlen, "%s: not a directory of vectors (cannot open it)", root);
        return TB_ERR_IO;
    }
    while ((e = readdir(d))) {
        char p[TB_CONFORM_PATH];

        if (e->d_name[0] == '.')
            continue;
        snprintf(p, sizeof p, "%s/%s", root, e->d_name);
        if (!is_vector(p))
            continue;
        if (nd == capd) {
            char **nn = realloc(names, (capd = capd ? capd * 2 : 128) * sizeof *nn);

            if (!nn) {
                r = TB_ERR_NOMEM;
                break;
            }
            names = nn;
        }
        if (!(names[nd] = strdup(e->d_name))) {
            r = TB_ERR_NOMEM;
            break;
        }
        nd++;
    }
    closedir(d);
    if (!r)
        qsort(names, nd, sizeof *names, by_name);
    for (size_t k = 0; !r && k < nd; k++) {
        char p[TB_CONFORM_PATH];

        snprintf(p, sizeof p, "%s/%s", root, names[k]);
        r = add_vector(p, names[k], &v, &n, &cap);
    }
    for (size_t k = 0; k < nd; k++)
        free(names[k]);
    free(names);
    if (r < 0) {
        free(v);
        snprintf(err, errlen, "out of memory");
        return r;
    }
    if (!n) {
        free(v);
        snprintf(err, errlen, "%s: no vectors there (no subdirectory with a snapshot.ini)",
                 root);
        return TB_ERR_NOT_FOUND;
    }
    *out = v;
    return (int)n;
}
