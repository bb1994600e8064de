#!/usr/bin/env bash
# Smoke test of uwaga-pose on synthetic stick figures (nothing to fetch): twenty steps of the
# "smoke" preset lower the loss; --resume continues; eval --json prints one line of JSON with the
# model's and the baselines' scores; predict and attention draw SVGs for a validation sample and
# for a PGM file; plot draws the curves; a tiny COCO file trains, evaluates and predicts; bad input
# exits 2 with a one-line message naming the flag or the file.
#   bash tests/apps/pose_smoke.sh BUILD/apps/uwaga-pose
set -uo pipefail
bin=$1
source "$(dirname "$0")/smoke_lib.sh"

# 1. Twenty steps (two epochs of ten) lower the loss and write a checkpoint.
if "$bin" train --preset smoke --threads 2 --log-every 5 --out "$tmp/run" >"$tmp/train.out" 2>&1; then
  first=$(step_loss first)
  last=$(step_loss last)
  awk -v a="$first" -v b="$last" 'BEGIN { exit !(b < 0.95 * a) }' &&
    pass "train: loss fell from $first to $last in 20 steps" || failed "train: loss did not fall enough ($first -> $last)"
  [[ -f $tmp/run/checkpoint.safetensors ]] && pass "train: checkpoint written" || failed "train: no checkpoint"
  grep -q "params" "$tmp/train.out" && grep -q "classic" "$tmp/train.out" &&
    pass "train: summary printed" || failed "train: no summary"
  grep -q '"valid_pck"' "$tmp/run/log.jsonl" && grep -q '"valid_ap"' "$tmp/run/log.jsonl" &&
    pass "train: the epochs log the validation PCK and AP" || failed "train: no valid_pck or valid_ap in the log"
else
  failed "train exited with $?"; cat "$tmp/train.out"
fi
ckpt=$tmp/run/checkpoint.safetensors

# 2. --resume continues to more epochs.
if "$bin" train --out "$tmp/run" --resume --epochs 3 --threads 2 --log-every 5 >"$tmp/resume.out" 2>&1; then
  grep -q '"type":"resume"' "$tmp/run/log.jsonl" && grep -q '"step":30' "$tmp/run/log.jsonl" &&
    pass "resume: continued from step 20 to 30" || failed "resume: no resume record or step 30 in the log"
else
  failed "resume exited with $?"; cat "$tmp/resume.out"
fi

# 3. eval --json: stdout is one line of JSON, the scores in range, the model above the baselines'
# shapes (all present).
if "$bin" eval --checkpoint "$ckpt" --json >"$tmp/eval.out" 2>"$tmp/eval.err"; then
  json=$(cat "$tmp/eval.out")
  python3 -c 'import json, sys
j = json.loads(sys.argv[1])
assert j["n"] == 32 and j["loss"] > 0, j
for who in ("model", "mean_pose", "brightest_pixel"):
    s = j[who]
    assert 0 <= s["pck"] <= 1 and -1 <= s["ap"] <= 1 and "ap50" in s and "ap75" in s, (who, s)' "$json" &&
    [[ $(wc -l <"$tmp/eval.out") -eq 1 ]] && grep -q "brightest pixel" "$tmp/eval.err" &&
    pass "eval --json: $json" || failed "eval --json: stdout is not the expected JSON line: $json"
else
  failed "eval exited with $?"; cat "$tmp/eval.err"
fi

# 4. predict and attention draw SVGs; a PGM file of the input size works too.
if "$bin" predict --checkpoint "$ckpt" --index 1 --out "$tmp/predict.svg" >"$tmp/predict.out" 2>&1; then
  [[ $(grep -cE "^  [a-z_]+ +[0-9.-]+ +[0-9.-]+ +[0-9.]+ " "$tmp/predict.out") -eq 15 ]] &&
    grep -q "<svg" "$tmp/predict.svg" && grep -q 'id="heatmap-left_wrist"' "$tmp/predict.svg" &&
    pass "predict: 15 joints printed, skeleton and heatmaps drawn" || { failed "predict: output"; cat "$tmp/predict.out"; }
