#!/usr/bin/python3
"""Writes tests/golden/image_ops.safetensors: torchvision 0.14's answers for the image ops of
data/images/image_ops.h and data/images/auto_augment.h, on uint8 tensors (the functional_tensor path).

    /usr/bin/python3 tests/golden/make_image_ops_golden.py

Needs Debian's python3-torch and python3-torchvision. Keys (all I64 except the F64 magnitudes):
    input.rgb (3, 12, 10), input.grey (1, 9, 11)        the images, seeded
    magnitude.<Op>.<k>   (1,)  the signed magnitude case k of op <Op> (torchvision's name)
    output.<Op>.<k>.<rgb|grey>  torchvision's _apply_op(image, <Op>, magnitude), NEAREST, no fill
    crop.<k>             (6,)  top, left, h, w, out_h, out_w
    output.crop.<k>.<rgb|grey>  F.resized_crop(image, ..., BILINEAR, antialias=False)
    table.<ra|ta>.<Op>   (31,) the op's magnitude bins for a 32 x 32 image (RandAugment,
                               TrivialAugmentWide), 0 for ops without a magnitude
"""
import os
import sys
import zlib

import torch
from torchvision.transforms import InterpolationMode
from torchvision.transforms import autoaugment as aa
from torchvision.transforms import functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_golden import save_safetensors  # noqa: E402

OPS = ["Identity", "ShearX", "ShearY", "TranslateX", "TranslateY", "Rotate", "Brightness",
       "Color", "Contrast", "Sharpness", "Posterize", "Solarize", "AutoContrast", "Equalize"]
# Signed magnitudes worth checking: both signs, small and extreme (TrivialAugment-Wide's range).
MAGNITUDES = {
    "Identity": [0.0],
    "ShearX": [0.3, -0.3, 0.99, -0.12],
    "ShearY": [0.3, -0.3, 0.99, -0.12],
    "TranslateX": [3.0, -3.0, 4.6, -32.0, 9.9],
    "TranslateY": [3.0, -3.0, 4.6, -32.0, 9.9],
    "Rotate": [30.0, -30.0, 135.0, -7.5, 90.0],
    "Brightness": [0.9, -0.9, 0.33, -0.99, 0.0],
    "Color": [0.9, -0.9, 0.33, -0.99],
    "Contrast": [0.9, -0.9, 0.33, -0.99],
    "Sharpness": [0.9, -0.9, 0.33, -0.99],
    "Posterize": [8.0, 6.0, 4.0, 2.0, 1.0],
    "Solarize": [255.0, 128.0, 17.0, 0.0],
    "AutoContrast": [0.0],
    "Equalize": [0.0],
}
CROPS = [(0, 0, 12, 10, 12, 10), (2, 1, 6, 5, 12, 10), (3, 4, 4, 3, 7, 9), (0, 2, 9, 8, 12, 10)]


def main():
    torch.manual_seed(zlib.crc32(b"image_ops"))
    rgb = torch.randint(0, 256, (3, 12, 10), dtype=torch.uint8)
    rgb[:, 4:8, 3:7] = torch.tensor([200, 40, 90], dtype=torch.uint8).view(3, 1, 1)  # flat patch
    grey = torch.randint(30, 220, (1, 9, 11), dtype=torch.uint8)
    images = {"rgb": rgb, "grey": grey}
    out = {"input.rgb": rgb.long().numpy(), "input.grey": grey.long().numpy()}
    for op in OPS:
        for k, m in enumerate(MAGNITUDES[op]):
            out[f"magnitude.{op}.{k}"] = torch.tensor([m], dtype=torch.float64).numpy()
            for name, img in images.items():
                y = aa._apply_op(img, op, m, interpolation=InterpolationMode.NEAREST, fill=None)
                out[f"output.{op}.{k}.{name}"] = y.long().numpy()
    for k, (top, left, h, w, oh, ow) in enumerate(CROPS):
        out[f"crop.{k}"] = torch.tensor([top, left, h, w, oh, ow], dtype=torch.int64).numpy()
        for name, img in images.items():
            hh, ww = img.shape[1:]
            t, l, ch, cw = min(top, hh - 1), min(left, ww - 1), min(h, hh - top), min(w, ww - left)
            y = F.resized_crop(img, t, l, ch, cw, [oh, ow], InterpolationMode.BILINEAR,
                               antialias=False)
            out[f"output.crop.{k}.{name}"] = y.long().numpy()
    for tag, policy in [("ra", aa.RandAugment()), ("ta", aa.TrivialAugmentWide())]:
        space = (policy._augmentation_space(31, (32, 32)) if tag == "ra"
                 else policy._augmentation_space(31))
        for op in OPS:
            mags, _signed = space[op]
            values = mags.double() if mags.ndim > 0 else torch.zeros(31, dtype=torch.float64)
            out[f"table.{tag}.{op}"] = values.numpy()
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "image_ops.safetensors")
    save_safetensors(path, out, {"generator": "make_image_ops_golden.py",
                                 "torchvision": __import__("torchvision").__version__})
    print("wrote", path, len(out), "tensors")


if __name__ == "__main__":
    main()
