/*
 * Snapshot / INI reader harness.  The input is a small archive of files:
 *
 *     <snapshot.ini bytes>
 *     @@ NAME
 *     <bytes of NAME>
 *     @@ NAME2
 *     ...
 *
 * (a line "@@ NAME" starts a file; what comes before the first one is
 * snapshot.ini).  The files are written into a private temporary
 * directory and the snapshot is loaded, each source's configuration,
 * memory and buffer read, its byte stream read in two chunkings, and the
 * whole snapshot decoded, as the CLI does.
 *
 * Names are [A-Za-z0-9_.-] without a leading dot; an input containing
 * ".." is ignored so that no path the snapshot names can leave the
 * directory (the harness must not read the machine's files).
 *
 * Invariants: no crash or sanitizer report; every failure comes with a
 * one-line reason (snapshot.h); decoding ends with END exactly once.
 * snapshot (fast) loads the snapshot, reads its buffers and decodes it
 * as the CLI does (tb_decode_snapshot); snapshot_full also reads each
 * source's configuration and memory, its byte stream in two chunkings,
 * which must give the same bytes at the same indices (stream.h), and
 * decodes each source by its trace ID.
 *
 * The files of the last input are kept and overwritten (only those the
 * new input lacks are removed): fewer system calls per input.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz.h"
#include "tracebench/decoder.h"
#include "tracebench/stream.h"

#define H "snapshot"
#define MAX_FILES 16
#define MAX_NAME 64

static char tmpdir[256];
/* The files in tmpdir: snap_names[0..snap_n_names) (the last input's). */
static char snap_names[MAX_FILES + 1][MAX_NAME];
static unsigned snap_n_names;

static void cleanup_dir(void)
{
    DIR *d;
    struct dirent *e;
    char path[640];

    if (!tmpdir[0])
        return;
    d = opendir(tmpdir);
    if (!d)
        return;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof path, "%s/%s", tmpdir, e->d_name);
        unlink(path);
    }
    closedir(d);
    snap_n_names = 0;
}

static void remove_dir(void)
{
    cleanup_dir();
    if (tmpdir[0])
        rmdir(tmpdir);
}

static const char *work_dir(void)
{
    if (!tmpdir[0]) {
        const char *base = getenv("TB_FUZZ_TMPDIR");
        if (!base)
            base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
        snprintf(tmpdir, sizeof tmpdir, "%s/tbfuzz-snap-XXXXXX", base);
        if (!mkdtemp(tmpdir))
            tb_fuzz_fail(H, "cannot make a temporary directory in %s", base);
        atexit(remove_dir);
    }
    return tmpdir;
}

static bool good_name(const uint8_t *s, size_t n)
{
    size_t i;

    if (n == 0 || n >= MAX_NAME || s[0] == '.')
        return false;
    for (i = 0; i < n; i++) {
        uint8_t c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-'))
            return false;
    }
    return true;
}

/* The names this input writes, in order (a name may come twice: the
 * last one wins, as on disk). */
static char snap_wanted[MAX_FILES + 1][MAX_NAME];
static unsigned snap_n_wanted;

static void write_file(const char *dir, const char *name, const uint8_t *data,
                       size_t len)
{
    char path[640];
    FILE *f;

    snprintf(snap_wanted[snap_n_wanted++], MAX_NAME, "%s", name);
    snprintf(path, sizeof path, "%s/%s", dir, name);
    f = fopen(path, "wb");
    if (!f)
        tb_fuzz_fail(H, "cannot write %s", path);
    if (len && fwrite(data, 1, len, f) != len)
        tb_fuzz_fail(H, "short write to %s", path);
    fclose(f);
}

/* Finds "\n@@ " at or after `from`; returns its offset or len. */
static size_t next_sep(const uint8_t *d, size_t len, size_t from)
{
    size_t i;

    for (i = from; i + 4 <= len; i++)
        if (d[i] == '\n' && d[i + 1] == '@' && d[i + 2] == '@' && d[i + 3] == ' ')
            return i;
    return len;
}

static void unpack(const char *dir, const uint8_t *d, size_t len)
{
    size_t at, end;
    unsigned files = 0;

    snap_n_wanted = 0;
    /* snapshot.ini: up to the first separator (one at offset 0 counts). */
    if (len >= 3 && d[0] == '@' && d[1] == '@' && d[2] == ' ') {
        at = 0;
    } else {
        end = next_sep(d, len, 0);
        write_file(dir, "snapshot.ini", d, end);
        files++;
        at = end < len ? end + 1 : len;
    }
    while (at < len && files < MAX_FILES) {
        size_t name_at = at + 3, name_end = name_at;
        char name[MAX_NAME];

        while (name_end < len && d[name_end] != '\n')
            name_end++;
        end = next_sep(d, len, name_end);
        if (name_end < len && good_name(d + name_at, name_end - name_at)) {
            memcpy(name, d + name_at, name_end - name_at);
            name[name_end - name_at] = '\0';
            write_file(dir, name, d + name_end + 1,
                       end > name_end ? end - name_end - 1 : 0);
            files++;
        }
        at = end < len ? end + 1 : len;
    }
}

/* Removes the last input's files that this one did not write. */
static void remove_stale(const char *dir)
{
    char path[640];

    for (unsigned i = 0; i < snap_n_names; i++) {
        bool keep = false;

        for (unsigned k = 0; k < snap_n_wanted && !keep; k++)
            keep = strcmp(snap_names[i], snap_wanted[k]) == 0;
        if (!keep) {
            snprintf(path, sizeof path, "%s/%s", dir, snap_names[i]);
            unlink(path);
        }
    }
    for (unsigned k = 0; k < snap_n_wanted; k++)
        memcpy(snap_names[k], snap_wanted[k], MAX_NAME);
    snap_n_names = snap_n_wanted;
}

