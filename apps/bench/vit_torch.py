#!/usr/bin/python3
"""PyTorch's side of apps/bench/run.sh: the mnist-tiny ViT exactly as uwaga builds it, and the
same measurements as uwaga-bench, with the same flags, one JSON object per line on stdout.

    /usr/bin/python3 apps/bench/vit_torch.py --mode train --threads 2 --batch 128
    modes: train, eval, sgemm, micro (--op mha,layernorm,gelu,xent), mha-scaling, profile

The model is torch_models.VisionTransformer as uwaga builds it (nn/vision_transformer.h): patches
of 7x7 -> 16 patches + class token = 17 tokens, dim 64, depth 6, heads 4, MLP 128, the attention
written out as uwaga computes it, uwaga's init. AdamW (lr 1e-3, weight decay 0.05 on matrices
only, as optim::make_param_groups), cross-entropy.
Written for Debian's python3-torch 1.13; run with OMP_WAIT_POLICY=PASSIVE (run.sh does).
"""
import argparse
import json
import os
import statistics
import sys

import torch
import torch.nn.functional as F

from torch_models import Attention, VisionTransformer, VitConfig, param_groups
from torch_timing import header, peak_rss_kb, time_calls, timed_step


def random_batches(c, batch, count=4):
    return [(torch.randn(batch, c.channels, c.image_size, c.image_size),
             torch.randint(0, c.num_classes, (batch,))) for _ in range(count)]


def make_train_step(model, opt, data, phases=None):
    step = [0]

    def train_step():
        images, labels = data[step[0] % len(data)]
        step[0] += 1
        timed_step(opt, lambda: F.cross_entropy(model(images), labels), phases)

    return train_step


def make_optimizer(model, args):
    kwargs = {"foreach": True} if args.foreach else {}
    return torch.optim.AdamW(param_groups(model, 0.05), lr=1e-3, **kwargs)


def bench_train(args):
    rss_before_model = peak_rss_kb()
    c = VitConfig()
    model = VisionTransformer(c)
    opt = make_optimizer(model, args)
    phases = {"forward": [], "backward": [], "optimizer": []}
    cpu = []
    per_step, calls = time_calls(make_train_step(model, opt, random_batches(c, args.batch), phases), args, cpu)
    ips = [args.batch / s for s in per_step]
    flops_per_image = 3.0 * c.forward_flops()
    out = header("train")
    out.update(batch=args.batch, warmup_steps=args.warmup, steps_per_repeat=calls, images_per_s=ips,
               median_images_per_s=statistics.median(ips), images_per_cpu_s=[args.batch / s for s in cpu],
               flops_per_image=flops_per_image,
               effective_gflops=statistics.median(ips) * flops_per_image / 1e9,
               phase_ms={k: statistics.median(v[args.warmup:]) * 1e3 for k, v in phases.items()},
               parameters=sum(p.numel() for p in model.parameters()), foreach=args.foreach,
               rss_before_model_kb=rss_before_model, peak_rss_kb=peak_rss_kb())
    return [out]


def bench_eval(args):
    c = VitConfig()
    model = VisionTransformer(c).eval()
    data = random_batches(c, args.batch)
    step = [0]

    def eval_step():
        with torch.inference_mode():
            model(data[step[0] % len(data)][0])
        step[0] += 1

    cpu = []
    per_call, _ = time_calls(eval_step, args, cpu)
    ips = [args.batch / s for s in per_call]
    out = header("eval")
    out.update(batch=args.batch, images_per_s=ips, median_images_per_s=statistics.median(ips),
               images_per_cpu_s=[args.batch / s for s in cpu],
               effective_gflops=statistics.median(ips) * c.forward_flops() / 1e9,
               peak_rss_kb=peak_rss_kb())
    return [out]


def bench_sgemm(args):
    lines = []
    for s in args.shapes.split(","):
        M, K, N = (int(v) for v in s.split("x"))
        A, B, C = torch.randn(M, K), torch.randn(K, N), torch.empty(M, N)
        per_call, _ = time_calls(lambda: torch.mm(A, B, out=C), args)
        gflops = [2.0 * M * N * K / t / 1e9 for t in per_call]
        out = header("sgemm")
        out.update(shape=f"{M}x{K}·{K}x{N}", m=M, n=N, k=K, gflops=gflops,
                   median_gflops=statistics.median(gflops))
        lines.append(out)
    return lines


def mha_forward_flops(batch, n, D):
    return 2.0 * batch * n * D * 4 * D + 2.0 * 2 * batch * n * n * D


def bench_micro(args):
    return [bench_micro_op(op, args) for op in args.op.split(",")]


