#!/usr/bin/env bash
# The resident flow-shop search with its bounded frontier on a lent GPU, in one call:
#   50x20  ta051 and ta056 for SECONDS each from the start heuristic, LB1 and LB2, with a
#          heartbeat a second, so that the rate of the first and the last 10 s can be compared
#   20x20  ta021-ta030 with UB = optimum, LB2 (the fixed trees), then from the start heuristic
#   50x10  ta041-ta050 from the start heuristic, LB2
# Stage first (../shared/gpu/prepare.sh target/release/simtlab), then from the repository root:
#   bash benches/gpu_flowshop_50x20.sh "$OUT" [seconds, default 60] [parts, default "50x20 20x20 50x10"]
# Each run writes its JSON, heartbeat log and command under $OUT as soon as it ends, and a line
# to $OUT/summary.tsv (nodes/s over the whole run, the first 10 s and the last 10 s).
set -u
out="$1"; seconds="${2:-60}"; parts="${3:-50x20 20x20 50x10}"
source .gpu/env.sh
B=.gpu/simtlab
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > "$out/nvidia-smi.csv" 2>&1
$B devices --json > "$out/devices.json" 2>&1
printf "run\tmakespan\toptimal\tnodes\tseconds\theuristic_s\tnodes_per_s\tfirst_10s\tlast_10s\tpeak_open\tbytes_allocated\tincumbents\n" > "$out/summary.tsv"

# run NAME ARGS...: one resident solve (pool 65536, heartbeat every second)
run() {
  local name="$1"; shift
  echo "$(date -u +%FT%TZ) $B flowshop solve $* --search resident --pool 65536 --json" > "$out/$name.cmd"
  $B flowshop solve "$@" --search resident --pool 65536 --json > "$out/$name.json" 2> "$out/$name.log"
  python3 - "$out/$name.json" "$out/$name.log" "$name" >> "$out/summary.tsv" <<'EOF'
import json, sys
path, log, name = sys.argv[1:]
try:
    d = json.load(open(path))
    s = d
    beats = []
    for line in open(log):
        try:
            b = json.loads(line)
            beats.append((b['seconds'], b['nodes']))
        except Exception:
            pass
    h, end = s['heuristic_seconds'], s['seconds']
    beats = [(h, 0)] + beats + [(end, s['nodes'])]
    def at(t):
        # nodes at time t, linear between heartbeats
        for (t0, n0), (t1, n1) in zip(beats, beats[1:]):
            if t0 <= t <= t1:
                return n0 + (n1 - n0) * (t - t0) / max(t1 - t0, 1e-9)
        return beats[-1][1]
    window = lambda a, b: (at(b) - at(a)) / max(b - a, 1e-9)
    rate = s['nodes'] / max(end - h, 1e-9)
    first, last = (window(h, h + 10), window(end - 10, end)) if end - h >= 20 else (float('nan'), float('nan'))
    f = s.get('frontier') or {}
    inc = ' '.join(f"{i['seconds']:.1f}s:{i['makespan']}" for i in s.get('incumbents', []))
    print(f"{name}\t{s['makespan']}\t{s['optimal']}\t{s['nodes']}\t{end:.2f}\t{h:.2f}\t{rate:.0f}\t{first:.0f}\t{last:.0f}\t{f.get('peak_open')}\t{f.get('bytes_allocated')}\t{inc}")
except Exception as e:
    print(f"{name}\terror\t{e}")
EOF
  tail -1 "$out/summary.tsv" >&2
}

for part in $parts; do
  case "$part" in
    50x20)
      for ta in ta051 ta056; do
        for bound in lb1 lb2; do
          run "$ta-$bound" "$ta" --bound "$bound" --time-limit "$seconds"
        done
      done ;;
    20x20)
      # Taillard's optima (proven) as UB: the fixed trees
      opt=(2297 2099 2326 2223 2291 2226 2273 2200 2237 2178)
      for i in 0 1 2 3 4 5 6 7 8 9; do
        ta=$(printf "ta%03d" $((21 + i)))
        run "$ta-ub-lb2" "$ta" --bound lb2 --ub "${opt[$i]}" --time-limit 60
      done
      for i in 0 1 2 3 4 5 6 7 8 9; do
        ta=$(printf "ta%03d" $((21 + i)))
        run "$ta-lb2" "$ta" --bound lb2 --time-limit 60
      done ;;
    50x10)
      for i in 1 2 3 4 5 6 7 8 9 10; do
        ta=$(printf "ta%03d" $((40 + i)))
        run "$ta-lb2" "$ta" --bound lb2 --time-limit 30
      done ;;
  esac
done
