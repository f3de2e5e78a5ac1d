/*
 * Snapshot directory reader (protocol-notes 5.2): snapshot.ini names the
 * device files and trace.ini; device files give names, classes, types,
 * registers and memory dumps; trace.ini gives the buffers and which
 * source writes to which buffer and which core a source traces.
 *
 * Every error is one line naming the file (and line where there is one).
 * All tables have fixed limits (snapshot.h); going past one is
 * TB_ERR_LIMIT, never a silent truncation.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "ini.h"
#include "memimage_own.h"
#include "struct_size.h"
#include "tracebench/frame.h"
#include "tracebench/snapshot.h"

/* Largest buffer or dump read into memory (the image is 4 GiB at most;
 * a trace buffer beyond this is not an ETB dump). */
#define MAX_FILE_BYTES ((uint64_t)1 << 32)

/* ------------------------------------------------------------------ */
/* Small helpers. */

static int copy_str(char *dst, size_t size, const char *src)
{
    size_t n = strlen(src);

    if (n >= size)
        return TB_ERR_LIMIT;
    memcpy(dst, src, n + 1);
    return 0;
}

/* Numbers as OpenCSD reads them: C base auto-detection (0x.. hex, 0..
 * octal, else decimal).  Signs, trailing text and overflow are errors. */
static int parse_u64(const char *s, uint64_t *out)
{
    char *end;
    unsigned long long v;

    while (*s == ' ' || *s == '\t')
        s++;
    if (!isdigit((unsigned char)*s))
        return TB_ERR_FORMAT;
    errno = 0;
    v = strtoull(s, &end, 0);
    if (errno == ERANGE)
        return TB_ERR_FORMAT;
    while (*end == ' ' || *end == '\t')
        end++;
    if (*end != '\0')
        return TB_ERR_FORMAT;
    *out = v;
    return 0;
}

static int join_path(char *out, size_t size, const char *dir, const char *file)
{
    int n = snprintf(out, size, "%s/%s", dir, file);

    return (n < 0 || (size_t)n >= size) ? TB_ERR_LIMIT : 0;
}

/* ------------------------------------------------------------------ */
/* Device files. */

enum dev_section { SEC_OTHER, SEC_DEVICE, SEC_REGS, SEC_DUMP };

typedef struct dev_parse {
    tb_snap_device *dev;
    const char *path;
    enum dev_section sec;
    unsigned dump_line[TB_SNAP_MAX_DUMPS];
    bool dump_has_file[TB_SNAP_MAX_DUMPS];
    bool dump_has_addr[TB_SNAP_MAX_DUMPS];
    bool defer_dumps;
    /* The registers seen, by name: open addressing, 1 + index into
     * dev->regs (0: empty), so that a core file's ~300 registers are
     * checked for repeats in one probe each, not against all before. */
    uint16_t reg_slot[2 * TB_SNAP_MAX_REGS];
} dev_parse;

/* The slot of register name in p->reg_slot: where it is, or the empty
 * slot where it goes (the table is never full: twice the registers). */
static size_t reg_slot(const dev_parse *p, const char *name)
{
    const size_t n = sizeof p->reg_slot / sizeof p->reg_slot[0];
    uint32_t h = 2166136261u; /* FNV-1a */
    size_t i;

    for (const char *c = name; *c; c++)
        h = (h ^ (uint8_t)*c) * 16777619u;
    for (i = h % n; p->reg_slot[i]; i = (i + 1) % n)
        if (strcmp(p->dev->regs[p->reg_slot[i] - 1].name, name) == 0)
            break;
    return i;
}

static int dev_cb(void *ctx, const char *section, const char *key,
                  const char *value, unsigned line, char *err, size_t errlen)
{
    dev_parse *p = ctx;
    tb_snap_device *d = p->dev;
    uint64_t v;

    if (!key) {
        if (strcasecmp(section, "device") == 0) {
            p->sec = SEC_DEVICE;
        } else if (strcasecmp(section, "regs") == 0) {
            p->sec = SEC_REGS;
        } else if (strncasecmp(section, "dump", 4) == 0) {
            /* [dump], [dump1], [dump2], ...: each a memory region. */
            if (d->n_dumps == TB_SNAP_MAX_DUMPS) {
                snprintf(err, errlen, "%s:%u: more than %d [dump] sections",
                         p->path, line, TB_SNAP_MAX_DUMPS);
                return TB_ERR_LIMIT;
            }
            p->dump_line[d->n_dumps] = line;
            memset(&d->dumps[d->n_dumps], 0, sizeof d->dumps[0]);
            d->n_dumps++;
            p->sec = SEC_DUMP;
        } else {
            p->sec = SEC_OTHER;
        }
        return 0;
    }

    switch (p->sec) {
    case SEC_DEVICE: {
        char *field = NULL;
        if (strcasecmp(key, "name") == 0)
            field = d->name;
        else if (strcasecmp(key, "class") == 0)
            field = d->cls;
        else if (strcasecmp(key, "type") == 0)
            field = d->type;
        if (field && copy_str(field, TB_SNAP_MAX_NAME, value) < 0) {
            snprintf(err, errlen, "%s:%u: %s longer than %d characters",
                     p->path, line, key, TB_SNAP_MAX_NAME - 1);
            return TB_ERR_LIMIT;
        }
        return 0;
    }
    case SEC_REGS: {
        /* NAME(extra)=value: only the part before '(' names it. */
        char name[sizeof d->regs[0].name];
        size_t n = strcspn(key, "("), i;
        while (n > 0 && (key[n - 1] == ' ' || key[n - 1] == '\t'))
            n--;
        if (n == 0 || n >= sizeof name) {
            snprintf(err, errlen, "%s:%u: register name '%.40s' %s", p->path,
                     line, key, n ? "too long" : "empty");
            return n ? TB_ERR_LIMIT : TB_ERR_FORMAT;
        }
        for (i = 0; i < n; i++)
            name[i] = (char)toupper((unsigned char)key[i]);
        name[n] = '\0';
        if (parse_u64(value, &v) < 0) {
            snprintf(err, errlen, "%s:%u: register %s: '%.40s' is not a "
                     "64-bit number", p->path, line, name, value);
            return TB_ERR_FORMAT;
        }
        i = reg_slot(p, name);
        if (p->reg_slot[i]) {
            snprintf(err, errlen, "%s:%u: register %s given twice",
                     p->path, line, name);
            return TB_ERR_FORMAT;
        }
        if (d->n_regs == TB_SNAP_MAX_REGS) {
            snprintf(err, errlen, "%s:%u: more than %d registers", p->path,
                     line, TB_SNAP_MAX_REGS);
            return TB_ERR_LIMIT;
        }
        memcpy(d->regs[d->n_regs].name, name, n + 1);
        d->regs[d->n_regs].value = (uint32_t)v;
        d->regs[d->n_regs].value64 = v;
        d->n_regs++;
        p->reg_slot[i] = (uint16_t)d->n_regs;
        return 0;
    }
    case SEC_DUMP: {
        size_t k = d->n_dumps - 1;
        tb_snap_dump *dp = &d->dumps[k];
        if (strcasecmp(key, "file") == 0) {
            if (copy_str(dp->file, sizeof dp->file, value) < 0 || !*value) {
                snprintf(err, errlen, "%s:%u: dump file name %s", p->path,
                         line, *value ? "too long" : "empty");
                return *value ? TB_ERR_LIMIT : TB_ERR_FORMAT;
            }
            p->dump_has_file[k] = true;
        } else if (strcasecmp(key, "space") == 0) {
            if (copy_str(dp->space, sizeof dp->space, value) < 0) {
                snprintf(err, errlen, "%s:%u: unknown memory space '%.20s'",
                         p->path, line, value);
                return TB_ERR_FORMAT;
            }
        } else if (strcasecmp(key, "address") == 0 ||
                   strcasecmp(key, "length") == 0 ||
                   strcasecmp(key, "offset") == 0) {
            if (parse_u64(value, &v) < 0) {
                snprintf(err, errlen, "%s:%u: %s: '%.40s' is not a number",
                         p->path, line, key, value);
                return TB_ERR_FORMAT;
            }
            if (strcasecmp(key, "address") == 0) {
                /* A dump past 32 bits (an AArch64 core's) is refused here,
                 * or with TB_SNAP_LOAD_DEFER_DUMPS only when its core's
                 * image is built (tb_snapshot_source_memory). */
                if (v > 0xFFFFFFFFull && !p->defer_dumps) {
                    snprintf(err, errlen, "%s:%u: dump address 0x%llx is "
                             "beyond 32 bits", p->path, line,
                             (unsigned long long)v);
                    return TB_ERR_FORMAT;
                }
                dp->address = (uint32_t)v;
                dp->address64 = v;
                p->dump_has_addr[k] = true;
            } else if (strcasecmp(key, "length") == 0) {
                dp->length = v;
            } else {
                dp->offset = v;
            }
        }
        return 0;
    }
    case SEC_OTHER:
        break;
    }
    return 0;
}

