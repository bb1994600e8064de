#!/usr/bin/env bash
# Smoke test of uwaga-vit on a slice of real MNIST: training lowers the loss; eval, predict and
# attention work on the checkpoint; --resume continues; bad input exits 2 with a message.
#   bash tests/apps/vit_smoke.sh BUILD/apps/uwaga-vit
set -uo pipefail
bin=$1
root=$(cd "$(dirname "$0")/../.." && pwd)
data=$root/data/cache/mnist
if [[ ! -f $data/t10k-labels-idx1-ubyte ]]; then
  bash "$root/data/fetch.sh" mnist "$data" >/dev/null || { echo "FAIL: could not fetch MNIST"; exit 1; }
fi
source "$(dirname "$0")/smoke_lib.sh"

small=(--data-dir "$data" --train-size 2048 --batch-size 64 --dim 32 --layers 2 --heads 2
       --mlp-dim 64 --warmup 5 --lr 3e-3 --no-augment --log-every 5 --threads 2)

# 1. A few dozen steps lower the loss.
if "$bin" train "${small[@]}" --epochs 1 --max-steps 30 --out "$tmp/run" >"$tmp/train.out" 2>&1; then
  first=$(grep '"type":"step"' "$tmp/run/log.jsonl" | head -1 | grep -o '"loss":[-0-9.e]*' | cut -d: -f2)
  last=$(grep '"type":"step"' "$tmp/run/log.jsonl" | tail -1 | grep -o '"loss":[-0-9.e]*' | cut -d: -f2)
  if awk -v a="$first" -v b="$last" 'BEGIN { exit !(b < a - 0.2) }'; then
    pass "train: loss fell from $first to $last in 30 steps"
  else
    failed "train: loss did not fall enough ($first -> $last)"
  fi
  [[ -f $tmp/run/checkpoint.safetensors ]] && pass "train: checkpoint written" || failed "train: no checkpoint"
else
  failed "train exited with $?"; cat "$tmp/train.out"
fi
grep -q "params" "$tmp/train.out" && grep -q "FLOPs" "$tmp/train.out" && pass "train: summary printed" ||
  failed "train: no summary"
# The optimiser's line is the one every program prints (apps/common/run_summary.h): the batch with
# what it counts, the steps of an epoch, clipping and the seed.
grep -q "^  optimiser AdamW lr 0.003 (warm-up 5 steps, .*, batch 64 images, 1 epochs of 32 steps, .*, clip 1, seed 0$" \
  "$tmp/train.out" && pass "train: the optimiser's line" ||
  failed "train: optimiser line: $(grep optimiser "$tmp/train.out")"
# The end says where the files are and what to run next, naming the program as it was run.
grep -q "^checkpoint: $tmp/run/checkpoint.safetensors" "$tmp/train.out" &&
  grep -q "^curves: *$tmp/run/curves.svg" "$tmp/train.out" && [[ -f $tmp/run/curves.svg ]] &&
  grep -qF "  $bin eval --checkpoint $tmp/run/checkpoint.safetensors --data-dir $data" "$tmp/train.out" &&
  grep -qF "  $bin attention --checkpoint" "$tmp/train.out" &&
  pass "train: ends with the files and the next commands" ||
  failed "train: the end of its output: $(tail -8 "$tmp/train.out")"

ckpt=$tmp/run/checkpoint.safetensors
# 2. eval --json: stdout is one line of JSON holding accuracy and n; the report goes to stderr.
if "$bin" eval --checkpoint "$ckpt" --data-dir "$data" --json >"$tmp/eval.out" 2>"$tmp/eval.err"; then
  /usr/bin/python3 -c 'import json, sys; j = json.load(open(sys.argv[1])); assert j["n"] == 10000 and 0 < j["accuracy"] < 1' "$tmp/eval.out" &&
    [[ $(wc -l <"$tmp/eval.out") -eq 1 ]] &&
    pass "eval --json: stdout is only the JSON, $(grep -o '"accuracy":[0-9.]*' "$tmp/eval.out")" ||
    failed "eval --json: stdout is not one JSON line: $(head -3 "$tmp/eval.out")"
  grep -q "confusion matrix" "$tmp/eval.err" && pass "eval --json: the report on stderr" || failed "eval: no confusion matrix on stderr"
