/*
 * The output formats (docs/formats.md): one naming scheme across the
 * element and packet printers' text and JSON forms, the disassembly
 * lines of `decode --disasm`, and `tracebench stats`.
 *
 * Every expected string here is written by hand (from the format's
 * description, Capstone's known syntax, a vector's README and decode.addr,
 * or DS-5's dump), never taken from the printer it checks.
 */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tb_test.h"
#include "tracebench/decoder.h"
#include "tracebench/print.h"
#include "tracebench/snapshot.h"

/* The disassembly helper is the CLI's (it prints, so it is not library
 * code): tests/CMakeLists.txt builds cli/disasm_out.c into this test. */
#include "cli.h"

/* ------------------------------------------------------------------ */
/* 1. The same element, and the same packet, in text and in JSON. */

static void check_elem(const tb_element *el, const char *text, const char *json)
{
    char buf[512];
    int n;

    n = tb_elem_format(el, buf, sizeof buf);
    cr_expect_str_eq(buf, text);
    cr_expect_eq(n, (int)strlen(text));
    n = tb_elem_format_json(el, buf, sizeof buf);
    cr_expect_str_eq(buf, json);
    cr_expect_eq(n, (int)strlen(json));
}

Test(formats, element_text_and_json_use_the_same_names)
{
    tb_element el;

    /* TC2 0x10's first range (its line in DS-5's dump: T32 at 0xC002115C). */
    memset(&el, 0, sizeof el);
    el.kind = TB_ELEM_INSN_RANGE;
    el.index = 890;
    el.start = 0xc002115c;
    el.end = 0xc0021168;
    el.count = 6;
    el.isa = TB_ISA_THUMB;
    el.last_addr = 0xc0021166;
    el.last_wp = TB_WP_DIRECT;
    el.last_atom = 'E';
    el.has_cc = true;
    el.cc = 45;
    check_elem(&el,
               "890 INSN_RANGE start=0xc002115c end=0xc0021168 count=6 isa=T32 "
               "last_addr=0xc0021166 last_wp=direct last_atom=E atom_bits=0x00000000 cc=45",
               "{\"index\":890,\"kind\":\"INSN_RANGE\",\"start\":3221360988,\"end\":3221361000,"
               "\"count\":6,\"isa\":\"T32\",\"last_addr\":3221360998,\"last_wp\":\"direct\","
               "\"last_atom\":\"E\",\"atom_bits\":0,\"cc\":45}");

    /* An IRQ (trace exception number 14) that cancelled its instruction. */
    memset(&el, 0, sizeof el);
    el.kind = TB_ELEM_EXCEPTION;
    el.index = 100;
    el.exc_num = 14;
    el.pref_return = 0x8004;
    el.start = 0x18;
    el.cancelled = true;
    el.has_cc = true;
    el.cc = 3;
    check_elem(&el,
               "100 EXCEPTION exc_num=14 exc_name=irq pref_return=0x00008004 vector=0x00000018 "
               "cancelled cc=3",
               "{\"index\":100,\"kind\":\"EXCEPTION\",\"exc_num\":14,\"exc_name\":\"irq\","
               "\"pref_return\":32772,\"vector\":24,\"cancelled\":true,\"cc\":3}");

    /* Context: ctxid is context_id in both; the security state is
     * there in the text whatever it is, as in JSON (the text left a
     * false one out, so that Secure read as nothing at all). */
    memset(&el, 0, sizeof el);
    el.kind = TB_ELEM_CONTEXT;
    el.index = 7;
    el.isa = TB_ISA_ARM;
    el.ns = true;
    el.context_id = 0x42;
    el.vmid = 3;
    check_elem(&el, "7 CONTEXT isa=A32 ns=true hyp=false context_id=0x00000042 vmid=3",
               "{\"index\":7,\"kind\":\"CONTEXT\",\"isa\":\"A32\",\"ns\":true,\"hyp\":false,"
               "\"context_id\":66,\"vmid\":3}");
    el.ns = false;
    check_elem(&el, "7 CONTEXT isa=A32 ns=false hyp=false context_id=0x00000042 vmid=3",
               "{\"index\":7,\"kind\":\"CONTEXT\",\"isa\":\"A32\",\"ns\":false,\"hyp\":false,"
               "\"context_id\":66,\"vmid\":3}");

    /* I-sync reasons use the packet listing's words (trace-on, overflow). */
    memset(&el, 0, sizeof el);
    el.kind = TB_ELEM_TRACE_ON;
    el.index = 5;
    el.reason = TB_ISYNC_OVERFLOW;
    el.start = 0x1000;
    el.isa = TB_ISA_THUMB;
    check_elem(&el, "5 TRACE_ON reason=overflow addr=0x00001000 isa=T32",
               "{\"index\":5,\"kind\":\"TRACE_ON\",\"reason\":\"overflow\",\"addr\":4096,"
               "\"isa\":\"T32\"}");

    memset(&el, 0, sizeof el);
    el.kind = TB_ELEM_NO_SYNC;
    el.index = 42;
    el.reason = TB_GAP_BAD_PACKET;
    el.err = TB_ERR_BAD_PACKET;
    check_elem(&el, "42 NO_SYNC reason=bad-packet error=\"bad packet\"",
               "{\"index\":42,\"kind\":\"NO_SYNC\",\"reason\":\"bad-packet\","
               "\"error\":\"bad packet\"}");

    memset(&el, 0, sizeof el);
    el.kind = TB_ELEM_TIMESTAMP;
    el.index = 978;
    el.ts = 562536959839ull;
    check_elem(&el, "978 TIMESTAMP ts=562536959839",
               "{\"index\":978,\"kind\":\"TIMESTAMP\",\"ts\":562536959839}");

    memset(&el, 0, sizeof el);
    el.kind = TB_ELEM_ADDR_NACC;
    el.index = 26646;
    el.start = 0xc02f5b3a;
    el.isa = TB_ISA_THUMB;
    el.err = TB_ERR_NOT_IN_IMAGE;
    check_elem(&el,
               "26646 ADDR_NACC addr=0xc02f5b3a isa=T32 "
               "error=\"code address not in the memory image\"",
               "{\"index\":26646,\"kind\":\"ADDR_NACC\",\"addr\":3224329018,\"isa\":\"T32\","
               "\"error\":\"code address not in the memory image\"}");

    memset(&el, 0, sizeof el);
    el.kind = TB_ELEM_ADDR_UNKNOWN;
    el.index = 26647;
    el.last_atom = 'E';
    el.has_cc = true;
    el.cc = 10;
    check_elem(&el, "26647 ADDR_UNKNOWN last_atom=E cc=10",
               "{\"index\":26647,\"kind\":\"ADDR_UNKNOWN\",\"last_atom\":\"E\",\"cc\":10}");

    memset(&el, 0, sizeof el);
    el.kind = TB_ELEM_END;
    el.index = 9;
    check_elem(&el, "9 END", "{\"index\":9,\"kind\":\"END\"}");
}

