"""Tests of uwaga's Python bindings (plain unittest; CTest runs them as `python_bindings`).

    PYTHONPATH=build/notebooks python3 -m unittest discover -s tests/python -v

The bindings hold no math, so these tests check the plumbing: NumPy in and out (and that
Tensor.numpy() is a view), autograd through Python, every module and entry point reachable and
agreeing with the formulas written here in NumPy. Tests that need MNIST skip when it is missing.
"""
import json
import os
import sys
import tempfile
import unittest

import numpy as np

if "UWAGA_PYTHON_PATH" in os.environ:
    sys.path.insert(0, os.environ["UWAGA_PYTHON_PATH"])
import uwaga  # noqa: E402

F64 = uwaga.float64


def np_softmax(e):
    e = e - e.max(axis=-1, keepdims=True)
    return np.exp(e) / np.exp(e).sum(axis=-1, keepdims=True)


def mnist_available():
    return os.path.exists(os.path.join(uwaga.data.default_data_dir("mnist"),
                                       "t10k-labels-idx1-ubyte"))


class TensorAndNumpy(unittest.TestCase):
    def test_round_trip_keeps_values_shape_and_dtype(self):
        a = np.arange(24, dtype=np.float64).reshape(2, 3, 4)
        t = uwaga.tensor(a)
        self.assertEqual(t.shape, (2, 3, 4))
        self.assertEqual(t.dtype, uwaga.float64)
        np.testing.assert_array_equal(t.numpy(), a)
        self.assertEqual(uwaga.tensor(np.ones(3, np.float32)).dtype, uwaga.float32)
        self.assertEqual(uwaga.tensor([1, 2, 3]).dtype, uwaga.int64)
        self.assertEqual(uwaga.tensor([1, 2], dtype=uwaga.float32).dtype, uwaga.float32)
        self.assertEqual(uwaga.tensor(2.5).shape, ())

    def test_numpy_is_a_view_of_the_storage(self):
        t = uwaga.zeros([2, 2], F64)
        view = t.numpy()
        view[0, 1] = 7.0
        self.assertEqual(t.numpy()[0, 1], 7.0)  # written through the view
        r = t.reshape(4)  # reshape shares storage in uwaga, so its view sees it too
        self.assertEqual(np.asarray(r)[1], 7.0)
        del t, r
        self.assertEqual(view[0, 1], 7.0)  # the view keeps the storage alive

    def test_from_numpy_copies_non_contiguous_input(self):
        a = np.arange(6.0).reshape(2, 3).T
        np.testing.assert_array_equal(uwaga.tensor(a).numpy(), a)

    def test_arithmetic_matches_numpy(self):
        rng = np.random.default_rng(0)
        a, b = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
        ta, tb = uwaga.tensor(a), uwaga.tensor(b)
        for got, want in [(ta + tb, a + b), (ta - tb, a - b), (ta * tb, a * b),
                          (ta / (tb * tb + 1.0), a / (b * b + 1)), (2.0 - ta, 2 - a),
                          (1.0 / (ta * ta + 1.0), 1 / (a * a + 1)), (-ta, -a), (ta ** 2, a ** 2),
                          (ta @ tb.T, a @ b.T), (ta.sum(1), a.sum(1)), (ta.mean(), a.mean()),
                          (ta.softmax(-1), np_softmax(a)), (ta[1], a[1]), (ta[:, 1:3], a[:, 1:3]),
                          (ta[-1, ::2], a[-1, ::2]), (ta.exp(), np.exp(a))]:
            np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, atol=1e-12)

    def test_bfloat16_is_stored_and_converted_not_viewed(self):
        t = uwaga.tensor([1.0, 0.1, -3.0]).to(uwaga.bfloat16)
        self.assertEqual(t.dtype, uwaga.bfloat16)
        np.testing.assert_array_equal(t.to(uwaga.float32).numpy(),
                                      np.array([1.0, 0.10009765625, -3.0], np.float32))
        self.assertEqual(uwaga.tensor([0.5], dtype=uwaga.bfloat16).dtype, uwaga.bfloat16)
        with self.assertRaisesRegex(TypeError, "NumPy has no bfloat16"):
            t.numpy()
        with self.assertRaisesRegex(uwaga.Error, "bfloat16 only stores values"):
            t + t

    def test_iteration_and_errors(self):
        t = uwaga.tensor(np.arange(6.0).reshape(3, 2))
        self.assertEqual(len(list(t)), 3)
        with self.assertRaises(IndexError):
            t[3]
        with self.assertRaisesRegex(uwaga.Error, "inner dimensions"):
            uwaga.matmul(uwaga.zeros([2, 3]), uwaga.zeros([2, 3]))


