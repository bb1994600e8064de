#!/usr/bin/env python3
"""Every pointer in the documentation resolves (CTest `docs`):
- in every Markdown file of the tree, each relative link [text](path#anchor) names a file or
  directory that exists, and each #anchor a heading of that file (GitHub's anchors);
- in README.md and the READMEs of the folders, each path in `code spans` that starts with one of
  the tree's folders (core/, nn/, apps/, ...) exists (with or without its .h/.cpp/.py/.sh);
- each citation of a README heading in the code and notebooks (README: "Heading", README,
  "Heading") is the start of one of README.md's headings;
- in notebooks/SEEDS.md, each "In the code" line's files exist and hold the functions named
  beside them in parentheses;
- README.md is a guide: at most 500 lines, no `git <hex>` revision outside a link to a results
  file (figures and their revisions live in the programs' RESULTS.md), and a link to every
  RESULTS.md of the tree;
- each path cited in a comment of the sources (core/ nn/ optim/ data/ apps/ tests/ notebooks/:
  C++, Python, shell, CMake, the notebooks) exists.
    python3 tests/docs/check_docs.py [ROOT]
"""
import glob
import os
import re
import sys
import unicodedata

ROOT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                       os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
FOLDERS = ("core/", "nn/", "optim/", "data/", "apps/", "tests/", "notebooks/", ".ci/")
GENERATED = ("data/cache", "runs/", "build")
SKIP_DIRS = {".git", "node_modules", "__pycache__"}
README_MAX_LINES = 500
problems = []

# Files moved into the wings' folders (nn/conv/, nn/pose/, data/images/, data/text/,
# data/translation/, data/pose/) and apps/common/output_file into core/: while the move and the
# documents citing it land separately, a path counts as existing when its file exists under the
# old or the new name. Drop this table once both are in.
MOVED = {}
for _folder, _names in {
        "nn/conv": "conv2d conv_transpose2d batch_norm2d max_pool2d upsample",
        "nn/pose": "keypoint_heatmaps pose_decoders vit_pose",
        "data/images": "augment auto_augment cifar10 idx image_dataset image_ops jpeg png pnm mixup",
        "data/text": "bpe_corpus bpe_tokenizer char_corpus pretokenizer unicode_classes "
                     "unicode_classes_table make_unicode_classes",
        "data/translation": "bleu vocabulary translation_batches translation_corpus "
                            "translation_grammar translation_lexicon translation_parser "
                            "translation_split",
        "data/pose": "coco_keypoints keypoint_baselines keypoint_metrics keypoints pose_batches "
                     "stick_figures top_down_crop"}.items():
    for _name in _names.split():
        MOVED[_folder.split("/")[0] + "/" + _name] = _folder + "/" + _name
MOVED["apps/common/output_file"] = "core/output_file"
MOVED_BACK = {new: old for old, new in MOVED.items()}
NEW_FOLDERS = {new.rsplit("/", 1)[0] for new in MOVED.values()}


def moved_names(p):
    """p, and p under its other name (before or after the move) if it is one of MOVED's."""
    names = [p]
    for table in (MOVED, MOVED_BACK):
        for key, other in table.items():
            if p == key or p.startswith(key + "."):
                names.append(other + p[len(key):])
    return names


def generated(path):
    """Build trees, fetched data and runs: not the project's documents."""
    r = rel(path)
    return r.startswith(("build", "data/cache", "runs")) or any(
        part in SKIP_DIRS for part in r.split(os.sep))


def markdown_files():
    for dirpath, dirnames, filenames in os.walk(ROOT):
        dirnames[:] = [d for d in dirnames if not generated(os.path.join(dirpath, d))]
        for f in filenames:
            if f.endswith(".md"):
                yield os.path.join(dirpath, f)


def strip_code_blocks(text):
    return re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)


def slug(heading):
    """GitHub's anchor for a heading: lowercase, punctuation dropped, spaces to hyphens."""
    h = re.sub(r"`|\*\*|\*", "", heading.strip()).lower()
    h = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", h)
    out = []
    for ch in h:
        cat = unicodedata.category(ch)
        if ch in " -":
            out.append("-" if ch == " " else ch)
        elif ch == "_" or cat[0] in "LN":
            out.append(ch)
    return "".join(out)


