"""The checks of the exercises (notebooks/08_exercises.ipynb): each runs the student's function on
random float64 inputs, compares its output and its gradients with uwaga's own version, runs
gradcheck, and says what is wrong — the shape, the values, or the gradient of which input.

    import checks
    checks.softmax(my_softmax)          # prints "softmax: OK ..." or what is wrong; returns a Result

Every check returns a Result (truthy when the exercise passes) and never raises for a wrong or
unfinished answer, so a notebook with unfinished exercises still runs top to bottom.
tests/python/test_exercises.py runs every check against solutions.py (all must pass) and against
the notebook's empty stubs (all must fail), so the checks themselves are tested.
"""
import traceback

import numpy as np

import uwaga

F64 = uwaga.float64
TOL = 1e-9  # float64: a right answer agrees to ~1e-15; a wrong one is off by far more


class Result:
    def __init__(self, name, ok, message):
        self.name, self.ok, self.message = name, ok, message

    def __bool__(self):
        return self.ok

    def __repr__(self):
        return f"{self.name}: {'OK' if self.ok else 'NOT YET'} - {self.message}"


class Wrong(Exception):
    """What a check found wrong: its message is the sentence the student reads."""


def _report(name, check, *args):
    try:
        message = check(*args)
        result = Result(name, True, message or "matches uwaga's own, gradients checked")
    except Wrong as e:
        result = Result(name, False, str(e))
    except NotImplementedError:
        result = Result(name, False, "not implemented yet (the stub raises NotImplementedError)")
    except Exception as e:  # the student's code raised: show where
        tb = traceback.extract_tb(e.__traceback__)
        where = f" (line {tb[-1].lineno}: {tb[-1].line})" if tb else ""
        result = Result(name, False, f"raised {type(e).__name__}: {e}{where}")
    print(repr(result))
    return result


def _randn(shape, seed, requires_grad=True):
    t = uwaga.tensor(np.random.default_rng(seed).normal(size=shape), dtype=F64)
    t.requires_grad = requires_grad
    return t


def _leaves(inputs):
    """Fresh copies of the inputs, so two runs accumulate their gradients separately."""
    out = []
    for t in inputs:
        c = uwaga.tensor(t.numpy().copy(), dtype=t.dtype)
        c.requires_grad = t.requires_grad
        out.append(c)
    return out


def expect_tensor(what, got, expected):
    """Fails unless `got` is a tensor of `expected`'s shape and values."""
    if got is None:
        raise Wrong(f"{what} is None: the function returns nothing yet")
    if not isinstance(got, uwaga.Tensor):
        raise Wrong(f"{what} is a {type(got).__name__}, not a uwaga.Tensor")
    if tuple(got.shape) != tuple(expected.shape):
        raise Wrong(f"{what} has shape {tuple(got.shape)}, expected {tuple(expected.shape)}")
    g, e = got.numpy(), expected.numpy()
    if not np.all(np.isfinite(g)) and np.all(np.isfinite(e)):
        raise Wrong(f"{what} holds NaN or inf where the expected values are finite")
    diff = np.abs(g - e)
    if np.nanmax(diff, initial=0) > TOL:
        i = np.unravel_index(np.nanargmax(diff), diff.shape)
        raise Wrong(f"{what}: values differ, largest difference {diff[i]:.3g} at index "
                    f"{tuple(int(k) for k in i)}: got {g[i]:.6g}, expected {e[i]:.6g}")


def compare_function(mine, reference, inputs, names, seed=100):
    """Output and every input's gradient of mine(*inputs) against reference(*inputs), under one
    random upstream gradient dY; then gradcheck of mine."""
    a, b = _leaves(inputs), _leaves(inputs)
    expected = reference(*b)
    got = mine(*a)
    expect_tensor("the output", got, expected)
    dY = _randn(expected.shape, seed, requires_grad=False)
    (expected * dY).sum().backward()
    if got.grad_fn is None and any(t.requires_grad for t in a):
        raise Wrong("the output is not connected to the inputs in the graph (no grad_fn): was it "
                    "computed outside autograd, e.g. in NumPy?")
    (got * dY).sum().backward()
    for t_got, t_ref, name in zip(a, b, names):
        if not t_ref.requires_grad:
            continue
        if t_got.grad is None:
            raise Wrong(f"no gradient reached {name}")
        expect_tensor(f"the gradient of {name}", t_got.grad, t_ref.grad)
    r = uwaga.gradcheck(mine, _leaves(inputs))
    if not r.ok:
        raise Wrong(f"gradcheck: {r.message}")


