/*
 * The docs match the tool (issue 31 item 7): for every command, each
 * option its `--help` prints is in its part of the man page
 * (docs/tracebench.1: its SYNOPSIS lines, its COMMANDS subsection, and
 * RAW TRACE FILES for packets, decode and stats) and of README.md's
 * command table, and each option those name is in its `--help`.  The man
 * page listed only ptm/etmv3 and missed --vcd, --disasm, --quiet and the
 * data options; `stats --help` was one line.
 *
 * Also: every command of `tracebench --help` has its subsection and its
 * table line, and the exit codes of `tracebench --help`, the README's
 * table and the man page's EXIT STATUS are the same list.
 */
#include <criterion/criterion.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tb_test.h"

#define MAX_OPTS 64

typedef struct optset {
    char v[MAX_OPTS][24];
    size_t n;
} optset;

static void add(optset *s, const char *o, size_t len)
{
    if (len >= sizeof s->v[0])
        len = sizeof s->v[0] - 1;
    for (size_t i = 0; i < s->n; i++)
        if (strlen(s->v[i]) == len && !strncmp(s->v[i], o, len))
            return;
    cr_assert_lt(s->n, MAX_OPTS);
    memcpy(s->v[s->n], o, len);
    s->v[s->n][len] = '\0';
    s->n++;
}

static bool has(const optset *s, const char *o)
{
    for (size_t i = 0; i < s->n; i++)
        if (!strcmp(s->v[i], o))
            return true;
    return false;
}

/* Every "--name" in text (letters, digits, '-'), but --help/-h. */
static void options_in(const char *text, optset *s)
{
    for (const char *p = text; (p = strstr(p, "--")); ) {
        const char *e = p + 2;

        if (p > text && (isalnum((unsigned char)p[-1]) || p[-1] == '-')) {
            p = e;
            continue;
        }
        while (isalnum((unsigned char)*e) || *e == '-')
            e++;
        if (e > p + 2 && isalpha((unsigned char)p[2]) &&
            !(e - p == 6 && !strncmp(p, "--help", 6)))
            add(s, p, (size_t)(e - p));
        p = e;
    }
}

/* The man page as plain text: \- is -, font escapes go. */
static char *man_text(void)
{
    char path[1024];
    char *raw, *out, *o;

    snprintf(path, sizeof path, "%s/docs/tracebench.1", TB_SOURCE_DIR);
    raw = tb_test_slurp(path, NULL);
    out = malloc(strlen(raw) + 1);
    cr_assert_not_null(out);
    o = out;
    for (const char *p = raw; *p; p++) {
        if (p[0] == '\\' && p[1] == '-') {
            *o++ = '-';
            p++;
        } else if (p[0] == '\\' && p[1] == 'f' && p[2]) {
            p += 2;
        } else if (p[0] == '\\' && p[1] == '(' && p[2] && p[3]) {
            p += 3;
        } else {
            *o++ = *p;
        }
    }
    *o = '\0';
    free(raw);
    return out;
}

/* A copy of text[from, to) (to NULL: the end). */
static char *slice(const char *from, const char *to)
{
    size_t n = to ? (size_t)(to - from) : strlen(from);
    char *s = malloc(n + 1);

    cr_assert_not_null(s);
    memcpy(s, from, n);
    s[n] = '\0';
    return s;
}

static bool raw_file_cmd(const char *cmd)
{
    return !strcmp(cmd, "packets") || !strcmp(cmd, "decode") || !strcmp(cmd, "stats");
}

/* The man page's options for cmd: its .SY blocks, its .SS subsection, and
 * RAW TRACE FILES for the three commands that read a FILE. */
