#!/usr/bin/python3
"""The ViT training benchmark as a PyTorch 2 user writes it: one JSON line on stdout, in the format
of vit_torch.py --mode train, so apps/bench/summarize.py can read it.

    /usr/bin/python3 apps/bench/vit_torch2.py --threads 2 --batch 128
    /usr/bin/python3 apps/bench/vit_torch2.py --model cifar10-small --threads 1 --compile

Where vit_torch.py writes every step out as uwaga computes it, this one uses what PyTorch 2
offers: F.scaled_dot_product_attention, nn.LayerNorm, a Conv2d patch embedding (or --patch-embed
linear), torch.optim.AdamW(fused=False) and optionally torch.compile (torch_models.VisionTransformer
with FusedAttention). The models:

    mnist-tiny     28x28x1, patch 7 (17 tokens), dim 64, depth 6, heads 4, MLP 128
    cifar10-small  32x32x3, patch 4 (65 tokens), dim 96, depth 6, heads 4, MLP 192
    cifar10-vit    32x32x3, patch 4 (65 tokens), dim 128, depth 6, heads 4, MLP 256
    vit-d192       32x32x3, patch 4 (65 tokens), dim 192, depth 12, heads 3, MLP 768

all pre-LN, class token, 10 classes, cross-entropy, AdamW lr 1e-3 with weight decay 0.05 on
matrices only (as vit_torch.py and uwaga's optim::make_param_groups), on random data.

Runs on Debian's python3-torch 1.13 too: without scaled_dot_product_attention the attention is
written out (softmax(Q Kᵀ/√d_k) V) and the line says so in "attention"; without torch.compile,
--compile says why on stderr and in "compile", and the run goes on eagerly. Run with
OMP_WAIT_POLICY=PASSIVE as run.sh does for vit_torch.py.
"""
import argparse
import json
import os
import statistics
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_models import VIT_MODELS, VisionTransformer, VitConfig, param_groups  # noqa: E402
from torch_timing import (adamw, choose_attention, compile_model, header,  # noqa: E402
                          peak_rss_kb, time_calls, timed_step)


def bench_train(args):
    rss_before_model = peak_rss_kb()
    c = VitConfig(args.model)
    use_sdpa, attention = choose_attention(args.attention, "vit_torch2.py")
    model = VisionTransformer(c, use_sdpa, args.patch_embed)
    opt, fused_arg = adamw(param_groups(model, 0.05), lr=1e-3)
    data = [(torch.randn(args.batch, c.channels, c.image_size, c.image_size),
             torch.randint(0, c.num_classes, (args.batch,))) for _ in range(4)]

    def first_step(compiled):
        opt.zero_grad(set_to_none=True)
        F.cross_entropy(compiled(data[0][0]), data[0][1]).backward()
        opt.zero_grad(set_to_none=True)

    run, compile_state = model, "off"
    if args.compile:
        run, compile_state = compile_model(model, args.compile_mode, first_step, "vit_torch2.py")

    phases = {"forward": [], "backward": [], "optimizer": []}
    step = [0]

    def train_step():
        images, labels = data[step[0] % len(data)]
        step[0] += 1
        timed_step(opt, lambda: F.cross_entropy(run(images), labels), phases, args.bf16)

    cpu = []
    per_step, calls = time_calls(train_step, args, cpu)
    ips = [args.batch / s for s in per_step]
    flops_per_image = 3.0 * c.forward_flops()
    out = header("train")
    out["impl"] = args.impl
    out.update(batch=args.batch, warmup_steps=args.warmup, steps_per_repeat=calls, images_per_s=ips,
               median_images_per_s=statistics.median(ips), images_per_cpu_s=[args.batch / s for s in cpu],
               flops_per_image=flops_per_image,
               effective_gflops=statistics.median(ips) * flops_per_image / 1e9,
               phase_ms={k: statistics.median(v[args.warmup:]) * 1e3 for k, v in phases.items()},
               parameters=sum(p.numel() for p in model.parameters()), foreach=False,
               rss_before_model_kb=rss_before_model, peak_rss_kb=peak_rss_kb(),
               script="vit_torch2.py", model=args.model, tokens=c.tokens(), dim=c.dim, depth=c.depth,
               heads=c.heads, mlp_dim=c.mlp_dim, attention=attention, sdpa=use_sdpa,
               compile=compile_state, bf16=args.bf16, patch_embed=args.patch_embed,
               adamw="AdamW(fused=False)" if fused_arg else "AdamW (this PyTorch has no fused argument)")
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--mode", default="train", choices=["train"], help="only train (as vit_torch.py --mode train)")
    p.add_argument("--model", default="mnist-tiny", choices=sorted(VIT_MODELS))
    p.add_argument("--threads", type=int, default=1, help="torch.set_num_threads")
    p.add_argument("--batch", type=int, default=128)
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
    p.add_argument("--patch-embed", default="conv", choices=["conv", "linear"])
    p.add_argument("--impl", default="torch", help='the line\'s "impl" (e.g. torch2 beside vit_torch.py\'s lines)')
    args = p.parse_args()
    if args.threads < 1 or args.batch < 1 or args.repeats < 1 or args.warmup < 0 or args.steps < 0:
        sys.exit("vit_torch2.py: --threads, --batch and --repeats must be positive, --warmup and --steps not negative")
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    print(json.dumps(bench_train(args)), flush=True)


if __name__ == "__main__":
    main()