else
  failed "eval exited with $?"; cat "$tmp/eval.out"
fi

# 3. predict on a test image and on a PGM file.
"$bin" predict --checkpoint "$ckpt" --data-dir "$data" --index 0 >"$tmp/predict.out" 2>&1 &&
  grep -q "%" "$tmp/predict.out" && pass "predict --index: $(cat "$tmp/predict.out")" ||
  failed "predict --index: $(cat "$tmp/predict.out")"
{ printf 'P5\n28 28\n255\n'; head -c 784 /dev/zero; } >"$tmp/blank.pgm"
"$bin" predict --checkpoint "$ckpt" "$tmp/blank.pgm" >"$tmp/predict2.out" 2>&1 &&
  grep -q "blank.pgm:" "$tmp/predict2.out" && pass "predict FILE.pgm" || failed "predict FILE.pgm: $(cat "$tmp/predict2.out")"
# --image FILE (as uwaga-pose takes its crop): the same prediction.
"$bin" predict --checkpoint "$ckpt" --image "$tmp/blank.pgm" >"$tmp/predict3.out" 2>&1 &&
  cmp -s "$tmp/predict2.out" "$tmp/predict3.out" && pass "predict --image FILE.pgm: the same as FILE.pgm" ||
  failed "predict --image FILE.pgm: $(cat "$tmp/predict3.out")"

# 4. attention draws an SVG.
"$bin" attention --checkpoint "$ckpt" --data-dir "$data" --index 3 --out "$tmp/att.svg" >"$tmp/att.out" 2>&1 &&
  grep -q "<svg" "$tmp/att.svg" && grep -q "rollout" "$tmp/att.svg" && pass "attention: SVG drawn" ||
  failed "attention: $(cat "$tmp/att.out")"
# --heads: a panel per head and their mean (2 layers x (2 + 1)) and the rollout, each stating the
# class token's weight on itself; one colour scale (a legend) unless --scale says otherwise.
"$bin" attention --checkpoint "$ckpt" --data-dir "$data" --index 3 --heads --out "$tmp/heads.svg" >"$tmp/heads.out" 2>&1 &&
  [[ $(grep -c "on itself [0-9]" "$tmp/heads.svg") -eq 7 ]] && grep -q "layer 2, head 2" "$tmp/heads.svg" &&
  grep -q "one scale for every panel" "$tmp/heads.svg" && pass "attention --heads: 7 panels, a legend" ||
  failed "attention --heads: $(cat "$tmp/heads.out")"
"$bin" attention --checkpoint "$ckpt" --data-dir "$data" --index 3 --scale panel --out "$tmp/panel.svg" >/dev/null 2>&1 &&
  grep -q "each panel its own scale" "$tmp/panel.svg" && pass "attention --scale panel" ||
  failed "attention --scale panel"
# explore writes one self-contained page (tests/apps/explorer_browser.sh loads it in a browser).
"$bin" explore --checkpoint "$ckpt" --data-dir "$data" --index 3 --out "$tmp/explore.html" >"$tmp/explore.out" 2>&1 &&
  grep -q '<script type="application/json" id="explorer-data">' "$tmp/explore.html" &&
  ! grep -q "src=" "$tmp/explore.html" && pass "explore: $(cat "$tmp/explore.out")" ||
  failed "explore: $(cat "$tmp/explore.out")"
# The SVG's title holds the file name: a byte that is not UTF-8 or a control character in it
# must not make the SVG ill-formed XML (it is drawn as U+FFFD).
odd=$tmp/$'odd\xff\x01.pgm'
cp "$tmp/blank.pgm" "$odd"
"$bin" attention --checkpoint "$ckpt" "$odd" --out "$tmp/odd.svg" >"$tmp/odd.out" 2>&1 &&
  /usr/bin/python3 -c 'import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])' "$tmp/odd.svg" &&
  pass "attention: a file name with stray bytes still gives well-formed SVG" ||
  failed "attention with an odd file name: $(cat "$tmp/odd.out")"

