#!/usr/bin/env bash
# Smoke test of uwaga-translate on the toy English -> Spanish corpus (generated, nothing to
# fetch): a few dozen steps of the "tiny" preset lower the loss; --resume continues (and, with
# dropout and replicas, lands where an uninterrupted run does); eval --json
# ends with a JSON line; translate handles unknown words, stdin and --attention; --beam 1 equals
# greedy; bad input exits 2 with a one-line message.
#   bash tests/apps/translate_smoke.sh BUILD/apps/uwaga-translate
set -uo pipefail
bin=$1
source "$(dirname "$0")/smoke_lib.sh"

# 1. A few dozen steps lower the loss, and write a checkpoint.
if "$bin" train --preset tiny --max-steps 30 --log-every 5 --out "$tmp/run" >"$tmp/train.out" 2>&1; then
  first=$(step_loss first)
  last=$(step_loss last)
  if awk -v a="$first" -v b="$last" 'BEGIN { exit !(b < a - 0.5) }'; then
    pass "train: loss fell from $first to $last in 30 steps"
  else
    failed "train: loss did not fall enough ($first -> $last)"
  fi
  [[ -f $tmp/run/checkpoint.safetensors ]] && pass "train: checkpoint written" || failed "train: no checkpoint"
  grep -q "params" "$tmp/train.out" && pass "train: summary printed" || failed "train: no summary"
  grep -qF "  $bin eval --checkpoint $tmp/run/checkpoint.safetensors" "$tmp/train.out" &&
    grep -qF "  $bin translate --checkpoint" "$tmp/train.out" && grep -q "^log: *$tmp/run/log.jsonl" "$tmp/train.out" &&
    pass "train: ends with the files and the next commands, as the program was run" ||
    failed "train: the end of its output: $(tail -8 "$tmp/train.out")"
else
  failed "train exited with $?"; cat "$tmp/train.out"
fi
ckpt=$tmp/run/checkpoint.safetensors

# 2. --resume continues to the new step budget.
if "$bin" train --out "$tmp/run" --resume --max-steps 40 --log-every 5 >"$tmp/resume.out" 2>&1; then
  grep -q '"type":"resume"' "$tmp/run/log.jsonl" && grep -q '"step":40' "$tmp/run/log.jsonl" &&
    pass "resume: continued from step 30 to 40" || failed "resume: no resume record or step 40 in the log"
else
  failed "resume exited with $?"; cat "$tmp/resume.out"
fi

# 2a. --precision bf16 through the readable attention path (encoder, decoder and cross-attention
# products in bfloat16 where the CPU has AVX512-BF16): it learns, and the checkpoint records it.
if "$bin" train --preset tiny --max-steps 30 --log-every 5 --precision bf16 --attention reference \
     --out "$tmp/bf16" >"$tmp/bf16.out" 2>&1; then
  losses=$(grep '"type":"step"' "$tmp/bf16/log.jsonl" | grep -o '"loss":[-0-9.e]*' | cut -d: -f2)
  if awk -v a="$(head -1 <<<"$losses")" -v b="$(tail -1 <<<"$losses")" 'BEGIN { exit !(b < a - 0.5) }' &&
     grep -aq '\\"precision\\":\\"bf16\\"' "$tmp/bf16/checkpoint.safetensors"; then
    pass "train --precision bf16 --attention reference: the loss fell, the checkpoint records bf16"
  else
    failed "train --precision bf16: losses $(tr '\n' ' ' <<<"$losses"), or no precision in the checkpoint"
  fi
else
  failed "train --precision bf16 exited with $?"; cat "$tmp/bf16.out"
fi

