/* The simulated cpu on the command line (sim, roundtrip): --cpu over
 * the scenario's, and what a Cortex-M means for the trace (its ETM-M3/M4:
 * ETMv3 only, tb_encoder_opts_v7m; docs/cortex-m.md). */
#include <stdio.h>
#include <string.h>

#include "cli.h"

#ifdef TB_HAVE_SIM

#include "tracebench/encoder.h"
#include "tracebench/sim.h"

int tb_cli_cpu_parse(const char *cmd, const char *v, tb_sim_cpu *cpu)
{
    static const struct { const char *name; tb_sim_cpu cpu; } cpus[] = {
        {"cortex-a15", TB_SIM_CPU_A15}, {"a15", TB_SIM_CPU_A15},
        {"cortex-a9", TB_SIM_CPU_A9},   {"a9", TB_SIM_CPU_A9},
        {"cortex-a7", TB_SIM_CPU_A7},   {"a7", TB_SIM_CPU_A7},
        {"cortex-m3", TB_SIM_CPU_M3},   {"m3", TB_SIM_CPU_M3},
        {"cortex-m4", TB_SIM_CPU_M4},   {"m4", TB_SIM_CPU_M4},
    };

    for (size_t i = 0; i < sizeof cpus / sizeof cpus[0]; i++)
        if (!strcmp(v, cpus[i].name)) {
            *cpu = cpus[i].cpu;
            return 0;
        }
    tb_cli_usage_error(cmd, "--cpu %s: unknown cpu; accepted: a15, a9, a7, m3, m4 (or "
                       "cortex-a15 ... cortex-m4)", v);
    return -1;
}

tb_sim_cpu tb_cli_cpu_of(const char *scenario, bool has_cpu, tb_sim_cpu cpu)
{
    return has_cpu ? cpu : tb_scenario_cpu(scenario);
}

int tb_cli_cpu_protocol(const char *cmd, tb_sim_cpu cpu, const char *proto)
{
    if (!tb_sim_cpu_is_m(cpu) || !proto || !strcmp(proto, "etmv3"))
        return 0;
    tb_cli_usage_error(cmd, "--protocol %s: a %s is traced by its ETM-%s, which speaks "
                       "ETMv3 only (IHI0014Q 7.5); accepted: etmv3", proto,
                       cpu == TB_SIM_CPU_M4 ? "Cortex-M4" : "Cortex-M3",
                       cpu == TB_SIM_CPU_M4 ? "M4" : "M3");
    return -1;
}

int tb_cli_cpu_options(const char *cmd, tb_sim_cpu cpu, tb_encoder_opts *o)
{
    tb_encoder_opts t;
    tb_config cfg;
    char err[256];

    if (!tb_sim_cpu_is_m(cpu))
        return 0;
    tb_encoder_opts_v7m(o, cpu == TB_SIM_CPU_M4 ? 4 : 3);
    t = *o;
    if (tb_encoder_config_err(&t, &cfg, err, sizeof err) < 0) {
        tb_cli_usage_error(cmd, "--options: not for a %s's ETM: %s", tb_sim_cpu_name(cpu),
                           err);
        return -1;
    }
    return 0;
}

#endif
