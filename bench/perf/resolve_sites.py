# usage: resolve_sites.py SUMMARIES.pkl OUT.json PATH_PART  (sites of the files whose path has PATH_PART, resolved by the index of those files only)
import sys, pickle, time, json
from compile_lint.analysis.reach.regions import ProjectIndex
sums = [s for s in pickle.load(open(sys.argv[1], "rb")) if sys.argv[3] in s.path]
t = time.perf_counter()
index = ProjectIndex(sums)
sites = [(s.path, s.row, s.api, sorted(e[0] for e in entries), why) for s, entries, why in index.resolved_sites()]
print("sites", len(sites), time.perf_counter() - t, file=sys.stderr)
json.dump(sites, open(sys.argv[2], "w"), indent=0)