def bench_micro_op(op, args):
    B, T, D, heads, hidden, classes = 128, 17, 64, 4, 128, 10
    flops = bytes_ = 0
    if op == "mha":
        layer = Attention(D, heads)
        x = torch.randn(B, T, D, requires_grad=True)
        g = torch.randn(B, T, D)

        def call():
            layer.zero_grad(set_to_none=True)
            x.grad = None
            layer(x).backward(g)

        flops, shape = 3 * mha_forward_flops(B, T, D), "x (128, 17, 64), 4 heads"
    elif op == "layernorm":
        x = torch.randn(B * T, D, requires_grad=True)
        w, b = torch.ones(D, requires_grad=True), torch.zeros(D, requires_grad=True)
        g = torch.randn(B * T, D)

        def call():
            x.grad = w.grad = b.grad = None
            F.layer_norm(x, (D,), w, b, 1e-5).backward(g)

        bytes_, shape = 4.0 * B * T * D * 5, "(2176, 64)"
    elif op == "gelu":
        x = torch.randn(B * T, hidden, requires_grad=True)
        g = torch.randn(B * T, hidden)

        def call():
            x.grad = None
            F.gelu(x).backward(g)

        bytes_, shape = 4.0 * B * T * hidden * 5, "(2176, 128)"
    elif op == "xent":
        x = torch.randn(B, classes, requires_grad=True)
        targets = torch.randint(0, classes, (B,))

        def call():
            x.grad = None
            F.cross_entropy(x, targets).backward()

        bytes_, shape = 4.0 * B * classes * 2, "logits (128, 10)"
    else:
        sys.exit(f"vit_torch.py: unknown --op '{op}'; expected mha, layernorm, gelu or xent")
    per_call, calls = time_calls(call, args)
    us = [t * 1e6 for t in per_call]
    out = header("micro")
    out.update(op=op, shape=shape, calls_per_repeat=calls, us=us, median_us=statistics.median(us))
    if flops:
        out["gflops"] = flops / (statistics.median(us) * 1e-6) / 1e9
    if bytes_:
        out["gb_per_s"] = bytes_ / (statistics.median(us) * 1e-6) / 1e9
    return out


def bench_mha_scaling(args):
    lines, D, heads = [], 64, 4
    for n in (int(v) for v in args.lengths.split(",")):
        batch = max(1, args.tokens // n)
        layer = Attention(D, heads)
        x = torch.randn(batch, n, D, requires_grad=True)
        g = torch.randn(batch, n, D)

        def call():
            layer.zero_grad(set_to_none=True)
            x.grad = None
            layer(x).backward(g)

        per_call, _ = time_calls(call, args)
        ms = [t * 1e3 for t in per_call]
        med = statistics.median(ms)
        out = header("mha-scaling")
        out.update(n=n, batch=batch, ms=ms, median_ms=med, us_per_sequence=med * 1e3 / batch,
                   gflops=3 * mha_forward_flops(batch, n, D) / (med * 1e-3) / 1e9, peak_rss_kb=peak_rss_kb())
        lines.append(out)
    return lines


def profile(args):
    """torch.profiler's per-op table of training steps, for comparison with uwaga's perf profile."""
    c = VitConfig()
    model = VisionTransformer(c)
    train_step = make_train_step(model, make_optimizer(model, args), random_batches(c, args.batch))
    for _ in range(max(args.warmup, 1)):
        train_step()
    steps = args.steps or 10
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        for _ in range(steps):
            train_step()
    print(f"# PyTorch {torch.__version__}, {torch.get_num_threads()} threads, batch {args.batch}, "
          f"{steps} training steps, OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY', 'unset')}")
    print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=30))
    return []


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--mode", required=True, choices=["train", "eval", "sgemm", "micro", "mha-scaling", "profile"])
    p.add_argument("--threads", type=int, default=1, help="torch.set_num_threads")
    p.add_argument("--batch", type=int, default=128)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--steps", type=int, default=0, help="calls per repeat (0: enough for --min-seconds)")
    p.add_argument("--min-seconds", type=float, default=0.25)
    p.add_argument("--op", default="mha,layernorm,gelu,xent", help="micro: any of mha, layernorm, gelu, xent")
    p.add_argument("--shapes", default="1024x1024x1024,2176x64x192,2176x64x64,2176x64x128,2176x128x64",
                   help="sgemm: MxKxN for (MxK)·(KxN)")
    p.add_argument("--lengths", default="16,32,64,128,256,512,1024",
                   help="mha-scaling: sequence lengths n")
    p.add_argument("--tokens", type=int, default=4096, help="mha-scaling: batch · n")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--foreach", action="store_true", help="AdamW(foreach=True)")
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    modes = {"train": bench_train, "eval": bench_eval, "sgemm": bench_sgemm, "micro": bench_micro,
             "mha-scaling": bench_mha_scaling, "profile": profile}
    for line in modes[args.mode](args):
        print(json.dumps(line), flush=True)


if __name__ == "__main__":
    main()
