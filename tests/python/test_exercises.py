"""The exercises' checks tested (notebooks/08_exercises.ipynb, notebooks/exercises/): every check
passes on the solutions, fails on the notebook's empty stubs, and fails on planted mistakes.

    PYTHONPATH=build/notebooks python3 -m unittest tests/python/test_exercises.py -v
"""
import contextlib
import io
import json
import os
import subprocess
import sys
import unittest

if "UWAGA_PYTHON_PATH" in os.environ:
    sys.path.insert(0, os.environ["UWAGA_PYTHON_PATH"])
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "notebooks", "exercises"))
import numpy as np  # noqa: E402

import uwaga  # noqa: E402
import checks  # noqa: E402
import solutions  # noqa: E402

NOTEBOOK = os.path.join(ROOT, "notebooks", "08_exercises.ipynb")


def quietly(check, *args):
    with contextlib.redirect_stdout(io.StringIO()):
        return check(*args)


def notebook_changed():
    """True when the notebook differs from git's copy: a student at work, whose stubs are filled."""
    try:
        r = subprocess.run(["git", "-C", ROOT, "diff", "--quiet", "HEAD", "--", NOTEBOOK],
                           capture_output=True)
    except OSError:
        return False
    return r.returncode == 1


class Solutions(unittest.TestCase):
    def test_there_are_at_least_ten_exercises(self):
        self.assertGreaterEqual(len(checks.EXERCISES), 10)

    def test_every_check_passes_on_its_solution(self):
        for check, names in checks.EXERCISES:
            with self.subTest(check=check.__name__):
                r = quietly(check, *[getattr(solutions, n) for n in names])
                self.assertTrue(r, repr(r))


class Stubs(unittest.TestCase):
    def test_every_check_fails_on_the_notebooks_empty_stub(self):
        if notebook_changed():
            self.skipTest("08_exercises.ipynb has changes: its stubs may be filled in")
        with open(NOTEBOOK, encoding="utf-8") as f:
            cells = json.load(f)["cells"]
        stubs = ["".join(c["source"]) for c in cells
                 if "exercise-stub" in c.get("metadata", {}).get("tags", [])]
        self.assertEqual(len(stubs), len(checks.EXERCISES))
        namespace = {"uwaga": uwaga, "np": np}
        for source in stubs:
            exec(source, namespace)
        for check, names in checks.EXERCISES:
            with self.subTest(check=check.__name__):
                r = quietly(check, *[namespace[n] for n in names])
                self.assertFalse(r, repr(r))
                self.assertIn("not implemented yet", r.message)


