#!/usr/bin/env bash
# Builds the SPIR-V modules of the naga-vs-driver SGEMM comparison
# (benches/results/sgemm-spirv-h100.md) on a machine with glslang-tools and spirv-tools
# (Debian: apt-get install glslang-tools spirv-tools) and any Vulkan adapter (lavapipe will do):
#   bash benches/sgemm/build.sh SIMTLAB DIR
# SIMTLAB is a simtlab binary of this tree. For each regtile configuration (tag: its workgroup)
# DIR gets
#   regtile-<tag>-naga.spv, -naga-unchecked.spv   naga's SPIR-V (simtlab bench matmul --save-spirv)
#   regtile-<tag>-loops-naga-unchecked.spv        the same of the loop form (--loops)
#   regtile-<tag>-glslang.spv                     benches/sgemm/regtile.comp through glslangValidator -V
#   regtile-<tag>-glslang-opt.spv, -naga-unchecked-opt.spv   the same after spirv-opt -O
#   *.spvasm (spirv-dis) and counts.txt (instructions per opcode, every module side by side)
# and checks every module with spirv-val and every one against the CPU product on the local
# adapter (simtlab bench matmul --n 256).
set -euo pipefail
simtlab=$1
dir=$2
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$dir"
# tag, simtlab options, glslang defines
for config in "16x8||" "16x16|--wg-y 16|-DWG_Y=16"; do
  IFS='|' read -r tag opts defines <<< "$config"
  tmp=$(mktemp -d)
  # shellcheck disable=SC2086  # the options are words
  "$simtlab" bench matmul --kernel regtile --n 128 $opts --compiler naga,naga-unchecked --save-spirv "$tmp" > /dev/null
  mv "$tmp/regtile-naga.spv" "$dir/regtile-$tag-naga.spv"
  mv "$tmp/regtile-naga-unchecked.spv" "$dir/regtile-$tag-naga-unchecked.spv"
  # shellcheck disable=SC2086
  "$simtlab" bench matmul --kernel regtile --n 128 $opts --loops --compiler naga-unchecked --save-spirv "$tmp" > /dev/null
  mv "$tmp/regtile-naga-unchecked.spv" "$dir/regtile-$tag-loops-naga-unchecked.spv"
  rmdir "$tmp"
  # shellcheck disable=SC2086
  glslangValidator -V $defines "$here/regtile.comp" -o "$dir/regtile-$tag-glslang.spv" > /dev/null
  spirv-opt -O "$dir/regtile-$tag-glslang.spv" -o "$dir/regtile-$tag-glslang-opt.spv"
  spirv-opt -O "$dir/regtile-$tag-naga-unchecked.spv" -o "$dir/regtile-$tag-naga-unchecked-opt.spv"
  spirv=()
  for m in naga naga-unchecked naga-unchecked-opt loops-naga-unchecked glslang glslang-opt; do
    f="$dir/regtile-$tag-$m.spv"
    spirv-val "$f"
    spirv-dis "$f" > "${f%.spv}.spvasm"
    spirv+=(--spirv "$f")
  done
  # every module against the CPU product, passed through on the local adapter
  # shellcheck disable=SC2086
  "$simtlab" bench matmul --kernel regtile --n 256 $opts --compiler naga,naga-unchecked "${spirv[@]}" --warmup 0 --samples 1 > "$dir/check-$tag.txt"
  if grep -q FAILED "$dir/check-$tag.txt"; then
    echo "a module differs from the CPU product: $dir/check-$tag.txt" >&2
    exit 1
  fi
done
python3 "$here/counts.py" "$dir"/*.spvasm > "$dir/counts.txt"
echo "built in $dir: $(cd "$dir" && ls ./*.spv | tr '\n' ' ')"