/* Room in s->devices for n devices: 16, then doubling, so that a
 * snapshot's few devices never move (each is 34 KiB, mostly room for
 * registers; untouched room costs no page). */
static size_t devices_cap(size_t n)
{
    size_t c = 16;

    while (c < n)
        c *= 2;
    return c;
}

static int load_device(tb_snapshot *s, const char *file, const char *from,
                       unsigned from_line, unsigned flags, char *err,
                       size_t errlen)
{
    char path[1024];
    tb_snap_device *d;
    dev_parse *p;
    size_t i;
    int rc;

    if (s->n_devices == TB_SNAP_MAX_DEVICES) {
        snprintf(err, errlen, "%s:%u: more than %d devices", from, from_line,
                 TB_SNAP_MAX_DEVICES);
        return TB_ERR_LIMIT;
    }
    if (join_path(path, sizeof path, s->dir, file) < 0) {
        snprintf(err, errlen, "%s:%u: device file path too long", from,
                 from_line);
        return TB_ERR_LIMIT;
    }
    if (!s->devices || s->n_devices == devices_cap(s->n_devices)) {
        d = realloc(s->devices, devices_cap(s->n_devices + 1) * sizeof *d);
        if (!d)
            return TB_ERR_NOMEM;
        s->devices = d;
    }
    d = &s->devices[s->n_devices];
    /* The names and counts; regs[] and dumps[] entries are written as
     * they are found (a device is 34 KiB, mostly room for them: zeroing
     * it all touched ~9 pages per device on every load). */
    memset(d, 0, offsetof(tb_snap_device, regs));
    d->n_dumps = 0;
    if (copy_str(d->ini, sizeof d->ini, file) < 0) {
        snprintf(err, errlen, "%s:%u: device file name too long", from,
                 from_line);
        return TB_ERR_LIMIT;
    }
    p = calloc(1, sizeof *p);
    if (!p)
        return TB_ERR_NOMEM;
    p->dev = d;
    p->path = path;
    p->defer_dumps = (flags & TB_SNAP_LOAD_DEFER_DUMPS) != 0;
    rc = tb_ini_parse(path, dev_cb, p, err, errlen);
    if (rc == 0 && !d->name[0]) {
        snprintf(err, errlen, "%s: no name= in a [device] section", path);
        rc = TB_ERR_FORMAT;
    }
    for (i = 0; rc == 0 && i < d->n_dumps; i++) {
        if (!p->dump_has_file[i] || !p->dump_has_addr[i]) {
            snprintf(err, errlen, "%s:%u: dump section without %s=", path,
                     p->dump_line[i], p->dump_has_file[i] ? "address" : "file");
            rc = TB_ERR_FORMAT;
        }
    }
    for (i = 0; rc == 0 && i < s->n_devices; i++) {
        if (strcmp(s->devices[i].name, d->name) == 0) {
            snprintf(err, errlen, "%s: device name '%s' also used by %s", path,
                     d->name, s->devices[i].ini);
            rc = TB_ERR_FORMAT;
        }
    }
    free(p);
    if (rc == 0)
        s->n_devices++;
    return rc;
}

/* ------------------------------------------------------------------ */
/* snapshot.ini */

typedef struct snap_parse {
    tb_snapshot *s;
    const char *path;
    bool version_seen;
    char metadata[256];
    unsigned metadata_line;
    unsigned flags;
} snap_parse;

static int snap_cb(void *ctx, const char *section, const char *key,
                   const char *value, unsigned line, char *err, size_t errlen)
{
    snap_parse *p = ctx;

    if (!key)
        return 0;
    if (strcasecmp(section, "snapshot") == 0 && strcasecmp(key, "version") == 0) {
        /* Format v1.0 is the only one there is (protocol-notes 5.2). */
        if (strcmp(value, "1.0") != 0 && strcmp(value, "1") != 0) {
            snprintf(err, errlen, "%s:%u: snapshot version '%.20s' not "
                     "supported (only 1.0)", p->path, line, value);
            return TB_ERR_UNSUPPORTED;
        }
        p->version_seen = true;
    } else if (strcasecmp(section, "device_list") == 0) {
        if (!*value) {
            snprintf(err, errlen, "%s:%u: empty device file name", p->path,
                     line);
            return TB_ERR_FORMAT;
        }
        return load_device(p->s, value, p->path, line, p->flags, err, errlen);
    } else if (strcasecmp(section, "trace") == 0 &&
               strcasecmp(key, "metadata") == 0) {
        if (copy_str(p->metadata, sizeof p->metadata, value) < 0 || !*value) {
            snprintf(err, errlen, "%s:%u: trace metadata file name %s",
                     p->path, line, *value ? "too long" : "empty");
            return *value ? TB_ERR_LIMIT : TB_ERR_FORMAT;
        }
        p->metadata_line = line;
    }
    return 0;
}