/* The keys of a text line (`key=value` or a bare `key`, after INDEX
 * KIND) and of a JSON object, in order, space-separated. */
static void text_keys(const char *line, char *out, size_t cap)
{
    const char *p = strchr(line, ' ');
    size_t n = 0;

    out[0] = '\0';
    p = p ? strchr(p + 1, ' ') : NULL; /* past the index and the kind */
    while (p && *p) {
        const char *k = p + 1, *e = k;

        while (*e && *e != '=' && *e != ' ')
            e++;
        n += (size_t)snprintf(out + n, cap - n, "%.*s ", (int)(e - k), k);
        if (*e == '=' && e[1] == '"')
            e = strchr(e + 2, '"') + 1;
        p = strchr(e, ' ');
    }
}

static void json_keys(const char *obj, char *out, size_t cap, bool skip_false)
{
    size_t n = 0;
    const char *p = obj;

    out[0] = '\0';
    while ((p = strstr(p, ",\"")) != NULL) {
        const char *k = p + 2, *e = strchr(k, '"');

        p = e + 2; /* past `":` */
        if (skip_false && !strncmp(p, "false", 5))
            continue;
        n += (size_t)snprintf(out + n, cap - n, "%.*s ", (int)(e - k), k);
    }
}

/* Every kind, every boolean true and false: the text names the JSON's
 * fields (after index and kind) in the same order, a false boolean
 * left out (but a CONTEXT's ns and hyp, always there). */