# ---- the exercises, in the notebook's order -------------------------------------------------------

def softmax(fn):
    """Exercise 1: fn(E) = softmax along the last dim, from exp, max, sum."""
    def run():
        E = _randn((3, 5), 1)
        compare_function(fn, lambda e: uwaga.softmax(e, -1), [E], ["E"])
        big = uwaga.tensor([[1000.0, 999.0, -1000.0]], dtype=F64)
        expect_tensor("softmax of [1000, 999, -1000] (large scores: subtract the row's max "
                      "first)", fn(big), uwaga.softmax(big, -1))
    return _report("softmax", run)


def softmax_function(cls):
    """Exercise 2: a uwaga.Function with softmax's forward and its hand-written backward."""
    def run():
        E = _randn((4, 6), 2)
        Y = cls.apply(_leaves([E])[0])
        if Y is not None and (Y.grad_fn is None or Y.grad_fn.op != cls.__name__):
            raise Wrong(f"the output's grad_fn should be the node '{cls.__name__}' (your backward)")
        compare_function(cls.apply, lambda e: uwaga.softmax(e, -1), [E], ["E"])
    return _report("Softmax as a Function (forward and backward)", run)


def attention(fn):
    """Exercise 3: fn(Q, K, V) = softmax(Q Kᵀ / √d_k) V."""
    def run():
        Q, K, V = _randn((2, 3, 4), 3), _randn((2, 5, 4), 4), _randn((2, 5, 2), 5)
        compare_function(fn, uwaga.nn.scaled_dot_product_attention, [Q, K, V], ["Q", "K", "V"])
    return _report("scaled dot-product attention", run)


def causal_attention(fn):
    """Exercise 4: attention where query i sees keys j <= i only."""
    def run():
        Q, K, V = _randn((2, 5, 4), 6), _randn((2, 5, 4), 7), _randn((2, 5, 3), 8)
        compare_function(fn, lambda q, k, v: uwaga.nn.scaled_dot_product_attention(
            q, k, v, causal=True), [Q, K, V], ["Q", "K", "V"])
    return _report("causal attention", run)


def layer_norm_function(cls):
    """Exercise 5: LayerNorm as a uwaga.Function with a hand-written backward for x, γ, β."""
    def run():
        x, g, b = _randn((3, 6), 9), _randn((6,), 10), _randn((6,), 11)
        y = cls.apply(*_leaves([x, g, b]))
        if y is not None and (y.grad_fn is None or y.grad_fn.op != cls.__name__):
            raise Wrong(f"the output's grad_fn should be the node '{cls.__name__}' (your backward)")
        compare_function(cls.apply, uwaga.nn.layer_norm, [x, g, b], ["x", "gamma", "beta"])
    return _report("LayerNorm as a Function (backward of x, gamma, beta)", run)


def heads(split, merge):
    """Exercise 6: split_heads (B, T, h·d) -> (B, h, T, d) and merge_heads, its inverse."""
    def run():
        x = _randn((2, 3, 8), 12)
        compare_function(lambda t: split(t, 2), lambda t: uwaga.nn.split_heads(t, 2), [x], ["x"])
        y = _randn((2, 4, 3, 2), 13)
        compare_function(merge, uwaga.nn.merge_heads, [y], ["heads"])
    return _report("multi-head split and merge", run)


def block(fn):
    """Exercise 7: fn(z, block) = the pre-LN block from block.norm1, .attn, .norm2, .mlp."""
    def run():
        blk = uwaga.nn.TransformerEncoderBlock(8, 2, 16, uwaga.Generator(14))
        blk.to(F64)
        z = _randn((2, 4, 8), 15)
        compare_function(lambda t: fn(t, blk), blk, [z], ["z"])
    return _report("one pre-LN transformer block", run)


def patch_embedding(fn):
    """Exercise 8: fn(images, P) = patches (B, N, P·P·C), raster order, channels innermost."""
    def run():
        images = _randn((2, 3, 8, 4), 16)
        compare_function(lambda t: fn(t, 2), lambda t: uwaga.nn.patchify(t, 2), [images],
                         ["images"])
    return _report("the ViT's patches", run)


def _tiny_vit():
    config = uwaga.nn.VitConfig(image_size=8, channels=1, patch=4, dim=8, depth=1, heads=2,
                                mlp_dim=16, num_classes=3)
    model = uwaga.nn.VisionTransformer(config, uwaga.Generator(17))
    model.to(F64)
    optimizer = uwaga.optim.AdamW(uwaga.optim.make_param_groups(model, 0.01), lr=1e-2)
    return model, optimizer


