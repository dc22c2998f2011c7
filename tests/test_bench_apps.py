"""The real-application benchmark's truth files and its site-by-site comparison."""
from __future__ import annotations

import importlib.util
import os
import re
import sys

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    import tomli as tomllib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
APPS_DIR = os.path.join(ROOT, "bench", "apps")


def _load(name: str, path: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


resolution = _load("region_resolution", os.path.join(ROOT, "bench", "region_resolution.py"))


def _toml(name: str) -> dict:
    with open(os.path.join(APPS_DIR, name), "rb") as fh:
        return tomllib.load(fh)


def test_every_label_names_a_pinned_app_and_one_kind_of_truth():
    apps = {app["name"]: app for app in _toml("apps.toml")["app"]}
    assert all(re.fullmatch(r"[0-9a-f]{40}", app["commit"]) for app in apps.values())
    truth = _toml("sites.toml")
    seen = set()
    for site in truth["site"]:
        assert site["app"] in apps, site
        assert ("expected" in site) != ("external" in site), site
        key = (site["app"], site["path"], site["line"])
        assert key not in seen, f"labelled twice: {key}"
        seen.add(key)
        for target in site.get("expected", []) + site.get("also_ok", []):
            assert re.fullmatch(r"[\w./-]+\.py:[\w.]+", target), target
    for non_site in truth.get("non_site", []):
        assert non_site["app"] in apps and non_site["why"]


def test_judged_findings_have_a_verdict_and_a_reason():
    apps = {app["name"]: app["commit"] for app in _toml("apps.toml")["app"]}
    for finding in _toml("judged_region_findings.toml")["finding"]:
        assert finding["verdict"] in ("true", "latent", "false"), finding
        assert finding["why"] and finding["text"], finding
        assert apps[finding["app"]] == finding["commit"], finding
        assert re.fullmatch(r"CL[1-4]\d\d", finding["code"]), finding


def _found(path, row, targets, api="torch.compile"):
    return resolution.Found(path, row, api, targets, None if targets else "no target")


def test_a_class_and_its_forward_are_one_target_and_extra_targets_are_wrong():
    label = {"app": "a", "path": "train.py", "line": 10, "api": "torch.compile", "expected": ["model.py:Net"]}
    outcome, _ = resolution.judge(label, [_found("train.py", 10, ["model.py:Net.forward"])])
    assert outcome.verdict == "correct"
    outcome, _ = resolution.judge(label, [_found("train.py", 10, ["model.py:Net", "model.py:build"])])
    assert outcome.verdict == "wrong"
    outcome, _ = resolution.judge(label, [_found("train.py", 11, [])])
    assert outcome.verdict == "unresolved"
    outcome, _ = resolution.judge(label, [_found("other.py", 10, ["model.py:Net"])])
    assert outcome.verdict == "unresolved" and outcome.reason == "no site recorded"


def test_a_decorator_site_may_be_recorded_at_the_def_and_twice():
    label = {"app": "a", "path": "m.py", "line": 5, "api": "torch.compile", "expected": ["m.py:f"]}
    found = [_found("m.py", 5, []), _found("m.py", 6, ["m.py:f"])]
    outcome, used = resolution.judge(label, found)
    assert outcome.verdict == "correct" and len(used) == 1


def test_a_site_on_another_labelled_line_is_not_borrowed():
    label = {"app": "a", "path": "g.py", "line": 338, "api": "torch.compile", "expected": ["g.py:fwd"]}
    found = [_found("g.py", 338, []), _found("g.py", 341, ["g.py:decode"])]
    outcome, _ = resolution.judge(label, found, frozenset({338, 341}))
    assert outcome.verdict == "unresolved"


def test_external_sites_and_also_ok_branches():
    label = {"app": "a", "path": "x.py", "line": 3, "api": "torch.jit.trace", "external": "unpickled",
             "also_ok": ["models.py:Ensemble"]}
    assert resolution.judge(label, [_found("x.py", 3, [])])[0].verdict == "external-ok"
    assert resolution.judge(label, [_found("x.py", 3, ["models.py:Ensemble"])])[0].verdict == "external-ok"
    assert resolution.judge(label, [_found("x.py", 3, ["models.py:load"])])[0].verdict == "external-wrong"
    partial = {"app": "a", "path": "x.py", "line": 3, "api": "torch.onnx.export",
               "expected": ["models.py:End2End"], "also_ok": ["models.py:Ensemble"]}
    assert resolution.judge(partial, [_found("x.py", 3, ["models.py:Ensemble"])])[0].verdict == "wrong"
    both = ["models.py:End2End", "models.py:Ensemble"]
    assert resolution.judge(partial, [_found("x.py", 3, both)])[0].verdict == "correct"
    # the allowed branch and "something unseen" (the unpickled model): true, incomplete
    unseen = resolution.Found("x.py", 3, "torch.onnx.export", ["models.py:Ensemble"], "`torch.load()` ...", partial=True)
    assert resolution.judge(partial, [unseen])[0].verdict == "partial"
    # an unseen member does not excuse a target the label does not allow
    unseen.targets = ["models.py:Ensemble", "models.py:load"]
    assert resolution.judge(partial, [unseen])[0].verdict == "wrong"


def test_wrapper_call_sites_count_for_the_wrapped_site():
    label = {"app": "a", "path": "util.py", "line": 7, "api": "torch.compile",
             "expected": ["vae.py:VAE", "gen.py:Gen"], "via": ["train.py:20", "train.py:21"]}
    found = [_found("util.py", 7, []), _found("train.py", 20, ["vae.py:VAE"]), _found("train.py", 21, ["gen.py:Gen"])]
    outcome, used = resolution.judge(label, found)
    assert outcome.verdict == "correct" and len(used) == 3


def test_nested_qualnames_compare_without_locals():
    assert resolution.norm_target("a/b.py:f.<locals>.g") == resolution.norm_target("a/b.py:f.g")