/* ------------------------------------------------------------------ */
/* trace.ini */

#define MAX_CORE_LINKS 64

typedef struct trace_parse {
    tb_snapshot *s;
    const char *path;
    int pass;
    bool have_list;
    char secname[8][TB_SNAP_MAX_NAME]; /* [bufferN] section of buffers[i] */
    bool have_format[8];
    unsigned buf_line[8];
    size_t n_links;
    struct { char core[TB_SNAP_MAX_NAME], source[TB_SNAP_MAX_NAME];
             unsigned line; } links[MAX_CORE_LINKS];
} trace_parse;

/* Splits a comma list into trimmed items; calls fn for each non-empty. */
static int for_each_item(const char *list, int (*fn)(void *, const char *),
                         void *ctx)
{
    char item[1024];
    const char *s = list;

    while (*s) {
        size_t n = strcspn(s, ","), a = 0, b = n;
        int rc;
        while (a < b && (s[a] == ' ' || s[a] == '\t'))
            a++;
        while (b > a && (s[b - 1] == ' ' || s[b - 1] == '\t'))
            b--;
        if (b - a >= sizeof item)
            return TB_ERR_LIMIT;
        if (b > a) {
            memcpy(item, s + a, b - a);
            item[b - a] = '\0';
            rc = fn(ctx, item);
            if (rc < 0)
                return rc;
        }
        s += n;
        if (*s == ',')
            s++;
    }
    return 0;
}

static int add_buffer_section(void *ctx, const char *item)
{
    trace_parse *p = ctx;
    tb_snapshot *s = p->s;
    size_t i;

    for (i = 0; i < s->n_buffers; i++)
        if (strcmp(p->secname[i], item) == 0)
            return TB_ERR_FORMAT;
    if (s->n_buffers == 8)
        return TB_ERR_LIMIT;
    if (copy_str(p->secname[s->n_buffers], TB_SNAP_MAX_NAME, item) < 0)
        return TB_ERR_LIMIT;
    s->n_buffers++;
    return 0;
}

static int add_buffer_file(void *ctx, const char *item)
{
    tb_snap_buffer *b = ctx;

    if (b->n_files == 4)
        return TB_ERR_LIMIT;
    if (copy_str(b->files[b->n_files], sizeof b->files[0], item) < 0)
        return TB_ERR_LIMIT;
    b->n_files++;
    return 0;
}

static tb_snap_source *find_source(tb_snapshot *s, const char *name)
{
    size_t i;

    for (i = 0; i < s->n_sources; i++)
        if (strcmp(s->sources[i].name, name) == 0)
            return &s->sources[i];
    return NULL;
}

static int trace_cb(void *ctx, const char *section, const char *key,
                    const char *value, unsigned line, char *err, size_t errlen)
{
    trace_parse *p = ctx;
    tb_snapshot *s = p->s;
    size_t i;
    int rc;

    if (!key) {
        if (p->pass == 2)
            for (i = 0; i < s->n_buffers; i++)
                if (strcmp(p->secname[i], section) == 0)
                    p->buf_line[i] = line;
        return 0;
    }
    if (p->pass == 1) {
        if (strcasecmp(section, "trace_buffers") == 0 &&
            strcasecmp(key, "buffers") == 0) {
            if (p->have_list) {
                snprintf(err, errlen, "%s:%u: second buffers= list", p->path,
                         line);
                return TB_ERR_FORMAT;
            }
            p->have_list = true;
            rc = for_each_item(value, add_buffer_section, p);
            if (rc < 0) {
                snprintf(err, errlen, "%s:%u: %s", p->path, line,
                         rc == TB_ERR_LIMIT ? "more than 8 buffers"
                                            : "buffer listed twice");
                return rc;
            }
        }
        return 0;
    }

    for (i = 0; i < s->n_buffers; i++) {
        tb_snap_buffer *b = &s->buffers[i];
        if (strcmp(p->secname[i], section) != 0)
            continue;
        if (strcasecmp(key, "name") == 0) {
            rc = copy_str(b->name, sizeof b->name, value);
        } else if (strcasecmp(key, "format") == 0) {
            rc = copy_str(b->format, sizeof b->format, value);
            p->have_format[i] = true;
        } else if (strcasecmp(key, "file") == 0) {
            b->n_files = 0;
            rc = for_each_item(value, add_buffer_file, b);
        } else {
            rc = 0;
        }
        if (rc < 0) {
            snprintf(err, errlen, "%s:%u: %s too long (or more than 4 files)",
                     p->path, line, key);
            return rc;
        }
        return 0;
    }
    if (strcasecmp(section, "source_buffers") == 0) {
        /* source=buffer; a list names the first buffer the source reaches. */
        tb_snap_source *src;
        char first[TB_SNAP_MAX_NAME];
        size_t n = strcspn(value, ",");
        while (n > 0 && (value[n - 1] == ' ' || value[n - 1] == '\t'))
            n--;
        if (find_source(s, key)) {
            snprintf(err, errlen, "%s:%u: source %s mapped twice", p->path,
                     line, key);
            return TB_ERR_FORMAT;
        }
        if (s->n_sources == sizeof s->sources / sizeof s->sources[0]) {
            snprintf(err, errlen, "%s:%u: more than %zu trace sources",
                     p->path, line, sizeof s->sources / sizeof s->sources[0]);
            return TB_ERR_LIMIT;
        }
        src = &s->sources[s->n_sources];
        memset(src, 0, sizeof *src);
        if (n == 0 || n >= sizeof first ||
            copy_str(src->name, sizeof src->name, key) < 0) {
            snprintf(err, errlen, "%s:%u: bad source_buffers entry", p->path,
                     line);
            return TB_ERR_FORMAT;
        }
        memcpy(first, value, n);
        first[n] = '\0';
        memcpy(src->buffer, first, n + 1);
        s->n_sources++;
    } else if (strcasecmp(section, "core_trace_sources") == 0) {
        if (p->n_links == MAX_CORE_LINKS) {
            snprintf(err, errlen, "%s:%u: more than %d core_trace_sources",
                     p->path, line, MAX_CORE_LINKS);
            return TB_ERR_LIMIT;
        }
        if (copy_str(p->links[p->n_links].core, TB_SNAP_MAX_NAME, key) < 0 ||
            copy_str(p->links[p->n_links].source, TB_SNAP_MAX_NAME, value) < 0 ||
            !*value) {
            snprintf(err, errlen, "%s:%u: bad core_trace_sources entry",
                     p->path, line);
            return TB_ERR_FORMAT;
        }
        p->links[p->n_links].line = line;
        p->n_links++;
    }
    return 0;
}

