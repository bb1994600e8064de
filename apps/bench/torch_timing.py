"""What PyTorch's side of the benchmarks shares (vit_torch.py, vit_torch2.py, translate_torch.py,
gpt_torch.py): the timing loop, the JSON header of a line and the peak RSS, as uwaga-bench's
apps/bench/bench_timing.h; and for the scripts written as a PyTorch 2 user writes them, what
differs between PyTorch versions: the fused attention, AdamW's `fused` argument, torch.compile."""
import inspect
import math
import os
import resource
import sys
import time

import torch
import torch.nn.functional as F

HAVE_SDPA = hasattr(F, "scaled_dot_product_attention")  # PyTorch >= 2.0


def peak_rss_kb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def wait_policy():
    if "OMP_WAIT_POLICY" in os.environ:
        return os.environ["OMP_WAIT_POLICY"]
    if "GOMP_SPINCOUNT" in os.environ:
        return "GOMP_SPINCOUNT=" + os.environ["GOMP_SPINCOUNT"]
    return "unset"


def header(mode):
    return {"impl": "torch", "mode": mode, "threads": torch.get_num_threads(),
            "omp_wait_policy": wait_policy(),
            "torch_version": torch.__version__}


def time_calls(fn, args, cpu_per_call=None):
    """Seconds per call, one entry per repeat, after args.warmup untimed calls (as uwaga-bench);
    cpu_per_call gets the process's CPU seconds per call of each repeat."""
    for _ in range(args.warmup):
        fn()
    calls = args.steps
    if calls <= 0:
        start = time.perf_counter()
        fn()
        calls = max(1, math.ceil(args.min_seconds / max(time.perf_counter() - start, 1e-7)))
    per_call = []
    for _ in range(args.repeats):
        cpu_start = time.process_time()
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        per_call.append((time.perf_counter() - start) / calls)
        if cpu_per_call is not None:
            cpu_per_call.append((time.process_time() - cpu_start) / calls)
    return per_call, calls


def mixed_precision(enabled):
    """The forward pass under bfloat16 autocast on the CPU (what a PyTorch user with AVX-512 BF16
    or AMX may switch on: matrix products in bf16, reductions and the loss in float32), or a no-op
    context when not enabled. The backward pass follows the forward's dtypes by itself."""
    if not enabled:
        return torch.autocast("cpu", enabled=False)
    return torch.autocast("cpu", dtype=torch.bfloat16)


def say(script, message):
    print(f"{script}: {message}", file=sys.stderr, flush=True)


def choose_attention(requested, script):
    """(use F.scaled_dot_product_attention?, what the JSON line says) for --attention auto (the
    fused function where this PyTorch has it), sdpa (exits where it has not) or written."""
    if requested == "written":
        return False, "written-out (asked for)"
    if HAVE_SDPA:
        return True, "sdpa"
    if requested == "sdpa":
        sys.exit(f"{script}: --attention sdpa, but PyTorch {torch.__version__} has no "
                 "torch.nn.functional.scaled_dot_product_attention")
    return False, f"written-out (no scaled_dot_product_attention in PyTorch {torch.__version__})"


def adamw(groups, **kwargs):
    """(torch.optim.AdamW(groups, fused=False, **kwargs), whether fused= was passed): PyTorch
    1.13's AdamW has no `fused` argument (and is never fused)."""
    if "fused" in inspect.signature(torch.optim.AdamW.__init__).parameters:
        return torch.optim.AdamW(groups, fused=False, **kwargs), True
    return torch.optim.AdamW(groups, **kwargs), False


def compile_model(model, mode, first_step, script):
    """(the module to run, what the JSON line says) for --compile: torch.compile(model, mode=mode),
    which compiles on its first call, so first_step(compiled) runs one untimed training step. Where
    PyTorch has no torch.compile, or compiling fails (no compiler, an unsupported op, ...), the
    model runs eagerly and stderr says why."""
    if not hasattr(torch, "compile"):
        state = f"unavailable: PyTorch {torch.__version__} has no torch.compile; ran eagerly"
        say(script, f"--compile: {state}")
        return model, state
    try:
        compiled = torch.compile(model, mode=mode)
        first_step(compiled)
        return compiled, "on" + (f" (mode {mode})" if mode else "")
    except Exception as e:  # measure eager instead
        state = f"failed: {type(e).__name__}: {str(e).splitlines()[0][:200]}; ran eagerly"
        say(script, f"--compile: {state}")
        return model, state
