/*
 * Scenario files: INI text that tells the simulator which CPU to model,
 * where to stop, which faults are expected and when interrupts arrive.
 * The keys are listed in vectors/programs/README.md.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracebench/sim.h"

void tb_scenario_init(tb_scenario *sc)
{
    memset(sc, 0, sizeof *sc);
    sc->cpu = TB_SIM_CPU_A15;
    snprintf(sc->exit, sizeof sc->exit, "_exit");
    sc->seed = 1;
}

static int perr(char *err, size_t errlen, unsigned line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int perr(char *err, size_t errlen, unsigned line, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        int n = snprintf(err, errlen, "line %u: ", line);

        va_start(ap, fmt);
        if (n >= 0 && (size_t)n < errlen)
            vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
        va_end(ap);
    }
    return TB_ERR_FORMAT;
}

static bool parse_u64(const char *v, uint64_t *out)
{
    char *end;

    if (!*v || *v == '-')
        return false;
    errno = 0;
    *out = strtoull(v, &end, 0);
    return errno == 0 && *end == '\0';
}

static bool parse_u32(const char *v, uint32_t *out)
{
    uint64_t x;

    if (!parse_u64(v, &x) || x > 0xFFFFFFFFull)
        return false;
    *out = (uint32_t)x;
    return true;
}

static int parse_bool(const char *v)
{
    if (!strcmp(v, "true") || !strcmp(v, "yes") || !strcmp(v, "1") ||
        !strcmp(v, "allow"))
        return 1;
    if (!strcmp(v, "false") || !strcmp(v, "no") || !strcmp(v, "0") ||
        !strcmp(v, "error"))
        return 0;
    return -1;
}

static char *trim(char *p)
{
    char *e;

    while (isspace((unsigned char)*p))
        p++;
    e = p + strlen(p);
    while (e > p && isspace((unsigned char)e[-1]))
        *--e = '\0';
    return p;
}

enum section { SEC_NONE, SEC_SIM, SEC_EVENT, SEC_SYSTICK };

const char *tb_sim_cpu_name(tb_sim_cpu c)
{
    switch (c) {
    case TB_SIM_CPU_A15: return "cortex-a15";
    case TB_SIM_CPU_A9: return "cortex-a9";
    case TB_SIM_CPU_A7: return "cortex-a7";
    case TB_SIM_CPU_M3: return "cortex-m3";
    case TB_SIM_CPU_M4: return "cortex-m4";
    }
    return "unknown";
}

static int sim_key(tb_scenario *sc, const char *k, char *v, unsigned ln,
                   char *err, size_t errlen)
{
    int b;

    if (!strcmp(k, "cpu")) {
        if (!strcmp(v, "cortex-a15") || !strcmp(v, "a15"))
            sc->cpu = TB_SIM_CPU_A15;
        else if (!strcmp(v, "cortex-a9") || !strcmp(v, "a9"))
            sc->cpu = TB_SIM_CPU_A9;
        else if (!strcmp(v, "cortex-a7") || !strcmp(v, "a7"))
            sc->cpu = TB_SIM_CPU_A7;
        else if (!strcmp(v, "cortex-m3") || !strcmp(v, "m3"))
            sc->cpu = TB_SIM_CPU_M3;
        else if (!strcmp(v, "cortex-m4") || !strcmp(v, "m4"))
            sc->cpu = TB_SIM_CPU_M4;
        else
            return perr(err, errlen, ln, "unknown cpu '%s' (cortex-a15, cortex-a9, "
                        "cortex-a7, cortex-m3, cortex-m4)", v);
    } else if (!strcmp(k, "max_insns")) {
        if (!parse_u64(v, &sc->max_insns))
            return perr(err, errlen, ln, "bad number '%s'", v);
        sc->has_max_insns = true;
    } else if (!strcmp(k, "seed")) {
        if (!parse_u64(v, &sc->seed))
            return perr(err, errlen, ln, "bad number '%s'", v);
    } else if (!strcmp(k, "exit")) {
        if (strlen(v) >= sizeof sc->exit)
            return perr(err, errlen, ln, "exit too long");
        snprintf(sc->exit, sizeof sc->exit, "%s", v);
        sc->exit_set = true;
    } else if (!strcmp(k, "high_vectors")) {
        if ((b = parse_bool(v)) < 0)
            return perr(err, errlen, ln, "bad boolean '%s'", v);
        sc->high_vectors = b;
    } else if (!strcmp(k, "secure")) {
        if ((b = parse_bool(v)) < 0)
            return perr(err, errlen, ln, "bad boolean '%s'", v);
        sc->secure = b;
    } else if (!strcmp(k, "vbar")) {
        if (!parse_u32(v, &sc->vbar) || (sc->vbar & 31))
            return perr(err, errlen, ln, "bad vbar '%s' (32-byte aligned)", v);
        sc->has_vbar = true;
    } else if (!strcmp(k, "undef") || !strcmp(k, "prefetch_abort") ||
               !strcmp(k, "data_abort")) {
        if ((b = parse_bool(v)) < 0)
            return perr(err, errlen, ln, "bad value '%s' (allow|error)", v);
        if (k[0] == 'u')
            sc->allow_undef = b;
        else if (k[0] == 'p')
            sc->allow_prefetch_abort = b;
        else
            sc->allow_data_abort = b;
    } else if (!strcmp(k, "map")) {
        char *sp = strpbrk(v, " \t,");
        uint32_t a, n;

        if (!sp)
            return perr(err, errlen, ln, "map needs 'ADDR SIZE'");
        *sp++ = '\0';
        if (!parse_u32(trim(v), &a) || !parse_u32(trim(sp), &n) || n == 0)
            return perr(err, errlen, ln, "bad map numbers");
        if (sc->n_maps >= TB_SCN_MAX_MAPS)
            return perr(err, errlen, ln, "too many maps");
        sc->maps[sc->n_maps].addr = a;
        sc->maps[sc->n_maps].size = n;
        sc->n_maps++;
    } else if (!strcmp(k, "fetch_wait")) {
        char *sp = strpbrk(v, " \t,");
        uint32_t c, a = 0, n = 0;

        if (sp)
            *sp++ = '\0';
        if (!parse_u32(trim(v), &c) || c == 0 || c > 1000)
            return perr(err, errlen, ln, "bad fetch_wait cycles '%s' (1..1000)", v);
        if (sp) {
            char *sz = strpbrk(trim(sp), " \t,");

            if (!sz)
                return perr(err, errlen, ln, "fetch_wait needs 'CYCLES' or 'CYCLES ADDR SIZE'");
            *sz++ = '\0';
            if (!parse_u32(trim(sp), &a) || !parse_u32(trim(sz), &n) || n == 0)
                return perr(err, errlen, ln, "bad fetch_wait range (ADDR SIZE, SIZE >= 1)");
        }
        if (sc->n_fetch_waits >= TB_SCN_MAX_MAPS)
            return perr(err, errlen, ln, "too many fetch_wait entries (at most %d)",
                        TB_SCN_MAX_MAPS);
        sc->fetch_waits[sc->n_fetch_waits].addr = a;
        sc->fetch_waits[sc->n_fetch_waits].size = sp ? n : 0; /* 0: anywhere */
        sc->fetch_waits[sc->n_fetch_waits].cycles = c;
        sc->n_fetch_waits++;
    } else {
        return perr(err, errlen, ln, "unknown key '%s' in [sim]", k);
    }
    return 0;
}

