#!/usr/bin/python3
"""Turns the raw measurements of apps/bench/run.sh (OUT/raw.jsonl, one JSON object per process
output line) into OUT/results.json, OUT/summary.md and OUT/mha_scaling.csv, and prints the table
with PASS/FAIL per target.

    /usr/bin/python3 apps/bench/summarize.py runs/bench/<date>

Every figure is the median over all timed repeats of all rounds (each process reports several
repeats after its warm-up). Exit status 0 when every target is met, 1 otherwise.
"""
import csv
import json
import math
import os
import statistics
import sys

MODEL_SHAPES = ["2176x64·64x192", "2176x64·64x64", "2176x64·64x128", "2176x128·128x64"]
CEILING_SHAPE = "1024x1024·1024x1024"
# How often each micro-benchmarked op runs in one mnist-tiny training step (forward + backward).
PER_STEP = {"mha": 6, "layernorm": 12, "gelu": 6, "xent": 1}


def select(lines, **match):
    return [l for l in lines if all(l.get(k) == v for k, v in match.items())]


def pooled(lines, key):
    """Median over every repeat of every process."""
    values = [v for l in lines for v in l.get(key, [])]
    return statistics.median(values) if values else None


def spread(lines, key):
    """(lowest, highest) per-process median, to show how noisy the rounds were."""
    meds = [statistics.median(l[key]) for l in lines if l.get(key)]
    return (min(meds), max(meds)) if meds else (None, None)


def ratio(a, b):
    return a / b if a and b else None


def fmt(v, digits=0, unit=""):
    if v is None:
        return "—"
    return f"{v:,.{digits}f}{unit}"


def verdict(ok):
    return "—" if ok is None else ("PASS" if ok else "FAIL")


def fit_power(ns, ys):
    """Least-squares slope of log y against log n."""
    xs, ls = [math.log(n) for n in ns], [math.log(y) for y in ys]
    mx, my = statistics.mean(xs), statistics.mean(ls)
    return sum((x - mx) * (l - my) for x, l in zip(xs, ls)) / sum((x - mx) ** 2 for x in xs)


