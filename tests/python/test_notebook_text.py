"""What the teaching notebooks say against what they show (notebooks 02 and 03): the exercises
are pointed at where they belong, random weights are not called learned, and every figure the text
quotes is one the notebook prints.

    python3 -m unittest tests/python/test_notebook_text.py -v
"""
import json
import os
import re
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def cells(name):
    with open(os.path.join(ROOT, "notebooks", name), encoding="utf-8") as f:
        return [(c["cell_type"], "".join(c["source"])) for c in json.load(f)["cells"]]


def code(name):
    return "\n".join(s for kind, s in cells(name) if kind == "code")


def text(name):
    return "\n".join(s for kind, s in cells(name) if kind == "markdown")


class ExercisePointers(unittest.TestCase):
    def test_notebooks_2_and_3_point_at_their_exercises(self):
        # Notebook 2: attention, the mask and attention's backward; notebook 3: LayerNorm, the
        # heads, the block.
        for name, exercises in [("02_attention.ipynb", "exercises 1–4"),
                                ("03_multi_head_and_the_block.ipynb", "exercises 5–7")]:
            with self.subTest(notebook=name):
                self.assertIn(f"notebook 8, {exercises}", text(name))
                self.assertIn("notebooks/exercises/cpp/exercises.cpp", text(name))


class WhatTheTextClaims(unittest.TestCase):
    def test_random_weights_are_not_called_learned(self):
        # Notebook 2 draws W_Q, W_K, W_V at random: its printout must not label them "learned".
        labels = re.findall(r'show\("W_\w+", [^,]+, "([^"]*)"\)', code("02_attention.ipynb"))
        self.assertTrue(labels)
        for label in labels:
            self.assertNotRegex(label, r"^learned")

    def test_the_gradient_ratio_the_text_quotes_is_printed(self):
        nb = "02_attention.ipynb"
        self.assertNotIn("ten times", text(nb))  # a figure the notebook never printed
        self.assertRegex(code(nb), r"times smaller")

    def test_the_residual_question_is_answered_for_the_depth_it_asks_about(self):
        nb = "03_multi_head_and_the_block.ipynb"
        asked = re.search(r"(\d+) blocks without the residual", text(nb))
        self.assertIsNotNone(asked)
        depth = asked.group(1)
        # The printed ratio is computed at that depth, not only after one block.
        self.assertRegex(code(nb), r"for L in \([^)]*\b" + depth + r"\b[^)]*\):\s*\n\s*ratio = "
                                   r"input_gradient_norm\(L, True\)")


if __name__ == "__main__":
    unittest.main()