# 2b. With dropout and two replicas, 20 steps + --resume to 40 end where 40 straight steps do:
# the dropout masks come from the task's saved seed generator, whichever replica draws them. The
# resumed run is given its flags again, as a user repeating the command would.
loss_at_40() { grep '"type":"step"' "$1/log.jsonl" | grep '"step":40,' | grep -o '"loss":[-0-9.e]*' | cut -d: -f2; }
common=(--preset tiny --dropout 0.1 --threads 2 --micro-batch 8 --log-every 10)
if "$bin" train "${common[@]}" --max-steps 40 --out "$tmp/straight" >/dev/null 2>&1 &&
   "$bin" train "${common[@]}" --max-steps 20 --out "$tmp/split" >/dev/null 2>&1 &&
   "$bin" train "${common[@]}" --out "$tmp/split" --resume --max-steps 40 >/dev/null 2>&1; then
  a=$(loss_at_40 "$tmp/straight")
  b=$(loss_at_40 "$tmp/split")
  [[ -n $a && $a == "$b" ]] && pass "resume: step 40's loss $a equals the uninterrupted run's" ||
    failed "resume with dropout and replicas: step 40's loss '$b' differs from '$a'"
else
  failed "the dropout/replica runs for the resume check failed"
fi

# 2b'. SIGTERM (as Ctrl-C; a background job ignores SIGINT): the resume command printed names the
# program as it was run.
"$bin" train --preset tiny --epochs 100000 --log-every 1 --out "$tmp/int" >"$tmp/int.out" 2>&1 &
pid=$!
for _ in $(seq 100); do grep -q '"type":"step"' "$tmp/int/log.jsonl" 2>/dev/null && break; sleep 0.2; done
kill -TERM "$pid"
wait "$pid"
status=$?
[[ $status -eq 130 ]] && grep -qF "To continue: $bin train --out $tmp/int --resume" "$tmp/int.out" &&
  pass "SIGTERM: exit 130, resume hint names $bin" ||
  failed "SIGTERM: status $status, $(tail -2 "$tmp/int.out")"

# 2c. plot draws both runs' curves: one path per run in each of the four panels.
root=$(cd "$(dirname "$0")/../.." && pwd)
if "$bin" plot --run "$tmp/run" --run "$tmp/straight" --out "$tmp/curves.svg" --no-png >"$tmp/plot.out" 2>&1 &&
   /usr/bin/python3 "$root/tests/apps/check_training_plot.py" "$tmp/curves.svg" 2 >"$tmp/plot.check" 2>&1; then
  pass "plot: two runs, $(cat "$tmp/plot.check")"
else
  failed "plot: $(cat "$tmp/plot.out" "$tmp/plot.check" 2>/dev/null)"
fi
printf '{"type":"start"}\nnot json\n' >"$tmp/notjson.jsonl"
"$bin" plot --run "$tmp/notjson.jsonl" >"$tmp/plot.err" 2>&1
[[ $? -eq 2 ]] && grep -q "$tmp/notjson.jsonl holds no step or epoch record" "$tmp/plot.err" &&
  pass "plot: a log without steps is refused: $(cat "$tmp/plot.err")" ||
  failed "plot: a log without steps: $(cat "$tmp/plot.err")"

# 3. eval --json: the last line of stdout is a JSON object with exact_match and bleu in [0, 1].
if "$bin" eval --checkpoint "$ckpt" --json >"$tmp/eval.out" 2>"$tmp/eval.err"; then
  json=$(tail -1 "$tmp/eval.out")
  [[ $(wc -l <"$tmp/eval.out") -eq 1 ]] && grep -q "BLEU-4" "$tmp/eval.err" &&
    pass "eval --json: stdout is only the JSON, the report on stderr" ||
    failed "eval --json: stdout: $(head -3 "$tmp/eval.out")"
  if command -v python3 >/dev/null; then
    python3 -c 'import json, sys
