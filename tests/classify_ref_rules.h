/*
 * The cases where Capstone 4's decode differs from the ARM ARM (DDI
 * 0406C, DDI 0403E) in a way the classifier sees; classify_ref.c says
 * which encodings each covers and what the ARM ARM gives instead.
 * TB_CREF_RULE(id, text).
 */
TB_CREF_RULE(TB_CREF_UNPRED_PC,
             "Capstone: a PC destination the ARM ARM makes UNPREDICTABLE is a write of the PC; "
             "ARM ARM: no defined write, no class")
TB_CREF_RULE(TB_CREF_CARRY_FLAGS,
             "Capstone: ADC/SBC/RSC without S set the flags; ARM ARM: only S = 1 makes "
             "Rd = PC an exception return (B9.3.20)")
TB_CREF_RULE(TB_CREF_SHOULD_BE,
             "Capstone: no instruction when should-be bits differ; ARM ARM: UNPREDICTABLE, "
             "the cores decode it: Capstone's class with them as the diagram shows")
TB_CREF_RULE(TB_CREF_UDF,
             "Capstone: UDF is an instruction; ARM ARM A8.8.247: permanently UNDEFINED")
TB_CREF_RULE(TB_CREF_REGS,
             "Capstone: no instruction for a register combination the ARM ARM makes "
             "UNPREDICTABLE in a load of the PC; the cores load it: Capstone's class without it")
