#!/usr/bin/python3
"""uwaga-gpt's training step in PyTorch, written as a PyTorch user writes it, for
apps/bench/gpt_speed.sh: one JSON line on stdout with the training tokens/s, in the shape of
`uwaga-bench --mode gpt`'s line.

    build-bench/apps/uwaga-bench --mode gpt-config --model shakespeare-tiny > tiny.json
    /usr/bin/python3 apps/bench/gpt_torch.py --config tiny.json --threads 2
    /usr/bin/python3 apps/bench/gpt_torch.py --config tiny.json --threads 2 --compile

The model is nn/gpt.h's: token + learned position embeddings (then dropout), pre-LN blocks
(x + attn(LN(x)), x + MLP(LN(x)) with exact GELU), causal multi-head self-attention with one qkv
projection, a final LayerNorm and a bias-free head (or the token table, tied); GPT-2's
initialisation (N(0, 0.02), the residual projections N(0, 0.02/sqrt(2L))). Trained as
`uwaga-gpt train` trains it: batches of B random windows of T characters, cross-entropy over
every position, gradient clipping, AdamW with decay on the matrices only. The sizes, batch and
optimiser settings come from the preset through --config, so both sides train the same thing;
the text is random characters (the time of a step does not depend on which).

Attention is F.scaled_dot_product_attention(is_causal=True) where PyTorch has it (2.0 on) and the
causal softmax written out otherwise (Debian's 1.13); --compile uses torch.compile where it exists
(and says why not in the JSON line and on stderr where it does not). Run with
OMP_WAIT_POLICY=PASSIVE, as gpt_speed.sh does.
"""
import argparse
import json
import math
import os
import statistics
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_timing import (adamw, choose_attention, compile_model, header,  # noqa: E402
                          mixed_precision, peak_rss_kb, time_calls)
from vit_torch import param_groups  # noqa: E402  (optim::make_param_groups' rule)

SCRIPT = "gpt_torch.py"


