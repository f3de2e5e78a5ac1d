#!/usr/bin/env python3
"""Code coverage of the real TC2 traces: Arm DS-5's decode against ours.

Issue 34 item 5: per-address execution counts and function coverage
computed from DS-5's per-instruction dumps (TC2/ds5-dumps) equal what
`tracebench coverage --format json` gives for the same trace source.
This script is the separate path: it reads the DS-5 dumps and the
snapshot's memory dump itself and links nothing of tracebench; only the
compared side runs the CLI.

The snapshot has a memory dump, no ELF, so address ranges stand in for
functions.  The ranges are chosen from the DS-5 side alone: the memory
dump cut at every 4 KiB boundary and at every BL/BLX target DS-5
disassembled.  They reach tracebench as an ELF this script writes (the
dump's bytes as one PT_LOAD segment, one sized STT_FUNC symbol per range,
entry point the cores' R15 from cpu_N.ini), given with --memory, so the
CLI's own function path (and its check that the ELF holds the traced
code) is what is compared.

What is compared, per trace source (0x10-0x12 ETMv3.5, 0x13 PTM1.1):
  - the set of addresses executed, and how often each ran: DS-5's
    "Instruction" rows against our "insns" counts;
  - conditions: ETMv3 traces every instruction's condition (IHI0014Q
    7.3), so passed/failed equal DS-5's rows without/with "fail".  PTM
    traces waypoints only (IHI0035B B.3.2): DS-5's rows with the Branch
    column "true" are waypoints and ours must carry the same
    passed/failed; no other row may fail, and ours may say "known":false
    only for instructions DS-5 lists as non-waypoints;
  - a 16-bit opcode in DS-5's dump is a Thumb instruction in ours;
  - every range's count (lcov FNDA's meaning: how often its first
    instruction ran, or when it never did, the most any instruction in it
    ran) and whether it ran at all; a range nothing ran in is unknown
    (count null) when the trace has gaps, 0 when it has none;
  - whether the coverage is complete: DS-5 shows gaps as "Tracing
    disabled" rows, rows it could not read ("0x?": memory not in the
    dump, or an atom with no known address), and a dump that starts
    without trace being enabled (the buffer's tail of a longer run).

Where the two legitimately differ, and how it is handled:
  - DS-5's "0x?" rows have no address (or no code) to count; ours emits
    ADDR_NACC / ADDR_UNKNOWN for the same atoms and counts nothing: both
    sides leave them out, each counting them as a gap.
  - The number of gaps is not compared, only whether there are any.
    Ours counts each trace-on after the first sync, one for a trace that
    starts mid-run (a periodic I-sync first), one more because the ELF's
    entry point (the cores' R15, 0xC0008000) is not where the trace
    starts, and each ADDR_NACC / ADDR_UNKNOWN element.  On 0x13 that is
    136 + 1 + 1 + 16 + 23 = 177; DS-5 has the 136 "Tracing disabled", 16
    "Cannot access target memory" rows (one to one with our NACC), and 28
    "Unknown instruction address" rows in 8 runs, where ours has 23
    ADDR_UNKNOWN elements: the two group unknown atoms differently.
  - Trace IDs: each DS-5 dump is one source; ours is run with --id.
  - DS-5's Branch column marks branches; PTM's waypoints also include
    ISB (and DMB/DSB when the source's ETMCCER[24] is set; TC2's 0x13
    has it clear), whose atom traces their condition: those rows count
    as waypoints here (waypoint_row).

Exit: 0 equal, 1 a difference (each printed), 2 usage, 77 skipped (no
reference traces, and CI is not "true"; under CI=true their absence
fails).

--self-test runs the comparison as usual, then again with one fault
planted in our side at a time (a count off by one, an address dropped,
passed and failed swapped, a range's count changed, a range unknown
where it ran, the completeness flipped) and fails unless every planted
fault is reported.
"""

import argparse
import bisect
import copy
import json
import os
import re
import struct
import subprocess
import sys

SOURCES = [  # (dump file, trace ID, protocol)
    ("etmv3_0x10.txt", 0x10, "etmv3"),
    ("etmv3_0x11.txt", 0x11, "etmv3"),
    ("etmv3_0x12.txt", 0x12, "etmv3"),
    ("ptmv1_0x13.txt", 0x13, "ptm"),
]

RANGE_STEP = 0x1000
SKIP = 77


