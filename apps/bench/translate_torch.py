#!/usr/bin/python3
"""PyTorch's side of the translator's benchmark: uwaga's Seq2SeqTransformer exactly as uwaga builds
it, trained (or run in eval mode) on the batches uwaga-bench wrote, one JSON object on stdout.

    uwaga-bench --mode translate-batches ... > batches.json
    /usr/bin/python3 apps/bench/translate_torch.py --mode train --threads 2 --batches batches.json
    modes: train (forward + loss, backward, clip + AdamW), eval (teacher-forced logits); also
    named translate and translate-eval, as in uwaga-bench

The model is torch_models.Seq2SeqTransformer as uwaga builds it (nn/seq2seq_transformer.h),
from the batch file's fields (preset "default": dim 128, heads 4, MLP 256, 2 encoder + 2 decoder
blocks), sinusoidal positions, the attention written out as uwaga computes it, uwaga's init.
A step as optim::Trainer takes it on one thread: zero_grad; logits (B·T, V),
cross-entropy ignoring pad with label smoothing (and the argmax accuracy count); backward;
clip_grad_norm; AdamW (β2 0.98, ε 1e-9; weight decay only on matrices, as make_param_groups).
The learning rate is constant (uwaga's warm-up/cosine schedule only changes a scalar).
Written for Debian's python3-torch 1.13; run with OMP_WAIT_POLICY=PASSIVE (as run.sh does).
"""
import argparse
import json
import statistics
import sys

import torch
import torch.nn.functional as F

from torch_models import Seq2SeqTransformer, param_groups
from torch_timing import header, peak_rss_kb, time_calls, timed_step


class Seq2SeqConfig:
    """The model and training fields of the batch file (uwaga's Seq2SeqConfig + the preset)."""

    def __init__(self, j):
        self.src_vocab, self.tgt_vocab, self.pad_id = j["src_vocab"], j["tgt_vocab"], j["pad_id"]
        self.dim, self.heads, self.mlp_dim = j["dim"], j["heads"], j["mlp_dim"]
        self.encoder_layers, self.decoder_layers = j["encoder_layers"], j["decoder_layers"]
        self.max_length, self.dropout = j["max_length"], j["dropout"]
        self.label_smoothing, self.clip_norm = j["label_smoothing"], j["clip_norm"]
        self.lr, self.weight_decay = j["lr"], j["weight_decay"]
        # uwaga-translate's AdamW: β2 = 0.98 and ε = 1e-9 as in "Attention Is All You Need".
        self.beta1, self.beta2, self.eps = j.get("beta1", 0.9), j.get("beta2", 0.98), j.get("eps", 1e-9)
        if j.get("positions", "sinusoidal") != "sinusoidal":
            sys.exit("translate_torch.py: only sinusoidal positions are modelled")
        if self.dim % self.heads:
            sys.exit(f"translate_torch.py: dim {self.dim} is not divisible by heads {self.heads}")


def load_batches(path):
    """The batch file -> (config, [(src, tgt_in, tgt_out)] as int64 tensors), checked as uwaga
    checks its inputs (ids inside the vocabularies, lengths up to max_length)."""
    with open(path) as f:
        j = json.load(f)
    c = Seq2SeqConfig(j)
    batches = []
    for i, b in enumerate(j["batches"]):
        src, tgt_in, tgt_out = (torch.tensor(b[k], dtype=torch.int64) for k in ("src", "tgt_in", "tgt_out"))
        B = src.shape[0]
        if src.dim() != 2 or tgt_in.dim() != 2 or tgt_in.shape != tgt_out.shape or tgt_in.shape[0] != B:
            sys.exit(f"translate_torch.py: batch {i}: src {tuple(src.shape)}, tgt_in {tuple(tgt_in.shape)}, "
                     f"tgt_out {tuple(tgt_out.shape)}: expected (B, S), (B, T), (B, T)")
        for ids, vocab, what in ((src, c.src_vocab, "src"), (tgt_in, c.tgt_vocab, "tgt_in"),
                                 (tgt_out, c.tgt_vocab, "tgt_out")):
            if ids.numel() and (ids.min() < 0 or ids.max() >= vocab):
                sys.exit(f"translate_torch.py: batch {i}: {what} holds ids outside its vocabulary of {vocab}")
            if ids.shape[1] > c.max_length:
                sys.exit(f"translate_torch.py: batch {i}: {what} is longer than max_length {c.max_length}")
        batches.append((src, tgt_in, tgt_out))
    if not batches:
        sys.exit(f"translate_torch.py: {path} holds no batches")
    return c, batches


