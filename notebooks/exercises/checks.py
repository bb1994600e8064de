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
    bad = ~np.isfinite(g) & np.isfinite(e)
    if bad.any():
        i = tuple(int(k) for k in np.argwhere(bad)[0])
        raise Wrong(f"{what} holds NaN or inf where the expected values are finite: the first at "
                    f"index {i}, got {g[i]}, expected {e[i]:.6g}")
    diff = np.abs(g - e)
    if np.nanmax(diff, initial=0) > TOL:
        i = np.unravel_index(np.nanargmax(diff), diff.shape)
        raise Wrong(f"{what}: values differ, largest difference {diff[i]:.3g} at index "
                    f"{tuple(int(k) for k in i)}: got {g[i]:.6g}, expected {e[i]:.6g}")


def _same_values(a, b):
    """Equal within TOL, NaN where the other has NaN, inf where it has the same inf."""
    a, b = a.numpy(), b.numpy()
    if a.shape != b.shape:
        return False
    return bool(np.all(np.isclose(a, b, rtol=0, atol=TOL, equal_nan=True)))


def expect_tensor_naming(what, got, expected, suspects, inputs=()):
    """expect_tensor; when `got` is wrong and equals what a classic mistake gives, the mistake is
    named. suspects: (mistake, how to mend it, gives) triples, gives(*inputs) computing the
    mistake's answer."""
    try:
        expect_tensor(what, got, expected)
    except Wrong as wrong:
        for mistake, mend, gives in suspects:
            with uwaga.no_grad():
                candidate = gives(*_leaves(inputs))
            if _same_values(got, candidate):
                raise Wrong(f"{what} is what {mistake} gives: {mend} ({wrong})") from None
        raise


def compare_function(mine, reference, inputs, names, seed=100, suspects=()):
    """Output and every input's gradient of mine(*inputs) against reference(*inputs), under one
    random upstream gradient dY; then gradcheck of mine. A wrong output equal to a suspect's
    (a classic mistake, see expect_tensor_naming) is named as that mistake."""
    a, b = _leaves(inputs), _leaves(inputs)
    expected = reference(*b)
    got = mine(*a)
    expect_tensor_naming("the output", got, expected, suspects, inputs)
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


def _attention_with(Q, K, V, scale, hide=None, dim=-1):
    """softmax(Q Kᵀ · scale, −∞ where hide(T, S) is 1, along dim) V: the classic mistakes."""
    E = Q @ K.transpose(-2, -1) * scale
    if hide is not None:
        T, S = Q.shape[-2], K.shape[-2]
        E = uwaga.masked_fill(E, uwaga.tensor(hide(T, S).astype(np.float64), dtype=E.dtype),
                              -np.inf)
    return uwaga.softmax(E, dim) @ V


def _future(T, S):
    return np.triu(np.ones((T, S)), k=1)


def _attention_suspects(hide=None):
    def root(Q):
        return 1 / np.sqrt(Q.shape[-1])
    return [
        ("attention without the 1/sqrt(d_k)", "divide the scores Q K^T by sqrt(d_k)",
         lambda Q, K, V: _attention_with(Q, K, V, 1.0, hide)),
        ("attention scaled by 1/d_k", "the scale is 1/sqrt(d_k)",
         lambda Q, K, V: _attention_with(Q, K, V, 1.0 / Q.shape[-1], hide)),
        ("a softmax over the queries (dim -2)", "take it over the keys, the last dim",
         lambda Q, K, V: _attention_with(Q, K, V, root(Q), None, dim=-2)),
    ]


def attention(fn):
    """Exercise 3: fn(Q, K, V) = softmax(Q Kᵀ / √d_k) V."""
    def run():
        Q, K, V = _randn((2, 3, 4), 3), _randn((2, 5, 4), 4), _randn((2, 5, 2), 5)
        compare_function(fn, uwaga.nn.scaled_dot_product_attention, [Q, K, V], ["Q", "K", "V"],
                         suspects=_attention_suspects())
    return _report("scaled dot-product attention", run)