Test(formats, every_element_kind_names_fields_alike)
{
    for (int k = TB_ELEM_NO_SYNC; k <= TB_ELEM_END; k++)
        for (int b = 0; b < 2; b++) {
            tb_element el;
            char text[512], json[512], tk[512], jk[512];

            memset(&el, 0, sizeof el);
            el.kind = (tb_elem_kind)k;
            el.index = 1;
            el.last_atom = 'N';
            el.cancelled = el.ns = el.hyp = el.has_cc = b;
            el.err = b ? TB_ERR_BAD_PACKET : 0;
            tb_elem_format(&el, text, sizeof text);
            tb_elem_format_json(&el, json, sizeof json);
            text_keys(text, tk, sizeof tk);
            /* A CONTEXT shows its security state false or true. */
            json_keys(json + strlen("{\"index\":1"), jk, sizeof jk, k != TB_ELEM_CONTEXT);
            /* json_keys sees "kind" first: drop it. */
            cr_expect_str_eq(tk, jk + strlen("kind "), "%s\n%s", text, json);
        }
}

static void check_pkt(const tb_packet *p, int id, const char *text, const char *json)
{
    char buf[512];

    tb_packet_format(p, buf, sizeof buf);
    cr_expect_str_eq(buf, text);
    tb_packet_format_json(p, id, buf, sizeof buf);
    cr_expect_str_eq(buf, json);
}

Test(formats, packet_text_and_json_use_the_same_names)
{
    tb_packet p;

    /* TC2 0x10's first I-sync (08 01 5d 11 02 c0), with a context ID. */
    memset(&p, 0, sizeof p);
    p.kind = TB_PKT_ISYNC;
    p.protocol = TB_PROTO_ETMV3;
    p.index = 884;
    p.size = 6;
    memcpy(p.bytes, "\x08\x01\x5d\x11\x02\xc0", 6);
    p.addr = 0xc002115c;
    p.addr_bits = 32;
    p.isa = TB_ISA_THUMB;
    p.has_ctxid = true;
    p.context_id = 0x12;
    check_pkt(&p, 16,
              "       884  ISYNC            [08 01 5d 11 02 c0] reason=periodic addr=0xc002115c "
              "isa=T32 context_id=0x00000012",
              "{\"id\":16,\"index\":884,\"kind\":\"ISYNC\",\"protocol\":\"etmv3\","
              "\"bytes\":\"08015d1102c0\",\"reason\":\"periodic\",\"addr\":3221360988,"
              "\"isa\":\"T32\",\"ns\":false,\"hyp\":false,\"context_id\":18}");

    /* A PTM branch with an IRQ: exc_num/exc_name as on elements. */
    memset(&p, 0, sizeof p);
    p.kind = TB_PKT_BRANCH;
    p.protocol = TB_PROTO_PTM;
    p.index = 30;
    p.size = 3;
    memcpy(p.bytes, "\x31\x80\x1c", 3);
    p.addr = 0x18;
    p.addr_bits = 6;
    p.addr_known = true;
    p.isa = TB_ISA_ARM;
    p.has_exc = true;
    p.exc_num = 14;
    p.ns_valid = true;
    p.ns = true;
    check_pkt(&p, -1,
              "        30  BRANCH_ADDRESS   [31 80 1c] addr=0x00000018 addr_bits=6 isa=A32 "
              "exc_num=14 exc_name=irq ns",
              "{\"index\":30,\"kind\":\"BRANCH_ADDRESS\",\"protocol\":\"ptm\","
              "\"bytes\":\"31801c\",\"addr\":24,\"addr_bits\":6,\"addr_partial\":false,"
              "\"isa\":\"A32\",\"isa_changed\":false,\"exc_num\":14,\"exc_name\":\"irq\","
              "\"cancelled\":false,\"ns\":true,\"altisa\":false}");

    /* TC2 0x10's first timestamp: decimal in both. */
    memset(&p, 0, sizeof p);
    p.kind = TB_PKT_TIMESTAMP;
    p.protocol = TB_PROTO_ETMV3;
    p.index = 865;
    p.size = 10;
    memcpy(p.bytes, "\x42\xbd\x9a\xc3\xce\xaf\x90\x80\x80\x00", 10);
    p.ts = 562536959293ull;
    p.ts_bits = 64;
    check_pkt(&p, 16,
              "       865  TIMESTAMP        [42 bd 9a c3 ce af 90 80 80 00] ts=562536959293 "
              "ts_bits=64",
              "{\"id\":16,\"index\":865,\"kind\":\"TIMESTAMP\",\"protocol\":\"etmv3\","
              "\"bytes\":\"42bd9ac3ceaf90808000\",\"ts\":562536959293,\"ts_bits\":64}");

    /* An ETMv3 P-header: atoms and its format; cycle counts as cc. */
    memset(&p, 0, sizeof p);
    p.kind = TB_PKT_ATOM;
    p.protocol = TB_PROTO_ETMV3;
    p.index = 890;
    p.size = 1;
    p.bytes[0] = 0x84;
    p.seq_len = 2;
    memcpy(p.seq, "EE", 2);
    p.phdr_format = 1;
    p.has_cc = true;
    p.cc = 7;
    check_pkt(&p, -1, "       890  ATOM             [84] atoms=EE format=1 cc=7",
              "{\"index\":890,\"kind\":\"ATOM\",\"protocol\":\"etmv3\",\"bytes\":\"84\","
              "\"atoms\":\"EE\",\"format\":1,\"cc\":7}");
}