else
  failed "predict exited with $?"; cat "$tmp/predict.out"
fi
if "$bin" attention --checkpoint "$ckpt" --index 1 --joint left_wrist --out "$tmp/attention.svg" >"$tmp/attention.out" 2>&1; then
  grep -q "<svg" "$tmp/attention.svg" && grep -q "head 2" "$tmp/attention.svg" &&
    pass "attention: $(cat "$tmp/attention.out")" || failed "attention: no SVG"
else
  failed "attention exited with $?"; cat "$tmp/attention.out"
fi
python3 -c 'import sys
w, h = 48, 64
pixels = bytes((255 if abs(x - 24) < 2 and 10 < y < 50 else 20) for y in range(h) for x in range(w))
open(sys.argv[1], "wb").write(b"P5\n%d %d\n255\n" % (w, h) + pixels)
open(sys.argv[2], "wb").write(b"P5\n%d %d\n255\n" % (h, w) + pixels)' "$tmp/crop.pgm" "$tmp/wrong.pgm"
"$bin" predict --checkpoint "$ckpt" --image "$tmp/crop.pgm" --out "$tmp/file.svg" >"$tmp/file.out" 2>&1 &&
  grep -q "<svg" "$tmp/file.svg" && pass "predict: a PGM file of 48x64" || { failed "predict --image"; cat "$tmp/file.out"; }
# The file alone, without --image (as uwaga-vit takes its images): the same prediction.
"$bin" predict --checkpoint "$ckpt" "$tmp/crop.pgm" --out "$tmp/file2.svg" >"$tmp/file2.out" 2>&1 &&
  cmp -s "$tmp/file.svg" "$tmp/file2.svg" && cmp -s "$tmp/file.out" <(sed "s|file2.svg|file.svg|" "$tmp/file2.out") &&
  pass "predict FILE.pgm: the same as --image FILE.pgm" || { failed "predict FILE.pgm"; cat "$tmp/file2.out"; }

"$bin" explore --checkpoint "$ckpt" --index 1 --out "$tmp/explorer.html" >"$tmp/explore.out" 2>&1 &&
  grep -q 'id="explorer-data"' "$tmp/explorer.html" && grep -q "left_wrist (patch" "$tmp/explorer.html" &&
  pass "explore: the page names the tokens under the joints" || { failed "explore"; cat "$tmp/explore.out"; }

# 5. plot draws the curves of the run.
"$bin" plot --run "$tmp/run" --out "$tmp/curves.svg" --no-png >"$tmp/plot.out" 2>&1 &&
  grep -q "<svg" "$tmp/curves.svg" && pass "plot: curves drawn" || { failed "plot"; cat "$tmp/plot.out"; }

# 6. COCO keypoints: a tiny person_keypoints file (coco_fixture: 3 photos of 96x72, 6 persons, the
# last 2 held out) trains, evaluates and predicts on colour crops with COCO's 17 joints.
coco=$(dirname "$0")/coco_fixture
if "$bin" train --preset smoke --dataset coco --coco-annotations "$coco/person_keypoints.json" \
     --data-dir "$coco/images" --valid-size 2 --batch-size 2 --threads 2 --out "$tmp/coco" \
     >"$tmp/coco.out" 2>&1 &&
   "$bin" eval --checkpoint "$tmp/coco/checkpoint.safetensors" --json >"$tmp/coco-eval.out" 2>&1 &&
   "$bin" predict --checkpoint "$tmp/coco/checkpoint.safetensors" --index 1 \
     --out "$tmp/coco.svg" >"$tmp/coco-predict.out" 2>&1; then
  grep -q "4 persons for training, the last 2 for validation" "$tmp/coco.out" &&
    grep -q '"n":2' "$tmp/coco-eval.out" && grep -q "left_ankle" "$tmp/coco-predict.out" &&
    pass "coco: trained on 4 persons, evaluated on 2, predicted 17 joints" || failed "coco: output"
else
  failed "coco exited with $?"; cat "$tmp/coco.out" "$tmp/coco-eval.out" "$tmp/coco-predict.out"