static int load_trace(tb_snapshot *s, const char *file, char *err,
                      size_t errlen)
{
    char path[1024];
    trace_parse *p;
    size_t i, j;
    int rc;

    if (join_path(path, sizeof path, s->dir, file) < 0) {
        snprintf(err, errlen, "%s/snapshot.ini: trace metadata path too long",
                 s->dir);
        return TB_ERR_LIMIT;
    }
    p = calloc(1, sizeof *p);
    if (!p)
        return TB_ERR_NOMEM;
    p->s = s;
    p->path = path;
    /* Two passes: the buffer list may come after the buffer sections. */
    p->pass = 1;
    rc = tb_ini_parse(path, trace_cb, p, err, errlen);
    if (rc == 0 && !p->have_list) {
        snprintf(err, errlen, "%s: no [trace_buffers] buffers= list", path);
        rc = TB_ERR_FORMAT;
    }
    if (rc == 0) {
        p->pass = 2;
        rc = tb_ini_parse(path, trace_cb, p, err, errlen);
    }
    for (i = 0; rc == 0 && i < s->n_buffers; i++) {
        const tb_snap_buffer *b = &s->buffers[i];
        const char *missing = !p->buf_line[i] ? NULL
                              : !b->name[0]   ? "name="
                              : !b->n_files   ? "file="
                              : !p->have_format[i] ? "format=" : "";
        if (!missing) {
            snprintf(err, errlen, "%s: buffer section [%s] is listed but "
                     "missing", path, p->secname[i]);
            rc = TB_ERR_FORMAT;
        } else if (*missing) {
            snprintf(err, errlen, "%s:%u: [%s] has no %s", path, p->buf_line[i],
                     p->secname[i], missing);
            rc = TB_ERR_FORMAT;
        }
        for (j = 0; rc == 0 && j < i; j++)
            if (strcmp(s->buffers[j].name, b->name) == 0) {
                snprintf(err, errlen, "%s: two buffers named %s", path,
                         b->name);
                rc = TB_ERR_FORMAT;
            }
    }
    for (i = 0; rc == 0 && i < s->n_sources; i++) {
        for (j = 0; j < s->n_buffers; j++)
            if (strcmp(s->buffers[j].name, s->sources[i].buffer) == 0)
                break;
        if (j == s->n_buffers) {
            snprintf(err, errlen, "%s: source %s writes to buffer '%s', "
                     "which [trace_buffers] does not define", path,
                     s->sources[i].name, s->sources[i].buffer);
            rc = TB_ERR_FORMAT;
        }
    }
    /* core=source links; a source no buffer captured still gets an entry
     * (buffer "") so its core is known. */
    for (i = 0; rc == 0 && i < p->n_links; i++) {
        tb_snap_source *src = find_source(s, p->links[i].source);
        if (!src) {
            if (s->n_sources == sizeof s->sources / sizeof s->sources[0]) {
                snprintf(err, errlen, "%s:%u: more than %zu trace sources",
                         path, p->links[i].line,
                         sizeof s->sources / sizeof s->sources[0]);
                rc = TB_ERR_LIMIT;
                break;
            }
            src = &s->sources[s->n_sources++];
            memset(src, 0, sizeof *src);
            memcpy(src->name, p->links[i].source, sizeof src->name);
        }
        if (src->core[0]) {
            snprintf(err, errlen, "%s:%u: source %s already belongs to core %s",
                     path, p->links[i].line, src->name, src->core);
            rc = TB_ERR_FORMAT;
            break;
        }
        memcpy(src->core, p->links[i].core, sizeof src->core);
    }
    free(p);
    return rc;
}

/* ------------------------------------------------------------------ */
/* Public API. */

int tb_snapshot_load(tb_snapshot *s, const char *dir, char *err, size_t errlen)
{
    return tb_snapshot_load_flags(s, dir, 0, err, errlen);
}

int tb_snapshot_load_flags(tb_snapshot *s, const char *dir, unsigned flags,
                           char *err, size_t errlen)
{
    char path[1024];
    snap_parse p;
    size_t n;
    int rc;

    if (!s)
        return TB_ERR_INVAL;
    memset(s, 0, sizeof *s);
    if (!dir || !err || errlen == 0)
        return TB_ERR_INVAL;
    err[0] = '\0';
    n = strlen(dir);
    while (n > 1 && dir[n - 1] == '/')
        n--;
    if (n == 0 || n >= sizeof s->dir) {
        snprintf(err, errlen, "snapshot directory name %s",
                 n ? "too long" : "empty");
        return n ? TB_ERR_LIMIT : TB_ERR_INVAL;
    }
    memcpy(s->dir, dir, n);
    s->dir[n] = '\0';
    if (join_path(path, sizeof path, s->dir, "snapshot.ini") < 0) {
        snprintf(err, errlen, "snapshot directory name too long");
        return TB_ERR_LIMIT;
    }
    memset(&p, 0, sizeof p);
    p.s = s;
    p.path = path;
    p.flags = flags;
    rc = tb_ini_parse(path, snap_cb, &p, err, errlen);
    if (rc == 0 && !p.version_seen) {
        snprintf(err, errlen, "%s: no [snapshot] version=", path);
        rc = TB_ERR_FORMAT;
    }
    if (rc == 0 && s->n_devices == 0) {
        snprintf(err, errlen, "%s: [device_list] names no device", path);
        rc = TB_ERR_FORMAT;
    }
    if (rc == 0 && !p.metadata[0]) {
        snprintf(err, errlen, "%s: no [trace] metadata= (trace.ini)", path);
        rc = TB_ERR_FORMAT;
    }
    if (rc == 0)
        rc = load_trace(s, p.metadata, err, errlen);
    if (rc < 0) {
        if (rc == TB_ERR_NOMEM && !err[0])
            snprintf(err, errlen, "out of memory reading %s", path);
        tb_snapshot_fini(s);
    }
    return rc;
}

void tb_snapshot_fini(tb_snapshot *s)
{
    if (!s)
        return;
    free(s->devices);
    s->devices = NULL;
    s->n_devices = 0;
    s->n_buffers = 0;
    s->n_sources = 0;
}

const tb_snap_device *tb_snapshot_device(const tb_snapshot *s,
                                         const char *name)
{
    size_t i;

    if (!s || !name)
        return NULL;
    for (i = 0; i < s->n_devices; i++)
        if (strcmp(s->devices[i].name, name) == 0)
            return &s->devices[i];
    return NULL;
}

int tb_snap_device_reg(const tb_snap_device *d, const char *name,
                       uint32_t *value)
{
    size_t i;

    if (!d || !name)
        return TB_ERR_INVAL;
    for (i = 0; i < d->n_regs; i++) {
        if (strcasecmp(d->regs[i].name, name) != 0)
            continue;
        if (d->regs[i].value64 > 0xFFFFFFFFull)
            return TB_ERR_FORMAT;
        if (value)
            *value = d->regs[i].value;
        return 0;
    }
    return TB_ERR_NOT_FOUND;
}