/* ------------------------------------------------------------------ */
/* 2. --disasm: Capstone's syntax for a few well-known encodings. */

static tb_memimage *code_image(void)
{
    /* A32 at 0x8000: mov r0, #1; bx lr; bl to itself (imm24 = -2). */
    static const uint8_t a32[] = {0x01, 0x00, 0xa0, 0xe3, 0x1e, 0xff, 0x2f, 0xe1,
                                  0xfe, 0xff, 0xff, 0xeb};
    /* T32 at 0x9000: push {r4, lr}; bx lr; bl 0x9008 (f000 f800);
     * cbz r3 at 0x9008 (b1f3: imm 0x3c, to 0x9048, as DS-5's TC2 dump
     * shows for the same halfword at 0xC0018D88 -> 0xc0018dc8). */
    static const uint8_t t32[] = {0x10, 0xb5, 0x70, 0x47, 0x00, 0xf0, 0x00, 0xf8,
                                  0xf3, 0xb1};
    tb_memimage *m = tb_memimage_new();

    cr_assert_not_null(m);
    cr_assert_eq(tb_memimage_add(m, 0x8000, a32, sizeof a32), 0);
    cr_assert_eq(tb_memimage_add(m, 0x9000, t32, sizeof t32), 0);
    return m;
}

Test(formats, disasm_lines)
{
    tb_memimage *m = code_image();
    tb_cli_disasm *d = tb_cli_disasm_new(m);
    char line[256];

    cr_assert_not_null(d);
    tb_cli_disasm_insn(d, 0x8000, TB_ISA_ARM, line, sizeof line);
    cr_expect_str_eq(line, "    0x00008000  e3a00001   mov r0, #1");
    tb_cli_disasm_insn(d, 0x8004, TB_ISA_ARM, line, sizeof line);
    cr_expect_str_eq(line, "    0x00008004  e12fff1e   bx lr");
    tb_cli_disasm_insn(d, 0x8008, TB_ISA_ARM, line, sizeof line);
    cr_expect_str_eq(line, "    0x00008008  ebfffffe   bl #0x8008");
    tb_cli_disasm_insn(d, 0x9004, TB_ISA_THUMB, line, sizeof line);
    cr_expect_str_eq(line, "    0x00009004  f000 f800  bl #0x9008");
    tb_cli_disasm_insn(d, 0xa000, TB_ISA_ARM, line, sizeof line);
    cr_expect_str_eq(line, "    0x0000a000  ?          <no memory>");
    tb_cli_disasm_free(d);
    tb_memimage_free(m);
}

/* A T32 range of four instructions: one line each, in order. */
Test(formats, disasm_after_a_range)
{
    tb_memimage *m = code_image();
    tb_cli_disasm *d = tb_cli_disasm_new(m);
    tb_element el;
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);

    cr_assert_not_null(d);
    cr_assert_not_null(f);
    memset(&el, 0, sizeof el);
    el.kind = TB_ELEM_INSN_RANGE;
    el.start = 0x9000;
    el.end = 0x900a;
    el.count = 4;
    el.isa = TB_ISA_THUMB;
    el.last_addr = 0x9008;
    el.last_wp = TB_WP_DIRECT;
    el.last_atom = 'E';
    cr_assert_eq(tb_cli_disasm_element(d, &el, NULL, f), 0);
    el.kind = TB_ELEM_TIMESTAMP; /* nothing for other elements */
    cr_assert_eq(tb_cli_disasm_element(d, &el, NULL, f), 0);
    /* --id all tags every line with the trace ID. */
    el.kind = TB_ELEM_INSN_RANGE;
    el.start = 0x9002;
    el.count = 1;
    el.end = 0x9004;
    cr_assert_eq(tb_cli_disasm_element(d, &el, "0x10: ", f), 0);
    fclose(f);
    cr_expect_str_eq(text, "    0x00009000  b510       push {r4, lr}\n"
                           "    0x00009002  4770       bx lr\n"
                           "    0x00009004  f000 f800  bl #0x9008\n"
                           "    0x00009008  b1f3       cbz r3, #0x9048\n"
                           "0x10:     0x00009002  4770       bx lr\n");
    free(text);
    tb_cli_disasm_free(d);
    tb_memimage_free(m);
}

