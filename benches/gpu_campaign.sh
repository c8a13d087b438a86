#!/usr/bin/env bash
# The performance campaign on a lent GPU, in one device call. Builds nothing: stage first with
#   cargo build --release && ../shared/gpu/prepare.sh target/release/simtlab
# then run from the repository root there:  bash benches/gpu_campaign.sh "$OUT"
#   bash benches/gpu_campaign.sh --dry-run      lists the rows and their expected durations
#   bash benches/gpu_campaign.sh "$OUT" ROW...  runs only the named rows (names as listed),
#                                               campaign rows or investigations
# Every row is measured beside its baseline in the same call. Each row's outputs are appended
# to "$OUT/campaign.tar" as soon as the row ends, so a call cut short at its time limit keeps
# every finished row; "$OUT/campaign.log" has each row's expected and actual duration and exit
# status, "$OUT/clocks.csv" the SM and memory clocks every 100 ms (also put into the tarball at
# the end). Unpack with
#   mkdir DIR && tar xf campaign.tar -C DIR   (then python3 benches/campaign_table.py DIR)
set -u
dry=0
if [ "${1:-}" = "--dry-run" ]; then dry=1; shift; fi
out="${1:-campaign-out}"
[ $# -gt 0 ] && shift
only=" $* "
B=.gpu/simtlab
# at least 200 warm-up runs of >= 5 ms each (--min-sample-ms): about a second of load before
# the samples of every figure, so the clock governor has settled at the working clock
W="--warmup 200"

# name, expected seconds (measured in the 2026-11-24 H100 call, 513 s in all), what it measures
ROWS="
devices 2 adapters and their limits (devices.json)
torch 10 torch.sum, device copy and cuBLAS SGEMM baselines (torch.json)
cuda 10 CUDA grid.sync and queue baselines (cuda_pt.jsonl)
reduction 160 f32 sum 2^28, every strategy at 5 grid sizes (reduction.json)
matmul 15 SGEMM 4096^3, regtile and unrolled (matmul.json); regtile's loop form through naga's SPIR-V with unroll hints (matmul-passthrough.json)
port 10 regtile ported to CUDA beside cuBLAS in one process (regtile_port.jsonl)
barrier 55 global barrier, 132 and 1056 workgroups, arrival and fence variants (barrier.json)
queue 25 work queues (queue.json; the ring queue, about 1 s a run, in queue-ring.json)
bs 10 BlackScholes 2^24 (blackscholes.json)
lbm 15 3D-LBM 192^3 (lbm.json)
remap 30 divergent loop 2^24 remapped end to end, with trace (remap.json)
remap-bs 10 uniform loop, auto vs off (remap-auto-flat.json)
flowshop 40 ta021 proved from the heuristic start, search resident on the GPU and host search with GPU bounding (flowshop-resident.json, flowshop-host.json)
bounding 20 flow-shop LB2 bounding of ta021's 65536-child BFS pool, refactored and basic kernels, beside one CPU core and all cores (bounding.json)
profile 5 instrumentation overhead of simtlab profile on Collatz and Mandelbrot, outputs compared (profile-collatz.json, profile-mandelbrot.json)
"
# Investigations, run only when named. sgemm-spirv needs the modules of benches/sgemm/build.sh
# staged in .gpu/spv/ (benches/results/sgemm-spirv-h100.md; SGEMM_ROUNDS=1 runs it once instead of
# twice); the others explain the anomalies
# in benches/results/papers-h100.md.
INVESTIGATIONS="
sgemm-spirv 260 regtile 4096^3 (unrolled and loop forms) built by wgpu, naga and glslang, two tile shapes, twice; CUDA port and cuBLAS between (sgemm-*.json, port-*.jsonl)
carrillo-port 40 Carrillo's kernels in CUDA over linear and random masks, Nsight Compute counters (carrillo_port.jsonl, ncu-*.csv)
carrillo-wgsl 45 the WGSL kernels over the same masks (carrillo-*.json)
gsync 45 100 and 1000 phases, relaunch vs barrier, after 10 s idle and warm (gsync-*.json)
reduction-repeat 70 the reduction strategies at Zhang's sizes, twice (reduction-repeat-*.json)
"

expected_total=0
# chosen NAME: named on the command line, or a campaign row when none is named
chosen() {
  case "$only" in
    "  ") echo "$ROWS" | awk -v n="$1" '$1 == n { found = 1 } END { exit !found }' ;;
    *" $1 "*) return 0 ;;
    *) return 1 ;;
  esac
}
while read -r name secs _; do
  [ -n "$name" ] && chosen "$name" && expected_total=$((expected_total + secs))
done <<< "$ROWS$INVESTIGATIONS"

if [ $dry = 1 ]; then
  echo "rows (expected seconds; $expected_total s for the rows chosen):"
  echo "$ROWS" | sed '/^$/d; s/^/  /'
  echo "investigations (run only when named):"
  echo "$INVESTIGATIONS" | sed '/^$/d; s/^/  /'
  exit 0
fi

