/*
 * The OpenCSD 1.3.3 faults the differential fuzz harnesses found
 * (fuzz/fuzz_diff_ocsd.c; docs/opencsd-bugs.md 12-23, and the forms of 1 and 11 it met), each on a minimal
 * hand-built snapshot: trc_pkt_lister -decode runs live on it and must
 * show the fault, and our decoder must give what the trace and the
 * image say (known by construction, written out here).  If a newer
 * OpenCSD fixes one, its test fails and says so: then drop the harness's
 * signature for it.  Where a control row follows a fault's row, it is
 * the same trace with the one thing changed that the fault needs, and
 * OpenCSD gets it right.
 *
 * Cases are rows: registers, a code image at 0x8000, the trace bytes
 * (source data), our instructions ("ADDR ISA ATOM") and OpenCSD's
 * elements as the lister prints them, reduced to "RANGE start end ISA
 * E|N", "EXCEPTION num" and "NACC addr".
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tb_test.h"
#include "tracebench/decoder.h"
#include "tracebench/snapshot.h"

#define NOP "0000a0e1"
#define LDR "001094e5" /* LDR r1, [r4] */
#define HEAD3 "000000000080 080100800000" /* ETMv3: A-sync, I-sync 0x8000 ARM */
#define HEADP "000000000080 080080000021" /* PTM: A-sync, I-sync 0x8000 ARM */

typedef struct bug_case {
    const char *name;
    uint32_t etmcr, etmidr, etmccer;
    const char *image;         /* hex, at 0x8000 */
    const char *trace;         /* hex */
    const char *ours[12];      /* "0x00008000 A32 E" */
    const char *theirs[12];    /* reduced lister elements */
    const char *image2;        /* hex, at img2_addr, or NULL */
    uint32_t img2_addr;
} bug_case;

