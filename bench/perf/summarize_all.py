# usage: summarize_all.py DIR OUT.pkl  (every .py under DIR summarized, pickled for resolve_sites.py)
import os, sys, pickle, time
from compile_lint.lint_file import parse_file
from compile_lint.source import source_for
from compile_lint.config import Settings
root = sys.argv[1]; out = sys.argv[2]
files = sorted(os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs if f.endswith(".py"))
settings = Settings(root=root)
sums = []
t = time.perf_counter()
for p in files:
    with open(p, "rb") as fh: data = fh.read()
    item = parse_file(source_for(p, data), settings)
    if item.summary is not None: sums.append(item.summary)
print("summarize", len(files), time.perf_counter() - t, file=sys.stderr)
pickle.dump(sums, open(out, "wb"))