# 5. --resume continues to the new step budget on the run's own data (the first 2048 images, 32
# steps an epoch), taking the run's flags again and a second epoch.
if "$bin" train "${small[@]}" --epochs 2 --out "$tmp/run" --resume --max-steps 40 >"$tmp/resume.out" 2>&1; then
  grep -q '"step":40' "$tmp/run/log.jsonl" && pass "resume: continued to step 40" ||
    failed "resume: no step 40 in the log"
  grep -q "2048 training images" "$tmp/resume.out" && pass "resume: trains on the run's 2048 images" ||
    failed "resume: not the run's 2048 training images: $(grep data "$tmp/resume.out")"
else
  failed "resume exited with $?"; cat "$tmp/resume.out"
fi

# 5b. A run whose parameters overflow stops without writing a checkpoint: a learning rate of 1e39
# is inf in float32, so the first update leaves inf in the parameters.
"$bin" train --data-dir "$data" --train-size 256 --batch-size 64 --dim 32 --layers 2 --heads 2 \
  --mlp-dim 64 --epochs 1 --lr 1e39 --warmup 0 --clip 0 --max-steps 1 --threads 1 \
  --out "$tmp/diverged" >"$tmp/diverged.out" 2>&1
status=$?
if [[ $status -eq 1 && ! -f $tmp/diverged/checkpoint.safetensors ]] &&
   grep -q "holds NaN or inf — stopping without saving" "$tmp/diverged.out"; then
  pass "diverged run: exit 1, no checkpoint"
else
  failed "diverged run: exit $status, files: $(ls "$tmp/diverged" 2>/dev/null | tr '\n' ' '); $(tail -1 "$tmp/diverged.out")"
fi

# 6. Bad input: one-line message and exit status 2.

# 5c. A run that trains all its epochs ends its log with a "finished" stop record; `plot` draws it
# beside the run cut short by --max-steps: one path per run in each of the four panels. With
# --eval-every 2 it evaluates only after its second (and last) epoch.
"$bin" train --data-dir "$data" --train-size 256 --batch-size 64 --dim 32 --layers 2 --heads 2 \
  --mlp-dim 64 --epochs 2 --warmup 2 --no-augment --log-every 1 --threads 2 --eval-every 2 \
  --out "$tmp/short" >"$tmp/short.out" 2>&1 || failed "short run exited with $?: $(tail -3 "$tmp/short.out")"
evaluated=$(grep '"type":"epoch"' "$tmp/short/log.jsonl" | grep -o '"epoch":[0-9]*,.*"test_accuracy"' |
            grep -o '^"epoch":[0-9]*' | tr '\n' ' ')
[[ $(grep -c '"type":"epoch"' "$tmp/short/log.jsonl") == 2 && $evaluated == '"epoch":2 ' ]] &&
  grep -q "evaluate  every 2 epochs" "$tmp/short.out" &&
  pass "--eval-every 2: two epochs logged, the test set evaluated after the last only" ||
  failed "--eval-every 2: evaluated epochs '$evaluated'; $(grep -c epoch "$tmp/short/log.jsonl") epoch lines"
tail -1 "$tmp/short/log.jsonl" | grep -q '"reason":"finished"' &&
  pass "a finished run's log ends with: $(tail -1 "$tmp/short/log.jsonl")" ||
  failed "a finished run's last record: $(tail -1 "$tmp/short/log.jsonl")"
if "$bin" plot --run "$tmp/run" --run "$tmp/short" --out "$tmp/curves.svg" >"$tmp/plot.out" 2>&1 &&
   /usr/bin/python3 "$root/tests/apps/check_training_plot.py" "$tmp/curves.svg" 2 >"$tmp/plot.check" 2>&1; then
  pass "plot: two runs, $(cat "$tmp/plot.check")"
else
  failed "plot: $(cat "$tmp/plot.out" "$tmp/plot.check" 2>/dev/null)"
fi
grep -q "short: 8 steps, test accuracy .* at step 8, finished" "$tmp/plot.out" &&
  grep -q "max_steps" "$tmp/plot.out" && pass "plot: says how each run ended" ||
  failed "plot: the runs' summary: $(cat "$tmp/plot.out")"
if grep -q "converted by" "$tmp/plot.out"; then  # a converter is installed: a real PNG
  [[ $(head -c 4 "$tmp/curves.png" | tail -c 3) == PNG ]] && pass "plot: PNG written" ||
    failed "plot: the PNG is not one"
