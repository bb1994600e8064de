"""Bad input at the Python boundary: a clear error naming the argument, never a crash, a hang or a
silently wrong answer (plain unittest; CTest runs them with test_bindings.py as `python_bindings`).

    PYTHONPATH=build/notebooks python3 -m unittest discover -s tests/python -v
"""
import math
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

import numpy as np

if "UWAGA_PYTHON_PATH" in os.environ:
    sys.path.insert(0, os.environ["UWAGA_PYTHON_PATH"])
import uwaga  # noqa: E402

F64 = uwaga.float64


class Truthiness(unittest.TestCase):
    def test_a_one_element_tensor_is_its_number(self):
        self.assertTrue(bool(uwaga.tensor(5.0)))  # was False: len() of a 0-d tensor was 0
        self.assertFalse(bool(uwaga.tensor(0.0)))
        self.assertFalse(bool(uwaga.tensor([0.0])))  # was True: len() was 1
        self.assertTrue(bool(uwaga.tensor([[3]])))
        self.assertEqual(float(uwaga.tensor([2.5])), 2.5)
        self.assertEqual(int(uwaga.tensor(7)), 7)
        self.assertEqual(int(uwaga.tensor(-2.7)), -2)  # as int(-2.7)

    def test_several_elements_are_ambiguous_and_0d_has_no_len(self):
        with self.assertRaisesRegex(ValueError, "ambiguous"):
            bool(uwaga.tensor([1.0, 2.0]))
        with self.assertRaisesRegex(ValueError, "ambiguous"):
            bool(uwaga.zeros([0]))
        with self.assertRaisesRegex(TypeError, "0-d"):
            len(uwaga.tensor(5.0))
        self.assertEqual(len(uwaga.zeros([3, 2])), 3)
        with self.assertRaisesRegex(TypeError, "0-d"):
            list(uwaga.tensor(5.0))  # was [] (iteration stopped at the IndexError of t[0])
        self.assertEqual([r.shape for r in uwaga.zeros([3, 2])], [(2,)] * 3)
        with self.assertRaisesRegex(TypeError, r"float\(\).*shape"):
            float(uwaga.tensor([1.0, 2.0]))
        with self.assertRaisesRegex(TypeError, r"int\(\)"):
            int(uwaga.zeros([2, 2]))
        with self.assertRaises(ValueError):
            int(uwaga.tensor(float("nan")))

    def test_item_of_an_int64_tensor_is_an_exact_int(self):
        big = 2 ** 62 + 1  # a double keeps 53 bits: through float this was 2**62
        got = uwaga.tensor([big]).item()
        self.assertIsInstance(got, int)
        self.assertEqual(got, big)
        self.assertEqual(int(uwaga.tensor(big)), big)
        self.assertIsInstance(uwaga.tensor(1.5).item(), float)


class NumpyOperands(unittest.TestCase):
    def test_numpy_scalars_on_the_left_stay_in_the_graph(self):
        for scalar in (np.float64(2.0), np.float32(2.0), np.int64(2)):
            x = uwaga.tensor([1.0, 3.0], dtype=F64, requires_grad=True)
            y = scalar * x  # NumPy used to compute this itself and return an ndarray
            self.assertIsInstance(y, uwaga.Tensor, type(scalar))
            y.sum().backward()
            np.testing.assert_array_equal(x.grad.numpy(), [2.0, 2.0])
        x = uwaga.tensor([1.0, 4.0], dtype=F64, requires_grad=True)
        for got, want in [(np.float64(1.0) + x, [2.0, 5.0]), (np.float32(1.0) - x, [0.0, -3.0]),
                          (np.float64(4.0) / x, [4.0, 1.0]), (x * np.float32(3.0), [3.0, 12.0])]:
            self.assertIsInstance(got, uwaga.Tensor)
            self.assertIsNotNone(got.grad_fn)
            np.testing.assert_array_equal(got.numpy(), want)

    def test_numpy_arrays_are_refused_on_either_side(self):
        x = uwaga.tensor([1.0, 2.0], requires_grad=True)
        m = uwaga.ones([2, 2])
        for compute in (lambda: x + np.ones(2), lambda: np.ones(2) + x, lambda: np.ones(2) * x,
                        lambda: x - np.ones(1), lambda: np.ones(2) / x,
                        lambda: m @ np.ones((2, 2)), lambda: np.ones((2, 2)) @ m):
            with self.assertRaisesRegex(TypeError, r"uwaga\.tensor\(array\)"):
                compute()
        with self.assertRaises(TypeError):  # a ufunc on a tensor would leave the graph silently
            np.exp(x)
        np.testing.assert_array_equal(np.asarray(x), [1.0, 2.0])  # conversion still works


