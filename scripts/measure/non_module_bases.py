"""The classes of some folders whose base is a class of a package known to build on torch
that is no module (a dataset, a callback, a scheduler, a pipeline, a configuration, a
tokenizer, a trainer: `compile_lint/analysis/modules/classes.py` NON_MODULE_PARTS and
NON_MODULE_SUFFIXES), and the judged findings that fall inside them.

    python scripts/measure/non_module_bases.py FOLDER [FOLDER ...] [--verdicts bench/fresh_reads/verdicts.jsonl --apps /work/y/fresh]

Bases are read from the file's own imports (`from torchvision.datasets.vision import
VisionDataset`, `import diffusers` then `diffusers.DiffusionPipeline`); a class whose base
is re-exported by a project module is not counted. Prints one line per class, then the
findings of the verdicts file (an app is `owner__name` under --apps) inside those classes.
"""
from __future__ import annotations

import argparse
import ast
import collections
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
from compile_lint.analysis.modules.classes import TORCH_MODEL_PACKAGES, is_non_module_class_of_torch_package  # noqa: E402


def imported_names(tree: ast.Module) -> dict:
    names = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                names[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                names[alias.asname or alias.name.split(".")[0]] = alias.name if alias.asname else alias.name.split(".")[0]
    return names


def dotted_base(base: ast.expr, names: dict):
    parts = []
    while isinstance(base, ast.Attribute):
        parts.append(base.attr)
        base = base.value
    if isinstance(base, ast.Name) and base.id in names:
        return ".".join([names[base.id]] + parts[::-1])
    return None


def classes(folders):
    for folder in folders:
        for root, _dirs, files in os.walk(folder, followlinks=True):
            for name in files:
                if not name.endswith(".py"):
                    continue
                path = os.path.join(root, name)
                try:
                    with open(path, encoding="utf-8", errors="replace") as fh:
                        tree = ast.parse(fh.read())
                except (SyntaxError, ValueError):
                    continue
                names = imported_names(tree)
                for node in ast.walk(tree):
                    if isinstance(node, ast.ClassDef):
                        for base in node.bases:
                            dotted = dotted_base(base, names)
                            if dotted and dotted.startswith(TORCH_MODEL_PACKAGES) and is_non_module_class_of_torch_package(dotted):
                                yield os.path.abspath(path), node.name, node.lineno, node.end_lineno, dotted


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folders", nargs="+")
    parser.add_argument("--verdicts", help="a verdicts.jsonl (repo, path, row, code, verdict)")
    parser.add_argument("--apps", help="the folder holding one owner__name folder per app of the verdicts")
    args = parser.parse_args()
    found = collections.defaultdict(list)
    count = 0
    for path, name, first, last, dotted in classes(args.folders):
        print(f"{path}:{first} {name}({dotted})")
        found[path].append((first, last, name))
        count += 1
    print(f"{count} classes")
    if args.verdicts and args.apps:
        inside = 0
        with open(args.verdicts) as fh:
            for line in fh:
                verdict = json.loads(line)
                path = os.path.abspath(os.path.join(args.apps, verdict["repo"].replace("/", "__"), verdict["path"]))
                for first, last, name in found.get(path, ()):
                    if first <= verdict["row"] <= last:
                        inside += 1
                        print(f"  {verdict['code']} {verdict['verdict']} {path}:{verdict['row']} in {name}")
        print(f"{inside} judged findings inside them")
    return 0


if __name__ == "__main__":
    sys.exit(main())