static int event_key(tb_scn_event *ev, const char *k, const char *v,
                     unsigned ln, char *err, size_t errlen)
{
    if (!strcmp(k, "at_insn")) {
        if (!parse_u64(v, &ev->at_insn))
            return perr(err, errlen, ln, "bad number '%s'", v);
        ev->has_insn = true;
    } else if (!strcmp(k, "at_addr")) {
        if (!*v || strlen(v) >= sizeof ev->at_addr)
            return perr(err, errlen, ln, "bad at_addr");
        snprintf(ev->at_addr, sizeof ev->at_addr, "%s", v);
    } else if (!strcmp(k, "hit")) {
        if (!parse_u32(v, &ev->hit) || ev->hit == 0)
            return perr(err, errlen, ln, "bad hit '%s' (>= 1)", v);
    } else if (!strcmp(k, "every")) {
        if (!parse_u64(v, &ev->every) || ev->every == 0)
            return perr(err, errlen, ln, "bad every '%s'", v);
    } else if (!strcmp(k, "count")) {
        if (!parse_u32(v, &ev->count))
            return perr(err, errlen, ln, "bad count '%s'", v);
    } else if (!strcmp(k, "cycles") && ev->kind == TB_EXC_DEBUG_HALT) {
        /* How long the core stays halted: the restart's cycle stamp, and
         * so its cycle count and timestamp, moves on by this much. */
        if (!parse_u32(v, &ev->halt_cycles) || ev->halt_cycles == 0 ||
            ev->halt_cycles > 1000000)
            return perr(err, errlen, ln, "bad cycles '%s' (1..1000000 cycles halted)", v);
    } else if (!strcmp(k, "unstack") && ev->kind != TB_EXC_FIQ &&
               ev->kind != TB_EXC_DEBUG_HALT) {
        int b = parse_bool(v);

        if (b < 0)
            return perr(err, errlen, ln, "bad boolean '%s' (unstack = true: the interrupt "
                        "arrives while the exception return of the instruction at "
                        "at_addr unstacks)", v);
        ev->unstack = b;
    } else if (!strcmp(k, "line") && ev->kind == TB_EXC_IRQ) {
        uint32_t n;

        /* v7-M: at most 496 external interrupts (IHI0014Q 7.5.1), of
         * which the Cortex-M3/M4 implement up to 240 (DDI0337G Table
         * 14-8): IRQ239 is exception 255. */
        if (!parse_u32(v, &n) || n > 239)
            return perr(err, errlen, ln, "bad line '%s' (0..239: exception 16 + line)", v);
        ev->line = (uint16_t)n;
        ev->has_line = true;
    } else if (!strcmp(k, "priority") && ev->kind != TB_EXC_FIQ &&
               ev->kind != TB_EXC_DEBUG_HALT) {
        uint32_t n;

        if (ev->kind == TB_EXC_V7M)
            return perr(err, errlen, ln, "the NMI's priority is fixed (-2): no priority key");
        if (!parse_u32(v, &n) || n > 255)
            return perr(err, errlen, ln, "bad priority '%s' (0..255, lower is more urgent)", v);
        ev->priority = (uint8_t)n;
        ev->has_priority = true;
    } else {
        return perr(err, errlen, ln, "unknown key '%s' in event", k);
    }
    return 0;
}