/* What an ETMIDR value names, for messages: "ETMv3.5", "PFT1.1", or
 * "neither ETMv3 nor PTM (architecture 4.0)". */
static void etmidr_name(uint32_t etmidr, char *buf, size_t len)
{
    unsigned major = (etmidr >> 8) & 0xF, minor = (etmidr >> 4) & 0xF;

    if (major == 2)
        snprintf(buf, len, "ETMv3.%u", minor);
    else if (major == 3)
        snprintf(buf, len, "PFT1.%u (PTM)", minor);
    else
        snprintf(buf, len, "neither ETMv3 nor PTM (architecture field %u.%u)",
                 major, minor);
}

/* An ETMv1 or ETMv2 source (docs/etmv1.md 2, docs/etmv2.md 2;
 * type=ETMv1.x / ETMv2.x, which OpenCSD does not know): ETMCR,
 * MINOR_VERSION and PORT_WIDTH (which must agree with ETMCR[6:4]),
 * VECTOR_BASE (0 when absent). */
static int etmv1_source_config(const tb_snapshot *s, const tb_snap_device *d,
                               tb_config *cfg, char *err, size_t errlen)
{
    bool v2 = strncasecmp(d->type, "ETMv2", 5) == 0;
    static const char *const names[3] = {"ETMCR", "MINOR_VERSION", "PORT_WIDTH"};
    uint32_t v[3], vb = 0;
    size_t i;
    int rc;

    for (i = 0; i < 3; i++) {
        rc = tb_snap_device_reg(d, names[i], &v[i]);
        if (rc < 0) {
            snprintf(err, errlen, "%s/%s: register %s of ETMv%d source %s is %s: an "
                     "ETMv%d decoder needs ETMCR, MINOR_VERSION and PORT_WIDTH", s->dir,
                     d->ini, names[i], v2 ? 2 : 1, d->name,
                     rc == TB_ERR_NOT_FOUND ? "missing" : "wider than 32 bits", v2 ? 2 : 1);
            return TB_ERR_CONFIG;
        }
    }
    rc = tb_snap_device_reg(d, "VECTOR_BASE", &vb);
    if ((rc < 0 && rc != TB_ERR_NOT_FOUND) || v[1] > 3 ||
        (v2 ? tb_config_from_etmv2 : tb_config_from_etmv1)(cfg, v[0], (uint8_t)v[1],
                                                           rc < 0 ? 0 : vb) < 0 ||
        cfg->port_width != v[2] || (cfg->vector_base & 0x1F)) {
        snprintf(err, errlen, "%s/%s: ETMv%d source %s: ETMCR 0x%08X, MINOR_VERSION %u, "
                 "PORT_WIDTH %u and VECTOR_BASE do not make an %s port of "
                 "4, 8 or 16 bits (ETMCR[6:4] = 0, 1 or 2)", s->dir, d->ini, v2 ? 2 : 1,
                 d->name, (unsigned)v[0], (unsigned)v[1], (unsigned)v[2],
                 v2 ? "ETMv2.0" : "ETMv1.0-1.3");
        return TB_ERR_CONFIG;
    }
    return 0;
}

int tb_snapshot_source_config(const tb_snapshot *s, const tb_snap_source *src,
                              tb_config *cfg, char *err, size_t errlen)
{
    static const char *const names[4] = {"ETMCR", "ETMIDR", "ETMCCER",
                                         "ETMTRACEIDR"};
    const tb_snap_device *d;
    uint32_t v[4];
    tb_protocol want;
    char named[80];
    size_t i;
    int rc;

    if (!s || !src || !cfg || !err || !errlen)
        return TB_ERR_INVAL;
    d = tb_snapshot_device(s, src->name);
    if (!d) {
        snprintf(err, errlen, "%s: trace source %s is not a device in "
                 "[device_list]: add its device file to snapshot.ini",
                 s->dir, src->name);
        return TB_ERR_NOT_FOUND;
    }
    if (strncasecmp(d->type, "ETMv1", 5) == 0 || strncasecmp(d->type, "ETMv2", 5) == 0)
        return etmv1_source_config(s, d, cfg, err, errlen);
    /* The decoder comes from the type's prefix; the minor version from
     * ETMIDR, not from the ".x" (protocol-notes 5.2). */
    if (strncasecmp(d->type, "ETM3", 4) == 0)
        want = TB_PROTO_ETMV3;
    else if (strncasecmp(d->type, "PTM1", 4) == 0 ||
             strncasecmp(d->type, "PFT1", 4) == 0)
        want = TB_PROTO_PTM;
    else {
        if (d->type[0])
            snprintf(err, errlen, "%s/%s: source %s (type %s) is not "
                     "supported: tracebench decodes ETMv3 (type=ETM3.x) and "
                     "PTM (type=PTM1.x or PFT1.x)", s->dir, d->ini, d->name,
                     d->type);
        else
            snprintf(err, errlen, "%s/%s: source %s has no type= in "
                     "[device]: tracebench decodes ETMv3 (type=ETM3.x) and "
                     "PTM (type=PTM1.x or PFT1.x)", s->dir, d->ini, d->name);
        return TB_ERR_UNSUPPORTED;
    }
    for (i = 0; i < 4; i++) {
        rc = tb_snap_device_reg(d, names[i], &v[i]);
        if (rc == TB_ERR_NOT_FOUND) {
            snprintf(err, errlen, "%s/%s: register %s missing from [regs] of "
                     "source %s: a decoder needs ETMCR, ETMIDR, ETMCCER and "
                     "ETMTRACEIDR", s->dir, d->ini, names[i], d->name);
            return TB_ERR_CONFIG;
        }
        if (rc < 0) {
            snprintf(err, errlen, "%s/%s: register %s of source %s does not "
                     "fit 32 bits", s->dir, d->ini, names[i], d->name);
            return TB_ERR_CONFIG;
        }
    }
    rc = tb_config_from_regs(cfg, v[0], v[1], v[2], v[3]);
    if (rc < 0 || cfg->protocol != want) {
        etmidr_name(v[1], named, sizeof named);
        snprintf(err, errlen, "%s/%s: source %s has type %s but its ETMIDR "
                 "0x%08X names %s: fix type= or ETMIDR", s->dir, d->ini,
                 d->name, d->type, (unsigned)v[1], named);
        return TB_ERR_CONFIG;
    }
    /* In formatted buffers ID 0 is the null ID and 0x70-0x7F are reserved
     * (protocol-notes 5.1); a source_data buffer holds one source and
     * never looks at the ID. */
    for (i = 0; i < s->n_buffers; i++)
        if (strcmp(s->buffers[i].name, src->buffer) == 0)
            break;
    if ((i == s->n_buffers ||
         strcasecmp(s->buffers[i].format, "source_data") != 0) &&
        (cfg->trace_id == 0 || cfg->trace_id >= 0x70)) {
        snprintf(err, errlen, "%s/%s: ETMTRACEIDR 0x%X of source %s is not a "
                 "usable trace ID (0x01-0x6F)", s->dir, d->ini,
                 (unsigned)v[3], d->name);
        return TB_ERR_CONFIG;
    }
    /* The core's profile, which no ETM register tells: an ARMv7-M core
     * (OpenCSD's names: "Cortex-M3", "Cortex-M4", or the architecture;
     * trc_core_arch_map.cpp, shared/docs etmv3-v7m.md 4.1) makes the
     * decoder read v7-M exception numbers (docs/cortex-m.md 3). */
    if (cfg->protocol == TB_PROTO_ETMV3 && src->core[0]) {
        const tb_snap_device *core = tb_snapshot_device(s, src->core);

        if (core && (!strcasecmp(core->type, "Cortex-M3") ||
                     !strcasecmp(core->type, "ARMv7-M")))
            cfg->v7m = 3;
        else if (core && (!strcasecmp(core->type, "Cortex-M4") ||
                          !strcasecmp(core->type, "ARMv7E-M")))
            cfg->v7m = 4;
    }
    return 0;
}

