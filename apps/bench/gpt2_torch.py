#!/usr/bin/env python3
"""GPT-2 small (124 M parameters) with random weights, for apps/bench/gpt2_speed.sh:

    python3 apps/bench/gpt2_torch.py write DIR
        DIR/model.safetensors and config.json in Hugging Face's layout (GPT-2 small's sizes:
        12 layers, width 768, 12 heads, 1,024 positions, 50,257 tokens; weights N(0, 0.02))
    python3 apps/bench/gpt2_torch.py decode DIR --threads N --prompt P --tokens K
        PyTorch decoding the same model greedily with a key/value cache, one token at a time
        (the forward pass of tests/nn/gpt2_torch_reference.py with a cache), float32; prints one
        JSON line: tokens, seconds, tokens_per_s, threads
    python3 apps/bench/gpt2_torch.py train DIR --threads N --batch B --window T --steps K
        PyTorch training the same model as uwaga-gpt train --init does (the paper's forward pass
        batched, float32, autograd, the tied head, cross-entropy over every position, AdamW as
        the gpt2-shakespeare preset: lr 1e-4, betas (0.9, 0.999), no weight decay) on random
        windows; prints one JSON line: the median step's seconds over K steps after one warm-up
        step, and the losses
    python3 apps/bench/gpt2_torch.py bandwidth
        the machine's copy bandwidth (numpy copyto of 512 MiB, best of 5), bytes read + written
        per second, as one JSON line
"""
import argparse
import json
import math
import os
import sys
import time

V, CTX, D, L, H = 50257, 1024, 768, 12, 12


def write(out):
    import torch
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "../../tests/nn"))
    from gpt2_torch_reference import save_safetensors
    gen = torch.Generator().manual_seed(124)
    w = {"wte.weight": torch.randn(V, D, generator=gen) * 0.02,
         "wpe.weight": torch.randn(CTX, D, generator=gen) * 0.01}
    for i in range(L):
        p = f"h.{i}."
        w[p + "ln_1.weight"], w[p + "ln_1.bias"] = torch.ones(D), torch.zeros(D)
        w[p + "attn.c_attn.weight"] = torch.randn(D, 3 * D, generator=gen) * 0.02
        w[p + "attn.c_attn.bias"] = torch.zeros(3 * D)
        w[p + "attn.c_proj.weight"] = torch.randn(D, D, generator=gen) * 0.02
        w[p + "attn.c_proj.bias"] = torch.zeros(D)
        w[p + "ln_2.weight"], w[p + "ln_2.bias"] = torch.ones(D), torch.zeros(D)
        w[p + "mlp.c_fc.weight"] = torch.randn(D, 4 * D, generator=gen) * 0.02
        w[p + "mlp.c_fc.bias"] = torch.zeros(4 * D)
        w[p + "mlp.c_proj.weight"] = torch.randn(4 * D, D, generator=gen) * 0.02
        w[p + "mlp.c_proj.bias"] = torch.zeros(D)
    w["ln_f.weight"], w["ln_f.bias"] = torch.ones(D), torch.zeros(D)
    save_safetensors(os.path.join(out, "model.safetensors"),
                     {"transformer." + k: v.float() for k, v in w.items()})
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump({"model_type": "gpt2", "vocab_size": V, "n_positions": CTX, "n_embd": D,
                   "n_layer": L, "n_head": H, "n_inner": None, "activation_function": "gelu_new",
                   "layer_norm_epsilon": 1e-5}, f)


def load(path):
    import torch
    with open(path, "rb") as f:
        n = int.from_bytes(f.read(8), "little")
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    for name, e in header.items():
        if name == "__metadata__":
            continue
        a, b = e["data_offsets"]
        t = torch.frombuffer(bytearray(data[a:b]), dtype=torch.float32).reshape(e["shape"])
        out[name.removeprefix("transformer.")] = t
    return out


