#!/usr/bin/env python3
"""A GPT-2 in Hugging Face's layout for the shell tests, written without PyTorch or numpy, and a
tokenizer of its 256 bytes (encoder.json in GPT-2's spelling of bytes, vocab.bpe without merges):

    python3 tests/apps/make_tiny_gpt2.py DIR [--nan TENSOR] [--nul] [--dim D --layers L]

DIR/model.safetensors + config.json   256 tokens, 16 positions, width 64 (or D), 1 layer (or L),
                                      small fixed weights
DIR/tokenizer/                        encoder.json and vocab.bpe
--nan TENSOR   element 5 of TENSOR ("h.0.attn.c_proj.weight") is NaN
--nul          the model's every guess is byte 0 (NUL): ln_f gives 1 everywhere and only wte's
               row of NUL meets it
--sparse       the tensors' bytes are left as a hole in the file (zeros, no disk): for sizes that
               must be refused before anything is read
"""
import argparse
import json
import os
import struct
from array import array

p = argparse.ArgumentParser()
p.add_argument("dir")
p.add_argument("--nan")
p.add_argument("--nul", action="store_true")
p.add_argument("--sparse", action="store_true")
p.add_argument("--dim", type=int, default=64)
p.add_argument("--layers", type=int, default=1)
a = p.parse_args()
V, CTX, D, L = 256, 16, a.dim, a.layers

# GPT-2's printable spelling of the bytes (data/text/bpe_tokenizer.h, bytes_to_unicode).
printable = list(range(33, 127)) + list(range(161, 173)) + list(range(174, 256))
spelling, extra = {}, 0
for b in range(256):
    if b in printable:
        spelling[b] = chr(b)
    else:
        spelling[b] = chr(256 + extra)
        extra += 1
os.makedirs(a.dir + "/tokenizer", exist_ok=True)
with open(a.dir + "/tokenizer/encoder.json", "w") as f:
    json.dump({spelling[b]: b for b in range(256)}, f)  # id b is byte b
with open(a.dir + "/tokenizer/vocab.bpe", "w") as f:
    f.write("#version: 0.2\n")

shapes = {"wte.weight": [V, D], "wpe.weight": [CTX, D]}
for i in range(L):
    h = f"h.{i}."
    shapes.update({h + "ln_1.weight": [D], h + "ln_1.bias": [D],
                   h + "attn.c_attn.weight": [D, 3 * D], h + "attn.c_attn.bias": [3 * D],
                   h + "attn.c_proj.weight": [D, D], h + "attn.c_proj.bias": [D],
                   h + "ln_2.weight": [D], h + "ln_2.bias": [D],
                   h + "mlp.c_fc.weight": [D, 4 * D], h + "mlp.c_fc.bias": [4 * D],
                   h + "mlp.c_proj.weight": [4 * D, D], h + "mlp.c_proj.bias": [D]})
shapes.update({"ln_f.weight": [D], "ln_f.bias": [D]})


def values(name, n):
    if a.nul and name == "ln_f.weight":
        return array("f", [0.0] * n)
    if a.nul and name == "ln_f.bias":
        return array("f", [1.0] * n)
    if a.nul and name == "wte.weight":
        return array("f", [1.0 if k < D else 0.0 for k in range(n)])  # row 0: byte 0
    if name.endswith("ln_1.weight") or name.endswith("ln_2.weight") or name == "ln_f.weight":
        return array("f", [1.0] * n)
    x = array("f", [0.02 * (((k * 7919 + len(name)) % 13) - 6) / 6 for k in range(n)])
    if name == a.nan:
        x[5] = float("nan")
    return x


header, offset = {}, 0
for name, shape in shapes.items():
    n = 1
    for s in shape:
        n *= s
    header["transformer." + name] = {"dtype": "F32", "shape": shape,
                                     "data_offsets": [offset, offset + 4 * n]}
    offset += 4 * n
text = json.dumps(header).encode()
text += b" " * (-len(text) % 8)
with open(a.dir + "/model.safetensors", "wb") as f:
    f.write(struct.pack("<Q", len(text)) + text)
    if a.sparse:
        f.truncate(8 + len(text) + offset)
    else:
        for name, shape in shapes.items():
            n = 1
            for s in shape:
                n *= s
            values(name, n).tofile(f)
with open(a.dir + "/config.json", "w") as f:
    json.dump({"n_embd": D, "n_layer": L, "n_head": max(1, D // 64), "n_positions": CTX,
               "vocab_size": V, "activation_function": "gelu_new"}, f)
