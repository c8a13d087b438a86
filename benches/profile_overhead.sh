#!/usr/bin/env bash
# The probe's cost on a lent GPU, in one device call: each shader of the profile test suite
# (tests/fixtures/profile) runs plain and instrumented from the same inputs, counting every
# subgroup (exact) and one in 16 (--sample 16). Builds nothing: stage first with
#   cargo build --release && ../shared/gpu/prepare.sh target/release/simtlab
# then run from the repository root there:  bash benches/profile_overhead.sh "$OUT"
# Each row writes OUT_DIR/<row>-exact.json and OUT_DIR/<row>-sample16.json (simtlab profile's
# JSON: plain and instrumented median device times, the figures, the sampling errors) as soon
# as it finishes, and OUT_DIR/profile_overhead.log says how each ended. Inputs are sized so the
# plain shader runs about 100 us or more on an H100/H200 (4 M invocations, Mandelbrot 1 M
# pixels of up to 512 iterations); the JSON holds the time measured, so rows below that show.
# The remap tests' kernels (tests/fixtures/remap) scale their loops with work[0] (binding 2,
# a one-word file) so the plain shader runs a millisecond or more.
set -u
out="${1:?usage: benches/profile_overhead.sh OUT_DIR}"
mkdir -p "$out"
B=${SIMTLAB:-.gpu/simtlab}
[ -f .gpu/env.sh ] && . .gpu/env.sh
F=tests/fixtures/profile
N=4194240   # 65535 workgroups of 64
S=21        # timed runs of each variant (medians reported)
log="$out/profile_overhead.log"
: > "$log"
R=tests/fixtures/remap
work() { python3 -c "import struct,sys; sys.stdout.buffer.write(struct.pack('<I', $1))" > "$out/work$1.bin"; echo "$out/work$1.bin"; }

# name|shader|entry|workgroups|bindings and overrides
ROWS="
collatz|$F/collatz.wgsl|main|65535|--bind values=u32:$N:random:1 --bind steps=u32:$N:zero
mandelbrot|$F/mandelbrot.wgsl|main|16384|--bind iterations=u32:1048576:zero
while_if|$F/while_if.wgsl|main|65535|--bind seeds=u32:$N:random:2 --bind hits=u32:$N:zero
loop_for|$F/loops.wgsl|counted|65535|--bind data=u32:$N:random:3
loop_break|$F/loops.wgsl|broken|65535|--bind data=u32:$N:random:3
switch|$F/switch.wgsl|main|65535|--bind data=u32:$N:random:4
overrides|$F/overrides.wgsl|main|65535|--bind data=u32:$N:random:5 --override factor=3
shapes|$F/shapes.wgsl|main|65535|--bind data=u32:2097120:random:6 --bind params=u32:2:zero
scattered_loop|$R/scattered_loop.wgsl|main|65535|--bind trips=u32:$N:random:1 --bind mixed=u32:$N:zero --bind work=file:$(work 16)
kinds_switch|$R/kinds_switch.wgsl|main|65535|--bind kinds=u32:$N:random:2 --bind results=u32:$N:zero --bind work=file:$(work 8)
newton_tolerance|$R/newton_tolerance.wgsl|main|65535|--bind values=f32:$N:random:3 --bind roots=f32:$N:zero --bind work=file:$(work 32)
override_loop|$R/override_loop.wgsl|main|65535|--bind trips=u32:16776960:random:4 --bind mixed=u32:16776960:zero --override block=256 --override multiplier=69069
"

"$B" profile --help > "$out/profile-help.txt" 2>&1
echo "$ROWS" | while IFS='|' read -r name shader entry groups args; do
    [ -z "$name" ] && continue
    for mode in exact sample16; do
        extra=""
        [ "$mode" = sample16 ] && extra="--sample 16"
        start=$(date +%s)
        # shellcheck disable=SC2086
        "$B" profile "$shader" --entry "$entry" --workgroups "$groups" $args $extra --samples $S \
            --json "$out/$name-$mode.json" > "$out/$name-$mode.txt" 2>&1
        rc=$?
        echo "$name $mode rc=$rc seconds=$(( $(date +%s) - start ))" >> "$log"
    done
done
echo done >> "$log"
