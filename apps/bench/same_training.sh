#!/usr/bin/env bash
# Do two builds train the same models? Trains each program for 200 steps with the same seed on
# each build, on 1 and 2 threads, and compares the checkpoints tensor by tensor (every byte of
# every parameter, buffer and optimizer moment) and the logged losses. A refactoring that claims
# "no behaviour change" must pass it. The four runs:
#   uwaga-vit train --preset mnist-tiny
#   uwaga-translate train                      (the default preset)
#   uwaga-gpt train --preset smoke             (on a generated text of 4,000 short lines)
#   uwaga-pose train --preset smoke            (synthetic stick figures)
#   bash apps/bench/same_training.sh OLD_BUILD NEW_BUILD [OUT]
# OLD_BUILD and NEW_BUILD are build directories (holding apps/uwaga-vit, ...); OUT (default: a
# temporary directory) keeps the runs. PROGRAMS="vit gpt" runs some of them, STEPS=N another
# length, THREADS="1" other thread counts. Needs MNIST (bash data/fetch.sh mnist).
# Exit status 0 when every pair matches, 1 otherwise.
set -euo pipefail
cd "$(dirname "$0")/../.."
usage="usage: same_training.sh OLD_BUILD NEW_BUILD [OUT]"
old=${1:?$usage} new=${2:?$usage}
out=${3:-$(mktemp -d)}
steps=${STEPS:-200}
programs=${PROGRAMS:-vit translate gpt pose}
mkdir -p "$out"
[[ " $programs " != *" vit "* || -f data/cache/mnist/t10k-labels-idx1-ubyte ]] ||
  bash data/fetch.sh mnist >/dev/null

# The GPT's text: short lines repeated, so the smoke model has something to learn in 200 steps.
text=$out/verses.txt
for _ in $(seq 1 1000); do
  printf 'ROMEO: what light breaks there?\nJULIET: it is the east.\n'
  printf 'ROMEO: and juliet is the sun.\nJULIET: arise, fair sun.\n'
done >"$text"

run() {  # run BUILD NAME THREADS DIR: exit status of the program
  local build=$1 name=$2 threads=$3 dir=$4
  local common=(--max-steps "$steps" --threads "$threads" --seed 3 --out "$dir")
  rm -rf "$dir"
  case $name in
    vit) "$build/apps/uwaga-vit" train --preset mnist-tiny "${common[@]}" ;;
    translate) "$build/apps/uwaga-translate" train "${common[@]}" ;;
    gpt) "$build/apps/uwaga-gpt" train --preset smoke --text "$text" --epochs 10 "${common[@]}" ;;
    pose) "$build/apps/uwaga-pose" train --preset smoke --epochs 50 "${common[@]}" ;;
    *) echo "same_training.sh: unknown program '$name' (vit, translate, gpt, pose)" >&2; return 2 ;;
  esac >"$dir.out" 2>&1
}

status=0
for name in $programs; do
  for threads in ${THREADS:-1 2}; do
    what="$name, $threads thread(s), $steps steps"
    for side in old new; do
      build=$old; [[ $side == new ]] && build=$new
      run "$build" "$name" "$threads" "$out/$side-$name-$threads" ||
        echo "($side build: $name exited $?, see $out/$side-$name-$threads.out)"
    done
    if /usr/bin/python3 apps/bench/compare_checkpoints.py \
         "$out/old-$name-$threads" "$out/new-$name-$threads"; then
      echo "same: $what"
    else
      echo "DIFFERENT: $what"
      status=1
    fi
  done
done
echo "runs in $out"
exit $status
