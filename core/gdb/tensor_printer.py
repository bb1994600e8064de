"""gdb pretty-printer for uwaga::Tensor: `p t` shows on one line its shape, dtype, name, first
values, flags and, on a leaf after backward, its gradient's first values (so frame lines and
`info args` stay one line each); the command `prows t` shows a 2-D or larger tensor row by row,
each row labelled by its leading indices, and its gradient the same way. Neither calls into the
program (so they work in any gdb, on a core file, in a stopped thread).

    (gdb) p layer.W_Q
    $1 = Tensor (8, 4) float64 "w_q" [0.192627, -0.512133, ..., 32 values] requires_grad grad=[0.0213912, ...]
    (gdb) prows layer.W_Q
    Tensor (8, 4) float64 "w_q" requires_grad
      [0]  0.192627  -0.512133  0.0491813  -0.197001
      ...
      ... 2 more rows
    grad: Tensor (8, 4) float64
      [0]  0.0213912  ...

A row is the last dim; `prows` shows up to 6 rows of up to 8 values (`python
tensor_printer.uwaga_tensor_rows = 16`, and `uwaga_tensor_values` per row, show more). The layout
read here is core/tensor.h's TensorImpl and core/storage.h's Storage under libstdc++
(std::shared_ptr's _M_ptr, std::vector's _M_impl). Loaded by core/gdb/uwaga_gdb.py.
"""
import struct

import gdb
import gdb.printing

uwaga_tensor_values = 8  # per row (a 1-D tensor: in all)
uwaga_tensor_rows = 6
DTYPES = {0: ("float32", "float"), 1: ("float64", "double"), 2: ("int64", "long"),
          3: ("bfloat16", "unsigned short")}


def _shared_ptr_target(sp):
    """What a libstdc++ std::shared_ptr points at, or None when it is null."""
    ptr = sp["_M_ptr"]
    return None if int(ptr) == 0 else ptr.dereference()


def _vector_items(v):
    start, finish = v["_M_impl"]["_M_start"], v["_M_impl"]["_M_finish"]
    return [int((start + i).dereference()) for i in range(int(finish - start))]


def _format(x, dtype):
    if dtype == "int64":
        return str(int(x))
    if dtype == "bfloat16":  # its 16 bits are the upper half of a float32's
        return f"{struct.unpack('<f', struct.pack('<I', int(x) << 16))[0]:.6g}"
    return f"{float(x):.6g}"


def _row_label(row, shape):
    """The leading indices of row number `row` of a tensor of `shape` (the last dim a row)."""
    index = []
    for size in reversed(shape[:-1]):
        index.append(row % size)
        row //= size
    return "[" + ", ".join(map(str, reversed(index))) + "]"


def _layout(impl):
    """(shape, numel, dtype name, C type) of a TensorImpl."""
    shape = _vector_items(impl["shape"])
    numel = 1
    for s in shape:
        numel *= s
    dtype, ctype = DTYPES.get(int(impl["dtype"]), (f"dtype {int(impl['dtype'])}", None))
    return shape, numel, dtype, ctype


def _title(impl, title, shape, dtype):
    """'Tensor (4, 4) float64 "name"' as a list of parts."""
    shape_text = "(" + ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")"
    parts = [f"{title} {shape_text} {dtype}"]
    name = impl["name"]
    try:
        text = name.format_string() if hasattr(name, "format_string") else str(name)
        if text not in ('""', ""):
            parts.append(text)
    except gdb.error:
        pass
    return parts


def _flags(impl):
    """'requires_grad', 'grad_fn=op' as they apply."""
    parts = ["requires_grad"] if bool(impl["requires_grad"]) else []
    node = _shared_ptr_target(impl["grad_fn"])
    if node is not None:
        parts.append(f"grad_fn={node['op'].string()}")
    return parts


def describe(impl, title="Tensor"):
    """The text of one TensorImpl: a header line, then its values (a line per row for 2-D+)."""
    shape, numel, dtype, ctype = _layout(impl)
    header = _title(impl, title, shape, dtype)
    values = []
    storage = _shared_ptr_target(impl["storage"])
    if storage is not None and ctype is not None and numel > 0:
        data = storage["data_"].cast(gdb.lookup_type(ctype).pointer())
        if len(shape) < 2:
            n = min(numel, uwaga_tensor_values)
            items = ", ".join(_format((data + i).dereference(), dtype) for i in range(n))
            more = f", ... {numel} values" if numel > n else ""
            header.append(f"[{items}{more}]")
        else:
            width = shape[-1]
            rows = numel // width
            for r in range(min(rows, uwaga_tensor_rows)):
                n = min(width, uwaga_tensor_values)
                items = "  ".join(f"{_format((data + r * width + j).dereference(), dtype):>9}"
                                  for j in range(n))
                more = f"  ... {width} values" if width > n else ""
                values.append(f"  {_row_label(r, shape)} {items}{more}")
            if rows > uwaga_tensor_rows:
                values.append(f"  ... {rows - uwaga_tensor_rows} more rows")
    lines = [" ".join(header + _flags(impl))] + values
    grad = _shared_ptr_target(impl["grad"])
    if grad is not None:
        lines.append(describe(grad, "grad: Tensor"))
    return "\n".join(lines)


def one_line(impl):
    """A TensorImpl on one line: shape, dtype, name, its first values, flags, its gradient's."""
    shape, numel, dtype, ctype = _layout(impl)
    parts = _title(impl, "Tensor", shape, dtype)
    parts.append(_first_values(impl, numel, dtype, ctype))
    parts += _flags(impl)
    grad = _shared_ptr_target(impl["grad"])
    if grad is not None:
        _, g_numel, g_dtype, g_ctype = _layout(grad)
        parts.append("grad=" + _first_values(grad, g_numel, g_dtype, g_ctype))
    return " ".join(p for p in parts if p)


def _first_values(impl, numel, dtype, ctype):
    """'[v0, v1, ..., N values]' of a TensorImpl's storage, or '' when it has none."""
    storage = _shared_ptr_target(impl["storage"])
    if storage is None or ctype is None or numel == 0:
        return ""
    data = storage["data_"].cast(gdb.lookup_type(ctype).pointer())
    n = min(numel, uwaga_tensor_values)
    values = ", ".join(_format((data + i).dereference(), dtype) for i in range(n))
    more = f", ... {numel} values" if numel > n else ""
    return f"[{values}{more}]"


class TensorPrinter:
    def __init__(self, val):
        self.val = val

    def to_string(self):
        impl = _shared_ptr_target(self.val["impl_"])
        return "Tensor (undefined)" if impl is None else one_line(impl)


class PrintRows(gdb.Command):
    """prows EXPR: a uwaga::Tensor row by row, each row labelled by its leading indices, then its
    gradient the same way (core/gdb/tensor_printer.py)."""

    def __init__(self):
        super().__init__("prows", gdb.COMMAND_DATA, gdb.COMPLETE_EXPRESSION)

    def invoke(self, argument, from_tty):
        value = gdb.parse_and_eval(argument)
        if value.type.strip_typedefs().code in (gdb.TYPE_CODE_REF, gdb.TYPE_CODE_PTR):
            value = value.referenced_value()
        impl = _shared_ptr_target(value["impl_"])
        print("Tensor (undefined)" if impl is None else describe(impl))


def build_printer():
    pp = gdb.printing.RegexpCollectionPrettyPrinter("uwaga")
    pp.add_printer("Tensor", "^uwaga::Tensor$", TensorPrinter)
    return pp


def register():
    gdb.printing.register_pretty_printer(None, build_printer(), replace=True)
    PrintRows()