static int systick_key(tb_scenario *sc, const char *k, const char *v, unsigned ln, char *err,
                       size_t errlen)
{
    if (!strcmp(k, "every")) {
        /* SYST_RVR holds 24 bits: a period of at most 2^24 counts. */
        if (!parse_u64(v, &sc->systick_every) || sc->systick_every == 0 ||
            sc->systick_every > (1u << 24))
            return perr(err, errlen, ln, "bad every '%s' (1..16777216 instructions)", v);
    } else if (!strcmp(k, "count")) {
        if (!parse_u32(v, &sc->systick_count))
            return perr(err, errlen, ln, "bad count '%s'", v);
    } else {
        return perr(err, errlen, ln, "unknown key '%s' in [systick] (every, count)", k);
    }
    return 0;
}

int tb_scenario_parse(tb_scenario *sc, const char *text, size_t len,
                      char *err, size_t errlen)
{
    enum section sec = SEC_NONE;
    tb_scn_event *ev = NULL;
    unsigned ln = 0;
    size_t pos = 0;
    char line[512];

    if (!sc || (!text && len))
        return TB_ERR_INVAL;
    if (err && errlen)
        err[0] = '\0';
    while (pos < len) {
        size_t e = pos, n;
        char *p, *eq;
        int rc;

        while (e < len && text[e] != '\n')
            e++;
        n = e - pos;
        ln++;
        if (n >= sizeof line)
            return perr(err, errlen, ln, "line too long");
        memcpy(line, text + pos, n);
        line[n] = '\0';
        pos = e + 1;
        if (memchr(line, '\0', n))
            return perr(err, errlen, ln, "NUL byte");
        if ((p = strpbrk(line, ";#")) != NULL)
            *p = '\0';
        p = trim(line);
        if (!*p)
            continue;
        if (*p == '[') {
            char *close = strchr(p, ']');

            if (!close || close[1])
                return perr(err, errlen, ln, "bad section header");
            *close = '\0';
            p = trim(p + 1);
            if (!strcmp(p, "sim")) {
                sec = SEC_SIM;
            } else if (!strcmp(p, "irq") || !strcmp(p, "fiq") || !strcmp(p, "nmi") ||
                       !strcmp(p, "debug")) {
                if (ev && !ev->has_insn && !ev->at_addr[0])
                    return perr(err, errlen, ln, "previous event has no at_insn/at_addr");
                if (sc->n_events >= TB_SCN_MAX_EVENTS)
                    return perr(err, errlen, ln, "too many events");
                ev = &sc->events[sc->n_events++];
                memset(ev, 0, sizeof *ev);
                ev->kind = p[0] == 'i'   ? TB_EXC_IRQ
                           : p[0] == 'f' ? TB_EXC_FIQ
                           : p[0] == 'd' ? TB_EXC_DEBUG_HALT
                                         : TB_EXC_V7M;
                ev->count = 1;
                ev->hit = 1;
                ev->halt_cycles = 100;
                sec = SEC_EVENT;
            } else if (!strcmp(p, "systick")) {
                if (ev && !ev->has_insn && !ev->at_addr[0])
                    return perr(err, errlen, ln, "previous event has no at_insn/at_addr");
                ev = NULL;
                sec = SEC_SYSTICK;
            } else {
                return perr(err, errlen, ln, "unknown section [%s] (sim, irq, fiq, nmi, debug, systick)", p);
            }
            continue;
        }
        eq = strchr(p, '=');
        if (!eq)
            return perr(err, errlen, ln, "expected key = value");
        *eq = '\0';
        if (sec == SEC_NONE)
            return perr(err, errlen, ln, "key outside a section");
        rc = sec == SEC_SIM       ? sim_key(sc, trim(p), trim(eq + 1), ln, err, errlen)
             : sec == SEC_SYSTICK ? systick_key(sc, trim(p), trim(eq + 1), ln, err, errlen)
                                  : event_key(ev, trim(p), trim(eq + 1), ln, err, errlen);
        if (rc)
            return rc;
    }
    if (ev && !ev->has_insn && !ev->at_addr[0])
        return perr(err, errlen, ln, "event has no at_insn/at_addr");
    for (unsigned i = 0; i < sc->n_events; i++)
        if (sc->events[i].unstack && (!sc->events[i].at_addr[0] || sc->events[i].has_insn))
            return perr(err, errlen, ln, "unstack = true needs at_addr (the instruction whose "
                        "exception return it arrives during) and no at_insn");
    return 0;
}