static const bug_case cases[] = {
    /* 12: an ARM I-sync address keeps bit 1 (ETMv3 and PTM). */
    {"12_arm_isync_bit1_etmv3", 0, 0x4100F240, 0, NOP NOP NOP NOP "feffffea",
     "000000000080 080102800000 88",
     {"0x00008000 A32 E", "0x00008004 A32 E"},
     {"RANGE 0x8002 0x8006 A32 E", "RANGE 0x8006 0x800a A32 E"}, NULL, 0},
    {"12_arm_isync_bit1_ptm", 0, 0x411CF310, 0, NOP NOP NOP NOP "feffffea",
     "000000000080 080280000021 88",
     {"0x00008000 A32 E", "0x00008004 A32 E", "0x00008008 A32 E", "0x0000800C A32 E",
      "0x00008010 A32 E", "0x00008010 A32 E"},
     {"RANGE 0x8002 0x8012 A32 E", "NACC 0x8012"}, NULL, 0},
    /* 13: a 48-bit ETMv3 timestamp whose seventh byte has bit 7 set
     * swallows the P-header and trigger after it. */
    {"13_timestamp_read_past_its_end", 0x10000000, 0x410CF250, 0,
     NOP NOP NOP NOP "feffffea", HEAD3 " 42818283848586 87 88 0c 84",
     {"0x00008000 A32 E", "0x00008004 A32 E", "0x00008008 A32 E"},
     {"RANGE 0x8000 0x8004 A32 E"}, NULL, 0},
    /* 14: a P-header with no atoms (0x80) sends a range never filled in. */
    {"14_empty_pheader_stale_range", 0, 0x4100F240, 0, NOP NOP NOP NOP "feffffea",
     HEAD3 " 88 80 84",
     {"0x00008000 A32 E", "0x00008004 A32 E", "0x00008008 A32 E"},
     {"RANGE 0x8000 0x8004 A32 E", "RANGE 0x8004 0x8008 A32 E", "RANGE 0x0 0x0 A32 N",
      "RANGE 0x8008 0x800c A32 E"}, NULL, 0},
    /* 15: BLX(imm) with an N atom: no branch, yet Thumb after it. */
    {"15_blx_n_switches_isa_etmv3", 0, 0x4100F240, 0,
     "020000fa" NOP NOP NOP "c046c046c046c046", HEAD3 " 8a",
     {"0x00008000 A32 N", "0x00008004 A32 E"},
     {"RANGE 0x8000 0x8004 A32 N", "RANGE 0x8004 0x8006 T32 E"}, NULL, 0},
    {"15_blx_n_switches_isa_ptm", 0, 0x411CF310, 0,
     "020000fa" NOP NOP "feffffea" "c046c046c046c046", HEADP " 86 84",
     {"0x00008000 A32 N", "0x00008004 A32 E", "0x00008008 A32 E", "0x0000800C A32 E"},
     {"RANGE 0x8000 0x8004 A32 N", "RANGE 0x8004 0x8008 T32 E"}, NULL, 0},
    /* 16: the BX lr in the image's last halfword is not decoded. */
    {"16_thumb_last_halfword", 0, 0x411CF310, 0, "00bf00bf00bf7047",
     "000000000080 080180000021 8180840180",
     {"0x00008000 T32 E", "0x00008002 T32 E", "0x00008004 T32 E", "0x00008006 T32 E"},
     {"RANGE 0x8000 0x8006 T32 E", "NACC 0x8006", "NACC 0x210000"}, NULL, 0},
    /* 17: a branch with exception number 0 (an NS change) drops the
     * range its implied E atom closes. */
    {"17_exception0_drops_atom", 0, 0x411CF310, 0, NOP NOP "1eff2fe1" NOP "feffffea",
     HEADP " 898080804801",
     {"0x00008000 A32 E", "0x00008004 A32 E", "0x00008008 A32 E"},
     {"EXCEPTION 0x00"}, NULL, 0},
    /* 18: a second branch packet with Cancel straight after the first
     * cancels again: the first one's EXCEPTION (data abort, 0x0c) is
     * gone; the control, with a trigger between the two, keeps it. */
    {"18_second_cancel_deletes_exception", 0, 0x4100F240, 0, NOP NOP NOP LDR NOP NOP "feffffea",
     HEAD3 " 8c 84 898080804838 898080804834",
     {"0x00008000 A32 E", "0x00008004 A32 E", "0x00008008 A32 E"},
     {"RANGE 0x8000 0x8004 A32 E", "RANGE 0x8004 0x8008 A32 E", "RANGE 0x8008 0x800c A32 E",
      "EXCEPTION 0x0a"}, NULL, 0},
    {"18_control_trigger_between", 0, 0x4100F240, 0, NOP NOP NOP LDR NOP NOP "feffffea",
     HEAD3 " 8c 84 898080804838 0c 898080804834",
     {"0x00008000 A32 E", "0x00008004 A32 E", "0x00008008 A32 E"},
     {"RANGE 0x8000 0x8004 A32 E", "RANGE 0x8004 0x8008 A32 E", "RANGE 0x8008 0x800c A32 E",
      "EXCEPTION 0x0c", "EXCEPTION 0x0a"}, NULL, 0},
    /* ... and with nothing to delete (exception number 0: no EXCEPTION
     * element) its element count goes below zero: the next P-header's
     * first range (0x8000) is lost. */
    {"18_second_cancel_loses_a_range", 0, 0x4100F240, 0, NOP NOP NOP LDR NOP NOP "feffffea",
     HEAD3 " 8c 84 818081804820 818081804820 8c 88",
     {"0x00008000 A32 E", "0x00008004 A32 E", "0x00008008 A32 E", "0x00008000 A32 E",
      "0x00008004 A32 E", "0x00008008 A32 E", "0x0000800C A32 E", "0x00008010 A32 E"},
     {"RANGE 0x8000 0x8004 A32 E", "RANGE 0x8004 0x8008 A32 E", "RANGE 0x8008 0x800c A32 E",
      "RANGE 0x8004 0x8008 A32 E", "RANGE 0x8008 0x800c A32 E", "RANGE 0x800c 0x8010 A32 E",
      "RANGE 0x8010 0x8014 A32 E"}, NULL, 0},
    /* 19: alternative address encoding (ETMIDR[20]): a branch's fifth
     * byte with bit 7 set (the deprecated form, 0x80) does not end it, so
     * the P-header and trigger after it are swallowed; the control, with
     * the original encoding, reads five bytes. */
    {"19_alt_branch_read_past_fifth_byte", 0, 0x4110F240, 0, NOP NOP NOP NOP NOP NOP "feffffea",
     HEAD3 " 88 8980818080 84 0c 84",
     {"0x00008000 A32 E", "0x00008004 A32 E", "0x00008010 A32 E", "0x00008014 A32 E"},
     {"RANGE 0x8000 0x8004 A32 E", "RANGE 0x8004 0x8008 A32 E", "RANGE 0x8010 0x8014 A32 E"}, NULL, 0},
    {"19_control_original_encoding", 0, 0x4100F240, 0, NOP NOP NOP NOP NOP NOP "feffffea",
     HEAD3 " 88 8980818080 84 0c 84",
     {"0x00008000 A32 E", "0x00008004 A32 E", "0x00008010 A32 E", "0x00008014 A32 E"},
     {"RANGE 0x8000 0x8004 A32 E", "RANGE 0x8004 0x8008 A32 E", "RANGE 0x8010 0x8014 A32 E",
      "RANGE 0x8014 0x8018 A32 E"}, NULL, 0},
    /* 20: a PTM A-sync of 17 zeros (16k + 1) is missed, so nothing is
     * decoded; the control, 21 zeros (16k + 5), synchronises. */
    {"20_async_after_17_zeros_missed", 0, 0x411CF310, 0, NOP NOP NOP NOP NOP "feffffea",
     "0000000000000000000000000000000000 80 080080000021 88",
     {"0x00008000 A32 E", "0x00008004 A32 E", "0x00008008 A32 E", "0x0000800C A32 E",
      "0x00008010 A32 E", "0x00008014 A32 E", "0x00008014 A32 E"},
     {NULL}, NULL, 0},
    {"20_control_21_zeros", 0, 0x411CF310, 0, NOP NOP NOP NOP NOP "feffffea",
     "000000000000000000000000000000000000000000 80 080080000021 88",
     {"0x00008000 A32 E", "0x00008004 A32 E", "0x00008008 A32 E", "0x0000800C A32 E",
      "0x00008010 A32 E", "0x00008014 A32 E", "0x00008014 A32 E"},
     {"RANGE 0x8000 0x8018 A32 E", "RANGE 0x8014 0x8018 A32 E"}, NULL, 0},
    /* 1 (docs/opencsd-bugs.md, "after an LSiP I-sync"): an LSiP I-sync
     * (load/store at 0x80000000 ARM, execution goes on at 0x8000 Thumb,
     * IHI0014Q 7.10.5), a Thumb BLX(imm) to ARM 0x8010 as the last atom
     * of its P-header: the next header's atoms are walked as Thumb from
     * 0x8010 (0xE1A0 there is a Thumb B to 0x8356).  The control has all
     * four atoms in one header. */
    {"1_blx_isa_lost_after_lsip_isync", 0, 0x4100F240, 0,
     "00f006e8" "00bf00bf" "00bf00bf" NOP NOP NOP "feffffea",
     "000000000080 08a0000000808180828010 84 8c",
     {"0x00008000 T32 E", "0x00008010 A32 E", "0x00008014 A32 E", "0x00008018 A32 E"},
     {"RANGE 0x8000 0x8004 T32 E", "RANGE 0x8010 0x8012 T32 E", "RANGE 0x8012 0x8014 T32 E",
      "NACC 0x8356"}, NULL, 0},
    {"1_control_lsip_one_header", 0, 0x4100F240, 0,
     "00f006e8" "00bf00bf" "00bf00bf" NOP NOP NOP "feffffea",
     "000000000080 08a0000000808180828010 90",
     {"0x00008000 T32 E", "0x00008010 A32 E", "0x00008014 A32 E", "0x00008018 A32 E"},
     {"RANGE 0x8000 0x8004 T32 E", "RANGE 0x8010 0x8014 A32 E", "RANGE 0x8014 0x8018 A32 E",
      "RANGE 0x8018 0x801c A32 E"}, NULL, 0},
    /* 21: an LSiP I-sync says its load/store instruction (here an LDM at
     * 0x80000000, ARM) executed (IHI0014Q 7.14.2: the only I-sync that
     * implies an instruction): OpenCSD goes on at the second address and
     * never reports the LDM. */
    {"21_lsip_instruction_not_reported", 0, 0x4100F240, 0, NOP NOP "feffffea",
     "000000000080 08a0000000808180818008 84",
     {"0x80000000 A32 E", "0x00008000 A32 E"},
     {"RANGE 0x8000 0x8004 A32 E"},
     "1e0090e8" NOP, 0x80000000u},
    /* 11, third form (found by the differential fuzz harness): the LSiP
     * address of the 6-byte form, five address bytes then an exception
     * byte that signals the security state (IHI0014Q 7.10.5; byte 5 bit
     * 6 says one follows, 7.3.5): OpenCSD ends the I-sync at byte 5, the
     * first with bit 7 clear, and reads the exception byte 0x01 as a
     * one-byte branch address, so it goes on at 0x8000, not 0x8004.  The
     * control has no exception byte (byte 5 bit 6 clear). */
    {"11_lsip_exception_byte_read_as_branch", 0, 0x4100F240, 0, NOP NOP "feffffea",
     "000000000080 08a000000080 8380818048 01 84",
     {"0x80000000 A32 E", "0x00008004 A32 E"},
     {"RANGE 0x80000000 0x80000004 A32 E"},
     "1e0090e8" NOP, 0x80000000u},
    {"11_control_lsip_no_exception_byte", 0, 0x4100F240, 0, NOP NOP "feffffea",
     "000000000080 08a000000080 8380818008 84",
     {"0x80000000 A32 E", "0x00008004 A32 E"},
     {"RANGE 0x8004 0x8008 A32 E"},
     "1e0090e8" NOP, 0x80000000u},
    /* 13, 64-bit (ETMCCER[29]): the ninth payload byte is the last one,
     * full width; with its bit 7 set OpenCSD reads on through the
     * P-header to the trigger. */
    {"13_timestamp64_read_past_its_end", 0x10000000, 0x410CF250, 0x20000000,
     NOP NOP NOP NOP "feffffea", HEAD3 " 428182838485868788 89 88 0c 84",
     {"0x00008000 A32 E", "0x00008004 A32 E", "0x00008008 A32 E"},
     {"RANGE 0x8000 0x8004 A32 E"}, NULL, 0},
    /* 22: at the end of the trace OpenCSD sends an unfinished I-sync (here
     * its header byte alone) as if whole; its decoder fills in none of the
     * element it takes for it, so the range that slot of its 8-element
     * ring held eight elements before (0x8008) is sent again.  The
     * control ends with the whole periodic I-sync (at 0x8028). */
    {"22_isync_cut_by_eot_sends_stale_range", 0, 0x4100F240, 0, NOP NOP NOP NOP NOP NOP NOP NOP NOP NOP NOP NOP "feffffea",
     HEAD3 " 84 84 84 84 84 84 84 84 84 84" " 08",
     {"0x00008000 A32 E", "0x00008004 A32 E", "0x00008008 A32 E", "0x0000800C A32 E", "0x00008010 A32 E", "0x00008014 A32 E", "0x00008018 A32 E", "0x0000801C A32 E", "0x00008020 A32 E", "0x00008024 A32 E"},
     {"RANGE 0x8000 0x8004 A32 E", "RANGE 0x8004 0x8008 A32 E", "RANGE 0x8008 0x800c A32 E", "RANGE 0x800c 0x8010 A32 E", "RANGE 0x8010 0x8014 A32 E", "RANGE 0x8014 0x8018 A32 E", "RANGE 0x8018 0x801c A32 E", "RANGE 0x801c 0x8020 A32 E", "RANGE 0x8020 0x8024 A32 E", "RANGE 0x8024 0x8028 A32 E", "RANGE 0x8008 0x800c A32 E"}, NULL, 0},
    {"22_control_whole_isync_at_eot", 0, 0x4100F240, 0, NOP NOP NOP NOP NOP NOP NOP NOP NOP NOP NOP NOP "feffffea",
     HEAD3 " 84 84 84 84 84 84 84 84 84 84" " 080128800000",
     {"0x00008000 A32 E", "0x00008004 A32 E", "0x00008008 A32 E", "0x0000800C A32 E", "0x00008010 A32 E", "0x00008014 A32 E", "0x00008018 A32 E", "0x0000801C A32 E", "0x00008020 A32 E", "0x00008024 A32 E"},
     {"RANGE 0x8000 0x8004 A32 E", "RANGE 0x8004 0x8008 A32 E", "RANGE 0x8008 0x800c A32 E", "RANGE 0x800c 0x8010 A32 E", "RANGE 0x8010 0x8014 A32 E", "RANGE 0x8014 0x8018 A32 E", "RANGE 0x8018 0x801c A32 E", "RANGE 0x801c 0x8020 A32 E", "RANGE 0x8020 0x8024 A32 E", "RANGE 0x8024 0x8028 A32 E"}, NULL, 0},
    /* 23: an exception byte sets AltISA (bit 6, IHI0014Q 7.3.5: here on
     * a branch to 0x8060, byte 5 0x50 announcing it, exception byte 0x40);
     * the periodic I-sync after it, Thumb at 0x8040, has AltISA clear
     * (info 0x00), so the full Thumb branch to 0x8080 after it is Thumb.
     * OpenCSD's I-sync never clears the AltISA its branches go by: it
     * takes 0x8080 for ThumbEE and sends an empty range.  The control's
     * exception byte (0x00) leaves AltISA clear. */
    {"23_altisa_outlives_the_isync", 0, 0x4100F240, 0, NOP NOP NOP NOP NOP NOP NOP NOP NOP NOP NOP NOP NOP NOP NOP NOP "00bf00bf00bf00bf00bf00bf00bf00bf00bf00bf00bf00bf00bf00bf00bf00bf00bf00bf00bf00bf00bf00bf00bf00bf00bf00bf00bf00bf00bf00bf00bf00bf00bf00bf00bf00bf00bf00bf00bf00bf",
     HEAD3 " 84 e1808280 5040 080041800000 84 8181828010 84",
     {"0x00008000 A32 E", "0x00008040 T32 E", "0x00008080 T32 E"},
     {"RANGE 0x8000 0x8004 A32 E", "RANGE 0x8040 0x8042 T32 E", "RANGE 0x0 0x0 A32 N"}, NULL, 0},
    {"23_control_altisa_clear", 0, 0x4100F240, 0, NOP NOP NOP NOP NOP NOP NOP NOP NOP NOP NOP NOP NOP NOP NOP NOP "00bf00bf00bf00bf00bf00bf00bf00bf00bf00bf00bf00bf00bf00bf00bf00bf00bf00bf00bf00bf00bf00bf00bf00bf00bf00bf00bf00bf00bf00bf00bf00bf00bf00bf00bf00bf00bf00bf00bf00bf",
     HEAD3 " 84 e1808280 5000 080041800000 84 8181828010 84",
     {"0x00008000 A32 E", "0x00008040 T32 E", "0x00008080 T32 E"},
     {"RANGE 0x8000 0x8004 A32 E", "RANGE 0x8040 0x8042 T32 E", "RANGE 0x8080 0x8082 T32 E"},
     NULL, 0},
};