class Ds5:
    """One DS-5 dump: per-address counts and what it says of gaps."""

    def __init__(self, path, barrier_waypoints=False):
        self.count = {}      # address -> times executed
        self.failed = {}     # address -> times it failed its condition
        self.waypoint = {}   # address -> a PTM waypoint (see waypoint_row)
        self.narrow = set()  # addresses with a 16-bit opcode
        self.disabled = 0    # "Tracing disabled" rows
        self.unreadable = 0  # "0x?" rows
        self.bl_targets = set()
        self.starts_enabled = None
        self.rows = 0
        bl = re.compile(r"^BLX?\s+\{pc\}[+-]0x[0-9a-fA-F]+\s*;\s*0x([0-9a-fA-F]+)")
        with open(path, encoding="latin-1") as f:
            for line in f:
                c = line.rstrip("\r\n").split("\t")
                kind = c[0]
                detail = c[5] if len(c) > 5 else ""
                if kind == "Info" and detail == "Tracing enabled":
                    if self.starts_enabled is None:
                        self.starts_enabled = True
                    continue
                if kind == "Cycle Count" and detail == "Tracing disabled":
                    self.disabled += 1
                    continue
                if kind != "Instruction":
                    continue
                if self.starts_enabled is None:
                    self.starts_enabled = False
                if c[3] == "0x?":
                    self.unreadable += 1
                    continue
                addr = int(c[2].split(":")[-1], 16)
                self.rows += 1
                self.count[addr] = self.count.get(addr, 0) + 1
                fail = len(c) > 7 and c[7] == "fail"
                self.failed[addr] = self.failed.get(addr, 0) + fail
                wp = waypoint_row(c[6], detail, barrier_waypoints)
                if self.waypoint.setdefault(addr, wp) != wp:
                    raise SystemExit("%s: 0x%08X is a branch in one row and not in another"
                                     % (path, addr))
                if len(c[3]) == 6:  # "0x" + 4 hex digits
                    self.narrow.add(addr)
                m = bl.match(detail)
                if m:
                    self.bl_targets.add(int(m.group(1), 16))

    def complete(self):
        return self.disabled == 0 and self.unreadable == 0 and bool(self.starts_enabled)


def waypoint_row(branch, detail, barrier_waypoints):
    """Whether a DS-5 row is a PTM waypoint.  DS-5's Branch column says
    "is a branch"; PTM's waypoints are the branches and also every ISB,
    and DMB/DSB when ETMCCER[24] is set (IHI0035B 3.12, protocol-notes
    "PTM atoms"): each gets an atom, so its condition is traced."""
    op = detail.split()[0].upper() if detail.split() else ""
    return branch == "true" or op == "ISB" or (barrier_waypoints and op in ("DMB", "DSB"))


def source_etmccer(snap, tid):
    """ETMCCER of the trace source with trace ID tid (its device ini)."""
    for name in sorted(os.listdir(snap)):
        if not name.endswith(".ini"):
            continue
        regs = read_ini(os.path.join(snap, name)).get("regs", {})
        ids = [v for k, v in regs.items() if k.startswith("etmtraceidr")]
        if ids and int(ids[0], 16) & 0x7F == tid:
            for k, v in regs.items():
                if k.startswith("etmccer"):
                    return int(v, 16)
    raise SystemExit("%s: no trace source with ID 0x%02X and an ETMCCER" % (snap, tid))


def read_ini(path):
    sec, out = None, {}
    with open(path, encoding="latin-1") as f:
        for line in f:
            line = line.strip()
            if line.startswith("[") and line.endswith("]"):
                sec = line[1:-1].strip().lower()
                out.setdefault(sec, {})
            elif "=" in line and sec is not None:
                k, v = line.split("=", 1)
                out[sec][k.strip().lower()] = v.strip()
    return out


def memory_dump(snap):
    """The one memory dump all cores map (TC2: kernel_dump.bin), and the
    cores' R15 (where the kernel starts)."""
    dumps, pcs = set(), set()
    for name in sorted(os.listdir(snap)):
        if not re.match(r"cpu_\d+\.ini$", name):
            continue
        ini = read_ini(os.path.join(snap, name))
        d = ini.get("dump", {})
        dumps.add((d["file"], int(d["address"], 16), int(d.get("length", "0"), 16)))
        pcs.add(int(ini.get("regs", {}).get("r15", "0"), 16))
    if len(dumps) != 1 or len(pcs) != 1:
        raise SystemExit("%s: the cores map different memory (%s); this check expects one dump"
                         % (snap, sorted(dumps)))
    f, addr, length = dumps.pop()
    with open(os.path.join(snap, f), "rb") as fh:
        data = fh.read()
    if length:
        data = data[:length]
    return addr, data, pcs.pop()