def train_step(fn):
    """Exercise 9: fn(model, optimizer, images, labels) -> the loss (a float): forward,
    cross-entropy, backward, step, zero_grad."""
    def run():
        images = _randn((6, 1, 8, 8), 18, requires_grad=False)
        labels = uwaga.tensor(np.array([0, 1, 2, 0, 1, 2]))
        mine, opt_mine = _tiny_vit()
        ref, opt_ref = _tiny_vit()
        loss = fn(mine, opt_mine, images, labels)
        expected = uwaga.cross_entropy(ref(images), labels)
        expected.backward()
        opt_ref.step()
        opt_ref.zero_grad()
        if loss is None:
            raise Wrong("the function returns None: return the loss, as a float")
        loss = float(loss.item() if isinstance(loss, uwaga.Tensor) else loss)
        if abs(loss - expected.item()) > TOL:
            raise Wrong(f"the loss is {loss:.6g}, expected {expected.item():.6g} (the "
                        "cross-entropy of the model's logits before the update)")
        for (name, p), (_, q) in zip(mine.named_parameters(), ref.named_parameters()):
            if p.grad is not None:
                raise Wrong(f"{name} still has a gradient after the step: zero them")
            expect_tensor(f"{name} after the step", p, q)
        return "the loss and every parameter after the step match a reference step"
    return _report("a training step", run)


def _np_top_k(logits, k, temperature):
    z = np.asarray(logits, dtype=np.float64) / temperature
    keep = np.argsort(-z, kind="stable")[:k]
    p = np.zeros_like(z)
    p[keep] = np.exp(z[keep] - z[keep].max())
    return p / p.sum()


def sampling(greedy, top_k):
    """Exercise 10: greedy(logits) -> the index of the largest (lowest on ties);
    top_k(logits, k, temperature) -> the probabilities top-k sampling draws from."""
    def run():
        rng = np.random.default_rng(19)
        for case in range(5):
            logits = rng.normal(size=7)
            if case == 0:
                logits[2] = logits[5] = logits.max() + 1  # a tie: the lower id wins
            got = greedy(uwaga.tensor(logits, dtype=F64))
            want = int(np.argmax(logits))
            if got is None or int(got) != want:
                raise Wrong(f"greedy({np.round(logits, 3).tolist()}) gave {got}, expected {want}")
        for k, temperature in [(1, 1.0), (3, 1.0), (3, 0.5), (7, 2.0)]:
            logits = rng.normal(size=7)
            want = uwaga.tensor(_np_top_k(logits, k, temperature), dtype=F64)
            expect_tensor(f"top_k(logits, k={k}, temperature={temperature})",
                          top_k(uwaga.tensor(logits, dtype=F64), k, temperature), want)
        return "5 greedy choices (one a tie) and 4 top-k distributions match NumPy's"
    return _report("greedy and top-k sampling", run)


def cross_entropy_function(cls):
    """Exercise 11: cross-entropy (mean over the rows) as a uwaga.Function, backward by hand."""
    def run():
        logits = _randn((5, 4), 20)
        targets = uwaga.tensor(np.array([0, 3, 1, 1, 2]))
        out = cls.apply(_leaves([logits])[0], targets)
        if out is not None and (out.grad_fn is None or out.grad_fn.op != cls.__name__):
            raise Wrong(f"the output's grad_fn should be the node '{cls.__name__}' (your backward)")
        compare_function(lambda z: cls.apply(z, targets),
                         lambda z: uwaga.cross_entropy(z, targets), [logits], ["logits"])
    return _report("cross-entropy as a Function", run)


# Each exercise: its check and the names the notebook's stub cell defines, in order.
EXERCISES = [
    (softmax, ["softmax"]),
    (softmax_function, ["Softmax"]),
    (attention, ["attention"]),
    (causal_attention, ["causal_attention"]),
    (layer_norm_function, ["LayerNorm"]),
    (heads, ["split_heads", "merge_heads"]),
    (block, ["block_forward"]),
    (patch_embedding, ["patchify"]),
    (train_step, ["train_step"]),
    (sampling, ["greedy", "top_k"]),
    (cross_entropy_function, ["CrossEntropy"]),
]


def show_solution(name):
    """Prints the solution of one exercise (a function or class of solutions.py), e.g.
    show_solution("softmax"). Try first: the checks say what is wrong."""
    import inspect

    import solutions
    print(inspect.getsource(getattr(solutions, name)))