static size_t unhex(const char *s, uint8_t *out, size_t max)
{
    size_t n = 0;
    unsigned v;

    while (*s) {
        if (*s == ' ') {
            s++;
            continue;
        }
        cr_assert(sscanf(s, "%2x", &v) == 1 && n < max, "bad hex at '%s'", s);
        out[n++] = (uint8_t)v;
        s += 2;
    }
    return n;
}

static bool lister_or_skip(void)
{
    const char *ci = getenv("CI");

    if (system("command -v trc_pkt_lister >/dev/null 2>&1") == 0)
        return true;
    if (ci && !strcmp(ci, "true"))
        cr_assert_fail("trc_pkt_lister (libopencsd-bin) missing under CI=true");
    fprintf(stderr, "\n*** SKIPPED: trc_pkt_lister not installed ***\n\n");
    cr_skip_test("SKIPPED: trc_pkt_lister not installed");
    return false;
}

typedef struct lines {
    char v[16][80];
    size_t n;
} lines;

static int on_insn(void *ctx, const tb_insn_element *ie)
{
    lines *l = ctx;

    for (size_t k = 0; k < ie->n_addrs && l->n < 16; k++) {
        char atom = k + 1 == ie->n_addrs ? ie->el->last_atom : 'E';

        if (ie->protocol == TB_PROTO_ETMV3)
            atom = ((ie->el->atom_bits >> k) & 1) ? 'N' : 'E';
        snprintf(l->v[l->n++], sizeof l->v[0], "0x%08X %s %c", ie->addrs[k],
                 tb_isa_name((tb_isa)ie->el->isa), atom);
    }
    return 0;
}