j = json.loads(sys.argv[1])
assert 0 <= j["exact_match"] <= 1 and 0 <= j["bleu"] <= 1 and j["n"] == 100, j' "$json" &&
      pass "eval --json: $json" || failed "eval --json: last line is not the expected JSON: $json"
  else
    [[ $json =~ \"bleu\":[0-9.e-]+ && $json =~ \"exact_match\":[0-9.e-]+ ]] &&
      pass "eval --json: $json" || failed "eval --json: last line is not the expected JSON: $json"
  fi
else
  failed "eval exited with $?"; cat "$tmp/eval.out" "$tmp/eval.err"
fi

# 4. Unknown words are reported on stderr, marked in the sentence as read, and read as <unk>; one
# line out per sentence; the exit status is 3 unless --allow-unknown.
"$bin" translate --checkpoint "$ckpt" "the zebra eats bread" "we are eating bread" \
    >"$tmp/unk.out" 2>"$tmp/unk.err"
status=$?
if [[ $status -eq 3 && $(wc -l <"$tmp/unk.out") -eq 2 ]] &&
   grep -q "'zebra' is not in the English vocabulary" "$tmp/unk.err" &&
   grep -qF "read as: the [zebra] eats bread" "$tmp/unk.err"; then
  pass "translate: unknown word marked, exit 3 ($(grep "read as" "$tmp/unk.err"))"
else
  failed "translate: unknown word: status $status, stdout $(cat "$tmp/unk.out") / stderr $(cat "$tmp/unk.err")"
fi
"$bin" translate --checkpoint "$ckpt" --allow-unknown "the zebra eats bread" >/dev/null 2>&1 &&
  pass "translate --allow-unknown: exit 0" || failed "translate --allow-unknown exited with $?"
"$bin" vocab --checkpoint "$ckpt" >"$tmp/vocab.out" 2>&1 &&
  grep -q "^English: [0-9]* words" "$tmp/vocab.out" && grep -q "^Spanish: [0-9]* words" "$tmp/vocab.out" &&
  grep -qw "bread" "$tmp/vocab.out" && grep -qw "pan" "$tmp/vocab.out" && ! grep -qw "zebra" "$tmp/vocab.out" &&
  pass "vocab: $(grep words "$tmp/vocab.out" | tr '\n' ' ')" || failed "vocab: $(head -5 "$tmp/vocab.out")"
"$bin" vocab --checkpoint "$ckpt" --language es >"$tmp/vocab_es.out" 2>&1 && ! grep -q English "$tmp/vocab_es.out" &&
  pass "vocab --language es: only Spanish" || failed "vocab --language es: $(head -3 "$tmp/vocab_es.out")"

# 4b. A contraction ("don't": two unknown words, the negation lost) is explained once.
"$bin" translate --checkpoint "$ckpt" "we don't eat bread" >/dev/null 2>"$tmp/contraction.err"
[[ $(grep -c "write them out" "$tmp/contraction.err") -eq 1 ]] &&
  pass "translate: contractions explained ($(tail -1 "$tmp/contraction.err"))" ||
  failed "translate: contraction: $(cat "$tmp/contraction.err")"

# 5. Greedy and --beam 1 give identical output; stdin gives one line per line.
sentences=("we are eating bread" "my mother is cooking the fish in the kitchen" "i do not have a car"
           "they sleep" "xyzzy plugh")
printf '%s\n' "${sentences[@]}" >"$tmp/in.txt"
"$bin" translate --checkpoint "$ckpt" "${sentences[@]}" >"$tmp/greedy.out" 2>/dev/null
"$bin" translate --checkpoint "$ckpt" --beam 1 <"$tmp/in.txt" >"$tmp/beam1.out" 2>/dev/null
if [[ $(wc -l <"$tmp/greedy.out") -eq 5 ]] && cmp -s "$tmp/greedy.out" "$tmp/beam1.out"; then
  pass "translate: --beam 1 (stdin) equals greedy (arguments) on 5 sentences"
else
  failed "translate: greedy and --beam 1 differ: $(paste -d'|' "$tmp/greedy.out" "$tmp/beam1.out")"
fi
"$bin" translate --checkpoint "$ckpt" --beam 3 "we are eating bread" >"$tmp/beam3.out" 2>&1 &&
  pass "translate --beam 3: $(cat "$tmp/beam3.out")" || failed "translate --beam 3: $(cat "$tmp/beam3.out")"
"$bin" translate --checkpoint "$ckpt" --beam 3 --length-penalty 1 "we are eating bread" >"$tmp/lp.out" 2>&1 &&
  pass "translate --beam 3 --length-penalty 1: $(cat "$tmp/lp.out")" ||
  failed "translate --length-penalty 1: $(cat "$tmp/lp.out")"

# 6. Long or empty input: bounded output, no crash.
long=$(printf 'bread %.0s' {1..100})
if "$bin" translate --checkpoint "$ckpt" "$long" "" "!!!" >"$tmp/long.out" 2>"$tmp/long.err"; then
  words=$(head -1 "$tmp/long.out" | wc -w)
  [[ $(wc -l <"$tmp/long.out") -eq 3 && $words -le 32 ]] &&
    pass "translate: 100-word input truncated, output bounded ($words words)" ||
    failed "translate: long input: $(cat "$tmp/long.out" "$tmp/long.err")"
else
  failed "translate: long input exited with $?: $(cat "$tmp/long.err")"
fi

# 7. --attention draws the cross-attention as SVG, with the source words on it.
if "$bin" translate --checkpoint "$ckpt" "we are eating bread" --attention "$tmp/att.svg" \
    >"$tmp/att.out" 2>"$tmp/att.err"; then
  grep -q "<svg" "$tmp/att.svg" && grep -q ">bread<" "$tmp/att.svg" && grep -q "layer 1, head 2" "$tmp/att.svg" &&
    grep -q "attends most to" "$tmp/att.err" && pass "translate --attention: SVG drawn" ||
    failed "translate --attention: $(cat "$tmp/att.err")"
else
  failed "translate --attention exited with $?: $(cat "$tmp/att.err")"
fi

# 7a. explore: one page with the cross-attention and both self-attentions, each with its tokens.
"$bin" explore --checkpoint "$ckpt" "we are eating bread" --out "$tmp/explore.html" >"$tmp/explore.out" 2>"$tmp/explore.err" &&
  [[ $(grep -o '"token_view":true' "$tmp/explore.html" | wc -l) -eq 3 ]] && grep -q '"bread"' "$tmp/explore.html" &&
  pass "explore: $(cat "$tmp/explore.err")" || failed "explore: $(cat "$tmp/explore.err")"

# 7b. Pasted or saved text: a byte-order mark, CRLF line ends, a no-break space and Spanish
# punctuation translate as the plain sentence does, with no unknown word; bytes that are not
# UTF-8 and control characters neither garble the messages nor break the SVG (XML).
"$bin" translate --checkpoint "$ckpt" "we are eating bread" >"$tmp/plain.out" 2>/dev/null
printf '\xef\xbb\xbfwe are eating bread\r\n\xc2\xbfwe are\xc2\xa0eating bread?\r\n' |
  "$bin" translate --checkpoint "$ckpt" >"$tmp/pasted.out" 2>"$tmp/pasted.err"
if [[ $(sed -n 1p "$tmp/pasted.out") == $(cat "$tmp/plain.out") &&
      $(sed -n 2p "$tmp/pasted.out") == $(cat "$tmp/plain.out") && ! -s $tmp/pasted.err ]]; then
  pass "translate: BOM, CRLF, no-break space and ¿? read as the plain sentence"
else
  failed "translate: pasted text: $(cat "$tmp/pasted.out" "$tmp/pasted.err")"
fi
printf 'we eat \xff bread\x01\r\n' |
  "$bin" translate --checkpoint "$ckpt" --max-length 1 --attention "$tmp/bytes.svg" \
    >/dev/null 2>"$tmp/bytes.err"
utf8_text() {  # the file is UTF-8 (iconv) and holds no CR or other control character but LF
  iconv -f UTF-8 -t UTF-8 "$1" >/dev/null 2>&1 && ! LC_ALL=C grep -q $'[\x01-\x09\x0b-\x1f]' "$1"
}
if grep -q "not in the English vocabulary" "$tmp/bytes.err" && utf8_text "$tmp/bytes.err" &&
   utf8_text "$tmp/bytes.svg"; then
  pass "translate: stray bytes and control characters are shown as U+FFFD, the SVG stays UTF-8"
else
  failed "translate: stray bytes: $(cat -A "$tmp/bytes.err")"
fi

# 8. --help on every mode.
for mode in train eval translate vocab plot; do
  "$bin" "$mode" --help >"$tmp/help.out" 2>&1 && grep -q -- "--" "$tmp/help.out" &&
    pass "$mode --help" || failed "$mode --help: $(cat "$tmp/help.out")"
done

# 9. Bad input: one-line message and exit status 2.
expect_error "not divisible by heads" train --preset tiny --out "$tmp/bad" --heads 5
expect_error "raise --max-length" train --preset tiny --out "$tmp/bad" --max-length 5
expect_error "unknown preset" train --preset huge --out "$tmp/bad"
expect_error "is required" train
expect_error "'sinusoidal' or 'learned'" train --preset tiny --out "$tmp/bad" --positions rotary
expect_error "a resumed run keeps its settings" train --out "$tmp/run" --resume --dim 64
expect_error "has lr = 0.003 and the flags ask for 0.5" train --out "$tmp/run" --resume --lr 0.5
expect_error "no checkpoint at" train --out "$tmp/nowhere" --resume
expect_error "already holds a run" train --preset tiny --out "$tmp/run"
expect_error "--max-steps must be >= 0" train --preset tiny --out "$tmp/bad" --max-steps -1
expect_error "--lr expects a number" train --preset tiny --out "$tmp/bad" --lr 1e-3x
expect_error "does not exist" eval --checkpoint "$tmp/missing.safetensors"
expect_error "--split must be test or valid" eval --checkpoint "$ckpt" --split train
expect_error "--beam must be at least 1" translate --checkpoint "$ckpt" --beam 0 "we eat"
expect_error "--length-penalty must be a finite number >= 0" translate --checkpoint "$ckpt" --beam 2 --length-penalty -1 "we eat"
expect_error "--length-penalty must be a finite number >= 0" eval --checkpoint "$ckpt" --beam 2 --length-penalty=-0.5
expect_error "is required" translate "we eat"
expect_error "--beam is given twice" translate --checkpoint "$ckpt" --beam 2 --beam 3 "we eat"
expect_error "--length-penalty expects a number, got '1x'" translate --checkpoint "$ckpt" --length-penalty 1x "we eat"
# A comma inside a sentence does not split it (cxxopts splits list values at commas).
"$bin" translate --checkpoint "$ckpt" "we eat bread, they read" "we eat" >"$tmp/comma.out" 2>/dev/null
if [[ $(wc -l <"$tmp/comma.out") -eq 2 ]]; then
  pass "translate: two sentences, one with a comma, give two lines"
else
  failed "translate: two sentences gave $(wc -l <"$tmp/comma.out") lines: $(cat "$tmp/comma.out")"
fi
expect_error "explore: give exactly one sentence (in quotes), got 2" explore --checkpoint "$ckpt" --out "$tmp/x.html" "we eat" "i eat"
expect_error "explore: --out FILE.html is required" explore --checkpoint "$ckpt" "we eat"
expect_error "unknown mode" fly
expect_error "--language must be en, es or both" vocab --checkpoint "$ckpt" --language fr
expect_error "Option" train --preset tiny --out "$tmp/bad" --no-such-flag
expect_error "Option" translate --checkpoint "$ckpt" --no-such-flag "we eat"
head -c 100 /dev/urandom >"$tmp/garbage.safetensors"
expect_error "garbage.safetensors" eval --checkpoint "$tmp/garbage.safetensors"
# A checkpoint whose run configuration nests arrays 100,000 levels deep in its model (a crafted
# 200 KB file) used to crash with a stack overflow.
if command -v python3 >/dev/null; then
  python3 "$(dirname "$0")/nest_run_config.py" "$ckpt" "$tmp/deep.safetensors" 100000
  expect_error "nests deeper than 64 levels" eval --checkpoint "$tmp/deep.safetensors"
  expect_error "nests deeper than 64 levels" translate --checkpoint "$tmp/deep.safetensors" "we eat"
fi

if [[ $failures -eq 0 ]]; then echo "translate smoke test: all checks passed"; exit 0; fi
echo "translate smoke test: $failures check(s) failed"; exit 1
