#!/usr/bin/env bash
# Remapping a user's shader on a lent GPU, in one device call: the three divergent kernels of
# the remap tests (tests/fixtures/remap: a data-dependent loop over scattered inputs, a switch
# over per-element kinds, an iteration with a data-dependent tolerance test) and one without
# divergence, each run by `simtlab remap` as written and remapped from the same inputs, in the
# same process. Builds nothing: stage first with
#   cargo build --release && ../shared/gpu/prepare.sh target/release/simtlab
# then run from the repository root there:  bash benches/gpu_remap_any.sh "$OUT"
# Each row writes OUT_DIR/<row>.json (simtlab remap's JSON: SIMT efficiency before and after,
# median device times, key pass and index costs, end-to-end speed-up over DISPATCHES
# dispatches) and OUT_DIR/<row>.txt as soon as it finishes. work[0] (binding 2) scales each
# kernel's loops so the shader as written runs about a millisecond on an H200.
set -u
out="${1:?usage: benches/gpu_remap_any.sh OUT_DIR}"
mkdir -p "$out"
B=${SIMTLAB:-.gpu/simtlab}
[ -f .gpu/env.sh ] && . .gpu/env.sh
F=tests/fixtures/remap
N=4194240         # 65535 workgroups of 64
S=${SAMPLES:-31}  # timed runs of each variant (medians reported)
D=${DISPATCHES:-1000}
log="$out/remap_any.log"
: > "$log"
work() { python3 -c "import struct,sys; sys.stdout.buffer.write(struct.pack('<I', $1))" > "$out/work$1.bin"; echo "$out/work$1.bin"; }

# REPEATS more processes of the scattered loop with each index (redirect: host, gpu: GpuRegroup)
# follow the rows, OUT_DIR/repeat/<strategy>-<k>.json: its remapped time varies from one process
# to the next.
# name|shader|strategy|input spec|output spec|work (the kernel without divergence first: it
# also brings the GPU's clocks up before the divergent rows)
ROWS="
uniform_scale_auto|$F/uniform_scale.wgsl|auto|u32:$N:random:4|u32:$N:zero|1
scattered_loop|$F/scattered_loop.wgsl|redirect|u32:$N:random:1|u32:$N:zero|16
kinds_switch|$F/kinds_switch.wgsl|redirect|u32:$N:random:2|u32:$N:zero|8
newton_tolerance|$F/newton_tolerance.wgsl|redirect|f32:$N:random:3|f32:$N:zero|32
scattered_loop_auto|$F/scattered_loop.wgsl|auto|u32:$N:random:1|u32:$N:zero|16
kinds_switch_auto|$F/kinds_switch.wgsl|auto|u32:$N:random:2|u32:$N:zero|8
newton_tolerance_auto|$F/newton_tolerance.wgsl|auto|f32:$N:random:3|f32:$N:zero|32
scattered_loop_gpu|$F/scattered_loop.wgsl|gpu|u32:$N:random:1|u32:$N:zero|16
kinds_switch_gpu|$F/kinds_switch.wgsl|gpu|u32:$N:random:2|u32:$N:zero|8
newton_tolerance_gpu|$F/newton_tolerance.wgsl|gpu|f32:$N:random:3|f32:$N:zero|32
"
echo "$ROWS" | while IFS='|' read -r name shader strategy input output w; do
    [ -z "$name" ] && continue
    started=$(date +%s)
    "$B" remap "$shader" --workgroups 65535 --bind "0=$input" --bind "1=$output" --bind "2=file:$(work "$w")" \
        --strategy "$strategy" --samples "$S" --dispatches "$D" --json "$out/$name.json" > "$out/$name.txt" 2>&1
    echo "$name: exit $? in $(( $(date +%s) - started )) s" >> "$log"
done
mkdir -p "$out/repeat"
for k in $(seq 1 "${REPEATS:-4}"); do
    for strategy in redirect gpu; do
        "$B" remap "$F/scattered_loop.wgsl" --workgroups 65535 --bind "0=u32:$N:random:1" --bind "1=u32:$N:zero" \
            --bind "2=file:$(work 16)" --strategy "$strategy" --samples "$S" --dispatches "$D" \
            --json "$out/repeat/$strategy-$k.json" > "$out/repeat/$strategy-$k.txt" 2>&1
        echo "repeat $strategy $k: exit $?" >> "$log"
    done
done
