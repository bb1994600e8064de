#!/usr/bin/python3
"""Where one uwaga training step spends its time, per autograd op: reads `perf script` output of
a call-graph profile (perf record --call-graph dwarf) of uwaga-bench --mode train and attributes
every sample to

  phase   forward (model + loss), backward (under run_backward), replicas (adding the replicas'
          gradients), optimizer, zero_grad
  op      forward: the innermost uwaga op on the stack (linear, permute, gelu, layer_norm, …)
          backward: the autograd node whose backward rule is running (the BackwardFn's owner),
          or "engine: <op>" for the engine's own work (adding gradients that meet)
  module  forward only: the innermost block-level module (MultiHeadAttention, MLP, split_heads…)

    perf script -i perf.data --no-inline -F ip,sym | /usr/bin/python3 apps/bench/profile_ops.py

Profile on one thread: OpenMP worker threads' stacks do not lead back to the op that forked them.
"""
import collections
import re
import sys

MODULES = re.compile(r"uwaga::nn::(?:(?:MultiHeadAttention|MLP|LayerNorm|VisionTransformer|"
                     r"TransformerEncoderBlock)::\w+|split_heads|merge_heads|patchify)$")
HELPERS = {"uwaga::gemm", "uwaga::dispatch_float", "uwaga::run_backward", "uwaga::Tensor::backward"}


def strip_templates(s):
    out, depth = [], 0
    for ch in s:
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        elif depth == 0:
            out.append(ch)
    return "".join(out)


def owner(sym):
    """The function a frame belongs to; for a lambda, the function that defines it."""
    sym = sym.replace("(anonymous namespace)", "{anon}")
    i = sym.find("::{lambda")
    if i < 0:
        return strip_templates(sym)
    j = i - 6 if sym[:i].endswith(" const") else i
    if j == 0 or sym[j - 1] != ")":
        return strip_templates(sym[:i])
    depth, k = 0, j - 1  # walk back over the argument list
    while k >= 0:
        depth += {")": 1, "(": -1}.get(sym[k], 0)
        if depth == 0:
            break
        k -= 1
    depth, start = 0, k - 1  # then over the qualified name (template arguments included)
    while start >= 0:
        ch = sym[start]
        if ch == ">":
            depth += 1
        elif ch == "<":
            if depth == 0:
                break
            depth -= 1
        elif depth == 0 and not (ch.isalnum() or ch in "_:{}~"):
            break
        start -= 1
    return strip_templates(sym[start + 1:k])


def short(name):
    return name.replace("uwaga::", "").replace("{anon}::", "").replace("nn::", "")


def classify(frames):
    """frames: symbols from the leaf to the root. Returns (phase, op, module, leaf)."""
    owners = [owner(f) for f in frames]
    leaf = short(owners[0]) if frames else "?"
    if frames and "::{lambda" not in frames[0]:
        leaf = short(strip_templates(frames[0].replace("(anonymous namespace)", "{anon}")))
    # The forward and backward passes run inside optim::DataParallel::gradient, so they are told
    # apart before the optimizer is (the optimizer's frames are the other uwaga::optim:: ones).
    if any(o == "uwaga::run_backward" for o in owners):
        phase = "backward"
    elif any(o.endswith("VisionTransformer::forward") or o == "uwaga::nn::cross_entropy" for o in owners):
        phase = "forward"
    elif any(o.endswith("add_gradients") for o in owners):
        phase = "replicas"
    elif any("uwaga::optim::" in o and "DataParallel" not in o for o in owners):
        phase = "optimizer"
    elif any(o.endswith("Module::zero_grad") for o in owners):
        phase = "zero_grad"
    else:
        return "other", "", "", leaf

    def innermost_op(stop=None):
        for f, o in zip(frames, owners):
            if stop and o == stop:
                break
            if o.startswith("uwaga::") and "{anon}::" not in o and o not in HELPERS:
                return short(o)
        return "?"

    module = ""
    if phase == "backward":
        node = next((short(o) for f, o in zip(frames, owners)
                     if f.startswith("std::_Function_handler<std::vector<uwaga::Tensor")), None)
        op = node if node else "engine: " + innermost_op(stop="uwaga::run_backward")
        op = op.replace("permute_impl", "permute")
    elif phase == "optimizer":
        op = next((short(o) for o in owners if "uwaga::optim::" in o), "?")
    else:
        op = innermost_op()
        module = next((short(o) for o in owners if MODULES.search(o)), "")
        if phase == "forward" and module == "" and op == "cross_entropy":
            module = "(loss)"
    return phase, op, module, leaf


def read_samples(lines):
    frames = []
    for line in lines:
        if not line.strip():
            if frames:
                yield frames
            frames = []
        elif line[0] in " \t":
            parts = line.strip().split(None, 1)
            if len(parts) == 2:
                frames.append(re.sub(r"\+0x[0-9a-f]+$", "", parts[1]))
        # a line without indentation starts a sample (command, tid, period)
    if frames:
        yield frames


def main():
    rows = collections.Counter()
    leaves = collections.defaultdict(collections.Counter)
    phases = collections.Counter()
    total = 0
    for frames in read_samples(sys.stdin):
        total += 1
        phase, op, module, leaf = classify(frames)
        phases[phase] += 1
        if phase == "other":
            continue
        rows[(phase, op, module)] += 1
        leaves[(phase, op, module)][leaf] += 1
    step = sum(v for k, v in phases.items() if k != "other")
    if not step:
        print("no samples inside training steps (was this a call-graph profile of --mode train?)")
        return
    print(f"{step} samples inside training steps ({total - step} outside: start-up, set-up). "
          "Shares are of the samples inside steps.\n")
    print("phase       share")
    for phase in ("forward", "backward", "replicas", "optimizer", "zero_grad"):
        print(f"{phase:<10} {100 * phases[phase] / step:5.1f} %")
    print(f"\n{'share':>6}  {'phase':<9} {'op (backward: the node)':<32} {'module':<28} hottest leaf function")
    for (phase, op, module), n in rows.most_common():
        if 100 * n / step < 0.4:
            break
        leaf, ln = leaves[(phase, op, module)].most_common(1)[0]
        print(f"{100 * n / step:5.1f} %  {phase:<9} {op[:32]:<32} {module[:28]:<28} {leaf[:48]} ({100 * ln / n:.0f} %)")


if __name__ == "__main__":
    main()