else
  grep -q "no PNG" "$tmp/plot.out" && pass "plot: no converter, says so" || failed "plot: $(cat "$tmp/plot.out")"
fi
"$bin" plot --run "$tmp/short/" --no-png >"$tmp/plot1.out" 2>&1 && [[ -f $tmp/short/curves.svg ]] &&
  pass "plot: one run draws into RUN/curves.svg" || failed "plot: one run: $(cat "$tmp/plot1.out")"
mkdir -p "$tmp/empty-run" "$tmp/text-run"
: >"$tmp/empty-run/log.jsonl"
printf 'epoch 1 loss 0.5\nepoch 2 loss 0.4\n' >"$tmp/text-run/log.jsonl"
expect_error "$tmp/nowhere does not exist" plot --run "$tmp/nowhere"
expect_error "$tmp/empty-run/log.jsonl is empty" plot --run "$tmp/empty-run"
expect_error "$tmp/text-run/log.jsonl line 1 is not a JSON log record" plot --run "$tmp/text-run"
expect_error "$tmp/diverged/log.jsonl holds no step or epoch record" plot --run "$tmp/diverged"
expect_error "--run DIR is required" plot
expect_error "not divisible by heads" train --out "$tmp/bad" --data-dir "$data" --heads 5
expect_error "not divisible by patch" train --out "$tmp/bad" --data-dir "$data" --patch 5
expect_error "unknown dataset" train --out "$tmp/bad" --dataset imagenet
expect_error "unknown preset" train --out "$tmp/bad" --preset huge
expect_error "--eval-every must be at least 1, got 0" train --out "$tmp/bad" --data-dir "$data" --eval-every 0
expect_error "has lr = 0.003 and the flags ask for 0.5" train --out "$tmp/run" --resume --lr 0.5 --data-dir "$data"
expect_error "has train_size = 2048 and the flags ask for 1024" train --out "$tmp/run" --resume --train-size 1024
expect_error "may grow it, not shrink it" train --out "$tmp/run" --resume --epochs 1
expect_error "already holds a run" train "${small[@]}" --out "$tmp/run"
expect_error "--out must name a directory" train "${small[@]}" --out ""
expect_error "--dim is given twice" train --out "$tmp/bad" --dim 32 --dim 64
expect_error "--lr expects a number, got '0.001abc'" train --out "$tmp/bad" --lr 0.001abc
# Values cxxopts itself cannot read: the message names the flag.
expect_error "--epochs expects a whole number, got '1.5'" train --out "$tmp/bad" --epochs 1.5
expect_error "--lr expects a finite number, got 'nan'" train --out "$tmp/bad" --lr=nan
expect_error "--threads expects a number, got 'x'" train --out "$tmp/bad" --threads x
expect_error "--seed is out of range" train --out "$tmp/bad" --seed 99999999999999999999999
expect_error "--train-size 100000 but mnist has 60000" train --out "$tmp/bad" --data-dir "$data" --train-size 100000
expect_error "is a directory, not a checkpoint" eval --checkpoint "$tmp/run"
expect_error "data/fetch.sh mnist" train --out "$tmp/bad" --data-dir "$tmp/nowhere"
expect_error "is required" train
expect_error "not a uwaga checkpoint" eval --checkpoint "$root/tests/golden/linear.safetensors" --data-dir "$data"
expect_error "does not exist" eval --checkpoint "$tmp/missing.safetensors"
# A checkpoint whose run configuration nests arrays 100,000 levels deep in its model (a crafted
# 200 KB file) used to crash with a stack overflow.
/usr/bin/python3 "$root/tests/apps/nest_run_config.py" "$ckpt" "$tmp/deep.safetensors" 100000
expect_error "nests deeper than 64 levels" eval --checkpoint "$tmp/deep.safetensors" --data-dir "$data"
expect_error "nests deeper than 64 levels" predict --checkpoint "$tmp/deep.safetensors" --index 0
expect_error "--scale must be shared, panel or absolute, got 'loud'" attention --checkpoint "$ckpt" --index 0 --out "$tmp/x.svg" --scale loud
expect_error "explore: --out FILE.html is required" explore --checkpoint "$ckpt" --index 0
expect_error "explore: give exactly one image" explore --checkpoint "$ckpt" "$tmp/blank.pgm" "$tmp/blank.pgm" --out "$tmp/x.html"
expect_error "without --index they have nothing to do" predict --checkpoint "$ckpt" --data-dir "$data" "$tmp/blank.pgm"
expect_error "unknown mode" fly
expect_error "Option" train --out "$tmp/bad" --no-such-flag
expect_error "not a PGM or PPM" predict --checkpoint "$ckpt" "$root/tests/golden/linear.safetensors"
# A PNG: the message says how to convert it (size, gray, MNIST's polarity).
printf '\x89PNG\r\n\x1a\n\0\0\0\rIHDR' >"$tmp/digit.png"
expect_error "convert photo.png -colorspace Gray -resize '28x28!' -negate image.pgm" predict --checkpoint "$ckpt" "$tmp/digit.png"
# More threads than cores: one warning on stderr, and the command still works.
cores=$(nproc)
"$bin" predict --checkpoint "$ckpt" "$tmp/blank.pgm" --threads $((cores + 3)) >/dev/null 2>"$tmp/threads.err"
[[ $? -eq 0 && $(grep -c "warning: --threads $((cores + 3)) but only $cores core" "$tmp/threads.err") -eq 1 ]] &&
  pass "--threads above the cores: $(cat "$tmp/threads.err")" || failed "--threads above the cores: $(cat "$tmp/threads.err")"
