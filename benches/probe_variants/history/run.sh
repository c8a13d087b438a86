#!/bin/bash
# The loop `if`'s votes replaced by a per-lane history of outcomes (hist.py), timed as plain
# shaders beside collatz without a probe and as generated (z0). Stage the binary first
# (../shared/gpu/prepare.sh), then: bash benches/probe_variants/history/run.sh OUT
out=$1; mkdir -p $out; B=.gpu/simtlab; . .gpu/env.sh; N=4194240
# h1-h3 derived from the generated probe as it was before the histories (z0) by hist.py
D=$out/shaders; mkdir -p $D; python3 benches/probe_variants/history/hist.py benches/probe_variants/history/collatz_z0.wgsl $D
for round in a b; do
  for v in z0 h1 h2 h3; do
    $B profile $D/collatz_$v.wgsl --entry main --workgroups 65535 --bind values=u32:$N:random:1 --bind steps=u32:$N:zero --bind pv_words=u32:2621404:zero --samples 21 --json $out/collatz_$v-$round.json > $out/collatz_$v-$round.txt 2>&1
  done
  $B profile tests/fixtures/profile/collatz.wgsl --entry main --workgroups 65535 --bind values=u32:$N:random:1 --bind steps=u32:$N:zero --samples 21 --json $out/collatz_plain-$round.json > $out/collatz_plain-$round.txt 2>&1
done
