/*
 * OpenCSD / Arm "trace and debug snapshot" directories (the format
 * OpenCSD's snapshot reader reads): snapshot.ini, trace.ini, device and
 * cpu ini files, memory dumps.
 * Also the memory image the decoder reads code from.
 */
#ifndef TRACEBENCH_SNAPSHOT_H
#define TRACEBENCH_SNAPSHOT_H

#include "tracebench/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- memory image: non-overlapping regions of bytes ---- */
typedef struct tb_memimage tb_memimage;
TB_API tb_memimage *tb_memimage_new(void);
TB_API void tb_memimage_free(tb_memimage *m);
/* Copies len bytes to be mapped at addr.  TB_ERR_INVAL on overlap. */
TB_API int tb_memimage_add(tb_memimage *m, uint32_t addr, const uint8_t *data,
                    size_t len);
/* Reads up to len bytes at addr; returns bytes available contiguously
 * (0 when addr is not mapped). */
TB_API size_t tb_memimage_read(const tb_memimage *m, uint32_t addr, uint8_t *out,
                        size_t len);
/* Pointer to the bytes at addr and how many follow contiguously
 * (*avail = 0 and NULL when unmapped): the decoder's fast path. */
TB_API const uint8_t *tb_memimage_ptr(const tb_memimage *m, uint32_t addr,
                               size_t *avail);

/* ---- snapshot ---- */
#define TB_SNAP_MAX_NAME 64
#define TB_SNAP_MAX_REGS 512      /* DS-5 core files list ~300 registers */
#define TB_SNAP_MAX_DUMPS 32
#define TB_SNAP_MAX_DEVICES 256

typedef struct tb_snap_dump {
    char file[256];          /* path relative to the snapshot dir */
    uint32_t address;        /* the low 32 bits of address64 */
    uint64_t address64;      /* as written (past 32 bits: see
                              * TB_SNAP_LOAD_DEFER_DUMPS) */
    uint64_t offset, length; /* length 0: the rest of the file */
    char space[8];
} tb_snap_dump;

typedef struct tb_snap_device {
    char name[TB_SNAP_MAX_NAME];
    char cls[TB_SNAP_MAX_NAME];   /* core | trace_source | ... */
    char type[TB_SNAP_MAX_NAME];  /* ETM3.5, PTM1.1, Cortex-A15, ... */
    char ini[256];                /* the device file */
    /* [regs]: names upper-cased, the part before '('.  value is the
     * low 32 bits; value64 the whole (64-bit registers, "size:64"). */
    size_t n_regs;
    struct { char name[32]; uint32_t value; uint64_t value64; } regs[TB_SNAP_MAX_REGS];
    size_t n_dumps;
    tb_snap_dump dumps[TB_SNAP_MAX_DUMPS];
} tb_snap_device;

typedef struct tb_snap_buffer {
    char name[TB_SNAP_MAX_NAME];
    char files[4][256];           /* concatenated in order */
    size_t n_files;
    char format[32];              /* coresight | source_data | dstream_coresight
                                   * | tpiu_coresight (FSYNCs and HSYNCs) */
} tb_snap_buffer;

typedef struct tb_snap_source {
    char name[TB_SNAP_MAX_NAME];  /* trace source device name */
    char buffer[TB_SNAP_MAX_NAME];
    char core[TB_SNAP_MAX_NAME];  /* core device, "" if none */
} tb_snap_source;

typedef struct tb_snapshot {
    char dir[512];
    size_t n_devices;
    tb_snap_device *devices;
    size_t n_buffers;
    tb_snap_buffer buffers[8];
    size_t n_sources;
    tb_snap_source sources[32];
} tb_snapshot;

/* Reads dir/snapshot.ini and everything it names.  On error returns a
 * negative code and writes a one-line reason into err (errlen bytes). */
TB_API int tb_snapshot_load(tb_snapshot *s, const char *dir, char *err,
                     size_t errlen);
