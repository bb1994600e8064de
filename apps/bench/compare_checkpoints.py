"""Compares two training runs: every tensor of their checkpoint.safetensors byte for byte, and the
losses of their log.jsonl step records. Prints what differs; exit status 1 when anything does.

    python3 apps/bench/compare_checkpoints.py [--tensors-only] RUN_A RUN_B

--tensors-only skips the logs (a resumed run's log averages its first window over fewer steps).

The checkpoints' metadata (the run's configuration and bookkeeping strings) is compared too, but a
difference there is reported, not counted: a refactoring may move a field without changing what
was trained.
"""
import json
import struct
import sys


def read_safetensors(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    meta = header.pop("__metadata__", {})
    tensors = {k: data[v["data_offsets"][0]:v["data_offsets"][1]] for k, v in header.items()}
    shapes = {k: (v["dtype"], v["shape"]) for k, v in header.items()}
    return tensors, shapes, meta


def without_timings(value):
    """The trainer's bookkeeping holds wall-clock seconds, which no two runs share."""
    try:
        state = json.loads(value)
    except (TypeError, ValueError):
        return value
    if isinstance(state, dict) and isinstance(state.get("epoch"), dict):
        state["epoch"].pop("seconds", None)
        state.pop("dropout_seeds", None)  # compared below, wherever a checkpoint keeps them
    return state


def dropout_seeds(meta):
    """The dropout seeds' generator: in trainer_state, or (older checkpoints) in task_state."""
    try:
        return json.loads(meta.get("trainer_state", "{}")).get("dropout_seeds") or meta.get("task_state", "")
    except ValueError:
        return meta.get("task_state", "")


def losses(run):
    out = []
    with open(run + "/log.jsonl") as f:
        for line in f:
            r = json.loads(line)
            if r.get("type") == "step":
                out.append((r["step"], r["loss"]))
    return out


def main(a, b, tensors_only=False):
    ta, sa, ma = read_safetensors(a + "/checkpoint.safetensors")
    tb, sb, mb = read_safetensors(b + "/checkpoint.safetensors")
    different = 0
    for name in sorted(set(ta) | set(tb)):
        if name not in ta or name not in tb:
            print(f"  tensor {name}: only in {'the first' if name in ta else 'the second'}")
            different += 1
        elif sa[name] != sb[name] or ta[name] != tb[name]:
            print(f"  tensor {name}: differs")
            different += 1
    if dropout_seeds(ma) and dropout_seeds(mb) and dropout_seeds(ma) != dropout_seeds(mb):
        print("  the dropout seeds' generator differs")
        different += 1
    for key in sorted((set(ma) | set(mb)) - {"task_state"}):
        if without_timings(ma.get(key)) != without_timings(mb.get(key)):
            print(f"  metadata {key}: differs (not counted) {ma.get(key)!r:.80} / {mb.get(key)!r:.80}")
    la, lb = ([], []) if tensors_only else (losses(a), losses(b))
    if la != lb:
        print(f"  logged losses differ: {la[:3]} … / {lb[:3]} …")
        different += 1
    print(f"  {len(ta)} tensors, {len(la)} logged losses compared: {different} difference(s)")
    return 1 if different else 0


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--tensors-only"]
    sys.exit(main(args[0], args[1], tensors_only="--tensors-only" in sys.argv[1:]))
