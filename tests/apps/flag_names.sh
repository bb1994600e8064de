#!/usr/bin/env bash
# The programs name the same things the same way (README: "Flags across the programs"): each
# program's --help (and the program run without a mode) lists every mode, and every mode that
# reads data takes the data flags that the program's eval takes, spelled as eval spells them.
# The old spellings still work, with a note naming the new one. Quick: nothing is trained.
#   bash tests/apps/flag_names.sh GPT TRANSLATE VIT POSE WALKTHROUGH
set -uo pipefail
gpt=$(realpath "$1") translate=$(realpath "$2") vit=$(realpath "$3") pose=$(realpath "$4")
walkthrough=$(realpath "$5")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
pass() { echo "ok: $1"; }
failed() { echo "FAIL: $1"; failures=$((failures + 1)); }

# The data flags: where a program's data is (image data: --data-dir; a text file: --text).
data_flags="--data-dir --dataset --text --coco-annotations"

# modes PROGRAM MODE...: its --help and its run without a mode list exactly these modes, each on a
# line of its own, and each of them answers --help.
modes() {
  local bin=$1; shift
  "$bin" --help >"$tmp/help" 2>&1 || failed "${bin##*/} --help exited $?"
  "$bin" >"$tmp/bare" 2>&1
  local rc=$?
  [[ $rc -eq 2 ]] || failed "${bin##*/} without a mode exited $rc (expected 2)"
  cmp -s "$tmp/help" "$tmp/bare" || failed "${bin##*/}: --help and no mode print different lists"
  local listed
  # The lines between "modes:" and the next line that is not indented: one per mode.
  listed=$(sed -n '/^modes:/,/^[^ ]/{/^ /p}' "$tmp/help" | awk '{print $1}' | tr '\n' ' ')
  if [[ "$listed" == "$* " ]]; then
    pass "${bin##*/} --help lists its modes: $listed"
  else
    failed "${bin##*/} --help lists '$listed', expected '$* '"
  fi
  for mode in "$@"; do
    "$bin" "$mode" --help >/dev/null 2>&1 || failed "${bin##*/} $mode --help exited $?"
  done
}

modes "$vit" train eval predict attention explore plot augment
modes "$translate" train eval translate explore vocab plot
modes "$gpt" train eval sample attention explore tokenize export
modes "$pose" train eval predict attention explore plot
"$walkthrough" --help >"$tmp/help" 2>&1
for part in 1 2 3 4 5; do
  grep -q "^  $part  " "$tmp/help" || failed "uwaga-walkthrough --help does not list part $part"
done