int tb_scenario_load(tb_scenario *sc, const char *path, char *err,
                     size_t errlen)
{
    FILE *f;
    char *buf;
    long n;
    int rc;

    if (!sc || !path)
        return TB_ERR_INVAL;
    f = fopen(path, "rb");
    if (!f) {
        if (err && errlen)
            snprintf(err, errlen, "cannot open %s", path);
        return TB_ERR_IO;
    }
    if (fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 || n > (1 << 20) ||
        fseek(f, 0, SEEK_SET)) {
        fclose(f);
        if (err && errlen)
            snprintf(err, errlen, "%s: cannot read (or larger than 1 MiB)", path);
        return TB_ERR_IO;
    }
    buf = malloc((size_t)n + 1);
    if (!buf) {
        fclose(f);
        return TB_ERR_NOMEM;
    }
    if (fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        fclose(f);
        return TB_ERR_IO;
    }
    fclose(f);
    rc = tb_scenario_parse(sc, buf, (size_t)n, err, errlen);
    free(buf);
    return rc;
}

tb_sim_cpu tb_scenario_cpu(const char *path)
{
    tb_scenario sc;
    char err[256];

    tb_scenario_init(&sc);
    if (path && tb_scenario_load(&sc, path, err, sizeof err) < 0)
        return TB_SIM_CPU_A15;
    return sc.cpu;
}