/* OpenCSD's elements, reduced. */
static void theirs(const char *dir, lines *l)
{
    char cmd[1024], buf[1024];
    FILE *f;

    snprintf(cmd, sizeof cmd, "cd '%s' && trc_pkt_lister -ss_dir . -decode 2>&1", dir);
    f = popen(cmd, "r");
    cr_assert_not_null(f);
    while (fgets(buf, sizeof buf, f) && l->n < 16) {
        char *p;
        unsigned long a, b, n;
        char isa[8], ex;

        if ((p = strstr(buf, "INSTR_RANGE(exec range=")) &&
            sscanf(p, "INSTR_RANGE(exec range=%lx:[%lx] num_i(%lu)", &a, &b, &n) == 3 &&
            (p = strstr(p, "(ISA=")) && sscanf(p, "(ISA=%7[^)]) %c", isa, &ex) == 2)
            snprintf(l->v[l->n++], sizeof l->v[0], "RANGE 0x%lx 0x%lx %s %c", a, b, isa, ex);
        else if ((p = strstr(buf, "EXCEPTION(")) && (p = strstr(p, "excep num (")) &&
                 sscanf(p, "excep num (%lx", &a) == 1)
            snprintf(l->v[l->n++], sizeof l->v[0], "EXCEPTION 0x%02lx", a);
        else if ((p = strstr(buf, "ADDR_NACC( ")) && sscanf(p, "ADDR_NACC( %lx", &a) == 1)
            snprintf(l->v[l->n++], sizeof l->v[0], "NACC 0x%lx", a);
    }
    pclose(f);
}