def summarize(out):
    lines = [json.loads(l) for l in open(os.path.join(out, "raw.jsonl")) if l.strip()]
    meta = json.load(open(os.path.join(out, "meta.json")))
    meta["loadavg_end"] = os.environ.get("LOADAVG_END", "")
    meta["seconds"] = os.environ.get("SECONDS_MEASURED", "")
    threads = sorted({l["threads"] for l in lines if l["mode"] == "train"})
    res = {"meta": meta, "threads": {}}

    for t in threads:
        r = {}
        # sgemm: OpenBLAS through uwaga's gemm<float>, and torch.mm, per shape
        r["sgemm"] = {}
        for shape in [CEILING_SHAPE] + MODEL_SHAPES:
            r["sgemm"][shape] = {impl: pooled(select(lines, impl=impl, mode="sgemm", threads=t, shape=shape),
                                              "gflops") for impl in ("uwaga", "openblas", "torch")}
        # The ceiling: the better of uwaga's gemm (rows split across threads) and one direct
        # cblas_sgemm call (OpenBLAS's own threading) at 1024³.
        candidates = [v for impl, v in r["sgemm"][CEILING_SHAPE].items() if impl != "torch" and v]
        ceiling = max(candidates) if candidates else None
        model_shapes = [r["sgemm"][s]["uwaga"] for s in MODEL_SHAPES if r["sgemm"][s]["uwaga"]]
        r["ceiling_gflops"] = ceiling
        copies = [l["median_gflops"] for l in select(lines, impl="uwaga", mode="sgemm_processes", threads=t)]
        r["sgemm_processes_gflops"] = statistics.median(copies) if copies else None
        r["model_shape_gflops"] = statistics.mean(model_shapes) if model_shapes else None

        # training: uwaga, and PyTorch under each wait policy (the better one is compared)
        u_train = select(lines, impl="uwaga", mode="train", threads=t)
        train = {"uwaga": pooled(u_train, "images_per_s"), "uwaga_per_cpu_s": pooled(u_train, "images_per_cpu_s")}
        torch_by_policy = {}
        for policy in sorted({l["omp_wait_policy"] for l in select(lines, impl="torch", mode="train", threads=t)}):
            torch_by_policy[policy] = pooled(select(lines, impl="torch", mode="train", threads=t,
                                                    omp_wait_policy=policy), "images_per_s")
        best_policy = max(torch_by_policy, key=lambda p: torch_by_policy[p] or 0) if torch_by_policy else None
        t_train = select(lines, impl="torch", mode="train", threads=t, omp_wait_policy=best_policy)
        train["torch"] = torch_by_policy.get(best_policy)
        train["torch_per_cpu_s"] = pooled(t_train, "images_per_cpu_s")
        train["ratio_per_cpu_s"] = ratio(train["uwaga_per_cpu_s"], train["torch_per_cpu_s"])
        train["torch_by_policy"] = torch_by_policy
        train["torch_policy_compared"] = best_policy
        train["ratio"] = ratio(train["uwaga"], train["torch"])
        train["uwaga_spread"] = spread(u_train, "images_per_s")
        train["torch_spread"] = spread(t_train, "images_per_s")
        flops = u_train[0]["flops_per_image"] if u_train else None
        train["flops_per_image"] = flops
        train["uwaga_gflops"] = train["uwaga"] * flops / 1e9 if train["uwaga"] and flops else None
        train["torch_gflops"] = train["torch"] * flops / 1e9 if train["torch"] and flops else None
        train["pct_of_ceiling"] = 100 * ratio(train["uwaga_gflops"], ceiling) if ceiling and train["uwaga_gflops"] else None
        train["torch_pct_of_ceiling"] = (100 * ratio(train["torch_gflops"], ceiling)
                                         if ceiling and train["torch_gflops"] else None)
        train["phase_ms"] = {impl: {k: statistics.median(l["phase_ms"][k] for l in ls) for k in ls[0]["phase_ms"]}
                             for impl, ls in (("uwaga", u_train), ("torch", t_train)) if ls}
        procs = [l["median_images_per_s"] for l in select(lines, impl="uwaga", mode="train_processes", threads=t)]
        train["uwaga_processes"] = statistics.median(procs) if procs else None
        r["train"] = train

        # peak RSS of the training processes running the same workload in both (batch, steps)
        def workload(l):
            return l["batch"], l["warmup_steps"], l["steps_per_repeat"], len(l["images_per_s"])
        all_torch_train = [l for l in select(lines, impl="torch", mode="train", threads=t)
                           if u_train and workload(l) == workload(u_train[0])]
        r["rss_kb"] = {
            "uwaga": max((l["time_max_rss_kb"] for l in u_train), default=None),
            "torch": max((l["time_max_rss_kb"] for l in all_torch_train), default=None),
            "uwaga_before_model": max((l["rss_before_model_kb"] for l in u_train), default=None),
            "torch_before_model": max((l["rss_before_model_kb"] for l in all_torch_train), default=None),
        }

        ev = {impl: pooled(select(lines, impl=impl, mode="eval", threads=t), "images_per_s")
              for impl in ("uwaga", "torch")}
        ev["ratio"] = ratio(ev["uwaga"], ev["torch"])
        r["eval"] = ev

        # micro-benchmarks, each against PyTorch and against the ceiling
        step_us = 1e6 * 128 / train["uwaga"] if train["uwaga"] else None
        r["micro"] = {}
        for op in PER_STEP:
            m = {impl: pooled(select(lines, impl=impl, mode="micro", threads=t, op=op), "us")
                 for impl in ("uwaga", "torch")}
            if m["uwaga"] is None:
                continue
            one = select(lines, impl="uwaga", mode="micro", threads=t, op=op)[0]
            m["shape"] = one["shape"]
            m["speedup_vs_torch"] = ratio(m["torch"], m["uwaga"])
            if "gflops" in one:  # recompute from the pooled median
                flops_per_call = one["gflops"] * one["median_us"] * 1e3
                m["gflops"] = flops_per_call / (m["uwaga"] * 1e3)
                m["pct_of_ceiling"] = 100 * m["gflops"] / ceiling if ceiling else None
                m["pct_of_model_shape_sgemm"] = (100 * m["gflops"] / r["model_shape_gflops"]
                                                 if r["model_shape_gflops"] else None)
            if "gb_per_s" in one:
                m["gb_per_s"] = one["gb_per_s"] * one["median_us"] / m["uwaga"]
            # What a GEMM at the ceiling would do in the same time.
            m["sgemm_equivalent_mflop"] = m["uwaga"] * ceiling / 1e3 if ceiling else None
            m["per_step"] = PER_STEP[op]
            m["pct_of_step"] = 100 * PER_STEP[op] * m["uwaga"] / step_us if step_us else None
            r["micro"][op] = m
        r["translator"] = translator(lines, t)
        res["threads"][t] = r

    # speed-up from 1 to the most threads, uwaga's training against OpenBLAS's sgemm 1024³
    lo, hi = threads[0], threads[-1]
    if lo != hi:
        R = res["threads"]
        res["speedup"] = {
            "from": lo, "to": hi,
            "uwaga_train": ratio(R[hi]["train"]["uwaga"], R[lo]["train"]["uwaga"]),
            "torch_train": ratio(R[hi]["train"]["torch"], R[lo]["train"]["torch"]),
            "sgemm_1024": ratio(R[hi]["ceiling_gflops"], R[lo]["ceiling_gflops"]),
            "uwaga_processes": ratio(R[hi]["train"].get("uwaga_processes"), R[lo]["train"]["uwaga"]),
            "sgemm_processes": ratio(R[hi].get("sgemm_processes_gflops"), R[lo]["ceiling_gflops"]),
        }

    # attention cost over n
    scaling = [l for l in lines if l["mode"] == "mha-scaling"]
    rows = sorted(({"impl": l["impl"], "threads": l["threads"], "n": l["n"], "batch": l["batch"],
                    "median_ms": statistics.median(l["ms"]), "us_per_sequence": l["us_per_sequence"],
                    "gflops": l["gflops"]} for l in scaling), key=lambda r: (r["impl"], r["n"]))
    res["mha_scaling"] = {"rows": rows, "exponent_n_ge_256": {}, "exponent_largest_two": {}}
    if rows:
        with open(os.path.join(out, "mha_scaling.csv"), "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)
        for impl in ("uwaga", "torch"):
            big = [r for r in rows if r["impl"] == impl and r["n"] >= 256]
            if len(big) >= 2:
                res["mha_scaling"]["exponent_n_ge_256"][impl] = fit_power(
                    [r["n"] for r in big], [r["us_per_sequence"] for r in big])
                res["mha_scaling"]["exponent_largest_two"][impl] = fit_power(
                    [r["n"] for r in big[-2:]], [r["us_per_sequence"] for r in big[-2:]])

    targets = check_targets(res, threads)
    res["targets"] = targets
    json.dump(res, open(os.path.join(out, "results.json"), "w"), indent=1, default=str)
    md = markdown(res, threads, targets)
    open(os.path.join(out, "summary.md"), "w").write(md)
    print(md)
    return all(t["ok"] for t in targets if t["ok"] is not None)


def translator(lines, t):
    """uwaga-translate's default preset: training and teacher-forced eval on the same batches."""
    out = {}
    for mode in ("translate", "translate_eval"):
        m = {}
        # PyTorch under the wait policy that served it best (training is measured under three).
        policies = {l["omp_wait_policy"] for l in select(lines, impl="torch", mode=mode, threads=t)}
        by_policy = {p: pooled(select(lines, impl="torch", mode=mode, threads=t, omp_wait_policy=p),
                               "sentences_per_s") for p in policies}
        best = max(by_policy, key=lambda p: by_policy[p] or 0) if by_policy else None
        m["torch_by_policy"], m["torch_policy_compared"] = by_policy, best
        for impl in ("uwaga", "torch"):
            ls = select(lines, impl=impl, mode=mode, threads=t)
            if impl == "torch":
                ls = [l for l in ls if l["omp_wait_policy"] == best]
            m[impl] = {"sentences_per_s": pooled(ls, "sentences_per_s"),
                       "words_per_s": pooled(ls, "target_words_per_s"),
                       "rss_kb": max((l["time_max_rss_kb"] for l in ls), default=None),
                       "phase_ms": ({k: statistics.median(l["phase_ms"][k] for l in ls) for k in ls[0]["phase_ms"]}
                                    if ls and "phase_ms" in ls[0] else None)}
        m["ratio"] = ratio(m["uwaga"]["sentences_per_s"], m["torch"]["sentences_per_s"])
        out[mode] = m
    return out


def check_targets(res, threads):
    R, hi = res["threads"], threads[-1]
    out = []
    tr = R[hi]["train"]
    out.append({"target": f"training throughput ≥ 2× PyTorch at {hi} threads",
                "value": fmt(tr["ratio"], 2, "×"), "ok": tr["ratio"] >= 2 if tr["ratio"] else None})
    out.append({"target": f"training step ≥ 40 % of the sgemm 1024³ ceiling at {hi} threads",
                "value": fmt(tr["pct_of_ceiling"], 1, " %"),
                "ok": tr["pct_of_ceiling"] >= 40 if tr["pct_of_ceiling"] else None})
    s = res.get("speedup")
    if s:
        out.append({"target": f"uwaga's {s['from']} → {s['to']} thread speed-up ≥ sgemm 1024³'s",
                    "value": f"{fmt(s['uwaga_train'], 2, '×')} vs {fmt(s['sgemm_1024'], 2, '×')}"
                    + (f" ({s['to']} independent 1-thread copies of the training: "
                       f"{fmt(s['uwaga_processes'], 2, '×')}"
                       + (f"; of sgemm: {fmt(s['sgemm_processes'], 2, '×')}" if s.get("sgemm_processes") else "")
                       + ")" if s.get("uwaga_processes") else ""),
                    "ok": s["uwaga_train"] >= s["sgemm_1024"] if s["uwaga_train"] and s["sgemm_1024"] else None})
    for t in threads:
        rss = R[t]["rss_kb"]
        out.append({"target": f"peak RSS ≤ PyTorch's ({t} thread{'s' if t > 1 else ''}, same training workload)",
                    "value": f"{fmt(rss['uwaga'] / 1024, 0, ' MB')} vs {fmt(rss['torch'] / 1024, 0, ' MB')}"
                    if rss["uwaga"] and rss["torch"] else "—",
                    "ok": rss["uwaga"] <= rss["torch"] if rss["uwaga"] and rss["torch"] else None})
    return out



def busy_note(meta):
    """A warning when other jobs were running: the start's one-minute load average above 0.5."""
    try:
        load = float(str(meta.get("loadavg_start", "0")).split()[0])
    except ValueError:
        return ""
    return " Other jobs were running (load above 0.5): figures are noisier." if load > 0.5 else ""

def markdown(res, threads, targets):
    R, meta = res["threads"], res["meta"]
    L = [f"# uwaga vs PyTorch {meta.get('torch', '')} — mnist-tiny ViT, batch 128",
         "",
         f"{meta.get('date', '')}, {meta.get('cpu', '')}, {meta.get('cores', '')} cores, "
         f"git {meta.get('git', '')}, {meta.get('openblas', '')}; OpenMP wait: uwaga "
         f"{meta.get('wait_policy', {}).get('uwaga', '')}, PyTorch {meta.get('wait_policy', {}).get('torch', '')}; "
         f"{meta.get('rounds', '')} rounds, uwaga and PyTorch alternating; load average "
         f"{meta.get('loadavg_start', '')} at the start, {meta.get('loadavg_end', '')} at the end "
         f"({meta.get('seconds', '')} s)." + busy_note(meta),
         "",
         "## Targets", "", "| target | measured | |", "|---|---|---|"]
    L += [f"| {t['target']} | {t['value']} | {verdict(t['ok'])} |" for t in targets]
    L += ["", "## Throughput", "",
          "| | threads | uwaga | PyTorch | uwaga / PyTorch |", "|---|---|---|---|---|"]
    for t in threads:
        tr, ev = R[t]["train"], R[t]["eval"]
        lo, hi = tr["uwaga_spread"]
        tlo, thi = tr["torch_spread"]
        L.append(f"| training images/s (rounds' range) | {t} | {fmt(tr['uwaga'])} ({fmt(lo)}–{fmt(hi)}) | "
                 f"{fmt(tr['torch'])} ({fmt(tlo)}–{fmt(thi)}, {tr['torch_policy_compared']}) | "
                 f"{fmt(tr['ratio'], 2, '×')} |")
    for t in threads:
        tr = R[t]["train"]
        L.append(f"| training images per CPU-second (less sensitive to other load) | {t} | "
                 f"{fmt(tr['uwaga_per_cpu_s'])} | {fmt(tr['torch_per_cpu_s'])} | {fmt(tr['ratio_per_cpu_s'], 2, '×')} |")
    for t in threads:
        pol = R[t]["train"]["torch_by_policy"]
        if len(pol) > 1:
            L.append(f"| PyTorch training by wait policy | {t} | | "
                     + ", ".join(f"{p} {fmt(v)}" for p, v in pol.items()) + " | |")
    for t in threads:
        ev = R[t]["eval"]
        L.append(f"| eval images/s | {t} | {fmt(ev['uwaga'])} | {fmt(ev['torch'])} | {fmt(ev['ratio'], 2, '×')} |")
    for t in threads:
        tr = R[t]["train"]
        L.append(f"| training effective GFLOP/s (% of sgemm 1024³) | {t} | {fmt(tr['uwaga_gflops'], 1)} "
                 f"({fmt(tr['pct_of_ceiling'], 1, ' %')}) | {fmt(tr['torch_gflops'], 1)} "
                 f"({fmt(tr['torch_pct_of_ceiling'], 1, ' %')}) | |")
    for t in threads:
        rss = R[t]["rss_kb"]
        L.append(f"| peak RSS MB, training (before the model) | {t} | {fmt(rss['uwaga'] / 1024)} "
                 f"({fmt(rss['uwaga_before_model'] / 1024)}) | {fmt(rss['torch'] / 1024)} "
                 f"({fmt(rss['torch_before_model'] / 1024)}) | |")
    s = res.get("speedup")
    if s:
        L.append(f"| speed-up {s['from']} → {s['to']} threads, training | | {fmt(s['uwaga_train'], 2, '×')} | "
                 f"{fmt(s['torch_train'], 2, '×')} | sgemm 1024³: {fmt(s['sgemm_1024'], 2, '×')} |")
        if s.get("uwaga_processes"):
            L.append(f"| speed-up of {s['to']} independent copies of the 1-thread training, run at once "
                     f"(combined images/s over 1 thread's) | | "
                     f"{fmt(s['uwaga_processes'], 2, '×')} | | what {s['to']} cores give this workload with no "
                     f"coordination at all |")
        if s.get("sgemm_processes"):
            L.append(f"| the same for sgemm 1024³: {s['to']} independent 1-thread copies (combined GFLOP/s "
                     f"over 1 thread's) | | | | {fmt(s['sgemm_processes'], 2, '×')} against "
                     f"{fmt(s['sgemm_1024'], 2, '×')} for one {s['to']}-thread call: what the cores give a "
                     f"compute-bound kernel |")
    flops = R[threads[0]]["train"]["flops_per_image"]
    L += ["", f"Effective GFLOP/s = images/s × {fmt(flops / 1e6, 1)} MFLOP per image (3 × "
          "nn::VitConfig::forward_flops(): forward + backward ≈ 3 forwards, matrix products only).", ""]

    if any(R[t]["translator"]["translate"]["uwaga"]["sentences_per_s"] for t in threads):
        L += ["## The translator: uwaga-translate's default preset", "",
              "Both train the same 20 batches of the preset's first epoch (64 sentence pairs each, padded to "
              "the batch's longest; dim 128, 4 heads, 2 + 2 layers, vocabularies of the toy corpus): forward, "
              "label-smoothed cross-entropy, backward, clipping, AdamW — uwaga as uwaga-translate trains, one "
              "replica per thread in micro-batches of 16 pairs; PyTorch with its ops threaded. Eval is "
              "teacher-forced forward passes of whole batches.", "",
              "| | threads | uwaga | PyTorch | uwaga / PyTorch |", "|---|---|---|---|---|"]
        for mode, what in (("translate", "training sentences/s"), ("translate_eval", "eval sentences/s")):
            for t in threads:
                m = R[t]["translator"][mode]
                L.append(f"| {what} | {t} | {fmt(m['uwaga']['sentences_per_s'])} | "
                         f"{fmt(m['torch']['sentences_per_s'])} ({m['torch_policy_compared']}) | "
                         f"{fmt(m['ratio'], 2, '×')} |")
        for t in threads:
            pol = R[t]["translator"]["translate"]["torch_by_policy"]
            if len(pol) > 1:
                L.append(f"| PyTorch training by wait policy | {t} | | "
                         + ", ".join(f"{p} {fmt(v)}" for p, v in sorted(pol.items())) + " | |")
        for t in threads:
            m = R[t]["translator"]["translate"]
            L.append(f"| training target words/s | {t} | {fmt(m['uwaga']['words_per_s'])} | "
                     f"{fmt(m['torch']['words_per_s'])} | |")
        for t in threads:
            m = R[t]["translator"]["translate"]
            ph = {impl: m[impl]["phase_ms"] for impl in ("uwaga", "torch")}
            if all(ph.values()):
                # uwaga's replicas interleave forward and backward: one "gradient" phase for both.
                grad = {i: ph[i].get("gradient", ph[i].get("forward", 0) + ph[i].get("backward", 0))
                        for i in ph}
                L.append(f"| training ms per step: gradient (forward, loss, backward) / clip + AdamW | {t} | "
                         + " | ".join(f"{grad[i]:.1f} / {ph[i]['optimizer']:.1f}" for i in ("uwaga", "torch"))
                         + " | |")
        for t in threads:
            m = R[t]["translator"]["translate"]
            L.append(f"| peak RSS MB, training | {t} | {fmt(m['uwaga']['rss_kb'] and m['uwaga']['rss_kb'] / 1024)} | "
                     f"{fmt(m['torch']['rss_kb'] and m['torch']['rss_kb'] / 1024)} | |")
        L.append("")

    L += ["## Training step phases (median ms per step)", "",
          "| threads | impl | forward + loss | backward | optimizer |", "|---|---|---|---|---|"]
    for t in threads:
        for impl, ph in R[t]["train"]["phase_ms"].items():
            if "forward" in ph:
                passes = f"{fmt(ph['forward'], 1)} | {fmt(ph['backward'], 1)}"
            else:  # uwaga's replicas run forward and backward together: one gradient phase
                passes = f"{fmt(ph['gradient'], 1)} (forward, loss and backward on the replicas) | —"
            L.append(f"| {t} | {impl} | {passes} | {fmt(ph['optimizer'], 2)} |")

    L += ["", "## sgemm GFLOP/s (C = A·B, float32)", "",
          "| threads | shape (M×K·K×N) | uwaga's gemm (rows split across threads) | one cblas_sgemm call (OpenBLAS's threading) | torch.mm |",
          "|---|---|---|---|---|"]
    for t in threads:
        for shape, v in R[t]["sgemm"].items():
            L.append(f"| {t} | {shape} | {fmt(v['uwaga'], 1)} | {fmt(v['openblas'], 1)} | {fmt(v['torch'], 1)} |")
    L += ["", "The ceiling is the better of the two OpenBLAS columns at 1024³ on the same thread count.", ""]

    L += ["## Micro-benchmarks: forward + backward", "",
          "| threads | op | shape | uwaga µs | PyTorch µs | uwaga speed-up | uwaga GFLOP/s (% ceiling, % model-shape sgemm) "
          "or GB/s | sgemm-equivalent MFLOP | × per step = % of uwaga's step |",
          "|---|---|---|---|---|---|---|---|---|"]
    for t in threads:
        for op, m in R[t]["micro"].items():
            if "gflops" in m:
                rate = (f"{fmt(m['gflops'], 1)} GFLOP/s ({fmt(m['pct_of_ceiling'], 0, ' %')}, "
                        f"{fmt(m['pct_of_model_shape_sgemm'], 0, ' %')})")
            else:
                rate = f"{fmt(m.get('gb_per_s'), 2)} GB/s"
            L.append(f"| {t} | {op} | {m['shape']} | {fmt(m['uwaga'], 1)} | {fmt(m['torch'], 1)} | "
                     f"{fmt(m['speedup_vs_torch'], 2, '×')} | {rate} | {fmt(m['sgemm_equivalent_mflop'], 1)} | "
                     f"{m['per_step']} × = {fmt(m['pct_of_step'], 0, ' %')} |")
    L += ["", "uwaga speed-up = PyTorch µs / uwaga µs (> 1: uwaga is faster). sgemm-equivalent MFLOP: the "
          "matrix-product work the ceiling sgemm does in the time uwaga's op takes. % of step: how much of "
          "uwaga's training step this op would take if it ran as in isolation (on N(0, 1) inputs); "
          "profile.txt has the shares measured inside the step.", ""]

    sc = res["mha_scaling"]
    if sc["rows"]:
        L += ["## Attention cost over n (one layer, dim 64, 4 heads, forward + backward, batch = 4096 / n)", "",
              "| n | batch | uwaga ms | uwaga µs/sequence | PyTorch ms | PyTorch µs/sequence |", "|---|---|---|---|---|---|"]
        by = {(r["impl"], r["n"]): r for r in sc["rows"]}
        for n in sorted({r["n"] for r in sc["rows"]}):
            u, p = by.get(("uwaga", n)), by.get(("torch", n))
            L.append(f"| {n} | {(u or p)['batch']} | {fmt(u and u['median_ms'], 2)} | {fmt(u and u['us_per_sequence'], 1)} | "
                     f"{fmt(p and p['median_ms'], 2)} | {fmt(p and p['us_per_sequence'], 1)} |")
        ex, ex2 = sc["exponent_n_ge_256"], sc["exponent_largest_two"]
        L += ["", "Cost per sequence grows as n^k: fitted over n ≥ 256, k = " +
              ", ".join(f"{fmt(v, 2)} ({impl})" for impl, v in ex.items()) + "; between the two largest n, k = " +
              ", ".join(f"{fmt(v, 2)} ({impl})" for impl, v in ex2.items()) +
              ". That is the O(n²·d) row of SEEDS §7's table; below n ≈ 2d = 128 the O(n·d²) projections "
              "(qkv and W_O) cost more than Q Kᵀ and A V, so the curve starts out linear. "
              "Data: mha_scaling.csv, plot: mha_scaling.png.", ""]
    return "\n".join(L) + "\n"


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: summarize.py RESULTS_DIR")
    sys.exit(0 if summarize(sys.argv[1]) else 1)
