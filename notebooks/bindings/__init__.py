"""uwaga: attention and transformers from scratch in C++ -- the Python bindings.

    import uwaga
    x = uwaga.tensor([[1.0, 2.0]], dtype=uwaga.float64, requires_grad=True)
    y = (x * x).sum(); y.backward(); x.grad.numpy()

Top level: Tensor (t.numpy() is a view, no copy), the ops of core/, autograd (backward, grad,
no_grad, gradcheck, to_dot), Function (an op of your own: forward and a hand-written backward). Submodules: uwaga.nn (modules, attention), uwaga.optim (optimizers,
schedules, trainer, checkpoints), uwaga.data (datasets, loader, translation corpus), uwaga.apps
(presets, training, translation, attention maps).

The binding code holds no math: every formula is the C++ library's.
"""
import os

# OpenMP threads that wait by spinning steal the core from the thread doing the work on a busy
# machine (apps/common/thread_policy.h); libgomp reads this once, when the module loads.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from ._uwaga import *  # noqa: E402,F401,F403
from ._uwaga import __doc__ as _module_doc  # noqa: E402,F401
from ._uwaga import apps, data, nn, optim  # noqa: E402,F401
from .function import Function, FunctionCtx  # noqa: E402,F401

init_threads()  # noqa: F405  UWAGA_NUM_THREADS, else every core
