#!/usr/bin/env python3
"""CPU time of the per-file region summary (analysis.reach.regions.summarize, which builds the
value model's terms) relative to `ast.parse`, for one checkout.

    python bench/summarize_cost.py CHECKOUT [FILES_GLOB] [--limit N]

Run it for two checkouts (e.g. main and a branch) one after the other, twice each: the
ratio summarize/parse is what to compare (absolute times drift with machine load).
"""
import argparse
import ast
import glob
import sys
import time


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("checkout")
    parser.add_argument("files", nargs="?", default="/work/corpus/src/diffusers-0.42.1/**/*.py")
    parser.add_argument("--limit", type=int, default=400)
    args = parser.parse_args()
    sys.path.insert(0, args.checkout)
    from compile_lint.analysis.semantic.names import NameTable, module_name_for
    from compile_lint.analysis.reach.regions import summarize
    from compile_lint.analysis.semantic.walk import walk

    files = sorted(glob.glob(args.files, recursive=True))[: args.limit]
    items = []
    for path in files:
        tree = ast.parse(open(path, "rb").read())
        module, is_package = module_name_for(path)
        items.append((tree, NameTable.build(tree, module, is_package, walk(tree)), path))
    t = time.process_time()
    for tree, names, path in items:
        summarize(tree, names, path)
    spent = time.process_time() - t
    t = time.process_time()
    for path in files:
        ast.parse(open(path, "rb").read())
    parse = time.process_time() - t
    print(f"{args.checkout}: {len(files)} files, summarize {spent:.2f} s, parse {parse:.2f} s, ratio {spent / parse:.2f}")


if __name__ == "__main__":
    main()
