#!/usr/bin/env bash
# Do two builds train the same models? Runs `uwaga-vit train --preset mnist-tiny` and
# `uwaga-translate train` for 200 steps with the same seed on each build, on 1 and 2 threads, and
# compares the checkpoints tensor by tensor (every byte of every parameter and optimizer moment)
# and the logged losses. A refactoring that claims "no behaviour change" must pass it.
#   bash apps/bench/same_training.sh OLD_BUILD NEW_BUILD [OUT]
# OLD_BUILD and NEW_BUILD are build directories (holding apps/uwaga-vit, apps/uwaga-translate);
# OUT (default: a temporary directory) keeps the runs. Needs MNIST (bash data/fetch.sh mnist).
# Exit status 0 when every pair matches, 1 otherwise.
set -euo pipefail
cd "$(dirname "$0")/../.."
old=${1:?usage: same_training.sh OLD_BUILD NEW_BUILD [OUT]} new=${2:?usage: same_training.sh OLD_BUILD NEW_BUILD [OUT]}
out=${3:-$(mktemp -d)}
steps=${STEPS:-200}
mkdir -p "$out"
[[ -f data/cache/mnist/t10k-labels-idx1-ubyte ]] || bash data/fetch.sh mnist >/dev/null

run() {  # run BUILD NAME THREADS DIR
  local build=$1 name=$2 threads=$3 dir=$4
  rm -rf "$dir"
  if [[ $name == vit ]]; then
    "$build/apps/uwaga-vit" train --preset mnist-tiny --max-steps "$steps" --threads "$threads" \
      --seed 3 --out "$dir" >"$dir.out" 2>&1
  else
    "$build/apps/uwaga-translate" train --max-steps "$steps" --threads "$threads" --seed 3 \
      --out "$dir" >"$dir.out" 2>&1
  fi
}

status=0
for name in vit translate; do
  for threads in 1 2; do
    run "$old" "$name" "$threads" "$out/old-$name-$threads"
    run "$new" "$name" "$threads" "$out/new-$name-$threads"
    if /usr/bin/python3 apps/bench/compare_checkpoints.py \
         "$out/old-$name-$threads" "$out/new-$name-$threads"; then
      echo "same: $name, $threads thread(s), $steps steps"
    else
      echo "DIFFERENT: $name, $threads thread(s), $steps steps"
      status=1
    fi
  done
done
echo "runs in $out"
exit $status
