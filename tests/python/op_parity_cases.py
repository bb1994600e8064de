"""The cases of the op-parity test: every op and module of the Python bindings next to PyTorch.

Each case names its inputs (shape and kind of values) and says how to compute the same thing with
uwaga (`uw`) and with torch (`th`); neither library is imported here. make_op_parity_golden.py
runs the torch side (Debian's python3-torch 1.13) and stores inputs, outputs and gradients in
tests/golden/op_parity.npz; test_op_parity.py runs the uwaga side on the stored inputs and
compares, in float64 and float32.

Kinds of input values (see make_input):
  normal    N(0, 1)                       positive  uniform in [0.5, 2]
  ties      integers in [-2, 2]: ties     special   N(0, 1) with NaN, ±inf, 0, -0 sprinkled in
  zeros     0 and ±1 (pow at 0)           large:S   N(0, 1) · S (extreme magnitudes)
  offset:S  S + N(0, 1) (huge values close together)
  index:N   int64 ids in [0, N)           mask      0/1 floats
"""
import zlib
from dataclasses import dataclass, field

import numpy as np


@dataclass
class Case:
    name: str
    uw: object                 # (uwaga, *inputs) -> tensor or list of tensors
    th: object                 # (torch, *inputs) -> the same
    inputs: list               # [(shape, kind), ...]
    grad: bool = True          # whether gradients are compared (float inputs only)
    dtypes: tuple = ("float64", "float32")
    rtol32: float = 1e-4       # float32 tolerances; float64 uses 1e-7 and 1e-9
    atol32: float = 1e-5
    refuses: str = ""          # uwaga refuses these inputs by design, with this in its message
    # Elementwise ops that take their limits at ±inf where PyTorch's formula gives NaN (uwaga's
    # fused GELU: gelu(−inf) = 0, gelu'(inf) = 1): there only, NaN from PyTorch is not required.
    limits_at_inf: bool = False


def make_input(shape, kind, dtype, rng):
    n = int(np.prod(shape)) if shape else 1
    if kind.startswith("index:"):
        return rng.integers(0, int(kind.split(":")[1]), size=shape).astype(np.int64)
    if kind == "normal":
        v = rng.standard_normal(n)
    elif kind == "positive":
        v = rng.uniform(0.5, 2.0, n)
    elif kind == "ties":
        v = rng.integers(-2, 3, n).astype(np.float64)
    elif kind == "zeros":
        v = rng.choice([0.0, 1.0, -1.0, 0.0], n)
    elif kind == "mask":
        v = rng.integers(0, 2, n).astype(np.float64)
    elif kind == "special":
        v = rng.standard_normal(n)
        specials = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0])
        picks = rng.random(n) < 0.4
        v[picks] = specials[rng.integers(0, len(specials), int(picks.sum()))]
    elif kind.startswith("large:"):
        v = rng.standard_normal(n) * float(kind.split(":")[1])
    elif kind.startswith("offset:"):
        v = rng.standard_normal(n) + float(kind.split(":")[1])
    else:
        raise ValueError(f"unknown input kind {kind}")
    return v.reshape(shape).astype(dtype)


def inputs_for(case, dtype):
    rng = np.random.default_rng(zlib.crc32(f"{case.name}|{dtype}".encode()))
    return [make_input(tuple(s), k, dtype, rng) for s, k in case.inputs]


