#!/usr/bin/env bash
# A project of one's own on an installed uwaga: `cmake --install` of this build into a temporary
# prefix, then apps/examples/my_model configured, built and run against it in a clean environment
# (env -i: none of this build's variables; find_package(uwaga) through CMAKE_PREFIX_PATH alone).
# Checks what the install holds (the programs built, the library, the headers, the package, with
# no path into the source or build tree), that the example's loss fell and its checkpoint reloads
# to the same loss (its exit status), and that the checkpoint's "uwaga_version" is what
# `uwaga-gpt --version` prints.
#   bash tests/apps/install_example.sh BUILD_DIR SOURCE_DIR CMAKE PYTHON
set -euo pipefail
build=$(realpath "$1") source=$(realpath "$2") cmake=$3 python=$4
tmp=$(mktemp -d "${TMPDIR:-/tmp}/uwaga-install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "install_example: $*" >&2; exit 1; }
clean_env=(env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$tmp" OMP_WAIT_POLICY=PASSIVE
           UWAGA_NUM_THREADS=2)
run_logged() {  # run_logged LOG COMMAND...: its output only when it fails
  local log=$1; shift
  "$@" >"$log" 2>&1 || { tail -n 40 "$log" >&2; fail "failed: $*"; }
}

prefix=$tmp/prefix
run_logged "$tmp/install.log" "$cmake" --install "$build" --prefix "$prefix"
for program in uwaga-vit uwaga-translate uwaga-gpt uwaga-pose uwaga-walkthrough; do
  if [[ -x $build/apps/$program && ! -x $prefix/bin/$program ]]; then
    fail "cmake --install left out bin/$program"
  fi
done
for file in lib/libuwaga.a include/uwaga/core/tensor.h include/uwaga/nn/transformer_encoder_block.h \
            include/uwaga/optim/trainer.h include/uwaga/data/batch_source.h \
            lib/cmake/uwaga/uwagaConfig.cmake lib/cmake/uwaga/uwagaConfigVersion.cmake \
            lib/cmake/uwaga/uwagaTargets.cmake; do
  [[ -f $prefix/$file ]] || fail "cmake --install did not write $file"
done
if grep -rlF -e "$source" -e "$build" "$prefix/lib/cmake"; then
  fail "the installed CMake package names the source or build tree (above)"
fi

# The example, as a user would build it: its own folder, a copy outside the source tree.
cp -r "$source/apps/examples/my_model" "$tmp/my_model"
run_logged "$tmp/configure.log" "${clean_env[@]}" "$cmake" -S "$tmp/my_model" -B "$tmp/build" \
  -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release
run_logged "$tmp/build.log" "${clean_env[@]}" "$cmake" --build "$tmp/build"
run_logged "$tmp/run.log" "${clean_env[@]}" "$tmp/build/my_model" "$tmp/run"
grep "loss on new sequences" "$tmp/run.log"

version=$("$prefix/bin/uwaga-gpt" --version)
for program in "$prefix"/bin/uwaga-*; do
  name=$(basename "$program")
  [[ $("$program" --version) == "$name ${version#uwaga-gpt }" ]] ||
    fail "$name --version printed '$("$program" --version)', not '$name ${version#uwaga-gpt }'"
done
"$python" - "$tmp/run" "${version#uwaga-gpt }" <<'PY'
import json, struct, sys
run, version = sys.argv[1], sys.argv[2]
steps = [r for r in map(json.loads, open(f"{run}/log.jsonl")) if r["type"] == "step"]
first, last = steps[0]["loss"], steps[-1]["loss"]
print(f"install_example: loss {first:.3f} (first log line) -> {last:.3f} (last), {len(steps)} lines")
if not last < 0.8 * first:
    sys.exit("install_example: the example's loss did not fall by a fifth")
with open(f"{run}/checkpoint.safetensors", "rb") as f:
    header = json.loads(f.read(struct.unpack("<Q", f.read(8))[0]))
stored = header["__metadata__"].get("uwaga_version")
print(f"install_example: checkpoint uwaga_version '{stored}', uwaga-gpt --version '{version}'")
if stored != version:
    sys.exit("install_example: the checkpoint's uwaga_version is not the programs' --version")
PY
