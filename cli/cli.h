/* The tracebench command's subcommands, one file each (cli/cmd_*.c). */
#ifndef TB_CLI_H
#define TB_CLI_H

#include <stdbool.h>
#include <stdio.h>

#include "tracebench/decoder.h"

int tb_cli_packets(int argc, char **argv);
int tb_cli_decode(int argc, char **argv);
int tb_cli_sim(int argc, char **argv);
int tb_cli_roundtrip(int argc, char **argv);
int tb_cli_vectors(int argc, char **argv);
/* `vectors --coverage` (cli/vectors_coverage.c), with vectors' argv. */
int tb_cli_vectors_coverage(int argc, char **argv);

/* Parses "0x13" / "19" as a trace ID (0..0x7f); -1 when invalid. */
int tb_cli_parse_id(const char *s);

/* The `addr` format (cli/addr_out.c): one line per executed instruction
 * of each element, into f, and `# gap WHY` lines; ptm: the trace is PTM
 * (E/N on waypoints only); addrs/cap is scratch space (free() it).  Zero
 * the rest.  Returns 0, or the error, which also stays in err. */
typedef struct tb_cli_addr_out {
    FILE *f;
    const tb_memimage *mem;
    bool ptm;
    uint32_t *addrs;
    size_t cap;
    int err;
    const char *gap;  /* marker waiting for the next instruction */
    bool shown;       /* an instruction was printed */
} tb_cli_addr_out;
int tb_cli_addr_element(tb_cli_addr_out *o, const tb_element *el);

#endif
