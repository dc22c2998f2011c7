"""Check a `compile-lint verify --device cuda` report of scripts/gpu_verify.toml's targets:
CL401-CL403 must be confirmed on CUDA, the clean compositor must pass in every mode
(max-autotune included), the clean conv nets (fixtures/verify/clean) must pass forward
and gradients. Statuses: pass, diverged, could-not-check (a tool limit, e.g. a timeout),
error (the code failed), not-run (interrupted), skipped. Prints what was measured; exits
1 on a mismatch.

    python scripts/gpu_verify_check.py verify-gpu/report.json
"""
import json
import sys

EXPECTED = {
    # target name: (check, status, confirmed code)
    "ToneMap": ("held-outputs", "diverged", "CL401"),
    "Upscaler": ("cudagraph-sizes", "diverged", "CL402"),
    "normalize_": ("input-mutation", "diverged", "CL403"),
}


def main(path: str) -> int:
    with open(path, encoding="utf-8") as fh:
        report = json.load(fh)
    problems = []
    if report["device"] != "cuda":
        problems.append(f"the report is from {report['device']}, not cuda")
    by_name = {t["target"].rsplit(":", 1)[1]: t for t in report["targets"]}
    for name, target in sorted(by_name.items()):
        print(f"{target['status']:13} {name}: confirmed {target['confirmed']} cleared {target['cleared']}")
        for worker in target.get("workers", []):  # where each worker's seconds went
            print(f"    worker {worker['stage']}: {worker['wall_s']} s (ready {worker['ready_s']}, "
                  f"baselines {worker['baselines_s']}, checks {worker['checks_s']})")
        for check in target["checks"]:
            print(f"    {check['status']:13} {check['name']} {check['mode'] or ''} {check['dtype'] or ''} "
                  f"{check['shape'] or ''}: {check['message'] or check['verdict']}"[:240])
    for name, (check_name, status, code) in EXPECTED.items():
        target = by_name.get(name)
        checks = [c for c in (target or {}).get("checks", []) if c["name"] == check_name]
        if not checks or checks[0]["status"] != status or code not in checks[0]["confirms"]:
            problems.append(f"{name}: expected {check_name} {status} confirming {code}, got "
                            f"{[(c['status'], c['confirms'], c['message']) for c in checks] or 'no such check'}")
    for name in ("StyleNet", "FlowInterpolator", "DenseUpscaler"):
        target = by_name.get(name, {})
        ran = {c["name"] for c in target.get("checks", []) if c["status"] == "pass"}
        if target.get("status") != "pass" or not {"forward", "gradients"} <= ran:
            problems.append(f"{name}: expected pass in forward and gradients, got {target.get('status')}: "
                            f"{[(c['name'], c['status'], c['message'][:120]) for c in target.get('checks', []) if c['status'] != 'pass']}")
    for name, target in sorted(by_name.items()):
        if target["status"] in ("not-run", "could-not-check"):
            problems.append(f"{name}: {target['status']} (the GPU run did not finish it)")
    compositor = by_name.get("Compositor", {})
    modes = {c["mode"] for c in compositor.get("checks", []) if c["name"] == "forward" and c["status"] == "pass"}
    if compositor.get("status") != "pass" or "max-autotune" not in modes:
        problems.append(f"Compositor: expected a pass in every mode incl. max-autotune, got {compositor.get('status')} "
                        f"with passing modes {sorted(modes)}")
    for problem in problems:
        print(f"MISMATCH: {problem}")
    print("gpu verify: " + ("ok" if not problems else f"{len(problems)} mismatch(es)"))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
