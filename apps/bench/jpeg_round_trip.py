#!/usr/bin/python3
"""Writes a copy of an image dataset whose every image went once through a JPEG encoder and back.

The CIFAR-10 copy uwaga is measured on was rebuilt from quality-75 JPEGs. What that costs a model
can be measured where the original exists (Fashion-MNIST), and what one more pass costs on the
copy itself: train on both, the same seed, side by side (apps/bench/cifar_recipe.sh jpeg).

    jpeg_round_trip.py SRC DST [--quality Q] [--offset K]

SRC holds Fashion-MNIST / MNIST (the four IDX files: images re-encoded, labels copied) or
CIFAR-10 in its binary format (data_batch_*.bin, test_batch.bin re-encoded; batches.meta.txt
copied). Gray images are encoded as one-channel JPEGs, colour ones as PIL does by default at this
quality (YCbCr with 4:2:0 chroma subsampling, libjpeg's standard tables scaled to Q).
--offset K shifts JPEG's 8×8 block grid by K pixels (the image is padded by edge pixels at the
top and left before encoding and cropped back after decoding), so that a second pass over an
already-compressed copy loses about as much as a first one: with the grid where the first pass
put it, re-encoding at the same quality changes little.
"""
import argparse
import io
import os
import shutil
import sys

import numpy as np
from PIL import Image


def round_trip(image, quality, offset):
    """image: uint8 array H×W (gray) or H×W×3 (RGB); the decoded JPEG at the same size."""
    if offset:
        pad = [(offset, 0), (offset, 0)] + ([(0, 0)] if image.ndim == 3 else [])
        image = np.pad(image, pad, mode="edge")
    buffer = io.BytesIO()
    Image.fromarray(image).save(buffer, format="JPEG", quality=quality)
    decoded = np.asarray(Image.open(io.BytesIO(buffer.getvalue())))
    return decoded[offset:, offset:]


def idx_images(src, dst, quality, offset):
    with open(src, "rb") as f:
        header = f.read(16)
        magic, count, rows, cols = np.frombuffer(header, dtype=">u4")
        if magic != 0x803:
            sys.exit(f"{src}: not an IDX image file (magic {magic:#x}, expected 0x803)")
        images = np.frombuffer(f.read(), dtype=np.uint8)
    if images.size != count * rows * cols:
        sys.exit(f"{src}: {images.size} pixel bytes, the header says {count}×{rows}×{cols}")
    images = images.reshape(count, rows, cols)
    out = np.stack([round_trip(im, quality, offset) for im in images])
    with open(dst, "wb") as f:
        f.write(header)
        f.write(out.tobytes())
    return images, out


def cifar_batch(src, dst, quality, offset):
    records = np.fromfile(src, dtype=np.uint8)
    if records.size % 3073:
        sys.exit(f"{src}: {records.size} bytes is not a whole number of 3,073-byte records")
    records = records.reshape(-1, 3073)
    images = records[:, 1:].reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1)  # to H×W×RGB
    out = np.stack([round_trip(np.ascontiguousarray(im), quality, offset) for im in images])
    rebuilt = records.copy()
    rebuilt[:, 1:] = out.transpose(0, 3, 1, 2).reshape(-1, 3072)
    rebuilt.tofile(dst)
    return images, out


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("src")
    p.add_argument("dst")
    p.add_argument("--quality", type=int, default=75)
    p.add_argument("--offset", type=int, default=0, help="shift of the 8×8 block grid, 0-7")
    a = p.parse_args()
    if not 1 <= a.quality <= 95:
        sys.exit(f"--quality {a.quality}: expected 1..95")
    if not 0 <= a.offset <= 7:
        sys.exit(f"--offset {a.offset}: expected 0..7")
    names = sorted(os.listdir(a.src))
    idx = [n for n in names if n.endswith("-images-idx3-ubyte")]
    cifar = [n for n in names if n.endswith(".bin")]
    if not idx and not cifar:
        sys.exit(f"{a.src}: neither IDX image files (*-images-idx3-ubyte) nor CIFAR-10 batches (*.bin)")
    os.makedirs(a.dst, exist_ok=True)
    for name in names:
        src, dst = os.path.join(a.src, name), os.path.join(a.dst, name)
        if name in idx or name in cifar:
            before, after = (idx_images if name in idx else cifar_batch)(src, dst, a.quality, a.offset)
            diff = before.astype(np.float64) - after
            psnr = 10 * np.log10(255.0 ** 2 / np.mean(diff ** 2))
            print(f"{name}: {len(before)} images, quality {a.quality}, grid offset {a.offset}: "
                  f"mean |difference| {np.mean(np.abs(diff)):.2f} levels, PSNR {psnr:.1f} dB")
        elif os.path.isfile(src) and not name.startswith(".") and name not in ("SOURCE", "SHA256SUMS"):
            shutil.copyfile(src, dst)  # labels, class names
    with open(os.path.join(a.dst, "SOURCE"), "w") as f:
        f.write(f"jpeg-round-trip of {os.path.abspath(a.src)}: every image encoded as a "
                f"quality-{a.quality} JPEG (block grid offset {a.offset}) and decoded\n")


if __name__ == "__main__":
    main()