fi

# 6b. The COCO files are recorded by their absolute paths: a run given relative ones resumes from
# another directory, and the same files named by their absolute paths are the same setting (they
# were recorded as typed: the resume found no file, and the absolute paths were "changed").
rel=$(realpath --relative-to=. "$coco") abs=$(realpath "$coco") program=$(realpath "$bin")
if "$bin" train --preset smoke --dataset coco --coco-annotations "$rel/person_keypoints.json" \
     --data-dir "$rel/images" --valid-size 2 --batch-size 2 --threads 2 --out "$tmp/coco-rel" \
     >"$tmp/coco-rel1.out" 2>&1 &&
   (cd "$tmp" && "$program" train --out coco-rel --resume --epochs 3 --threads 2) >"$tmp/coco-rel2.out" 2>&1 &&
   "$bin" train --out "$tmp/coco-rel" --resume --epochs 4 --threads 2 --data-dir "$abs/images" \
     --coco-annotations "$abs/person_keypoints.json" >"$tmp/coco-rel3.out" 2>&1 &&
   (cd "$tmp" && "$program" eval --checkpoint coco-rel/checkpoint.safetensors) >"$tmp/coco-rel4.out" 2>&1; then
  grep -q '"step":8' "$tmp/coco-rel/log.jsonl" &&
    pass "coco: relative paths recorded absolute; resumed from another directory and by absolute paths" ||
    failed "coco: no step 8 after two resumes"
else
  failed "coco with relative paths: $(tail -n 1 "$(ls -t "$tmp"/coco-rel?.out | head -n 1)")"
fi

# 7. Bad input: exit 2, one line naming the flag, the file or the value.
expect_error "unknown preset" train --preset nope --out "$tmp/r1"
expect_error "unknown decoder 'fancy'" train --preset smoke --decoder fancy --out "$tmp/r2"
expect_error "--sigma" train --preset smoke --sigma 0 --out "$tmp/r3"
expect_error "--coco-annotations" train --preset smoke --dataset coco --out "$tmp/r4"
expect_error "not divisible by patch 5" train --preset smoke --patch 5 --out "$tmp/r5"
expect_error "--threads" train --preset smoke --threads 0 --out "$tmp/r6"
expect_error "--flip with stick figures" train --preset smoke --flip --out "$tmp/r9"
expect_error "model.dim = 32" train --out "$tmp/run" --resume --dim 64
expect_error "already holds a run" train --preset smoke --out "$tmp/run"
expect_error "--joint 'nose'" attention --checkpoint "$ckpt" --index 0 --joint nose --out "$tmp/a.svg"
expect_error "--index 99 is out of range" predict --checkpoint "$ckpt" --index 99 --out "$tmp/p.svg"
expect_error "--out" predict --checkpoint "$ckpt" --index 0
expect_error "--image FILE.pgm or --index N" predict --checkpoint "$ckpt" --out "$tmp/p.svg"
expect_error "is 1x48x64 but the model reads 1x64x48" predict --checkpoint "$ckpt" --image "$tmp/wrong.pgm" --out "$tmp/p.svg"
expect_error "--coco-annotations and --data-dir are for --dataset coco" eval --checkpoint "$ckpt" --data-dir "$tmp"
expect_error "with --image they have nothing to do" predict --checkpoint "$ckpt" --image "$tmp/crop.pgm" --data-dir "$tmp" --out "$tmp/p.svg"
expect_error "missing.safetensors' does not exist" eval --checkpoint "$tmp/missing.safetensors"
expect_error "--valid-size 6 holds out every one of the 6 persons" train --preset smoke --dataset coco \
  --coco-annotations "$coco/person_keypoints.json" --data-dir "$coco/images" --valid-size 6 --out "$tmp/r7"
expect_error "no-such-dir" train --preset smoke --dataset coco \
  --coco-annotations "$coco/person_keypoints.json" --data-dir "$tmp/no-such-dir" --out "$tmp/r8"

if ((failures)); then echo "$failures failure(s)"; exit 1; fi
echo "all passed"
