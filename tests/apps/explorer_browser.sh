#!/usr/bin/env bash
# The attention explorer pages in a real browser. uwaga-vit, uwaga-translate, uwaga-gpt and
# uwaga-pose explore write their pages for briefly trained models (real MNIST, the toy corpus, a
# generated text, stick figures), and tests/apps/check_explorer_page.py loads each in headless Chromium: no console errors,
# exceptions or network requests; the expected number of panels; hovering a token, a patch or a
# cell changes the weights shown (a token's shown row sums to 1); the scale switch redraws; a
# screenshot that is not blank. A copy of the ViT page with its image made colourful checks that
# colour images are drawn in colour. Skipped (status 77) only when no Chromium is installed;
# bash apps/setup.sh installs Debian's chromium as root.
#   bash tests/apps/explorer_browser.sh BUILD/apps/uwaga-vit BUILD/apps/uwaga-translate \
#     BUILD/apps/uwaga-gpt BUILD/apps/uwaga-pose
set -uo pipefail
vit=$1 translate=$2 gpt=$3 pose=$4
root=$(cd "$(dirname "$0")/../.." && pwd)
check=("/usr/bin/python3" "$root/tests/apps/check_explorer_page.py")
tmp_probe=$(mktemp)
"${check[@]}" --probe >"$tmp_probe" 2>&1
case $? in
  0) ;;
  77) cat "$tmp_probe"; rm -f "$tmp_probe"; exit 77 ;;  # no Chromium: the one reason to skip
  *) echo "FAIL: the page checker does not run:"; cat "$tmp_probe"; rm -f "$tmp_probe"; exit 1 ;;
esac
rm -f "$tmp_probe"
data=$root/data/cache/mnist
if [[ ! -f $data/t10k-labels-idx1-ubyte ]]; then
  bash "$root/data/fetch.sh" mnist "$data" >/dev/null || { echo "FAIL: could not fetch MNIST"; exit 1; }
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
run() {  # run NAME COMMAND...: the command's output is shown only when it fails
  "${@:2}" >"$tmp/$1.out" 2>&1
  local status=$?
  if ((status)); then
    echo "FAIL: $1 exited with $status:"; tail -5 "$tmp/$1.out"; failures=$((failures + 1)); return 1
  fi
}
page() {  # page FILE CHECKS...: the browser checks, their lines shown
  "${check[@]}" "$@" || failures=$((failures + 1))
}

# uwaga-vit: 2 layers x 2 heads; 16 patches (7x7) and the class token.
run vit-train "$vit" train --data-dir "$data" --train-size 256 --batch-size 64 --dim 32 --layers 2 \
  --heads 2 --mlp-dim 64 --no-augment --epochs 1 --max-steps 4 --threads 2 --out "$tmp/vit" &&
  run vit-explore "$vit" explore --checkpoint "$tmp/vit/checkpoint.safetensors" --data-dir "$data" \
    --index 0 --out "$tmp/vit.html" &&
  # image panels: 2 layers x (2 heads + their mean) and the rollout; heatmaps: 2 x 3
  page "$tmp/vit.html" --expect '.image-panel=7' --expect '.map-panel=6' --expect '.token-view=0' \
    --expect '.input-panel=1' --hover-patch --image-colours gray
# The same page with a colour image (red where the digit is, blue elsewhere).
if [[ -f $tmp/vit.html ]]; then
  /usr/bin/python3 - "$tmp/vit.html" "$tmp/vit-colour.html" <<'PY'
import json, re, sys
page = open(sys.argv[1], encoding="utf-8").read()
m = re.search(r'(<script type="application/json" id="explorer-data">\n)(.*?)(\n</script>)', page, re.S)
data = json.loads(m.group(2))
gray = data["image"]["pixels"]
data["image"]["channels"] = 3
data["image"]["pixels"] = gray + [p // 4 for p in gray] + [255 - p for p in gray]
text = json.dumps(data).replace("<", "\\u003c")
open(sys.argv[2], "w", encoding="utf-8").write(page[:m.start(2)] + text + page[m.end(2):])
PY
  page "$tmp/vit-colour.html" --expect '.image-panel=7' --image-colours colour
fi

# uwaga-translate: the tiny preset, 1 encoder + 1 decoder layer x 2 heads; three families.
run translate-train "$translate" train --preset tiny --max-steps 10 --threads 2 --out "$tmp/tr" &&
  run translate-explore "$translate" explore --checkpoint "$tmp/tr/checkpoint.safetensors" \
    "we are eating bread" --out "$tmp/translate.html" &&
  page "$tmp/translate.html" --expect '.map-panel=9' --expect '.token-view=3' \
    --expect '.image-panel=0' --hover-token cross --hover-token encoder --hover-token decoder

# uwaga-gpt: the smoke preset (1 layer x 2 heads) on a generated text.
for i in $(seq 1 200); do printf 'ROMEO: what light breaks there?\nJULIET: it is the east.\n'; done >"$tmp/verses.txt"
run gpt-train "$gpt" train --preset smoke --text "$tmp/verses.txt" --threads 2 --out "$tmp/gpt" &&
  run gpt-explore "$gpt" explore --checkpoint "$tmp/gpt/checkpoint.safetensors" \
    --prompt "ROMEO: what" --out "$tmp/gpt.html" &&
  page "$tmp/gpt.html" --expect '.map-panel=3' --expect '.token-view=1' --hover-token self

# uwaga-pose: the smoke preset (1 layer x 2 heads, an 8 x 6 patch grid, no class token), the
# tokens under the 15 predicted joints as the image's queries.
run pose-train "$pose" train --preset smoke --max-steps 4 --threads 2 --out "$tmp/pose" &&
  run pose-explore "$pose" explore --checkpoint "$tmp/pose/checkpoint.safetensors" --index 0 \
    --out "$tmp/pose.html" &&
  # image panels: 1 layer x (2 heads + their mean) and the rollout; heatmaps: 1 x 3
  page "$tmp/pose.html" --expect '.image-panel=4' --expect '.map-panel=3' --expect '.token-view=0' \
    --hover-patch --image-colours gray

# A page that is broken must fail the checks: a script error, and a panel missing.
if [[ -f $tmp/gpt.html ]]; then
  sed 's|document.body.setAttribute("data-ready", "yes");|undefinedFunction();|' "$tmp/gpt.html" >"$tmp/broken.html"
  if "${check[@]}" "$tmp/broken.html" --expect '.map-panel=4' >"$tmp/broken.out" 2>&1; then
    echo "FAIL: a page whose script throws passed the checks"; failures=$((failures + 1))
  else
    grep -q "uncaught exception" "$tmp/broken.out" && grep -q "3 elements match .map-panel (expected 4)" "$tmp/broken.out" &&
      echo "ok: a page whose script throws, with a panel too few, fails the checks" ||
      { echo "FAIL: the broken page failed for other reasons:"; cat "$tmp/broken.out"; failures=$((failures + 1)); }
  fi
fi

if ((failures)); then echo "$failures check(s) failed"; exit 1; fi
echo "all explorer pages passed in $("${check[@]}" --probe)"
