#!/usr/bin/env bash
# The performance campaign on a lent GPU, in one device call. Builds nothing: stage first with
#   cargo build --release && ../shared/gpu/prepare.sh target/release/simtlab
# then run from the repository root there:  bash benches/gpu_campaign.sh "$OUT"
# Every row is measured beside its baseline in the same call; all outputs go to one tarball.
set -u
out="${1:-campaign-out}"
work=$(mktemp -d)
source .gpu/env.sh
B=.gpu/simtlab
# at least 200 warm-up runs of >= 5 ms each (--min-sample-ms): about a second of load before
# the samples of every figure, so the clock governor has settled at the working clock
W="--warmup 200"
log() { echo "== $*" >&2; }

nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv > "$work/nvidia-smi.csv" 2>&1
# SM/memory clocks every 100 ms for the whole campaign: an idle GPU clocks down, and every
# figure should come from a ramped-up one (the harness warms up for at least 0.25 s).
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 100 > "$work/clocks.csv" 2>&1 &
clocks=$!
log devices;   $B devices --json > "$work/devices.json"
log torch;     python3 benches/baselines/torch_baselines.py > "$work/torch.json" 2> "$work/torch.err"
log cuda;      (nvcc -O3 -arch=sm_90 -rdc=true benches/baselines/grid_sync.cu -o "$work/grid_sync" && "$work/grid_sync") > "$work/cuda_pt.jsonl" 2> "$work/cuda.err"
log reduction; $B bench zhang --kernel reduction $W --n 268435456 --strategy all --samples 10 --reduction-groups 1056,2112,4224,8448,16896 --json "$work/reduction.json" > "$work/reduction.txt" 2>&1
log matmul;    $B bench matmul $W --kernel regtile,unrolled --n 4096 --samples 10 --json "$work/matmul.json" > "$work/matmul.txt" 2>&1
# the same SGEMM as regtile, ported to CUDA: how much of the gap to cuBLAS is the algorithm
log port;      (nvcc -O3 -arch=sm_90 benches/baselines/regtile_port.cu -o /tmp/regtile_port -lcublas && /tmp/regtile_port 4096) > "$work/regtile_port.jsonl" 2> "$work/regtile_port.err"
log barrier;   $B bench pt --case barrier $W --workgroups 132,1056 --arrival flat,tree --fence device,none --iterations 1000 --json "$work/barrier.json" > "$work/barrier.txt" 2>&1
log queue;     $B bench pt --case queue $W --json "$work/queue.json" > "$work/queue.txt" 2>&1
log bs;        $B bench zhang --kernel blackscholes $W --n 16777216 --strategy all --json "$work/blackscholes.json" > "$work/blackscholes.txt" 2>&1
log lbm;       $B bench zhang --kernel lbm $W --n 192 --strategy all --samples 5 --json "$work/lbm.json" > "$work/lbm.txt" 2>&1
log remap;     $B bench remap $W --n 16777216 --pipeline 16 --workers 8 --trace "$work/remap-trace.json" --json "$work/remap.json" > "$work/remap.txt" 2>&1
log remap-bs;  $B bench remap $W --distribution uniform --strategy none,auto --n 16777216 --json "$work/remap-auto-flat.json" > "$work/remap-auto-flat.txt" 2>&1
kill $clocks 2>/dev/null
tar czf "$out/campaign.tgz" -C "$work" .
log done
