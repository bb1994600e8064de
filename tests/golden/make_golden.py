#!/usr/bin/python3
"""Writes the golden files uwaga's parity tests compare against: PyTorch's outputs and gradients
for each module, optimizer and schedule, in float64, as tests/golden/<name>.safetensors.

Regenerate with (Debian's python3-torch and python3-numpy; no safetensors package needed):

    /usr/bin/python3 tests/golden/make_golden.py

Naming scheme inside each file (see README.md for the per-file list):
    input.<name>              inputs of the forward pass (x, m for a memory, key_padding_mask)
    param.<state_dict name>   the module's parameters, named exactly as in its PyTorch state_dict
    upstream.y                a random upstream gradient dL/dy
    output.<name>             outputs (y; attn for attention weights; loss)
    grad.input.<name>         dL/d input, for L = (y * upstream.y).sum()
    grad.param.<name>         dL/d parameter, same L
    buffer.<name>             buffers before the forward pass (BatchNorm's running statistics)
    buffer_after.<name>       buffers after it (training mode updates them)
    __metadata__              the configuration, every value a string ("dim": "8", ...)

The modules are written out below in PyTorch with the names and math the C++ mirrors:

  MultiHeadAttention (not nn.MultiheadAttention), D = dim, H = heads, d_k = D / H:
    self-attention:  qkv = Linear(D, 3D); qkv(x) (B, T, 3D) -> reshape (B, T, 3, H, d_k)
                     -> permute (3, B, H, T, d_k) -> q, k, v
    cross-attention: q = Linear(D, D);   q(x) (B, T, D) -> reshape (B, T, H, d_k) -> (B, H, T, d_k)
                     kv = Linear(D, 2D); kv(m) (B, S, 2D) -> reshape (B, S, 2, H, d_k)
                     -> permute (2, B, H, S, d_k) -> k, v
    E = q k^T / sqrt(d_k)                                              (B, H, T, S)
    E[..., t, s] = -inf where s > t (causal) or key_padding_mask[b, s] (True = padded key)
    A = softmax(E, -1);  Y = A v (B, H, T, d_k) -> transpose (B, T, H, d_k) -> (B, T, D)
    y = proj(Y) with proj = Linear(D, D)

  MLP: fc1 = Linear(D, hidden), exact GELU (erf), fc2 = Linear(hidden, D).

  EncoderBlock (pre-LN, as in ViT):
    z1 = x + attn(norm1(x));  y = z1 + mlp(norm2(z1))
  DecoderBlock (pre-LN):
    z1 = x + self_attn(norm1(x))                        (causal mask)
    z2 = z1 + cross_attn(norm2(z1), m)                  (m used as is; key padding mask on m)
    y  = z2 + mlp(norm3(z2))

  Cross-entropy (mean over the rows whose target is not ignore_index, label smoothing eps,
  C classes, p = softmax(logits)):
    loss = mean_i [ (1 - eps) * (-log p[i, y_i]) + eps * (-(1/C) sum_c log p[i, c]) ]

  Warmup-cosine learning-rate schedule, step t = 0, 1, ..., total - 1 (this is the contract the
  C++ schedule must meet):
    lr(t) = base * (t + 1) / warmup                                           for t < warmup
    lr(t) = floor + (base - floor) * 0.5 * (1 + cos(pi * (t - warmup) / (total - warmup)))
                                                                              for t >= warmup
  with base = 1e-3, warmup = 10, total = 50, floor = 1e-5.

Every file is deterministic: each generator seeds torch with a fixed per-file seed.
"""

import json
import math
import os
import struct
import sys
import zlib

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))

# ---- the safetensors format, by hand (struct + json + numpy) ---------------------------------

# BF16 has no NumPy dtype: its tensors travel as their bit patterns, uint16.
NUMPY_DTYPES = {"F32": np.dtype("<f4"), "F64": np.dtype("<f8"), "I64": np.dtype("<i8"),
                "BF16": np.dtype("<u2")}


def save_safetensors(path, tensors, metadata=None, dtypes=None):
    """tensors: {name: numpy array of float32/float64/int64}; metadata: {str: str};
    dtypes: {name: "BF16"} for the tensors given as uint16 arrays of bfloat16 bit patterns."""
    header, chunks, offset = {}, [], 0
    for name in sorted(tensors):
        a = np.asarray(tensors[name])
        code = (dtypes or {}).get(name) or {np.dtype("float32"): "F32", np.dtype("float64"): "F64",
                                            np.dtype("int64"): "I64"}[a.dtype]
        data = np.ascontiguousarray(a, dtype=NUMPY_DTYPES[code]).tobytes()
        header[name] = {"dtype": code, "shape": list(a.shape),
                        "data_offsets": [offset, offset + len(data)]}
        chunks.append(data)
        offset += len(data)
    if metadata:
        assert all(isinstance(k, str) and isinstance(v, str) for k, v in metadata.items())
        header["__metadata__"] = dict(sorted(metadata.items()))
    text = json.dumps(header, separators=(",", ":"), sort_keys=True).encode("utf-8")
    text += b" " * ((8 - len(text) % 8) % 8)
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for data in chunks:
            f.write(data)
    os.replace(tmp, path)


def load_safetensors(path):
    """Returns ({name: numpy array}, metadata); checks that the byte ranges tile the data."""
    with open(path, "rb") as f:
        blob = f.read()
    (n,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + n].decode("utf-8"))
    data = blob[8 + n:]
    metadata = header.pop("__metadata__", {})
    tensors, end = {}, 0
    for name, info in sorted(header.items(), key=lambda kv: kv[1]["data_offsets"]):
        begin, stop = info["data_offsets"]
        assert begin == end, f"{path}: gap or overlap before {name}"
        dtype = NUMPY_DTYPES[info["dtype"]]
        shape = tuple(info["shape"])
        assert stop - begin == int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        tensors[name] = np.frombuffer(data[begin:stop], dtype=dtype).reshape(shape)
        end = stop
    assert end == len(data), f"{path}: trailing bytes"
    return tensors, metadata


# ---- PyTorch reference modules -----------------------------------------------------------------

def define_modules():
    import torch
    from torch import nn
    import torch.nn.functional as F

    class MultiHeadAttention(nn.Module):
        def __init__(self, dim, heads, cross=False):
            super().__init__()
            assert dim % heads == 0
            self.dim, self.heads, self.d_k, self.cross = dim, heads, dim // heads, cross
            if cross:
                self.q = nn.Linear(dim, dim)
                self.kv = nn.Linear(dim, 2 * dim)
            else:
                self.qkv = nn.Linear(dim, 3 * dim)
            self.proj = nn.Linear(dim, dim)

        def forward(self, x, m=None, causal=False, key_padding_mask=None):
            B, T, D = x.shape
            H, d_k = self.heads, self.d_k
            if self.cross:
                S = m.shape[1]
                q = self.q(x).reshape(B, T, H, d_k).transpose(1, 2)              # (B, H, T, d_k)
                kv = self.kv(m).reshape(B, S, 2, H, d_k).permute(2, 0, 3, 1, 4)  # (2, B, H, S, d_k)
                k, v = kv[0], kv[1]
            else:
                S = T
                qkv = self.qkv(x).reshape(B, T, 3, H, d_k).permute(2, 0, 3, 1, 4)  # (3, B, H, T, d_k)
                q, k, v = qkv[0], qkv[1], qkv[2]
            E = q @ k.transpose(-2, -1) / math.sqrt(d_k)                         # (B, H, T, S)
            if causal:
                future = torch.triu(torch.ones(T, S, dtype=torch.bool), diagonal=1)
                E = E.masked_fill(future, float("-inf"))
            if key_padding_mask is not None:                                     # (B, S) bool
                E = E.masked_fill(key_padding_mask[:, None, None, :], float("-inf"))
            A = torch.softmax(E, dim=-1)                                         # (B, H, T, S)
            Y = (A @ v).transpose(1, 2).reshape(B, T, D)                         # (B, T, D)
            return self.proj(Y), A

    class MLP(nn.Module):
        def __init__(self, dim, hidden):
            super().__init__()
            self.fc1 = nn.Linear(dim, hidden)
            self.act = nn.GELU()  # exact, erf-based
            self.fc2 = nn.Linear(hidden, dim)

        def forward(self, x):
            return self.fc2(self.act(self.fc1(x)))

    class EncoderBlock(nn.Module):
        def __init__(self, dim, heads, hidden):
            super().__init__()
            self.norm1 = nn.LayerNorm(dim, eps=1e-5)
            self.attn = MultiHeadAttention(dim, heads)
            self.norm2 = nn.LayerNorm(dim, eps=1e-5)
            self.mlp = MLP(dim, hidden)

        def forward(self, x):
            z1 = x + self.attn(self.norm1(x))[0]
            return z1 + self.mlp(self.norm2(z1))

    class DecoderBlock(nn.Module):
        def __init__(self, dim, heads, hidden):
            super().__init__()
            self.norm1 = nn.LayerNorm(dim, eps=1e-5)
            self.self_attn = MultiHeadAttention(dim, heads)
            self.norm2 = nn.LayerNorm(dim, eps=1e-5)
            self.cross_attn = MultiHeadAttention(dim, heads, cross=True)
            self.norm3 = nn.LayerNorm(dim, eps=1e-5)
            self.mlp = MLP(dim, hidden)

        def forward(self, x, m, memory_key_padding_mask=None):
            z1 = x + self.self_attn(self.norm1(x), causal=True)[0]
            z2 = z1 + self.cross_attn(self.norm2(z1), m,
                                      key_padding_mask=memory_key_padding_mask)[0]
            return z2 + self.mlp(self.norm3(z2))

    class VisionTransformer(nn.Module):
        """SEEDS §6 with timm's names; patches flattened as (P, P, C), channels innermost. With
        conv_stem, log2 P 3×3 stride-2 convolutions with ReLU (widths doubling up to D/2), then
        a Linear on each grid cell take the patch embedding's place (nn/vit_backbone.h). With
        stem "cct", CCT's tokenizer: log2 P 3×3 stride-1 convolutions without bias (widths D/2,
        the last D), each with ReLU and a 3×3 stride-2 max pooling, then the Linear. With pool
        "seq", no class token: CCT's SeqPool, softmax(attention_pool(LN(z)))ᵀ LN(z)."""
        def __init__(self, image, channels, patch, dim, depth, heads, hidden, classes,
                     conv_stem=False, stem="patch", pool="cls"):
            super().__init__()
            stem = "conv" if conv_stem else stem
            self.patch, n = patch, (image // patch) ** 2
            self.stem, self.cct, self.pool = None, stem == "cct", pool
            if stem != "patch":
                layers = patch.bit_length() - 1  # log2 P
                if self.cct:
                    widths = [channels] + [dim // 2] * (layers - 1) + [dim]
                    self.stem = nn.ModuleList(nn.Conv2d(widths[i], widths[i + 1], 3, stride=1,
                                                        padding=1, bias=False)
                                              for i in range(layers))
                else:
                    widths = [channels] + [dim >> (layers + 1 - i) for i in range(1, layers + 1)]
                    self.stem = nn.ModuleList(nn.Conv2d(widths[i], widths[i + 1], 3, stride=2,
                                                        padding=1)
                                              for i in range(layers))
                self.patch_embed = nn.Linear(widths[-1], dim)
            else:
                self.patch_embed = nn.Linear(patch * patch * channels, dim)
            if pool == "cls":
                self.cls_token = nn.Parameter(0.02 * torch.randn(1, 1, dim))
            self.pos_embed = nn.Parameter(0.02 * torch.randn(1, n + (pool == "cls"), dim))
            self.blocks = nn.ModuleList([EncoderBlock(dim, heads, hidden) for _ in range(depth)])
            self.norm = nn.LayerNorm(dim, eps=1e-5)
            if pool == "seq":
                self.attention_pool = nn.Linear(dim, 1)
            self.head = nn.Linear(dim, classes)

        def forward(self, images):
            B, C, H, W = images.shape
            P = self.patch
            if self.stem is not None:
                x = images
                for conv in self.stem:
                    x = torch.relu(conv(x))
                    if self.cct:
                        x = nn.functional.max_pool2d(x, 3, stride=2, padding=1)
                x = self.patch_embed(x.flatten(2).transpose(1, 2))  # grid cells in raster order
            else:
                x = images.reshape(B, C, H // P, P, W // P, P).permute(0, 2, 4, 3, 5, 1)
                x = self.patch_embed(x.reshape(B, (H // P) * (W // P), P * P * C))
            if self.pool == "cls":
                x = torch.cat([self.cls_token.expand(B, 1, -1), x], dim=1)
            z = x + self.pos_embed
            for block in self.blocks:
                z = block(z)
            if self.pool == "cls":
                return self.head(self.norm(z[:, 0]))
            y = self.norm(z)
            a = torch.softmax(self.attention_pool(y), dim=1)  # (B, T, 1)
            return self.head((a.transpose(1, 2) @ y).squeeze(1))

    class Gpt(nn.Module):
        """A decoder-only GPT (nn/gpt.h): token + learned position embeddings, pre-LN blocks
        with causal self-attention, a final LayerNorm and a bias-free head (or the token table,
        tied)."""
        def __init__(self, vocab, context, dim, layers, heads, hidden, tie_weights):
            super().__init__()
            self.token_embed = nn.Embedding(vocab, dim)
            self.pos_embed = nn.Embedding(context, dim)
            self.blocks = nn.ModuleList([EncoderBlock(dim, heads, hidden) for _ in range(layers)])
            self.norm = nn.LayerNorm(dim, eps=1e-5)
            self.head = None if tie_weights else nn.Linear(dim, vocab, bias=False)

        def forward(self, ids):
            T = ids.shape[1]
            h = self.token_embed(ids) + self.pos_embed.weight[:T]
            for block in self.blocks:
                z1 = h + block.attn(block.norm1(h), causal=True)[0]
                h = z1 + block.mlp(block.norm2(z1))
            y = self.norm(h)
            return self.head(y) if self.head is not None else y @ self.token_embed.weight.T

    return MultiHeadAttention, MLP, EncoderBlock, DecoderBlock, VisionTransformer, Gpt


# ---- generators ----------------------------------------------------------------------------------

def seed_for(name):
    import torch
    torch.manual_seed(zlib.crc32(name.encode("utf-8")) & 0x7FFFFFFF)


def to_np(t):
    return t.detach().cpu().numpy().copy()


def randomize_layer_norms(module):
    """LayerNorm starts at weight 1, bias 0: give it values a wrong formula cannot hide behind."""
    import torch
    from torch import nn
    with torch.no_grad():
        for sub in module.modules():
            if isinstance(sub, nn.LayerNorm):
                sub.weight.copy_(1.0 + 0.5 * torch.randn_like(sub.weight))
                sub.bias.copy_(0.5 * torch.randn_like(sub.bias))


def module_case(module, inputs, run, metadata, extra_inputs=None):
    """inputs: {name: float tensor} (gradients taken); run(**inputs) -> y or (y, {name: out})."""
    import torch
    inputs = {k: v.clone().requires_grad_(True) for k, v in inputs.items()}
    buffers_before = {name: to_np(b) for name, b in module.named_buffers()}
    result = run(**inputs)
    y, extra = (result if isinstance(result, tuple) else (result, {}))
    upstream = torch.randn_like(y)
    (y * upstream).sum().backward()
    out = {}
    for name, t in inputs.items():
        out["input." + name] = to_np(t)
        out["grad.input." + name] = to_np(t.grad)
    for name, t in (extra_inputs or {}).items():
        out["input." + name] = to_np(t)
    for name, p in module.named_parameters():
        out["param." + name] = to_np(p)
        out["grad.param." + name] = to_np(p.grad)
    for name, value in buffers_before.items():
        out["buffer." + name] = value
    for name, b in module.named_buffers():
        out["buffer_after." + name] = to_np(b)
    out["upstream.y"] = to_np(upstream)
    out["output.y"] = to_np(y)
    for name, t in extra.items():
        out["output." + name] = to_np(t)
    return out, {k: str(v) for k, v in metadata.items()}


B, DIM, HEADS, HIDDEN = 2, 8, 2, 32


def gen_linear(name):
    import torch
    from torch import nn
    seed_for(name)
    lin = nn.Linear(DIM, 6)
    x = torch.randn(B, 3, DIM)
    return module_case(lin, {"x": x}, lambda x: lin(x),
                       {"in_features": DIM, "out_features": 6, "batch": B, "seq": 3})


def gen_layer_norm(name):
    import torch
    from torch import nn
    seed_for(name)
    ln = nn.LayerNorm(DIM, eps=1e-5)
    randomize_layer_norms(ln)
    x = 2.0 * torch.randn(B, 3, DIM) + 0.5
    return module_case(ln, {"x": x}, lambda x: ln(x),
                       {"dim": DIM, "eps": "1e-05", "batch": B, "seq": 3})


def padding_mask(batch, length, padded_in_batch1):
    """(B, S) bool, True = padded: the last `padded_in_batch1` keys of batch element 1."""
    import torch
    mask = torch.zeros(batch, length, dtype=torch.bool)
    if padded_in_batch1:
        mask[1, length - padded_in_batch1:] = True
    return mask


def gen_mha(name, cross, causal, padded):
    import torch
    MultiHeadAttention = define_modules()[0]
    seed_for(name)
    mha = MultiHeadAttention(DIM, HEADS, cross=cross)
    T = 3 if cross else 4
    S = 5 if cross else T
    meta = {"dim": DIM, "heads": HEADS, "d_k": DIM // HEADS, "batch": B, "seq": T,
            "cross": int(cross), "causal": int(causal), "padded": int(padded)}
    if cross:
        meta["memory_seq"] = S
    mask = padding_mask(B, S, 2) if padded else None
    extra_inputs = {"key_padding_mask": mask.to(torch.int64)} if padded else None
    x = torch.randn(B, T, DIM)
    inputs = {"x": x}
    if cross:
        inputs["m"] = torch.randn(B, S, DIM)

    def run(x, m=None):
        y, A = mha(x, m, causal=causal, key_padding_mask=mask)
        return y, {"attn": A}

    out, meta = module_case(mha, inputs, run, meta, extra_inputs)
    if padded:  # padded keys get exactly zero weight, and every row still sums to one
        attn = out["output.attn"]
        assert np.all(attn[1, :, :, S - 2:] == 0.0)
        assert np.allclose(attn.sum(-1), 1.0)
    return out, meta


def gen_mlp(name):
    import torch
    MLP = define_modules()[1]
    seed_for(name)
    mlp = MLP(DIM, HIDDEN)
    x = torch.randn(B, 3, DIM)
    return module_case(mlp, {"x": x}, lambda x: mlp(x),
                       {"dim": DIM, "hidden": HIDDEN, "batch": B, "seq": 3, "gelu": "erf"})


def gen_encoder_block(name):
    import torch
    EncoderBlock = define_modules()[2]
    seed_for(name)
    block = EncoderBlock(DIM, HEADS, HIDDEN)
    randomize_layer_norms(block)
    x = torch.randn(B, 4, DIM)
    return module_case(block, {"x": x}, lambda x: block(x),
                       {"dim": DIM, "heads": HEADS, "hidden": HIDDEN, "batch": B, "seq": 4,
                        "eps": "1e-05", "norm": "pre"})


def gen_decoder_block(name):
    import torch
    DecoderBlock = define_modules()[3]
    seed_for(name)
    block = DecoderBlock(DIM, HEADS, HIDDEN)
    randomize_layer_norms(block)
    T, S = 4, 5
    mask = padding_mask(B, S, 2)
    x = torch.randn(B, T, DIM)
    m = torch.randn(B, S, DIM)
    return module_case(block, {"x": x, "m": m},
                       lambda x, m: block(x, m, memory_key_padding_mask=mask),
                       {"dim": DIM, "heads": HEADS, "hidden": HIDDEN, "batch": B, "seq": T,
                        "memory_seq": S, "eps": "1e-05", "norm": "pre"},
                       extra_inputs={"key_padding_mask": mask.to(torch.int64)})


def gen_vit(name, conv_stem=False, stem="patch", pool="cls"):
    import torch
    VisionTransformer = define_modules()[4]
    seed_for(name)
    config = {"image_size": 8, "channels": 2, "patch": 4, "dim": DIM, "depth": 2,
              "heads": HEADS, "mlp_dim": 16, "num_classes": 5}
    if conv_stem:
        config["stem"] = "conv"
    if stem != "patch":
        config["stem"] = stem
    if pool != "cls":
        config["pool"] = pool
    vit = VisionTransformer(8, 2, 4, DIM, 2, HEADS, 16, 5, conv_stem=conv_stem, stem=stem,
                            pool=pool)
    randomize_layer_norms(vit)
    images = torch.randn(B, 2, 8, 8)
    return module_case(vit, {"images": images}, lambda images: vit(images), dict(config, batch=B))


def define_cct():
    """CCT (Hassani et al. 2021) as SHI-Labs/Compact-Transformers writes it (src/cct.py,
    src/utils/tokenizer.py, src/utils/transformers.py; dropouts, drop path and the init left out,
    the test loads the weights), with their names: uwaga-vit's model with cct_details
    (nn/vit_backbone.h). The tokenizer's last convolution gives the tokens directly (no Linear),
    qkv has no bias, and the block normalises the residual stream between its branches:
        src = src + self_attn(pre_norm(src));  src = norm1(src)
        src = src + linear2(gelu(linear1(src)))
    CCT_NAMES maps their state_dict names to uwaga's."""
    import torch
    from torch import nn
    import torch.nn.functional as F

    class Tokenizer(nn.Module):
        def __init__(self, n_conv_layers, n_input_channels, n_output_channels, in_planes):
            super().__init__()
            n_filter_list = ([n_input_channels] + [in_planes] * (n_conv_layers - 1)
                             + [n_output_channels])
            self.conv_layers = nn.Sequential(*[nn.Sequential(
                nn.Conv2d(n_filter_list[i], n_filter_list[i + 1], kernel_size=3, stride=1,
                          padding=1, bias=False),
                nn.ReLU(),
                nn.MaxPool2d(kernel_size=3, stride=2, padding=1)) for i in range(n_conv_layers)])
            self.flattener = nn.Flatten(2, 3)

        def forward(self, x):
            return self.flattener(self.conv_layers(x)).transpose(-2, -1)

    class Attention(nn.Module):
        def __init__(self, dim, num_heads):
            super().__init__()
            self.num_heads = num_heads
            self.scale = (dim // num_heads) ** -0.5
            self.qkv = nn.Linear(dim, dim * 3, bias=False)
            self.proj = nn.Linear(dim, dim)

        def forward(self, x):
            B, N, C = x.shape
            qkv = self.qkv(x).reshape(B, N, 3, self.num_heads, C // self.num_heads)
            q, k, v = qkv.permute(2, 0, 3, 1, 4)
            attn = ((q @ k.transpose(-2, -1)) * self.scale).softmax(dim=-1)
            return self.proj((attn @ v).transpose(1, 2).reshape(B, N, C))

    class TransformerEncoderLayer(nn.Module):
        def __init__(self, d_model, nhead, dim_feedforward):
            super().__init__()
            self.pre_norm = nn.LayerNorm(d_model)
            self.self_attn = Attention(d_model, nhead)
            self.linear1 = nn.Linear(d_model, dim_feedforward)
            self.norm1 = nn.LayerNorm(d_model)
            self.linear2 = nn.Linear(dim_feedforward, d_model)

        def forward(self, src):
            src = src + self.self_attn(self.pre_norm(src))
            src = self.norm1(src)
            src2 = self.linear2(F.gelu(self.linear1(src)))
            return src + src2

    class TransformerClassifier(nn.Module):
        def __init__(self, embedding_dim, num_layers, num_heads, dim_feedforward, num_classes,
                     sequence_length):
            super().__init__()
            self.attention_pool = nn.Linear(embedding_dim, 1)
            self.positional_emb = nn.Parameter(torch.zeros(1, sequence_length, embedding_dim))
            nn.init.trunc_normal_(self.positional_emb, std=0.2)
            self.blocks = nn.ModuleList([
                TransformerEncoderLayer(embedding_dim, num_heads, dim_feedforward)
                for _ in range(num_layers)])
            self.norm = nn.LayerNorm(embedding_dim)
            self.fc = nn.Linear(embedding_dim, num_classes)

        def forward(self, x):
            x = x + self.positional_emb
            for blk in self.blocks:
                x = blk(x)
            x = self.norm(x)
            x = torch.matmul(F.softmax(self.attention_pool(x), dim=1).transpose(-1, -2), x)
            return self.fc(x.squeeze(-2))

    class CCT(nn.Module):
        def __init__(self, img_size, n_input_channels, embedding_dim, n_conv_layers, num_layers,
                     num_heads, mlp_dim, num_classes):
            super().__init__()
            self.tokenizer = Tokenizer(n_conv_layers, n_input_channels, embedding_dim,
                                       embedding_dim // 2)
            tokens = (img_size >> n_conv_layers) ** 2
            self.classifier = TransformerClassifier(embedding_dim, num_layers, num_heads, mlp_dim,
                                                    num_classes, tokens)

        def forward(self, x):
            return self.classifier(self.tokenizer(x))

    return CCT


# CCT's parameter names (define_cct) -> uwaga's (nn/vision_transformer.h), by pattern.
CCT_NAMES = [
    (r"^tokenizer\.conv_layers\.(\d+)\.0\.weight$", r"stem.\1.weight"),
    (r"^classifier\.positional_emb$", "pos_embed"),
    (r"^classifier\.blocks\.(\d+)\.pre_norm\.", r"blocks.\1.norm1."),
    (r"^classifier\.blocks\.(\d+)\.self_attn\.", r"blocks.\1.attn."),
    (r"^classifier\.blocks\.(\d+)\.linear1\.", r"blocks.\1.mlp.fc1."),
    (r"^classifier\.blocks\.(\d+)\.norm1\.", r"blocks.\1.norm2."),
    (r"^classifier\.blocks\.(\d+)\.linear2\.", r"blocks.\1.mlp.fc2."),
    (r"^classifier\.norm\.", "norm."),
    (r"^classifier\.attention_pool\.", "attention_pool."),
    (r"^classifier\.fc\.", "head."),
]


def uwaga_name(cct_name):
    import re
    for pattern, replacement in CCT_NAMES:
        name, n = re.subn(pattern, replacement, cct_name)
        if n:
            return name
    raise KeyError(f"no uwaga name for CCT's {cct_name}")


def gen_vit_cct_details(name):
    """uwaga-vit's cct_details model (CCT's own) on gen_vit's small images: 8 x 8 x 2, patch 4
    (two convolutions 2 -> 4 -> 8), dim 8, 2 blocks, MLP 16, 5 classes."""
    import torch
    CCT = define_cct()
    seed_for(name)
    config = {"image_size": 8, "channels": 2, "patch": 4, "dim": DIM, "depth": 2,
              "heads": HEADS, "mlp_dim": 16, "num_classes": 5, "stem": "cct", "pool": "seq",
              "cct_details": "true"}
    cct = CCT(8, 2, DIM, 2, 2, HEADS, 16, 5)
    randomize_layer_norms(cct)
    images = torch.randn(B, 2, 8, 8)
    tensors, metadata = module_case(cct, {"images": images}, lambda images: cct(images),
                                    dict(config, batch=B))
    renamed = {}
    for key, value in tensors.items():
        for prefix in ("grad.param.", "param."):
            if key.startswith(prefix):
                key = prefix + uwaga_name(key[len(prefix):])
                break
        renamed[key] = value
    return renamed, metadata


def define_vit_pose():
    """ViTPose (nn/pose/vit_pose.h) with mmpose's names: a ViT backbone without a class token whose
    patch tokens, normalised, are laid out as a (H/P) x (W/P) feature map, and either decoder of
    TopdownHeatmapSimpleHead: classic (two 4x4 stride-2 transposed convolutions without bias, each
    with BatchNorm and ReLU, then a 1x1 convolution) or simple (ReLU, bilinear x4 with
    align_corners=False, a 3x3 convolution)."""
    import torch
    from torch import nn
    import torch.nn.functional as F
    EncoderBlock = define_modules()[2]

    class VitBackbone(nn.Module):
        def __init__(self, height, width, channels, patch, dim, depth, heads, hidden):
            super().__init__()
            self.patch = patch
            self.patch_embed = nn.Linear(patch * patch * channels, dim)
            n = (height // patch) * (width // patch)
            self.pos_embed = nn.Parameter(0.02 * torch.randn(1, n, dim))
            self.blocks = nn.ModuleList([EncoderBlock(dim, heads, hidden) for _ in range(depth)])
            self.norm = nn.LayerNorm(dim, eps=1e-5)

        def forward(self, images):
            B, C, H, W = images.shape
            P = self.patch
            x = images.reshape(B, C, H // P, P, W // P, P).permute(0, 2, 4, 3, 5, 1)
            z = self.patch_embed(x.reshape(B, (H // P) * (W // P), P * P * C)) + self.pos_embed
            for block in self.blocks:
                z = block(z)
            return self.norm(z).transpose(1, 2).reshape(B, -1, H // P, W // P)  # (B, D, H/P, W/P)

    class ClassicHead(nn.Module):
        def __init__(self, dim, channels, joints):
            super().__init__()
            self.deconv_layers = nn.Sequential(
                nn.ConvTranspose2d(dim, channels, 4, stride=2, padding=1, output_padding=0,
                                   bias=False),
                nn.BatchNorm2d(channels), nn.ReLU(),
                nn.ConvTranspose2d(channels, channels, 4, stride=2, padding=1, output_padding=0,
                                   bias=False),
                nn.BatchNorm2d(channels), nn.ReLU())
            self.final_layer = nn.Conv2d(channels, joints, 1)

        def forward(self, x):
            return self.final_layer(self.deconv_layers(x))

    class SimpleHead(nn.Module):
        def __init__(self, dim, joints):
            super().__init__()
            self.final_layer = nn.Conv2d(dim, joints, 3, padding=1)

        def forward(self, x):
            x = F.interpolate(F.relu(x), scale_factor=4, mode="bilinear", align_corners=False)
            return self.final_layer(x)

    class ViTPose(nn.Module):
        def __init__(self, c):
            super().__init__()
            self.backbone = VitBackbone(c["image_height"], c["image_width"], c["channels"],
                                        c["patch"], c["dim"], c["depth"], c["heads"], c["mlp_dim"])
            self.keypoint_head = (SimpleHead(c["dim"], c["joints"]) if c["decoder"] == "simple"
                                  else ClassicHead(c["dim"], c["decoder_channels"], c["joints"]))

        def forward(self, images):
            return self.keypoint_head(self.backbone(images))

    return ViTPose


def gen_vit_pose(name, decoder):
    """A tiny ViTPose on non-square images (8 x 12, patch 4: a 2 x 3 grid, 8 x 12 heatmaps) in
    training mode (BatchNorm normalises with the batch's statistics and updates its running ones);
    LayerNorm and BatchNorm weights, biases and running statistics randomised."""
    import torch
    from torch import nn
    ViTPose = define_vit_pose()
    seed_for(name)
    config = {"image_height": 8, "image_width": 12, "channels": 2, "patch": 4, "dim": DIM,
              "depth": 2, "heads": HEADS, "mlp_dim": 16, "joints": 3, "decoder": decoder,
              "decoder_channels": 4}
    model = ViTPose(config)
    randomize_layer_norms(model)
    with torch.no_grad():
        for sub in model.modules():
            if isinstance(sub, nn.BatchNorm2d):
                sub.weight.copy_(1.0 + 0.5 * torch.randn_like(sub.weight))
                sub.bias.copy_(0.5 * torch.randn_like(sub.bias))
                sub.running_mean.copy_(0.3 * torch.randn_like(sub.running_mean))
                sub.running_var.copy_(0.5 + torch.rand_like(sub.running_var))
    model.train()
    images = torch.randn(B, 2, 8, 12)
    return module_case(model, {"images": images}, lambda images: model(images),
                       dict(config, batch=B))


def gen_gpt(name, tie_weights):
    import torch
    Gpt = define_modules()[5]
    seed_for(name)
    config = {"vocab": 11, "context": 6, "dim": DIM, "layers": 2, "heads": HEADS, "mlp_dim": 16,
              "tie_weights": int(tie_weights)}
    gpt = Gpt(11, 6, DIM, 2, HEADS, 16, tie_weights)
    randomize_layer_norms(gpt)
    ids = torch.randint(0, 11, (B, 5))
    return module_case(gpt, {}, lambda: gpt(ids), dict(config, batch=B, seq=5),
                       extra_inputs={"ids": ids})


def gen_conv2d(name, in_channels, out_channels, kernel, stride, padding, shape):
    import torch
    from torch import nn
    seed_for(name)
    conv = nn.Conv2d(in_channels, out_channels, kernel, stride=stride, padding=padding)
    x = torch.randn(*shape)
    return module_case(conv, {"x": x}, lambda x: conv(x),
                       {"in_channels": in_channels, "out_channels": out_channels,
                        "kernel": kernel, "stride": stride, "padding": padding})


def gen_conv_transpose2d(name):
    import torch
    from torch import nn
    seed_for(name)
    conv = nn.ConvTranspose2d(3, 2, 4, stride=2, padding=1)
    x = torch.randn(2, 3, 4, 5)
    return module_case(conv, {"x": x}, lambda x: conv(x),
                       {"in_channels": 3, "out_channels": 2, "kernel": 4, "stride": 2,
                        "padding": 1, "output_padding": 0})


def gen_upsample_bilinear(name, factor, shape):
    import torch
    from torch import nn
    import torch.nn.functional as F
    seed_for(name)
    x = torch.randn(*shape)
    run = lambda x: F.interpolate(x, scale_factor=factor, mode="bilinear", align_corners=False)
    return module_case(nn.Identity(), {"x": x}, run,
                       {"factor": factor, "mode": "bilinear", "align_corners": "False"})


def gen_max_pool2d(name, kernel, stride, padding, shape):
    import torch
    from torch import nn
    import torch.nn.functional as F
    seed_for(name)
    x = torch.randn(*shape)
    run = lambda x: F.max_pool2d(x, kernel, stride=stride, padding=padding)
    return module_case(nn.Identity(), {"x": x}, run,
                       {"kernel": kernel, "stride": stride, "padding": padding})


def gen_batch_norm2d(name, training):
    """Random weight, bias and running statistics (a formula that ignores one cannot pass);
    buffer.* are the buffers before the forward pass, buffer_after.* after it."""
    import torch
    from torch import nn
    seed_for(name)
    C = 3
    bn = nn.BatchNorm2d(C, eps=1e-5, momentum=0.1)
    with torch.no_grad():
        bn.weight.copy_(1.0 + 0.5 * torch.randn(C))
        bn.bias.copy_(0.5 * torch.randn(C))
        bn.running_mean.copy_(0.3 * torch.randn(C))
        bn.running_var.copy_(0.5 + torch.rand(C))
        bn.num_batches_tracked.fill_(7)
    bn.train(training)
    x = 2.0 * torch.randn(4, C, 3, 5) + 0.5
    return module_case(bn, {"x": x}, lambda x: bn(x),
                       {"channels": C, "eps": "1e-05", "momentum": "0.1",
                        "training": int(training)})


def gen_cross_entropy(name):
    import torch
    import torch.nn.functional as F
    seed_for(name)
    N, C, eps, ignore = 6, 5, 0.1, -100
    logits = (2.0 * torch.randn(N, C)).requires_grad_(True)
    targets = torch.randint(0, C, (N,), dtype=torch.int64)
    targets[3] = ignore
    loss = F.cross_entropy(logits, targets, ignore_index=ignore, label_smoothing=eps,
                           reduction="mean")
    loss.backward()
    # The formula in the docstring, checked against PyTorch.
    logp = torch.log_softmax(logits.detach(), dim=-1)
    keep = targets != ignore
    rows = (1 - eps) * -logp[keep, targets[keep]] + eps * -logp[keep].mean(-1)
    assert abs(rows.mean().item() - loss.item()) < 1e-12
    out = {"input.logits": to_np(logits), "input.targets": to_np(targets),
           "output.loss": to_np(loss), "grad.input.logits": to_np(logits.grad)}
    meta = {"classes": C, "rows": N, "ignore_index": ignore, "label_smoothing": repr(eps),
            "reduction": "mean"}
    return out, {k: str(v) for k, v in meta.items()}


OPTIMIZERS = {
    "sgd": ("SGD", {"lr": 0.1, "momentum": 0.9, "weight_decay": 0.01}),
    "sgd_nesterov": ("SGD", {"lr": 0.1, "momentum": 0.9, "nesterov": True}),
    "adam": ("Adam", {"lr": 1e-2, "betas": (0.9, 0.999), "eps": 1e-8, "weight_decay": 0.01}),
    "adamw": ("AdamW", {"lr": 1e-2, "betas": (0.9, 0.999), "eps": 1e-8, "weight_decay": 0.05}),
}
STEPS = 5


def gen_optimizer(name, kind):
    import torch
    seed_for(name)
    cls_name, options = OPTIMIZERS[kind]
    w = torch.nn.Parameter(torch.randn(4, 3))
    opt = getattr(torch.optim, cls_name)([w], **options)
    out = {"param.w": to_np(w)}
    for t in range(1, STEPS + 1):
        g = torch.randn(4, 3)
        w.grad = g.clone()
        opt.step()
        out["grad.step%d" % t] = to_np(g)
        out["param_after.step%d" % t] = to_np(w)
    meta = {"optimizer": kind, "steps": str(STEPS)}
    defaults = opt.defaults
    for key in ("lr", "momentum", "dampening", "weight_decay", "eps"):
        if key in defaults:
            meta[key] = repr(float(defaults[key]))
    if "nesterov" in defaults:
        meta["nesterov"] = str(int(defaults["nesterov"]))
    if "betas" in defaults:
        meta["beta1"], meta["beta2"] = (repr(float(b)) for b in defaults["betas"])
    if "amsgrad" in defaults:
        meta["amsgrad"] = str(int(defaults["amsgrad"]))
    return out, meta


def warmup_cosine_lr(t, base, warmup, total, floor):
    """The formula in the module docstring."""
    t = np.asarray(t, dtype=np.float64)
    warm = base * (t + 1) / warmup
    cos = floor + (base - floor) * 0.5 * (1 + np.cos(np.pi * (t - warmup) / (total - warmup)))
    return np.where(t < warmup, warm, cos)


def gen_schedule(name):
    base, warmup, total, floor = 1e-3, 10, 50, 1e-5
    lr = warmup_cosine_lr(np.arange(total), base, warmup, total, floor)
    meta = {"schedule": "warmup_cosine", "base_lr": repr(base), "warmup_steps": str(warmup),
            "total_steps": str(total), "min_lr": repr(floor)}
    return {"lr": lr.astype(np.float64)}, meta


GENERATORS = {
    "linear": gen_linear,
    "layer_norm": gen_layer_norm,
    "mha_self": lambda n: gen_mha(n, cross=False, causal=False, padded=False),
    "mha_self_causal": lambda n: gen_mha(n, cross=False, causal=True, padded=False),
    "mha_self_padded": lambda n: gen_mha(n, cross=False, causal=False, padded=True),
    "mha_cross": lambda n: gen_mha(n, cross=True, causal=False, padded=False),
    "mha_cross_padded": lambda n: gen_mha(n, cross=True, causal=False, padded=True),
    "mlp": gen_mlp,
    "encoder_block": gen_encoder_block,
    "decoder_block": gen_decoder_block,
    "vit": gen_vit,
    "vit_conv_stem": lambda n: gen_vit(n, conv_stem=True),
    "vit_cct_seq_pool": lambda n: gen_vit(n, stem="cct", pool="seq"),
    "vit_seq_pool": lambda n: gen_vit(n, pool="seq"),
    "vit_cct_details": gen_vit_cct_details,
    "vit_pose_classic": lambda n: gen_vit_pose(n, "classic"),
    "vit_pose_simple": lambda n: gen_vit_pose(n, "simple"),
    "gpt": lambda n: gen_gpt(n, tie_weights=False),
    "gpt_tied": lambda n: gen_gpt(n, tie_weights=True),
    "conv2d": lambda n: gen_conv2d(n, 3, 4, 3, stride=2, padding=1, shape=(2, 3, 7, 6)),
    "conv2d_pointwise": lambda n: gen_conv2d(n, 4, 5, 1, stride=1, padding=0,
                                             shape=(2, 4, 3, 5)),
    "conv_transpose2d": gen_conv_transpose2d,
    "upsample_bilinear_x2": lambda n: gen_upsample_bilinear(n, 2, (1, 2, 4, 3)),
    "upsample_bilinear_x4": lambda n: gen_upsample_bilinear(n, 4, (2, 3, 3, 5)),
    "max_pool2d_3x3_s2": lambda n: gen_max_pool2d(n, 3, 2, 1, (2, 3, 7, 6)),
    "max_pool2d_2x2_s2": lambda n: gen_max_pool2d(n, 2, 2, 0, (1, 2, 4, 5)),
    "batch_norm2d_train": lambda n: gen_batch_norm2d(n, training=True),
    "batch_norm2d_eval": lambda n: gen_batch_norm2d(n, training=False),
    "cross_entropy": gen_cross_entropy,
    "optim_sgd": lambda n: gen_optimizer(n, "sgd"),
    "optim_sgd_nesterov": lambda n: gen_optimizer(n, "sgd_nesterov"),
    "optim_adam": lambda n: gen_optimizer(n, "adam"),
    "optim_adamw": lambda n: gen_optimizer(n, "adamw"),
    "schedule_warmup_cosine": gen_schedule,
}


def main(argv):
    if len(argv) == 3 and argv[1] == "--dump":
        # Reads any safetensors file with numpy only and prints it as JSON (used to check that
        # files written by uwaga's C++ read back here).
        tensors, metadata = load_safetensors(argv[2])
        print(json.dumps({"metadata": metadata,
                          "tensors": {k: {"dtype": str(v.dtype), "shape": list(v.shape),
                                          "values": v.reshape(-1).tolist()}
                                      for k, v in tensors.items()}}))
        return 0
    names = argv[1:] or list(GENERATORS)
    import torch
    torch.set_default_dtype(torch.float64)
    torch.use_deterministic_algorithms(True)
    for name in names:
        tensors, metadata = GENERATORS[name](name)
        for key, value in tensors.items():
            assert value.dtype in (np.float64, np.int64), (name, key, value.dtype)
        path = os.path.join(HERE, name + ".safetensors")
        save_safetensors(path, tensors, metadata)
        back, back_meta = load_safetensors(path)  # read back: the writer and reader agree
        assert back_meta == metadata and set(back) == set(tensors)
        for key in tensors:
            assert np.array_equal(back[key], tensors[key]), (name, key)
        size = os.path.getsize(path)
        assert size < 100_000, f"{path} is {size} bytes; keep golden files small"
        print(f"{name + '.safetensors':32s} {size:7d} bytes  {len(tensors):3d} tensors")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
