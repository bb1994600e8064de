#!/usr/bin/python3
"""PyTorch's side of the translator's benchmark: uwaga's Seq2SeqTransformer exactly as uwaga builds
it, trained (or run in eval mode) on the batches uwaga-bench wrote, one JSON object on stdout.

    uwaga-bench --mode translate-batches ... > batches.json
    /usr/bin/python3 apps/bench/translate_torch.py --mode train --threads 2 --batches batches.json
    modes: train (forward + loss, backward, clip + AdamW), eval (teacher-forced logits); also
    named translate and translate-eval, as in uwaga-bench

The model (nn/seq2seq_transformer.h), built from the batch file's fields (preset "default": dim
128, heads 4, MLP 256, 2 encoder + 2 decoder blocks):
  encoder  x = dropout(embed(src)·√D + P), pre-LN blocks  x += MSA(LN(x)); x += MLP(LN(x)),
           memory = LN(x); the self-attention masks padded source words (key padding).
  decoder  y = dropout(embed(tgt_in)·√D + P), pre-LN blocks  y += MaskedMSA(LN(y));
           y += CrossMHA(LN(y), memory); y += MLP(LN(y)); logits = head(LN(y)). The self-attention
           is causal only (uwaga passes no target padding mask: the causal mask already keeps real
           words from seeing the padding after them); the cross-attention masks padded source words.
P are the fixed sinusoids, LayerNorm eps 1e-5, MLP fc2(GELU(fc1)) with exact (erf) GELU, dropout
on the embeddings only. Attention is written out as uwaga computes it: self-attention qkv =
Linear(D, 3D), cross-attention q = Linear(D, D) and kv = Linear(D, 2D) on the memory; per head
E = Q Kᵀ/√d_k, masked scores -inf, A = softmax(E), Y = A V, then proj. (A source of only padding
would give NaN rows here where uwaga gives 0; real sources always hold EOS.) Init as uwaga:
embeddings N(0, 1/D), Linear weights trunc-normal(0, 0.02) in ±0.04, biases 0, LayerNorm γ 1, β 0.
A step as optim::Trainer takes it on one thread: zero_grad; logits (B·T, V),
cross-entropy ignoring pad with label smoothing (and the argmax accuracy count); backward;
clip_grad_norm; AdamW (β2 0.98, ε 1e-9; weight decay only on matrices, as make_param_groups).
The learning rate is constant (uwaga's warm-up/cosine schedule only changes a scalar).
Written for Debian's python3-torch 1.13; run with OMP_WAIT_POLICY=PASSIVE (as run.sh does).
"""
import argparse
import json
import math
import statistics
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

from torch_timing import header, peak_rss_kb, time_calls


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


def sinusoidal_positions(length, dim):
    """PE(pos, 2i) = sin(pos / 10000^(2i/D)), PE(pos, 2i+1) = cos(...), in float64 then float32
    (nn/positional_encoding.cpp)."""
    pos = torch.arange(length, dtype=torch.float64)[:, None]
    j = torch.arange(dim)
    angle = pos / torch.pow(10000.0, (j - j % 2).to(torch.float64) / dim)
    return torch.where(j % 2 == 0, torch.sin(angle), torch.cos(angle)).to(torch.float32)


class Attention(nn.Module):
    """Multi-head attention, every step explicit (no fused scaled_dot_product_attention).
    Self-attention: qkv = Linear(D, 3D). Cross-attention: q = Linear(D, D) on x, kv =
    Linear(D, 2D) on the memory. mask (broadcast to (B, h, T, S)) is True where a key is hidden."""

    def __init__(self, dim, heads, cross=False):
        super().__init__()
        self.heads, self.d_k = heads, dim // heads
        if cross:
            self.q, self.kv = nn.Linear(dim, dim), nn.Linear(dim, 2 * dim)
        else:
            self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x, memory=None, mask=None):  # x (B, T, D), memory (B, S, D)
        B, T, D = x.shape
        h, d_k = self.heads, self.d_k
        if memory is None:
            qkv = self.qkv(x).reshape(B, T, 3, h, d_k).permute(2, 0, 3, 1, 4)
            Q, K, V = qkv[0], qkv[1], qkv[2]  # (B, h, T, d_k)
        else:
            S = memory.shape[1]
            Q = self.q(x).reshape(B, T, h, d_k).transpose(1, 2)  # (B, h, T, d_k)
            kv = self.kv(memory).reshape(B, S, 2, h, d_k).permute(2, 0, 3, 1, 4)
            K, V = kv[0], kv[1]  # (B, h, S, d_k)
        E = Q @ K.transpose(-2, -1) / math.sqrt(d_k)  # (B, h, T, S)
        if mask is not None:
            E = E.masked_fill(mask, float("-inf"))
        A = E.softmax(dim=-1)
        Y = A @ V  # (B, h, T, d_k)
        return self.proj(Y.transpose(1, 2).reshape(B, T, D))


