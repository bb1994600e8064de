#!/usr/bin/env python3
"""Every pointer in the documentation resolves (CTest `docs`):
- in every Markdown file of the tree, each relative link [text](path#anchor) names a file or
  directory that exists, and each #anchor a heading of that file (GitHub's anchors);
- in README.md and the READMEs of the folders, each path in `code spans` that starts with one of
  the tree's folders (core/, nn/, apps/, ...) exists (with or without its .h/.cpp/.py/.sh);
- each citation of a README heading in the code and notebooks (README: "Heading", README,
  "Heading") is the start of one of README.md's headings;
- in notebooks/SEEDS.md, each "In the code" line's files exist and hold the functions named
  beside them in parentheses.
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
problems = []


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
    full = os.path.join(ROOT, p)
    if os.path.exists(full):
        return True
    return any(os.path.exists(full + ext) for ext in (".h", ".cpp", ".py", ".sh", ".md"))


def check_code_paths(md):
    with open(md, encoding="utf-8") as f:
        text = f.read()
    spans = re.findall(r"`([^`\n]+)`", text) + re.findall(r"^```.*?\n(.*?)^```", text,
                                                          flags=re.S | re.M)
    for span in spans:
        for word in re.split(r"[\s=(),'\"]+", span):
            if word.startswith(FOLDERS) and not path_exists(word):
                problems.append(f"{rel(md)}: the path {word} does not exist")


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
    for md in [readme] + [m for m in mds if os.path.basename(m) == "README.md"]:
        check_code_paths(md)
    check_heading_citations(headings(readme)[0])
    refs = check_seeds(os.path.join(ROOT, "notebooks", "SEEDS.md"))
    for p in problems:
        print("FAIL ", p)
    print(f"docs: {len(mds)} Markdown files, {refs} SEEDS code references: "
          f"{len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