class Autograd(unittest.TestCase):
    def test_backward_fills_leaf_gradients(self):
        x = uwaga.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=F64, requires_grad=True, name="x")
        w = uwaga.tensor([[0.5], [-1.0]], dtype=F64, requires_grad=True)
        self.assertIsNone(x.grad)
        loss = ((x @ w) ** 2).sum()
        self.assertEqual(loss.grad_fn.op, "sum")
        loss.backward()
        y = x.numpy() @ w.numpy()
        np.testing.assert_allclose(w.grad.numpy(), x.numpy().T @ (2 * y))
        np.testing.assert_allclose(x.grad.numpy(), (2 * y) @ w.numpy().T)
        self.assertTrue(x.is_leaf)
        x.grad = None
        self.assertIsNone(x.grad)

    def test_no_grad_records_nothing(self):
        x = uwaga.tensor([1.0, 2.0], requires_grad=True)
        with uwaga.no_grad():
            self.assertFalse(uwaga.grad_enabled())
            y = x * 2.0
        self.assertTrue(uwaga.grad_enabled())
        self.assertFalse(y.requires_grad)
        self.assertIsNone(y.grad_fn)

    def test_graph_nodes_and_their_backward_rules(self):
        a = uwaga.tensor([2.0, 3.0], dtype=F64, requires_grad=True)
        b = uwaga.tensor([5.0, 7.0], dtype=F64, requires_grad=True)
        c = a * b
        out = c.sum()
        ops = [n.op for n in uwaga.topological_order(out)]
        self.assertEqual(ops, ["mul", "sum"])
        da, db = c.grad_fn.backward(uwaga.ones([2], F64))  # d(ab)/da = b, d(ab)/db = a
        np.testing.assert_array_equal(da.numpy(), b.numpy())
        np.testing.assert_array_equal(db.numpy(), a.numpy())
        self.assertIs(type(c.grad_fn.inputs[0]), uwaga.Tensor)
        out.backward()
        self.assertTrue(c.grad_fn.freed)
        with self.assertRaisesRegex(uwaga.Error, "freed"):
            c.grad_fn.backward(uwaga.ones([2], F64))

    def test_dot_drawing_names_ops_and_leaves(self):
        w = uwaga.tensor([1.0, 2.0], requires_grad=True, name="w")
        dot = uwaga.to_dot((w * w).sum())
        self.assertIn("digraph", dot)
        self.assertIn("mul", dot)
        self.assertIn("w (2,)", dot)

    def test_gradcheck_in_float64(self):
        rng = np.random.default_rng(1)
        q, k, v = (uwaga.tensor(rng.standard_normal((2, 4, 3)), requires_grad=True)
                   for _ in range(3))
        result = uwaga.gradcheck(uwaga.nn.scaled_dot_product_attention, [q, k, v])
        self.assertTrue(result.ok, result.message)
        self.assertGreater(result.checked, 0)
        with self.assertRaisesRegex(uwaga.Error, "float64"):
            uwaga.gradcheck(lambda x: x.sum(), [uwaga.ones([2]).requires_grad_()])