# reads_data PROGRAM MODE...: every data flag of PROGRAM's eval is in the --help of each MODE and
# is taken by it (the mode then stops at what else it needs, not at the flag).
reads_data() {
  local bin=$1; shift
  "$bin" eval --help >"$tmp/eval" 2>&1
  local flags=() flag
  for flag in $data_flags; do
    grep -qE -- "^ +$flag " "$tmp/eval" && flags+=("$flag")
  done
  [[ ${#flags[@]} -gt 0 ]] || failed "${bin##*/} eval lists none of: $data_flags"
  for mode in "$@"; do
    local before=$failures
    "$bin" "$mode" --help >"$tmp/mode" 2>&1
    for flag in "${flags[@]}"; do
      if ! grep -qE -- "^ +$flag " "$tmp/mode"; then
        failed "${bin##*/} $mode --help does not list $flag (eval takes it)"
        continue
      fi
      timeout -s KILL 20 "$bin" "$mode" "$flag" "$tmp/none" </dev/null >"$tmp/out" 2>&1
      if grep -qE "does not exist|unexpected argument|unrecognised|unrecognized" "$tmp/out"; then
        failed "${bin##*/} $mode refuses $flag: $(head -c 300 "$tmp/out")"
      fi
    done
    [[ $failures -eq $before ]] && pass "${bin##*/} $mode takes ${flags[*]}"
  done
}

reads_data "$vit" train eval predict attention explore augment
reads_data "$pose" train eval predict attention explore
reads_data "$gpt" train eval

# No mode lists a flag under an old name.
for bin in "$vit" "$pose"; do
  for mode in train eval predict attention explore; do
    "$bin" "$mode" --help >"$tmp/mode" 2>&1
    if grep -qE -- "^ +--(coco-images|data) " "$tmp/mode"; then
      failed "${bin##*/} $mode --help lists an old spelling: $(grep -E -- '--(coco-images|data) ' "$tmp/mode")"
    fi
  done
done

# The old spellings of a released flag still work, as the new one, with a note naming it.
"$pose" train --preset smoke --data coco --coco-images "$tmp/photos" --out "$tmp/r" \
  </dev/null >"$tmp/out" 2>&1
if grep -qF -- "--coco-images is now --data-dir" "$tmp/out" && grep -qF -- "--data is now --dataset" "$tmp/out" &&
   grep -qF -- "--dataset coco needs --coco-annotations FILE.json" "$tmp/out"; then
  pass "uwaga-pose train --data coco --coco-images: read as --dataset and --data-dir"
else
  failed "uwaga-pose train --data coco --coco-images: $(head -c 600 "$tmp/out")"
fi

# One thing, one name, in every program and mode (README's table): a model's depth is --layers
# (uwaga-translate: --encoder-layers and --decoder-layers), how much an evaluation scores is
# --eval-windows (uwaga-gpt) or --eval-size (uwaga-translate) in train and in eval alike, and an
# image is --image FILE or the FILE alone (uwaga-vit and uwaga-pose alike).
# lists PROGRAM MODE FLAG. The help goes to a file first: `grep -q` in a pipe stops reading at
# its match, and a help longer than one write (4 KiB) then dies of SIGPIPE, which pipefail
# reports as a failure.
lists() { "$1" "$2" --help >"$tmp/lists" 2>&1; grep -qE -- "^ +$3 " "$tmp/lists"; }
# listed FLAG OLD PROGRAM MODE...: each MODE's --help lists FLAG and not OLD ("" for none).
listed() {
  local flag=$1 old=$2 bin=$3 mode before=$failures; shift 3
  for mode in "$@"; do
    lists "$bin" "$mode" "$flag" || failed "${bin##*/} $mode --help does not list $flag"
    if [[ -n $old ]] && lists "$bin" "$mode" "$old"; then
      failed "${bin##*/} $mode --help lists the old spelling $old"
    fi
  done
  [[ $failures -eq $before ]] && pass "${bin##*/} $* --help: $flag${old:+, not $old}"
}
listed --layers --depth "$vit" train
listed --layers --depth "$pose" train
listed --layers "" "$gpt" train
listed --encoder-layers "" "$translate" train
listed --decoder-layers "" "$translate" train
listed --eval-windows --windows "$gpt" train eval
listed --eval-size --limit "$translate" train eval
listed --image --images "$vit" predict attention explore
listed --image "" "$pose" predict attention explore
for bin in "$vit" "$pose"; do
  for mode in predict attention explore; do
    "$bin" "$mode" --help >"$tmp/usage" 2>&1
    grep -qE "^  ${bin##*/} $mode \[OPTION...\] \[IMAGE" "$tmp/usage" ||
      failed "${bin##*/} $mode --help: its usage line does not show [IMAGE] (a file alone)"
  done
done

# spelled FLAG OLD EXPECT PROGRAM ARGS...: PROGRAM ARGS, with the word FLAG in ARGS (or its start,
# "FLAG=-1") spelled FLAG, then OLD, both stop at EXPECT, the value having reached the setting;
# the old spelling with a note naming the new one, the new one without. An empty FLAG: the word
# is left out (an image file given alone).
spelled() {
  local flag=$1 old=$2 expect=$3 bin=$4; shift 4
  local spelling args=() arg
  for spelling in "$flag" "$old"; do
    args=()
    for arg in "$@"; do
      if [[ $arg == FLAG* ]]; then
        [[ -n $spelling ]] && args+=("$spelling${arg#FLAG}")
      else
        args+=("$arg")
      fi
    done
    timeout -s KILL 20 "$bin" "${args[@]}" </dev/null >"$tmp/out" 2>&1
    local shown="${bin##*/} ${args[*]}"
    if ! grep -qF -- "$expect" "$tmp/out"; then
      failed "$shown: expected '$expect', got: $(head -c 400 "$tmp/out")"
    elif [[ $spelling == "$old" && -n $old ]] && ! grep -qF -- "$old is now $flag" "$tmp/out"; then
      failed "$shown: no note that $old is now $flag: $(head -c 400 "$tmp/out")"
    elif [[ $spelling == "$flag" ]] && grep -qF "is now" "$tmp/out"; then
      failed "$shown: a note on a current spelling: $(head -c 400 "$tmp/out")"
    else
      pass "$shown: $expect"
    fi
  done
}
above="1001 is above the limit of 1000"
spelled --layers --depth "depth $above" "$vit" train --preset mnist-tiny --out "$tmp/r" FLAG 1001
spelled --layers --depth "depth $above" "$pose" train --preset smoke --out "$tmp/r" FLAG 1001
spelled --eval-windows --windows "eval: --eval-windows must be >= 0" \
  "$gpt" eval --checkpoint "$tmp/none" FLAG=-1
spelled --eval-windows --windows "--eval-windows must be >= 0" \
  "$gpt" train --preset smoke --out "$tmp/r" FLAG=-1
spelled --eval-size --limit "eval: --eval-size must be >= 0" \
  "$translate" eval --checkpoint "$tmp/none" FLAG=-1
spelled --eval-size --limit "--eval-size must be >= 0" \
  "$translate" train --preset tiny --out "$tmp/r" FLAG=-1
# An image file, --image FILE or FILE alone: the mode reaches the checkpoint (missing here)
# having taken it.
missing="checkpoint '$tmp/none.safetensors' does not exist"
for mode in predict attention explore; do
  out=(--out "$tmp/o")
  [[ $mode == predict ]] && out=()
  spelled --image --images "$missing" "$vit" "$mode" --checkpoint "$tmp/none.safetensors" \
    "${out[@]}" FLAG "$tmp/a.pgm"
  spelled --image "" "$missing" "$vit" "$mode" --checkpoint "$tmp/none.safetensors" \
    "${out[@]}" FLAG "$tmp/a.pgm"
  joint=()
  [[ $mode == attention ]] && joint=(--joint left_wrist)
  spelled --image "" "$missing" "$pose" "$mode" --checkpoint "$tmp/none.safetensors" \
    --out "$tmp/o" "${joint[@]}" FLAG "$tmp/a.pgm"
done

if [[ $failures -gt 0 ]]; then
  echo "$failures check(s) failed"
  exit 1
fi
echo "all flag-name checks passed"
