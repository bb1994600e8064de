#!/usr/bin/env bash
# The cifar10-vit recipe: its whole schedule, or a short ablation of what each part adds, or the
# data pipeline's share of a training step. Accuracy targets are measured here, never in CI.
#
#   bash apps/bench/cifar_recipe.sh full       the preset's schedule (PRESET, default cifar10-vit;
#                                              resumable: rerun the same command after an
#                                              interruption or a SIGTERM), evaluated every
#                                              EVAL_EVERY (default 10) epochs and after the
#                                              last, then the test accuracy every 10 epochs and
#                                              the total time
#   bash apps/bench/cifar_recipe.sh ablation   short runs (EPOCHS, default 10) of the preset's
#                                              model: its recipe built up part by part, then
#                                              one change each (TrivialAugment, erasing,
#                                              Mixup/CutMix, EMA)
#   bash apps/bench/cifar_recipe.sh pipeline   ms a batch of the data pipeline with the recipe and
#                                              without augmentation, beside ms a training step
#   bash apps/bench/cifar_recipe.sh fashion    fashion-mnist with the same tools (FASHION_FLAGS)
#   bash apps/bench/cifar_recipe.sh torch      for each of SEEDS (default 0) a run of the preset
#                                              (EXTRA flags), then the same run in PyTorch on the
#                                              same batches (apps/bench/vit_torch_run.py); the
#                                              test accuracy of all, epoch by epoch
#   bash apps/bench/cifar_recipe.sh jpeg       what a JPEG round trip costs (apps/bench/
#                                              jpeg_round_trip.py): Fashion-MNIST as released
#                                              against its quality-75 round trip
#                                              (FASHION_FLAGS, default --epochs 25), and the
#                                              CIFAR-10 copy against one more quality-75 pass
#                                              (CIFAR_FLAGS, default --epochs 12 --warmup 390);
#                                              the runs side by side, one thread each
#                                              (PAIRS: "fashion cifar10" or either one)
#   bash apps/bench/cifar_recipe.sh stem       the preset's patch embedding against a
#                                              convolutional stem (--stem conv), the same recipe
#                                              (STEM_FLAGS, default --epochs 12 --warmup 390),
#                                              the two runs side by side, one thread each
#   bash apps/bench/cifar_recipe.sh model      cifar10-cct's recipe on CCT's own model (the preset,
#                                              --cct-details) against uwaga's (--cct-details=false:
#                                              a Linear after the tokenizer, qkv biases, pre-LN
#                                              blocks, ViT's init), MODEL_FLAGS (default --epochs 12
#                                              --warmup 390), side by side, one thread each
#   bash apps/bench/cifar_recipe.sh report RUN the accuracy every 10 epochs of a run's log.jsonl
#
# Environment: THREADS (default 2), OUT (default runs/cifar-recipe), BUILD_DIR (default build),
# EPOCHS and TRAIN_SIZE (ablation: epochs and training images, default 10 and all), EXTRA (more
# train flags for every run), CIFAR10_FROM (where data/fetch.sh copies CIFAR-10 from; default
# ../shared/datasets/cifar10 — a JPEG-rebuilt copy: say so beside its figures).
set -euo pipefail
cd "$(dirname "$0")/../.."
mode=${1:-}
threads=${THREADS:-2}
out=${OUT:-runs/cifar-recipe}
build_dir=${BUILD_DIR:-build}
vit=$build_dir/apps/uwaga-vit
usage() { echo "usage: cifar_recipe.sh full | ablation | pipeline | fashion | torch | jpeg | stem | model | report RUN_DIR" >&2; exit 2; }
[[ -n $mode ]] || usage

machine() {
  echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), $(nproc) cores," \
       "$threads threads; load average $(cut -d' ' -f1-3 /proc/loadavg); git $(git rev-parse --short HEAD)$(git diff --quiet || echo '+changes')"
}