def headings(path):
    with open(path, encoding="utf-8") as f:
        text = strip_code_blocks(f.read())
    names = [m.group(2).strip() for m in re.finditer(r"^(#{1,6})\s+(.*)$", text, flags=re.M)]
    anchors, seen = set(), {}
    for n in names:
        s = slug(n)
        k = seen.get(s, 0)
        anchors.add(s if k == 0 else f"{s}-{k}")
        seen[s] = k + 1
    return names, anchors


def rel(path):
    return os.path.relpath(path, ROOT)


def check_links(md):
    with open(md, encoding="utf-8") as f:
        text = strip_code_blocks(f.read())
    text = re.sub(r"`[^`\n]*`", "", text)  # links inside code spans are not links
    for m in re.finditer(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)", text):
        target = m.group(1)
        if re.match(r"[a-z]+://|mailto:", target):
            continue
        path, _, anchor = target.partition("#")
        full = os.path.normpath(os.path.join(os.path.dirname(md), path)) if path else md
        full = next((os.path.join(ROOT, n) for n in moved_names(rel(full))
                     if os.path.exists(os.path.join(ROOT, n))), full)
        if not os.path.exists(full):
            problems.append(f"{rel(md)}: link to {target}: {rel(full)} does not exist")
            continue
        if anchor and full.endswith(".md") and anchor not in headings(full)[1]:
            problems.append(f"{rel(md)}: link to {target}: no heading #{anchor} in {rel(full)}")


def path_exists(p):
    p = p.rstrip(".,;:)")
    p = re.sub(r":\d+(-\d+)?$", "", p)  # file.cpp:147
    if any(c in p for c in "*?[{<") or p.startswith(GENERATED):
        return True  # a pattern or a placeholder, not one path
    if re.match(r"apps/uwaga-[\w-]+$", p):
        return True  # a program, as a build directory holds it (build/apps/uwaga-vit)
    if p.rstrip("/") in NEW_FOLDERS:
        return True
    for name in moved_names(p.rstrip("/")):
        full = os.path.join(ROOT, name)
        if os.path.exists(full) or any(os.path.exists(full + ext)
                                       for ext in (".h", ".cpp", ".py", ".sh", ".md")):
            return True
    return False


def check_code_paths(md):
    with open(md, encoding="utf-8") as f:
        text = f.read()
    spans = re.findall(r"`([^`\n]+)`", text) + re.findall(r"^```.*?\n(.*?)^```", text,
                                                          flags=re.S | re.M)
    for span in spans:
        for word in re.split(r"[\s=(),'\"]+", span):
            if word.startswith(FOLDERS) and not path_exists(word):
                problems.append(f"{rel(md)}: the path {word} does not exist")


def check_readme_is_a_guide(readme, results):
    """README.md stays a guide: short, its figures' revisions kept in the results files, and every
    results file reachable from it."""
    with open(readme, encoding="utf-8") as f:
        text = f.read()
    lines = text.count("\n")
    if lines > README_MAX_LINES:
        problems.append(f"README.md: {lines} lines, more than {README_MAX_LINES}: move run "
                        "records to the programs' RESULTS.md")
    # A link into a results file may name the revision it points at; nothing else may.
    outside = re.sub(r"\[[^\]]*\]\([^)\s]*RESULTS\.md[^)]*\)", "", text)
    for m in re.finditer(r"\bgit(?:\s+show)?\s+([0-9a-f]{7,40})\b", outside):
        line = outside.count("\n", 0, m.start()) + 1
        problems.append(f"README.md: \"{' '.join(m.group(0).split())}\" (line {line} without links to results "
                        "files): a revision belongs with its figure in a RESULTS.md")
    targets = {os.path.normpath(os.path.join(ROOT, m.group(1)))
               for m in re.finditer(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text)}
    for r in results:
        if os.path.normpath(r) not in targets:
            problems.append(f"README.md: no link to {rel(r)}")


# Stale paths in comments that are known and waiting for their fix ("file:line path" a line; lines
# starting with # are notes): reported as notes, not failures. Keep it short: mend the comment.
KNOWN_STALE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "known_stale_paths.txt")
COMMENT_SOURCES = ("core", "nn", "optim", "data", "apps", "tests", "notebooks")
# A path in a comment: starts at one of the tree's folders, not inside a longer word or path
# (uwaga/nn/linear.h is an installed header, not this tree's).
CITED_PATH = re.compile(r"(?<![\w./<>-])((?:core|nn|optim|data|apps|tests|notebooks|\.ci)/"
                        r"[\w./<>{}*?-]*)")