class TensorConversion(unittest.TestCase):
    def test_values_int64_cannot_hold_are_refused(self):
        for data, dtype in [([2 ** 63], None), (np.array([2 ** 64 - 1], np.uint64), None),
                            ([float("nan")], uwaga.int64), ([1e19], uwaga.int64),
                            ([float("inf")], uwaga.int64), (np.array([-1e19]), uwaga.int64)]:
            with self.assertRaisesRegex(ValueError, "does not fit in int64"):
                uwaga.tensor(data, dtype=dtype)
        self.assertEqual(uwaga.tensor([2 ** 63 - 1]).item(), 2 ** 63 - 1)
        self.assertEqual(uwaga.tensor(np.array([7], np.uint64)).item(), 7)
        self.assertEqual(uwaga.tensor([-2.7], dtype=uwaga.int64).item(), -2)  # truncated
        self.assertEqual(uwaga.tensor([True, False]).dtype, uwaga.float32)

    def test_non_numbers_are_a_type_error_naming_the_kind(self):
        with self.assertRaisesRegex(TypeError, "None"):
            uwaga.tensor(None)  # was a NaN scalar
        for data, source, kind in [(["a"], "list", "U"), ({"a": 1}, "dict", "O"),
                                   ([1, None], "list", "O"), ([2 ** 64], "list", "O"),
                                   (np.array([1 + 2j]), "ndarray", "c"), (b"x", "bytes", "S"),
                                   (np.datetime64("2020-01-01"), "datetime64", "M"),
                                   (np.array([1], "timedelta64[s]"), "ndarray", "m")]:
            # ['a'] and {'a': 1} were "Internal error: error_already_set called while Python
            # error indicator not set"; complex lost its imaginary part, dates became floats.
            with self.assertRaisesRegex(TypeError, f"convert {source} to float32: .*kind '{kind}'"):
                uwaga.tensor(data)
        with self.assertRaisesRegex(TypeError, "convert list to int64"):
            uwaga.tensor(["1"], dtype=uwaga.int64)

    def test_from_numpy_copies(self):
        a = np.zeros(3)
        t = uwaga.from_numpy(a)
        a[0] = 5.0
        self.assertEqual(t.numpy()[0], 0.0)  # unlike torch.from_numpy
        self.assertIn("COPY", uwaga.from_numpy.__doc__)
        self.assertIn("autograd", uwaga.Tensor.numpy.__doc__)
        self.assertIn("writable", uwaga.data.ImageDataset.images.__doc__)


class Dims(unittest.TestCase):
    def test_any_integer_like_is_a_dim(self):
        x = uwaga.tensor(np.arange(6.0).reshape(2, 3))
        np.testing.assert_array_equal(x.sum(np.int64(0)).numpy(), [3.0, 5.0, 7.0])
        np.testing.assert_array_equal(x.mean([np.int32(1)]).numpy(), [1.0, 4.0])
        self.assertEqual(x.reshape(np.int64(3), 2).shape, (3, 2))
        self.assertEqual(x.permute((np.int64(1), 0)).shape, (3, 2))
        np.testing.assert_array_equal(x[np.int64(1)].numpy(), [3.0, 4.0, 5.0])

    def test_floats_are_not_dims(self):
        x = uwaga.zeros([2, 3])
        with self.assertRaisesRegex(TypeError, "reshape: sizes must be integers, got float 2.0"):
            x.reshape(2.0, 3)
        with self.assertRaisesRegex(TypeError, "view"):
            x.view((6.0,))
        with self.assertRaisesRegex(TypeError, "sum: dims"):
            x.sum(0.0)
        with self.assertRaisesRegex(TypeError, "sum: dims"):
            x.sum("0")

    def test_cast_errors_name_the_types(self):
        x = uwaga.tensor([1.0], dtype=F64, requires_grad=True)
        # Was "Unable to cast Python instance to C++ type", then a cast error naming C++ types
        with self.assertRaisesRegex(TypeError, "gradcheck: f must return a uwaga.Tensor, got int"):
            uwaga.gradcheck(lambda t: 5, [x])


class NoGrad(unittest.TestCase):
    def test_one_object_entered_twice(self):
        ng = uwaga.no_grad()
        with ng:
            with ng:  # the inner exit used to drop the only guard, the outer one found none
                self.assertFalse(uwaga.grad_enabled())
            self.assertFalse(uwaga.grad_enabled())
        self.assertTrue(uwaga.grad_enabled())  # was left off for good


