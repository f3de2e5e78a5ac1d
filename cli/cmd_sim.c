/* tracebench sim PROGRAM [--scenario S.ini] [--truth FILE] [--format text|json]
 *                        [--cpu a15|a9|a7] [--raw ADDR] [--max N]
 * Runs PROGRAM (ELF, or a raw image at ADDR) and writes the ground truth. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracebench/sim.h"

int tb_cli_sim(int argc, char **argv);

#ifdef TB_HAVE_SIM

struct truth_out {
    FILE *f;
    bool json;
    int err;
};

static int on_record(void *ctx, const tb_exec_record *r)
{
    struct truth_out *o = ctx;
    char line[512];
    int n = o->json ? tb_truth_format_json(r, line, sizeof line)
                    : tb_truth_format_text(r, line, sizeof line);

    if (n < 0 || fprintf(o->f, "%s\n", line) < 0) {
        o->err = 1;
        return 1;
    }
    return 0;
}

static int usage(void)
{
    fprintf(stderr, "usage: tracebench sim PROGRAM [--scenario S.ini] [--truth FILE]\n"
                    "       [--format text|json] [--cpu a15|a9|a7] [--raw ADDR] [--max N]\n");
    return 2;
}

static uint8_t *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    uint8_t *buf = NULL;
    long n;

    if (!f)
        return NULL;
    if (!fseek(f, 0, SEEK_END) && (n = ftell(f)) >= 0 && !fseek(f, 0, SEEK_SET)) {
        buf = malloc((size_t)n + 1);
        if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
            free(buf);
            buf = NULL;
        }
        *len = (size_t)n;
    }
    fclose(f);
    return buf;
}

int tb_cli_sim(int argc, char **argv)
{
    const char *prog = NULL, *scn = NULL, *truth = NULL, *cpu = NULL;
    struct truth_out o = {NULL, false, 0};
    bool raw = false;
    uint32_t raw_addr = 0;
    uint64_t max = 0;
    tb_scenario sc;
    tb_sim_result res;
    tb_sim *s;
    char err[256];
    int rc;

    for (int i = 1; i < argc; i++) {
        char *end;

        if (!strcmp(argv[i], "--scenario") && i + 1 < argc) {
            scn = argv[++i];
        } else if (!strcmp(argv[i], "--truth") && i + 1 < argc) {
            truth = argv[++i];
        } else if (!strcmp(argv[i], "--format") && i + 1 < argc) {
            const char *f = argv[++i];

            if (!strcmp(f, "json"))
                o.json = true;
            else if (strcmp(f, "text"))
                return usage();
        } else if (!strcmp(argv[i], "--cpu") && i + 1 < argc) {
            cpu = argv[++i];
        } else if (!strcmp(argv[i], "--raw") && i + 1 < argc) {
            unsigned long long v = strtoull(argv[++i], &end, 0);

            if (*end || v > 0xFFFFFFFFull)
                return usage();
            raw = true;
            raw_addr = (uint32_t)v;
        } else if (!strcmp(argv[i], "--max") && i + 1 < argc) {
            max = strtoull(argv[++i], &end, 0);
            if (*end)
                return usage();
        } else if (argv[i][0] == '-' || prog) {
            return usage();
        } else {
            prog = argv[i];
        }
    }
    if (!prog)
        return usage();
    tb_scenario_init(&sc);
    if (scn && (rc = tb_scenario_load(&sc, scn, err, sizeof err)) < 0) {
        fprintf(stderr, "tracebench sim: %s: %s\n", scn, err);
        return 1;
    }
    if (cpu) {
        char text[64];

        snprintf(text, sizeof text, "[sim]\ncpu = %s\n", cpu);
        if (tb_scenario_parse(&sc, text, strlen(text), err, sizeof err) < 0) {
            fprintf(stderr, "tracebench sim: --cpu: %s\n", err);
            return 2;
        }
    }
    if (max)
        sc.max_insns = max;
    s = tb_sim_new(sc.cpu);
    if (!s) {
        fprintf(stderr, "tracebench sim: cannot start the emulator\n");
        return 1;
    }
    if (raw) {
        size_t len = 0;
        uint8_t *img = read_all(prog, &len);

        rc = img ? tb_sim_load_raw(s, img, len, raw_addr) : TB_ERR_IO;
        free(img);
    } else {
        rc = tb_sim_load_elf_file(s, prog);
    }
    if (rc >= 0)
        rc = tb_sim_set_scenario(s, &sc);
    if (rc < 0) {
        fprintf(stderr, "tracebench sim: %s: %s (%s)\n", prog, tb_err_str(rc),
                tb_sim_errmsg(s));
        tb_sim_free(s);
        return 1;
    }
    if (truth) {
        o.f = strcmp(truth, "-") ? fopen(truth, "w") : stdout;
        if (!o.f) {
            fprintf(stderr, "tracebench sim: cannot write %s\n", truth);
            tb_sim_free(s);
            return 1;
        }
    }
    rc = tb_sim_run(s, o.f ? on_record : NULL, &o, &res);
    if (o.f && o.f != stdout && fclose(o.f))
        o.err = 1;
    if (rc < 0) {
        fprintf(stderr, "tracebench sim: %s: %s: %s\n", prog, tb_err_str(rc),
                tb_sim_errmsg(s));
        tb_sim_free(s);
        return 1;
    }
    fprintf(stderr, "stop=%s at 0x%08x insns=%llu cycles=%llu exceptions=%llu\n",
            tb_sim_stop_name(res.stop), res.stop_addr, (unsigned long long)res.insns,
            (unsigned long long)res.cycles, (unsigned long long)res.exceptions);
    tb_sim_free(s);
    if (o.err) {
        fprintf(stderr, "tracebench sim: error writing the truth\n");
        return 1;
    }
    return 0;
}

#else

int tb_cli_sim(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "tracebench sim: built without the simulator\n");
    return 1;
}

#endif
