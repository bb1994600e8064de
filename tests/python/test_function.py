"""uwaga.Function: an op written in Python, a forward and a hand-written backward that the engine
calls like any C++ op's backward rule (notebooks/bindings/function.py)."""
import os
import sys
import unittest

if "UWAGA_PYTHON_PATH" in os.environ:
    sys.path.insert(0, os.environ["UWAGA_PYTHON_PATH"])
import numpy as np  # noqa: E402

import uwaga  # noqa: E402

F64 = uwaga.float64


class Cube(uwaga.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x * x

    @staticmethod
    def backward(ctx, dy):
        (x,) = ctx.saved_tensors
        return dy * 3 * x * x


class Scale(uwaga.Function):
    """y = s * x with a number s among the arguments: one gradient per tensor argument."""
    @staticmethod
    def forward(ctx, x, s):
        ctx.s = s
        return x * s

    @staticmethod
    def backward(ctx, dy):
        return dy * ctx.s


class BilinearRow(uwaga.Function):
    """y = a * b with b (n,) broadcast over a (m, n): backward may return b's gradient broadcast."""
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a * b

    @staticmethod
    def backward(ctx, dy):
        a, b = ctx.saved_tensors
        return dy * b, dy * a  # (m, n) for b: the engine sums it back to (n,)


def leaf(values):
    t = uwaga.tensor(np.asarray(values, dtype=np.float64), dtype=F64)
    t.requires_grad = True
    return t


class FunctionTest(unittest.TestCase):
    def test_backward_reaches_the_inputs_through_the_engine(self):
        x = leaf([[1.0, 2.0], [-3.0, 0.5]])
        y = Cube.apply(x)
        self.assertEqual(y.grad_fn.op, "Cube")
        (y * 2).sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), 6 * x.numpy() ** 2)

    def test_gradcheck_passes_a_right_backward_and_fails_a_wrong_one(self):
        self.assertTrue(uwaga.gradcheck(Cube.apply, [leaf([0.3, -1.2, 2.0])]))

        class WrongCube(Cube):
            @staticmethod
            def backward(ctx, dy):
                (x,) = ctx.saved_tensors
                return dy * 2 * x * x
        r = uwaga.gradcheck(WrongCube.apply, [leaf([0.3, -1.2, 2.0])])
        self.assertFalse(r)
        self.assertIn("gradients differ", r.message)

    def test_non_tensor_arguments_and_broadcast_gradients(self):
        x = leaf([1.0, 2.0])
        self.assertTrue(uwaga.gradcheck(lambda t: Scale.apply(t, 3.0), [x]))
        a, b = leaf(np.arange(6.0).reshape(2, 3)), leaf([1.0, -2.0, 0.5])
        self.assertTrue(uwaga.gradcheck(BilinearRow.apply, [a, b]))

    def test_forward_records_no_graph_and_an_input_without_grad_gets_none(self):
        x = leaf([1.0, 2.0])
        c = uwaga.tensor(np.array([4.0, 5.0]), dtype=F64)
        y = BilinearRow.apply(x, c)
        self.assertEqual(len(y.grad_fn.inputs), 2)
        y.sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), [4.0, 5.0])
        self.assertIsNone(c.grad)
        # Inputs that need no gradient: no node at all.
        self.assertIsNone(Cube.apply(c).grad_fn)

    def test_returning_an_input_leaves_the_input_alone(self):
        class Identity(uwaga.Function):
            @staticmethod
            def forward(ctx, x):
                return x

            @staticmethod
            def backward(ctx, dy):
                return dy
        x = leaf([1.0, 2.0])
        y = Identity.apply(x)
        self.assertTrue(x.is_leaf)
        y.sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), [1.0, 1.0])

    def test_mistakes_get_clear_errors(self):
        class TwoGrads(Cube):
            @staticmethod
            def backward(ctx, dy):
                return dy, dy
        with self.assertRaisesRegex(Exception, "TwoGrads.backward returned 2 gradients for 1"):
            TwoGrads.apply(leaf([1.0])).sum().backward()

        class Raises(Cube):
            @staticmethod
            def backward(ctx, dy):
                raise ValueError("my backward is broken")
        with self.assertRaisesRegex(ValueError, "my backward is broken"):
            Raises.apply(leaf([1.0])).sum().backward()

        class NotATensor(Cube):
            @staticmethod
            def forward(ctx, x):
                return 3.0
        with self.assertRaisesRegex(TypeError, "must return a uwaga.Tensor"):
            NotATensor.apply(leaf([1.0]))

        class Float32Grad(Cube):
            @staticmethod
            def backward(ctx, dy):
                return dy.to(uwaga.float32)
        with self.assertRaisesRegex(TypeError, "float32"):
            Float32Grad.apply(leaf([1.0])).sum().backward()

    def test_a_wrongly_shaped_gradient_names_the_op_and_the_input(self):
        class Misshapen(uwaga.Function):
            @staticmethod
            def forward(ctx, a, b):
                return a * b

            @staticmethod
            def backward(ctx, dy):
                return dy, uwaga.tensor(np.ones(4), dtype=dy.dtype)  # b's is one too long
        a, b = leaf([1.0, 2.0, 3.0]), leaf([4.0, 5.0, 6.0])
        with self.assertRaisesRegex(Exception, r"op 'Misshapen' returned a gradient of shape "
                                               r"\(4,\) for its input 1 of shape \(3,\)"):
            Misshapen.apply(a, b).sum().backward()
        # gradcheck reports it as a failed check, as it does a wrong value, without raising.
        r = uwaga.gradcheck(Misshapen.apply, [leaf([1.0, 2.0, 3.0]), leaf([4.0, 5.0, 6.0])])
        self.assertFalse(r)
        self.assertIn("the backward pass failed", r.message)
        self.assertIn("Misshapen", r.message)

    def test_gradcheck_reports_a_backward_that_raises(self):
        class Raises(Cube):
            @staticmethod
            def backward(ctx, dy):
                raise ValueError("my backward is broken")
        r = uwaga.gradcheck(Raises.apply, [leaf([1.0, 2.0])])
        self.assertFalse(r)
        self.assertIn("my backward is broken", r.message)

    def test_a_saved_tensor_changed_in_place_is_caught(self):
        x = leaf([1.0, 2.0])
        y = Cube.apply(x)
        with uwaga.no_grad():
            x.fill_(5.0)
        with self.assertRaisesRegex(Exception, "Cube"):
            y.sum().backward()

    def test_the_node_is_drawn_by_its_name(self):
        self.assertIn("Cube", uwaga.to_dot(Cube.apply(leaf([1.0, 2.0])).sum()))


if __name__ == "__main__":
    unittest.main()
