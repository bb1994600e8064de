"""Checks an SVG written by `plot`: well-formed XML, the four panels, and in each one <path>
per run (the training curve, the learning rate, the gradient norm).
    python3 tests/apps/check_training_plot.py CURVES.svg RUNS"""
import sys
import xml.etree.ElementTree as ET

path, runs = sys.argv[1], int(sys.argv[2])
ns = "{http://www.w3.org/2000/svg}"
root = ET.parse(path).getroot()
panels = {g.get("id"): g for g in root.iter(ns + "g") if (g.get("id") or "").startswith("panel-")}
expected = {"panel-loss", "panel-accuracy", "panel-lr", "panel-grad_norm"}
assert set(panels) == expected, f"panels {sorted(panels)}, expected {sorted(expected)}"
for name, g in sorted(panels.items()):
    paths = len(g.findall(ns + "path"))
    assert paths == runs, f"{name}: {paths} paths for {runs} runs"
print(f"{path}: 4 panels, {runs} path(s) each")
