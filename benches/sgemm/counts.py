#!/usr/bin/env python3
"""Instructions per opcode of SPIR-V disassemblies (spirv-dis output), one column per module.

    python3 benches/sgemm/counts.py A.spvasm B.spvasm ...

Counts only instructions inside functions (between OpFunction and OpFunctionEnd), where the
code the driver compiles is; opcodes every module has fewer than 2 of are summed into "other".
"""
import collections
import os
import sys


def count(path):
    c = collections.Counter()
    inside = False
    for line in open(path):
        words = line.split()
        if not words or words[0].startswith(";"):
            continue
        op = words[2] if len(words) > 2 and words[1] == "=" else words[0]
        if op == "OpFunction":
            inside = True
        if inside:
            c[op] += 1
        if op == "OpFunctionEnd":
            inside = False
    return c


def main():
    paths = sys.argv[1:]
    counts = [count(p) for p in paths]
    names = [os.path.basename(p).removesuffix(".spvasm") for p in paths]
    ops = sorted({op for c in counts for op in c}, key=lambda op: -max(c[op] for c in counts))
    shown = [op for op in ops if max(c[op] for c in counts) >= 2]
    width = max(len(n) for n in names)
    print(f"{'opcode':<28}" + "".join(f"{n:>{width + 2}}" for n in names))
    for op in shown:
        print(f"{op:<28}" + "".join(f"{c[op]:>{width + 2}}" for c in counts))
    other = [sum(v for op, v in c.items() if op not in shown) for c in counts]
    print(f"{'other':<28}" + "".join(f"{v:>{width + 2}}" for v in other))
    print(f"{'all':<28}" + "".join(f"{sum(c.values()):>{width + 2}}" for c in counts))


if __name__ == "__main__":
    main()
