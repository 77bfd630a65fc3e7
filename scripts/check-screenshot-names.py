#!/usr/bin/env python3
"""Checks that the GUI tests' screenshots and the docs agree on their names (issue 46).

Usage: scripts/check-screenshot-names.py [ROOT]   (ROOT: the repository root, default: ../)

A screenshot is a picture a GUI test saves with test::screenshotPath("NAME") or its own
screenshot(widget, "NAME") helper (tests/gui/*.cpp); scripts/refresh-screenshots.sh writes them
to docs/screenshots. Rules:
  - NAME is lower-case words and digits (a model's "qwen3.8" keeps its dot) joined by '-',
    ending in .png (compare-baseline.png, never compare_baseline.png), the docs' spelling;
  - every NAME is named somewhere in docs/**/*.md (an image link or the text);
  - every docs image link screenshots/NAME is saved by a GUI test or named by a script in
    scripts/ (the demo's pictures), so refreshing the screenshots refreshes it; docs/results/
    (dated measurements, pictures of that day's run) is exempt.
Prints FILE:LINE: message per problem; exits 1 if any, 0 if none.
"""
import os
import re
import sys

SAVED = re.compile(r'screenshot(?:Path)?\([^;]*?QStringLiteral\("([^"]+)"\)')
DOC_IMAGE = re.compile(r"screenshots/([^)\s\"']+\.png)")
GOOD_NAME = re.compile(r"[a-z0-9][a-z0-9.]*(?:-[a-z0-9.]+)*\.png")


def read(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                           os.path.join(os.path.dirname(__file__), ".."))
    problems = []
    saved = {}
    tests = os.path.join(root, "tests", "gui")
    for name in sorted(os.listdir(tests)):
        if not name.endswith(".cpp"):
            continue
        path = os.path.join(tests, name)
        for lineno, line in enumerate(read(path).splitlines(), 1):
            for shot in SAVED.findall(line):
                saved.setdefault(shot, f"{os.path.relpath(path, root)}:{lineno}")
    docs = []
    for base, dirs, names in os.walk(os.path.join(root, "docs")):
        dirs.sort()
        docs.extend(os.path.join(base, n) for n in sorted(names) if n.endswith(".md"))
    doc_text = "\n".join(read(d) for d in docs)
    scripts_dir = os.path.join(root, "scripts")
    script_text = "\n".join(
        read(os.path.join(scripts_dir, n)) for n in sorted(os.listdir(scripts_dir))
        if os.path.isfile(os.path.join(scripts_dir, n)) and n != os.path.basename(__file__))
    for shot, where in sorted(saved.items()):
        if not GOOD_NAME.fullmatch(shot):
            problems.append(f"{where}: screenshot '{shot}': lower-case words joined by '-', "
                            f"ending in .png (as the docs spell them)")
        if shot not in doc_text:
            problems.append(f"{where}: screenshot '{shot}' is named nowhere in docs/")
    for doc in docs:
        if os.path.relpath(doc, root).startswith(os.path.join("docs", "results")):
            continue
        for lineno, line in enumerate(read(doc).splitlines(), 1):
            for shot in DOC_IMAGE.findall(line):
                shot = os.path.basename(shot)
                if shot not in saved and shot not in script_text:
                    problems.append(f"{os.path.relpath(doc, root)}:{lineno}: screenshots/{shot} "
                                    f"is saved by no GUI test and named by no script")
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
