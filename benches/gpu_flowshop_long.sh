#!/usr/bin/env bash
# A long resident search on a 50x20 instance in two parts: the first runs for SECONDS and
# leaves a checkpoint, the second resumes from it for SECONDS more. The checkpoint (the whole
# open frontier: 372 bytes a node on 50x20) stays on the device machine under /tmp, too large
# to come back; its size goes into the log. Stage first, then from the repository root:
#   bash benches/gpu_flowshop_long.sh "$OUT" [instance, default ta056] [seconds per part,
#     default 260] [both | first | second, default both]
# `first` and `second` run one part each, in two calls on the same (still warm) machine.
set -u
out="$1"; ta="${2:-ta056}"; part="${3:-260}"; which="${4:-both}"
source .gpu/env.sh
B=.gpu/simtlab
ckpt=/tmp/$ta.ckpt
nvidia-smi --query-gpu=name,driver_version --format=csv > "$out/nvidia-smi.csv" 2>&1
run() {
  local name="$1"; shift
  echo "$(date -u +%FT%TZ) $B flowshop solve $ta --search resident --pool 65536 $*" > "$out/$name.cmd"
  $B flowshop solve "$ta" --search resident --pool 65536 "$@" --json > "$out/$name.json" 2> "$out/$name.log"
  echo "exit $?; checkpoint: $(ls -l "$ckpt" 2>&1)" >> "$out/$name.log"
}
if [ "$which" != second ]; then
  run "$ta-part1" --time-limit "$part" --checkpoint "$ckpt" --checkpoint-every 120
  cp "$ckpt" "$ckpt.part1" 2>/dev/null
fi
if [ "$which" != first ]; then
  run "$ta-part2" --time-limit "$part" --resume "$ckpt.part1" --checkpoint "$ckpt"
fi
