#!/usr/bin/python3
"""Do torch_models.py's models compute what uwaga's do? Each model is built by uwaga (through its
Python bindings), its parameters copied by name into the PyTorch model, and both run the same
inputs in eval mode, float32: one line per model with the largest logit difference, both
cross-entropy losses and the largest relative gradient difference. Exit status 1 when a model
is off by more than float32 rounding (logits 1e-5, gradients 1e-4 relative), 2 on errors.

    /usr/bin/python3 apps/bench/torch_parity.py [BUILD_DIR]      (default build; needs its
                                                                  notebooks/ bindings, uwaga-bench)

Checked: the mnist-tiny ViT (vit_torch.py's), cifar10-small with linear patches and the
written-out fallback of FusedAttention (vit_torch2.py's on PyTorch 1.13), cifar10-cct (the
cifar10-vit preset's model: CCT's tokenizer and sequence pooling) and with cct_details (CCT's own
model, the cifar10-cct preset's), the GPT untied and tied
(gpt_torch.py's, written-out causal path) and the translator on a batch of uwaga-bench's batch
file (translate_torch.py's). The PyTorch 2 paths (SDPA, the Conv2d patches) are not uwaga's ops.
"""
import json
import os
import subprocess
import sys

import numpy as np
import torch
import torch.nn.functional as F



def die(message):
    print(f"torch_parity.py: {message}", file=sys.stderr)
    sys.exit(2)


here = os.path.dirname(os.path.abspath(__file__))
build = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "..", "build")
sys.path.insert(0, os.path.join(build, "notebooks"))
try:
    import uwaga
except ImportError as e:
    die(f"cannot import uwaga's bindings from {build}/notebooks ({e}); build them")
sys.path.insert(0, here)
import torch_models as tm  # noqa: E402


def bench(*args):
    try:
        return json.loads(subprocess.run([os.path.join(build, "apps", "uwaga-bench"), *args], check=True,
                                         capture_output=True, text=True).stdout)
    except (OSError, subprocess.CalledProcessError, ValueError) as e:
        die(f"uwaga-bench {' '.join(args)} failed: {e}")


def check(what, u_model, t_model, inputs, targets, ignore=-100):
    """The largest differences of logits, loss and gradients; True when within float32 rounding."""
    u_params, t_params = dict(u_model.named_parameters()), dict(t_model.named_parameters())
    if set(u_params) != set(t_params):
        die(f"{what}: the parameter names differ: {sorted(set(u_params) ^ set(t_params))[:6]}")
    with torch.no_grad():
        for name, p in t_params.items():
            p.copy_(torch.from_numpy(np.array(u_params[name].numpy())))
    u_model.eval()
    t_model.eval()
    u_logits = u_model(*(uwaga.tensor(x.numpy(), dtype=uwaga.int64 if x.dtype == torch.int64 else None)
                         for x in inputs))
    t_logits = t_model(*inputs)
    V = t_logits.shape[-1]
    u_loss = uwaga.cross_entropy(uwaga.reshape(u_logits, [-1, V]),
                                 uwaga.tensor(targets.reshape(-1).numpy(), dtype=uwaga.int64), ignore_index=ignore)
    t_loss = F.cross_entropy(t_logits.reshape(-1, V), targets.reshape(-1), ignore_index=ignore)
    u_loss.backward()
    t_loss.backward()
    logits = (torch.from_numpy(np.array(u_logits.numpy())) - t_logits.detach()).abs().max().item()
    # Relative to each parameter's largest gradient, or to a thousandth of the model's largest where
    # that is smaller: a gradient that is 0 in exact arithmetic (the sequence pooling's bias, as the
    # softmax ignores a shift) is float32 rounding on both sides.
    floor = 1e-3 * max(np.abs(p.grad.numpy()).max() for p in t_params.values())
    grads = max(float(np.abs(np.array(u_params[n].grad.numpy()) - p.grad.numpy()).max() /
                      max(np.abs(p.grad.numpy()).max(), floor, 1e-30)) for n, p in t_params.items())
    ok = logits <= 1e-5 and grads <= 1e-4
    print(f"{what}: {u_model.num_parameters():,} parameters; logits within {logits:.1e}; loss uwaga "
          f"{float(u_loss.numpy()):.7f}, PyTorch {t_loss.item():.7f}; gradients within {grads:.1e} relative"
          + ("" if ok else "  DIFFERENT"))
    return ok


def main():
    torch.manual_seed(0)
    ok = True
    for name, use_sdpa, patches, cct_details in (
            ("mnist-tiny", None, "linear", False), ("cifar10-small", False, "linear", False),
            ("cifar10-cct", None, "linear", False), ("cifar10-cct", None, "linear", True)):
        c = tm.VitConfig(name)
        c.cct_details = cct_details
        uc = uwaga.nn.VitConfig()
        for k in ("image_size", "channels", "patch", "dim", "depth", "heads", "mlp_dim", "stem", "pool",
                  "cct_details"):
            setattr(uc, k, getattr(c, k))
        images = torch.randn(8, c.channels, c.image_size, c.image_size)
        details = ", CCT's details" if cct_details else ""
        ok &= check(f"ViT {name}{details} ({'Attention' if use_sdpa is None else 'FusedAttention written out'})",
                    uwaga.nn.VisionTransformer(uc, uwaga.Generator(1)), tm.VisionTransformer(c, use_sdpa, patches),
                    [images], torch.randint(0, 10, (8,)))
    for tied in (False, True):
        c = dict(bench("--mode", "gpt-config", "--model", "shakespeare-tiny"), dropout=0.0, tie_weights=tied)
        uc = uwaga.nn.GptConfig()
        for k in ("context", "dim", "heads", "layers", "mlp_dim", "vocab", "tie_weights", "dropout"):
            setattr(uc, k, c[k])
        ids = torch.randint(0, c["vocab"], (4, c["context"] + 1))
        ok &= check(f"GPT {c['preset']}{', tied' if tied else ''} (FusedAttention written out, causal)",
                    uwaga.nn.Gpt(uc, uwaga.Generator(1)), tm.Gpt(c, False), [ids[:, :-1]], ids[:, 1:])
    j = bench("--mode", "translate-batches", "--count", "1")
    uc = uwaga.nn.Seq2SeqConfig()
    for k in ("src_vocab", "tgt_vocab", "dim", "heads", "encoder_layers", "decoder_layers", "mlp_dim", "max_length",
              "pad_id"):
        setattr(uc, k, j[k])
    uc.dropout = 0.0
    tc = type("Config", (), {**{k: getattr(uc, k) for k in (
        "src_vocab", "tgt_vocab", "dim", "heads", "encoder_layers", "decoder_layers", "mlp_dim", "max_length",
        "pad_id")}, "dropout": 0.0})
    src, tgt_in, tgt_out = (torch.tensor(j["batches"][0][k], dtype=torch.int64) for k in ("src", "tgt_in", "tgt_out"))
    ok &= check(f"translator {j['preset']} (Attention, masks)", uwaga.nn.Seq2SeqTransformer(uc, uwaga.Generator(1)),
                tm.Seq2SeqTransformer(tc), [src, tgt_in], tgt_out, ignore=j["pad_id"])
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