mkdir -p "$out"
work=$(mktemp -d)
source .gpu/env.sh
log() { echo "== $*" | tee -a "$out/campaign.log" >&2; }

# One row: its command runs with $work as the place for its files; then everything new in
# $work goes into the tarball at once.
row() {
  local name=$1 secs
  shift
  chosen "$name" || return 0
  secs=$(echo "$ROWS$INVESTIGATIONS" | awk -v n="$name" '$1 == n { print $2 }')
  log "$name: start (expected ${secs:-?} s)"
  local t0=$SECONDS
  "$@"
  local rc=$?
  (cd "$work" && find . -type f -newer "$work/.mark" ! -name .mark -print0 | tar rf "$out/campaign.tar" --null -T -)
  touch "$work/.mark"
  log "$name: done in $((SECONDS - t0)) s (expected ${secs:-?} s), exit $rc"
}

: > "$work/.mark"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv > "$work/nvidia-smi.csv" 2>&1
# SM/memory clocks every 100 ms for the whole campaign: an idle GPU clocks down, and every
# figure should come from a ramped-up one (the harness warms up for at least 0.25 s).
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 100 > "$out/clocks.csv" 2>&1 &
clocks=$!
trap 'kill $clocks 2>/dev/null; tar rf "$out/campaign.tar" -C "$out" clocks.csv' EXIT
(cd "$work" && tar cf "$out/campaign.tar" nvidia-smi.csv)
log "campaign: $expected_total s expected in all"

devices() { $B devices --json > "$work/devices.json"; }
torch_rows() { python3 benches/baselines/torch_baselines.py > "$work/torch.json" 2> "$work/torch.err"; }
cuda() { (nvcc -O3 -arch=sm_90 -rdc=true benches/baselines/grid_sync.cu -o /tmp/grid_sync && /tmp/grid_sync) > "$work/cuda_pt.jsonl" 2> "$work/cuda.err"; }
reduction() { $B bench zhang --kernel reduction $W --n 268435456 --strategy all --samples 10 --reduction-groups 1056,2112,4224,8448,16896 --json "$work/reduction.json" > "$work/reduction.txt" 2>&1; }
matmul() {
  $B bench matmul $W --kernel regtile,unrolled --n 4096 --samples 10 --json "$work/matmul.json" > "$work/matmul.txt" 2>&1
  # regtile's loop form as naga's SPIR-V with unroll hints, passed through (sgemm-spirv-h100.md)
  $B bench matmul $W --kernel regtile --loops --compiler naga-unroll --n 4096 --samples 10 --json "$work/matmul-passthrough.json" > "$work/matmul-passthrough.txt" 2>&1
}
# the same SGEMM as regtile, ported to CUDA: how much of the gap to cuBLAS is the algorithm
port() { (nvcc -O3 -arch=sm_90 benches/baselines/regtile_port.cu -o /tmp/regtile_port -lcublas && /tmp/regtile_port 4096) > "$work/regtile_port.jsonl" 2> "$work/regtile_port.err"; }
barrier() { $B bench pt --case barrier $W --workgroups 132,1056 --arrival flat,tree --fence device,none --iterations 1000 --json "$work/barrier.json" > "$work/barrier.txt" 2>&1; }
queue() {
  $B bench pt --case queue $W --kind single,chunked,distributed --json "$work/queue.json" > "$work/queue.txt" 2>&1
  # a ring run lasts about a second: one warm-up run already loads the GPU for longer than the
  # 200 short ones of $W, which would take 200 s here
  $B bench pt --case queue --kind ring --warmup 1 --samples 5 --json "$work/queue-ring.json" > "$work/queue-ring.txt" 2>&1
}
bs() { $B bench zhang --kernel blackscholes $W --n 16777216 --strategy all --json "$work/blackscholes.json" > "$work/blackscholes.txt" 2>&1; }
lbm() { $B bench zhang --kernel lbm $W --n 192 --strategy all --samples 5 --json "$work/lbm.json" > "$work/lbm.txt" 2>&1; }
remap() { $B bench remap $W --n 16777216 --pipeline 16 --workers 8 --trace "$work/remap-trace.json" --json "$work/remap.json" > "$work/remap.txt" 2>&1; }
remap_bs() { $B bench remap $W --distribution uniform --strategy none,auto --n 16777216 --json "$work/remap-auto-flat.json" > "$work/remap-auto-flat.txt" 2>&1; }