class CausalSelfAttention(nn.Module):
    def __init__(self, c, use_sdpa):
        super().__init__()
        self.heads, self.use_sdpa = c["heads"], use_sdpa
        self.qkv = nn.Linear(c["dim"], 3 * c["dim"])
        self.proj = nn.Linear(c["dim"], c["dim"])
        if not use_sdpa:
            T = c["context"]
            self.register_buffer("causal", torch.tril(torch.ones(T, T, dtype=torch.bool)), persistent=False)

    def forward(self, x):  # (B, T, D)
        B, T, D = x.shape
        q, k, v = (t.view(B, T, self.heads, D // self.heads).transpose(1, 2)  # (B, h, T, d_k)
                   for t in self.qkv(x).split(D, dim=2))
        if self.use_sdpa:
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:  # PyTorch < 2.0: softmax(Q Kᵀ/√d_k) with the keys after each query masked out
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
            att = att.masked_fill(~self.causal[:T, :T], float("-inf")).softmax(dim=-1)
            y = att @ v
        return self.proj(y.transpose(1, 2).reshape(B, T, D))


class Mlp(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(dim, hidden), nn.Linear(hidden, dim)

    def forward(self, x):
        return self.fc2(F.gelu(self.fc1(x)))


class Block(nn.Module):
    def __init__(self, c, use_sdpa):
        super().__init__()
        self.norm1, self.attn = nn.LayerNorm(c["dim"]), CausalSelfAttention(c, use_sdpa)
        self.norm2, self.mlp = nn.LayerNorm(c["dim"]), Mlp(c["dim"], c["mlp_dim"])

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class Gpt(nn.Module):
    """nn/gpt.h, with its parameter names (token_embed.weight, blocks.0.attn.qkv.weight, ...)."""

    def __init__(self, c, use_sdpa):
        super().__init__()
        self.token_embed = nn.Embedding(c["vocab"], c["dim"])
        self.pos_embed = nn.Embedding(c["context"], c["dim"])
        self.dropout = nn.Dropout(c["dropout"])
        self.blocks = nn.ModuleList(Block(c, use_sdpa) for _ in range(c["layers"]))
        self.norm = nn.LayerNorm(c["dim"])
        self.head = None if c["tie_weights"] else nn.Linear(c["dim"], c["vocab"], bias=False)
        residual_std = 0.02 / math.sqrt(2 * c["layers"])
        for name, p in self.named_parameters():  # GPT-2's initialisation, as nn/gpt.cpp
            if name.endswith("bias"):
                nn.init.zeros_(p)
            elif "norm" in name:
                nn.init.ones_(p)
            else:
                residual = name.endswith(("attn.proj.weight", "mlp.fc2.weight"))
                nn.init.normal_(p, std=residual_std if residual else 0.02)

    def forward(self, ids):  # (B, T) -> logits (B, T, V)
        T = ids.shape[1]
        h = self.dropout(self.token_embed(ids) + self.pos_embed.weight[:T])
        for block in self.blocks:
            h = block(h)
        h = self.norm(h)
        return self.head(h) if self.head is not None else h @ self.token_embed.weight.t()


def read_config(path):
    try:
        with open(path) as f:
            c = json.load(f)
    except (OSError, ValueError) as e:
        sys.exit(f"{SCRIPT}: --config {path}: {e}; write it with uwaga-bench --mode gpt-config")
    needed = ("preset vocab context dim layers heads mlp_dim dropout tie_weights batch_size lr betas "
              "eps weight_decay clip_norm label_smoothing").split()
    missing = [k for k in needed if k not in c]
    if missing:
        sys.exit(f"{SCRIPT}: --config {path} lacks {', '.join(missing)}; write it with "
                 "uwaga-bench --mode gpt-config")
    return c


def bench_train(args):
    rss_before_model = peak_rss_kb()
    c = read_config(args.config)
    B, T = c["batch_size"], c["context"]
    use_sdpa, attention = choose_attention(args.attention, SCRIPT)
    model = Gpt(c, use_sdpa).train()
    opt, fused_arg = adamw(param_groups(model, c["weight_decay"]), lr=c["lr"], betas=tuple(c["betas"]),
                           eps=c["eps"])
    text = torch.randint(0, c["vocab"], (200000,))

    def get_batch():  # B random windows of T + 1 characters: inputs and the characters after them
        starts = torch.randint(0, len(text) - T - 1, (B,))
        x = torch.stack([text[i:i + T] for i in starts])
        y = torch.stack([text[i + 1:i + 1 + T] for i in starts])
        return x, y

    def loss_of(run, x, y):
        logits = run(x)
        return F.cross_entropy(logits.view(-1, logits.size(-1)), y.view(-1),
                               label_smoothing=c["label_smoothing"])

    def first_step(compiled):
        opt.zero_grad(set_to_none=True)
        loss_of(compiled, *get_batch()).backward()
        opt.zero_grad(set_to_none=True)

    run, compile_state = model, "off"
    if args.compile:
        run, compile_state = compile_model(model, args.compile_mode, first_step, SCRIPT)

    phases = {"forward": [], "backward": [], "optimizer": []}
    sink = [0.0]

    def train_step():
        opt.zero_grad(set_to_none=True)
        t0 = time.perf_counter()
        with mixed_precision(args.bf16):
            loss = loss_of(run, *get_batch())
        t1 = time.perf_counter()
        loss.backward()
        t2 = time.perf_counter()
        torch.nn.utils.clip_grad_norm_(model.parameters(), c["clip_norm"])
        opt.step()
        t3 = time.perf_counter()
        sink[0] += loss.item()
        phases["forward"].append(t1 - t0)
        phases["backward"].append(t2 - t1)
        phases["optimizer"].append(t3 - t2)

    cpu = []
    per_step, calls = time_calls(train_step, args, cpu)
    tokens = [B * T / s for s in per_step]
    out = header("gpt")
    out["impl"] = args.impl
    out.update(model=c["preset"], batch=B, context=T, warmup_steps=args.warmup, steps_per_repeat=calls,
               tokens_per_s=tokens, median_tokens_per_s=statistics.median(tokens),
               tokens_per_cpu_s=[B * T / s for s in cpu],
               phase_ms={k: statistics.median(v[args.warmup:]) * 1e3 for k, v in phases.items()},
               checksum=sink[0], parameters=sum(p.numel() for p in model.parameters()),
               rss_before_model_kb=rss_before_model, peak_rss_kb=peak_rss_kb(), script=SCRIPT,
               attention=attention, sdpa=use_sdpa, compile=compile_state, bf16=args.bf16,
               adamw="AdamW(fused=False)" if fused_arg else "AdamW (this PyTorch has no fused argument)")
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--config", required=True, help="the preset's fields: uwaga-bench --mode gpt-config > FILE")
    p.add_argument("--threads", type=int, default=1, help="torch.set_num_threads")
    p.add_argument("--warmup", type=int, default=3, help="untimed steps first (compilation included)")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--steps", type=int, default=0, help="steps per repeat (0: enough for --min-seconds)")
    p.add_argument("--min-seconds", type=float, default=0.25)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--bf16", action="store_true",
                   help="the forward pass under torch.autocast('cpu', dtype=torch.bfloat16)")
    p.add_argument("--compile", action="store_true", help="torch.compile the model (eager where unavailable)")
    p.add_argument("--compile-mode", default=None, help="torch.compile's mode, e.g. max-autotune")
    p.add_argument("--attention", default="auto", choices=["auto", "sdpa", "written"],
                   help="auto: scaled_dot_product_attention where PyTorch has it")
    p.add_argument("--impl", default="torch", help='the line\'s "impl" (e.g. torch-compile)')
    args = p.parse_args()
    if args.threads < 1 or args.repeats < 1 or args.warmup < 0 or args.steps < 0:
        sys.exit(f"{SCRIPT}: --threads and --repeats must be positive, --warmup and --steps not negative")
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    print(json.dumps(bench_train(args)), flush=True)


if __name__ == "__main__":
    main()
