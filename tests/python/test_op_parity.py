"""uwaga's ops and functional modules against PyTorch, through the Python bindings.

Every case of op_parity_cases.py (broadcasting, negative dims, keepdim, size-1 and empty dims,
NaN/inf inputs, huge magnitudes, ties), in float64 and float32: the outputs and the gradients
dL/d input of L = Σ out·upstream must match what PyTorch 1.13 computed on the same inputs
(tests/golden/op_parity.npz, written by make_op_parity_golden.py). NaN must stand where PyTorch
has NaN, and inf where it has inf with the same sign.

    PYTHONPATH=build/notebooks python3 -m unittest tests/python/test_op_parity.py
"""
import json
import os
import re
import sys
import unittest

import numpy as np

if "UWAGA_PYTHON_PATH" in os.environ:
    sys.path.insert(0, os.environ["UWAGA_PYTHON_PATH"])
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import uwaga  # noqa: E402
from op_parity_cases import CASES  # noqa: E402

GOLDEN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "golden", "op_parity.npz")
TOL = {"float64": (1e-7, 1e-9)}


def load_golden():
    z = np.load(GOLDEN)
    index = json.loads(str(z["index"]))
    data = z["data"].tobytes()
    out = {}
    for key, (dtype, shape, offset, size) in index.items():
        raw = data[offset:offset + size]
        out[key] = raw.decode() if dtype == "str" else \
            np.frombuffer(raw, dtype=np.dtype(dtype)).reshape(shape).copy()
    return out


def mismatch(what, got, want, rtol, atol, skip=None):
    """None when got matches want (NaN where NaN, equal infinities), else a one-line reason.
    Elements where `skip` is true are not compared."""
    got = np.asarray(got)
    if got.shape != want.shape:
        return f"{what}: shape {got.shape}, PyTorch {want.shape}"
    if skip is not None:
        got, want = got[~skip], want[~skip]
    if want.dtype.kind in "iu":
        if not np.array_equal(got, want):
            return f"{what}: {got.ravel()[:8]} where PyTorch has {want.ravel()[:8]}"
        return None
    got = got.astype(np.float64)
    want = want.astype(np.float64)
    nan_g, nan_w = np.isnan(got), np.isnan(want)
    if not np.array_equal(nan_g, nan_w):
        i = np.argmax(nan_g != nan_w)
        return f"{what}: element {i} is {got.ravel()[i]}, PyTorch {want.ravel()[i]}"
    inf_w = np.isinf(want)
    if not np.array_equal(got[inf_w], want[inf_w]) or np.isinf(got[~inf_w]).any():
        i = np.argmax((np.isinf(got) | inf_w) & (got != want))
        return f"{what}: element {i} is {got.ravel()[i]}, PyTorch {want.ravel()[i]}"
    fin = np.isfinite(want)
    err = np.abs(got[fin] - want[fin])
    bound = atol + rtol * np.abs(want[fin])
    if (err > bound).any():
        i = np.argmax(err - bound)
        return (f"{what}: largest difference {err[i]:.3g} at {want[fin][i]:.6g} "
                f"(allowed {bound[i]:.3g})")
    return None


class OpParity(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.golden = load_golden()

    def test_golden_file_matches_the_case_list(self):
        names = {k.split("|")[0] for k in self.golden}
        missing = [c.name for c in CASES if c.name not in names]
        self.assertFalse(missing, f"cases without PyTorch values (rerun "
                                  f"make_op_parity_golden.py): {missing[:5]}")

    def run_case(self, case, dtype):
        g = self.golden
        key = f"{case.name}|{dtype}"
        arrays, i = [], 0
        while f"{key}|in{i}" in g:
            arrays.append(g[f"{key}|in{i}"])
            i += 1
        xs = []
        for a in arrays:
            t = uwaga.tensor(a.copy())
            if case.grad and a.dtype.kind == "f":
                t.requires_grad_()
            xs.append(t)
        if case.refuses:
            with self.assertRaisesRegex(Exception, re.escape(case.refuses)):
                case.uw(uwaga, *xs)
            return []
        if f"{key}|error" in g:
            with self.assertRaises(Exception, msg=f"PyTorch refused: {g[key + '|error']}"):
                case.uw(uwaga, *xs)
            return []
        try:
            y = case.uw(uwaga, *xs)
        except Exception as e:  # noqa: BLE001 - reported as a mismatch
            return [f"raised {type(e).__name__}: {e}"]
        outs = list(y) if isinstance(y, (list, tuple)) else [y]
        rtol, atol = TOL.get(dtype, (case.rtol32, case.atol32))
        problems = []
        loss = None
        for j, out in enumerate(outs):
            want = g.get(f"{key}|out{j}")
            if want is None:
                return [f"{len(outs)} outputs, PyTorch fewer"]
            p = mismatch(f"out{j}", out.numpy(), want, rtol, atol,
                         self.limit_mask(case, arrays, want))
            if p:
                problems.append(p)
            if f"{key}|up{j}" in g:
                term = uwaga.sum(out * uwaga.tensor(g[f"{key}|up{j}"].copy()))
                loss = term if loss is None else loss + term
        if loss is not None:
            loss.backward()
            for i, x in enumerate(xs):
                want = g.get(f"{key}|grad{i}")
                if want is None:
                    continue
                got = x.grad.numpy() if x.grad is not None else np.zeros_like(want)
                p = mismatch(f"grad{i}", got, want, rtol, atol,
                             self.limit_mask(case, arrays, want))
                if p:
                    problems.append(p)
        return problems

    @staticmethod
    def limit_mask(case, arrays, want):
        """For limits_at_inf cases: the ±inf inputs where PyTorch has NaN."""
        if not case.limits_at_inf or arrays[0].shape != want.shape:
            return None
        return np.isinf(arrays[0]) & np.isnan(want)

    def test_every_case_in_float64_and_float32(self):
        failures = []
        runs = 0
        for case in CASES:
            for dtype in case.dtypes:
                runs += 1
                for p in self.run_case(case, dtype):
                    failures.append(f"{case.name} [{dtype}] {p}")
        print(f"op parity: {runs} runs, {len(failures)} mismatches", file=sys.stderr)
        self.assertFalse(failures, "\n" + "\n".join(failures))


if __name__ == "__main__":
    unittest.main()