class UndefinedTensors(unittest.TestCase):
    def setUp(self):
        self.gen = uwaga.Generator(0)

    def test_an_absent_bias_is_none(self):
        layer = uwaga.nn.Linear(3, 2, self.gen, bias=False)
        self.assertIsNone(layer.bias)  # was tensor(undefined)
        self.assertEqual(uwaga.nn.Linear(3, 2, self.gen).bias.shape, (2,))
        x = uwaga.ones([1, 3])
        y = uwaga.linear(x, layer.weight)
        for i in y.grad_fn.inputs:  # None or a usable tensor, never an undefined one
            self.assertTrue(i is None or i.numel() > 0)

    def test_attention_weights_before_they_exist(self):
        mha = uwaga.nn.MultiHeadAttention(8, 2, self.gen)
        with self.assertRaisesRegex(uwaga.Error, r"keep_attention\(True\) and run a forward"):
            mha.attention
        vit = uwaga.nn.VisionTransformer(
            uwaga.nn.VitConfig(image_size=8, patch=4, dim=16, depth=1, heads=2, mlp_dim=32),
            self.gen)
        vit.keep_attention()
        with self.assertRaisesRegex(uwaga.Error, r"keep_attention\(True\) and run a forward"):
            vit.attention_maps()
        vit(uwaga.randn([1, 1, 8, 8], self.gen))
        self.assertEqual(len(vit.attention_maps()), 1)


class PythonTrainingPieces(unittest.TestCase):
    """Data, a loss and an evaluation written in Python: what each returns is checked and named."""

    @staticmethod
    def fit(data=None, loss=None, evaluate=None):
        gen = uwaga.Generator(0)
        net = uwaga.nn.Linear(2, 1, gen)
        x = uwaga.randn([8, 2], gen)
        data_methods = {
            "batches_per_epoch": lambda self: 2,
            "begin_epoch": lambda self, epoch: None,
            "batch": lambda self, i: uwaga.data.Batch([x], uwaga.zeros([8, 1])),
        }
        data_methods.update(data or {})
        loss_methods = {
            "__call__": lambda self, out, t: ((out - t) ** 2).mean(),
            "count": lambda self, t: 8,
        }
        loss_methods.update(loss or {})
        Data = type("Data", (uwaga.data.BatchSource,),
                    {k: v for k, v in data_methods.items() if v is not None})
        Loss = type("Loss", (uwaga.nn.Loss,), {k: v for k, v in loss_methods.items() if v is not None})
        opt = uwaga.optim.SGD(uwaga.optim.make_param_groups(net, 0.0), lr=0.01)
        options = uwaga.optim.TrainerOptions(epochs=1, quiet=True, threads=1)
        trainer = uwaga.optim.Trainer(net, Data(), Loss(), opt, uwaga.optim.ConstantLr(0.01), options)
        return trainer.fit(evaluate=evaluate or (lambda: {"loss": 1.0}))

    def test_well_behaved_pieces_train(self):
        summary = self.fit(evaluate=lambda: {"loss": np.float32(0.5), "n": 3})
        self.assertEqual(summary.steps, 2)
        self.assertEqual(summary.last_eval, {"loss": 0.5, "n": 3.0})

    def test_wrong_return_types_name_the_method(self):
        cases = [
            ({"data": {"batches_per_epoch": lambda self: 2.0}},
             r"batches_per_epoch\(\) must return an int, got float"),
            ({"data": {"batch": lambda self, i: None}},
             r"batch\(\) must return a uwaga\.data\.Batch.*got NoneType"),
            ({"loss": {"__call__": lambda self, out, t: 1.0}},
             r"Loss\.__call__\(\) must return a uwaga\.Tensor, got float"),
            ({"loss": {"count": lambda self, t: "8"}}, r"Loss\.count\(\) must return an int, got str"),
            ({"evaluate": lambda: {"acc": "high"}}, r"evaluate\(\) must return .*'acc'.*is str"),
            ({"evaluate": lambda: [1.0]}, r"evaluate\(\) must return a dict.*got list"),
            ({"evaluate": lambda: {1: 1.0}}, r"evaluate\(\).*the key 1 is int"),
        ]
        for override, message in cases:
            with self.assertRaisesRegex(TypeError, message):
                self.fit(**override)
        with self.assertRaisesRegex(NotImplementedError, r"must define batch\(\)"):
            self.fit(data={"batch": None})
        with self.assertRaisesRegex(NotImplementedError, r"must define count\(\)"):
            self.fit(loss={"count": None})

    def test_a_model_given_the_wrong_number_of_inputs_is_named(self):
        with self.assertRaisesRegex(uwaga.Error, r"Linear::forward_batch takes 1 input .*got 2"):
            self.fit(data={"batch": lambda self, i: uwaga.data.Batch([uwaga.zeros([8, 2])] * 2,
                                                                     uwaga.zeros([8, 1]))})


