#!/usr/bin/env python3
"""Checks that every relative link in README.md and docs/**/*.md resolves (issue 50).

Usage: scripts/check-doc-links.py [ROOT]   (ROOT: the repository root, default: this script's ../)

A link is a Markdown inline link or image `[text](target)` / `![alt](target)`, a reference
definition `[label]: target`, or an HTML `href="..."` / `src="..."`, outside fenced code blocks
and inline code spans. Links with a scheme (https:, mailto:, ...) are not checked. A relative
target must name a file or folder inside ROOT (resolved from the linking file's folder, or from
ROOT for a target starting with '/'); its `#anchor`, where the target is a Markdown file (or the
anchor is the file's own, `#anchor`), must be one of that file's headings as GitHub names them
(lower case, punctuation but '-' and '_' dropped, spaces as '-', repeats suffixed -1, -2, ...)
or an explicit `id="..."` / `name="..."`. Prints FILE:LINE: message per broken link; exits 1 if
any, 0 if none, 2 on a usage error.
"""
import os
import re
import sys
import urllib.parse

FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
INLINE_CODE = re.compile(r"(`+)(?:(?!\1).)+?\1")
# [text](target "title") and ![alt](target); the text may hold one level of brackets.
INLINE_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*(<[^>]*>|[^)\s]+)(?:\s+(?:\"[^\"]*\"|'[^']*'|\([^)]*\)))?\s*\)")
REF_DEF = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)")
HTML_ATTR = re.compile(r"\b(?:href|src)\s*=\s*\"([^\"]*)\"")
HTML_ID = re.compile(r"\b(?:id|name)\s*=\s*\"([^\"]*)\"")
HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


def doc_files(root):
    files = []
    readme = os.path.join(root, "README.md")
    if os.path.isfile(readme):
        files.append(readme)
    for base, dirs, names in os.walk(os.path.join(root, "docs")):
        dirs.sort()
        files.extend(os.path.join(base, n) for n in sorted(names) if n.endswith(".md"))
    return files


def prose_lines(path, keep_code=False):
    """(line number, text) of the lines outside fenced code blocks, inline code removed unless
    keep_code (a heading's code span is part of its anchor)."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    fence = None
    for number, line in enumerate(lines, 1):
        m = FENCE.match(line)
        if fence:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence):
                fence = None
            continue
        if m:
            fence = m.group(1)
            continue
        yield number, line if keep_code else INLINE_CODE.sub("", line)


def slug(heading):
    """GitHub's anchor of a heading's text."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # links: their text
    text = re.sub(r"<[^>]+>", "", text)  # inline HTML
    text = text.replace("`", "").replace("*", "")
    text = text.strip().lower()
    text = "".join(c for c in text if c.isalnum() or c in " -_")
    return text.replace(" ", "-")


_anchor_cache = {}


def anchors(path):
    if path not in _anchor_cache:
        seen = {}
        found = set()
        for _, line in prose_lines(path, keep_code=True):
            found.update(HTML_ID.findall(INLINE_CODE.sub("", line)))
            m = HEADING.match(line)
            if not m:
                continue
            base = slug(m.group(2))
            n = seen.get(base, 0)
            seen[base] = n + 1
            found.add(base if n == 0 else f"{base}-{n}")
        _anchor_cache[path] = found
    return _anchor_cache[path]


def check_target(root, path, target):
    """None if the target resolves, else why not."""
    if target.startswith("<") and target.endswith(">"):
        target = target[1:-1]
    if not target or SCHEME.match(target) or target.startswith("//"):
        return None
    target, _, fragment = target.partition("#")
    target = target.partition("?")[0]
    target = urllib.parse.unquote(target)
    fragment = urllib.parse.unquote(fragment)
    if target:
        base = root if target.startswith("/") else os.path.dirname(path)
        resolved = os.path.normpath(os.path.join(base, target.lstrip("/")))
        if os.path.relpath(resolved, root).startswith(os.pardir):
            return "points outside the repository"
        if not os.path.exists(resolved):
            return "no such file or folder: " + os.path.relpath(resolved, root)
    else:
        resolved = path
    if fragment and resolved.endswith(".md") and os.path.isfile(resolved):
        if fragment not in anchors(resolved):
            return "no heading or id '#%s' in %s" % (fragment, os.path.relpath(resolved, root))
    return None


def main(argv):
    if len(argv) > 2 or (len(argv) == 2 and argv[1] in ("-h", "--help")):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    root = os.path.abspath(argv[1] if len(argv) == 2 else os.path.join(os.path.dirname(__file__), os.pardir))
    if not os.path.isdir(root):
        print("check-doc-links: %s is not a folder" % root, file=sys.stderr)
        return 2
    files = doc_files(root)
    broken = links = 0
    for path in files:
        for number, line in prose_lines(path):
            targets = [m.group(1) for m in INLINE_LINK.finditer(line)] + HTML_ATTR.findall(line)
            m = REF_DEF.match(line)
            if m:
                targets.append(m.group(1))
            for target in targets:
                links += 1
                why = check_target(root, path, target)
                if why:
                    broken += 1
                    print("%s:%d: broken link '%s': %s" % (os.path.relpath(path, root), number, target, why))
    print("check-doc-links: %d files, %d links, %d broken" % (len(files), links, broken))
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