# The accuracy after every 10th epoch (and the last), the best, and the time, from a log.jsonl.
report() {
  /usr/bin/python3 - "$1/log.jsonl" <<'PY'
import json, sys
epochs = [json.loads(l) for l in open(sys.argv[1]) if '"type":"epoch"' in l.replace(' ', '')]
if not epochs:
    sys.exit("no epoch finished yet in " + sys.argv[1])
seconds = sum(e.get("seconds", 0) for e in epochs)
last = epochs[-1]["epoch"]
evaluated = [e for e in epochs if "test_accuracy" in e]  # all of them, unless --eval-every
for e in evaluated:
    if e["epoch"] % 10 == 0 or e["epoch"] == last:
        raw = f"  (weights without the average {100 * e['test_raw_accuracy']:.2f} %)" if "test_raw_accuracy" in e else ""
        print(f"  epoch {e['epoch']:4d}: test accuracy {100 * e['test_accuracy']:.2f} %{raw}")
best = ""
if evaluated:
    top = max(evaluated, key=lambda e: e["test_accuracy"])
    best = f"best {100 * top['test_accuracy']:.2f} % at epoch {top['epoch']}; "
print(f"  {best}{len(epochs)} epochs logged ({len(evaluated)} evaluated), {seconds / 60:.1f} min of training")
PY
}

# The test accuracy of several runs epoch by epoch, one column a run (named by its directory).
side_by_side() {
  /usr/bin/python3 - "$@" <<'PY'
import json, os, sys
runs = {}
for d in sys.argv[1:]:
    epochs = [json.loads(l) for l in open(os.path.join(d, "log.jsonl")) if '"type":"epoch"' in l.replace(' ', '')]
    runs[os.path.basename(d)] = {e["epoch"]: e for e in epochs if "test_accuracy" in e}
names = list(runs)
print("  epoch  " + "  ".join(f"{n:>14}" for n in names))
for epoch in sorted(set().union(*runs.values())):
    cells = [f"{100 * runs[n][epoch]['test_accuracy']:13.2f}%" if epoch in runs[n] else " " * 14 for n in names]
    print(f"  {epoch:5d}  " + "  ".join(cells))
secs = [sum(e.get("seconds", 0) for e in runs[n].values()) / 60 for n in names]
print("  min    " + "  ".join(f"{s:14.1f}" for s in secs) + "   (training time)")
PY
}

cifar_data() {
  [[ -f data/cache/cifar10/test_batch.bin ]] ||
    bash data/fetch.sh cifar10 data/cache/cifar10 --from "${CIFAR10_FROM:-../shared/datasets/cifar10}" >&2
}

fashion_data() {
  [[ -f data/cache/fashion-mnist/t10k-labels-idx1-ubyte ]] ||
    bash data/fetch.sh fashion-mnist data/cache/fashion-mnist >&2
}

train() {  # train DIR FLAGS...: a run into DIR, resumed when DIR has a checkpoint
  local dir=$1; shift
  local resume=()
  [[ -f $dir/checkpoint.safetensors ]] && resume=(--resume)
  # shellcheck disable=SC2086
  "$vit" train --out "$dir" "${resume[@]}" --threads "$threads" "$@" ${EXTRA:-} >"$dir.out" 2>&1 || {
    echo "run $dir failed; the end of $dir.out:" >&2; tail -5 "$dir.out" >&2; return 1; }
}

wait_all() {  # waits for every run started in the background; fails when one failed
  local failed=0
  for job in $(jobs -p); do wait "$job" || failed=1; done
  ((failed == 0))
}