/* --disasm marks the instructions whose condition failed (atom N): the
 * same ones, in the same order, as the vector's decode.addr, which
 * tb_expect derived from the emulator's truth alone.  ETMv3 and ETMv1
 * give every instruction an atom; PTM only waypoints. */
Test(formats, disasm_marks_condition_failed)
{
    static const char *const vectors[] = {"cond_arm-etmv3", "cond_arm-ptm-ca",
                                          "cond_arm-etmv1-dataaddr", "it_blocks-etmv3-ca"};
    size_t marked = 0;

    for (size_t v = 0; v < sizeof vectors / sizeof vectors[0]; v++) {
        char args[1400], path[1200];
        char *out, *err, *want, *line, *save = NULL;
        char (*got)[24] = NULL, (*exp)[24] = NULL;
        size_t ng = 0, ne = 0;

        snprintf(path, sizeof path, "%s/vectors/generated/%s", TB_SOURCE_DIR, vectors[v]);
        if (access(path, R_OK) != 0)
            cr_assert_fail("%s: no such vector", vectors[v]);
        snprintf(args, sizeof args, "decode '%s' --disasm", path);
        cr_assert_eq(tb_test_run_cli(args, NULL, &out, NULL, &err), 0, "%s", err);
        for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
            unsigned long a;

            if (strncmp(line, "    0x", 6))
                continue;
            a = strtoul(line + 4, NULL, 16);
            got = realloc(got, (ng + 1) * sizeof *got);
            snprintf(got[ng++], sizeof got[0], "0x%08lX %c", a,
                     strstr(line, "  ; N: condition failed, not executed") ? 'N' : '-');
        }
        snprintf(path, sizeof path, "%s/vectors/generated/%s/decode.addr", TB_SOURCE_DIR,
                 vectors[v]);
        want = tb_test_slurp(path, NULL);
        save = NULL;
        for (line = strtok_r(want, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
            if (line[0] == '#')
                continue;
            exp = realloc(exp, (ne + 1) * sizeof *exp);
            snprintf(exp[ne++], sizeof exp[0], "%.10s %c", line,
                     line[strlen(line) - 1] == 'N' ? 'N' : '-');
        }
        cr_expect_eq(ng, ne, "%s: %zu instructions disassembled, decode.addr has %zu",
                     vectors[v], ng, ne);
        for (size_t i = 0; i < ng && i < ne; i++) {
            marked += got[i][11] == 'N';
            if (strcmp(got[i], exp[i])) {
                cr_expect_str_eq(got[i], exp[i], "%s: instruction %zu", vectors[v], i);
                break;
            }
        }
        free(got);
        free(exp);
        free(want);
        free(out);
        free(err);
    }
    cr_expect_gt(marked, 100, "only %zu marked", marked);
}

/* ------------------------------------------------------------------ */
/* 3. tracebench stats, against what a vector's README and decode.addr
 * and DS-5's dump say. */

/* Runs `tracebench stats ARGS`; its stdout (free()) and exit status. */
static char *run_stats(const char *args, int *status)
{
    char cmd[2048];
    char *out = NULL;
    size_t len = 0, got;
    char chunk[4096];
    FILE *p, *m;

    snprintf(cmd, sizeof cmd, "'%s' stats %s", tb_test_cli(), args);
    p = popen(cmd, "r");
    cr_assert_not_null(p, "%s", cmd);
    m = open_memstream(&out, &len);
    while ((got = fread(chunk, 1, sizeof chunk, p)) > 0)
        fwrite(chunk, 1, got, m);
    fclose(m);
    *status = pclose(p);
    return out;
}

/* The number after `"key":` in a JSON line, or after `key` at the start
 * of a text line (two-space indent); -1 when absent. */
