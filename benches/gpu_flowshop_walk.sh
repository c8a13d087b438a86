#!/usr/bin/env bash
# The resident search's LB2 (ta021 … ta030: n = 20 <= 32) several ways, in one call on a lent GPU:
#   full       every child walks all n jobs per machine pair (SIMTLAB_RESIDENT_FULL_WALK=1,
#              SIMTLAB_RESIDENT_NO_SCREEN=1: the kernel before any of the changes below)
#   masks      children walk only their unscheduled jobs (SIMTLAB_RESIDENT_NO_SCREEN=1)
#   screened   masks, and LB1 settles children in a first pass so that only the others enter
#              the pair loop, on full subgroups (SIMTLAB_RESIDENT_FIRST_PAIRS=100000,
#              SIMTLAB_RESIDENT_HOST_PAIR_ORDER=1: one pass over every pair)
#   split      screened, and the children the first 8 pairs do not settle run the other pairs
#              in a pass of their own (SIMTLAB_RESIDENT_HOST_PAIR_ORDER=1: the host's order)
#   learned    split, with the pairs sorted by how often each pruned (the default);
#              learnedN: with the first N pairs in the first pass
# Stage first (../shared/gpu/prepare.sh target/release/simtlab), then:
#   bash benches/gpu_flowshop_walk.sh "$OUT"
# 1. ta021 with --ub 2297 (the optimum: the same tree either way), pool 65536, three runs of
#    each, alternating; then learned with 4, 16 and 32 pairs first.
# 2. The host search on ta021 with --ub 2297, 20 s: its node rate in the same call.
# 3. ta021 … ta030 and ta041 … ta050 (n = 50: no masks) proved from the heuristic start (no
#    optimum given), 20 s each, learned.
# Each run's JSON and log land under $OUT as soon as it ends, with a line in summary.tsv.
set -u
out="$1"
source .gpu/env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv > "$out/nvidia-smi.csv" 2>&1
printf "run\tinstance\twalk\tmakespan\toptimal\tnodes\tseconds\theuristic_s\tnodes_per_s\n" > "$out/summary.tsv"
solve() { # NAME WALK INSTANCE ARGS...
  local name="$1" walk="$2" ta="$3"; shift 3
  local search=resident pool=65536
  unset SIMTLAB_RESIDENT_FULL_WALK SIMTLAB_RESIDENT_NO_SCREEN SIMTLAB_RESIDENT_FIRST_PAIRS SIMTLAB_RESIDENT_HOST_PAIR_ORDER
  case "$walk" in
    full) export SIMTLAB_RESIDENT_FULL_WALK=1 SIMTLAB_RESIDENT_NO_SCREEN=1 ;;
    masks) export SIMTLAB_RESIDENT_NO_SCREEN=1 ;;
    screened) export SIMTLAB_RESIDENT_FIRST_PAIRS=100000 SIMTLAB_RESIDENT_HOST_PAIR_ORDER=1 ;;
    split) export SIMTLAB_RESIDENT_HOST_PAIR_ORDER=1 ;;
    learned) ;;
    learned*) export SIMTLAB_RESIDENT_FIRST_PAIRS="${walk#learned}" ;;
    host) search=host pool=4096 ;;
  esac
  echo "$(date -u +%FT%TZ) walk=$walk $(env | grep ^SIMTLAB_RESIDENT | tr '\n' ' ').gpu/simtlab flowshop solve $ta --search $search --pool $pool $* --json" > "$out/$name.cmd"
  .gpu/simtlab flowshop solve "$ta" --search "$search" --pool "$pool" "$@" --json > "$out/$name.json" 2> "$out/$name.log"
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
  for walk in learned split screened masks; do
    solve "ab$r-$walk" "$walk" ta021 --ub 2297 --time-limit 30
  done
done
solve "ab-full" full ta021 --ub 2297 --time-limit 30
for first in 4 16 32; do
  solve "ab-learned$first" "learned$first" ta021 --ub 2297 --time-limit 30
done
solve "ab-host" host ta021 --ub 2297 --time-limit 20
for ta in ta021 ta022 ta023 ta024 ta025 ta026 ta027 ta028 ta029 ta030 ta041 ta042 ta043 ta044 ta045 ta046 ta047 ta048 ta049 ta050; do
  solve "start-$ta" learned "$ta" --time-limit 20
done