def _cases():
    c = []
    add = c.append

    # ---- binary ops, broadcasting (incl. 0-d, size-1 and empty dims) ---------------------------
    shapes = [((3, 4), (3, 4)), ((2, 3, 4), (4,)), ((2, 1, 4), (3, 1)), ((3, 4), ()),
              ((1,), (2, 3)), ((0, 3), (1, 3))]
    binary = {
        "add": (lambda u, a, b: u.add(a, b), lambda t, a, b: t.add(a, b)),
        "sub": (lambda u, a, b: u.sub(a, b), lambda t, a, b: t.sub(a, b)),
        "mul": (lambda u, a, b: u.mul(a, b), lambda t, a, b: t.mul(a, b)),
        "div": (lambda u, a, b: u.div(a, b), lambda t, a, b: t.div(a, b)),
        "maximum": (lambda u, a, b: u.maximum(a, b), lambda t, a, b: t.maximum(a, b)),
        "operators": (lambda u, a, b: (a + b) * a - b / (a * a + 1.0),
                      lambda t, a, b: (a + b) * a - b / (a * a + 1.0)),
    }
    for op, (uw, th) in binary.items():
        for sa, sb in shapes:
            add(Case(f"{op} {sa} {sb}", uw, th, [(sa, "normal"), (sb, "positive")]))
        add(Case(f"{op} special", uw, th, [((6, 5), "special"), ((6, 5), "special")]))
        add(Case(f"{op} ties", uw, th, [((4, 5), "ties"), ((4, 5), "ties")]))

    # ---- scalar variants and unary ops ---------------------------------------------------------
    scalar = {
        "x+s": (lambda u, x: x + 2.5, lambda t, x: x + 2.5),
        "s-x": (lambda u, x: 2.5 - x, lambda t, x: 2.5 - x),
        "x*s": (lambda u, x: x * -3.0, lambda t, x: x * -3.0),
        "x/s": (lambda u, x: x / 4.0, lambda t, x: x / 4.0),
        "s/x": (lambda u, x: 4.0 / x, lambda t, x: 4.0 / x),
        "neg": (lambda u, x: u.neg(x), lambda t, x: t.neg(x)),
        "exp": (lambda u, x: u.exp(x), lambda t, x: t.exp(x)),
        "log": (lambda u, x: u.log(x), lambda t, x: t.log(x)),
        "sqrt": (lambda u, x: u.sqrt(x), lambda t, x: t.sqrt(x)),
        "tanh": (lambda u, x: u.tanh(x), lambda t, x: t.tanh(x)),
        "sigmoid": (lambda u, x: u.sigmoid(x), lambda t, x: t.sigmoid(x)),
        "relu": (lambda u, x: u.relu(x), lambda t, x: t.relu(x)),
        "abs": (lambda u, x: u.abs(x), lambda t, x: t.abs(x)),
        "gelu": (lambda u, x: u.gelu(x), lambda t, x: t.nn.functional.gelu(x)),
        "gelu_composed": (lambda u, x: u.gelu_composed(x), lambda t, x: t.nn.functional.gelu(x)),
        "method exp+tanh": (lambda u, x: x.exp().tanh() + x.relu() + x.sigmoid(),
                            lambda t, x: x.exp().tanh() + x.relu() + x.sigmoid()),
    }
    for op, (uw, th) in scalar.items():
        kind = "positive" if op in ("log", "sqrt", "s/x") else "normal"
        add(Case(f"{op}", uw, th, [((3, 4), kind)]))
        add(Case(f"{op} 0-d", uw, th, [((), kind)]))
        add(Case(f"{op} empty", uw, th, [((0, 4), kind)]))
        add(Case(f"{op} special", uw, th, [((6, 5), "special")], limits_at_inf=op == "gelu"))
        add(Case(f"{op} zeros", uw, th, [((8,), "zeros")]))
    for p in (0.0, 1.0, 2.0, 3.0, 0.5, -1.0, 2.5, -0.5):
        add(Case(f"pow {p}", lambda u, x, p=p: u.pow(x, p), lambda t, x, p=p: t.pow(x, p),
                 [((3, 4), "positive")]))
        add(Case(f"pow {p} zeros", lambda u, x, p=p: x ** p, lambda t, x, p=p: x ** p,
                 [((8,), "zeros")]))
        add(Case(f"pow {p} special", lambda u, x, p=p: u.pow(x, p), lambda t, x, p=p: t.pow(x, p),
                 [((6, 5), "special")]))

    # ---- selection -------------------------------------------------------------------------------
    add(Case("where", lambda u, c, a, b: u.where(c, a, b),
             lambda t, c, a, b: t.where(c > 0, a, b),
             [((3, 1), "mask"), ((3, 4), "normal"), ((4,), "normal")]))
    add(Case("where special", lambda u, c, a, b: u.where(c, a, b),
             lambda t, c, a, b: t.where(c > 0, a, b),
             [((5, 4), "mask"), ((5, 4), "special"), ((5, 4), "special")]))
    for v in (0.0, -1e9, float("-inf")):
        add(Case(f"masked_fill {v}", lambda u, x, m, v=v: u.masked_fill(x, m, v),
                 lambda t, x, m, v=v: x.masked_fill(m > 0, v),
                 [((2, 3, 4), "normal"), ((3, 1), "mask")]))

    # ---- reductions: dims (negative, several, none), keepdim, size-1 and empty dims ------------
    dim_sets = [None, 0, -1, (0, 2), (-1, -3), (1,)]
    for dims in dim_sets:
        for keep in (False, True):
            if dims is None and keep:
                continue
            for op in ("sum", "mean"):
                if dims is None:
                    uw = lambda u, x, op=op: getattr(u, op)(x)
                    th = lambda t, x, op=op: getattr(t, op)(x)
                else:
                    uw = lambda u, x, op=op, d=dims, k=keep: getattr(u, op)(x, d, k)
                    th = lambda t, x, op=op, d=dims, k=keep: getattr(t, op)(x, d, keepdim=k)
                add(Case(f"{op} {dims} keepdim={keep}", uw, th, [((2, 3, 4), "normal")]))
                add(Case(f"{op} {dims} keepdim={keep} size-1", uw, th, [((1, 3, 1), "normal")]))
                add(Case(f"{op} {dims} keepdim={keep} special", uw, th, [((2, 3, 4), "special")]))
            for corr in (0, 1):
                if dims is None:
                    continue
                add(Case(f"var {dims} keepdim={keep} correction={corr}",
                         lambda u, x, d=dims, k=keep, c=corr: u.var(x, d, k, c),
                         lambda t, x, d=dims, k=keep, c=corr: t.var(x, d, keepdim=k, unbiased=c == 1),
                         [((2, 3, 4), "normal")]))
            # max: one dim -> torch.max(x, dim) (first maximal element takes the gradient);
            # several or all -> torch.amax / torch.max() (ties share it).
            if dims is None:
                uw, th = (lambda u, x: x.max()), (lambda t, x: x.max())
            elif isinstance(dims, int) or len(dims) == 1:
                uw = lambda u, x, d=dims, k=keep: x.max(d, k)
                th = lambda t, x, d=dims, k=keep: x.max(d if isinstance(d, int) else d[0],
                                                        keepdim=k).values
            else:
                uw = lambda u, x, d=dims, k=keep: x.max(d, k)
                th = lambda t, x, d=dims, k=keep: t.amax(x, d, keepdim=k)
            for kind in ("normal", "ties", "special"):
                # torch.amax's gradient over a slice whose max is NaN is 0/0 = NaN everywhere;
                # uwaga's goes to the NaNs, as torch.max() does: values only there.
                several = dims is not None and not isinstance(dims, int) and len(dims) > 1
                add(Case(f"max {dims} keepdim={keep} {kind}", uw, th, [((2, 3, 4), kind)],
                         grad=not (several and kind == "special")))
            if isinstance(dims, int):
                for kind in ("normal", "ties", "special"):
                    add(Case(f"argmax {dims} keepdim={keep} {kind}",
                             lambda u, x, d=dims, k=keep: u.argmax(x, d, k),
                             lambda t, x, d=dims, k=keep: t.argmax(x, d, keepdim=k),
                             [((2, 3, 4), kind)], grad=False))
    for op in ("sum", "mean"):
        # The mean of nothing: PyTorch says NaN, uwaga refuses it (naming the op and the shape).
        refuses = "mean: reducing (0, 3) over an empty dim" if op == "mean" else ""
        add(Case(f"{op} empty dim 0", lambda u, x, op=op: getattr(u, op)(x, 0),
                 lambda t, x, op=op: getattr(t, op)(x, 0), [((0, 3), "normal")], refuses=refuses))
        add(Case(f"{op} empty all", lambda u, x, op=op: getattr(u, op)(x),
                 lambda t, x, op=op: getattr(t, op)(x), [((0, 3), "normal")], refuses=refuses))
        add(Case(f"{op} empty keep other", lambda u, x, op=op: getattr(u, op)(x, 1),
                 lambda t, x, op=op: getattr(t, op)(x, 1), [((0, 3), "normal")]))
    add(Case("max large float32", lambda u, x: x.max(-1), lambda t, x: x.max(-1).values,
             [((3, 5), "large:1e30")]))

    # ---- matmul and linear -------------------------------------------------------------------
    for sa, sb in [((3, 4), (4, 5)), ((2, 3, 4), (4, 5)), ((2, 3, 4), (2, 4, 5)),
                   ((2, 1, 3, 4), (3, 4, 2)), ((0, 4), (4, 2)), ((3, 0), (0, 2)), ((1, 1), (1, 1))]:
        add(Case(f"matmul {sa} {sb}", lambda u, a, b: u.matmul(a, b), lambda t, a, b: t.matmul(a, b),
                 [(sa, "normal"), (sb, "normal")]))
    add(Case("matmul special", lambda u, a, b: a @ b, lambda t, a, b: a @ b,
             [((3, 4), "special"), ((4, 2), "normal")]))
    add(Case("linear", lambda u, x, w, b: u.linear(x, w, b),
             lambda t, x, w, b: t.nn.functional.linear(x, w, b),
             [((2, 3, 4), "normal"), ((5, 4), "normal"), ((5,), "normal")]))
    add(Case("linear no bias", lambda u, x, w: u.linear(x, w),
             lambda t, x, w: t.nn.functional.linear(x, w), [((3, 4), "normal"), ((5, 4), "normal")]))

    # ---- shape ops ---------------------------------------------------------------------------------
    shape_ops = {
        "reshape": (lambda u, x: u.reshape(x, [4, -1]), lambda t, x: t.reshape(x, (4, -1))),
        "method reshape": (lambda u, x: x.reshape(2, 12), lambda t, x: x.reshape(2, 12)),
        "view": (lambda u, x: x.view(6, 4), lambda t, x: x.view(6, 4)),
        "transpose": (lambda u, x: u.transpose(x, -1, 0), lambda t, x: t.transpose(x, -1, 0)),
        "permute": (lambda u, x: u.permute(x, [2, 0, 1]), lambda t, x: x.permute(2, 0, 1)),
        "method permute": (lambda u, x: x.permute(1, 2, 0) * 1.0, lambda t, x: x.permute(1, 2, 0) * 1.0),
        "flatten": (lambda u, x: x.flatten(1), lambda t, x: x.flatten(1)),
        "flatten -2": (lambda u, x: x.flatten(0, -2), lambda t, x: x.flatten(0, -2)),
        "unsqueeze -1": (lambda u, x: x.unsqueeze(-1), lambda t, x: x.unsqueeze(-1)),
        "unsqueeze 0": (lambda u, x: x.unsqueeze(0), lambda t, x: x.unsqueeze(0)),
        "slice": (lambda u, x: u.slice(x, 2, 1, 3), lambda t, x: x[:, :, 1:3]),
        "slice step": (lambda u, x: u.slice(x, -1, 0, 4, 2), lambda t, x: x[..., 0:4:2]),
        "slice empty": (lambda u, x: u.slice(x, 1, 2, 2), lambda t, x: x[:, 2:2]),
        "cat": (lambda u, x: u.cat([x, x * 2.0], 1), lambda t, x: t.cat([x, x * 2.0], 1)),
        "cat -1": (lambda u, x: u.cat([x, u.exp(x)], -1), lambda t, x: t.cat([x, t.exp(x)], -1)),
        "stack": (lambda u, x: u.stack([x, x * 3.0], 0), lambda t, x: t.stack([x, x * 3.0], 0)),
        "stack -1": (lambda u, x: u.stack([x, x * 3.0], -1), lambda t, x: t.stack([x, x * 3.0], -1)),
        "chunk": (lambda u, x: u.chunk(x, 2, -1), lambda t, x: list(t.chunk(x, 2, -1))),
        "split": (lambda u, x: u.split(x, 2, 1), lambda t, x: list(t.split(x, 2, 1))),
        "expand": (lambda u, x: u.expand(u.slice(x, 0, 0, 1), [3, 3, 4]),
                   lambda t, x: x[0:1].expand(3, 3, 4)),
        "T": (lambda u, x: u.reshape(x, [6, 4]).T, lambda t, x: t.reshape(x, (6, 4)).T),
    }
    for op, (uw, th) in shape_ops.items():
        add(Case(op, uw, th, [((2, 3, 4), "normal")]))
    add(Case("squeeze", lambda u, x: x.squeeze(-2), lambda t, x: x.squeeze(-2), [((3, 1, 2), "normal")]))
    add(Case("cat empty", lambda u, a, b: u.cat([a, b], 0), lambda t, a, b: t.cat([a, b], 0),
             [((0, 3), "normal"), ((2, 3), "normal")]))
    add(Case("index_select", lambda u, x, i: u.index_select(x, -1, i),
             lambda t, x, i: t.index_select(x, -1, i), [((2, 3, 4), "normal"), ((6,), "index:4")]))
    add(Case("gather", lambda u, x, i: u.gather(x, 1, i), lambda t, x, i: t.gather(x, 1, i),
             [((3, 4), "normal"), ((3, 5), "index:4")]))
    add(Case("embedding", lambda u, w, i: u.embedding(w, i),
             lambda t, w, i: t.nn.functional.embedding(i, w), [((5, 3), "normal"), ((2, 4), "index:5")]))

    # ---- softmax family: every dim, huge logits, NaN and inf --------------------------------------
    for op, tname in (("softmax", "softmax"), ("softmax_composed", "softmax"),
                      ("log_softmax", "log_softmax"), ("log_softmax_composed", "log_softmax")):
        for d in (0, 1, -1):
            add(Case(f"{op} dim {d}", lambda u, x, op=op, d=d: getattr(u, op)(x, d),
                     lambda t, x, tn=tname, d=d: getattr(t, tn)(x, d), [((2, 3, 4), "normal")]))
        for scale in ("1e3", "1e6", "1e30"):
            add(Case(f"{op} large {scale}", lambda u, x, op=op: getattr(u, op)(x, -1),
                     lambda t, x, tn=tname: getattr(t, tn)(x, -1), [((4, 5), f"large:{scale}")]))
            for d in (-1, 0):
                add(Case(f"{op} offset {scale} dim {d}", lambda u, x, op=op, d=d: getattr(u, op)(x, d),
                         lambda t, x, tn=tname, d=d: getattr(t, tn)(x, d),
                         [((4, 5), f"offset:{scale}")]))
        add(Case(f"{op} special", lambda u, x, op=op: getattr(u, op)(x, -1),
                 lambda t, x, tn=tname: getattr(t, tn)(x, -1), [((6, 5), "special")]))
        add(Case(f"{op} size-1", lambda u, x, op=op: getattr(u, op)(x, 1),
                 lambda t, x, tn=tname: getattr(t, tn)(x, 1), [((3, 1), "normal")]))
        add(Case(f"{op} empty rows", lambda u, x, op=op: getattr(u, op)(x, -1),
                 lambda t, x, tn=tname: getattr(t, tn)(x, -1), [((0, 4), "normal")]))
    add(Case("method softmax", lambda u, x: x.softmax(0) + x.log_softmax(-1),
             lambda t, x: x.softmax(0) + x.log_softmax(-1), [((3, 4), "normal")]))
    for op in ("cross_entropy", "cross_entropy_composed"):
        add(Case(op, lambda u, x, y, op=op: getattr(u, op)(x, y),
                 lambda t, x, y: t.nn.functional.cross_entropy(x, y),
                 [((6, 5), "normal"), ((6,), "index:5")]))
        add(Case(f"{op} smoothing", lambda u, x, y, op=op: getattr(u, op)(x, y, label_smoothing=0.1),
                 lambda t, x, y: t.nn.functional.cross_entropy(x, y, label_smoothing=0.1),
                 [((6, 5), "normal"), ((6,), "index:5")]))
        add(Case(f"{op} ignore", lambda u, x, y, op=op: getattr(u, op)(x, y, ignore_index=2),
                 lambda t, x, y: t.nn.functional.cross_entropy(x, y, ignore_index=2),
                 [((8, 3), "normal"), ((8,), "index:3")]))
        add(Case(f"{op} large", lambda u, x, y, op=op: getattr(u, op)(x, y),
                 lambda t, x, y: t.nn.functional.cross_entropy(x, y),
                 [((4, 5), "large:1e6"), ((4,), "index:5")]))

    # ---- layer norm, attention, modules --------------------------------------------------------
    for op in ("layer_norm", "layer_norm_composed"):
        add(Case(op, lambda u, x, w, b, op=op: getattr(u.nn, op)(x, w, b),
                 lambda t, x, w, b: t.nn.functional.layer_norm(x, (4,), w, b),
                 [((2, 3, 4), "normal"), ((4,), "normal"), ((4,), "normal")]))
        add(Case(f"{op} large", lambda u, x, w, b, op=op: getattr(u.nn, op)(x, w, b),
                 lambda t, x, w, b: t.nn.functional.layer_norm(x, (4,), w, b),
                 [((3, 4), "large:1e3"), ((4,), "normal"), ((4,), "normal")], rtol32=1e-3))

    def torch_attention(t, q, k, v, pad=None, causal=False):
        e = q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5
        if causal:
            n, m = e.shape[-2], e.shape[-1]
            e = e.masked_fill(t.ones(n, m, dtype=t.bool).triu(1), float("-inf"))
        if pad is not None:
            e = e.masked_fill(pad[:, None, :] > 0, float("-inf"))
        return t.softmax(e, -1) @ v

    for op in ("scaled_dot_product_attention", "scaled_dot_product_attention_composed"):
        qkv = [((2, 3, 4), "normal"), ((2, 5, 4), "normal"), ((2, 5, 6), "normal")]
        add(Case(op, lambda u, q, k, v, op=op: getattr(u.nn, op)(q, k, v),
                 lambda t, q, k, v: torch_attention(t, q, k, v), qkv))
        add(Case(f"{op} causal", lambda u, q, k, v, op=op: getattr(u.nn, op)(q, k, v, causal=True),
                 lambda t, q, k, v: torch_attention(t, q, k, v, causal=True),
                 [((2, 5, 4), "normal"), ((2, 5, 4), "normal"), ((2, 5, 6), "normal")]))
    return c


CASES = _cases()