class Modules(unittest.TestCase):
    def setUp(self):
        self.gen = uwaga.Generator(0)

    def test_a_module_prints_its_tree_with_parameter_shapes(self):
        sa = uwaga.nn.SelfAttention(6, 4, 5, self.gen)
        self.assertNotIn("object at 0x", repr(sa))
        self.assertTrue(repr(sa).startswith("SelfAttention("), repr(sa))
        self.assertIn("w_q (6, 4)", repr(sa))
        config = uwaga.apps.translate_preset("tiny").model
        config.src_vocab, config.tgt_vocab = 50, 60
        tree = repr(uwaga.nn.Seq2SeqTransformer(config, uwaga.Generator(0)))
        self.assertIn("\n  (", tree)  # submodules, one a line, indented
        self.assertIn("Linear(weight", tree)
        self.assertIn("\n  (encoder.0): TransformerEncoderBlock(\n", tree)  # blocks, with their insides
        self.assertIn("\n      (qkv): Linear(weight (", tree)

    def test_self_attention_is_the_notes_formula(self):
        sa = uwaga.nn.SelfAttention(6, 4, 5, self.gen)
        sa.to(F64)
        X = uwaga.randn([4, 6], self.gen, F64)
        Y, A = sa(X, return_weights=True)
        x, wq, wk, wv = (t.numpy() for t in (X, sa.W_Q, sa.W_K, sa.W_V))
        Q, K, V = x @ wq, x @ wk, x @ wv
        A_np = np_softmax(Q @ K.T / np.sqrt(4))
        np.testing.assert_allclose(A.numpy(), A_np, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(Y.numpy(), A_np @ V, rtol=1e-12, atol=1e-14)
        self.assertEqual([n for n, _ in sa.named_parameters()], ["w_q", "w_k", "w_v"])

    def test_fused_and_composed_attention_agree(self):
        rng = np.random.default_rng(2)
        data = [rng.standard_normal((1, 2, 5, 4)) for _ in range(3)]  # Q, K, V (B, h, T, d_k)

        def gradients(attention):
            q, k, v = (uwaga.tensor(a, requires_grad=True) for a in data)
            y = attention(q, k, v, causal=True)
            (y * y).sum().backward()
            return [t.grad.numpy() for t in (q, k, v)]

        fused = gradients(uwaga.nn.scaled_dot_product_attention)
        composed = gradients(uwaga.nn.scaled_dot_product_attention_composed)
        for a, b in zip(fused, composed):
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)

    def test_layer_norm_and_multi_head_attention(self):
        ln = uwaga.nn.LayerNorm(8)
        x = uwaga.randn([2, 3, 8], self.gen)
        y = ln(x).numpy()
        xn = x.numpy()
        want = (xn - xn.mean(-1, keepdims=True)) / np.sqrt(xn.var(-1, keepdims=True) + 1e-5)
        np.testing.assert_allclose(y, want, rtol=1e-4, atol=1e-5)
        mha = uwaga.nn.MultiHeadAttention(8, 2, self.gen)
        mha.keep_attention()
        self.assertEqual(mha(x).shape, (2, 3, 8))
        self.assertEqual(mha.attention.shape, (2, 2, 3, 3))
        self.assertEqual(mha.head_dim, 4)
        self.assertIsNone(mha.q)
        block = uwaga.nn.TransformerEncoderBlock(8, 2, 16, self.gen)
        self.assertEqual(block(x).shape, (2, 3, 8))
        self.assertIn("attn.qkv.weight", block.state_dict())

    def test_vision_transformer_and_rollout(self):
        cfg = uwaga.nn.VitConfig(image_size=8, patch=4, dim=16, depth=2, heads=2, mlp_dim=32)
        vit = uwaga.nn.VisionTransformer(cfg, self.gen)
        vit.keep_attention()
        images = uwaga.randn([3, 1, 8, 8], self.gen)
        self.assertEqual(vit(images).shape, (3, 10))
        maps = vit.attention_maps()
        self.assertEqual(len(maps), 2)
        self.assertEqual(maps[0].shape, (3, 2, 5, 5))
        self.assertEqual(uwaga.nn.class_token_attention(maps[-1]).shape, (3, 4))
        rollout = uwaga.nn.attention_rollout(maps).numpy()
        np.testing.assert_allclose(rollout.sum(-1), 1.0, rtol=1e-5)
        self.assertEqual(uwaga.nn.patchify(images, 4).shape, (3, 4, 16))

    def test_cct_stem_and_sequence_pooling(self):
        cfg = uwaga.nn.VitConfig(image_size=8, patch=4, dim=16, depth=2, heads=2, mlp_dim=32,
                                 stem="cct", pool="seq")
        self.assertEqual(cfg.tokens(), 4)  # no class token
        vit = uwaga.nn.VisionTransformer(cfg, self.gen)
        self.assertIsNone(vit.cls_token)
        self.assertIn("attention_pool.weight", vit.state_dict())
        images = uwaga.randn([3, 1, 8, 8], self.gen)
        with self.assertRaisesRegex(Exception, "pooling_weights: none kept"):
            vit.pooling_weights()
        vit.keep_attention()
        self.assertEqual(vit(images).shape, (3, 10))
        self.assertEqual(vit.attention_maps()[0].shape, (3, 2, 4, 4))
        a = vit.pooling_weights().numpy()
        self.assertEqual(a.shape, (3, 4))
        np.testing.assert_allclose(a.sum(-1), 1.0, rtol=1e-5)


class Optimisation(unittest.TestCase):
    def test_adamw_fits_a_line(self):
        gen = uwaga.Generator(3)
        model = uwaga.nn.Linear(1, 1, gen)
        opt = uwaga.optim.AdamW(uwaga.optim.make_param_groups(model, 0.0), lr=0.1)
        x = uwaga.tensor(np.linspace(-1, 1, 16, dtype=np.float32).reshape(16, 1))
        target = x * 3.0 + 1.0
        for _ in range(200):
            opt.zero_grad()
            loss = ((model(x) - target) ** 2).mean()
            loss.backward()
            opt.step()
        self.assertLess(loss.item(), 1e-3)
        self.assertAlmostEqual(model.weight.item(), 3.0, places=1)
        self.assertEqual(opt.steps, 200)

    def test_schedule_and_clipping(self):
        s = uwaga.optim.WarmupCosineLr(1.0, 10, 110, 0.0)
        self.assertAlmostEqual(s.lr(0), 0.1)
        self.assertAlmostEqual(s.lr(60), 0.5)
        g = uwaga.tensor([3.0, 4.0], requires_grad=True)
        (g * g).sum().backward()  # gradient (6, 8), norm 10
        self.assertAlmostEqual(uwaga.optim.clip_grad_norm([g], 5.0), 10.0, places=5)
        np.testing.assert_allclose(g.grad.numpy(), [3.0, 4.0], rtol=1e-6)

    def test_trainer_runs_data_and_a_loss_written_in_python(self):
        gen = uwaga.Generator(0)
        net = uwaga.nn.Linear(2, 1, gen)
        x = uwaga.randn([32, 2], gen)
        y = x @ uwaga.tensor([[1.0], [-2.0]], dtype=uwaga.float32)

        class Points(uwaga.data.BatchSource):
            def batches_per_epoch(self):
                return 4

            def begin_epoch(self, epoch):
                pass

            def batch(self, index):
                return uwaga.data.Batch([x], y)

        class SquaredError(uwaga.nn.Loss):  # as uwaga.nn.MeanSquaredError, written in Python
            def __call__(self, output, targets):
                return ((output - targets) ** 2).mean()

            def count(self, targets):
                return targets.shape[0]

        opt = uwaga.optim.AdamW(uwaga.optim.make_param_groups(net, 0.0), lr=0.05)
        for loss in (SquaredError(), uwaga.nn.MeanSquaredError()):
            for threads in (1, 2):  # two replicas, each on half of the rows
                trainer = uwaga.optim.Trainer(
                    net, Points(), loss, opt, uwaga.optim.ConstantLr(0.05),
                    uwaga.optim.TrainerOptions(epochs=10, quiet=True, threads=threads))
                summary = trainer.fit(evaluate=lambda: {"loss": ((net(x) - y) ** 2).mean().item()})
                self.assertEqual(summary.steps, 40)
                self.assertLess(summary.losses[-1], summary.losses[0])
                self.assertIn("loss", summary.last_eval)

    def test_checkpoint_round_trip(self):
        gen = uwaga.Generator(0)
        a, b = uwaga.nn.Linear(3, 2, gen), uwaga.nn.Linear(3, 2, gen)
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "c.safetensors")
            info = uwaga.optim.CheckpointInfo()
            info.config = '{"hello": 1}'
            uwaga.optim.save_checkpoint(path, a, info=info)
            self.assertEqual(uwaga.optim.load_checkpoint(path, b).config, '{"hello": 1}')
        np.testing.assert_array_equal(a.weight.numpy(), b.weight.numpy())


