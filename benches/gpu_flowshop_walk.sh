#!/usr/bin/env bash
# LB2's walk over unscheduled jobs only (resident search, n <= 32) against the full walk, in one
# call on a lent GPU; stage first (../shared/gpu/prepare.sh target/release/simtlab), then:
#   bash benches/gpu_flowshop_walk.sh "$OUT"
# 1. ta021 with --ub 2297 (the optimum: the same tree either way), pool 65536, three runs each,
#    alternating; SIMTLAB_RESIDENT_FULL_WALK=1 selects the full walk.
# 2. ta021 … ta030 proved from the heuristic start (no optimum given), 20 s each.
# Each run's JSON and log land under $OUT as soon as it ends, with a line in summary.tsv.
set -u
out="$1"
source .gpu/env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv > "$out/nvidia-smi.csv" 2>&1
printf "run\tinstance\twalk\tmakespan\toptimal\tnodes\tseconds\theuristic_s\tnodes_per_s\n" > "$out/summary.tsv"
solve() { # NAME WALK INSTANCE ARGS...
  local name="$1" walk="$2" ta="$3"; shift 3
  echo "$(date -u +%FT%TZ) walk=$walk .gpu/simtlab flowshop solve $ta --search resident --pool 65536 $* --json" > "$out/$name.cmd"
  if [ "$walk" = full ]; then export SIMTLAB_RESIDENT_FULL_WALK=1; else unset SIMTLAB_RESIDENT_FULL_WALK; fi
  .gpu/simtlab flowshop solve "$ta" --search resident --pool 65536 "$@" --json > "$out/$name.json" 2> "$out/$name.log"
  python3 - "$out/$name.json" "$name" "$ta" "$walk" >> "$out/summary.tsv" <<'PY'
import json, sys
path, name, ta, walk = sys.argv[1:]
try:
    d = json.load(open(path))
    rate = d['nodes'] / max(d['seconds'] - d['heuristic_seconds'], 1e-9)
    print(f"{name}\t{ta}\t{walk}\t{d['makespan']}\t{d['optimal']}\t{d['nodes']}\t{d['seconds']:.2f}\t{d['heuristic_seconds']:.2f}\t{rate:.0f}")
except Exception as e:
    print(f"{name}\t{ta}\t{walk}\terror\t{e}")
PY
  tail -1 "$out/summary.tsv" >&2
}
for r in 1 2 3; do
  solve "ab$r-unscheduled" unscheduled ta021 --ub 2297 --time-limit 30
  solve "ab$r-full" full ta021 --ub 2297 --time-limit 30
done
for ta in ta021 ta022 ta023 ta024 ta025 ta026 ta027 ta028 ta029 ta030; do
  solve "start-$ta" unscheduled "$ta" --time-limit 20
done
