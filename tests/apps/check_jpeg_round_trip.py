#!/usr/bin/python3
"""apps/bench/jpeg_round_trip.py on tiny files (CTest jpeg_round_trip): headers, labels and class
names come through unchanged, every image is the JPEG decoder's output at its own size, a second
pass on the first pass's 8×8 grid changes far less than one with the grid shifted (what
`cifar_recipe.sh jpeg` relies on), and bad arguments are refused with a message.
    /usr/bin/python3 tests/apps/check_jpeg_round_trip.py
Exits 77 (skipped) without numpy or PIL (Debian: python3-numpy, python3-pil)."""
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
    from PIL import Image  # noqa: F401  (the script under test needs it)
except ImportError as e:
    print(f"skipped: {e}")
    sys.exit(77)

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "apps", "bench",
                      "jpeg_round_trip.py")


def run(*args, ok=True):
    p = subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True)
    assert (p.returncode == 0) == ok, f"{args}: exit {p.returncode}\n{p.stdout}{p.stderr}"
    return p.stdout + p.stderr


def natural(count, height, width, channels, rng):
    """Smooth images with edges and a little noise: JPEG loses something, not everything."""
    y, x = np.mgrid[0:height, 0:width]
    out = []
    for i in range(count):
        planes = [128 + 90 * np.sin(x / (2 + i + c) + y / (3 + c)) + 40 * (x > width // 2 + c)
                  + rng.normal(0, 8, (height, width)) for c in range(channels)]
        out.append(np.clip(np.stack(planes, -1), 0, 255).astype(np.uint8))
    return np.stack(out)  # count × H × W × C


def write_idx(directory, images, labels):
    count, rows, cols = images.shape[:3]
    with open(os.path.join(directory, "train-images-idx3-ubyte"), "wb") as f:
        f.write(np.array([0x803, count, rows, cols], dtype=">u4").tobytes() + images.tobytes())
    with open(os.path.join(directory, "train-labels-idx1-ubyte"), "wb") as f:
        f.write(np.array([0x801, count], dtype=">u4").tobytes() + labels.tobytes())


def read(path, offset=0):
    with open(path, "rb") as f:
        return np.frombuffer(f.read(), dtype=np.uint8)[offset:]


rng = np.random.default_rng(0)
with tempfile.TemporaryDirectory() as tmp:
    src, once, again, shifted = (os.path.join(tmp, d) for d in ("src", "once", "again", "shifted"))
    os.makedirs(src)

    # Gray IDX files: header and labels kept, pixels moved by the encoder, not destroyed.
    gray = natural(3, 28, 28, 1, rng)[..., 0]
    labels = np.array([7, 2, 1], dtype=np.uint8)
    write_idx(src, gray, labels)
    print(run(src, once).strip())
    out = read(os.path.join(once, "train-images-idx3-ubyte"))
    header = read(os.path.join(src, "train-images-idx3-ubyte"))[:16]
    assert (out[:16] == header).all(), "the IDX header changed"
    assert (read(os.path.join(once, "train-labels-idx1-ubyte")) ==
            read(os.path.join(src, "train-labels-idx1-ubyte"))).all(), "the labels changed"
    first = out[16:].reshape(gray.shape).astype(float)
    change = np.abs(first - gray).mean()
    assert 0.2 < change < 12, f"a quality-75 pass changed the pixels by {change:.2f} levels on average"
    assert "SOURCE" in os.listdir(once) and "quality-75" in open(os.path.join(once, "SOURCE")).read()

    # On the first pass's grid a second pass changes little; shifted by 4 pixels, about as much
    # as the first one.
    run(once, again)
    run(once, shifted, "--offset", "4")
    same_grid = np.abs(read(os.path.join(again, "train-images-idx3-ubyte"), 16).astype(float) - first.ravel()).mean()
    moved_grid = np.abs(read(os.path.join(shifted, "train-images-idx3-ubyte"), 16).astype(float) - first.ravel()).mean()
    assert same_grid < 0.5 * moved_grid, f"second pass: {same_grid:.2f} levels on the grid, {moved_grid:.2f} shifted"
    print(f"second pass: {same_grid:.2f} levels on the first pass's grid, {moved_grid:.2f} with it shifted by 4")

    # A CIFAR-10 batch: the label bytes and batches.meta.txt kept, the planes still R, G, B.
    cifar_src, cifar_out = os.path.join(tmp, "cifar"), os.path.join(tmp, "cifar-out")
    os.makedirs(cifar_src)
    rgb = natural(4, 32, 32, 3, rng)
    rgb[0, :, :, 0], rgb[0, :, :, 1:] = 250, 5  # image 0 is red: its red plane must stay first
    records = np.concatenate([np.array([[3], [9], [0], [5]], dtype=np.uint8),
                              rgb.transpose(0, 3, 1, 2).reshape(4, 3072)], axis=1)
    records.tofile(os.path.join(cifar_src, "test_batch.bin"))
    with open(os.path.join(cifar_src, "batches.meta.txt"), "w") as f:
        f.write("airplane\n")
    run(cifar_src, cifar_out, "--quality", "90")
    rebuilt = read(os.path.join(cifar_out, "test_batch.bin")).reshape(4, 3073)
    assert (rebuilt[:, 0] == records[:, 0]).all(), "the CIFAR labels changed"
    planes = rebuilt[0, 1:].reshape(3, 32, 32).astype(float).mean(axis=(1, 2))
    assert planes[0] > 200 and planes[1] < 40 and planes[2] < 40, f"the red image's planes: {planes}"
    assert open(os.path.join(cifar_out, "batches.meta.txt")).read() == "airplane\n"

    # Refusals name what is wrong.
    assert "--offset 8" in run(src, os.path.join(tmp, "x"), "--offset", "8", ok=False)
    assert "--quality 0" in run(src, os.path.join(tmp, "x"), "--quality", "0", ok=False)
    assert "neither IDX" in run(tmp, os.path.join(tmp, "x"), ok=False)
    with open(os.path.join(cifar_src, "test_batch.bin"), "ab") as f:
        f.write(b"\0")
    assert "3,073-byte records" in run(cifar_src, os.path.join(tmp, "y"), ok=False)
print("jpeg_round_trip.py: IDX and CIFAR-10 copies as expected")
