"""History variants of the generated collatz probe (z0): the `if` in the loop records one bit per
iteration per lane (no subgroup operation in the loop); the loop's end reduces the bits.
h1: bits in a private array of 8 words (256 iterations), nothing past it
h2: h1, and past 256 iterations the lanes still in the loop vote as today
h3: h2 with the 8 words in private scalars (switch) instead of an array
usage: python3 hist.py Z0.wgsl DIR"""
import sys, os
src, out = sys.argv[1], sys.argv[2]
s = open(src).read().replace("simtlab_probe", "pv")
old_cond = """fn pv_cond1(cond: bool) -> bool {
    if (true) {
        let any = subgroupAny(cond);
        let all = subgroupAll(cond);
        pv_c1.z += select(0u, 1u, cond);
        pv_v1 += vec2<u32>(select(0u, 1u, any && !all), select(0u, 1u, any));
    }
    return cond;
}"""
assert old_cond in s
old_exit = "        { let m = subgroupMax(pv_v1); pv_v1 = vec2<u32>(0u); pv_c1.w += lead * m.x; pv_s1 += lead * m.y; }\n"
assert old_exit in s
def variant(overflow, store, read, decls):
    c = """fn pv_cond1(cond: bool) -> bool {
    if (true) {
        let n = pv_n1;
        pv_h1 |= select(0u, 1u << (n & 31u), cond);
        if ((n & 31u) == 31u && n < 256u) {
            %s
            pv_h1 = 0u;
        }
%s        pv_n1 = n + 1u;
        pv_c1.z += select(0u, 1u, cond);
    }
    return cond;
}""" % (store, """        if (n >= 256u) {
            let any = subgroupAny(cond);
            let all = subgroupAll(cond);
            pv_v1 += vec2<u32>(select(0u, 1u, any && !all), select(0u, 1u, any));
        }
""" if overflow else "")
    e = """        {
            let n = pv_n1;
            let most = min(subgroupMax(n), 256u);
            var nonuniform = 0u;
            var any = 0u;
            for (var word = 0u; word * 32u < most; word++) {
                let full = (word + 1u) * 32u <= n;
                let bits = select(pv_h1, %s, full);
                let left = select(0u, n - word * 32u, n > word * 32u);
                let valid = select((1u << min(left, 31u)) - 1u, 0xffffffffu, left >= 32u);
                let o = subgroupOr(bits & valid);
                let a = subgroupAnd(bits | ~valid);
                nonuniform += countOneBits(o & ~a);
                any += countOneBits(o);
            }
            let m = subgroupMax(pv_v1);
            pv_v1 = vec2<u32>(0u);
            pv_n1 = 0u;
            pv_h1 = 0u;
            pv_c1.w += lead * (nonuniform + m.x);
            pv_s1 += lead * (any + m.y);
        }
""" % read
    t = s.replace(old_cond, c).replace(old_exit, e)
    t = t.replace("var<private> pv_v1: vec2<u32>;\n", "var<private> pv_v1: vec2<u32>;\nvar<private> pv_n1: u32;\nvar<private> pv_h1: u32;\n" + decls)
    return t
arr = ("pv_hist1[n >> 5u] = pv_h1;", "pv_hist1[min(word, 7u)]", "var<private> pv_hist1: array<u32, 8>;\n")
regs_decl = "".join(f"var<private> pv_r1_{i}: u32;\n" for i in range(8))
regs_store = "switch (n >> 5u) { " + " ".join(f"case {i}u: {{ pv_r1_{i} = pv_h1; }}" for i in range(7)) + " default: { pv_r1_7 = pv_h1; } }"
regs_fn = "fn pv_word1(w: u32) -> u32 {\n    switch (w) { " + " ".join(f"case {i}u: {{ return pv_r1_{i}; }}" for i in range(7)) + " default: { return pv_r1_7; } }\n}\n"
h1 = variant(False, arr[0], arr[1], arr[2])
h2 = variant(True, arr[0], arr[1], arr[2])
h3 = variant(True, regs_store, "pv_word1(word)", regs_decl) + "\n" + regs_fn
for tag, text in [("z0", s), ("h1", h1), ("h2", h2), ("h3", h3)]:
    open(os.path.join(out, f"collatz_{tag}.wgsl"), "w").write(text)
