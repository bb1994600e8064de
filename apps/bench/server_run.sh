#!/usr/bin/env bash
# The many-core server measurement in one go, for a machine that has PyTorch but none of uwaga's
# build dependencies: unpacks build-carry.tar.xz (apps/bench/carry.sh, made where uwaga builds;
# build-carry/new is the build measured, build-carry/old the one it is compared with), then runs
# the phases asked for. Each phase's table goes to stdout and its raw lines under OUT.
#   bash apps/bench/carry.sh build-old:old build-bench:new && tar -cJf build-carry.tar.xz build-carry
#   # on the server, in a copy of the repository with build-carry.tar.xz:
#   PHASES="builds fraction" bash apps/bench/server_run.sh      # uwaga alone
#   PHASES="vit gpt" bash apps/bench/server_run.sh              # against PyTorch
# Phases: builds (compare_builds.sh old/new: mnist-tiny, cifar10-small, shakespeare-tiny at 1 and
#   all threads), fraction (core_fraction.sh: each model's share of sgemm at one thread), vit
#   (vit_speed.sh: the three ViTs against PyTorch float32 and bf16 autocast at 1, 2 and all
#   threads, and 1 → all threads at batch 512), gpt (gpt_speed.sh: both GPT presets at 1, 2 and
#   all threads).
# Environment: PHASES, ROUNDS (2), PYTHON (python3: the interpreter with PyTorch), OUT
#   (runs/server/<date>-<time>), MAX_THREADS (nproc).
set -uo pipefail
cd "$(dirname "$0")/../.."
phases=${PHASES:-"builds fraction vit gpt"}
rounds=${ROUNDS:-2}
export PYTHON=${PYTHON:-python3}
max=${MAX_THREADS:-$(nproc)}
out=${OUT:-runs/server/$(date +%Y-%m-%d-%H%M)}
mkdir -p "$out"
[[ -d build-carry ]] || tar -xf build-carry.tar.xz || { echo "server_run.sh: no build-carry.tar.xz" >&2; exit 2; }
new=build-carry/new old=build-carry/old
[[ -d $new ]] || new=build-carry
echo "server_run.sh: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), family $(grep -m1 'cpu family' /proc/cpuinfo | cut -d: -f2 | xargs) model $(grep -m1 '^model' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores; PyTorch $($PYTHON -c 'import torch; print(torch.__version__)' 2>/dev/null)"
status=0
for phase in $phases; do
  echo "== $phase ($(date +%T))"
  case $phase in
    builds)
      [[ -d $old ]] || { echo "no $old: skipped"; continue; }
      MODELS="mnist-tiny cifar10-small shakespeare-tiny" THREADS="1 $max" REPEATS=3 \
        bash apps/bench/compare_builds.sh "$old" "$new" "$rounds" | tail -n 6 ;;
    fraction)
      BUILD_DIR=$new ROUNDS=$rounds OUT=$out/fraction bash apps/bench/core_fraction.sh || status=1 ;;
    vit)
      BUILD_DIR=$new ROUNDS=1 WARMUP=1 REPEATS=2 MIN_SECONDS=0.5 BF16=1 MODELS="mnist-tiny cifar10-small" \
        THREADS="1 2 $max" OUT=$out/vit bash apps/bench/vit_speed.sh | tail -n 9 || status=1
      BUILD_DIR=$new ROUNDS=1 WARMUP=1 REPEATS=2 MIN_SECONDS=0.5 BF16=1 MODELS=vit-d192 \
        THREADS="2 $max" OUT=$out/vit-d192 bash apps/bench/vit_speed.sh | tail -n 4 || status=1
      BUILD_DIR=$new ROUNDS=1 WARMUP=1 REPEATS=2 MIN_SECONDS=0.5 MODELS=mnist-tiny BATCHES=512 \
        THREADS="1 $max" OUT=$out/scaling bash apps/bench/vit_speed.sh | tail -n 4 || status=1 ;;
    gpt)
      BUILD_DIR=$new ROUNDS=1 WARMUP=1 REPEATS=2 STEPS=2 THREADS="1 2 $max" OUT=$out/gpt \
        bash apps/bench/gpt_speed.sh | tail -n 8 || status=1 ;;
    *) echo "server_run.sh: unknown phase $phase" >&2; exit 2 ;;
  esac
done
echo "== done ($(date +%T)); raw lines in $out"
exit $status
