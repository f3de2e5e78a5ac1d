/*
 * Unicorn and Capstone, loaded when first used: the command line links
 * these definitions of the few functions it calls instead of the two
 * libraries, so that a `decode` never maps or relocates them.  Linked in
 * the ordinary way they cost each run of the tool about 6 ms of dynamic
 * loading (Unicorn alone is 19 MB with QEMU's constructors) against
 * about 1 ms for a whole decode of a real trace.
 *
 * Each library is opened (dlopen, by the soname CMake found it under:
 * TB_UNICORN_SONAME, TB_CAPSTONE_SONAME) on the first call of any of its
 * functions, once per process (pthread_once), and its functions looked
 * up then.  If it cannot be loaded, stderr says which library and why
 * (once), and the call that needed it fails with the library's own error
 * code (uc_open: UC_ERR_ARCH, cs_open: CS_ERR_ARCH), which the command
 * reports as usual.
 *
 * The variadic uc_hook_add and uc_ctl are forwarded for the cases
 * tracebench uses: hooks without variable arguments (not UC_HOOK_INSN or
 * UC_HOOK_TCG_OPCODE), the CPU model (uc_ctl_set_cpu_model), the page
 * size (uc_ctl_get_page_size) and the translation cache
 * (uc_ctl_remove_cache, uc_ctl_request_cache); others
 * return UC_ERR_ARG rather than pass arguments whose types are unknown
 * here.  Not for the library: only the command line's link uses it.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <capstone/capstone.h>
#include <unicorn/unicorn.h>

/* ---- Unicorn ---- */

static struct {
    pthread_once_t once;
    void *lib;
    char why[256];
    uc_err (*open)(uc_arch, uc_mode, uc_engine **);
    uc_err (*close)(uc_engine *);
    uc_err (*ctl)(uc_engine *, uc_control_type, ...);
    const char *(*strerror)(uc_err);
    uc_err (*reg_write)(uc_engine *, int, const void *);
    uc_err (*reg_read)(uc_engine *, int, void *);
    uc_err (*mem_write)(uc_engine *, uint64_t, const void *, size_t);
    uc_err (*mem_read)(uc_engine *, uint64_t, void *, size_t);
    uc_err (*emu_start)(uc_engine *, uint64_t, uint64_t, uint64_t, size_t);
    uc_err (*emu_stop)(uc_engine *);
    uc_err (*hook_add)(uc_engine *, uc_hook *, int, void *, void *, uint64_t, uint64_t, ...);
    uc_err (*hook_del)(uc_engine *, uc_hook);
    uc_err (*mem_map)(uc_engine *, uint64_t, size_t, uint32_t);
    uc_err (*context_alloc)(uc_engine *, uc_context **);
    uc_err (*context_save)(uc_engine *, uc_context *);
    uc_err (*context_restore)(uc_engine *, uc_context *);
    uc_err (*context_free)(uc_context *);
    uc_err (*mmio_map)(uc_engine *, uint64_t, size_t, uc_cb_mmio_read_t, void *,
                       uc_cb_mmio_write_t, void *);
    uc_err (*mem_regions)(uc_engine *, uc_mem_region **, uint32_t *);
    uc_err (*mem_unmap)(uc_engine *, uint64_t, size_t);
    uc_err (*mem_protect)(uc_engine *, uint64_t, size_t, uint32_t);
    uc_err (*free)(void *);
} uc = {.once = PTHREAD_ONCE_INIT};

/* dlsym's object pointer as a function pointer (POSIX allows it). */
#define LOOKUP(lib, dst, name)                                                        \
    do {                                                                              \
        void *p_ = dlsym((lib), (name));                                              \
        if (!p_)                                                                      \
            ok = false;                                                               \
        memcpy(&(dst), &p_, sizeof p_);                                               \
    } while (0)