class DataAndApps(unittest.TestCase):
    def test_corpus_and_vocabulary(self):
        opts = uwaga.data.TranslationCorpusOptions()
        opts.train_size, opts.valid_size, opts.test_size = 200, 20, 20
        corpus = uwaga.data.generate_translation_corpus(opts)
        self.assertEqual(corpus.train[0].english, "we are eating bread")
        self.assertEqual(corpus.train[0].spanish, "estamos comiendo pan")
        vocab = uwaga.data.Vocabulary.build([p.english for p in corpus.train])
        ids = vocab.encode("we are eating bread", True)
        self.assertEqual(ids[0], uwaga.data.Vocabulary.BOS)
        self.assertEqual(vocab.decode(ids), "we are eating bread")

    def test_every_run_configuration_field_is_a_python_property(self):
        # The properties come from each struct's field list (bind_fields), the one to_json
        # writes: every key of the JSON (but "format", the file's version that to_json adds) is
        # an attribute holding the same value, settable except pose's data (set_pose_data keeps
        # the model's channels and joints in step with it).
        apps = uwaga.apps
        for run in (apps.vit_preset("mnist-tiny"), apps.translate_preset("tiny"),
                    apps.gpt_preset("shakespeare-tiny"), apps.pose_preset("stick-classic")):
            name = type(run).__name__
            fields = json.loads(run.to_json())
            fields.pop("format", None)
            for key, value in fields.items():
                with self.subTest(config=name, field=key):
                    self.assertTrue(hasattr(run, key), f"{name}.{key} is not bound")
                    if isinstance(value, (bool, int, float, str)):
                        self.assertEqual(getattr(run, key), value)
                        if not (name == "PoseRunConfig" and key == "data"):
                            setattr(run, key, getattr(run, key))
        gpt = apps.gpt_preset("shakespeare-tiny")
        gpt.beta2 = 0.95
        self.assertEqual(json.loads(gpt.to_json())["beta2"], 0.95)
        self.assertTrue(gpt.init.empty())
        with self.assertRaises(AttributeError):
            apps.pose_preset("stick-classic").data = "coco"

    def test_translator_trains_translates_and_shows_cross_attention(self):
        run = uwaga.apps.translate_preset("tiny")
        trained = uwaga.apps.train_translator(run, max_steps=20)
        self.assertEqual(trained.summary.steps, 20)
        self.assertLess(trained.summary.losses[-1], trained.summary.losses[0])
        out = uwaga.apps.translate(trained, "we are eating bread")
        self.assertIsInstance(out, str)
        # The model and run apart give the same.
        self.assertEqual(uwaga.apps.translate(trained.model, trained.run, "we are eating bread"), out)
        att = uwaga.apps.cross_attention(trained, "we are eating bread")
        self.assertEqual(att.source, ["we", "are", "eating", "bread", "<eos>"])
        T, S = len(att.produced), len(att.source)
        self.assertEqual(att.layers[0].shape, (run.model.heads, T, S))
        np.testing.assert_allclose(np.array(att.average()).reshape(T, S).sum(1), 1.0, rtol=1e-5)

    def test_a_saved_translator_loads_as_the_object_training_returns(self):
        import tempfile
        with tempfile.TemporaryDirectory() as out:
            trained = uwaga.apps.train_translator(uwaga.apps.translate_preset("tiny"),
                                                  max_steps=5, out_dir=out)
            loaded = uwaga.apps.load_translator(out + "/checkpoint.safetensors")
        self.assertIsInstance(loaded, uwaga.apps.Translator)
        self.assertIsInstance(trained, uwaga.apps.Translator)
        self.assertIn("Translator", repr(loaded))
        for t in (trained, loaded):  # either one goes to every function
            self.assertEqual(uwaga.apps.translate(t, "we are eating bread"),
                             uwaga.apps.translate(trained, "we are eating bread"))
            pairs = [uwaga.data.TranslationPair("we eat", "comemos")]
            self.assertEqual(uwaga.apps.evaluate_translation(t, pairs).n, 1)

    def test_the_cifar10_recipe_is_in_the_run_configuration(self):
        run = uwaga.apps.vit_preset("cifar10-vit")
        self.assertEqual((run.policy, run.randaugment_ops, run.randaugment_magnitude),
                         ("randaugment", 2, 9))
        self.assertAlmostEqual(run.model.drop_path, 0.1)
        self.assertEqual(run.model.dropout, 0.0)
        self.assertEqual((run.erase, run.mixup, run.cutmix, run.ema), (0.0, 0.0, 0.0, 0.9995))
        run.erase, run.mixup, run.cutmix, run.mix_probability, run.ema = 0.25, 0.8, 1.0, 0.5, 0.999
        run.crop_scale, run.policy, run.model.dropout = 0.35, "trivialaugment", 0.1
        saved = json.loads(run.to_json())
        self.assertEqual((saved["erase"], saved["mixup"], saved["cutmix"], saved["ema"]),
                         (0.25, 0.8, 1.0, 0.999))
        self.assertEqual((saved["policy"], saved["crop_scale"], saved["mix_probability"]),
                         ("trivialaugment", 0.35, 0.5))
        self.assertEqual((saved["model"]["drop_path"], saved["model"]["dropout"]), (0.1, 0.1))
        run.validate()
        run.policy = "augmix"
        with self.assertRaisesRegex(uwaga.Error, "policy"):
            run.validate()

    @unittest.skipUnless(mnist_available(), "MNIST is not in data/cache (bash data/fetch.sh mnist)")
    def test_mnist_loader_and_a_short_vit_run(self):
        test = uwaga.data.load_dataset("mnist", train=False)
        self.assertEqual(test.count, 10000)
        images = test.images()
        self.assertEqual(images.shape, (10000, 1, 28, 28))
        self.assertEqual(images.dtype, np.uint8)
        small = uwaga.data.take_first(test, 256)
        loader = uwaga.data.DataLoader(small, uwaga.data.DataLoaderOptions(batch_size=100))
        batches = list(loader)
        self.assertEqual([b.images.shape[0] for b in batches], [100, 100, 56])
        self.assertEqual(batches[0].labels.numpy().tolist()[:5], small.labels[:5])

        run = uwaga.apps.vit_preset("mnist-tiny")
        run.model.depth, run.batch_size, run.epochs = 1, 64, 1
        trained = uwaga.apps.train_vit(run, small, uwaga.data.take_first(test, 100), max_steps=4)
        self.assertEqual(trained.summary.steps, 4)
        self.assertEqual(len(trained.run.mean), 1)
        run.train_size = 128  # as --train-size: the first 128 of the 256, two batches of 64
        shorter = uwaga.apps.train_vit(run, small, uwaga.data.take_first(test, 100))
        self.assertEqual(shorter.summary.steps, 2)
        ev = uwaga.apps.evaluate_classifier(trained.model, uwaga.data.take_first(test, 50),
                                            trained.run)
        self.assertEqual(ev.n, 50)
        self.assertEqual(uwaga.apps.evaluate_classifier(trained, uwaga.data.take_first(test, 50)).n,
                         50)
        # The batches a run trains and evaluates on (vit_loader), once the normalisation is set.
        with self.assertRaisesRegex(uwaga.Error, "run.mean"):
            uwaga.apps.vit_loader(run, small)
        stats = uwaga.data.channel_stats(small)
        run.mean, run.std, run.augment = stats.mean, stats.std, True
        evaluation = uwaga.apps.vit_loader(run, small, train=False, batch_size=100)
        self.assertEqual(evaluation.batches_per_epoch(), 3)
        first = evaluation.batch(0, 0)
        plain = (images[:256] / 255.0 - stats.mean[0]) / stats.std[0]  # normalised, in file order
        np.testing.assert_allclose(first.images.numpy(), plain[:100], rtol=1e-5, atol=1e-5)
        training = uwaga.apps.vit_loader(run, small)
        self.assertEqual(training.batches_per_epoch(), 4)  # 256 images in batches of 64
        batch = training.batch(1, 2)
        self.assertNotEqual(batch.indices, list(range(128, 192)))  # shuffled
        np.testing.assert_array_equal(batch.images.numpy(), training.batch(1, 2).images.numpy())
        self.assertEqual(batch.labels.numpy().tolist(), [small.labels[i] for i in batch.indices])
        shifted = np.abs(batch.images.numpy() - plain[batch.indices]).max()
        self.assertGreater(shifted, 0.1)  # augmented: shifted by up to 2 pixels
        # With the recipe on: erasing, Mixup / CutMix soft targets, drop path, the weights' average.
        run.erase, run.mixup, run.cutmix, run.ema, run.model.drop_path = 0.25, 0.8, 1.0, 0.9, 0.1
        recipe = uwaga.apps.train_vit(run, small, uwaga.data.take_first(test, 100), max_steps=2)
        self.assertEqual(recipe.summary.steps, 2)
        self.assertEqual((recipe.run.erase, recipe.run.ema), (0.25, 0.9))