/* Reads [offset, offset+length) of a file (length 0: to the end) into a
 * new allocation. */
static int read_range(const char *path, uint64_t offset, uint64_t length,
                      uint8_t **data, size_t *len, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    long long size;
    uint8_t *buf;
    size_t n;

    *data = NULL;
    *len = 0;
    if (!f) {
        snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        return TB_ERR_IO;
    }
    if (fseek(f, 0, SEEK_END) != 0 || (size = ftell(f)) < 0) {
        snprintf(err, errlen, "%s: cannot find its size", path);
        fclose(f);
        return TB_ERR_IO;
    }
    if (offset > (uint64_t)size ||
        (length && length > (uint64_t)size - offset)) {
        snprintf(err, errlen, "%s: %llu bytes, but the dump asks for %llu at "
                 "offset %llu", path, (unsigned long long)size,
                 (unsigned long long)length, (unsigned long long)offset);
        fclose(f);
        return TB_ERR_FORMAT;
    }
    if (!length)
        length = (uint64_t)size - offset;
    if (length > MAX_FILE_BYTES || length > (uint64_t)SIZE_MAX - 1) {
        snprintf(err, errlen, "%s: %llu bytes is more than the limit", path,
                 (unsigned long long)length);
        fclose(f);
        return TB_ERR_LIMIT;
    }
    buf = malloc(length ? (size_t)length : 1);
    if (!buf) {
        fclose(f);
        snprintf(err, errlen, "%s: out of memory for %llu bytes", path,
                 (unsigned long long)length);
        return TB_ERR_NOMEM;
    }
    n = 0;
    if (length && (fseek(f, (long)offset, SEEK_SET) != 0 ||
                   (n = fread(buf, 1, (size_t)length, f)) != length)) {
        snprintf(err, errlen, "%s: short read (%zu of %llu bytes)", path, n,
                 (unsigned long long)length);
        free(buf);
        fclose(f);
        return TB_ERR_IO;
    }
    fclose(f);
    *data = buf;
    *len = (size_t)length;
    return 0;
}

int tb_snapshot_source_memory(const tb_snapshot *s, const tb_snap_source *src,
                              tb_memimage **out, char *err, size_t errlen)
{
    const tb_snap_device *core;
    tb_memimage *m;
    size_t i;
    int rc = 0;

    if (!s || !src || !out || !err || !errlen)
        return TB_ERR_INVAL;
    *out = NULL;
    if (!src->core[0]) {
        snprintf(err, errlen, "%s: trace source %s has no core in "
                 "[core_trace_sources], so no memory image", s->dir,
                 src->name);
        return TB_ERR_NOT_FOUND;
    }
    core = tb_snapshot_device(s, src->core);
    if (!core) {
        snprintf(err, errlen, "%s: core %s of source %s is not a device in "
                 "[device_list]", s->dir, src->core, src->name);
        return TB_ERR_NOT_FOUND;
    }
    m = tb_memimage_new();
    if (!m)
        return TB_ERR_NOMEM;
    for (i = 0; i < core->n_dumps && rc == 0; i++) {
        const tb_snap_dump *dp = &core->dumps[i];
        char path[1024];
        uint8_t *data;
        size_t len;

        if (dp->address64 > 0xFFFFFFFFull) {
            snprintf(err, errlen, "%s/%s: dump %s of core %s is at 0x%llx, "
                     "beyond the 32-bit address space of ETMv3/PTM trace",
                     s->dir, core->ini, dp->file, core->name,
                     (unsigned long long)dp->address64);
            rc = TB_ERR_UNSUPPORTED;
            break;
        }
        if (join_path(path, sizeof path, s->dir, dp->file) < 0) {
            snprintf(err, errlen, "%s/%s: dump path too long", s->dir,
                     core->ini);
            rc = TB_ERR_LIMIT;
            break;
        }
        rc = read_range(path, dp->offset, dp->length, &data, &len, err,
                        errlen);
        if (rc < 0)
            break;
        /* The image keeps the buffer the dump was read into. */
        rc = tb_memimage_adopt(m, dp->address, data, len);
        if (rc < 0 || !len)
            free(data);
        if (rc == TB_ERR_INVAL)
            snprintf(err, errlen, "%s/%s: dump %s at 0x%08X (%zu bytes) "
                     "overlaps another dump or passes 4 GiB", s->dir,
                     core->ini, dp->file, (unsigned)dp->address, len);
        else if (rc < 0)
            snprintf(err, errlen, "out of memory for dump %s", dp->file);
    }
    if (rc < 0) {
        tb_memimage_free(m);
        return rc;
    }
    *out = m;
    return (int)core->n_dumps;
}

int tb_snapshot_read_file(const char *path, uint8_t **data, size_t *len,
                          char *err, size_t errlen)
{
    if (!path || !data || !len || !err || !errlen)
        return TB_ERR_INVAL;
    return read_range(path, 0, 0, data, len, err, errlen);
}

int tb_memimage_add_file(tb_memimage *m, uint32_t addr, const char *path,
                         char *err, size_t errlen)
{
    uint8_t *data;
    size_t len;
    int rc;

    if (!m || !path || !err || !errlen)
        return TB_ERR_INVAL;
    rc = read_range(path, 0, 0, &data, &len, err, errlen);
    if (rc < 0)
        return rc;
    if (!len) {
        free(data);
        snprintf(err, errlen, "%s: empty file, no memory to map", path);
        return TB_ERR_FORMAT;
    }
    rc = tb_memimage_adopt(m, addr, data, len);
    if (rc < 0)
        free(data);
    if (rc == TB_ERR_INVAL)
        snprintf(err, errlen, "%s at 0x%08X (%zu bytes) overlaps memory "
                 "already mapped or passes 4 GiB", path, (unsigned)addr, len);
    else if (rc < 0)
        snprintf(err, errlen, "%s: out of memory", path);
    return rc;
}