# cmake --install puts the programs in PREFIX/bin.
build=$(cd "$(dirname "$bin")/.." && pwd)
if [[ -f $build/cmake_install.cmake ]]; then
  cmake --install "$build" --prefix "$tmp/prefix" >"$tmp/install.out" 2>&1 &&
    "$tmp/prefix/bin/uwaga-vit" --help >"$tmp/installed.out" && grep -q "plot" "$tmp/installed.out" &&
    pass "cmake --install: PREFIX/bin/uwaga-vit runs" ||
    failed "cmake --install: $(cat "$tmp/install.out")"
fi
{ printf 'P5\n32 32\n255\n'; head -c 1024 /dev/zero; } >"$tmp/big.pgm"
expect_error "the model expects 1x28x28" predict --checkpoint "$ckpt" "$tmp/big.pgm"
# A training set smaller than one batch: the message names both flags that can fix it.
expect_error "fewer than one batch of 128; lower --batch-size or raise --train-size" \
  train --out "$tmp/bad" --data-dir "$data" --train-size 100
# A dataset directory whose files hold no images: the file is named.
mkdir -p "$tmp/empty"
printf '\0\0\x08\x03\0\0\0\0\0\0\0\x1c\0\0\0\x1c' >"$tmp/empty/t10k-images-idx3-ubyte"
printf '\0\0\x08\x01\0\0\0\0' >"$tmp/empty/t10k-labels-idx1-ubyte"
expect_error "t10k-images-idx3-ubyte: holds no images" eval --checkpoint "$ckpt" --data-dir "$tmp/empty"
# A 16-bit PGM (maximum value 65535, two bytes a sample) is read, not refused.
{ printf 'P5\n28 28\n65535\n'; head -c 1568 /dev/zero; } >"$tmp/deep.pgm"
"$bin" predict --checkpoint "$ckpt" "$tmp/deep.pgm" >"$tmp/predict3.out" 2>&1 &&
  grep -q "deep.pgm:" "$tmp/predict3.out" && pass "predict 16-bit FILE.pgm" ||
  failed "predict 16-bit FILE.pgm: $(cat "$tmp/predict3.out")"
expect_error "--checkpoint is given twice" predict --checkpoint "$ckpt" --checkpoint "$ckpt" --index 0
expect_error "no such file" predict --checkpoint "$ckpt" "$tmp/a,b.pgm"
expect_error "Option" attention --checkpoint "$ckpt" --index 0 --no-such-flag
# The augmentation picture and the recipe's flags.
# The SVG is XML whose one <image> holds a PNG of the size it is drawn at, with a name per row.
"$bin" augment --dataset mnist --data-dir "$data" --index 3 --out "$tmp/grid.svg" >"$tmp/augment.out" 2>&1 &&
  /usr/bin/python3 - "$tmp/grid.svg" >"$tmp/grid.check" 2>&1 <<'PY' && pass "augment --out grid.svg: $(cat "$tmp/grid.check")" ||
