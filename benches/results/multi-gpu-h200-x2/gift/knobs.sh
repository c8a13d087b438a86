#!/usr/bin/env bash
# Calls 1 and 2 (README.txt): knobs of a build that was not committed, read from the environment.
# bash knobs.sh OUTDIR CALL TURNS (call 1 ran with 3 turns, call 2 with 2)
set -u
OUTDIR="$1"; CALL="$2"; REP="${3:-3}"
source .gpu/env.sh
B=.gpu/simtlab
out=$(mktemp -d)
MPIRUN=(mpirun --allow-run-as-root --oversubscribe --bind-to none --mca btl_vader_single_copy_mechanism cma
        -x LD_LIBRARY_PATH -x VK_ICD_FILENAMES -x VK_DRIVER_FILES -x WGPU_BACKEND
        -x SIMTLAB_CALM -x SIMTLAB_HURRY_US -x SIMTLAB_HURRY_POOLS -x SIMTLAB_RANK_TEMPO -x SIMTLAB_GIFT_CAP)
nvidia-smi --query-gpu=index,name,pci.bus_id,driver_version --format=csv > "$out/nvidia-smi.csv" 2>&1
for bound in lb1; do $B flowshop solve ta021 --search resident --pool 65536 --bound $bound --time-limit 2 > /dev/null 2>&1; done
pack() { (cd "$out" && tar czf "$OUTDIR/all.tgz" .); cp "$out/summary.tsv" "$OUTDIR/"; }
# run NAME D ENV...: D = 1, 2 (devices) or r2 (ranks)
run() {
  local name="$1" d="$2"; shift 2
  local cmd=($B flowshop solve ${INST:-ta023 --bound lb1 --ub 2326 --time-limit 200} --search resident --pool 65536 --json)
  case "$d" in r*) cmd=("${MPIRUN[@]}" -np "${d#r}" "${cmd[@]}") ;; *) cmd+=(--devices "$d") ;; esac
  env SIMTLAB_CALM=1 SIMTLAB_HURRY_US=0 SIMTLAB_HURRY_POOLS=2 SIMTLAB_RANK_TEMPO=1 SIMTLAB_GIFT_CAP=0 "$@" "${cmd[@]}" > "$out/$name.json" 2> "$out/$name.log"
  python3 - "$out/$name.json" "$name" >> "$out/summary.tsv" <<'PY'
import json, sys
path, name = sys.argv[1:]
try:
    r = json.load(open(path))
    s = r['seconds'] - r['heuristic_seconds']
    dev = ' '.join('%.2f/%.2f/%d' % (d['busy_seconds'], d['waiting_seconds'], d['gifts_loaded']) for d in r.get('devices', []))
    print(f"{name}\t{s:.3f}\t{r['nodes']}\t{r['nodes']/s/1e6:.2f}M/s\t{dev}")
except Exception as e:
    print(f"{name}\terror\t{e}")
PY
  tail -1 "$out/summary.tsv"
  pack
}
run d1 1
if [ "$CALL" = 1 ]; then
  for k in $(seq $REP); do
    run d2-base-$k 2
    run d2-h2000p2-$k 2 SIMTLAB_HURRY_US=2000
    run r2-base-$k r2 SIMTLAB_RANK_TEMPO=0
    run r2-calm-$k r2
    run r2-h2000p2-$k r2 SIMTLAB_HURRY_US=2000
    run r2-h2000p4-$k r2 SIMTLAB_HURRY_US=2000 SIMTLAB_HURRY_POOLS=4
    run r2-h3000p2-$k r2 SIMTLAB_HURRY_US=3000
    run r2-cap2-$k r2 SIMTLAB_GIFT_CAP=2
  done
  run d1b 1
else
  for k in $(seq $REP); do
    for c in 0 1 2 4; do run d2-cap$c-$k 2 SIMTLAB_GIFT_CAP=$c; done
    for c in 0 1 2 4; do run r2-cap$c-$k r2 SIMTLAB_GIFT_CAP=$c; done
  done
  export INST="ta056 --time-limit 30"
  run long-d1 1
  for c in 0 2; do run long-d2-cap$c 2 SIMTLAB_GIFT_CAP=$c; run long-r2-cap$c r2 SIMTLAB_GIFT_CAP=$c; done
fi
