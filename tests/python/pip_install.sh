#!/usr/bin/env bash
# pip install of the repository into a new virtual environment (python3 -m venv
# --system-site-packages: NumPy from Debian), without network (--no-build-isolation, setuptools
# and wheel from Debian), reusing this build directory (UWAGA_BUILD_DIR: nothing is compiled
# again); then, from another directory, `import uwaga` must find the installed package and a few
# calls must work.
#   bash tests/python/pip_install.sh BUILD_DIR SOURCE_DIR PYTHON
set -euo pipefail
build=$(realpath "$1") source=$(realpath "$2") python=$3
tmp=$(mktemp -d "${TMPDIR:-/tmp}/uwaga-pip.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "pip_install: $*" >&2; exit 1; }

"$python" -m venv --system-site-packages "$tmp/venv" || fail "python3 -m venv failed (python3-venv?)"
log=$tmp/pip.log
if ! UWAGA_BUILD_DIR=$build PIP_NO_INDEX=1 PIP_DISABLE_PIP_VERSION_CHECK=1 \
     "$tmp/venv/bin/pip" install --no-build-isolation "$source" >"$log" 2>&1; then
  tail -n 40 "$log" >&2
  fail "pip install --no-build-isolation failed"
fi
grep -q "Successfully installed uwaga" "$log" || { cat "$log" >&2; fail "pip installed no uwaga"; }

cd "$tmp"  # neither the source nor the build tree
env -u PYTHONPATH -u UWAGA_PYTHON_PATH OMP_WAIT_POLICY=PASSIVE UWAGA_NUM_THREADS=2 \
    "$tmp/venv/bin/python" - "$tmp/venv" <<'PY'
import pathlib, sys
import numpy as np
import uwaga
venv = pathlib.Path(sys.argv[1]).resolve()
where = pathlib.Path(uwaga.__file__).resolve()
print(f"pip_install: uwaga {uwaga.__version__} ({uwaga.version_string()}) from {where}")
assert venv in where.parents, f"imported {where}, not the venv's package"
x = uwaga.tensor([[1.0, 2.0], [3.0, -1.0]], dtype=uwaga.float64, requires_grad=True)
y = (x * x).sum()
y.backward()
assert np.allclose(x.grad.numpy(), 2 * x.numpy()), x.grad.numpy()
gen = uwaga.Generator(0)
layer = uwaga.nn.LayerNorm(4)
z = layer(uwaga.randn([3, 4], gen))
assert np.allclose(z.numpy().mean(axis=1), 0, atol=1e-5), z.numpy()
print("pip_install: autograd and LayerNorm from the installed package OK")
PY