VERSES = "ROMEO: what light breaks there?\nJULIET: it is the east.\nROMEO: and juliet is the sun.\n"


class CharacterGpt(unittest.TestCase):
    """The character corpus, the GPT, generation and training it through the Trainer."""

    def setUp(self):
        self.text = VERSES * 60
        self.corpus = uwaga.data.split_char_corpus(self.text, context=16)
        self.vocab = self.corpus.vocab
        self.config = uwaga.nn.GptConfig(vocab=len(self.vocab), context=16, dim=16, layers=2, heads=2,
                                         mlp_dim=32)
        self.gpt = uwaga.nn.Gpt(self.config, uwaga.Generator(0))

    def ids(self, text):
        return uwaga.tensor([self.vocab.encode(text)])  # (1, T)

    def test_vocabulary_split_and_windows(self):
        self.assertEqual(self.vocab.characters, "".join(sorted(set(self.text))))
        self.assertEqual(self.vocab.decode(self.vocab.encode("ROMEO: ")), "ROMEO: ")
        self.assertEqual(self.vocab.character(self.vocab.id("J")), "J")
        self.assertEqual(self.vocab.unknown("ROMEO & X"), "&X")
        cut = len(self.text) - len(self.text) // 10  # the first 90 % trains
        np.testing.assert_array_equal(self.corpus.train, self.vocab.encode(self.text[:cut]))
        np.testing.assert_array_equal(self.corpus.valid, self.vocab.encode(self.text[cut:]))
        self.assertEqual(self.corpus.train.dtype, np.int64)

        windows = uwaga.data.CharWindows(self.corpus.train, batch_size=4, context=16,
                                         batches_per_epoch=3, seed=1)
        batch = windows.batch(0)
        x, y = batch.inputs[0].numpy(), batch.targets.numpy()
        self.assertEqual(x.shape, (4, 16))
        np.testing.assert_array_equal(y[:, :-1], x[:, 1:])  # each target is the next character
        for row_x, row_y in zip(x, y):
            self.assertIn(self.vocab.decode(list(row_x) + [row_y[-1]]), self.text[:cut])
        np.testing.assert_array_equal(windows.batch(0).inputs[0].numpy(), x)  # seeded
        self.assertEqual(uwaga.data.consecutive_window_count(self.corpus.valid, 16),
                         (len(self.corpus.valid) - 1) // 16)
        first = uwaga.data.consecutive_windows(self.corpus.valid, 16, 1, 2)
        np.testing.assert_array_equal(first.inputs[0].numpy()[0], self.corpus.valid[16:32])

    def test_a_gpt_is_causal_and_its_attention_looks_only_back(self):
        names = [n for n, _ in self.gpt.named_parameters()]
        for name in ("token_embed.weight", "pos_embed.weight", "blocks.1.attn.qkv.weight",
                     "norm.weight", "head.weight"):
            self.assertIn(name, names)
        ids = self.ids("ROMEO: what")
        logits = self.gpt(ids).numpy()
        self.assertEqual(logits.shape, (1, 11, len(self.vocab)))
        changed = self.gpt(self.ids("ROMEO: whaa")).numpy()
        np.testing.assert_array_equal(changed[:, :-1], logits[:, :-1])  # no position sees ahead
        self.assertGreater(np.abs(changed[:, -1] - logits[:, -1]).max(), 0)

        self.gpt.keep_attention()
        self.gpt(ids)
        maps = [A.numpy() for A in self.gpt.attention_maps()]
        self.assertEqual(len(maps), 2)
        for A in maps:
            self.assertEqual(A.shape, (1, 2, 11, 11))
            np.testing.assert_array_equal(np.triu(A, 1), 0)  # row t is zero after column t
            np.testing.assert_allclose(A.sum(-1), 1.0, rtol=1e-5)
            self.assertEqual(A[0, 0, 0, 0], 1.0)  # the first token can only look at itself

        tied = uwaga.nn.Gpt(uwaga.nn.GptConfig(vocab=5, context=4, dim=8, layers=1, heads=2,
                                               mlp_dim=8, tie_weights=True), uwaga.Generator(0))
        self.assertIsNone(tied.head)
        self.assertNotIn("head.weight", tied.state_dict())

    def test_the_cache_gives_the_last_row_of_a_full_pass(self):
        ids = self.ids("JULIET: it is")
        full = self.gpt(ids).numpy()  # (1, 13, V)
        cache = uwaga.nn.KvCache()
        with uwaga.no_grad():
            row = self.gpt.forward_cached(uwaga.tensor([self.vocab.encode("JULIET:")]), cache)
            np.testing.assert_allclose(row.numpy()[0], full[0, 6], rtol=1e-4, atol=1e-5)
            for t, c in enumerate(" it is", start=7):
                row = self.gpt.forward_cached(uwaga.tensor([[self.vocab.id(c)]]), cache)
                np.testing.assert_allclose(row.numpy()[0], full[0, t], rtol=1e-4, atol=1e-5)
        self.assertEqual(len(cache), 13)
        self.assertEqual(cache.K[0].shape, (1, 2, 13, 8))

    def test_generation_is_seeded_and_the_cache_changes_no_token(self):
        prompt = self.vocab.encode("ROMEO:")
        options = uwaga.nn.SamplingOptions(temperature=0.8, top_k=10)

        def draw(seed, use_cache=True, count=40):  # 46 tokens: past the 16-token context
            return uwaga.nn.TokenStream(self.gpt, prompt, options, seed, use_cache).take(count)

        first = draw(3)
        self.assertEqual(len(first), 40)
        self.assertEqual(draw(3), first)
        self.assertEqual(draw(3, use_cache=False), first)
        self.assertNotEqual(draw(4), first)
        stream = uwaga.nn.TokenStream(self.gpt, prompt, uwaga.nn.SamplingOptions(temperature=0))
        self.assertFalse(self.gpt.training)  # generation runs in eval mode
        greedy = stream.next()
        self.assertEqual(greedy, int(np.argmax(self.gpt(self.ids("ROMEO:")).numpy()[0, -1])))
        self.assertEqual(stream.tokens, list(prompt) + [greedy])
        del stream
        self.assertTrue(self.gpt.training)  # restored

        logits = [0.5, 2.0, -1.0, 2.0]
        for o in (uwaga.nn.SamplingOptions(temperature=0), uwaga.nn.SamplingOptions(top_k=1)):
            self.assertEqual(uwaga.nn.sample_token(logits, o, uwaga.Generator(0)), 1)  # lower id on ties
        draws = {uwaga.nn.sample_token(logits, uwaga.nn.SamplingOptions(top_k=2), uwaga.Generator(s))
                 for s in range(50)}
        self.assertEqual(draws, {1, 3})

    def test_the_trainer_teaches_a_gpt_the_verses(self):
        run = uwaga.apps.gpt_preset("smoke")
        self.assertIn("shakespeare-tiny", uwaga.apps.gpt_preset_names())
        self.assertEqual(uwaga.apps.gpt_preset("shakespeare-tiny").model.dim, 128)
        windows = uwaga.data.CharWindows(self.corpus.train, batch_size=16, context=16,
                                         batches_per_epoch=30, seed=0)
        opt = uwaga.optim.AdamW(uwaga.optim.make_param_groups(self.gpt, 0.0),
                                **uwaga.apps.gpt_adam_options(run))
        self.assertEqual(opt.lr, run.lr)

        def valid_loss():
            return uwaga.apps.evaluate_language_model(self.gpt, self.corpus.valid)

        before = valid_loss()
        self.assertEqual(before.characters, (len(self.corpus.valid) - 1) // 16 * 16)
        self.assertAlmostEqual(before.bits_per_character(), before.loss / np.log(2))
        trainer = uwaga.optim.Trainer(self.gpt, windows, uwaga.nn.CrossEntropyLoss(), opt,
                                      uwaga.optim.ConstantLr(run.lr),
                                      uwaga.optim.TrainerOptions(epochs=2, clip_norm=1.0, quiet=True))
        summary = trainer.fit(evaluate=lambda: {"loss": valid_loss().loss})
        self.assertEqual(summary.steps, 60)
        after = valid_loss().loss
        self.assertLess(after, before.loss - 1.0)
        self.assertAlmostEqual(summary.last_eval["loss"], after, places=5)


class KeypointModel(unittest.TestCase):
    """uwaga-pose from Python: stick figures, heatmaps, ViTPose, train_pose, evaluate, load."""

    def test_stick_figures_are_seeded_and_name_their_joints(self):
        a, b = uwaga.data.StickFigures(3, seed=5), uwaga.data.StickFigures(3, seed=5)
        s, t = a.sample(2), b.sample(2)
        np.testing.assert_array_equal(s.image.numpy(), t.image.numpy())
        self.assertEqual(s.image.shape, (1, 64, 48))
        self.assertEqual(len(s.x), 15)
        self.assertEqual(a.skeleton.joint_names[a.skeleton.joint("left_wrist")], "left_wrist")
        self.assertGreater(s.torso, 0)
        with self.assertRaises(IndexError):
            a.sample(3)
        small = uwaga.data.StickFigures(1, seed=0, config=uwaga.data.StickFigureConfig(height=32, width=24))
        self.assertEqual(small.sample(0).image.shape, (1, 32, 24))

    def test_a_gaussian_heatmap_decodes_to_its_joint(self):
        H = uwaga.nn.gaussian_heatmaps([10.3, 5.0], [7.9, 3.0], [1, 0], 16, 12, 2.0, 1.5).numpy()
        self.assertEqual(H.shape, (2, 16, 12))
        self.assertEqual(H[1].max(), 0.0)  # a hidden joint's map is all zero
        # The formula of nn/pose/keypoint_heatmaps.h: cell (i, j) centred at (j + 0.5, i + 0.5) cells.
        i, j = np.mgrid[0:16, 0:12]
        u, v = 10.3 / 2, 7.9 / 2
        np.testing.assert_allclose(H[0], np.exp(-((j + 0.5 - u) ** 2 + (i + 0.5 - v) ** 2) / (2 * 1.5 ** 2)),
                                   rtol=1e-5, atol=1e-7)
        d = uwaga.nn.decode_heatmaps(uwaga.tensor(H), 2.0)
        self.assertLessEqual(abs(d.x[0] - 10.3), 0.25 * 2.0)  # within a quarter cell (stride 2) per axis
        self.assertLessEqual(abs(d.y[0] - 7.9), 0.25 * 2.0)
        self.assertAlmostEqual(d.score[0], H[0].max(), places=6)

    def test_vitpose_shapes_attention_and_a_short_training(self):
        run = uwaga.apps.pose_preset("smoke")
        self.assertFalse(run.flip)  # stick figures are never mirrored
        model = uwaga.nn.ViTPose(run.model, uwaga.Generator(0))
        images = uwaga.tensor(np.zeros((2, 1, 64, 48), np.float32))
        model.keep_attention(True)
        self.assertEqual(model(images).shape, (2, 15, 32, 24))
        maps = model.attention_maps()
        self.assertEqual(len(maps), run.model.depth)
        self.assertEqual(maps[0].shape, (2, run.model.heads, 48, 48))
        self.assertGreater(sum(p.numel() for _, p in model.keypoint_head.named_parameters()), 0)

        data = uwaga.apps.PoseData(run)
        self.assertEqual(data.valid_size, run.valid_size)
        with tempfile.TemporaryDirectory() as out:
            pose = uwaga.apps.train_pose(run, out_dir=out)
            loaded = uwaga.apps.load_pose(out + "/checkpoint.safetensors")
        self.assertEqual(pose.summary.steps, run.epochs * run.train_size // run.batch_size)
        e = uwaga.apps.evaluate_pose(pose, data, baselines=True)
        self.assertEqual(e.n, run.valid_size)
        self.assertTrue(0 <= e.model.pck <= 1 and 0 <= e.mean_pose.pck <= 1)
        self.assertEqual(len(e.model.pck_joint), 15)
        # The loaded checkpoint is the trained model: the same scores.
        self.assertEqual(uwaga.apps.evaluate_pose(loaded, data).model.pck, e.model.pck)
        self.assertIn("Pose smoke", repr(loaded))


class TestBpe(unittest.TestCase):
    """The byte-level BPE tokenizer and GPT-2's weights from Python."""

    def test_train_encode_decode_save_load(self):
        text = "the cat sat on the mat; the cat ate the rat. " * 20
        bpe = uwaga.data.BpeTokenizer.train(text, 30)
        self.assertEqual(len(bpe), 256 + bpe.merge_count)
        a, b, merged = bpe.merge(0)
        self.assertEqual(bpe.token(merged), bpe.token(a) + bpe.token(b))
        ids = bpe.encode("the cat")
        self.assertLess(len(ids), 7)
        self.assertEqual(bpe.decode(ids), "the cat")
        self.assertEqual(list(bpe.encode(b"\xff\xfe")), [255, 254])  # bytes in, any bytes
        self.assertEqual(uwaga.data.pretokenize("it's  ok"), [b"it", b"'s", b" ", b" ok"])
        with tempfile.TemporaryDirectory() as d:
            bpe.save(d)
            again = uwaga.data.BpeTokenizer.load(d)
            self.assertEqual(list(again.encode(text)), list(bpe.encode(text)))
        with self.assertRaisesRegex(RuntimeError, "does not exist"):
            uwaga.data.BpeTokenizer.load(os.path.join(tempfile.gettempdir(), "no-such-dir-uwaga"))

    def test_gelu_tanh_and_load_gpt2_errors(self):
        x = uwaga.tensor(np.array([-1.0, 0.0, 1.0]))
        np.testing.assert_allclose(uwaga.gelu_tanh(x).numpy(), [-0.15880801, 0.0, 0.84119199], rtol=1e-6)
        with self.assertRaisesRegex(RuntimeError, "cannot open"):
            uwaga.apps.load_gpt2(os.path.join(tempfile.gettempdir(), "no-such-model.safetensors"))


if __name__ == "__main__":
    unittest.main()