class Mlp(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(dim, hidden), nn.Linear(hidden, dim)

    def forward(self, x):
        return self.fc2(F.gelu(self.fc1(x)))  # exact (erf) GELU


class EncoderBlock(nn.Module):
    """nn/transformer_encoder_block.h: z′ = MSA(LN(z)) + z, z = MLP(LN(z′)) + z′."""

    def __init__(self, dim, heads, mlp_dim):
        super().__init__()
        self.norm1, self.attn = nn.LayerNorm(dim, eps=1e-5), Attention(dim, heads)
        self.norm2, self.mlp = nn.LayerNorm(dim, eps=1e-5), Mlp(dim, mlp_dim)

    def forward(self, z, mask):
        z = z + self.attn(self.norm1(z), mask=mask)
        return z + self.mlp(self.norm2(z))


class DecoderBlock(nn.Module):
    """nn/transformer_decoder_block.h: causal self-attention, cross-attention, MLP, all pre-LN."""

    def __init__(self, dim, heads, mlp_dim):
        super().__init__()
        self.norm1, self.self_attn = nn.LayerNorm(dim, eps=1e-5), Attention(dim, heads)
        self.norm2, self.cross_attn = nn.LayerNorm(dim, eps=1e-5), Attention(dim, heads, cross=True)
        self.norm3, self.mlp = nn.LayerNorm(dim, eps=1e-5), Mlp(dim, mlp_dim)

    def forward(self, y, memory, self_mask, memory_mask):
        y = y + self.self_attn(self.norm1(y), mask=self_mask)
        y = y + self.cross_attn(self.norm2(y), memory, mask=memory_mask)
        return y + self.mlp(self.norm3(y))


class Seq2SeqTransformer(nn.Module):
    """nn/seq2seq_transformer.h with sinusoidal positions; the same parameter names."""

    def __init__(self, c):
        super().__init__()
        self.c = c
        self.src_embed = nn.Embedding(c.src_vocab, c.dim)
        self.tgt_embed = nn.Embedding(c.tgt_vocab, c.dim)
        self.encoder = nn.ModuleList(EncoderBlock(c.dim, c.heads, c.mlp_dim) for _ in range(c.encoder_layers))
        self.encoder_norm = nn.LayerNorm(c.dim, eps=1e-5)
        self.decoder = nn.ModuleList(DecoderBlock(c.dim, c.heads, c.mlp_dim) for _ in range(c.decoder_layers))
        self.decoder_norm = nn.LayerNorm(c.dim, eps=1e-5)
        self.head = nn.Linear(c.dim, c.tgt_vocab)
        self.register_buffer("sinusoids", sinusoidal_positions(c.max_length, c.dim), persistent=False)
        for name, p in self.named_parameters():  # uwaga's init
            if "embed" in name:  # N(0, 1/D): scaled by √D, entries ~N(0, 1) like the sinusoids
                nn.init.normal_(p, std=1.0 / math.sqrt(c.dim))
            elif name.endswith("bias"):
                nn.init.zeros_(p)
            elif "norm" in name:
                nn.init.ones_(p)
            else:
                nn.init.trunc_normal_(p, std=0.02, a=-0.04, b=0.04)

    def embed(self, table, ids):  # (B, L) -> dropout(embed(ids)·√D + P[:L]) (B, L, D)
        x = table(ids) * math.sqrt(self.c.dim) + self.sinusoids[: ids.shape[1]]
        return F.dropout(x, self.c.dropout, self.training)

    def forward(self, src, tgt_in):  # (B, S), (B, T) int64 -> logits (B, T, V_tgt)
        T = tgt_in.shape[1]
        src_mask = (src == self.c.pad_id)[:, None, None, :]  # (B, 1, 1, S): padded source keys
        causal = torch.ones(T, T, dtype=torch.bool).triu(1)  # (T, T): key j > query i hidden
        x = self.embed(self.src_embed, src)
        for block in self.encoder:
            x = block(x, src_mask)
        memory = self.encoder_norm(x)  # (B, S, D)
        y = self.embed(self.tgt_embed, tgt_in)
        for block in self.decoder:
            y = block(y, memory, causal, src_mask)
        return self.head(self.decoder_norm(y))


def param_groups(model, weight_decay):
    """optim::make_param_groups: no decay on vectors (biases, norms) and embeddings."""
    decay, no_decay = [], []
    for name, p in model.named_parameters():
        skip = p.dim() < 2 or any(part in name for part in ("embed", "pos_", "cls_token"))
        (no_decay if skip else decay).append(p)
    return [{"params": decay, "weight_decay": weight_decay}, {"params": no_decay, "weight_decay": 0.0}]


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


def make_train_step(model, opt, batches, pad, label_smoothing, clip_norm, phases=None, losses=None):
    """One step of optim::Trainer (one thread, the whole batch), cycling through the batches."""
    step = [0]

    def train_step():
        src, tgt_in, tgt_out = batches[step[0] % len(batches)]
        step[0] += 1
        opt.zero_grad(set_to_none=True)
        t0 = time.perf_counter()
        logits = model(src, tgt_in)
        logits = logits.reshape(-1, logits.shape[-1])  # (B·T, V)
        targets = tgt_out.reshape(-1)
        loss = F.cross_entropy(logits, targets, ignore_index=pad, label_smoothing=label_smoothing)
        with torch.no_grad():  # train_batch's count_correct: argmax over the counted words
            counted = targets != pad
            (logits.argmax(1)[counted] == targets[counted]).sum().item()
        value = loss.item()  # the trainer checks the loss is finite before the update
        t1 = time.perf_counter()
        loss.backward()
        t2 = time.perf_counter()
        torch.nn.utils.clip_grad_norm_(model.parameters(), clip_norm)
        opt.step()
        t3 = time.perf_counter()
        if phases is not None:
            phases["forward"].append(t1 - t0)
            phases["backward"].append(t2 - t1)
            phases["optimizer"].append(t3 - t2)
        if losses is not None:
            losses.append(value)

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
