#!/usr/bin/env bash
# uwaga's main job, from a fresh machine: install what is missing, build, fetch MNIST, train the
# reference ViT (preset mnist-tiny) and print its test accuracy.
#   bash apps/quickstart.sh [extra uwaga-vit train flags, e.g. --epochs 2]
# Each run writes a new directory under runs/ (nothing earlier is overwritten).
set -euo pipefail
cd "$(dirname "$0")/.."
bash apps/setup.sh
if [[ ! -f data/cache/mnist/t10k-labels-idx1-ubyte ]]; then
  bash data/fetch.sh mnist
fi
out="runs/mnist-tiny-$(date +%Y%m%d-%H%M%S)"
echo "quickstart: training mnist-tiny into $out"
./build/apps/uwaga-vit train --preset mnist-tiny --data-dir data/cache/mnist --out "$out" "$@"