class Apps(unittest.TestCase):
    def test_train_vit_checks_the_run_first(self):
        empty = uwaga.data.ImageDataset()  # never reached: the run is checked before the data
        for field, value, message in [("epochs", 0, "--epochs must be from 1"),
                                      ("epochs", -1, "--epochs must be from 1"),
                                      ("train_size", -5, r"--train-size must be >= 0")]:
            run = uwaga.apps.vit_preset("mnist-tiny")
            setattr(run, field, value)
            with self.assertRaisesRegex(uwaga.Error, message):  # was a WarmupCosineLr error / "all"
                uwaga.apps.train_vit(run, empty, empty)
        run = uwaga.apps.vit_preset("mnist-tiny")
        with self.assertRaisesRegex(uwaga.Error, "training set has images of 0x0x0"):
            uwaga.apps.train_vit(run, empty, empty)

    def test_translating_with_a_run_without_vocabularies(self):
        config = uwaga.apps.translate_preset("tiny").model
        config.src_vocab, config.tgt_vocab = 50, 60
        model = uwaga.nn.Seq2SeqTransformer(config, uwaga.Generator(0))
        preset = uwaga.apps.translate_preset("tiny")  # as returned: no vocabularies yet
        message = "this run has no vocabularies; pass the Translator that train_translator"
        with self.assertRaisesRegex(uwaga.Error, message):  # was "id 83 out of range"
            uwaga.apps.translate(model, preset, "we are eating bread")
        with self.assertRaisesRegex(uwaga.Error, "cross_attention: .*" + message):
            uwaga.apps.cross_attention(model, preset, "we are eating bread")
        pairs = [uwaga.data.TranslationPair("we eat", "comemos")]
        with self.assertRaisesRegex(uwaga.Error, "evaluate_translation: .*" + message):
            uwaga.apps.evaluate_translation(model, pairs, preset)



class CharacterGpt(unittest.TestCase):
    def setUp(self):
        self.vocab = uwaga.data.CharVocabulary.build("abc ")
        config = uwaga.nn.GptConfig(vocab=4, context=8, dim=8, layers=1, heads=2, mlp_dim=16)
        self.gpt = uwaga.nn.Gpt(config, uwaga.Generator(0))

    def test_text_and_ids_that_do_not_fit(self):
        with self.assertRaisesRegex(uwaga.Error, "not in the vocabulary"):
            self.vocab.encode("abd")
        with self.assertRaisesRegex(uwaga.Error, "id 7 is outside the vocabulary of 4"):
            self.vocab.decode([0, 7])
        with self.assertRaisesRegex(TypeError, r"CharVocabulary.decode: .*integer token ids"):
            self.vocab.decode([0.5, 1.0])  # not silently truncated to [0, 1]
        with self.assertRaisesRegex(TypeError, r"CharWindows\(ids\): .*2-D"):
            uwaga.data.CharWindows([[0, 1], [2, 3]], 2, 1, 1)
        with self.assertRaisesRegex(uwaga.Error, "hold no window of 9"):
            uwaga.data.CharWindows([0, 1, 2], batch_size=2, context=8, batches_per_epoch=1)
        with self.assertRaisesRegex(uwaga.Error, "context must be positive"):
            uwaga.data.consecutive_window_count([0, 1, 2], 0)  # was a division by zero
        with self.assertRaisesRegex(uwaga.Error, "fewer than one window of --context 16"):
            uwaga.data.split_char_corpus("abcabc", context=16)
        with self.assertRaisesRegex(uwaga.Error, "the text file '/nonexistent/input.txt': cannot "
                                                 "open: No such file"):
            uwaga.data.load_char_corpus("/nonexistent/input.txt", 8)

    def test_models_and_generation_refuse_what_cannot_work(self):
        with self.assertRaisesRegex(uwaga.Error, "dim 10 is not divisible by heads 3"):
            uwaga.nn.Gpt(uwaga.nn.GptConfig(vocab=4, dim=10, heads=3), uwaga.Generator(0))
        with self.assertRaisesRegex(uwaga.Error, "token id 4 is outside the vocabulary of 4"):
            self.gpt(uwaga.tensor([[0, 4]]))
        with self.assertRaisesRegex(uwaga.Error, "9 tokens do not fit the context of 8"):
            self.gpt(uwaga.zeros([1, 9], uwaga.int64))
        with self.assertRaisesRegex(uwaga.Error, "Gpt.attention_maps: .*keep_attention"):
            self.gpt.attention_maps()
        with self.assertRaisesRegex(uwaga.Error, "the prompt is empty"):
            uwaga.nn.TokenStream(self.gpt, [])
        with self.assertRaisesRegex(uwaga.Error, "--top-p must be in"):
            uwaga.nn.TokenStream(self.gpt, [0], uwaga.nn.SamplingOptions(top_p=0))
        with self.assertRaisesRegex(uwaga.Error, "--top-k must be from 1 to the vocabulary's 4"):
            uwaga.nn.TokenStream(self.gpt, [0], uwaga.nn.SamplingOptions(top_k=5))
        with self.assertRaisesRegex(uwaga.Error, "token id 9 is outside"):
            uwaga.nn.TokenStream(self.gpt, [9]).next()
        with self.assertRaisesRegex(uwaga.Error, "count must be >= 0"):
            uwaga.nn.TokenStream(self.gpt, [0]).take(-1)
        with self.assertRaisesRegex(uwaga.Error, "sample_token: no logits"):
            uwaga.nn.sample_token([], uwaga.nn.SamplingOptions(), uwaga.Generator(0))
        with self.assertRaisesRegex(uwaga.Error, r"logits\[1\] is nan"):
            uwaga.nn.sample_token([0.0, math.nan], uwaga.nn.SamplingOptions(), uwaga.Generator(0))
        with self.assertRaisesRegex(uwaga.Error, "windows must be >= 0"):
            uwaga.apps.evaluate_language_model(self.gpt, [0, 1, 2], -1)
        with self.assertRaisesRegex(uwaga.Error, "unknown preset 'huge'"):
            uwaga.apps.gpt_preset("huge")


