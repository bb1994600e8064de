#!/usr/bin/python3
"""A uwaga-vit training run done again in PyTorch: the same run configuration, the same batches,
the same optimiser and schedule — so that what the two reach tells the framework apart from the
recipe and the data.

    /usr/bin/python3 apps/bench/vit_torch_run.py --like runs/x/cifar10-vit --out runs/x/torch

--like is a uwaga-vit run directory: its log.jsonl's first record holds the run's configuration
(the model, the recipe, the normalisation measured on the training set). From it this script
builds
  the model    torch_models.VisionTransformer as uwaga builds it (nn/vision_transformer.h): the
               same shape and initialisation (trunc-normal 0.02; convolutions kaiming-uniform), dropout on z_0 and on each
               block's attention and MLP outputs, attention dropout on the softmax's weights, drop
               path rising to its rate in the last block;
  the batches  uwaga's own DataLoader through the Python bindings (uwaga.apps.vit_loader): batch b
               of epoch e is the very batch uwaga-vit trained on at that step, augmented alike;
  the step     cross-entropy with the run's label smoothing, gradient clipping to the run's
               norm, AdamW (β 0.9, 0.999, ε 1e-8) with weight decay on the weights only (not
               biases, norms, embeddings, the class token: optim::make_param_groups), the learning
               rate of optim::WarmupCosineLr at every step (the warm-up cut to the run's length
               as uwaga-vit cuts it);
and evaluates the test set after every --eval-every epochs (and the last). It writes DIR/log.jsonl
with one record per epoch in uwaga's fields ("type": "epoch", "test_accuracy", ...), so
`bash apps/bench/cifar_recipe.sh report DIR` reads either. Only the random draws inside the model
differ (the initial weights, dropout, attention dropout and drop path masks): PyTorch's generator, not uwaga's.
The model may have CCT's tokenizer and sequence pooling (the cifar10-vit preset's), be CCT's own
(cct_details: the cifar10-cct preset's; torch_models.VisionTransformer with CCT's init), and the
moving average of the weights (--ema) is kept as optim::WithEma keeps it; Mixup and CutMix are
not done here: a run with them is refused.
Written for Debian's python3-torch 1.13; run with OMP_WAIT_POLICY=PASSIVE.
"""
import argparse
import contextlib
import json
import math
import os
import sys
import time

import torch
import torch.nn.functional as F

from torch_models import VisionTransformer, VitConfig, param_groups


def load_uwaga(build_dir):
    sys.path.insert(0, os.path.join(build_dir, "notebooks"))
    import uwaga  # noqa: E402  (the bindings live in the build directory)
    return uwaga


def run_config(uwaga, run_dir):
    """The uwaga-vit run of `run_dir` as a uwaga.apps.VitRunConfig (its log's start record)."""
    path = os.path.join(run_dir, "log.jsonl")
    try:
        with open(path) as f:
            start = json.loads(f.readline())
    except (OSError, ValueError) as e:
        sys.exit(f"vit_torch_run.py: --like {run_dir}: cannot read its first record from {path}: {e}")
    if start.get("type") != "start" or "config" not in start:
        sys.exit(f"vit_torch_run.py: --like {run_dir}: {path} does not begin with a run's start record")
    config = start["config"]
    for unsupported in ("mixup", "cutmix"):
        if config.get(unsupported, 0):
            sys.exit(f"vit_torch_run.py: the run uses {unsupported} {config[unsupported]}, which this "
                     "script does not reproduce")
    stem = config.get("model", {}).get("stem", "patch")
    if stem not in ("patch", "cct"):
        sys.exit(f"vit_torch_run.py: the run uses the {stem} stem; this script builds the patch "
                 "embedding and CCT's tokenizer only")
    run = uwaga.apps.vit_preset(config["preset"] or "mnist-tiny")
    model = run.model
    for key, value in config.pop("model").items():
        setattr(model, key, value)
    run.model = model
    for key, value in config.items():
        setattr(run, key, value)
    return run


def warmup_cosine(step, base, warmup, total, floor):
    """optim::WarmupCosineLr::lr."""
    if step < warmup:
        return base * (step + 1) / warmup
    if step >= total:
        return floor
    progress = math.pi * (step - warmup) / (total - warmup)
    return floor + (base - floor) * 0.5 * (1 + math.cos(progress))


class WeightAverage:
    """optim::WithEma: after every step θ̄ ← d θ̄ + (1 − d) θ, θ̄ = θ at the start (d = 0: off);
    swapped() puts θ̄ in the model's place while evaluating."""

    def __init__(self, model, decay):
        self.params, self.decay = list(model.parameters()), decay
        self.averages = [p.detach().clone() for p in self.params] if decay > 0 else []

    def update(self):
        with torch.no_grad():
            for a, p in zip(self.averages, self.params):
                a.mul_(self.decay).add_(p, alpha=1 - self.decay)

    @contextlib.contextmanager
    def swapped(self):
        with torch.no_grad():
            own = [p.detach().clone() for p in self.params]
            for a, p in zip(self.averages, self.params):
                p.copy_(a)
            try:
                yield
            finally:
                for o, p in zip(own, self.params):
                    p.copy_(o)


