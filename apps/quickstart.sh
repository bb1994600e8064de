#!/usr/bin/env bash
# uwaga's main job, from a fresh machine: install what is missing, build, fetch MNIST, train the
# reference ViT (preset mnist-tiny), print its test accuracy and draw its training curves.
#   bash apps/quickstart.sh [extra uwaga-vit train flags, e.g. --epochs 2]
# Each run writes a new directory under runs/ (nothing earlier is overwritten).
set -euo pipefail
cd "$(dirname "$0")/.."
# BUILD_DIR and BUILD_TARGETS as for apps/setup.sh; uwaga-vit is always built.
if [[ -n "${BUILD_TARGETS:-}" && " $BUILD_TARGETS " != *" uwaga-vit "* ]]; then
  export BUILD_TARGETS="$BUILD_TARGETS uwaga-vit"
fi
bash apps/setup.sh
# Always: it checks the files' MD5 (under a second when they are there) and repairs a partial fetch.
bash data/fetch.sh mnist
out="runs/mnist-tiny-$(date +%Y%m%d-%H%M%S)"
echo "quickstart: training mnist-tiny into $out"
vit="${BUILD_DIR:-build}/apps/uwaga-vit"
"$vit" train --preset mnist-tiny --data-dir data/cache/mnist --out "$out" "$@"
# The training curves (loss, accuracy, learning rate, gradient norm) from the run's log.jsonl.
"$vit" plot --run "$out" --out "$out/curves.svg"
echo "quickstart: the training curves are in $out/curves.svg (open it in a browser)"