def decode(args):
    import torch
    import torch.nn.functional as F
    torch.set_num_threads(args.threads)
    w = load(os.path.join(args.dir, "model.safetensors"))
    # Linear layers as (out, in) for F.linear, as nn.Linear holds them.
    lin = {k: v.T.contiguous() for k, v in w.items() if k.endswith(("c_attn.weight", "c_proj.weight", "c_fc.weight"))}
    hd = D // H
    cache = [[None, None] for _ in range(L)]

    def step(ids, start):  # ids (n,), the positions start … start + n − 1
        x = w["wte.weight"][ids] + w["wpe.weight"][start:start + len(ids)]
        for i in range(L):
            p = f"h.{i}."
            u = F.layer_norm(x, (D,), w[p + "ln_1.weight"], w[p + "ln_1.bias"], 1e-5)
            q, k, v = F.linear(u, lin[p + "attn.c_attn.weight"], w[p + "attn.c_attn.bias"]).split(D, -1)
            q, k, v = (t.view(-1, H, hd).transpose(0, 1) for t in (q, k, v))
            if cache[i][0] is not None:
                k, v = torch.cat([cache[i][0], k], 1), torch.cat([cache[i][1], v], 1)
            cache[i] = [k, v]
            e = q @ k.transpose(1, 2) / math.sqrt(hd)
            if len(ids) > 1:
                e = e.masked_fill(torch.ones(len(ids), len(ids), dtype=torch.bool).triu(1), float("-inf"))
            y = (e.softmax(-1) @ v).transpose(0, 1).reshape(-1, D)
            x = x + F.linear(y, lin[p + "attn.c_proj.weight"], w[p + "attn.c_proj.bias"])
            u = F.layer_norm(x, (D,), w[p + "ln_2.weight"], w[p + "ln_2.bias"], 1e-5)
            hdn = F.gelu(F.linear(u, lin[p + "mlp.c_fc.weight"], w[p + "mlp.c_fc.bias"]), approximate="tanh")
            x = x + F.linear(hdn, lin[p + "mlp.c_proj.weight"], w[p + "mlp.c_proj.bias"])
        x = F.layer_norm(x[-1:], (D,), w["ln_f.weight"], w["ln_f.bias"], 1e-5)
        return x @ w["wte.weight"].T

    with torch.no_grad():
        ids = torch.tensor(args.prompt)
        logits = step(ids, 0)
        n = len(args.prompt)
        start = time.perf_counter()
        for _ in range(args.tokens):
            nxt = int(logits[-1].argmax())
            logits = step(torch.tensor([nxt]), n)
            n += 1
        seconds = time.perf_counter() - start
    print(json.dumps({"tokens": args.tokens, "seconds": seconds, "tokens_per_s": args.tokens / seconds,
                      "threads": args.threads}))


def train(args):
    import torch
    import torch.nn.functional as F
    torch.set_num_threads(args.threads)
    w = {k: v.clone().requires_grad_(True) for k, v in load(os.path.join(args.dir, "model.safetensors")).items()}
    w.pop("lm_head.weight", None)
    opt = torch.optim.AdamW(list(w.values()), lr=1e-4, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0)
    gen = torch.Generator().manual_seed(0)
    B, T = args.batch, args.window
    hd = D // H
    causal = torch.ones(T, T, dtype=torch.bool).tril()

    def loss_of(tokens):
        x = w["wte.weight"][tokens[:, :-1]] + w["wpe.weight"][:T]
        for i in range(L):
            p = f"h.{i}."
            u = F.layer_norm(x, (D,), w[p + "ln_1.weight"], w[p + "ln_1.bias"], 1e-5)
            q, k, v = (u @ w[p + "attn.c_attn.weight"] + w[p + "attn.c_attn.bias"]).split(D, dim=-1)
            q, k, v = (t.view(B, T, H, hd).transpose(1, 2) for t in (q, k, v))
            a = (q @ k.transpose(-2, -1) / math.sqrt(hd)).masked_fill(~causal, float("-inf")).softmax(-1)
            y = (a @ v).transpose(1, 2).reshape(B, T, D)
            x = x + y @ w[p + "attn.c_proj.weight"] + w[p + "attn.c_proj.bias"]
            u = F.layer_norm(x, (D,), w[p + "ln_2.weight"], w[p + "ln_2.bias"], 1e-5)
            h = F.gelu(u @ w[p + "mlp.c_fc.weight"] + w[p + "mlp.c_fc.bias"], approximate="tanh")
            x = x + h @ w[p + "mlp.c_proj.weight"] + w[p + "mlp.c_proj.bias"]
        x = F.layer_norm(x, (D,), w["ln_f.weight"], w["ln_f.bias"], 1e-5)
        return F.cross_entropy((x @ w["wte.weight"].T).view(B * T, V), tokens[:, 1:].reshape(-1))

    times, losses = [], []
    for step in range(args.steps + 1):
        tokens = torch.randint(0, V, (B, T + 1), generator=gen)
        start = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=args.bf16):
            loss = loss_of(tokens)
        loss.backward()
        opt.step()
        if step > 0:
            times.append(time.perf_counter() - start)
        losses.append(loss.item())
    times.sort()
    print(json.dumps({"seconds_per_step": times[len(times) // 2], "threads": args.threads,
                      "batch": B, "window": T, "losses": losses}))


def bandwidth():
    import numpy as np
    a = np.ones(1 << 27, dtype=np.float32)  # 512 MiB
    b = np.empty_like(a)
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        np.copyto(b, a)
        best = min(best, time.perf_counter() - start)
    print(json.dumps({"copy_bytes_per_s": 2 * a.nbytes / best}))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["write", "decode", "train", "bandwidth"])
    ap.add_argument("dir", nargs="?")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--tokens", type=int, default=32)
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--window", type=int, default=64)
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--bf16", action="store_true", help="train: under torch.autocast's bfloat16")
    ap.add_argument("--prompt", type=lambda s: [int(t) for t in s.split()], default=[15496, 11, 616, 3290, 318, 257])
    args = ap.parse_args()
    if args.mode == "write":
        write(args.dir)
    elif args.mode == "decode":
        decode(args)
    elif args.mode == "train":
        train(args)
    else:
        bandwidth()


if __name__ == "__main__":
    main()