class PlantedMistakes(unittest.TestCase):
    """A check must say what is wrong, not only that something is."""

    def assert_fails(self, result, *words):
        self.assertFalse(result, repr(result))
        for w in words:
            self.assertIn(w, result.message)

    def test_softmax_without_the_max_overflows(self):
        def naive(E):
            e = E.exp()
            return e / e.sum(-1, keepdim=True)
        self.assert_fails(quietly(checks.softmax, naive), "1000")

    def test_softmax_over_the_wrong_dim(self):
        self.assert_fails(quietly(checks.softmax, lambda E: solutions.softmax(E.T).T),
                          "values differ")

    def test_a_wrong_hand_written_backward_names_the_input(self):
        class Sloppy(uwaga.Function):
            @staticmethod
            def forward(ctx, E):
                A = solutions.softmax(E)
                ctx.save_for_backward(A)
                return A

            @staticmethod
            def backward(ctx, dA):
                (A,) = ctx.saved_tensors
                return A * dA  # the row-sum term forgotten
        self.assert_fails(quietly(checks.softmax_function, Sloppy), "gradient of E")

    def test_attention_without_the_scale(self):
        def unscaled(Q, K, V):
            return solutions.softmax(Q @ K.transpose(-2, -1)) @ V
        self.assert_fails(quietly(checks.attention, unscaled),
                          "is what attention without the 1/sqrt(d_k)", "values differ")

    def test_a_mask_on_the_wrong_side(self):
        def anticausal(Q, K, V):
            T, S = Q.shape[-2], K.shape[-2]
            E = Q @ K.transpose(-2, -1) / np.sqrt(Q.shape[-1])
            past = uwaga.tensor(np.tril(np.ones((T, S)), k=-1), dtype=E.dtype)
            return solutions.softmax(uwaga.masked_fill(E, past, -np.inf)) @ V
        self.assert_fails(quietly(checks.causal_attention, anticausal),
                          "a causal mask on the wrong side")

    def mask_from(self, k):
        """causal attention hiding the keys j >= i + k (k = 1 is right)."""
        def attention(Q, K, V):
            T, S = Q.shape[-2], K.shape[-2]
            E = Q @ K.transpose(-2, -1) / np.sqrt(Q.shape[-1])
            hidden = uwaga.tensor(np.triu(np.ones((T, S)), k=k), dtype=E.dtype)
            return solutions.softmax(uwaga.masked_fill(E, hidden, -np.inf)) @ V
        return attention

    def test_a_mask_one_step_off_is_named(self):
        self.assertTrue(quietly(checks.causal_attention, self.mask_from(1)))
        self.assert_fails(quietly(checks.causal_attention, self.mask_from(0)),
                          "a causal mask one step off, hiding the diagonal", "NaN")
        self.assert_fails(quietly(checks.causal_attention, self.mask_from(2)),
                          "a causal mask one step off, each query also seeing the next key")

    def test_a_causal_mask_without_the_scale_is_named(self):
        def unscaled(Q, K, V):
            return self.mask_from(1)(Q * np.sqrt(Q.shape[-1]), K, V)
        self.assert_fails(quietly(checks.causal_attention, unscaled),
                          "attention without the 1/sqrt(d_k)")

    def test_a_nan_is_located(self):
        def nan_in_row_2(E):
            A = solutions.softmax(E)
            return uwaga.masked_fill(A, uwaga.tensor(np.eye(3, 5, k=1), dtype=A.dtype), np.nan)
        self.assert_fails(quietly(checks.softmax, nan_in_row_2), "NaN or inf",
                          "the first at index (0, 1)")

    def test_layer_norm_backward_without_dgamma(self):
        class NoGamma(solutions.LayerNorm):
            @staticmethod
            def backward(ctx, dy):
                dx, dgamma, dbeta = solutions.LayerNorm.backward(ctx, dy)
                return dx, dgamma * 0, dbeta
        self.assert_fails(quietly(checks.layer_norm_function, NoGamma), "gradient of gamma")

    def test_heads_split_in_the_wrong_order(self):
        def wrong(x, h):
            B, T, D = x.shape
            return x.reshape(B, T, D // h, h).permute(0, 3, 1, 2)
        self.assert_fails(quietly(checks.heads, wrong, solutions.merge_heads), "values differ")

    def test_a_post_ln_block(self):
        def post_ln(z, block):
            z1 = block.norm1(block.attn(z) + z)
            return block.norm2(block.mlp(z1) + z1)
        self.assert_fails(quietly(checks.block, post_ln), "is what a post-LN block",
                          "values differ")

    def test_attention_backward_mistakes_are_named_where_made(self):
        def dK_unscaled(Q, K, V, dY):
            dA, dV, dE, dQ, dK = solutions.attention_backward(Q, K, V, dY)
            return dA, dV, dE, dQ, dK * np.sqrt(Q.shape[-1])
        self.assert_fails(quietly(checks.attention_backward, dK_unscaled),
                          "dK = dL/dK is what dE^T Q without the 1/sqrt(d_k)")

        def no_row_sum(Q, K, V, dY):
            dA, dV, dE, dQ, dK = solutions.attention_backward(Q, K, V, dY)
            A = solutions.softmax(Q @ K.transpose(-2, -1) / np.sqrt(Q.shape[-1]))
            dE = A * dA  # the row-sum term forgotten: dQ and dK, computed from it, are wrong too
            scale = 1 / np.sqrt(Q.shape[-1])
            return dA, dV, dE, dE @ K * scale, dE.transpose(-2, -1) @ Q * scale
        self.assert_fails(quietly(checks.attention_backward, no_row_sum),
                          "dE = dL/dE is what the softmax's backward without its row-sum term")

        def swapped(Q, K, V, dY):
            dA, dV, dE, dQ, dK = solutions.attention_backward(Q, K, V, dY)
            return dA, dV, dE, dQ, dE @ K  # dK of dQ's formula: shape (2, 3, 4), not (2, 5, 4)
        self.assert_fails(quietly(checks.attention_backward, swapped), "dK = dL/dK has shape")

    def test_patches_of_the_wrong_shape(self):
        self.assert_fails(quietly(checks.patch_embedding, lambda im, P: im.reshape(2, -1, P * P)),
                          "shape")

    def test_a_step_without_zero_grad(self):
        def keeps_gradients(model, optimizer, images, labels):
            loss = uwaga.cross_entropy(model(images), labels)
            loss.backward()
            optimizer.step()
            return loss.item()
        self.assert_fails(quietly(checks.train_step, keeps_gradients), "still has a gradient")

    def test_top_k_without_the_temperature(self):
        def no_temperature(logits, k, temperature=1.0):
            return solutions.top_k(logits, k, 1.0)
        self.assert_fails(quietly(checks.sampling, solutions.greedy, no_temperature),
                          "temperature=0.5")

    def test_cross_entropy_backward_without_the_mean(self):
        class Summed(solutions.CrossEntropy):
            @staticmethod
            def backward(ctx, dL):
                d, none = solutions.CrossEntropy.backward(ctx, dL)
                return d * float(len(ctx.t)), none
        self.assert_fails(quietly(checks.cross_entropy_function, Summed), "gradient of logits")

    def test_an_output_computed_outside_autograd(self):
        def numpy_softmax(E):
            e = np.exp(E.numpy() - E.numpy().max(-1, keepdims=True))
            return uwaga.tensor(e / e.sum(-1, keepdims=True))
        self.assert_fails(quietly(checks.softmax, numpy_softmax), "graph")


if __name__ == "__main__":
    unittest.main()