/* ---- checks on a loaded snapshot ---- */

static void check_err(int rc, const char *err, const char *what)
{
    TB_FUZZ_CHECK(H, rc >= 0 || rc == TB_ERR_NOMEM || err[0] != '\0',
                  "%s failed (%d, %s) without a reason", what, rc,
                  tb_err_str(rc));
    TB_FUZZ_CHECK(H, strchr(err, '\n') == NULL, "%s: reason is not one line",
                  what);
}

typedef struct sstate {
    uint64_t hash, bytes;
    bool have_next;
    uint64_t next;
} sstate;

static int snap_on_bytes(void *ctx, uint64_t index, const uint8_t *data, size_t len)
{
    sstate *s = ctx;
    size_t i;

    TB_FUZZ_CHECK(H, len > 0, "empty stream delivery");
    for (i = 0; i < len; i++) {
        uint8_t rec[9];
        uint64_t at = index + i;
        memcpy(rec, &at, 8);
        rec[8] = data[i];
        s->hash = tb_fuzz_hash(s->hash, rec, sizeof rec);
    }
    s->bytes += len;
    return 0;
}

typedef struct estate {
    size_t n;
    bool ended;
} estate;

static int snap_on_element(void *ctx, const tb_element *el)
{
    estate *s = ctx;

    TB_FUZZ_CHECK(H, !s->ended, "element after END");
    if (el->kind == TB_ELEM_END)
        s->ended = true;
    /* Bounded work: an element per instruction range at most; a tiny
     * snapshot cannot need millions. */
    TB_FUZZ_CHECK(H, ++s->n < 4000000, "runaway decode");
    return 0;
}

static void check_source(const tb_snapshot *s, const tb_snap_source *src,
                         const char *dir)
{
    char err[512] = "";
    tb_config cfg;
    tb_memimage *mem = NULL;
    sstate a = {.hash = TB_FUZZ_HASH_INIT}, b = {.hash = TB_FUZZ_HASH_INIT};
    tb_stream_opts small = {.size = sizeof small, .read_chunk = 7, .max_chunk = 3};
    int rc, rb;

    rc = tb_snapshot_source_config(s, src, &cfg, err, sizeof err);
    check_err(rc, err, "source_config");
    err[0] = '\0';
    rc = tb_snapshot_source_memory(s, src, &mem, err, sizeof err);
    check_err(rc, err, "source_memory");
    TB_FUZZ_CHECK(H, (rc >= 0) == (mem != NULL), "source_memory %d, image %p",
                  rc, (void *)mem);
    tb_memimage_free(mem);
    if (!src->buffer[0])
        return;
    err[0] = '\0';
    rc = tb_stream_source(s, src, NULL, snap_on_bytes, &a, err, sizeof err);
    check_err(rc, err, "stream_source");
    err[0] = '\0';
    rb = tb_stream_source(s, src, &small, snap_on_bytes, &b, err, sizeof err);
    check_err(rb, err, "stream_source (small chunks)");
    TB_FUZZ_CHECK(H, rc == rb, "stream_source returns %d whole, %d in small "
                  "chunks", rc, rb);
    if (rc == 0)
        TB_FUZZ_CHECK(H, a.hash == b.hash && a.bytes == b.bytes,
                      "stream of %s: %llu bytes whole, %llu in small chunks "
                      "(or other bytes/indices)", src->name,
                      (unsigned long long)a.bytes, (unsigned long long)b.bytes);
    if (rc == 0 && cfg.protocol != TB_PROTO_NONE) {
        estate e = {0};
        err[0] = '\0';
        rc = tb_decode_snapshot(dir, cfg.trace_id, snap_on_element, &e, err,
                                sizeof err);
        check_err(rc, err, "decode_snapshot");
        if (rc == 0)
            TB_FUZZ_CHECK(H, e.ended, "decode_snapshot returned 0 without END");
    }
}

static int fuzz_snapshot(const uint8_t *data, size_t len, bool full)
{
    const char *dir = work_dir();
    tb_snapshot snap;
    char err[512] = "";
    size_t i;
    int rc;

    if (len > TB_FUZZ_MAX_INPUT)
        len = TB_FUZZ_MAX_INPUT;
    for (i = 0; i + 1 < len; i++)
        if (data[i] == '.' && data[i + 1] == '.')
            return TB_FUZZ_SKIP;
    unpack(dir, data, len);
    remove_stale(dir);

    rc = tb_snapshot_load(&snap, dir, err, sizeof err);
    check_err(rc, err, "snapshot_load");
    if (rc < 0)
        return 0;
    for (i = 0; i < snap.n_buffers; i++) {
        uint8_t *buf = NULL;
        size_t n = 0;
        unsigned flags;
        err[0] = '\0';
        rc = tb_snapshot_read_buffer(&snap, &snap.buffers[i], &buf, &n, err,
                                     sizeof err);
        check_err(rc, err, "read_buffer");
        free(buf);
        (void)tb_snap_buffer_frame_flags(&snap.buffers[i], &flags);
    }
    for (i = 0; full && i < snap.n_sources && i < 4; i++)
        check_source(&snap, &snap.sources[i], dir);
    {
        estate e = {0};
        err[0] = '\0';
        rc = tb_decode_snapshot(dir, -1, snap_on_element, &e, err, sizeof err);
        check_err(rc, err, "decode_snapshot(-1)");
        if (rc == 0)
            TB_FUZZ_CHECK(H, e.ended, "decode_snapshot(-1) returned 0 without END");
    }
    tb_snapshot_fini(&snap);
    return 0;
}

TB_FUZZ_ENTRIES(snapshot)

#undef H
#undef MAX_FILES
#undef MAX_NAME
