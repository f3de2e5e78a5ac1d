/*
 * The classifier's reference, for tests only: Capstone 4 decodes an
 * instruction and the ids and operands it reports are turned into a
 * tb_insn (what common/classify.c did at run time until it decoded the
 * encoding tables itself), then corrected where Capstone disagrees with
 * the ARM ARM (each case with its section, classify_ref.c).
 *
 * tb_cref_check() compares the classifier's answer with it, field by
 * field; test_classify runs it on every encoding of the classes that
 * matter and a random sample of the rest, classify_exhaustive on all
 * of them.
 */
#ifndef TB_CLASSIFY_REF_H
#define TB_CLASSIFY_REF_H

#include "tracebench/classify.h"

typedef struct tb_cref tb_cref;

tb_cref *tb_cref_new(void);
void tb_cref_free(tb_cref *r);

/* Capstone's own classification of op (A32 word; T32-32 hw1 << 16 |
 * hw2; T16 halfword) at addr, outside any IT block, before corrections:
 * out->undefined when Capstone cannot decode it.  Returns the size. */
int tb_cref_capstone(tb_cref *r, uint32_t op, tb_isa isa, uint32_t addr, tb_insn *out);

/* The documented differences between Capstone and the ARM ARM. */
enum tb_cref_rule {
    TB_CREF_SAME = 0,      /* no difference */
#define TB_CREF_RULE(id, text) id,
#include "classify_ref_rules.h"
#undef TB_CREF_RULE
    TB_CREF_NRULES
};
const char *tb_cref_rule_text(int rule);

/* Checks the classifier's result `mine` for op against the reference:
 * 0 when they agree, with *rule the deviation that applied
 * (TB_CREF_SAME when Capstone's answer stood); -1 on a mismatch, with a
 * message in msg. */
int tb_cref_check(tb_cref *r, uint32_t op, tb_isa isa, uint32_t addr, const tb_insn *mine,
                  int *rule, char *msg, size_t msg_len);

/* The T32 opcode (hw1 << 16 | hw2, or hw) as the bytes of memory. */
void tb_cref_bytes(uint32_t op, tb_isa isa, uint8_t b[4]);

#endif