def ranges(lo, hi, targets):
    cuts = {lo, hi}
    cuts.update(a for a in range(lo - lo % RANGE_STEP + RANGE_STEP, hi, RANGE_STEP))
    cuts.update(t & ~1 for t in targets if lo <= (t & ~1) < hi)
    cuts = sorted(cuts)
    return [(a, b) for a, b in zip(cuts, cuts[1:])]


def write_elf(path, addr, data, entry, funcs):
    """An ELF32 ARM executable: data at addr in one PT_LOAD segment and a
    .text section, one global sized STT_FUNC symbol per (lo, hi)."""
    shstr = b"\0.text\0.symtab\0.strtab\0.shstrtab\0"
    strtab = bytearray(b"\0")
    syms = bytearray(16)  # the null symbol
    for lo, hi in funcs:
        name = strtab.__len__()
        strtab += b"r_%08X\0" % lo
        syms += struct.pack("<IIIBBH", name, lo, hi - lo, 0x12, 0, 1)  # GLOBAL FUNC, .text
    text_off = 0x100
    sym_off = text_off + len(data)
    sym_off += -sym_off % 4
    str_off = sym_off + len(syms)
    shs_off = str_off + len(strtab)
    sh_off = shs_off + len(shstr)
    sh_off += -sh_off % 4
    ehdr = struct.pack("<16sHHIIIIIHHHHHH",
                       b"\x7fELF\x01\x01\x01" + b"\0" * 9,
                       2, 40, 1, entry, 52, sh_off, 0x05000000, 52, 32, 1, 40, 5, 4)
    phdr = struct.pack("<IIIIIIII", 1, text_off, addr, addr, len(data), len(data), 5, 4)

    def sh(name, typ, flags, a, off, size, link=0, info=0, align=1, ent=0):
        return struct.pack("<IIIIIIIIII", name, typ, flags, a, off, size, link, info, align, ent)

    shdrs = (sh(0, 0, 0, 0, 0, 0)
             + sh(shstr.index(b".text"), 1, 6, addr, text_off, len(data), align=4)
             + sh(shstr.index(b".symtab"), 2, 0, 0, sym_off, len(syms), 3, 1, 4, 16)
             + sh(shstr.index(b".strtab"), 3, 0, 0, str_off, len(strtab))
             + sh(shstr.index(b".shstrtab"), 3, 0, 0, shs_off, len(shstr)))
    out = bytearray(ehdr + phdr)
    out += b"\0" * (text_off - len(out)) + data
    out += b"\0" * (sym_off - len(out)) + syms + strtab + shstr
    out += b"\0" * (sh_off - len(out)) + shdrs
    with open(path, "wb") as f:
        f.write(out)


def expected_funcs(ds5, funcs):
    """Per range: (count, seen) from DS-5's counts (the FNDA meaning)."""
    out = {}
    addrs = sorted(ds5.count)
    for lo, hi in funcs:
        i = bisect.bisect_left(addrs, lo)
        j = bisect.bisect_left(addrs, hi)
        inside = addrs[i:j]
        entry = ds5.count.get(lo, 0)
        most = max((ds5.count[a] for a in inside), default=0)
        out[lo] = (entry if entry else most, bool(inside), hi)
    return out


