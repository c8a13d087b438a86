"""Derives the probe variants v2-v6 of a generated probe (v1, names renamed to pv_) into DIR:
v2 lead lane fixed, v3 no votes, v4 neither, v5 empty site functions, v6 lead from a ballot's
low word. Usage: python3 variants.py V1.wgsl DIR"""
import os
import re
import sys

src, out = sys.argv[1], sys.argv[2]
name = os.path.basename(src)[: -len("_v1.wgsl")]
s = open(src).read()
lead = re.search(r"fn pv_lead\(\) -> u32 \{\n    return .*?;\n\}", s).group(0)
no_votes = lambda t: t.replace("subgroupAny(cond)", "cond").replace("subgroupAll(cond)", "cond")
v2 = s.replace(lead, "fn pv_lead() -> u32 {\n    return 1u;\n}")
v5 = re.sub(r"(fn pv_add\d+\(lead: u32, cond: bool\) \{)\n(    .*\n)+?\}", r"\1\n}", no_votes(v2))
v5 = re.sub(r"(fn pv_enter\d+\(\) \{)\n(    .*\n)+?\}", r"\1\n}", v5)
v6 = s.replace(lead, "fn pv_lead() -> u32 {\n    return select(0u, 1u, firstTrailingBit(subgroupBallot(true).x) == pv_lane);\n}")
for tag, text in [("v1", s), ("v2", v2), ("v3", no_votes(s)), ("v4", no_votes(v2)), ("v5", v5), ("v6", v6)]:
    open(os.path.join(out, f"{name}_{tag}.wgsl"), "w").write(text)