def make_train_step(model, opt, batches, pad, label_smoothing, clip_norm, phases=None):
    """One step of optim::Trainer (one thread, the whole batch), cycling through the batches."""
    step = [0]

    def loss_of(src, tgt_in, tgt_out):
        logits = model(src, tgt_in)
        logits = logits.reshape(-1, logits.shape[-1])  # (B·T, V)
        targets = tgt_out.reshape(-1)
        loss = F.cross_entropy(logits, targets, ignore_index=pad, label_smoothing=label_smoothing)
        with torch.no_grad():  # train_batch's count_correct: argmax over the counted words
            counted = targets != pad
            (logits.argmax(1)[counted] == targets[counted]).sum().item()
        loss.item()  # the trainer checks the loss is finite before the update
        return loss

    def clip():
        torch.nn.utils.clip_grad_norm_(model.parameters(), clip_norm)

    def train_step():
        batch = batches[step[0] % len(batches)]
        step[0] += 1
        timed_step(opt, lambda: loss_of(*batch), phases, before_update=clip)

    return train_step


def make_optimizer(model, c, foreach=False):
    kwargs = {"foreach": True} if foreach else {}
    return torch.optim.AdamW(param_groups(model, c.weight_decay), lr=c.lr, betas=(c.beta1, c.beta2),
                             eps=c.eps, **kwargs)


def per_step_counts(batches, pad):
    """Mean sentences and mean non-pad target words per step over the cycle of batches."""
    sentences = statistics.mean(src.shape[0] for src, _, _ in batches)
    words = statistics.mean(int((tgt_out != pad).sum()) for _, _, tgt_out in batches)
    return sentences, words


def throughput_fields(per_step, cpu, batches, pad):
    sentences, words = per_step_counts(batches, pad)
    sps = [sentences / s for s in per_step]
    wps = [words / s for s in per_step]
    return dict(sentences_per_s=sps, median_sentences_per_s=statistics.median(sps),
                target_words_per_s=wps, median_target_words_per_s=statistics.median(wps),
                sentences_per_cpu_s=[sentences / s for s in cpu], target_words_per_step=words)


def bench_train(args):
    c, batches = load_batches(args.batches)
    model = Seq2SeqTransformer(c).train()
    opt = make_optimizer(model, c, args.foreach)
    phases = {"forward": [], "backward": [], "optimizer": []}
    cpu = []
    step = make_train_step(model, opt, batches, c.pad_id, c.label_smoothing, c.clip_norm, phases)
    per_step, calls = time_calls(step, args, cpu)
    timed = args.repeats * calls  # the phases of the timed steps are the last ones recorded
    out = header("translate")
    out.update(batch=batches[0][0].shape[0], warmup_steps=args.warmup, steps_per_repeat=calls,
               **throughput_fields(per_step, cpu, batches, c.pad_id))
    out.update(phase_ms={k: statistics.median(v[-timed:]) * 1e3 for k, v in phases.items()},
               parameters=sum(p.numel() for p in model.parameters()), foreach=args.foreach,
               peak_rss_kb=peak_rss_kb())
    return out


def bench_eval(args):
    c, batches = load_batches(args.batches)
    model = Seq2SeqTransformer(c).eval()
    step = [0]

    def eval_step():  # teacher-forced logits of one batch, no graph
        src, tgt_in, _ = batches[step[0] % len(batches)]
        step[0] += 1
        with torch.inference_mode():
            model(src, tgt_in)

    cpu = []
    per_step, calls = time_calls(eval_step, args, cpu)
    out = header("translate_eval")
    out.update(batch=batches[0][0].shape[0], warmup_steps=args.warmup, steps_per_repeat=calls,
               **throughput_fields(per_step, cpu, batches, c.pad_id))
    out.update(parameters=sum(p.numel() for p in model.parameters()), peak_rss_kb=peak_rss_kb())
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    # translate / translate-eval: the names uwaga-bench gives the same measurements (run.sh passes
    # both programs the same flags).
    p.add_argument("--mode", required=True, choices=["train", "eval", "translate", "translate-eval"])
    p.add_argument("--batches", required=True, help="JSON batch file of uwaga-bench --mode translate-batches")
    p.add_argument("--threads", type=int, default=1, help="torch.set_num_threads")
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--steps", type=int, default=0, help="calls per repeat (0: enough for --min-seconds)")
    p.add_argument("--min-seconds", type=float, default=0.25)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--foreach", action="store_true", help="AdamW(foreach=True)")
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    out = bench_train(args) if args.mode in ("train", "translate") else bench_eval(args)
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