def comments(path, text):
    """The comments of a source file, as (line, text)."""
    if path.endswith(".ipynb"):
        import json
        out = []
        for cell in json.loads(text).get("cells", []):
            src = "".join(cell.get("source", []))
            if cell.get("cell_type") == "markdown":
                out.append((0, src))
            else:
                out += [(0, m.group(1)) for m in re.finditer(r"#(.*)$", src, flags=re.M)]
        return out
    if path.endswith((".cpp", ".h", ".inc", ".js", ".css")):
        pattern = r"//([^\n]*)|/\*(.*?)\*/"
    elif path.endswith(".py"):
        pattern = r"(?:^|(?<=\s))#([^\n]*)|\"\"\"(.*?)\"\"\""
    else:  # shell, CMake (${x#prefix} is no comment)
        pattern = r"(?:^|(?<=\s))#([^\n]*)"
    return [(text.count("\n", 0, m.start()) + 1, next((g for g in m.groups() if g), ""))
            for m in re.finditer(pattern, text, flags=re.S)]


def check_comment_paths():
    """Each path cited in a comment names a file or folder that exists (its .h/.cpp/... may be
    left off, a :line follows it, a pattern or placeholder stands for many)."""
    known = set()
    if os.path.exists(KNOWN_STALE):
        with open(KNOWN_STALE, encoding="utf-8") as fh:
            known = {" ".join(l.split()[:2]) for l in fh if l.strip() and not l.startswith("#")}
    seen = set()
    count = 0
    for top in COMMENT_SOURCES:
        for dirpath, dirnames, filenames in os.walk(os.path.join(ROOT, top)):
            dirnames[:] = [d for d in dirnames if not generated(os.path.join(dirpath, d))]
            for f in filenames:
                path = os.path.join(dirpath, f)
                if not (f.endswith((".cpp", ".h", ".inc", ".py", ".sh", ".cmake", ".ipynb",
                                    ".js", ".css")) or f == "CMakeLists.txt") or \
                        os.path.abspath(path) == os.path.abspath(__file__):
                    continue
                with open(path, encoding="utf-8", errors="replace") as fh:
                    text = fh.read()
                for line, comment in comments(path, text):
                    for m in CITED_PATH.finditer(comment):
                        p = m.group(1).rstrip(".,;:")
                        if "/" not in p.rstrip("/") and p.rstrip("/") in COMMENT_SOURCES:
                            continue  # the folder itself
                        count += 1
                        if not path_exists(p):
                            key = f"{rel(path)} {p}"
                            where = f"{rel(path)}:{line}" if line else rel(path)
                            if key in known:
                                seen.add(key)
                                print(f"NOTE  {where}: cites {p}, which does not exist (known, "
                                      f"{rel(KNOWN_STALE)})")
                            else:
                                problems.append(f"{where}: the comment cites {p}, which does "
                                                "not exist")
    for key in sorted(known - seen):
        print(f"NOTE  {rel(KNOWN_STALE)}: \"{key}\" is no longer stale: drop the line")
    return count


# The library's layers, lowest first: a file may include its own layer's headers and those below,
# never one above (README, "Architecture": each stage calls into a lower layer).
LAYERS = ("core", "nn", "data", "optim", "apps")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', flags=re.M)
MODEL_CLASS = re.compile(r"class\s+\w+\s*(?:final\s*)?:\s*public\s+(?:nn::)?Model\b")