static void man_options(const char *man, const char *cmd, optset *s)
{
    char head[64];
    const char *p, *e;

    /* SYNOPSIS: ".SY tracebench\n.B CMD" up to ".YS". */
    snprintf(head, sizeof head, ".SY tracebench\n.B %s", cmd);
    for (p = man; (p = strstr(p, head)); p = e) {
        const char *after = p + strlen(head);
        char *block;

        e = strstr(after, ".YS");
        cr_assert_not_null(e);
        if (*after != '\n' && *after != ' ')
            continue; /* another command sharing a prefix */
        block = slice(p, e);
        options_in(block, s);
        free(block);
    }
    snprintf(head, sizeof head, "\n.SS %s\n", cmd);
    p = strstr(man, head);
    cr_assert_not_null(p, "the man page has no \".SS %s\" subsection", cmd);
    p += strlen(head);
    e = strstr(p, "\n.SS ");
    {
        const char *sh = strstr(p, "\n.SH ");

        if (!e || (sh && sh < e))
            e = sh;
    }
    {
        char *sec = slice(p, e);

        options_in(sec, s);
        free(sec);
    }
    if (raw_file_cmd(cmd)) {
        char *sec;

        p = strstr(man, "\n.SH RAW TRACE FILES\n");
        cr_assert_not_null(p);
        e = strstr(p + 1, "\n.SH ");
        sec = slice(p, e);
        options_in(sec, s);
        free(sec);
    }
}

/* The README's options for cmd: the entries of the command table (the
 * code block after "## Commands") whose line "tracebench A|B ..." names
 * cmd, with their continuation lines. */