static void check(const char *who, const lines *got, const char *const *want)
{
    size_t n = 0;

    while (n < 12 && want[n])
        n++;
    for (size_t k = 0; k < got->n || k < n; k++)
        cr_assert(k < got->n && k < n && !strcmp(got->v[k], want[k]),
                  "%s, line %zu: got '%s', want '%s'", who, k, k < got->n ? got->v[k] : "",
                  k < n ? want[k] : "");
}

static void run_case(const bug_case *c)
{
    char dir[] = "/tmp/tb_ocsd_fuzz_bug_XXXXXX", err[256] = "", cmd[300];
    uint8_t img[256], trace[256];
    size_t ni = unhex(c->image, img, sizeof img), nt = unhex(c->trace, trace, sizeof trace);
    tb_config cfg;
    lines ours = {.n = 0}, th = {.n = 0};

    cr_assert_eq(tb_config_from_regs(&cfg, c->etmcr, c->etmidr, c->etmccer, 0x10), 0);
    cr_assert_not_null(mkdtemp(dir));
    {
        uint8_t img2[64];
        const size_t n2 = c->image2 ? unhex(c->image2, img2, sizeof img2) : 0;
        const tb_snap_region r[2] = {{0x8000, img, ni}, {c->img2_addr, img2, n2}};
        const tb_snap_out_source s = {cfg.protocol == TB_PROTO_PTM ? "PTM_0" : "ETM_0", &cfg,
                                      "cpu_0", "Cortex-A15", r, n2 ? 2 : 1};

        cr_assert_eq(tb_snapshot_write(dir, &s, 1, trace, nt, "source_data", err, sizeof err),
                     0, "%s", err);
    }
    cr_assert_eq(tb_decode_snapshot_insns(dir, -1, on_insn, &ours, err, sizeof err), 0, "%s",
                 err);
    check("ours", &ours, c->ours);
    theirs(dir, &th);
    check("OpenCSD (if it now agrees with ours, the fault is fixed: drop its signature)", &th,
          c->theirs);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}