static void uc_load(void)
{
    bool ok = true;

    uc.lib = dlopen(TB_UNICORN_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!uc.lib) {
        snprintf(uc.why, sizeof uc.why, "cannot load %s, which the simulator needs (%s): "
                 "install Unicorn 2 (Debian: libunicorn2)", TB_UNICORN_SONAME, dlerror());
        fprintf(stderr, "tracebench: %s\n", uc.why);
        return;
    }
    LOOKUP(uc.lib, uc.open, "uc_open");
    LOOKUP(uc.lib, uc.close, "uc_close");
    LOOKUP(uc.lib, uc.ctl, "uc_ctl");
    LOOKUP(uc.lib, uc.strerror, "uc_strerror");
    LOOKUP(uc.lib, uc.reg_write, "uc_reg_write");
    LOOKUP(uc.lib, uc.reg_read, "uc_reg_read");
    LOOKUP(uc.lib, uc.mem_write, "uc_mem_write");
    LOOKUP(uc.lib, uc.mem_read, "uc_mem_read");
    LOOKUP(uc.lib, uc.emu_start, "uc_emu_start");
    LOOKUP(uc.lib, uc.emu_stop, "uc_emu_stop");
    LOOKUP(uc.lib, uc.hook_add, "uc_hook_add");
    LOOKUP(uc.lib, uc.hook_del, "uc_hook_del");
    LOOKUP(uc.lib, uc.mem_map, "uc_mem_map");
    LOOKUP(uc.lib, uc.context_alloc, "uc_context_alloc");
    LOOKUP(uc.lib, uc.context_save, "uc_context_save");
    LOOKUP(uc.lib, uc.context_restore, "uc_context_restore");
    LOOKUP(uc.lib, uc.context_free, "uc_context_free");
    LOOKUP(uc.lib, uc.mmio_map, "uc_mmio_map");
    LOOKUP(uc.lib, uc.mem_regions, "uc_mem_regions");
    LOOKUP(uc.lib, uc.mem_unmap, "uc_mem_unmap");
    LOOKUP(uc.lib, uc.mem_protect, "uc_mem_protect");
    LOOKUP(uc.lib, uc.free, "uc_free");
    if (!ok) {
        snprintf(uc.why, sizeof uc.why, "%s lacks a function tracebench needs (%s): "
                 "install Unicorn 2 (Debian: libunicorn2)", TB_UNICORN_SONAME, dlerror());
        fprintf(stderr, "tracebench: %s\n", uc.why);
        dlclose(uc.lib);
        uc.lib = NULL;
    }
}

static bool uc_loaded(void)
{
    pthread_once(&uc.once, uc_load);
    return uc.lib != NULL;
}

uc_err uc_open(uc_arch arch, uc_mode mode, uc_engine **engine)
{
    if (!uc_loaded())
        return UC_ERR_ARCH;
    return uc.open(arch, mode, engine);
}

const char *uc_strerror(uc_err code)
{
    if (!uc_loaded())
        return uc.why;
    return uc.strerror(code);
}

/* The rest need an engine, which only a loaded library gives. */
uc_err uc_close(uc_engine *e)
{
    return uc_loaded() ? uc.close(e) : UC_ERR_HANDLE;
}