mkdir -p "$out"
case $mode in
  full)
    cifar_data
    machine
    preset=${PRESET:-cifar10-vit}
    echo "$preset, the whole schedule, into $out/$preset (CIFAR-10 from ${CIFAR10_FROM:-../shared/datasets/cifar10})"
    train "$out/$preset" --preset "$preset" --eval-every "${EVAL_EVERY:-10}"
    grep -E "^test accuracy" "$out/$preset.out" || true
    report "$out/$preset"
    ;;
  ablation)
    cifar_data
    machine
    epochs=${EPOCHS:-10}
    size=()
    [[ -n ${TRAIN_SIZE:-} ]] && size=(--train-size "$TRAIN_SIZE")
    base=(--preset cifar10-vit --epochs "$epochs" --warmup 390 "${size[@]}")
    none=(--policy none --drop-path 0 --label-smoothing 0)
    declare -A variants=(
      [0-shift-flip]="${none[*]}"
      [1-label-smoothing]="--policy none --drop-path 0"
      [2-randaugment]="--drop-path 0"
      [3-drop-path]=""
      [4-trivialaugment]="--policy trivialaugment"
      [5-erase]="--erase 0.25"
      [6-mixup-cutmix]="--mixup 0.8 --cutmix 1.0"
      [7-ema]="--ema 0.999"
    )
    echo "ablation: $epochs epochs each${TRAIN_SIZE:+, the first $TRAIN_SIZE training images}, the preset's model;" \
         "rows 0-3 build its recipe up part by part (3 is the preset), rows 4-7 change one thing of it:"
    for name in $(printf '%s\n' "${!variants[@]}" | sort); do
      # shellcheck disable=SC2086
      train "$out/ablation-$name" "${base[@]}" ${variants[$name]}
      acc=$(grep -E "^test accuracy" "$out/ablation-$name.out" | sed 's/test accuracy: //')
      printf '  %-20s %-40s %s\n' "$name" "${variants[$name]:-(the preset recipe)}" "$acc"
    done
    ;;
  pipeline)
    cifar_data
    machine
    "$vit" augment --time "${BATCHES:-20}" --preset cifar10-vit --threads "$threads"
    # A training step on the same machine, with the recipe: ms a step from the progress log.
    rm -rf "$out/pipeline-step"
    train "$out/pipeline-step" --preset cifar10-vit --max-steps "${STEPS:-30}" --log-every 10 --train-size 5120
    /usr/bin/python3 - "$out/pipeline-step/log.jsonl" <<'PY'