if __name__ == "__main__":
    unittest.main()


class SilentNoOps(unittest.TestCase):
    def test_an_optimizer_refuses_a_tensor_that_is_not_a_leaf(self):
        w = uwaga.tensor(np.ones(3)).requires_grad_()
        computed = w * 2.0  # backward() gives it no .grad: Adam would never move it
        for make in (uwaga.optim.Adam, uwaga.optim.SGD, uwaga.optim.AdamW):
            with self.assertRaisesRegex(RuntimeError, "'w2' is not a leaf tensor .*'mul_scalar'"):
                make([uwaga.optim.ParamGroup(["w2"], [computed])])
        uwaga.optim.Adam([uwaga.optim.ParamGroup(["w"], [w])])  # the leaf itself is fine

    def test_a_negative_clip_norm_is_refused(self):
        w = uwaga.tensor(np.ones(3) * 10).requires_grad_()
        uwaga.sum(w * w).backward()
        for bad in (-1.0, float("nan")):
            with self.assertRaisesRegex(RuntimeError, "max_norm must be >= 0"):
                uwaga.optim.clip_grad_norm([w], bad)
        self.assertAlmostEqual(uwaga.optim.clip_grad_norm([w], 0.0), math.sqrt(3) * 20)
        np.testing.assert_allclose(w.grad.numpy(), 20.0)  # 0: measured, not clipped

    def test_gradcheck_names_a_wrong_return_type(self):
        x = uwaga.tensor(np.ones(3)).requires_grad_()
        for f, kind in ((lambda t: 3.0, "float"), (lambda t: [t], "list"), (lambda t: None, "None")):
            with self.assertRaisesRegex(TypeError, "gradcheck: f must return a uwaga.Tensor, got "
                                        + kind):
                uwaga.gradcheck(f, [x])


class LongGraphs(unittest.TestCase):
    def test_a_million_op_graph_is_freed_without_a_crash(self):
        # Freed unused, kept after backward(retain_graph=True), and alive at interpreter exit:
        # each used to free its nodes recursively and overflow the stack (SIGSEGV).
        code = textwrap.dedent("""
            import uwaga
            x = uwaga.tensor(0.0).requires_grad_()
            def chain(n=1_000_000):
                y = x
                for _ in range(n):
                    y = y + 1.0
                return y
            y = chain(); del y
            y = chain(); y.backward(retain_graph=True); del y
            assert x.grad.item() == 1.0
            kept = chain()  # still alive when the interpreter exits
            print("ok")
        """)
        package = os.path.dirname(os.path.abspath(uwaga.__file__))  # .../uwaga/__init__.py
        env = dict(os.environ, PYTHONPATH=os.path.dirname(package))
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           env=env, timeout=300)
        self.assertEqual((r.returncode, r.stdout.strip()), (0, "ok"), r.stderr[-2000:])
