"""uwaga-bench --op-times lines (stdin) as tables: where a training step's time goes, op by op.

    build/apps/uwaga-bench --mode train --model mnist-tiny --op-times | python3 apps/bench/op_table.py

One table per line read: op, forward and backward ms per step (summed over threads), calls per
step, and what the op achieved — GFLOP/s for the products (linear, matmul, attention_heads), GB/s
of inputs and outputs for the rest. Then the forward / backward split of the timed total.
"""
import json
import sys


def table(line):
    t = line["op_times"]
    ops = t["ops"]
    total = t["forward_ms"] + t["backward_ms"]
    what = line.get("model", "?")
    print(f"## {line['mode']} {what}, {line['threads']} thread(s), batch {line.get('batch')}: "
          f"forward {t['forward_ms']:.2f} ms + backward {t['backward_ms']:.2f} ms per step")
    print(f"{'op':<22} {'fwd ms':>8} {'bwd ms':>8} {'share':>6} {'calls':>6}  fwd / bwd rate")
    for op, r in sorted(ops.items(), key=lambda kv: -(kv[1]["forward_ms"] + kv[1]["backward_ms"])):
        ms = r["forward_ms"] + r["backward_ms"]
        if "forward_gflops" in r:
            rate = f"{r['forward_gflops']:.0f} / {r.get('backward_gflops', 0):.0f} GFLOP/s"
        elif "forward_gbps" in r:
            rate = f"{r['forward_gbps']:.1f} GB/s fwd"
        else:
            rate = ""
        print(f"{op:<22} {r['forward_ms']:8.2f} {r['backward_ms']:8.2f} "
              f"{100 * ms / total:5.1f}% {r['calls']:6d}  {rate}")
    print()


def main():
    for raw in sys.stdin:
        raw = raw.strip()
        if not raw.startswith("{"):
            continue
        line = json.loads(raw)
        if "op_times" in line:
            table(line)


if __name__ == "__main__":
    main()
