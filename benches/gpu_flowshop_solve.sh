#!/usr/bin/env bash
# Time to prove optimality, Taillard ta011-ta030 (20x10, 20x20), on a lent GPU, one call.
# Stage first (see benches/gpu_campaign.sh), then from the repository root there:
#   bash benches/gpu_flowshop_solve.sh "$OUT" [seconds per instance] [pool] [extra solve options]
# Every run starts from the start heuristic (NEH, then iterated greedy; no known optimum given),
# bounds with LB2 on the GPU and branches bidirectionally; `optimal` in its JSON says whether
# the search finished inside the limit. The tarball is rewritten after every run, so a call
# cut short keeps the runs it finished.
# Output: $OUT/flowshop-solve.tgz with one JSON per run and the progress logs.
set -u
out="$1"; limit="${2:-30}"; pool="${3:-4096}"; shift $(( $# < 3 ? $# : 3 ))
work=$(mktemp -d)
source .gpu/env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv > "$work/nvidia-smi.csv" 2>&1
nproc > "$work/nproc.txt"
for i in $(seq 11 30); do
  ta=$(printf "ta%03d" "$i")
  echo "== $ta" >&2
  .gpu/simtlab flowshop solve "$ta" --time-limit "$limit" --pool "$pool" "$@" --json > "$work/$ta-gpu.json" 2> "$work/$ta-gpu.log"
  python3 -c "import json; d = json.load(open('$work/$ta-gpu.json')); print('$ta start', d['start_makespan'], 'makespan', d['makespan'], 'optimal', d['optimal'], d['nodes'], 'nodes', round(d['seconds'], 2), 's')" >&2
  tar czf "$out/flowshop-solve.tgz" -C "$work" .
done