int tb_snapshot_read_buffer(const tb_snapshot *s, const tb_snap_buffer *b,
                            uint8_t **data, size_t *len, char *err,
                            size_t errlen)
{
    uint8_t *all = NULL;
    size_t total = 0, i;

    if (!s || !b || !data || !len || !err || !errlen)
        return TB_ERR_INVAL;
    *data = NULL;
    *len = 0;
    for (i = 0; i < b->n_files; i++) {
        char path[1024];
        uint8_t *part, *grown;
        size_t n;
        int rc;

        if (join_path(path, sizeof path, s->dir, b->files[i]) < 0) {
            snprintf(err, errlen, "%s: buffer file path too long", s->dir);
            free(all);
            return TB_ERR_LIMIT;
        }
        rc = read_range(path, 0, 0, &part, &n, err, errlen);
        if (rc < 0) {
            free(all);
            return rc;
        }
        if (total + n > MAX_FILE_BYTES) {
            snprintf(err, errlen, "buffer %s: more than 4 GiB", b->name);
            free(part);
            free(all);
            return TB_ERR_LIMIT;
        }
        grown = realloc(all, total + n + 1);
        if (!grown) {
            free(part);
            free(all);
            snprintf(err, errlen, "buffer %s: out of memory", b->name);
            return TB_ERR_NOMEM;
        }
        all = grown;
        memcpy(all + total, part, n);
        total += n;
        free(part);
    }
    *data = all;
    *len = total;
    return 0;
}

int tb_snap_buffer_frame_flags(const tb_snap_buffer *b, unsigned *flags)
{
    if (!b || !flags)
        return TB_ERR_INVAL;
    *flags = 0;
    /* An ETMv1 port capture (docs/etmv1.md 2) is one source's bytes. */
    if (strcasecmp(b->format, "source_data") == 0 ||
        strcasecmp(b->format, "etmv1_port") == 0 ||
        strcasecmp(b->format, "etmv2_port") == 0)
        return 1;
    if (strcasecmp(b->format, "coresight") == 0) {
        *flags = TB_FRAME_MEM_ALIGNED;
        return 0;
    }
    /* DSTREAM captures carry FSYNCs between frames (protocol-notes 5.1). */
    if (strcasecmp(b->format, "dstream_coresight") == 0) {
        *flags = TB_FRAME_HAS_FSYNC;
        return 0;
    }
    /* A TPIU capture from a port of 16 bits or more: FSYNCs between
     * frames and HSYNC half-word pads where the port idled (protocol-
     * notes 5.1).  A tracebench name (docs/vectors.md): OpenCSD's
     * snapshot reader has none (its trc_pkt_lister: -tpiu_hsync). */
    if (strcasecmp(b->format, "tpiu_coresight") == 0) {
        *flags = TB_FRAME_HAS_FSYNC | TB_FRAME_HAS_HSYNC;
        return 0;
    }
    return TB_ERR_FORMAT;
}

/* ------------------------------------------------------------------ */
/* Writer. */

static int write_file(const char *dir, const char *name, const void *data,
                      size_t len, char *err, size_t errlen)
{
    char path[1024];
    FILE *f;
    int ok;

    if (join_path(path, sizeof path, dir, name) < 0) {
        snprintf(err, errlen, "%s: path too long", dir);
        return TB_ERR_LIMIT;
    }
    f = fopen(path, "wb");
    if (!f) {
        snprintf(err, errlen, "%s: cannot create: %s", path, strerror(errno));
        return TB_ERR_IO;
    }
    /* An empty buffer may come as NULL: fwrite's pointer must not be. */
    ok = !len || fwrite(data, 1, len, f) == len;
    ok = (fclose(f) == 0) && ok;
    if (!ok) {
        snprintf(err, errlen, "%s: write failed", path);
        return TB_ERR_IO;
    }
    return 0;
}

/* A growing text for one ini file. */
typedef struct text {
    char *s;
    size_t n, cap;
    bool oom;
} text;

static void tprintf(text *t, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void tprintf(text *t, const char *fmt, ...)
{
    va_list ap;
    int n;

    if (t->oom)
        return;
    for (;;) {
        size_t room = t->cap - t->n;
        va_start(ap, fmt);
        n = vsnprintf(t->s ? t->s + t->n : NULL, room, fmt, ap);
        va_end(ap);
        if (n < 0) {
            t->oom = true;
            return;
        }
        if ((size_t)n < room) {
            t->n += (size_t)n;
            return;
        }
        {
            size_t cap = (t->cap + (size_t)n + 1) * 2;
            char *g = realloc(t->s, cap);
            if (!g) {
                t->oom = true;
                return;
            }
            t->s = g;
            t->cap = cap;
        }
    }
}

static int text_write(const char *dir, const char *name, text *t, char *err,
                      size_t errlen)
{
    int rc;

    if (t->oom) {
        free(t->s);
        memset(t, 0, sizeof *t);
        snprintf(err, errlen, "out of memory writing %s", name);
        return TB_ERR_NOMEM;
    }
    rc = write_file(dir, name, t->s ? t->s : "", t->n, err, errlen);
    free(t->s);
    memset(t, 0, sizeof *t);
    return rc;
}

/* Names go into ini files unquoted: no separators or comment marks. */
static bool ini_safe(const char *s)
{
    if (!s || !*s || strlen(s) >= TB_SNAP_MAX_NAME)
        return false;
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && !strchr("_-.", *s))
            return false;
    return true;
}

