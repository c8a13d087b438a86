#!/usr/bin/env bash
# Time to prove optimality, Taillard ta011-ta030 (20x10, 20x20), on a lent GPU, one call.
# Stage first (see benches/gpu_campaign.sh), then from the repository root there:
#   bash benches/gpu_flowshop_solve.sh "$OUT" [seconds per instance] [pool]
# Every run starts from the NEH makespan (no known optimum given), bounds with LB2 on the GPU
# and branches bidirectionally; `optimal` in its JSON says whether the search finished inside
# the limit. ta021 runs once more with --sequential (no overlap of host and GPU work) to show
# what the overlap buys.
# Output: $OUT/flowshop-solve.tgz with one JSON per run and the progress logs.
set -u
out="$1"; limit="${2:-30}"; pool="${3:-4096}"
work=$(mktemp -d)
source .gpu/env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv > "$work/nvidia-smi.csv" 2>&1
nproc > "$work/nproc.txt"
solve() {
  name=$1; shift
  echo "== $name" >&2
  .gpu/simtlab flowshop solve "$@" --json > "$work/$name.json" 2> "$work/$name.log"
  python3 -c "import json; d = json.load(open('$work/$name.json')); print('$name', d['makespan'], d['optimal'], d['nodes'], round(d['seconds'], 2))" >&2
}
solve ta021-gpu-sequential ta021 --branching bidirectional --sequential --time-limit 60 --pool "$pool"
for i in $(seq 11 30); do
  ta=$(printf "ta%03d" "$i")
  solve "$ta-gpu" "$ta" --branching bidirectional --time-limit "$limit" --pool "$pool"
done
tar czf "$out/flowshop-solve.tgz" -C "$work" .
