"""Writes tests/golden/op_parity.npz: PyTorch's outputs and gradients for every case of
op_parity_cases.py, in float64 and float32 (test_op_parity.py compares uwaga with them).

    /usr/bin/python3 tests/python/make_op_parity_golden.py

Needs Debian's python3-torch (1.13) and numpy. Inputs are drawn from a seed per case and dtype
(crc32 of its name), so a rerun writes the same values. For each case and dtype the file holds
  <case>|<dtype>|in<i>     the inputs            <case>|<dtype>|up<j>    upstream gradient of output j
  <case>|<dtype>|out<j>    the outputs           <case>|<dtype>|grad<i>  dL/d input i, L = Σ_j Σ out_j·up_j
  <case>|<dtype>|error     present when torch refused the inputs (uwaga must refuse them too)
"""
import json
import os
import sys
import zlib

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from op_parity_cases import CASES, inputs_for  # noqa: E402

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "golden", "op_parity.npz")


def as_list(y):
    return list(y) if isinstance(y, (list, tuple)) else [y]


def run_case(case, dtype, store):
    key = f"{case.name}|{dtype}"
    arrays = inputs_for(case, dtype)
    for i, a in enumerate(arrays):
        store[f"{key}|in{i}"] = a
    xs = []
    for a in arrays:
        t = torch.from_numpy(a.copy())
        if case.grad and t.is_floating_point():
            t.requires_grad_()
        xs.append(t)
    try:
        outs = as_list(case.th(torch, *xs))
    except (RuntimeError, IndexError, ValueError) as e:
        store[f"{key}|error"] = np.array(str(e).splitlines()[0])
        return
    rng = np.random.default_rng(zlib.crc32(f"{key}|up".encode()))
    loss = None
    for j, y in enumerate(outs):
        store[f"{key}|out{j}"] = y.detach().numpy().copy()
        if case.grad and y.is_floating_point() and y.requires_grad:
            up = rng.standard_normal(tuple(y.shape)).astype(dtype)
            store[f"{key}|up{j}"] = up
            term = (y * torch.from_numpy(up)).sum()
            loss = term if loss is None else loss + term
    if loss is not None:
        loss.backward()
        for i, x in enumerate(xs):
            if x.requires_grad:
                g = x.grad if x.grad is not None else torch.zeros_like(x)
                store[f"{key}|grad{i}"] = g.numpy().copy()


def save(store):
    """All arrays in one compressed blob plus a JSON index (one file entry per array would
    spend more on headers than on the numbers)."""
    index, chunks, offset = {}, [], 0
    for key, a in store.items():
        a = np.array(a, order="C")  # (np.ascontiguousarray would make a 0-d array 1-d)
        raw = a.tobytes() if a.dtype.kind != "U" else str(a).encode()
        index[key] = [a.dtype.str if a.dtype.kind != "U" else "str", list(a.shape), offset, len(raw)]
        chunks.append(raw)
        offset += len(raw)
    np.savez_compressed(OUT, index=np.array(json.dumps(index)),
                        data=np.frombuffer(b"".join(chunks), dtype=np.uint8))


def main():
    torch.set_num_threads(1)
    store = {}
    names = set()
    for case in CASES:
        if case.name in names:
            sys.exit(f"make_op_parity_golden: two cases named {case.name!r}")
        names.add(case.name)
        for dtype in case.dtypes:
            run_case(case, dtype, store)
    save(store)
    errors = sum(1 for k in store if k.endswith("|error"))
    print(f"wrote {os.path.normpath(OUT)}: {len(CASES)} cases, {len(store)} arrays, "
          f"{errors} refused by torch (torch {torch.__version__})")


if __name__ == "__main__":
    main()
