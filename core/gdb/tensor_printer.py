"""gdb pretty-printer for uwaga::Tensor: `p t` shows its shape, dtype and first values, without
calling into the program (so it works in any gdb, on a core file, in a stopped thread).

    (gdb) p s.E
    $1 = Tensor (4, 4) float64 [0.6268, -2.1753, -1.0165, 0.3709, -0.5197, ... 16 values]

Loaded by core/gdb/uwaga_gdb.py. It shows the first 8 values; `python
tensor_printer.uwaga_tensor_values = 16` shows more. The layout read here is core/tensor.h's TensorImpl and core/storage.h's
Storage under libstdc++ (std::shared_ptr's _M_ptr, std::vector's _M_impl).
"""
import gdb
import gdb.printing

uwaga_tensor_values = 8
DTYPES = {0: ("float32", "float"), 1: ("float64", "double"), 2: ("int64", "long")}


def _shared_ptr_target(sp):
    """What a libstdc++ std::shared_ptr points at, or None when it is null."""
    ptr = sp["_M_ptr"]
    return None if int(ptr) == 0 else ptr.dereference()


def _vector_items(v):
    start, finish = v["_M_impl"]["_M_start"], v["_M_impl"]["_M_finish"]
    return [int((start + i).dereference()) for i in range(int(finish - start))]


def _format(x, dtype):
    return str(int(x)) if dtype == "int64" else f"{float(x):.6g}"


class TensorPrinter:
    def __init__(self, val):
        self.val = val

    def to_string(self):
        impl = _shared_ptr_target(self.val["impl_"])
        if impl is None:
            return "Tensor (undefined)"
        shape = _vector_items(impl["shape"])
        numel = 1
        for s in shape:
            numel *= s
        dtype, ctype = DTYPES.get(int(impl["dtype"]), (f"dtype {int(impl['dtype'])}", None))
        shape_text = "(" + ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")"
        parts = [f"Tensor {shape_text} {dtype}"]
        name = impl["name"]
        try:
            text = name.format_string() if hasattr(name, "format_string") else str(name)
            if text not in ('""', ""):
                parts.append(text)
        except gdb.error:
            pass
        storage = _shared_ptr_target(impl["storage"])
        if storage is not None and ctype is not None and numel > 0:
            data = storage["data_"].cast(gdb.lookup_type(ctype).pointer())
            n = min(numel, uwaga_tensor_values)
            values = ", ".join(_format((data + i).dereference(), dtype) for i in range(n))
            more = f", ... {numel} values" if numel > n else ""
            parts.append(f"[{values}{more}]")
        if bool(impl["requires_grad"]):
            parts.append("requires_grad")
        node = _shared_ptr_target(impl["grad_fn"])
        if node is not None:
            parts.append(f"grad_fn={node['op'].string()}")
        return " ".join(parts)


def build_printer():
    pp = gdb.printing.RegexpCollectionPrettyPrinter("uwaga")
    pp.add_printer("Tensor", "^uwaga::Tensor$", TensorPrinter)
    return pp


def register():
    gdb.printing.register_pretty_printer(None, build_printer(), replace=True)