# investigations
ncu=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
sgemm_spirv() {
  local round tag opts mods
  python3 benches/baselines/torch_baselines.py > "$work/torch-sgemm.json" 2> "$work/torch-sgemm.err"
  nvcc -O3 -arch=sm_90 -Xptxas -v benches/baselines/regtile_port.cu -o /tmp/port-16x8 -lcublas > "$work/port-build.txt" 2>&1
  nvcc -O3 -arch=sm_90 -Xptxas -v -DPORT_WG_Y=16 -DPORT_MIN_BLOCKS=2 benches/baselines/regtile_port.cu -o /tmp/port-16x16 -lcublas >> "$work/port-build.txt" 2>&1
  for round in $(seq "${SGEMM_ROUNDS:-2}"); do
    for tag in 16x8 16x16; do
      opts=""
      [ $tag = 16x16 ] && opts="--wg-y 16"
      mods=()
      for m in naga-unchecked-opt glslang glslang-opt; do mods+=(--spirv ".gpu/spv/regtile-$tag-$m.spv"); done
      # shellcheck disable=SC2086
      $B bench matmul $W --kernel regtile --n 4096 --samples 10 $opts --compiler wgpu,naga,naga-unchecked,naga-unroll "${mods[@]}" \
        --json "$work/sgemm-$tag-$round.json" > "$work/sgemm-$tag-$round.txt" 2>&1
      # the loop form through wgpu and naga's checked SPIR-V ran 17x slower (loop bounding keeps the
      # driver from unrolling): only the unchecked builds here
      # shellcheck disable=SC2086
      $B bench matmul $W --kernel regtile --loops --n 4096 --samples 10 $opts --compiler naga-unchecked,naga-unroll \
        --json "$work/sgemm-$tag-loops-$round.json" > "$work/sgemm-$tag-loops-$round.txt" 2>&1
      /tmp/port-$tag 4096 > "$work/port-$tag-$round.jsonl" 2>> "$work/port-$tag-$round.err"
    done
  done
}
carrillo_port() {
  nvcc -O3 -arch=sm_90 -lineinfo -Xptxas -v benches/baselines/carrillo_port.cu -o /tmp/carrillo_port > "$work/carrillo-build.txt" 2>&1 || return 1
  /tmp/carrillo_port > "$work/carrillo_port.jsonl" 2> "$work/carrillo_port.err"
  cuobjdump --dump-sass /tmp/carrillo_port > "$work/carrillo_port.sass" 2>&1
  local mask
  for mask in "linear 0" "random 0" "random 0.005" "random 0.05" "linear 1"; do
    # shellcheck disable=SC2086
    "$ncu" --clock-control none --csv --page details --section SpeedOfLight --section Occupancy --section LaunchStats \
      --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis --section InstructionStats \
      --metrics smsp__sass_average_branch_targets_threads_uniform.pct,smsp__thread_inst_executed_per_inst_executed.ratio,smsp__inst_executed.sum,smsp__sass_inst_executed_op_local_ld.sum \
      /tmp/carrillo_port --once $mask > "$work/ncu-${mask/ /-}.csv" 2> "$work/ncu-${mask/ /-}.err"
  done
}
carrillo_wgsl() {
  local layout
  for layout in linear random; do
    $B bench carrillo $W --layout $layout --fractions 0,0.005,0.01,0.02,0.05,0.5,1 --json "$work/carrillo-$layout.json" > "$work/carrillo-$layout.txt" 2>&1
  done
}
gsync() {
  sleep 10
  $B bench pt --case gsync --syncs 100,1000 --blocks 1056 --json "$work/gsync-idle.json" > "$work/gsync-idle.txt" 2>&1
  $B bench pt --case gsync $W --syncs 100,1000 --blocks 1056 --json "$work/gsync-warm.json" > "$work/gsync-warm.txt" 2>&1
}
reduction_repeat() {
  local round
  for round in 1 2; do
    $B bench zhang --kernel reduction $W --strategy all --n 2097152,8388608,33554432,67108864 --json "$work/reduction-repeat-$round.json" > "$work/reduction-repeat-$round.txt" 2>&1
  done
}

flowshop() {
  # each search at its own best pool (benches/results/flowshop-resident-h100.md)
  $B flowshop solve ta021 --search resident --pool 65536 --time-limit 60 --json > "$work/flowshop-resident.json" 2> "$work/flowshop-resident.log"
  $B flowshop solve ta021 --search host --pool 4096 --time-limit 60 --json > "$work/flowshop-host.json" 2> "$work/flowshop-host.log"
}
bounding() { $B bench flowshop $W --instances ta021 --pools 65536 --exploration bfs --kernel refactored,basic --json "$work/bounding.json" > "$work/bounding.txt" 2>&1; }
profile() {
  $B profile tests/fixtures/profile/collatz.wgsl --workgroups 32768 --bind values=u32:2097152:random:1 --bind steps=u32:2097152:zero \
    --samples 20 --json "$work/profile-collatz.json" > "$work/profile-collatz.txt" 2>&1
  $B profile tests/fixtures/profile/mandelbrot.wgsl --workgroups 16384 --bind iterations=u32:1048576:zero \
    --samples 20 --json "$work/profile-mandelbrot.json" > "$work/profile-mandelbrot.txt" 2>&1
}

row sgemm-spirv sgemm_spirv
row carrillo-port carrillo_port
row carrillo-wgsl carrillo_wgsl
row gsync gsync
row reduction-repeat reduction_repeat

# the campaign
row devices devices
row torch torch_rows
row cuda cuda
row reduction reduction
row matmul matmul
row port port
row barrier barrier
row queue queue
row bs bs
row lbm lbm
row remap remap
row remap-bs remap_bs
row flowshop flowshop
row bounding bounding
row profile profile
log "campaign: done in $SECONDS s"