uc_err uc_ctl(uc_engine *e, uc_control_type control, ...)
{
    va_list ap;
    int model;
    /* UC_CTL_READ_WRITE shifts an int 3 by 30: built unsigned here. */
    const uc_control_type request_cache =
        (uc_control_type)((uint32_t)UC_CTL_TB_REQUEST_CACHE | (2u << 26) |
                          ((uint32_t)UC_CTL_IO_READ_WRITE << 30));
    /* UC_CTL_READ shifts an int 2 by 30 as well (sim/mpu.c's page size). */
    const uc_control_type page_size =
        (uc_control_type)((uint32_t)UC_CTL_UC_PAGE_SIZE | (1u << 26) |
                          ((uint32_t)UC_CTL_IO_READ << 30));

    if (!uc_loaded())
        return UC_ERR_HANDLE;
    if (control == UC_CTL_WRITE(UC_CTL_TB_REMOVE_CACHE, 2) || control == request_cache) {
        /* sim/hooks.c tb_sim_retranslate: an address (uint64_t) and an
         * end address (uint64_t) or a uc_tb pointer. */
        uint64_t addr;
        uc_err r;

        va_start(ap, control);
        addr = va_arg(ap, uint64_t);
        if (control == UC_CTL_WRITE(UC_CTL_TB_REMOVE_CACHE, 2))
            r = uc.ctl(e, control, addr, va_arg(ap, uint64_t));
        else
            r = uc.ctl(e, control, addr, va_arg(ap, uc_tb *));
        va_end(ap);
        return r;
    }
    if (control == page_size) {
        /* sim/mpu.c: the page size (a uint32_t pointer). */
        uint32_t *ps;

        va_start(ap, control);
        ps = va_arg(ap, uint32_t *);
        va_end(ap);
        return uc.ctl(e, control, ps);
    }
    if (control != UC_CTL_WRITE(UC_CTL_CPU_MODEL, 1))
        return UC_ERR_ARG;
    va_start(ap, control);
    model = va_arg(ap, int);
    va_end(ap);
    return uc.ctl(e, control, model);
}

uc_err uc_reg_write(uc_engine *e, int regid, const void *value)
{
    return uc_loaded() ? uc.reg_write(e, regid, value) : UC_ERR_HANDLE;
}

uc_err uc_reg_read(uc_engine *e, int regid, void *value)
{
    return uc_loaded() ? uc.reg_read(e, regid, value) : UC_ERR_HANDLE;
}

uc_err uc_mem_write(uc_engine *e, uint64_t address, const void *bytes, size_t size)
{
    return uc_loaded() ? uc.mem_write(e, address, bytes, size) : UC_ERR_HANDLE;
}

uc_err uc_mem_read(uc_engine *e, uint64_t address, void *bytes, size_t size)
{
    return uc_loaded() ? uc.mem_read(e, address, bytes, size) : UC_ERR_HANDLE;
}

uc_err uc_emu_start(uc_engine *e, uint64_t begin, uint64_t until, uint64_t timeout,
                    size_t count)
{
    return uc_loaded() ? uc.emu_start(e, begin, until, timeout, count) : UC_ERR_HANDLE;
}

uc_err uc_emu_stop(uc_engine *e)
{
    return uc_loaded() ? uc.emu_stop(e) : UC_ERR_HANDLE;
}

uc_err uc_hook_add(uc_engine *e, uc_hook *hh, int type, void *callback, void *user_data,
                   uint64_t begin, uint64_t end, ...)
{
    if (!uc_loaded())
        return UC_ERR_HANDLE;
    if (type & (UC_HOOK_INSN | UC_HOOK_TCG_OPCODE))
        return UC_ERR_ARG; /* these take variable arguments */
    return uc.hook_add(e, hh, type, callback, user_data, begin, end);
}

uc_err uc_hook_del(uc_engine *e, uc_hook hh)
{
    return uc_loaded() ? uc.hook_del(e, hh) : UC_ERR_HANDLE;
}

uc_err uc_mem_map(uc_engine *e, uint64_t address, size_t size, uint32_t perms)
{
    return uc_loaded() ? uc.mem_map(e, address, size, perms) : UC_ERR_HANDLE;
}

uc_err uc_context_alloc(uc_engine *e, uc_context **context)
{
    return uc_loaded() ? uc.context_alloc(e, context) : UC_ERR_HANDLE;
}

uc_err uc_context_save(uc_engine *e, uc_context *context)
{
    return uc_loaded() ? uc.context_save(e, context) : UC_ERR_HANDLE;
}

uc_err uc_context_restore(uc_engine *e, uc_context *context)
{
    return uc_loaded() ? uc.context_restore(e, context) : UC_ERR_HANDLE;
}

uc_err uc_context_free(uc_context *context)
{
    return uc_loaded() ? uc.context_free(context) : UC_ERR_HANDLE;
}