static double json_num(const char *json, const char *key)
{
    char k[64];
    const char *p;

    snprintf(k, sizeof k, "\"%s\":", key);
    p = strstr(json, k);
    return p ? strtod(p + strlen(k), NULL) : -1;
}

static double text_num(const char *text, const char *key)
{
    char k[64];
    const char *p;

    snprintf(k, sizeof k, "\n  %s ", key);
    p = strstr(text, k);
    return p ? strtod(p + strlen(k), NULL) : -1;
}

/* Column col (1-based) of a README table row `| name | a | b |`. */
static double readme_num(const char *readme, const char *name, int col)
{
    char k[80];
    const char *p;

    snprintf(k, sizeof k, "\n| %s |", name);
    p = strstr(readme, k);
    if (!p)
        return -1;
    p += strlen(k);
    for (int c = 1; c < col; c++) {
        p = strchr(p, '|');
        if (!p)
            return -1;
        p++;
    }
    return strtod(p, NULL);
}

/* The exceptions the vector's round trip matched and the instructions
 * it found in gaps (README row "round trip": "match: N instructions
 * checked, M exceptions, ..., U untraced"), column col. */
static double readme_rt_exceptions(const char *readme, int col, double *untraced)
{
    const char *p = strstr(readme, "\n| round trip |");
    double m;

    if (!p)
        return -1;
    p += strlen("\n| round trip |");
    for (int c = 1; c < col; c++) {
        p = strchr(p, '|');
        if (!p)
            return -1;
        p++;
    }
    if (sscanf(p, " match: %*u instructions checked, %lf exceptions, %*u contexts, %*u "
                  "timestamps, %*u cycle checks, %lf untraced", &m, untraced) != 2)
        return -1;
    return m;
}

/* Debug halts in the vector's truth.txt (docs/debug-halt.md), read here
 * apart from the decoder: *halts the `debug-halt` records, *at_restart
 * the other exceptions taken at a restart (an exception record right
 * after a halt's, no instruction between).  The README's "exceptions"
 * (the simulator's count) leaves the halts out. */
static void truth_halts(const char *dir, double *halts, double *at_restart)
{
    char path[1600], line[256], kind[24];
    bool after = false;
    FILE *f;

    snprintf(path, sizeof path, "%s/truth.txt", dir);
    *halts = *at_restart = 0;
    if (!(f = fopen(path, "r")))
        return; /* two sources: truth-0x10.txt ..., no halts there */
    while (fgets(line, sizeof line, f)) {
        if (sscanf(line, "%*u %*u X %23s", kind) == 1) {
            if (!strcmp(kind, "debug-halt"))
                (*halts)++, after = true;
            else if (after)
                (*at_restart)++;
        } else if (sscanf(line, "%*u %*u %23s", kind) == 1 && !strcmp(kind, "I")) {
            after = false;
        }
    }
    fclose(f);
}

static void addr_counts(const char *path, double *insns, double *gaps)
{
    FILE *f = fopen(path, "r");
    char line[256];

    cr_assert_not_null(f, "%s", path);
    *insns = *gaps = 0;
    while (fgets(line, sizeof line, f)) {
        if (!strncmp(line, "# gap", 5))
            (*gaps)++;
        else if (line[0] != '#')
            (*insns)++;
    }
    fclose(f);
}

/* The vector the issue names: 15 trace bytes and 27 instructions
 * (its README), both forms. */
Test(formats, stats_on_arm_basic_ptm_raw)
{
    char args[1200];
    char *out;
    int st;

    snprintf(args, sizeof args, "'%s/vectors/generated/arm_basic-ptm-raw'", TB_SOURCE_DIR);
    out = run_stats(args, &st);
    cr_assert_eq(st, 0);
    cr_expect(strstr(out, "source PTM_0: PFT1.1, trace ID 0x10, buffer ETB_0\n") == out, "%s",
              out);
    cr_expect_eq(text_num(out, "trace_bytes"), 15, "%s", out);
    cr_expect_eq(text_num(out, "instructions"), 27, "%s", out);
    cr_expect(strstr(out, "\n  bits_per_insn    4.444\n"), "%s", out);
    cr_expect_eq(text_num(out, "exceptions"), 0, "%s", out);
    cr_expect_eq(text_num(out, "gaps"), 0, "%s", out);
    cr_expect_eq(text_num(out, "errors"), 0, "%s", out);
    free(out);

    snprintf(args, sizeof args, "'%s/vectors/generated/arm_basic-ptm-raw' --json --id 0x10",
             TB_SOURCE_DIR);
    out = run_stats(args, &st);
    cr_assert_eq(st, 0);
    cr_expect(strstr(out, "{\"source\":\"PTM_0\",\"id\":16,\"protocol\":\"ptm\",") == out, "%s",
              out);
    cr_expect_eq(json_num(out, "trace_bytes"), 15, "%s", out);
    cr_expect_eq(json_num(out, "instructions"), 27, "%s", out);
    cr_expect_eq(json_num(out, "bits_per_insn"), 4.444, "%s", out);
    free(out);
}

