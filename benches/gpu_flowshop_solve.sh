#!/usr/bin/env bash
# Time to prove optimality, Taillard ta011-ta030 (20x10, 20x20), on a lent GPU, one call.
# Stage first (see benches/gpu_campaign.sh), then from the repository root there:
#   bash benches/gpu_flowshop_solve.sh "$OUT" [seconds per instance] [pool]
# Each run starts from the NEH makespan; `optimal` in its JSON says whether the search finished
# inside the limit. The GPU bounds every instance; all CPU cores run ta011-ta020 for comparison.
# Output: $OUT/flowshop-solve.tgz with one JSON per run and the progress logs.
set -u
out="$1"; limit="${2:-14}"; pool="${3:-4096}"
work=$(mktemp -d)
source .gpu/env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv > "$work/nvidia-smi.csv" 2>&1
nproc > "$work/nproc.txt"
for i in $(seq 11 30); do
  ta=$(printf "ta%03d" "$i")
  echo "== $ta gpu" >&2
  .gpu/simtlab flowshop solve "$ta" --json --time-limit "$limit" --pool "$pool" > "$work/$ta-gpu.json" 2> "$work/$ta-gpu.log"
done
for i in $(seq 11 20); do
  ta=$(printf "ta%03d" "$i")
  echo "== $ta cpu" >&2
  .gpu/simtlab flowshop solve "$ta" --device cpu --json --time-limit "$limit" --pool "$pool" > "$work/$ta-cpu.json" 2> "$work/$ta-cpu.log"
done
tar czf "$out/flowshop-solve.tgz" -C "$work" .
