#!/usr/bin/env python3
"""File-local names that would meet in one unity translation unit (issue 50).

Usage: scripts/unity-clashes.py BUILD/unity-targets.tsv

The manifest is written at configure time by cmake/RunplaneBuildSpeed.cmake: one line per target
built in unity batches, the target's name then its C++ sources, a leading "!" marking a file kept
out of the batches (RUNPLANE_UNITY_SKIP). For the files in the batches, every name defined at file
scope in an anonymous namespace, as a static, or as a macro is collected with universal-ctags; such
a name defined in another file of the same target too (file-local there or not) is a clash: a redefinition error at best, at worst a silent
overload or a macro reaching the next file. Each clash is printed with the target and the files;
the exit status is 1 when there is any, so that such a file is added to RUNPLANE_UNITY_SKIP instead
of being renamed. Exit status 77 (CTest's skip code) when universal-ctags is not installed.
"""
import collections
import shutil
import subprocess
import sys


def ctags_program():
    for name in ("ctags-universal", "universal-ctags", "ctags"):
        path = shutil.which(name)
        if path is None:
            continue
        version = subprocess.run([path, "--version"], capture_output=True, text=True).stdout
        if "Universal Ctags" in version:
            return path
    return None


def file_scope_names(ctags, path):
    """(names a .cpp defines at file scope that no other file can see, every name it defines at
    namespace scope whatever its linkage)."""
    out = subprocess.run(
        [ctags, "-o", "-", "--fields=+KsSzf", "--extras=-q", "--kinds-C++=+d-m-l-z",
         "--language-force=C++", path],
        capture_output=True, text=True, check=True).stdout
    names = set()
    defined = set()
    for line in out.splitlines():
        parts = line.split("\t")
        if len(parts) < 4:
            continue
        name, fields = parts[0], parts[3:]
        kind, scope, file_only = "", "", False
        for field in fields:
            if field.startswith("kind:"):
                kind = field[len("kind:"):]
            elif field == "file:":
                file_only = True
            elif field.split(":", 1)[0] in ("namespace", "function", "struct", "class", "enum",
                                            "union"):
                scope = field
        if kind == "namespace" or name.startswith("__anon"):
            continue
        last = scope.split("::")[-1] if scope else ""
        in_anonymous = scope.startswith("namespace:") and last.split(":")[-1].startswith("__anon")
        static_at_namespace_scope = file_only and not scope.startswith(
            ("function:", "struct:", "class:", "enum:", "union:"))
        if kind == "macro" or in_anonymous or static_at_namespace_scope:
            names.add(name)
        if kind != "member" and not scope.startswith(("function:", "struct:", "class:", "enum:",
                                                       "union:")):
            defined.add(name)
    return names, defined


def main(argv):
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    ctags = ctags_program()
    if ctags is None:
        print("unity-clashes: universal-ctags is not installed; nothing checked")
        return 77
    clashes = 0
    checked = 0
    with open(argv[1], encoding="utf-8") as manifest:
        for line in manifest:
            fields = line.rstrip("\n").split("\t")
            if not fields or not fields[0]:
                continue
            target, sources = fields[0], [s for s in fields[1:] if not s.startswith("!")]
            local = collections.defaultdict(list)
            anywhere = collections.defaultdict(list)
            for source in sources:
                names, defined = file_scope_names(ctags, source)
                for name in names:
                    local[name].append(source)
                for name in defined:
                    anywhere[name].append(source)
            checked += len(sources)
            for name, local_files in sorted(local.items()):
                # file-local in one file and defined (file-local or not) in another
                files = sorted(set(local_files) | set(anywhere[name]))
                if len(files) > 1:
                    clashes += 1
                    print(f"{target}: '{name}' is defined in {len(files)} files of one unity target, "
                          f"file-local in at least one: {' '.join(files)}; "
                          "list all but one in RUNPLANE_UNITY_SKIP "
                          "(cmake/RunplaneBuildSpeed.cmake)")
    print(f"unity-clashes: {checked} files in unity batches, {clashes} clash(es)")
    return 1 if clashes else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