/* An ETMv1 source is labelled ETMv1 with its port width (the device
 * file: type=ETMv1.3, PORT_WIDTH=16), not "ETMv3" with a trace ID it
 * does not have (it printed "ETMv3.3, trace ID 0x00"); `packets` the
 * same. */
Test(formats, stats_and_packets_label_etmv1)
{
    char args[1200];
    char *out, *err;
    int st;

    snprintf(args, sizeof args, "'%s/vectors/generated/recursion-etmv1-port16'", TB_SOURCE_DIR);
    out = run_stats(args, &st);
    cr_assert_eq(st, 0);
    cr_expect(strstr(out, "source ETM_0: ETMv1.3, 16-bit port, buffer ETB_0\n") == out, "%s",
              out);
    free(out);
    snprintf(args, sizeof args, "packets '%s/vectors/generated/recursion-etmv1-port16'",
             TB_SOURCE_DIR);
    cr_assert_eq(tb_test_run_cli(args, NULL, &out, NULL, &err), 0, "%s", err);
    cr_expect(strstr(out, "# source ETM_0: ETMv1.3, 16-bit port, buffer ETB_0\n") == out,
              "%s", out);
    free(out);
    free(err);
}

/* Every committed vector: bytes and exceptions as its README gives them,
 * instructions and gaps as its decode.addr (derived from the truth
 * alone) lists them; bits per instruction as the README's where that
 * is over the same instructions (the README divides by the instructions
 * executed, stats by those the trace carries: they differ under a
 * filter, a FIFO overflow, or cancelled instructions). */
