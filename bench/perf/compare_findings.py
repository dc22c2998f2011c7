# usage: compare_findings.py BASE_OUT NEW_OUT  (folders written by ruff_vs_check.sh; the base one has M.json)
import json, sys, os, glob
def load(p):
    try: d=json.load(open(p))
    except Exception as e: return None
    if isinstance(d, dict): d = d.get("findings", d.get("results", d))
    out=[]
    for f in d:
        out.append(json.dumps({k: f.get(k) for k in sorted(f) if k not in ("url",)}, sort_keys=True))
    return sorted(out)
base, new = sys.argv[1], sys.argv[2]
pairs=[("M.json","M_1.json")]+[(os.path.basename(p),os.path.basename(p)) for p in sorted(glob.glob(base+"/app_*.json"))]
for b,n in pairs:
    B=load(os.path.join(base,b)); N=load(os.path.join(new,n))
    if B is None or N is None: print(b, "missing", B is None, N is None); continue
    sb,sn=set(B),set(N)
    status="EQUAL" if B==N else f"DIFF -{len(sb-sn)} +{len(sn-sb)}"
    print(f"{b}: {len(B)} vs {len(N)} {status}")
    if B!=N:
        for x in sorted(sb-sn)[:5]: print("  only base:", x[:300])
        for x in sorted(sn-sb)[:5]: print("  only new :", x[:300])
