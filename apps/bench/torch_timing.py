"""What PyTorch's side of the benchmarks shares (vit_torch.py, translate_torch.py): the timing
loop, the JSON header of a line and the peak RSS, as uwaga-bench's apps/bench/bench_timing.h."""
import math
import os
import resource
import time

import torch


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