Test(formats, stats_on_every_vector, .timeout = 120)
{
    char list[1200], cmd[1400];
    FILE *ls;
    char name[256];
    size_t n = 0;

    snprintf(list, sizeof list, "%s/vectors/generated", TB_SOURCE_DIR);
    snprintf(cmd, sizeof cmd, "ls '%s'", list);
    ls = popen(cmd, "r");
    cr_assert_not_null(ls);
    while (fgets(name, sizeof name, ls)) {
        char dir[1500], path[1600], args[1600];
        char *readme, *out, *line;
        size_t rlen;
        int st, col = 0;

        name[strcspn(name, "\n")] = '\0';
        snprintf(dir, sizeof dir, "%s/%s", list, name);
        snprintf(path, sizeof path, "%s/README.md", dir);
        readme = (char *)tb_test_read_file(path, &rlen);
        if (!readme)
            continue; /* vectors/generated/README.md is no vector */
        readme = realloc(readme, rlen + 1);
        readme[rlen] = '\0';
        snprintf(args, sizeof args, "'%s' --json", dir);
        out = run_stats(args, &st);
        cr_expect_eq(st, 0, "%s", name);
        /* One line per source, in the snapshot's order: the README's
         * columns (two-source vectors) are in the same order. */
        for (line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
            bool two = strstr(readme, "| | source 1 | source 2 |") != NULL;
            double insns, gaps, executed = readme_num(readme, "instructions executed", col + 1);
            double id = json_num(line, "id");

            if (two)
                snprintf(path, sizeof path, "%s/decode-0x%02x.addr", dir, (unsigned)id);
            else
                snprintf(path, sizeof path, "%s/decode.addr", dir);
            addr_counts(path, &insns, &gaps);
            cr_expect_eq(json_num(line, "trace_bytes"), readme_num(readme, "trace bytes", col + 1),
                         "%s source %d: %s", name, col + 1, line);
            /* The exceptions shown: those the round trip matched, all that
             * were taken when nothing was filtered or lost (exceptions in
             * a gap are not traced: exc_mix-etmv2-ca-filter4,
             * udf_land-etmv3-fifo48).  ETMv1 has no exception packet: a
             * branch to a vector reads as an exception, an exception
             * return to one too (docs/etmv1.md 4; irq_fiq's FIQ returns
             * to the IRQ vector), so it may show more, never fewer. */
            {
                double untraced = -1, shown = readme_rt_exceptions(readme, col + 1, &untraced);
                double taken = readme_num(readme, "exceptions", col + 1), halts, at_restart;

                cr_expect_geq(shown, 0, "%s: no round trip row", name);
                /* Debug halts: ETMv3 and PTM show each (exception 1);
                 * an exception taken at the restart, before trace is on
                 * again, PTM alone shows (IHI0035B 5.2.3; ETMv3 only
                 * the exit's I-sync at its vector); the ETMv1 and ETMv2
                 * ports show neither (docs/debug-halt.md). */
                truth_halts(dir, &halts, &at_restart);
                if (strstr(line, "\"protocol\":\"ptm\""))
                    taken += halts;
                else if (strstr(line, "\"protocol\":\"etmv3\""))
                    taken += halts - at_restart;
                else
                    taken -= at_restart;
                if (untraced == 0)
                    cr_expect_eq(shown, taken,
                                 "%s source %d: exceptions taken (%g) and shown (%g) differ",
                                 name, col + 1, taken, shown);
                if (strstr(line, "\"protocol\":\"etmv1\""))
                    cr_expect_geq(json_num(line, "exceptions"), shown, "%s source %d: %s",
                                  name, col + 1, line);
                else
                    cr_expect_eq(json_num(line, "exceptions"), shown, "%s source %d: %s",
                                 name, col + 1, line);
            }
            cr_expect_eq(json_num(line, "instructions"), insns, "%s source %d: %s", name, col + 1,
                         line);
            cr_expect(strstr(line, "\"gaps\":{\"total\":"), "%s", line);
            cr_expect_eq(strtod(strstr(line, "\"gaps\":{\"total\":") + strlen("\"gaps\":{\"total\":"),
                                NULL),
                         gaps,
                         "%s source %d: %s", name, col + 1, line);
            if (executed == insns) {
                double bpi = readme_num(readme, "bits per instruction", col + 1);

                /* The README cuts to three places, stats rounds. */
                cr_expect(fabs(json_num(line, "bits_per_insn") - bpi) < 0.0011,
                          "%s source %d: README %.3f: %s", name, col + 1, bpi, line);
            }
            col++;
            n++;
        }
        cr_expect_gt(col, 0, "%s: stats printed nothing", name);
        free(out);
        free(readme);
    }
    pclose(ls);
    cr_expect_geq(n, 40, "only %zu sources checked", n);
}

/* Real silicon: TC2's ETMv3 0x10 holds 7205 instructions (DS-5's dump,
 * protocol-notes 6.2); the ITM beside it is listed as skipped. */
Test(formats, stats_on_tc2)
{
    const char *ref = tb_test_reference_dir("tracebench stats on TC2");
    char args[1200];
    char *out;
    int st;

    if (!ref)
        return;
    snprintf(args, sizeof args, "'%s/opencsd-snapshots/TC2' --id 0x10", ref);
    out = run_stats(args, &st);
    cr_assert_eq(st, 0);
    cr_expect(strstr(out, "source ETM_0: ETMv3.5, trace ID 0x10, buffer ETB_0, cycle-accurate, "
                          "timestamps\n") == out,
              "%s", out);
    cr_expect_eq(text_num(out, "instructions"), 7205, "%s", out);
    cr_expect_eq(text_num(out, "errors"), 0, "%s", out);
    cr_expect_gt(text_num(out, "ts_span"), 0, "%s", out);
    cr_expect_gt(text_num(out, "ts_span_cycles"), 0, "%s", out);
    free(out);

    snprintf(args, sizeof args, "'%s/opencsd-snapshots/TC2' --json", ref);
    out = run_stats(args, &st);
    cr_assert_eq(st, 0);
    cr_expect(strstr(out, "{\"source\":\"ETM_0\",\"id\":16,"), "%s", out);
    cr_expect(strstr(out, "\"instructions\":7205,"), "%s", out);
    cr_expect(strstr(out, "{\"source\":\"PTM_0\",\"id\":19,"), "%s", out);
    cr_expect(strstr(out, "{\"source\":\"ITM_0\",\"skipped\":\""), "%s", out);
    free(out);
}