/* The Cortex-M system control space (sim/scs.c). */
uc_err uc_mmio_map(uc_engine *e, uint64_t address, size_t size, uc_cb_mmio_read_t read_cb,
                   void *user_data_read, uc_cb_mmio_write_t write_cb, void *user_data_write)
{
    return uc_loaded() ? uc.mmio_map(e, address, size, read_cb, user_data_read, write_cb,
                                     user_data_write)
                       : UC_ERR_HANDLE;
}

/* tb_sim_rewind (sim/sim.c). */
uc_err uc_mem_regions(uc_engine *e, uc_mem_region **regions, uint32_t *count)
{
    return uc_loaded() ? uc.mem_regions(e, regions, count) : UC_ERR_HANDLE;
}

uc_err uc_mem_unmap(uc_engine *e, uint64_t address, size_t size)
{
    return uc_loaded() ? uc.mem_unmap(e, address, size) : UC_ERR_HANDLE;
}

/* The Cortex-M MPU's regions as page protections (sim/mpu.c). */
uc_err uc_mem_protect(uc_engine *e, uint64_t address, size_t size, uint32_t perms)
{
    return uc_loaded() ? uc.mem_protect(e, address, size, perms) : UC_ERR_HANDLE;
}

uc_err uc_free(void *mem)
{
    return uc_loaded() ? uc.free(mem) : UC_ERR_HANDLE;
}

/* ---- Capstone (--format disasm) ---- */

static struct {
    pthread_once_t once;
    void *lib;
    cs_err (*open)(cs_arch, cs_mode, csh *);
    cs_err (*close)(csh *);
    void (*free)(cs_insn *, size_t);
    cs_insn *(*malloc)(csh);
    bool (*disasm_iter)(csh, const uint8_t **, size_t *, uint64_t *, cs_insn *);
} cs = {.once = PTHREAD_ONCE_INIT};

static void cs_load(void)
{
    bool ok = true;

    cs.lib = dlopen(TB_CAPSTONE_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!cs.lib) {
        fprintf(stderr, "tracebench: cannot load %s, which --disasm needs (%s): install "
                "Capstone 4 (Debian: libcapstone4)\n", TB_CAPSTONE_SONAME, dlerror());
        return;
    }
    LOOKUP(cs.lib, cs.open, "cs_open");
    LOOKUP(cs.lib, cs.close, "cs_close");
    LOOKUP(cs.lib, cs.free, "cs_free");
    LOOKUP(cs.lib, cs.malloc, "cs_malloc");
    LOOKUP(cs.lib, cs.disasm_iter, "cs_disasm_iter");
    if (!ok) {
        fprintf(stderr, "tracebench: %s lacks a function tracebench needs (%s): install "
                "Capstone 4 (Debian: libcapstone4)\n", TB_CAPSTONE_SONAME, dlerror());
        dlclose(cs.lib);
        cs.lib = NULL;
    }
}

static bool cs_loaded(void)
{
    pthread_once(&cs.once, cs_load);
    return cs.lib != NULL;
}

cs_err CAPSTONE_API cs_open(cs_arch arch, cs_mode mode, csh *handle)
{
    return cs_loaded() ? cs.open(arch, mode, handle) : CS_ERR_ARCH;
}

cs_err CAPSTONE_API cs_close(csh *handle)
{
    return cs_loaded() ? cs.close(handle) : CS_ERR_HANDLE;
}

void CAPSTONE_API cs_free(cs_insn *insn, size_t count)
{
    if (cs_loaded())
        cs.free(insn, count);
}

cs_insn *CAPSTONE_API cs_malloc(csh handle)
{
    return cs_loaded() ? cs.malloc(handle) : NULL;
}

bool CAPSTONE_API cs_disasm_iter(csh handle, const uint8_t **code, size_t *size,
                                 uint64_t *address, cs_insn *insn)
{
    return cs_loaded() && cs.disasm_iter(handle, code, size, address, insn);
}
