#!/usr/bin/python3
"""Writes tests/golden/auto_augment.safetensors: torchvision 0.14's AutoAugment with its CIFAR-10
policy (torchvision/transforms/autoaugment.py, AutoAugmentPolicy.CIFAR10) on a CIFAR-sized uint8
image, every sub-policy with every outcome of its draws, for data/images/auto_augment.h.

    /usr/bin/python3 tests/golden/make_auto_augment_golden.py

Needs Debian's python3-torch and python3-torchvision. AutoAugment.forward draws a sub-policy i
(of 25), two uniforms u_1, u_2 and two sign bits s_1, s_2; op j of sub-policy i runs when
u_j <= p_j, at magnitude bin b_j of 10, negated when the op is signed and s_j == 0. Here the
draws are not drawn but enumerated: each sub-policy with op 1 alone, op 2 alone and both, each
signed op at both signs, through AutoAugment.forward with its get_params replaced. Keys:
    input               (3, 32, 32) I64   the image, seeded
    policy.op           (25, 2) I64       the ops' indices in OPS below
    policy.probability  (25, 2) F64       p_j
    policy.bin          (25, 2) I64       b_j, -1 for the ops without a magnitude
    table.<Op>          (10,) F64         AutoAugment's magnitude bins of <Op> for a 32 x 32
                                          image, 0 for the ops without a magnitude
    case.<n>            (5,) I64          sub-policy, applied_1, applied_2, negated_1, negated_2
    output.<n>          (3, 32, 32) I64   the image after case n, its bytes packed eight to an
                                          I64 (little-endian, numpy's view): 384 values
"""
import os
import sys
import zlib

import numpy as np
import torch
from torchvision.transforms import autoaugment as aa

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_golden import save_safetensors  # noqa: E402

# uwaga's AugmentOp order (data/images/auto_augment.h): torchvision's RandAugment order, then
# Invert, which only AutoAugment uses.
OPS = ["Identity", "ShearX", "ShearY", "TranslateX", "TranslateY", "Rotate", "Brightness",
       "Color", "Contrast", "Sharpness", "Posterize", "Solarize", "AutoContrast", "Equalize",
       "Invert"]
BINS = 10


def cifar_like_image():
    """A 32 x 32 RGB picture with what CIFAR photos have: smooth gradients, a bright object on a
    darker ground, edges, a flat patch and some noise; not the full 0..255 range, so AutoContrast
    and Equalize change it."""
    y, x = torch.meshgrid(torch.arange(32.0), torch.arange(32.0), indexing="ij")
    sky = torch.stack([60 + 2.0 * y, 90 + 1.5 * y, 150 - 1.0 * y])
    blob = (((y - 19) ** 2 + (x - 13) ** 2) < 60).float()
    obj = torch.stack([200 - 2.0 * x, 120 + 1.0 * x, 40 + 0.5 * y])
    img = sky * (1 - blob) + obj * blob
    img[:, 3:9, 22:29] = torch.tensor([30.0, 170.0, 90.0]).view(3, 1, 1)  # a flat patch
    img += torch.randint(-12, 13, img.shape).float()
    return img.clamp(20, 235).round().to(torch.uint8)


def main():
    torch.manual_seed(zlib.crc32(b"auto_augment"))
    image = cifar_like_image()
    augment = aa.AutoAugment(aa.AutoAugmentPolicy.CIFAR10)
    space = augment._augmentation_space(BINS, (32, 32))
    out = {"input": image.long().numpy()}
    ops, probabilities, bins = [], [], []
    for sub in augment.policies:
        ops.append([OPS.index(name) for name, _, _ in sub])
        probabilities.append([p for _, p, _ in sub])
        bins.append([-1 if b is None else b for _, _, b in sub])
    out["policy.op"] = np.array(ops, dtype=np.int64)
    out["policy.probability"] = np.array(probabilities, dtype=np.float64)
    out["policy.bin"] = np.array(bins, dtype=np.int64)
    for name in OPS[1:]:
        magnitudes, _signed = space[name]
        values = magnitudes.double() if magnitudes.ndim > 0 else torch.zeros(BINS, dtype=torch.float64)
        out[f"table.{name}"] = values.numpy()

    n = 0
    for i, sub in enumerate(augment.policies):
        signed = [b is not None and space[name][1] for name, _, b in sub]
        for applied in [(1, 0), (0, 1), (1, 1)]:
            for negated in [(0, 0), (1, 0), (0, 1), (1, 1)]:
                # A sign matters only for a signed op that runs.
                if any(g and not (a and s) for a, s, g in zip(applied, signed, negated)):
                    continue
                # forward itself, its draws replaced: u_j = 0 runs op j (u_j <= p_j), 1 skips it
                # (no CIFAR-10 p_j is 1); s_j = 0 negates.
                u = torch.tensor([0.0 if a else 1.0 for a in applied])
                s = torch.tensor([0 if g else 1 for g in negated])
                augment.get_params = lambda count, i=i, u=u, s=s: (i, u, s)
                img = augment(image)
                out[f"case.{n}"] = np.array([i, *applied, *negated], dtype=np.int64)
                out[f"output.{n}"] = img.contiguous().numpy().reshape(-1).view("<i8").copy()
                n += 1
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "auto_augment.safetensors")
    save_safetensors(path, out, {"generator": "make_auto_augment_golden.py",
                                 "torchvision": __import__("torchvision").__version__,
                                 "cases": str(n)})
    print("wrote", path, n, "cases")


if __name__ == "__main__":
    main()
