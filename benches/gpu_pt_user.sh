#!/usr/bin/env bash
# Persistent threads in a user's own kernel on a lent GPU, in one device call: a breadth-first
# search of a seeded random graph from vertex 0, written against the public module with a
# global barrier between levels (tests/fixtures/pt/bfs.wgsl, one dispatch), beside the same
# search relaunched per level without the module (tests/fixtures/pt/bfs_level.wgsl, one
# dispatch per level, all in one pass). One `simtlab pt` process per graph size runs both from
# the same inputs and checks both against the CPU reference levels (`simtlab graph`).
# Builds nothing: stage first with
#   cargo build --release && ../shared/gpu/prepare.sh target/release/simtlab
# then run from the repository root there:  bash benches/gpu_pt_user.sh "$OUT"
# Writes OUT_DIR/bfs_<V>.json (two records: the persistent kernel with its tier, launch,
# participants, status and the adapter's capability; the relaunched one), OUT_DIR/bfs_<V>.txt
# and OUT_DIR/graph_<V>.txt as soon as each size finishes. The graphs themselves go to a
# scratch directory (GRAPHS, default under TMPDIR), not to OUT_DIR.
# On lavapipe first:  SIMTLAB=target/debug/simtlab SIZES="3000 20000" bash benches/gpu_pt_user.sh /tmp/pt-user
set -u
out="${1:?usage: benches/gpu_pt_user.sh OUT_DIR}"
mkdir -p "$out"
B=${SIMTLAB:-.gpu/simtlab}
[ -f .gpu/env.sh ] && . .gpu/env.sh
F=tests/fixtures/pt
SIZES=${SIZES:-"2097152 4194304 8388608"}  # vertices
DEGREE=${DEGREE:-8}                        # mean out-degree (uniform in 1..2*DEGREE-1)
S=${SAMPLES:-11}                           # timed runs of each kernel (medians reported)
WG=${WORKGROUPS:-4096}                     # workgroups of 64 per relaunched dispatch
GRAPHS=${GRAPHS:-${TMPDIR:-/tmp}/simtlab-pt-graphs}
log="$out/pt_user.log"
: > "$log"
for v in $SIZES; do
    started=$(date +%s)
    g="$GRAPHS/$v"
    if ! "$B" graph "$g" --vertices "$v" --degree "$DEGREE" --seed 1 > "$out/graph_$v.txt" 2>&1; then
        echo "bfs_$v: graph failed" >> "$log"
        continue
    fi
    # the relaunched search needs one dispatch per level that has a next one
    depth=$(sed -n 's/.* depth \([0-9]*\) .*/\1/p' "$out/graph_$v.txt")
    "$B" pt "$F/bfs.wgsl" --entry bfs \
        --bind "offsets=file:$g/offsets.bin" --bind "edges=file:$g/edges.bin" \
        --bind "level=file:$g/level_init.bin" --bind "frontier=u32:$((2 * v)):zero" \
        --bind "counts=file:$g/counts_init.bin" --expect "level=file:$g/levels.bin" \
        --baseline "$F/bfs_level.wgsl" --baseline-entry bfs_level \
        --baseline-workgroups "$WG" --baseline-dispatches "$depth" \
        --samples "$S" --json "$out/bfs_$v.json" > "$out/bfs_$v.txt" 2>&1
    echo "bfs_$v: exit $? in $(( $(date +%s) - started )) s (depth $depth)" >> "$log"
    rm -rf "$g"
done
