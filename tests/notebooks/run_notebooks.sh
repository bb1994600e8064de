#!/usr/bin/env bash
# Executes every teaching notebook (notebooks/NN_*.ipynb) top to bottom with Debian's Jupyter
# (jupyter-nbconvert, python3-ipykernel), prints each one's wall time, and fails when any cell
# raises. Also fails when a committed notebook carries outputs (they are committed stripped).
#   bash tests/notebooks/run_notebooks.sh [BUILD/notebooks] [NOTEBOOK ...]
# Environment: NOTEBOOKS_OUT=DIR keeps the executed notebooks there (default: a temporary dir).
# Each notebook should take under 3 minutes on a 2-core machine; a slower one gets a warning.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
module_dir=${1:-$root/build/notebooks}
shift $(( $# > 0 ? 1 : 0 ))
if [[ ! -f $module_dir/uwaga/__init__.py ]]; then
  echo "FAIL: no uwaga Python module in $module_dir (configure with -DUWAGA_PYTHON=ON and build)"
  exit 1
fi
export UWAGA_PYTHON_PATH=$(cd "$module_dir" && pwd)
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-PASSIVE}  # see apps/common/thread_policy.h
python=/usr/bin/python3

notebooks=("$@")
((${#notebooks[@]})) || notebooks=("$root"/notebooks/[0-9][0-9]_*.ipynb)
runs() { [[ " ${notebooks[*]##*/} " == *" $1"* ]]; }  # runs 04_: notebook 4 among those given?

# Notebook 4 trains on MNIST.
if runs 04_ && [[ ! -f $root/data/cache/mnist/t10k-labels-idx1-ubyte ]]; then
  bash "$root/data/fetch.sh" mnist >/dev/null || { echo "FAIL: could not fetch MNIST"; exit 1; }
fi

# Notebook 6 reads tinyshakespeare: a copy in shared/datasets beside the repository (where CI has
# one) is used when there, else fetch.sh downloads it.
if runs 06_ && [[ ! -f $root/data/cache/tinyshakespeare/input.txt ]]; then
  from=()
  shared=$root/../shared/datasets/tinyshakespeare
  [[ -f $shared/input.txt ]] && from=(--from "$shared")
  bash "$root/data/fetch.sh" tinyshakespeare "${from[@]}" >/dev/null ||
    { echo "FAIL: could not fetch tinyshakespeare"; exit 1; }
fi

out=${NOTEBOOKS_OUT:-$(mktemp -d)}
[[ -n ${NOTEBOOKS_OUT:-} ]] || trap 'rm -rf "$out"' EXIT
mkdir -p "$out"

failures=0
"$python" "$root/notebooks/strip_outputs.py" --check "${notebooks[@]}" || failures=$((failures + 1))
for nb in "${notebooks[@]}"; do
  name=$(basename "$nb")
  start=$(date +%s%N)
  # The kernel starts in the notebook's directory; a cell may run up to 10 minutes.
  "$python" -m nbconvert --to notebook --execute --ExecutePreprocessor.timeout=600 \
    --ExecutePreprocessor.kernel_name=python3 --output-dir "$out" "$nb" >"$out/$name.log" 2>&1
  status=$?
  tenths=$(( ($(date +%s%N) - start) / 100000000 ))
  seconds=$((tenths / 10)).$((tenths % 10))
  if [[ $status -eq 0 ]]; then
    printf 'ok    %-36s %6s s\n' "$name" "$seconds"
    if ((tenths > 1800)); then
      echo "      warning: $name took more than the 3 minutes a notebook should take"
    fi
  else
    printf 'FAIL  %-36s %6s s\n' "$name" "$seconds"
    tail -40 "$out/$name.log"
    failures=$((failures + 1))
  fi
done
if [[ $failures -eq 0 ]]; then echo "notebooks: all ${#notebooks[@]} ran without errors"; exit 0; fi
echo "notebooks: $failures failure(s)"; exit 1
