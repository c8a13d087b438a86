#!/usr/bin/env bash
# Several devices in one call: the resident flow-shop search over 1, 2, 4 devices in one process
# (a host thread per device) and over 2 and 4 MPI ranks (one GPU each), a long 50x20 run, and
# `reproduce --quick` whole vs sharded over one process per GPU, joined with `report merge`. On a
# host with one GPU the devices are logical devices (several wgpu devices on the same GPU) and
# the shards share it: that checks correctness (node counts, merged report) and measures the
# cost of splitting, not a speed-up.
#
# Stage first, with the MPI feature so that the same binary runs under mpirun:
#   cargo build --release --features mpi && ../shared/gpu/prepare.sh target/release/simtlab
# then, on nvidia-h200-x4 (carry [".gpu"]), two calls of at most 600 s run the whole campaign of
# the multi-GPU issue; the first holds every figure it asks of one call (about 500 s on H200s:
# tree and mpi 65 s, long 360 s, reproduce 70 s), the second the rest (about 450 s):
#   bash benches/gpu_multi.sh "$OUT" "1 2 4" "tree mpi long reproduce"
#   bash benches/gpu_multi.sh "$OUT" "1 2 4" "select solve checkpoint long-mpi"
# Parts (third argument, default all): select, solve (the short fixed trees), tree (ta023 LB1,
# UB = optimum, about 25 s on one H200: the speed-up figure), mpi (the same tree over 2 and 4
# ranks; with REPEAT=K in the environment, tree and mpi run K times, interleaved), checkpoint
# (that tree over 2 ranks stopped at 10 s and resumed from its per-rank checkpoint on 3), long
# (ta056 for 60 s on one GPU and 300 s on all), long-mpi (ta056 for 300 s on as many MPI ranks),
# reproduce. LONG=S in the environment runs the long parts S seconds; SIMTLAB_BIN=PATH runs
# another build instead of .gpu/simtlab (an earlier one, staged beside it, as a baseline).
#
# The MPI runtime is not carried: the binary built here links Debian 12's Open MPI 4.1
# (libmpi.so.40, from libopenmpi-dev), and the lent machines have Open MPI 4.1.6 installed
# (/usr/bin/mpirun, the same libmpi.so.40), so `ldd .gpu/simtlab` resolves there as it is
# (recorded in ldd.txt). Were a machine without it, Debian's openmpi-bin, libopenmpi3 and their
# libraries (libpmix2, libhwloc15, libevent-*) unpacked with `dpkg-deb -x` into .gpu/mpi would
# do, with PATH=.gpu/mpi/usr/bin:$PATH, LD_LIBRARY_PATH=.gpu/mpi/usr/lib/x86_64-linux-gnu/openmpi/lib:...
# and OPAL_PREFIX=.gpu/mpi/usr so that Open MPI finds its components there. mpirun runs as root
# there (--allow-run-as-root) and passes the Vulkan loader's environment to the ranks (-x).
# The lent machines' environment sets OMPI_MCA_btl_vader_single_copy_mechanism=none, so a gift
# between ranks of one host crossed in 32 KB pieces (17 ms for 10 MB); their containers allow
# process_vm_readv (Seccomp: 0), so the ranks run with CMA, one copy (2 ranks: 12.7 s against
# 13.0-13.8 s, multi-gpu-h200-x2.md).
#
# Every run writes its JSON, log and command line as soon as it ends, packed into
# $OUT/multi.tar (the device returns few files; unpack with tar xf), and a line to
# $OUT/summary.tsv. `python3 benches/multi_table.py DIR [DIR ...]` on the unpacked directories
# prints the tables (markdown) and which of the issue's targets the runs meet or miss.
set -u
OUTDIR="$1"; counts="${2:-1 2}"; parts=" ${3:-select solve tree mpi checkpoint long reproduce} "
source .gpu/env.sh
B=${SIMTLAB_BIN:-.gpu/simtlab}
out=$(mktemp -d)
pack() { (cd "$out" && tar cf "$OUTDIR/multi.tar" --exclude="ckpt.e*" .); cp "$out/summary.tsv" "$OUTDIR/"; }
ms() { echo $(( $(date +%s%N) / 1000000 )); }
nvidia-smi --query-gpu=index,name,pci.bus_id,driver_version --format=csv > "$out/nvidia-smi.csv" 2>&1
$B devices --json > "$out/devices.json" 2> "$out/devices.log"
$B devices > "$out/devices.txt" 2>&1
ldd $B > "$out/ldd.txt" 2>&1
MPIRUN=(mpirun --allow-run-as-root --oversubscribe --bind-to none --mca btl_vader_single_copy_mechanism cma
        -x LD_LIBRARY_PATH -x VK_ICD_FILENAMES -x VK_DRIVER_FILES -x WGPU_BACKEND)
grep -i seccomp /proc/self/status > "$out/seccomp.txt" 2>&1
mpirun --version > "$out/mpirun-version.txt" 2>&1
printf "what\tdevices\tmakespan\toptimal\tnodes\tseconds\tnodes_per_s\n" > "$out/summary.tsv"

# solve NAME DEVICES ARGS...: one resident search (pool 65536, the H100's best), its summary line;
# DEVICES "rN" runs it over N MPI ranks instead of N devices of one process
solve() {
  local ta="$1" d="$2"; shift 2
  local name="$ta-d$d$(echo "$*" | tr -d ' /-')${round:-}"
  local run=($B flowshop solve "$ta" --search resident --pool 65536 "$@" --json)
  case "$d" in
    r*) run=("${MPIRUN[@]}" -np "${d#r}" "${run[@]}") ;;
    *) run+=(--devices "$d") ;;
  esac
  echo "${run[*]}" > "$out/$name.cmd"
  "${run[@]}" > "$out/$name.json" 2> "$out/$name.log"
  python3 - "$out/$name.json" "$ta" "$d" >> "$out/summary.tsv" <<'PY'
