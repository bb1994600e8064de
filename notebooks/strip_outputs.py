#!/usr/bin/env python3
"""Strips outputs from notebooks before they are committed (they are committed without outputs).

    python3 notebooks/strip_outputs.py notebooks/*.ipynb           # strip in place
    python3 notebooks/strip_outputs.py --check notebooks/*.ipynb   # exit 1 if any has outputs

Removes every code cell's outputs and execution count, and per-cell metadata Jupyter adds while
running (execution times, scroll state); keeps everything else byte for byte as Jupyter writes it.
"""
import json
import sys


def strip(nb):
    changed = False
    for cell in nb.get("cells", []):
        if cell.get("cell_type") != "code":
            continue
        if cell.get("outputs") or cell.get("execution_count") is not None:
            cell["outputs"], cell["execution_count"] = [], None
            changed = True
        for key in ("execution", "collapsed", "scrolled", "ExecuteTime"):
            if key in cell.get("metadata", {}):
                del cell["metadata"][key]
                changed = True
    return changed


def main(args):
    check = "--check" in args
    paths = [a for a in args if a != "--check"]
    dirty = []
    for path in paths:
        with open(path, encoding="utf-8") as f:
            nb = json.load(f)
        if strip(nb):
            dirty.append(path)
            if not check:
                with open(path, "w", encoding="utf-8") as f:
                    json.dump(nb, f, indent=1, ensure_ascii=False)
                    f.write("\n")
    if check and dirty:
        print("notebooks with outputs (run python3 notebooks/strip_outputs.py on them):",
              *dirty, sep="\n  ")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