def compare(tag, proto, ds5, ours, want_funcs, limit=20):
    """The differences between DS-5's coverage and ours, as lines."""
    diffs = []
    mine = {}
    for ins in ours["insns"]:
        if ins["addr"] in mine:
            diffs.append("%s: 0x%08X listed twice in ours (%s and %s)"
                         % (tag, ins["addr"], mine[ins["addr"]]["isa"], ins["isa"]))
        mine[ins["addr"]] = ins
    for a in sorted(set(ds5.count) - set(mine)):
        diffs.append("%s: 0x%08X ran %d times in DS-5's decode, not at all in ours"
                     % (tag, a, ds5.count[a]))
    for a in sorted(set(mine) - set(ds5.count)):
        diffs.append("%s: 0x%08X ran %d times in ours, not at all in DS-5's decode"
                     % (tag, a, mine[a]["count"]))
    for a in sorted(set(mine) & set(ds5.count)):
        m, n, fails = mine[a], ds5.count[a], ds5.failed[a]
        if m["count"] != n:
            diffs.append("%s: 0x%08X ran %d times in DS-5's decode, %d in ours"
                         % (tag, a, n, m["count"]))
        known = m.get("known", True)
        if proto == "etmv3" or ds5.waypoint[a]:
            if not known:
                diffs.append("%s: 0x%08X: its condition is unknown in ours; DS-5 traced it "
                             "(%s)" % (tag, a, "ETMv3" if proto == "etmv3" else "a waypoint"))
            elif (m["passed"], m["failed"]) != (n - fails, fails):
                diffs.append("%s: 0x%08X passed/failed its condition %d/%d times in DS-5's "
                             "decode, %d/%d in ours" % (tag, a, n - fails, fails,
                                                        m["passed"], m["failed"]))
        else:
            # PTM, not a waypoint: no atom says its condition, so ours
            # must not claim to know it (neither passed nor failed).
            if fails:
                diffs.append("%s: 0x%08X: DS-5 says it failed but it is no waypoint" % (tag, a))
            if known:
                diffs.append("%s: 0x%08X: ours says it passed/failed its condition %d/%d "
                             "times; PTM traces no condition of a non-waypoint"
                             % (tag, a, m["passed"], m["failed"]))
        if fails and not m.get("cond"):
            diffs.append("%s: 0x%08X failed its condition in DS-5's decode, ours does not "
                         "call it conditional" % (tag, a))
        if a in ds5.narrow and m["isa"] != "T32":
            diffs.append("%s: 0x%08X has a 16-bit opcode in DS-5's decode, ISA %s in ours"
                         % (tag, a, m["isa"]))
    complete = ds5.complete()
    if bool(ours["complete"]) != complete:
        diffs.append("%s: DS-5's decode is %s (%d times trace disabled, %d rows unreadable, "
                     "starts %s), ours says complete=%s (%d gaps)"
                     % (tag, "complete" if complete else "incomplete", ds5.disabled,
                        ds5.unreadable, "enabled" if ds5.starts_enabled else "mid-run",
                        ours["complete"], ours["gaps"]))
    got = {f["lo"]: f for f in ours["functions"]}
    if sorted(got) != sorted(want_funcs):
        diffs.append("%s: ours lists %d ranges, the ELF has %d (first differing at 0x%08X)"
                     % (tag, len(got), len(want_funcs),
                        min(set(got) ^ set(want_funcs)) if set(got) ^ set(want_funcs) else 0))
    for lo in sorted(set(got) & set(want_funcs)):
        cnt, seen, hi = want_funcs[lo]
        f = got[lo]
        want = cnt if seen or complete else None
        if f["hi"] != hi:
            diffs.append("%s: range 0x%08X ends at 0x%08X in ours, 0x%08X in the ELF"
                         % (tag, lo, f["hi"], hi))
        if f["count"] != want:
            diffs.append("%s: range 0x%08X-0x%08X: count %s from DS-5's decode, %s in ours"
                         % (tag, lo, hi, "unknown" if want is None else want,
                            "unknown" if f["count"] is None else f["count"]))
    if len(diffs) > limit:
        diffs = diffs[:limit] + ["%s: ... and %d more" % (tag, len(diffs) - limit)]
    return diffs


