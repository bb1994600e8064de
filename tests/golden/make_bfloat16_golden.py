#!/usr/bin/python3
"""Writes tests/golden/bfloat16_rounding.safetensors: PyTorch 1.13's float32 -> bfloat16
conversion (tensor.to(torch.bfloat16)) of chosen and of random float32 bit patterns, for
core/bfloat16.h's rules (tests/core/test_bfloat16.cpp); and
tests/golden/bfloat16_tensor.safetensors: a torch.bfloat16 tensor stored as a BF16 entry, for
uwaga's bfloat16 tensors (tests/core/test_bfloat16_tensor.cpp).

    /usr/bin/python3 tests/golden/make_bfloat16_golden.py

Keys (I64, one value per pattern):
    input.float32_bits    the float32 bit patterns: the edge cases below, then random 32-bit words
                          (every exponent: denormals, NaNs with payloads and infinities among them)
                          and random floats near powers of two and at exact ties
    output.bfloat16_bits  PyTorch's bfloat16 of each (NaN: PyTorch writes a NaN of its own, 0xFFFF
                          in 1.13; uwaga keeps the input's sign and top payload bits, quieted, so
                          the test asks only for a NaN there)

bfloat16_tensor.safetensors (no NaN, so that the bytes can be compared whole):
    input.x     F32 (4, 8): edge values (±0, ±inf, ties, the largest finite bfloat16, values that
                round to inf, denormals) and random normals of every scale
    output.x    BF16 (4, 8): x.to(torch.bfloat16), its bits written as PyTorch holds them
                (x.to(torch.bfloat16).view(torch.int16)); NumPy has no bfloat16
"""
import os
import sys
import zlib

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_golden import save_safetensors  # noqa: E402

EDGES = [
    0x00000000, 0x80000000,              # ±0
    0x3F800000, 0xBF800000,              # ±1
    0x3F808000, 0x3F818000,              # ties: to even down (0x3F80), to even up (0x3F82)
    0x3F808001, 0x3F807FFF,              # just above and below a tie
    0x3F80FFFF, 0x3FFFFFFF,              # carries into the exponent
    0x7F7F7FFF, 0x7F7F8000, 0x7F7FFFFF,  # the largest finite bf16, and rounding past it to inf
    0x7F800000, 0xFF800000,              # ±inf
    0x7FC00000, 0xFFC00000, 0x7F800001, 0x7FBFFFFF, 0xFFC12345, 0x7FFFFFFF,  # NaNs
    0x00000001, 0x00007FFF, 0x00008000, 0x00018000, 0x007FFFFF, 0x807FFFFF,  # denormals
    0x00800000, 0x80800000,              # the smallest normals
]


def main():
    rng = np.random.default_rng(zlib.crc32(b"bfloat16_rounding"))
    random_words = rng.integers(0, 2**32, size=4000, dtype=np.uint64).astype(np.uint32)
    # ties and near-ties on random upper halves: low half 0x8000, 0x7FFF, 0x8001
    upper = rng.integers(0, 2**16, size=600, dtype=np.uint64).astype(np.uint32) << 16
    near = np.concatenate([upper | 0x8000, upper | 0x7FFF, upper | 0x8001])
    bits = np.concatenate([np.array(EDGES, dtype=np.uint32), random_words, near])
    values = torch.from_numpy(bits.view(np.float32).copy())
    bf16 = values.to(torch.bfloat16).view(torch.int16).numpy().astype(np.uint16)
    out = {"input.float32_bits": bits.astype(np.int64),
           "output.bfloat16_bits": bf16.astype(np.int64)}
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bfloat16_rounding.safetensors")
    save_safetensors(path, out, {"generator": "tests/golden/make_bfloat16_golden.py",
                                 "torch": torch.__version__})
    print(f"wrote {path}: {len(bits)} patterns")
    write_tensor_file(rng)


def write_tensor_file(rng):
    edges = np.array([0x00000000, 0x80000000, 0x7F800000, 0xFF800000,  # ±0, ±inf
                      0x3F808000, 0x3F818000, 0xBF808001,  # ties to even, just above one
                      0x7F7F7FFF, 0x7F7F8000, 0x7F7FFFFF,  # the largest finite, then to inf
                      0x00000001, 0x00018000, 0x807FFFFF, 0x00800000],  # denormals, a normal
                     dtype=np.uint32).view(np.float32)
    scales = 10.0 ** rng.integers(-30, 30, size=32 - len(edges))
    normals = (rng.standard_normal(32 - len(edges)) * scales).astype(np.float32)
    x = torch.from_numpy(np.concatenate([edges, normals]).reshape(4, 8))
    bits = x.to(torch.bfloat16).view(torch.int16).numpy().view(np.uint16)
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bfloat16_tensor.safetensors")
    save_safetensors(path, {"input.x": x.numpy(), "output.x": bits}, {
        "generator": "tests/golden/make_bfloat16_golden.py", "torch": torch.__version__},
        dtypes={"output.x": "BF16"})
    print(f"wrote {path}: {x.numel()} values")


if __name__ == "__main__":
    main()