def check_layers():
    """No include runs up a layer, and data/ includes no model's header (what batches need from
    nn/ is a function or a loss, never a network)."""
    count = 0
    model_headers = set()
    for dirpath, _, filenames in os.walk(os.path.join(ROOT, "nn")):
        for f in filenames:
            if f.endswith(".h"):
                with open(os.path.join(dirpath, f), encoding="utf-8") as fh:
                    if MODEL_CLASS.search(fh.read()):
                        model_headers.add(rel(os.path.join(dirpath, f)))
    for layer, top in enumerate(LAYERS):
        for dirpath, dirnames, filenames in os.walk(os.path.join(ROOT, top)):
            dirnames[:] = [d for d in dirnames if not generated(os.path.join(dirpath, d))]
            for f in filenames:
                if not f.endswith((".cpp", ".h")):
                    continue
                path = os.path.join(dirpath, f)
                with open(path, encoding="utf-8", errors="replace") as fh:
                    text = fh.read()
                for m in INCLUDE.finditer(text):
                    target = m.group(1)
                    first = target.split("/")[0]
                    if first not in LAYERS:
                        continue
                    count += 1
                    line = text.count("\n", 0, m.start()) + 1
                    if LAYERS.index(first) > layer:
                        problems.append(f"{rel(path)}:{line}: {top}/ includes {target}, a layer "
                                        f"above it ({' < '.join(LAYERS)})")
                    elif top == "data" and target in model_headers:
                        problems.append(f"{rel(path)}:{line}: data/ includes {target}, a "
                                        "model's header")
    return count


def check_heading_citations(readme_headings):
    sources = []
    for pattern in ("**/*.cpp", "**/*.h", "**/*.py", "**/*.sh", "**/*.ipynb", "**/*.md",
                    "**/CMakeLists.txt"):
        sources += [p for p in glob.glob(os.path.join(ROOT, pattern), recursive=True)
                    if not generated(p) and os.path.abspath(p) != os.path.abspath(__file__)]
    for path in sorted(set(sources)):
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
        for m in re.finditer(r'README[:,]\s*\\?"([^"\\]+)\\?"', text):
            cited = m.group(1).rstrip(".")
            if not any(h.startswith(cited) for h in readme_headings):
                problems.append(f"{rel(path)}: cites the README heading \"{cited}\", which "
                                "README.md does not have")


def check_seeds(seeds):
    with open(seeds, encoding="utf-8") as f:
        text = f.read()
    blocks = re.findall(r"\*\*In the code[^*]*\*\*(.*?)(?=\n\n|\n## |\Z)", text, flags=re.S)
    if len(blocks) < 7:
        problems.append(f"{rel(seeds)}: expected an 'In the code' line under each of the 7 "
                        f"sections, found {len(blocks)}")
    count = 0
    for block in blocks:
        # `file` followed by (`function`, `function`, ...) or ("a test's name")
        for m in re.finditer(r"`([\w./-]+\.(?:cpp|h|py|ipynb|sh))`(?:\s*\(([^)]*)\))?", block):
            path, names = m.group(1), m.group(2) or ""
            full = os.path.join(ROOT, path)
            count += 1
            if not os.path.exists(full):
                problems.append(f"{rel(seeds)}: {path} does not exist")
                continue
            with open(full, encoding="utf-8") as f:
                source = f.read()
            for name in re.findall(r"`([\w:~]+)`", names):
                short = name.split("::")[-1]
                if not re.search(rf"\b{re.escape(name)}\s*[(<]", source) and not (
                        "::" not in name and re.search(rf"\b{re.escape(short)}\s*[(<]", source)):
                    problems.append(f"{rel(seeds)}: {path} has no function {name}")
            for quoted in re.findall(r'"([^"]+)"', names):
                if quoted not in source:
                    problems.append(f"{rel(seeds)}: {path} has no \"{quoted}\"")
    if count < 20:
        problems.append(f"{rel(seeds)}: only {count} code references found")
    return count


def main():
    readme = os.path.join(ROOT, "README.md")
    mds = sorted(markdown_files())
    for md in mds:
        check_links(md)
    results = [m for m in mds if os.path.basename(m) == "RESULTS.md"]
    for md in [readme] + [m for m in mds if os.path.basename(m) == "README.md"] + results:
        check_code_paths(md)
    check_readme_is_a_guide(readme, results)
    check_heading_citations(headings(readme)[0])
    refs = check_seeds(os.path.join(ROOT, "notebooks", "SEEDS.md"))
    cited = check_comment_paths()
    includes = check_layers()
    for p in problems:
        print("FAIL ", p)
    print(f"docs: {len(mds)} Markdown files ({len(results)} RESULTS.md), {refs} SEEDS code "
          f"references, {cited} paths cited in comments, {includes} includes across layers: "
          f"{len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