def plants(ours):
    """One fault at a time in our side, each of which must be caught."""
    insns = ours["insns"]
    ran = [i for i, f in enumerate(ours["functions"]) if f["count"]]
    # a traced condition seen failing (ETMv3: any instruction; PTM: a waypoint)
    cond = [i for i, x in enumerate(insns) if x.get("known", True) and x.get("failed")]
    # PTM: an instruction no atom traced
    ptm_guess = [i for i, x in enumerate(insns) if not x.get("known", True)]

    def make(name, fn):
        o = copy.deepcopy(ours)
        fn(o)
        return name, o

    yield make("a count off by one", lambda o: o["insns"][len(insns) // 2].update(
        count=o["insns"][len(insns) // 2]["count"] + 1))
    yield make("an address dropped", lambda o: o["insns"].pop(len(insns) // 3))
    yield make("an address added", lambda o: o["insns"].append(
        dict(insns[-1], addr=insns[-1]["addr"] + 0x40000)))
    if cond:
        k = cond[0]
        yield make("passed and failed swapped", lambda o: o["insns"][k].update(
            passed=insns[k]["failed"], failed=insns[k]["passed"]))
        yield make("a traced condition called unknown", lambda o: o["insns"][k].update(
            known=False))
    if ptm_guess:
        k = ptm_guess[0]
        yield make("a PTM non-waypoint given a condition", lambda o: o["insns"].__setitem__(
            k, {key: v for key, v in dict(insns[k], passed=insns[k]["count"], failed=0).items()
                if key != "known"}))
    if ran:
        k = ran[len(ran) // 2]
        yield make("a range's count changed", lambda o: o["functions"][k].update(
            count=o["functions"][k]["count"] + 1))
        yield make("a range that ran called unknown", lambda o: o["functions"][k].update(
            count=None))
    yield make("completeness flipped", lambda o: o.update(complete=not o["complete"]))


def reference_dir(default):
    env = os.environ.get("TB_REFERENCE_DIR")
    return env if env else default


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cli", required=True, help="the tracebench executable")
    ap.add_argument("--ref", required=True,
                    help="reference directory (TB_REFERENCE_DIR overrides it)")
    ap.add_argument("--work", required=True, help="a directory for the ELF and the JSON")
    ap.add_argument("--self-test", action="store_true",
                    help="also plant faults in our side and require each to be caught")
    args = ap.parse_args()

    ref = reference_dir(args.ref)
    snap = os.path.join(ref, "opencsd-snapshots", "TC2")
    if not os.path.isdir(os.path.join(snap, "ds5-dumps")):
        if os.environ.get("CI") == "true":
            print("FAIL: reference traces absent at %s under CI=true (set TB_REFERENCE_DIR)"
                  % snap, file=sys.stderr)
            return 1
        print("\n*** SKIPPED: coverage vs DS-5: reference traces not found at %s "
              "(set TB_REFERENCE_DIR) ***\n" % snap, file=sys.stderr)
        return SKIP

    os.makedirs(args.work, exist_ok=True)
    base, data, entry = memory_dump(snap)
    dumps = [(Ds5(os.path.join(snap, "ds5-dumps", f),
                  proto == "ptm" and bool(source_etmccer(snap, tid) >> 24 & 1)), tid, proto)
             for f, tid, proto in SOURCES]
    targets = set()
    for d, _, _ in dumps:
        targets |= d.bl_targets
    funcs = ranges(base, base + len(data), targets)
    elf = os.path.join(args.work, "tc2-ranges.elf")
    write_elf(elf, base, data, entry, funcs)

    failed = False
    for d, tid, proto in dumps:
        tag = "0x%02X" % tid
        out = os.path.join(args.work, "coverage-%02x.json" % tid)
        cmd = [args.cli, "coverage", snap, "--id", tag, "--memory", elf, "--format", "json",
               "-o", out, "--quiet"]
        r = subprocess.run(cmd, stderr=subprocess.PIPE, text=True)
        if r.returncode != 0:
            print("FAIL %s: `%s` exited %d: %s" % (tag, " ".join(cmd), r.returncode,
                                                  r.stderr.strip()))
            failed = True
            continue
        with open(out) as f:
            ours = json.load(f)
        want = expected_funcs(d, funcs)
        diffs = compare(tag, proto, d, ours, want)
        seen = sum(1 for c, s, _ in want.values() if s)
        if diffs:
            failed = True
            print("FAIL %s (%s): ours differs from DS-5's decode:" % (tag, proto))
            for line in diffs:
                print("  " + line)
        else:
            print("ok   %s (%s): %d addresses, %d executions, %d conditions failed; %d of %d "
                  "ranges ran; %s (DS-5: %d trace-off, %d unreadable rows; ours: %d gaps)"
                  % (tag, proto, len(d.count), d.rows, sum(d.failed.values()), seen,
                     len(funcs), "complete" if d.complete() else "incomplete", d.disabled,
                     d.unreadable, ours["gaps"]))
        if args.self_test:
            for name, bad in plants(ours):
                caught = compare(tag, proto, d, bad, want)
                if caught:
                    print("ok   %s: planted fault caught (%s): %s" % (tag, name, caught[0]))
                else:
                    print("FAIL %s: planted fault not caught: %s" % (tag, name))
                    failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
