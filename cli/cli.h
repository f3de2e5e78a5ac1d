/* The tracebench command's subcommands, one file each (cli/cmd_*.c). */
#ifndef TB_CLI_H
#define TB_CLI_H

int tb_cli_packets(int argc, char **argv);
int tb_cli_decode(int argc, char **argv);
int tb_cli_sim(int argc, char **argv);
int tb_cli_roundtrip(int argc, char **argv);
int tb_cli_vectors(int argc, char **argv);

/* Parses "0x13" / "19" as a trace ID (0..0x7f); -1 when invalid. */
int tb_cli_parse_id(const char *s);

#endif
