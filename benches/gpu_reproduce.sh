#!/usr/bin/env bash
# `simtlab reproduce` at the papers' sizes on a lent GPU, one paper at a time so that a call
# cut short keeps the papers it finished. Stage first (see benches/gpu_campaign.sh), then:
#   bash benches/gpu_reproduce.sh "$OUT" zhang carrillo gupta ryoo chakroun
# Each paper lands in $OUT/rep-<paper>.tgz; join them with `simtlab report merge`.
set -u
out="$1"; shift
source .gpu/env.sh
for paper in "$@"; do
  dir=$(mktemp -d)/rep-$paper
  start=$(date +%s)
  echo "== reproduce $paper" >&2
  .gpu/simtlab reproduce --paper "$paper" --out "$dir" > "$dir.log" 2>&1
  echo "== $paper: exit $?, $(( $(date +%s) - start )) s" >&2
  cp "$dir.log" "$dir/"
  tar czf "$out/rep-$paper.tgz" -C "$(dirname "$dir")" "rep-$paper"
done