import base64, struct, sys, xml.etree.ElementTree as ET
svg = ET.parse(sys.argv[1]).getroot()
ns = "{http://www.w3.org/2000/svg}"
(image,) = svg.iter(ns + "image")
png = base64.b64decode(image.get("{http://www.w3.org/1999/xlink}href").split(",", 1)[1])
assert png[:8] == b"\x89PNG\r\n\x1a\n", png[:8]
width, height = struct.unpack(">II", png[16:24])
assert (width, height) == (int(image.get("width")), int(image.get("height"))), (width, height)
texts = [t.text for t in svg.iter(ns + "text")]
assert "Equalize" in texts and "RandAugment 2x9" in texts and "original" in texts, texts
assert "AutoAugment CIFAR-10" in texts, texts
print(f"a {width}x{height} PNG, {len(texts)} labels")
PY
  failed "augment --out grid.svg: $(cat "$tmp/augment.out" "$tmp/grid.check" 2>/dev/null)"
"$bin" augment --dataset mnist --data-dir "$data" --index 3 --out "$tmp/grid.png" >"$tmp/augment.out" 2>&1 &&
  [[ $(head -c 4 "$tmp/grid.png" | tail -c 3) == PNG ]] && pass "augment --out grid.png" ||
  failed "augment --out grid.png: $(cat "$tmp/augment.out")"
expect_error "--out must end in .svg or .png" augment --dataset mnist --data-dir "$data" --out "$tmp/grid.txt"
expect_error "--index 70000 is outside 0 .. 59999" augment --dataset mnist --data-dir "$data" --index 70000 --out "$tmp/g.svg"
# The picture's own flags are named before any dataset is read (here: none where it points).
expect_error "--space must be randaugment or trivialaugment, got 'wide'" augment --data-dir "$tmp/no-data" --space wide --out "$tmp/g.svg"
expect_error "--out must end in .svg or .png" augment --data-dir "$tmp/no-data" --out "$tmp/grid.bmp"
expect_error "--index must be at least 0, got -3" augment --data-dir "$tmp/no-data" --index -3 --out "$tmp/g.svg"
expect_error "--time must be from 1 to 100,000 batches, got 0" augment --data-dir "$tmp/no-data" --time 0
expect_error "'augmix' is not a policy" augment --data-dir "$tmp/no-data" --time 2 --policy augmix
expect_error "'augmix' is not a policy" train --out "$tmp/bad" --data-dir "$data" --policy augmix
expect_error "--drop-path must be in [0, 1)" train --out "$tmp/bad" --data-dir "$data" --drop-path 1
expect_error "--dropout must be in [0, 1)" train --out "$tmp/bad" --data-dir "$data" --dropout 1
expect_error "--attention-dropout must be in [0, 1)" train --out "$tmp/bad" --data-dir "$data" --attention-dropout 1
expect_error "--ema must be in [0, 1)" train --out "$tmp/bad" --data-dir "$data" --ema 2
# A conv stem in place of the patch embedding: it trains, says so, and its checkpoint evaluates.
if "$bin" train "${small[@]}" --patch 4 --stem conv --epochs 1 --max-steps 5 --out "$tmp/stem" \
     >"$tmp/stem.out" 2>&1 && grep -q "mlp 64, conv stem" "$tmp/stem.out" &&
   grep -q "49 grid cells of the stem's 16 channels" "$tmp/stem.out" &&
   "$bin" eval --checkpoint "$tmp/stem/checkpoint.safetensors" --data-dir "$data" --json \
     >"$tmp/stem.json" 2>/dev/null && grep -q '"accuracy"' "$tmp/stem.json"; then
  pass "train --stem conv: trains, and eval reads its checkpoint"
else
  failed "train --stem conv: $(tail -5 "$tmp/stem.out" 2>/dev/null) $(cat "$tmp/stem.json" 2>/dev/null)"