static void readme_options(const char *readme, const char *cmd, optset *s, unsigned *entries)
{
    const char *p = strstr(readme, "\n## Commands\n"), *end;
    char *block, *line, *save = NULL;
    bool in = false;

    cr_assert_not_null(p, "README.md has no \"## Commands\"");
    p = strstr(p, "\n```\n");
    cr_assert_not_null(p);
    p += 5;
    end = strstr(p, "\n```");
    cr_assert_not_null(end);
    block = slice(p, end);
    for (line = strtok_r(block, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (!strncmp(line, "tracebench ", 11)) {
            char word[128];
            size_t n = strcspn(line + 11, " ");

            snprintf(word, sizeof word, "|%.*s|", (int)n, line + 11);
            {
                char want[80];

                snprintf(want, sizeof want, "|%s|", cmd);
                in = strstr(word, want) != NULL;
            }
            *entries += in;
        } else if (line[0] != ' ') {
            in = false;
        }
        if (in)
            options_in(line, s);
    }
    free(block);
}

static void help_options(const char *cmd, optset *s, char **text)
{
    char args[64], *err;

    snprintf(args, sizeof args, "%s --help", cmd);
    cr_assert_eq(tb_test_run_cli(args, NULL, text, NULL, &err), 0, "%s: %s", args, err);
    free(err);
    options_in(*text, s);
}

static const char *const commands[] = {"packets", "decode", "stats", "sim", "roundtrip",
                                       "vectors", "gen"};

Test(cli_docs, every_option_in_help_man_and_readme)
{
    char *man = man_text(), path[1024], *readme;

    snprintf(path, sizeof path, "%s/README.md", TB_SOURCE_DIR);
    readme = tb_test_slurp(path, NULL);
    for (size_t c = 0; c < sizeof commands / sizeof commands[0]; c++) {
        const char *cmd = commands[c];
        optset h = {0}, m = {0}, r = {0};
        unsigned entries = 0;
        char *help;

        help_options(cmd, &h, &help);
        man_options(man, cmd, &m);
        readme_options(readme, cmd, &r, &entries);
        cr_expect_geq(h.n, 3, "%s --help names only %zu options:\n%s", cmd, h.n, help);
        cr_expect_gt(entries, 0, "README.md's command table has no line for %s", cmd);
        for (size_t i = 0; i < h.n; i++) {
            cr_expect(has(&m, h.v[i]), "%s --help has %s; the man page's %s does not", cmd,
                      h.v[i], cmd);
            cr_expect(has(&r, h.v[i]), "%s --help has %s; README.md's table does not", cmd,
                      h.v[i]);
        }
        for (size_t i = 0; i < m.n; i++)
            cr_expect(has(&h, m.v[i]), "the man page gives %s %s; its --help does not", cmd,
                      m.v[i]);
        for (size_t i = 0; i < r.n; i++)
            cr_expect(has(&h, r.v[i]), "README.md gives %s %s; its --help does not", cmd,
                      r.v[i]);
        /* The help is a usage, not one line. */
        cr_expect_gt(strlen(help), 400, "%s --help is %zu bytes:\n%s", cmd, strlen(help), help);
        free(help);
    }
    free(readme);
    free(man);
}

/* The exit codes: `tracebench --help` lists them, the README's table and
 * the man page's EXIT STATUS give the same ones. */
Test(cli_docs, one_table_of_exit_codes)
{
    static const char *const codes[] = {"0", "1", "2", "3", "4", "5", "6", "130"};
    char *man = man_text(), path[1024], *readme, *help, *err, *sec;
    const char *p, *e;

    snprintf(path, sizeof path, "%s/README.md", TB_SOURCE_DIR);
    readme = tb_test_slurp(path, NULL);
    cr_assert_eq(tb_test_run_cli("--help", NULL, &help, NULL, &err), 0);
    p = strstr(man, "\n.SH EXIT STATUS\n");
    cr_assert_not_null(p);
    e = strstr(p + 1, "\n.SH ");
    sec = slice(p, e);
    for (size_t k = 0; k < sizeof codes / sizeof codes[0]; k++) {
        char row[32], item[32], line[32];

        snprintf(row, sizeof row, "\n| %s", codes[k]);
        cr_expect(strstr(readme, row), "README.md's exit table lacks %s", codes[k]);
        snprintf(item, sizeof item, "\n.B %s", codes[k]);
        snprintf(line, sizeof line, "\n.BR %s", codes[k]);
        cr_expect(strstr(sec, item) || strstr(sec, line), "the man page's EXIT STATUS lacks %s",
                  codes[k]);
        snprintf(line, sizeof line, "\n  %s ", codes[k]);
        cr_expect(strstr(help, line), "tracebench --help lacks exit code %s", codes[k]);
    }
    /* No other code in either table. */
    for (const char *q = sec; (q = strstr(q, "\n.B ")); q += 4)
        if (isdigit((unsigned char)q[4])) {
            bool known = false;

            for (size_t k = 0; k < sizeof codes / sizeof codes[0]; k++)
                known |= !strncmp(q + 4, codes[k], strlen(codes[k])) &&
                         !isdigit((unsigned char)q[4 + strlen(codes[k])]);
            cr_expect(known, "the man page has exit code %.4s", q + 4);
        }
    free(sec);
    free(help);
    free(err);
    free(readme);
    free(man);
}

/* Each command of `tracebench --help` is documented in both. */
Test(cli_docs, every_command_documented)
{
    char *man = man_text(), path[1024], *readme, *help, *err;

    snprintf(path, sizeof path, "%s/README.md", TB_SOURCE_DIR);
    readme = tb_test_slurp(path, NULL);
    cr_assert_eq(tb_test_run_cli("--help", NULL, &help, NULL, &err), 0);
    for (const char *p = strstr(help, "commands:\n"); p && (p = strstr(p, "\n  ")); p += 3) {
        char cmd[32], ss[48], tb[48];
        size_t n = strcspn(p + 3, " \n");

        if (!isalpha((unsigned char)p[3]) || n >= sizeof cmd)
            continue;
        snprintf(cmd, sizeof cmd, "%.*s", (int)n, p + 3);
        if (!strcmp(cmd, "version"))
            continue;
        snprintf(ss, sizeof ss, "\n.SS %s\n", cmd);
        cr_expect(strstr(man, ss), "the man page has no subsection for %s", cmd);
        snprintf(tb, sizeof tb, "\ntracebench %s ", cmd);
        cr_expect(strstr(readme, tb), "README.md's table has no line for %s", cmd);
    }
    free(help);
    free(err);
    free(readme);
    free(man);
}