def torch_batch(batch):
    return torch.from_numpy(batch.images.numpy().copy()), torch.from_numpy(batch.labels.numpy().copy())


def evaluate(model, loader):
    model.eval()
    correct, n, loss = 0, 0, 0.0
    with torch.no_grad():
        for b in range(loader.batches_per_epoch()):
            images, labels = torch_batch(loader.batch(0, b))
            logits = model(images)
            loss += F.cross_entropy(logits, labels, reduction="sum").item()
            correct += (logits.argmax(1) == labels).sum().item()
            n += labels.numel()
    model.train()
    return correct / n, loss / n


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--like", required=True, help="a uwaga-vit run directory (its log.jsonl)")
    p.add_argument("--out", required=True, help="directory for this run's log.jsonl")
    p.add_argument("--build-dir", default="build", help="where uwaga's Python bindings were built")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--eval-every", type=int, default=1)
    p.add_argument("--seed", type=int, default=0, help="torch.manual_seed: initial weights, masks")
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    uwaga = load_uwaga(args.build_dir)
    run = run_config(uwaga, args.like)

    data_dir = uwaga.data.default_data_dir(run.dataset)
    train = uwaga.data.load_dataset(run.dataset, True, data_dir)
    if run.train_size > 0:
        train = uwaga.data.take_first(train, run.train_size)
    test = uwaga.data.load_dataset(run.dataset, False, data_dir)
    train_loader = uwaga.apps.vit_loader(run, train, True)
    test_loader = uwaga.apps.vit_loader(run, test, False, 500)

    m = run.model
    c = VitConfig()
    c.image_size, c.channels, c.patch, c.dim, c.depth, c.heads, c.mlp_dim = (
        m.image_size, m.channels, m.patch, m.dim, m.depth, m.heads, m.mlp_dim)
    c.num_classes, c.stem, c.pool, c.cct_details = m.num_classes, m.stem, m.pool, m.cct_details
    model = VisionTransformer(c, dropout=m.dropout, drop_path=m.drop_path,
                              attention_dropout=m.attention_dropout)
    average = WeightAverage(model, run.ema)
    opt = torch.optim.AdamW(param_groups(model, run.weight_decay), lr=run.lr, betas=(0.9, 0.999), eps=1e-8)
    per_epoch = train_loader.batches_per_epoch()
    total = run.epochs * per_epoch
    warmup = min(run.warmup, total - 1)  # apps/common/training.h cuts it to a short run's length

    os.makedirs(args.out, exist_ok=True)
    log = open(os.path.join(args.out, "log.jsonl"), "w")
    log.write(json.dumps({"type": "start", "like": args.like, "torch": torch.__version__,
                          "threads": args.threads, "seed": args.seed,
                          "parameters": sum(q.numel() for q in model.parameters())}) + "\n")
    print(f"PyTorch {torch.__version__} twin of {args.like}: {run.epochs} epochs of {per_epoch} "
          f"batches, {sum(q.numel() for q in model.parameters()):,} parameters", flush=True)
    step = 0
    for epoch in range(run.epochs):
        start, loss_sum, correct, seen = time.perf_counter(), 0.0, 0, 0
        for b in range(per_epoch):
            images, labels = torch_batch(train_loader.batch(epoch, b))
            lr = warmup_cosine(step, run.lr, warmup, total, run.min_lr)
            for group in opt.param_groups:
                group["lr"] = lr
            logits = model(images)
            loss = F.cross_entropy(logits, labels, label_smoothing=run.label_smoothing)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            if run.clip_norm > 0:
                torch.nn.utils.clip_grad_norm_(model.parameters(), run.clip_norm)
            opt.step()
            average.update()
            step += 1
            loss_sum += loss.item() * labels.numel()
            correct += (logits.argmax(1) == labels).sum().item()
            seen += labels.numel()
            if (b + 1) % 50 == 0:
                print(f"epoch {epoch + 1}/{run.epochs}  step {step}/{total}  loss {loss_sum / seen:.4f}  "
                      f"acc {correct / seen:.4f}  lr {lr:.2e}  "
                      f"{seen / (time.perf_counter() - start):.0f} items/s", flush=True)
        record = {"type": "epoch", "epoch": epoch + 1, "step": step, "lr": lr,
                  "seconds": time.perf_counter() - start,
                  "train_loss": loss_sum / seen, "train_accuracy": correct / seen}
        if (epoch + 1) % args.eval_every == 0 or epoch + 1 == run.epochs:
            if run.ema > 0:  # as uwaga-vit: the average is the test accuracy, the weights beside it
                record["test_raw_accuracy"], record["test_raw_loss"] = evaluate(model, test_loader)
                with average.swapped():
                    record["test_accuracy"], record["test_loss"] = evaluate(model, test_loader)
            else:
                record["test_accuracy"], record["test_loss"] = evaluate(model, test_loader)
            print(f"epoch {epoch + 1}/{run.epochs} done  train loss {record['train_loss']:.4f} "
                  f"acc {record['train_accuracy']:.4f}  test accuracy {record['test_accuracy']:.4f} "
                  f"loss {record['test_loss']:.4f}", flush=True)
        log.write(json.dumps(record) + "\n")
        log.flush()


if __name__ == "__main__":
    main()