def causal_attention(fn):
    """Exercise 4: attention where query i sees keys j <= i only."""
    def masked(hide):
        return lambda Q, K, V: _attention_with(Q, K, V, 1 / np.sqrt(Q.shape[-1]), hide)
    suspects = [
        ("a causal mask one step off, hiding the diagonal too",
         "query i must see key i, itself: hide j > i only (the first row, all hidden, is NaN)",
         masked(lambda T, S: np.triu(np.ones((T, S)), k=0))),
        ("a causal mask one step off, each query also seeing the next key",
         "hide every j > i", masked(lambda T, S: np.triu(np.ones((T, S)), k=2))),
        ("a causal mask on the wrong side", "hide the future, j > i, not the past, j < i",
         masked(lambda T, S: np.tril(np.ones((T, S)), k=-1))),
        ("attention without the causal mask", "hide the keys j > i", masked(None)),
    ] + _attention_suspects(_future)

    def run():
        Q, K, V = _randn((2, 5, 4), 6), _randn((2, 5, 4), 7), _randn((2, 5, 3), 8)
        compare_function(fn, lambda q, k, v: uwaga.nn.scaled_dot_product_attention(
            q, k, v, causal=True), [Q, K, V], ["Q", "K", "V"], suspects=suspects)
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

        def post_ln(t):
            t1 = blk.norm1(blk.attn(t) + t)
            return blk.norm2(blk.mlp(t1) + t1)
        suspects = [
            ("a post-LN block",
             "the norm goes before each sub-layer, inside the residual: z' = z + MSA(LN1(z)), "
             "not after the addition, LN(z + MSA(z)), as in the original Transformer", post_ln),
            ("a block without its residual additions",
             "add each sub-layer's input back: z' = MSA(LN1(z)) + z",
             lambda t: blk.mlp(blk.norm2(blk.attn(blk.norm1(t))))),
        ]
        compare_function(lambda t: fn(t, blk), blk, [z], ["z"], suspects=suspects)
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


def _attention_gradients(Q, K, V, dY):
    """Autograd's dA, dV, dE, dQ, dK: each forward step's backward run on copies of its inputs,
    fed autograd's gradient of the step after it."""
    def leaf(t):
        return _leaves([t.detach()])[0].requires_grad_()
    scale = 1 / np.sqrt(Q.shape[-1])
    A, V_ = leaf(uwaga.softmax(Q @ K.transpose(-2, -1) * scale, -1)), leaf(V)
    (A @ V_).backward(dY)
    E = leaf(Q @ K.transpose(-2, -1) * scale)
    uwaga.softmax(E, -1).backward(A.grad)
    Q_, K_ = leaf(Q), leaf(K)
    (Q_ @ K_.transpose(-2, -1) * scale).backward(E.grad)
    return A.grad, V_.grad, E.grad, Q_.grad, K_.grad


def attention_backward(fn):
    """Exercise 12: fn(Q, K, V, dY) -> (dA, dV, dE, dQ, dK), attention's backward by hand."""
    def run():
        Q, K = _randn((2, 3, 4), 21, False), _randn((2, 5, 4), 22, False)
        V, dY = _randn((2, 5, 2), 23, False), _randn((2, 3, 2), 24, False)
        want = _attention_gradients(Q, K, V, dY)
        got = fn(Q, K, V, dY)
        if not isinstance(got, (tuple, list)) or len(got) != 5:
            raise Wrong("return the five gradients (dA, dV, dE, dQ, dK) as a tuple")
        dA, dV, dE, dQ, dK = want
        root = np.sqrt(Q.shape[-1])
        A = uwaga.softmax(Q @ K.transpose(-2, -1) / root, -1)
        # In the order the backward pass computes them: the first wrong one is the mistake.
        expect_tensor("dA = dL/dA", got[0], dA)
        expect_tensor("dV = dL/dV", got[1], dV)
        expect_tensor_naming("dE = dL/dE", got[2], dE, [
            ("the softmax's backward without its row-sum term",
             "dE = A * (dA - rowsum(dA * A)), exercise 2",
             lambda: A * dA)])
        expect_tensor_naming("dQ = dL/dQ", got[3], dQ, [
            ("dE K without the 1/sqrt(d_k)",
             "E = Q K^T / sqrt(d_k), so the scale carries into dQ",
             lambda: dQ * root)])
        expect_tensor_naming("dK = dL/dK", got[4], dK, [
            ("dE^T Q without the 1/sqrt(d_k)",
             "E = Q K^T / sqrt(d_k), so the scale carries into dK",
             lambda: dK * root)])
        return "dA, dV, dE, dQ and dK match autograd's"
    return _report("attention's backward", run)


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
    (attention_backward, ["attention_backward"]),
]


def show_solution(name):
    """Prints the solution of one exercise (a function or class of solutions.py), e.g.
    show_solution("softmax"). Try first: the checks say what is wrong."""
    import inspect

    import solutions
    print(inspect.getsource(getattr(solutions, name)))