fi
expect_error "--stem must be patch, conv or cct, got 'pixels'" train --out "$tmp/bad" --data-dir "$data" --stem pixels
expect_error "--pool must be cls or seq, got 'mean'" train --out "$tmp/bad" --data-dir "$data" --pool mean
expect_error "--cct-details needs --stem cct --pool seq, got --stem patch --pool cls" train --out "$tmp/bad" --data-dir "$data" --cct-details
# CCT's own model (no Linear after the tokenizer, no qkv bias, LN between the branches): it
# trains, says so, and its checkpoint evaluates.
if "$bin" train "${small[@]}" --patch 4 --stem cct --pool seq --cct-details --epochs 1 \
     --max-steps 5 --out "$tmp/cct-details" >"$tmp/cct-details.out" 2>&1 &&
   grep -q "mlp 64, cct stem, CCT's details" "$tmp/cct-details.out" &&
   "$bin" eval --checkpoint "$tmp/cct-details/checkpoint.safetensors" --data-dir "$data" --json \
     >"$tmp/cct-details.json" 2>/dev/null && grep -q '"accuracy"' "$tmp/cct-details.json"; then
  pass "train --cct-details: trains, and eval reads its checkpoint"
else
  failed "train --cct-details: $(tail -5 "$tmp/cct-details.out" 2>/dev/null) $(cat "$tmp/cct-details.json" 2>/dev/null)"
fi
# CCT's tokenizer and sequence pooling: it trains, says so, and its checkpoint evaluates.
if "$bin" train "${small[@]}" --patch 4 --stem cct --pool seq --epochs 1 --max-steps 5 \
     --out "$tmp/cct" >"$tmp/cct.out" 2>&1 && grep -q "mlp 64, cct stem" "$tmp/cct.out" &&
   grep -q "49 grid cells of the stem's 32 channels (sequence pooling) = 49" "$tmp/cct.out" &&
   "$bin" eval --checkpoint "$tmp/cct/checkpoint.safetensors" --data-dir "$data" --json \
     >"$tmp/cct.json" 2>/dev/null && grep -q '"accuracy"' "$tmp/cct.json"; then
  pass "train --stem cct --pool seq: trains, and eval reads its checkpoint"
  if "$bin" eval --checkpoint "$tmp/cct/checkpoint.safetensors" --data-dir "$data" --tta flip \
       --json >"$tmp/cct-tta.json" 2>"$tmp/cct-tta.err" && grep -q '"tta":"flip"' "$tmp/cct-tta.json" &&
     grep -q "each image averaged with its mirror image" "$tmp/cct-tta.err"; then
    pass "eval --tta flip: says so, in the report and the JSON"
  else
    failed "eval --tta flip: $(tail -3 "$tmp/cct-tta.err")"
  fi
  expect_error "eval: --tta must be none or flip, got 'crop'" eval \
    --checkpoint "$tmp/cct/checkpoint.safetensors" --data-dir "$data" --tta crop
  # No class token: attention draws the pooling weights and the rows they weigh, explore the
  # patches' rows.
  if "$bin" attention --checkpoint "$tmp/cct/checkpoint.safetensors" --data-dir "$data" --index 0 \
       --heads --out "$tmp/cct.svg" >"$tmp/cct-attention.out" 2>&1 &&
     grep -q "pooling weights a" "$tmp/cct.svg" && grep -q "where the pooled tokens look" "$tmp/cct.svg" &&
     ! grep -q "on itself" "$tmp/cct.svg" &&
     "$bin" explore --checkpoint "$tmp/cct/checkpoint.safetensors" --data-dir "$data" --index 0 \
       --out "$tmp/cct.html" >>"$tmp/cct-attention.out" 2>&1 &&
     grep -q "sequence pooling" "$tmp/cct.html"; then
    pass "attention and explore draw a model without a class token"
  else
    failed "attention/explore of a sequence-pooling model: $(tail -3 "$tmp/cct-attention.out")"
  fi
else
  failed "train --stem cct --pool seq: $(tail -5 "$tmp/cct.out" 2>/dev/null) $(cat "$tmp/cct.json" 2>/dev/null)"
fi
expect_error "patch 7 must be a power of 2" train --out "$tmp/bad" --data-dir "$data" --stem conv
if [[ $failures -eq 0 ]]; then echo "vit smoke test: all checks passed"; exit 0; fi
echo "vit smoke test: $failures check(s) failed"; exit 1
