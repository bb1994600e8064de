#!/usr/bin/env python3
"""Fine-tuning GPT-2, computed independently of uwaga, for tests/nn/test_gpt2_checkpoint.cpp:

    python3 tests/nn/gpt2_finetune_reference.py OUT_DIR

OUT_DIR/model.safetensors + config.json   the small random GPT-2 of gpt2_torch_reference.py
                                          (2 layers, width 64, 4 heads, 50,257 tokens)
OUT_DIR/finetune.safetensors              tokens (B, T + 1): a batch of windows; losses (K + 1,):
                                          the mean next-token cross-entropy of the batch before
                                          each of K AdamW steps and after the last; grad.<name>:
                                          the gradients of a few weights at the start; after.<name>:
                                          those weights after the K steps; after32.<name>: the same
                                          from PyTorch in float32; hyper (4,): lr, beta1, beta2,
                                          weight decay

The forward pass is gpt2_torch_reference.py's, written from the paper, here in float64 with
PyTorch's autograd for the gradients and PyTorch's own torch.optim.AdamW for the steps, on the
parameter groups uwaga-gpt trains with: weight decay on the four Conv1D weights of each block,
none on biases, LayerNorms and the two embedding tables (optim/optimizer.h default_no_decay).
"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpt2_torch_reference as ref  # noqa: E402

B, T, K = 2, 16, 3
LR, BETA1, BETA2, WEIGHT_DECAY = 1e-3, 0.9, 0.999, 0.1
CHECKED = ["wte.weight", "wpe.weight", "h.0.attn.c_attn.weight", "h.1.mlp.c_proj.bias",
           "h.1.ln_2.weight", "ln_f.bias"]


def batch_loss(w, tokens):
    """Mean cross-entropy of every next token of every window, in float64."""
    total = 0.0
    for row in tokens:
        logits = ref.forward_float64(w, row[:-1])  # in the weights' dtype
        total = total + torch.nn.functional.cross_entropy(logits, row[1:], reduction="sum")
    return total / (tokens.shape[0] * (tokens.shape[1] - 1))


def fine_tune(w32, tokens, dtype):
    """K AdamW steps on `tokens` from the weights w32, computed in `dtype`: the losses before each
    step and after the last, the gradients of the CHECKED weights at the start, the weights."""
    params = {k: v.to(dtype).clone().requires_grad_(True) for k, v in w32.items()}
    decayed = [p for k, p in params.items() if k.endswith(".weight") and p.dim() == 2 and
               k not in ("wte.weight", "wpe.weight")]
    others = [p for k, p in params.items() if not any(p is d for d in decayed)]
    opt = torch.optim.AdamW([{"params": decayed, "weight_decay": WEIGHT_DECAY},
                             {"params": others, "weight_decay": 0.0}],
                            lr=LR, betas=(BETA1, BETA2), eps=1e-8)
    losses, grads = [], {}
    for step in range(K + 1):
        opt.zero_grad()
        loss = batch_loss(params, tokens)
        losses.append(loss.item())
        if step == K:
            break
        loss.backward()
        if step == 0:
            grads = {k: params[k].grad.detach().double().clone() for k in CHECKED}
        opt.step()
    return losses, grads, {k: params[k].detach().double().clone() for k in CHECKED}


def main(out):
    ref.main(out)  # model.safetensors, config.json (and the files its own test reads)
    w32 = ref.random_gpt2(torch.Generator().manual_seed(2019))  # the weights main() wrote
    tokens = torch.randint(0, ref.V, (B, T + 1), generator=torch.Generator().manual_seed(66))
    losses, grads, after = fine_tune(w32, tokens, torch.float64)
    # PyTorch's own float32 run, for how far float32 arithmetic alone ends from the float64 one.
    _, _, after32 = fine_tune(w32, tokens, torch.float32)
    ref.save_safetensors(os.path.join(out, "finetune.safetensors"), {
        "tokens": tokens, "losses": torch.tensor(losses, dtype=torch.float64),
        "hyper": torch.tensor([LR, BETA1, BETA2, WEIGHT_DECAY], dtype=torch.float64),
        **{"grad." + k: v for k, v in grads.items()}, **{"after." + k: v for k, v in after.items()},
        **{"after32." + k: v for k, v in after32.items()}})


if __name__ == "__main__":
    main(sys.argv[1])
