#!/bin/bash
# The probe's cost taken apart on collatz and loops (counted): v1 the generated probe (votes), v2 lead
# lane fixed (no broadcastFirst), v3 no votes, v4 neither (per-lane counters only), v5 empty
# site functions (begin and end only), v6 lead from a ballot's low word; each text timed as a
# plain shader by simtlab profile (names renamed from simtlab_probe to pv so profile accepts them).
# Stage the binary first (../shared/gpu/prepare.sh), then: bash benches/probe_variants/run.sh OUT
# timing variants of the probe (plain time of each text), one device call
out=$1; mkdir -p $out; B=.gpu/simtlab; . .gpu/env.sh; N=4194240
# v2-v6 derived from each generated probe (v1) by variants.py
Z=$out/shaders; mkdir -p $Z
for f in collatz loops; do python3 benches/probe_variants/variants.py benches/probe_variants/${f}_v1.wgsl $Z; done
for v in v1 v2 v3 v4 v5 v6; do
  $B profile $Z/collatz_$v.wgsl --entry main --workgroups 65535 --bind values=u32:$N:random:1 --bind steps=u32:$N:zero --bind pv_words=u32:2621404:zero --samples 21 --json $out/collatz_$v.json > $out/collatz_$v.txt 2>&1
  $B profile $Z/loops_$v.wgsl --entry counted --workgroups 65535 --bind data=u32:$N:random:3 --bind pv_words=u32:1310704:zero --samples 21 --json $out/loops_$v.json > $out/loops_$v.txt 2>&1
done
$B profile tests/fixtures/profile/collatz.wgsl --entry main --workgroups 65535 --bind values=u32:$N:random:1 --bind steps=u32:$N:zero --samples 21 --json $out/collatz_plain.json > $out/collatz_plain.txt 2>&1
$B profile tests/fixtures/profile/loops.wgsl --entry counted --workgroups 65535 --bind data=u32:$N:random:3 --samples 21 --json $out/loops_plain.json > $out/loops_plain.txt 2>&1