/* tb_snapshot_load with flags:
 * TB_SNAP_LOAD_DEFER_DUMPS: a dump whose address passes 32 bits (an
 *   AArch64 core's, beside ETMv4 sources) does not stop the load; it is
 *   refused (TB_ERR_UNSUPPORTED) only by tb_snapshot_source_memory() for
 *   a source of that core.  Tools that list packets need no memory. */
#define TB_SNAP_LOAD_DEFER_DUMPS 1u
TB_API int tb_snapshot_load_flags(tb_snapshot *s, const char *dir, unsigned flags,
                           char *err, size_t errlen);
TB_API void tb_snapshot_fini(tb_snapshot *s);

TB_API const tb_snap_device *tb_snapshot_device(const tb_snapshot *s,
                                         const char *name);
/* Register by name (case-insensitive); TB_ERR_NOT_FOUND if absent,
 * TB_ERR_FORMAT if its value does not fit 32 bits. */
TB_API int tb_snap_device_reg(const tb_snap_device *d, const char *name,
                       uint32_t *value);
/* The trace source's configuration from its four registers.  Errors
 * name the device file and the cause: TB_ERR_UNSUPPORTED for a type
 * that is not ETM3.x, PTM1.x or PFT1.x (e.g. ETE, ETM4.x, STM, ITM);
 * TB_ERR_CONFIG for a register missing, too wide, an ETMIDR that names
 * another protocol than the type, or an unusable trace ID;
 * TB_ERR_NOT_FOUND when the source has no device file. */
TB_API int tb_snapshot_source_config(const tb_snapshot *s, const tb_snap_source *src,
                              tb_config *cfg, char *err, size_t errlen);
/* Loads the dumps of the source's core into a new image. */
TB_API int tb_snapshot_source_memory(const tb_snapshot *s, const tb_snap_source *src,
                              tb_memimage **out, char *err, size_t errlen);
/* Reads a whole file into one allocation (*data, *len; free() it). */
TB_API int tb_snapshot_read_file(const char *path, uint8_t **data, size_t *len,
                          char *err, size_t errlen);
/* Maps a whole file (a raw memory dump) at addr.  TB_ERR_INVAL when it
 * overlaps what m already maps; errors name the file in err. */
TB_API int tb_memimage_add_file(tb_memimage *m, uint32_t addr, const char *path,
                         char *err, size_t errlen);
/* Reads a buffer's files into one allocation (*data, *len). */
TB_API int tb_snapshot_read_buffer(const tb_snapshot *s, const tb_snap_buffer *b,
                            uint8_t **data, size_t *len, char *err,
                            size_t errlen);
/* Deformatter flags for a buffer format; TB_ERR_FORMAT if unknown,
 * 1 for source_data (not formatted), 0 when formatted (flags set). */
TB_API int tb_snap_buffer_frame_flags(const tb_snap_buffer *b, unsigned *flags);

/* ---- snapshot writer (for the encoder's output) ---- */

typedef struct tb_snap_region {
    uint32_t address;
    const uint8_t *data;
    size_t len;
} tb_snap_region;

typedef struct tb_snap_out_source {
    const char *name;            /* trace source device, e.g. "ETM_0" */
    const tb_config *cfg;        /* ETMCR, ETMIDR, ETMCCER, ETMTRACEIDR */
    const char *core;            /* core device, e.g. "cpu_0" */
    const char *core_type;       /* e.g. "Cortex-A7"; NULL: "Cortex-A15" */
    const tb_snap_region *regions; /* the core's memory dumps */
    size_t n_regions;
} tb_snap_out_source;

/* Writes a snapshot OpenCSD can read into dir (created if absent; files
 * of the same names are replaced): snapshot.ini, trace.ini, one ini per
 * core and per source, the dumps and the buffer "trace_buffer.bin" with
 * the given format ("coresight", "dstream_coresight", "tpiu_coresight"
 * (a tracebench name: FSYNCs and HSYNCs), or "source_data"
 * with exactly one source).  Sources naming the same core share it (the
 * first one's regions are written).  Returns 0 or a negative code with a
 * one-line reason in err. */
TB_API int tb_snapshot_write(const char *dir, const tb_snap_out_source *sources,
                      size_t n_sources, const uint8_t *buffer, size_t len,
                      const char *format, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif
