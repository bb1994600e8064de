#!/usr/bin/env python3
"""A small GPT-2 written by PyTorch in Hugging Face's layout, and its logits from a forward pass
written here from the GPT-2 paper, for tests/nn/test_gpt2_checkpoint.cpp:

    python3 tests/nn/gpt2_torch_reference.py OUT_DIR

OUT_DIR/model.safetensors + config.json   2 layers, width 64, 4 heads, GPT-2's 50,257 tokens and
                                          1,024 positions, random weights (biases and LayerNorm
                                          gains too), as GPT2LMHeadModel.save_pretrained names
                                          them ("transformer." prefix, tied head left out)
OUT_DIR/half/model.safetensors            the same weights as F16, with the prefix-less names,
                                          lm_head.weight and the old attn.bias buffers
OUT_DIR/bhalf/model.safetensors           as BF16
OUT_DIR/reference.safetensors             tokens (T,), their logits (T, V) in float64 from the
                                          float32 weights, prompt and its greedy continuation,
                                          wte rounded to F16 and to BF16 (as float32)

No transformers package is needed: the layout is written by hand (safetensors is a JSON header
and raw bytes), and the forward pass is the paper's (Radford et al. 2019, with GPT-1's
decoder): h0 = W_te[x] + W_pe; per block a = x + Attn(LN1(x)), x = a + MLP(LN2(a)) with
MLP(u) = gelu_tanh(u W_fc + b_fc) W_proj + b_proj; logits = LN_f(x) W_teᵀ.
"""
import json
import math
import os
import sys

import torch

V, CTX, D, L, H = 50257, 1024, 64, 2, 4


def save_safetensors(path, tensors):
    names = {torch.float32: "F32", torch.float16: "F16", torch.bfloat16: "BF16",
             torch.int64: "I64", torch.float64: "F64"}
    header, blobs, offset = {}, [], 0
    for name, t in tensors.items():
        t = t.contiguous()
        raw = t.view(torch.int16).numpy().tobytes() if t.dtype == torch.bfloat16 else t.numpy().tobytes()
        header[name] = {"dtype": names[t.dtype], "shape": list(t.shape),
                        "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    text = json.dumps(header).encode()
    text += b" " * ((8 - (8 + len(text)) % 8) % 8)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(len(text).to_bytes(8, "little"))
        f.write(text)
        for raw in blobs:
            f.write(raw)


def random_gpt2(gen):
    def normal(*shape, std=0.02, mean=0.0):
        return (torch.randn(*shape, generator=gen) * std + mean).float()
    w = {"wte.weight": normal(V, D), "wpe.weight": normal(CTX, D, std=0.01)}
    for i in range(L):
        p = f"h.{i}."
        w[p + "ln_1.weight"] = normal(D, std=0.1, mean=1.0)
        w[p + "ln_1.bias"] = normal(D, std=0.1)
        w[p + "attn.c_attn.weight"] = normal(D, 3 * D, std=0.2)   # Conv1D: (in, out)
        w[p + "attn.c_attn.bias"] = normal(3 * D, std=0.1)
        w[p + "attn.c_proj.weight"] = normal(D, D, std=0.1)
        w[p + "attn.c_proj.bias"] = normal(D, std=0.02)
        w[p + "ln_2.weight"] = normal(D, std=0.1, mean=1.0)
        w[p + "ln_2.bias"] = normal(D, std=0.1)
        w[p + "mlp.c_fc.weight"] = normal(D, 4 * D, std=0.2)
        w[p + "mlp.c_fc.bias"] = normal(4 * D, std=0.1)
        w[p + "mlp.c_proj.weight"] = normal(4 * D, D, std=0.1)
        w[p + "mlp.c_proj.bias"] = normal(D, std=0.02)
    w["ln_f.weight"] = normal(D, std=0.1, mean=1.0)
    w["ln_f.bias"] = normal(D, std=0.1)
    return w


def layer_norm(x, g, b, eps=1e-5):
    mu = x.mean(-1, keepdim=True)
    var = ((x - mu) ** 2).mean(-1, keepdim=True)
    return (x - mu) / torch.sqrt(var + eps) * g + b


def gelu_tanh(x):
    return 0.5 * x * (1 + torch.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))


def forward(w, tokens):
    """Logits (T, V) of the token ids (T,), in float64."""
    return forward_float64({k: v.double() for k, v in w.items()}, tokens)


def forward_float64(w, tokens):
    """forward() on weights that are float64 already (differentiable: gpt2_finetune_reference.py
    takes its gradients)."""
    T = len(tokens)
    x = w["wte.weight"][tokens] + w["wpe.weight"][:T]
    causal = torch.tril(torch.ones(T, T, dtype=torch.bool))
    for i in range(L):
        p = f"h.{i}."
        u = layer_norm(x, w[p + "ln_1.weight"], w[p + "ln_1.bias"])
        q, k, v = (u @ w[p + "attn.c_attn.weight"] + w[p + "attn.c_attn.bias"]).split(D, dim=-1)
        heads = []
        for h in range(H):
            s = slice(h * D // H, (h + 1) * D // H)
            e = q[:, s] @ k[:, s].T / math.sqrt(D // H)
            a = torch.softmax(e.masked_fill(~causal, float("-inf")), dim=-1)
            heads.append(a @ v[:, s])
        x = x + torch.cat(heads, -1) @ w[p + "attn.c_proj.weight"] + w[p + "attn.c_proj.bias"]
        u = layer_norm(x, w[p + "ln_2.weight"], w[p + "ln_2.bias"])
        x = x + gelu_tanh(u @ w[p + "mlp.c_fc.weight"] + w[p + "mlp.c_fc.bias"]) @ \
            w[p + "mlp.c_proj.weight"] + w[p + "mlp.c_proj.bias"]
    return layer_norm(x, w["ln_f.weight"], w["ln_f.bias"]) @ w["wte.weight"].T


def main(out):
    gen = torch.Generator().manual_seed(2019)
    w = random_gpt2(gen)
    config = {"architectures": ["GPT2LMHeadModel"], "model_type": "gpt2", "vocab_size": V,
              "n_positions": CTX, "n_ctx": CTX, "n_embd": D, "n_layer": L, "n_head": H,
              "n_inner": None, "activation_function": "gelu_new", "layer_norm_epsilon": 1e-5,
              "resid_pdrop": 0.1, "embd_pdrop": 0.1, "attn_pdrop": 0.1,
              "bos_token_id": 50256, "eos_token_id": 50256, "torch_dtype": "float32"}
    save_safetensors(os.path.join(out, "model.safetensors"),
                     {"transformer." + k: v for k, v in w.items()})
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
    for sub, dtype in (("half", torch.float16), ("bhalf", torch.bfloat16)):
        half = {k: v.to(dtype) for k, v in w.items()}
        half["lm_head.weight"] = half["wte.weight"]
        for i in range(L):
            half[f"h.{i}.attn.bias"] = torch.tril(torch.ones(1, 1, 8, 8)).to(dtype)
        save_safetensors(os.path.join(out, sub, "model.safetensors"), half)
        with open(os.path.join(out, sub, "config.json"), "w") as f:
            json.dump(config, f)

    tokens = torch.randint(0, V, (24,), generator=gen)
    tokens[:6] = torch.tensor([15496, 11, 616, 3290, 318, 257])  # "Hello, my dog is a"
    logits = forward(w, tokens)
    prompt = tokens[:6].clone()
    greedy = prompt.tolist()
    for _ in range(16):  # temperature 0: the most probable token, every step a full pass
        greedy.append(int(forward(w, torch.tensor(greedy))[-1].argmax()))
    save_safetensors(os.path.join(out, "reference.safetensors"), {
        "tokens": tokens, "logits": logits, "prompt": prompt, "greedy": torch.tensor(greedy),
        "wte_f16": w["wte.weight"].half().float(), "wte_bf16": w["wte.weight"].bfloat16().float()})


if __name__ == "__main__":
    main(sys.argv[1])