int tb_snapshot_write(const char *dir, const tb_snap_out_source *sources,
                      size_t n_sources, const uint8_t *buffer, size_t len,
                      const char *format, char *err, size_t errlen)
{
    text t = {0};
    tb_config cfgs[32]; /* the sources' configurations, as this build's */
    size_t i, j, k;
    int rc;

    if (!err || !errlen)
        return TB_ERR_INVAL;
    err[0] = '\0';
    if (!dir || !*dir || !sources || !n_sources || (!buffer && len) ||
        !format) {
        snprintf(err, errlen, "snapshot writer: missing argument");
        return TB_ERR_INVAL;
    }
    if (strcmp(format, "coresight") != 0 &&
        strcmp(format, "dstream_coresight") != 0 &&
        strcmp(format, "tpiu_coresight") != 0 &&
        !((strcmp(format, "source_data") == 0 || strcmp(format, "etmv1_port") == 0 ||
           strcmp(format, "etmv2_port") == 0) &&
          n_sources == 1)) {
        snprintf(err, errlen, "snapshot writer: format '%s' (with %zu "
                 "sources) not writable", format, n_sources);
        return TB_ERR_INVAL;
    }
    if (n_sources > 32) {
        snprintf(err, errlen, "snapshot writer: more than 32 sources");
        return TB_ERR_LIMIT;
    }
    for (i = 0; i < n_sources; i++) {
        const tb_snap_out_source *src = &sources[i];
        if (!ini_safe(src->name) || !ini_safe(src->core) || !src->cfg ||
            (src->core_type && !ini_safe(src->core_type)) ||
            (src->n_regions && !src->regions) ||
            src->n_regions > TB_SNAP_MAX_DUMPS) {
            snprintf(err, errlen, "snapshot writer: source %zu has a bad "
                     "name, core, configuration or region list", i);
            return TB_ERR_INVAL;
        }
        if ((rc = tb_struct_take(&cfgs[i], sizeof cfgs[i], src->cfg, TB_CONFIG_SIZE_MIN,
                                 "tb_config", err, errlen)) < 0)
            return rc;
        if (src->cfg->protocol != TB_PROTO_ETMV3 &&
            src->cfg->protocol != TB_PROTO_PTM &&
            !tb_protocol_is_port(src->cfg->protocol)) {
            snprintf(err, errlen, "snapshot writer: source %s has no protocol",
                     src->name);
            return TB_ERR_INVAL;
        }
        /* An ETMv1 port capture and nothing else in etmv1_port (ETMv2:
         * etmv2_port). */
        if ((src->cfg->protocol == TB_PROTO_ETMV1) != (strcmp(format, "etmv1_port") == 0) ||
            (src->cfg->protocol == TB_PROTO_ETMV2) != (strcmp(format, "etmv2_port") == 0)) {
            snprintf(err, errlen, "snapshot writer: source %s: ETMv1/ETMv2 need buffer "
                     "format etmv1_port/etmv2_port, and those formats that protocol",
                     src->name);
            return TB_ERR_INVAL;
        }
        for (j = 0; j < i; j++)
            if (strcmp(sources[j].name, src->name) == 0) {
                snprintf(err, errlen, "snapshot writer: source %s twice",
                         src->name);
                return TB_ERR_INVAL;
            }
    }
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        snprintf(err, errlen, "%s: cannot create: %s", dir, strerror(errno));
        return TB_ERR_IO;
    }

    /* Trace buffer and trace.ini (protocol-notes 5.2). */
    rc = write_file(dir, "trace_buffer.bin", buffer, len, err, errlen);
    if (rc < 0)
        return rc;
    tprintf(&t, "[trace_buffers]\nbuffers=buffer0\n\n[buffer0]\nname=ETB_0\n"
                "file=trace_buffer.bin\nformat=%s\n\n[source_buffers]\n", format);
    for (i = 0; i < n_sources; i++)
        tprintf(&t, "%s=ETB_0\n", sources[i].name);
    tprintf(&t, "\n[core_trace_sources]\n");
    for (i = 0; i < n_sources; i++)
        tprintf(&t, "%s=%s\n", sources[i].core, sources[i].name);
    rc = text_write(dir, "trace.ini", &t, err, errlen);
    if (rc < 0)
        return rc;

    /* One ini per source: the four registers a decoder needs. */
    for (i = 0; i < n_sources; i++) {
        const tb_config *c = &cfgs[i];
        char name[64];
        /* ETMv1 (docs/etmv1.md 2): no ETMIDR, ETMCCER or trace ID; the
         * minor version, the port width and the vector base as regs. */
        if (tb_protocol_is_port(c->protocol))
            tprintf(&t, "[device]\nname=%s\nclass=trace_source\ntype=ETMv%u.%u\n\n"
                        "[regs]\nETMCR(0x000)=0x%08X\nMINOR_VERSION=%u\n"
                        "PORT_WIDTH=%u\nVECTOR_BASE=0x%08X\n",
                    sources[i].name, c->protocol == TB_PROTO_ETMV2 ? 2u : 1u,
                    (unsigned)c->arch_minor, (unsigned)c->etmcr,
                    (unsigned)c->arch_minor, (unsigned)c->port_width,
                    (unsigned)c->vector_base);
        else
        /* The type's prefix picks the decoder (protocol-notes 5.2). */
        tprintf(&t, "[device]\nname=%s\nclass=trace_source\ntype=%s.%u\n\n"
                    "[regs]\nETMCR(0x000)=0x%08X\nETMIDR(0x079)=0x%08X\n"
                    "ETMCCER(0x07A)=0x%08X\nETMTRACEIDR(0x080)=0x%08X\n",
                sources[i].name, c->protocol == TB_PROTO_PTM ? "PTM1" : "ETM3",
                (unsigned)c->arch_minor, (unsigned)c->etmcr,
                (unsigned)c->etmidr, (unsigned)c->etmccer,
                (unsigned)c->traceidr);
        snprintf(name, sizeof name, "source_%zu.ini", i);
        rc = text_write(dir, name, &t, err, errlen);
        if (rc < 0)
            return rc;
    }

    /* One ini per distinct core, with its dumps. */
    for (i = 0; i < n_sources; i++) {
        const tb_snap_out_source *src = &sources[i];
        char name[64];
        for (j = 0; j < i; j++)
            if (strcmp(sources[j].core, src->core) == 0)
                break;
        if (j < i)
            continue;
        tprintf(&t, "[device]\nname=%s\nclass=core\ntype=%s\n", src->core,
                src->core_type ? src->core_type : "Cortex-A15");
        for (k = 0; k < src->n_regions; k++) {
            char dump[64];
            snprintf(dump, sizeof dump, "mem_%zu_%zu.bin", i, k);
            rc = write_file(dir, dump, src->regions[k].data,
                            src->regions[k].len, err, errlen);
            if (rc < 0) {
                free(t.s);
                return rc;
            }
            tprintf(&t, "\n[dump%zu]\nfile=%s\naddress=0x%08X\nlength=0x%zX\n",
                    k + 1, dump, (unsigned)src->regions[k].address,
                    src->regions[k].len);
        }
        snprintf(name, sizeof name, "core_%zu.ini", i);
        rc = text_write(dir, name, &t, err, errlen);
        if (rc < 0)
            return rc;
    }

    /* snapshot.ini last: a half-written directory does not load. */
    tprintf(&t, "[snapshot]\nversion=1.0\n\n[device_list]\n");
    k = 0;
    for (i = 0; i < n_sources; i++) {
        for (j = 0; j < i; j++)
            if (strcmp(sources[j].core, sources[i].core) == 0)
                break;
        if (j == i)
            tprintf(&t, "device%zu=core_%zu.ini\n", k++, i);
    }
    for (i = 0; i < n_sources; i++)
        tprintf(&t, "device%zu=source_%zu.ini\n", k++, i);
    tprintf(&t, "\n[trace]\nmetadata=trace.ini\n");
    return text_write(dir, "snapshot.ini", &t, err, errlen);
}