import json, sys
steps = [json.loads(l) for l in open(sys.argv[1]) if '"type":"step"' in l.replace(' ', '')]
rate = steps[-1]["items_per_s"]  # images a second over the last log window (the data included)
print(f"  a training step (128 images, data included): {128e3 / rate:.1f} ms ({rate:.0f} images/s)")
PY
    ;;
  fashion)
    fashion_data
    machine
    # shellcheck disable=SC2086
    train "$out/fashion" --preset fashion-mnist ${FASHION_FLAGS:---policy trivialaugment --drop-path 0.1 --erase 0.25 --label-smoothing 0.1}
    grep -E "^test accuracy" "$out/fashion.out" || true
    report "$out/fashion"
    ;;
  torch)
    cifar_data
    machine
    [[ -f $build_dir/notebooks/uwaga/__init__.py ]] ||
      { echo "torch: no Python bindings in $build_dir/notebooks (configure with -DUWAGA_PYTHON=ON)" >&2; exit 1; }
    read -ra seeds <<<"${SEEDS:-0}"
    for seed in "${seeds[@]}"; do
      train "$out/uwaga-seed$seed" --preset cifar10-vit --seed "$seed"
      echo "uwaga-vit, seed $seed ($out/uwaga-seed$seed):"
      report "$out/uwaga-seed$seed"
      dir=$out/torch-seed$seed
      OMP_WAIT_POLICY=PASSIVE /usr/bin/python3 apps/bench/vit_torch_run.py --like "$out/uwaga-seed$seed" \
        --seed "$seed" --out "$dir" --build-dir "$build_dir" --threads "$threads" >"$dir.out" 2>&1 || {
        echo "the PyTorch run failed; the end of $dir.out:" >&2; tail -5 "$dir.out" >&2; exit 1; }
      echo "PyTorch, the same batches ($dir):"
      report "$dir"
    done
    echo "test accuracy, epoch by epoch:"
    side_by_side "${seeds[@]/#/$out/uwaga-seed}" "${seeds[@]/#/$out/torch-seed}"
    ;;
  jpeg)
    read -ra pairs <<<"${PAIRS:-fashion cifar10}"
    # Each pair: the data as it came and the same after a quality-75 pass — the first pass over
    # Fashion-MNIST, a second over the CIFAR-10 copy with the 8×8 grid shifted by 4 pixels (on
    # the first pass's grid a quality-75 pass changes little).
    declare -A flags=([fashion]="--preset fashion-mnist ${FASHION_FLAGS:---epochs 25}"
                      [cifar10]="--preset cifar10-vit ${CIFAR_FLAGS:---epochs 12 --warmup 390}")
    declare -A as_it_came=([fashion]=fashion-mnist [cifar10]=cifar10)
    declare -A passed=([fashion]=fashion-mnist-jpeg75 [cifar10]=cifar10-jpeg75-offset4)
    declare -A offset=([fashion]=0 [cifar10]=4)
    for pair in "${pairs[@]}"; do
      [[ -n ${flags[$pair]:-} ]] || { echo "jpeg: PAIRS takes fashion and cifar10, not '$pair'" >&2; exit 2; }
      if [[ $pair == fashion ]]; then fashion_data; else cifar_data; fi
      [[ -f data/cache/${passed[$pair]}/SOURCE ]] ||  # made once, kept for later runs
        /usr/bin/python3 apps/bench/jpeg_round_trip.py "data/cache/${as_it_came[$pair]}" \
          "data/cache/${passed[$pair]}" --offset "${offset[$pair]}" >&2
    done
    threads=1
    machine
    echo "${pairs[*]}: two runs each, all side by side on one thread each${EXTRA:+, with $EXTRA}"
    for pair in "${pairs[@]}"; do
      # shellcheck disable=SC2086
      train "$out/${as_it_came[$pair]}" ${flags[$pair]} --data-dir "data/cache/${as_it_came[$pair]}" &
      # shellcheck disable=SC2086
      train "$out/${passed[$pair]}" ${flags[$pair]} --data-dir "data/cache/${passed[$pair]}" &
    done
    wait_all || exit 1
    for pair in "${pairs[@]}"; do
      echo "${flags[$pair]}: test accuracy epoch by epoch, the data as it came and after the pass" \
           "(the test set's too):"
      side_by_side "$out/${as_it_came[$pair]}" "$out/${passed[$pair]}"
    done
    ;;
  model)
    cifar_data
    threads=1
    machine
    read -ra model_flags <<<"--preset cifar10-cct ${MODEL_FLAGS:---epochs 12 --warmup 390}"
    echo "${model_flags[*]}: CCT's model and uwaga's side by side, one thread each${EXTRA:+, with $EXTRA}"
    train "$out/model-cct" "${model_flags[@]}" &
    train "$out/model-uwaga" "${model_flags[@]}" --cct-details=false &
    wait_all || exit 1
    grep -H -m1 -E "^  params" "$out/model-cct.out" "$out/model-uwaga.out" || true
    echo "test accuracy, epoch by epoch:"
    side_by_side "$out/model-cct" "$out/model-uwaga"
    ;;
  stem)
    cifar_data
    threads=1
    machine
    read -ra stem_flags <<<"--preset cifar10-vit ${STEM_FLAGS:---epochs 12 --warmup 390}"
    echo "${stem_flags[*]}: patches and a conv stem side by side, one thread each${EXTRA:+, with $EXTRA}"
    train "$out/stem-patch" "${stem_flags[@]}" --stem patch &
    train "$out/stem-conv" "${stem_flags[@]}" --stem conv &
    wait_all || exit 1
    grep -H -m1 -E "^  params" "$out/stem-patch.out" "$out/stem-conv.out" || true
    echo "test accuracy epoch by epoch (CIFAR-10 from ${CIFAR10_FROM:-../shared/datasets/cifar10}):"
    side_by_side "$out/stem-patch" "$out/stem-conv"
    ;;
  report)
    report "${2:?usage: cifar_recipe.sh report RUN_DIR}"
    ;;
  *) usage ;;
esac
