"""gdb helpers for uwaga: a pretty-printer for uwaga::Tensor (shape, dtype, the first values) and
skip rules, so that `step` lands in uwaga's code rather than in std::shared_ptr, Tensor's
accessors or glibc. Load it with

    gdb -x core/gdb/uwaga_gdb.py --args build-dbg/apps/uwaga-walkthrough

or inside gdb, `source core/gdb/uwaga_gdb.py`; or for every session, a line
`source /path/to/uwaga/core/gdb/uwaga_gdb.py` in ~/.gdbinit.
README: "Stepping through attention: uwaga-walkthrough".
"""
import os
import sys

import gdb

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tensor_printer  # noqa: E402

tensor_printer.register()

SKIPS = [
    # The standard library (shared_ptr copies, vectors, streams) and glibc's internals (__sqrt).
    "skip -rfunction ^std::",
    "skip -rfunction ^__",
    "skip -gfile /usr/include/*",
    # Tensor's handle plumbing and accessors (copies, destructor, shape, size, data) and the
    # one-line argument checks every op starts with (check_defined, check_float).
    r"skip -rfunction ^uwaga::Tensor::(Tensor|~Tensor|operator=|impl|impl_ptr|shape|size|dim|"
    r"numel|dtype|defined|data|raw_data|requires_grad|is_leaf|grad_fn|name|at|flat|item|"
    r"version)[(]",
    r"skip -rfunction ^uwaga::(numel|shape_str|dtype_name|check_[a-z_]+)[(]",
]
for rule in SKIPS:
    gdb.execute(rule, to_string=True)
gdb.execute("set pagination off")
print("uwaga: Tensor pretty-printer and skip rules loaded (`info skip` lists them)")
