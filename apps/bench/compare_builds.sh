#!/usr/bin/env bash
# Training speed of two builds, side by side: `uwaga-bench --mode train` (mnist-tiny, batch 128)
# of OLD_BUILD and NEW_BUILD alternated in rounds on 1 and 2 threads; prints each round and the
# medians (images/s) with the ratio new/old.
#   bash apps/bench/compare_builds.sh OLD_BUILD NEW_BUILD [ROUNDS]
set -euo pipefail
old=${1:?usage: compare_builds.sh OLD_BUILD NEW_BUILD [ROUNDS]}
new=${2:?usage: compare_builds.sh OLD_BUILD NEW_BUILD [ROUNDS]}
rounds=${3:-4}
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
for round in $(seq 1 "$rounds"); do
  for threads in 1 2; do
    for build in old new; do
      dir=$old; [[ $build == new ]] && dir=$new
      ips=$("$dir/apps/uwaga-bench" --mode train --threads "$threads" --repeats 5 |
            /usr/bin/python3 -c 'import json,sys; print(json.loads(sys.stdin.readline())["median_images_per_s"])')
      echo "$round $threads $build $ips" | tee -a "$tmp"
    done
  done
done
/usr/bin/python3 - "$tmp" <<'PY'
import statistics, sys
rows = [line.split() for line in open(sys.argv[1])]
for threads in ("1", "2"):
    med = {b: statistics.median(float(r[3]) for r in rows if r[1] == threads and r[2] == b) for b in ("old", "new")}
    print(f"{threads} thread(s): old {med['old']:.0f}, new {med['new']:.0f} images/s, new/old {med['new'] / med['old']:.3f}")
PY
