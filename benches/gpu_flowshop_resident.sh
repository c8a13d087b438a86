#!/usr/bin/env bash
# Resident vs host search on a lent GPU, in one call: time to prove optimality from the start
# heuristic (LB2, bidirectional branching, no optimum given) on Taillard instances.
# Stage first (../shared/gpu/prepare.sh target/release/simtlab), then from the repository root:
#   bash benches/gpu_flowshop_resident.sh "$OUT" [seconds in all] [seconds per run] [instances...]
# ta021 first runs the resident search at three pool sizes (16384, 65536, 131072) (nodes branched per round); the
# fastest size then serves every instance, resident and host search one after the other. Each
# run writes its JSON and progress log under $OUT as soon as it ends, and a line to
# $OUT/summary.tsv; no run starts once the total budget is spent.
set -u
out="$1"; budget="${2:-420}"; limit="${3:-30}"; shift $(( $# < 3 ? $# : 3 ))
instances=("$@"); [ ${#instances[@]} -gt 0 ] || instances=(ta021 ta022 ta023 ta024 ta025 ta026 ta027 ta028 ta029 ta030)
source .gpu/env.sh
begin=$(date +%s)
nvidia-smi --query-gpu=name,driver_version --format=csv > "$out/nvidia-smi.csv" 2>&1
.gpu/simtlab devices --json > "$out/devices.json" 2>&1
printf "instance\tsearch\tpool\tmakespan\toptimal\tnodes\tseconds\tnodes_per_s\n" > "$out/summary.tsv"

left() { echo $(( budget - ($(date +%s) - begin) )); }

# run NAME SEARCH POOL: one solve, its JSON and log under $OUT, a summary line
run() {
  local ta="$1" search="$2" pool="$3" t="$limit"
  [ "$(left)" -gt 5 ] || { echo "budget spent: skipped $ta $search" >&2; return; }
  [ "$(left)" -lt "$t" ] && t=$(left)
  local name="$ta-$search-$pool"
  echo "$(date -u +%FT%TZ) .gpu/simtlab flowshop solve $ta --search $search --pool $pool --time-limit $t --json" > "$out/$name.cmd"
  .gpu/simtlab flowshop solve "$ta" --search "$search" --pool "$pool" --time-limit "$t" --json > "$out/$name.json" 2> "$out/$name.log"
  python3 - "$out/$name.json" "$ta" "$search" "$pool" >> "$out/summary.tsv" <<'EOF'
import json, sys
path, ta, search, pool = sys.argv[1:]
try:
    d = json.load(open(path))
    rate = d['nodes'] / max(d['seconds'] - d['heuristic_seconds'], 1e-9)
    print(f"{ta}\t{search}\t{pool}\t{d['makespan']}\t{d['optimal']}\t{d['nodes']}\t{d['seconds']:.2f}\t{rate:.0f}")
except Exception as e:
    print(f"{ta}\t{search}\t{pool}\terror\t{e}")
EOF
  tail -1 "$out/summary.tsv" >&2
}

for pool in 16384 65536 131072; do
  run ta021 resident "$pool"
done
# the fastest proof, or without one the highest node rate
best_pool=$(python3 - "$out" <<'EOF'
import json, sys
def key(pool):
    try:
        d = json.load(open(f"{sys.argv[1]}/ta021-resident-{pool}.json"))
        return (0, d['seconds']) if d['optimal'] else (1, -d['nodes'] / max(d['seconds'], 1e-9))
    except Exception:
        return (2, 0)
print(min([16384, 65536, 131072], key=key))
EOF
)
echo "pool for the resident runs: $best_pool" | tee "$out/pool.txt" >&2
run ta021 host 4096
for ta in "${instances[@]}"; do
  [ "$ta" = ta021 ] && continue
  run "$ta" resident "$best_pool"
  run "$ta" host 4096
done