import json, sys
path, ta, d = sys.argv[1:]
try:
    r = json.load(open(path))
    rate = r['nodes'] / max(r['seconds'] - r['heuristic_seconds'], 1e-9)
    print(f"{ta}\t{d}\t{r['makespan']}\t{r['optimal']}\t{r['nodes']}\t{r['seconds']:.2f}\t{rate:.0f}")
except Exception as e:
    print(f"{ta}\t{d}\terror\t{e}")
PY
  tail -1 "$out/summary.tsv" >&2
  pack
}

# every timed run, one GPU included, after the driver has compiled the kernels of both bounds
# once: the first run on a machine spends 0.2-0.3 s more in its setup
if [[ $parts =~ \ (solve|tree|mpi|long|long-mpi)\  ]]; then
  for bound in lb1 lb2; do $B flowshop solve ta021 --search resident --pool 65536 --bound $bound --time-limit 2 > /dev/null 2>&1; done
fi

# selecting an adapter by index and by PCI bus id (Vulkan ignores CUDA_VISIBLE_DEVICES)
if [[ $parts == *" select "* ]]; then
  bus=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[0]["pci_bus"])' "$out/devices.json")
  for a in "#0" "$bus"; do
    echo "--adapter $a" >> "$out/select.txt"
    $B devices --adapter "$a" >> "$out/select.txt" 2>&1
    $B flowshop solve ta029 --search resident --adapter "$a" --time-limit 30 --json > "$out/select-ta029.json" 2>> "$out/select.txt"
    python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print("ta029:", r["makespan"], r["nodes"], "nodes")' "$out/select-ta029.json" >> "$out/select.txt" 2>&1
  done
  pack
fi

if [[ $parts == *" solve "* ]]; then
  # UB = the optimum: every device count must explore the same tree (same node count)
  for d in $counts; do solve ta021 "$d" --ub 2297 --time-limit 60; done
  for d in $counts; do solve ta023 "$d" --ub 2326 --time-limit 90; done
  # 50x20 is far from provable in minutes: a fixed time, nodes/s
  for d in $counts; do solve ta051 "$d" --time-limit 20; done
fi
max=$(echo $counts | tr ' ' '\n' | sort -n | tail -1)
# the speed-up figure: a fixed tree of 2.85 G nodes, about 25 s on one H200; with REPEAT the
# device counts take turns
repeat=${REPEAT:-1}
for k in $(seq "$repeat"); do
  round=""; [ "$repeat" -gt 1 ] && round="-run$k"
  if [[ $parts == *" tree "* ]]; then
    for d in $counts; do solve ta023 "$d" --bound lb1 --ub 2326 --time-limit 200; done
  fi
  if [[ $parts == *" mpi "* ]]; then
    for d in $counts; do [ "$d" -gt 1 ] && solve ta023 "r$d" --bound lb1 --ub 2326 --time-limit 200; done
  fi
done
round=""
# per-rank checkpoints: the fixed tree over 2 ranks stopped after 10 s, leaving a manifest and
# one part per rank, then resumed from it on 3 ranks: the total node count must be the tree's
if [[ $parts == *" checkpoint "* ]]; then
  rm -f "$out"/ckpt*
  solve ta023 r2 --bound lb1 --ub 2326 --time-limit 10 --checkpoint "$out/ckpt" --checkpoint-every 4
  ls -l "$out"/ckpt* > "$out/ckpt-files.txt" 2>&1
  head -c 2000 "$out/ckpt" > "$out/ckpt-manifest-head.txt" 2>&1
  solve ta023 r3 --bound lb1 --ub 2326 --time-limit 200 --resume "$out/ckpt"
  pack
fi
# 50x20 for minutes: nodes/s on all GPUs against one GPU in the same call
if [[ $parts == *" long "* ]]; then
  solve ta056 1 --time-limit "$(( ${LONG:-300} < 60 ? ${LONG:-300} : 60 ))"
  solve ta056 "$max" --time-limit "${LONG:-300}"
fi
if [[ $parts == *" long-mpi "* ]]; then
  solve ta056 "r$max" --time-limit "${LONG:-300}"
fi
[[ $parts == *" reproduce "* ]] || exit 0

# reproduce --quick: one process, then one process per shard at the same time, merged
t0=$(ms)
timeout 200 $B reproduce --quick --out "$out/whole" > "$out/whole.log" 2>&1
echo -e "reproduce-quick\t1 process, exit $?\t\t\t\t$(( $(ms) - t0 )) ms\t" >> "$out/summary.tsv"
pack
n=$max
[ "$n" -ge 2 ] || n=2
t0=$(ms)
# one GPU per shard where the host has enough of them (by index: Vulkan ignores CUDA_VISIBLE_DEVICES)
gpus=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))))' "$out/devices.json")
for i in $(seq 1 $n); do
  pick=()
  [ "$gpus" -ge "$n" ] && pick=(--adapter "#$((i - 1))")
  echo "$B reproduce --quick --shard $i/$n ${pick[*]}" > "$out/shard$i.cmd"
  timeout 200 $B reproduce --quick --shard "$i/$n" "${pick[@]}" --out "$out/shard$i" > "$out/shard$i.log" 2>&1 &
done
wait
echo -e "reproduce-quick-sharded\t$n processes\t\t\t\t$(( $(ms) - t0 )) ms\t" >> "$out/summary.tsv"
$B report merge $(for i in $(seq 1 $n); do echo "$out/shard$i"; done) --out "$out/merged" > "$out/merge.log" 2>&1
echo "merge exit $?" >> "$out/merge.log"
pack
tail -2 "$out/summary.tsv" >&2