#define CASE(i, n)                                                                      \
    Test(ocsd_fuzz_bugs, n, .timeout = 60)                                              \
    {                                                                                   \
        if (lister_or_skip())                                                           \
            run_case(&cases[i]);                                                        \
    }

CASE(0, arm_isync_bit1_etmv3)
CASE(1, arm_isync_bit1_ptm)
CASE(2, timestamp_read_past_its_end)
CASE(3, empty_pheader_stale_range)
CASE(4, blx_n_switches_isa_etmv3)
CASE(5, blx_n_switches_isa_ptm)
CASE(6, thumb_last_halfword)
CASE(7, exception0_drops_atom)
CASE(8, second_cancel_deletes_exception)
CASE(9, control_trigger_between)
CASE(10, second_cancel_loses_a_range)
CASE(11, alt_branch_read_past_fifth_byte)
CASE(12, control_original_encoding)
CASE(13, async_after_17_zeros_missed)
CASE(14, control_21_zeros)
CASE(15, blx_isa_lost_after_lsip_isync)
CASE(16, control_lsip_one_header)
CASE(17, lsip_instruction_not_reported)
CASE(18, lsip_exception_byte_read_as_branch)
CASE(19, control_lsip_no_exception_byte)
CASE(20, timestamp64_read_past_its_end)
CASE(21, isync_cut_by_eot_sends_stale_range)
CASE(22, control_whole_isync_at_eot)
CASE(23, altisa_outlives_the_isync)
CASE(24, control_altisa_clear)
