"""CL204's notion of where a bounded raise reaches no other program: a script (its
launch read at import or under its `__main__` guard) or an application's module (no
package declared at its root). What the rule reads of the project root (pyproject.toml,
setup.cfg) is a cache dependency: editing it re-checks the file."""
import textwrap

from compile_lint.cache import CACHE_DIR, ResultsCache
from compile_lint.config import Settings
from compile_lint.engine import Linter, Selection

HDIT = """\
import torch

torch._dynamo.config.cache_size_limit = max(64, torch._dynamo.config.cache_size_limit)
"""


def write(root, files):
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


def lint(root, cache=True):
    settings = Settings(root=str(root))
    linter = Linter(lambda _p: settings, Selection(select=("CL204",)),
                    cache=ResultsCache(str(root)) if cache else None)
    paths = sorted(str(p) for p in root.rglob("*.py") if CACHE_DIR not in p.parts)
    return sorted((r.path, f.start.row) for r in linter.lint(paths) for f in r.findings)


def test_declaring_a_package_makes_a_bounded_raise_reach_importers(tmp_path):
    write(tmp_path, {"pyproject.toml": "[tool.ruff]\nline-length = 100\n", "models/__init__.py": "",
                     "models/hdit.py": HDIT, "train.py": "import models.hdit\n"})
    assert lint(tmp_path) == []  # an application: only its own train.py imports the module
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'models'\n\n[tool.ruff]\nline-length = 100\n")
    found = lint(tmp_path)
    assert found == lint(tmp_path, cache=False) == [(str(tmp_path / "models/hdit.py"), 3)]
    (tmp_path / "pyproject.toml").write_text("[tool.ruff]\nline-length = 100\n")
    assert lint(tmp_path) == lint(tmp_path, cache=False) == []


def test_an_installed_distribution_is_a_library(tmp_path):
    write(tmp_path, {"vision-1.0.dist-info/METADATA": "Name: vision\n", "vision/__init__.py": "", "vision/hdit.py": HDIT})
    assert lint(tmp_path, cache=False) == [(str(tmp_path / "vision/hdit.py"), 3)]


def test_a_demo_guard_does_not_make_a_library_module_a_script(tmp_path):
    demo = HDIT + "\nif __name__ == '__main__':\n    print(torch.randn(2))\n"
    launch = HDIT + "\nif __name__ == '__main__':\n    import sys\n    print(sys.argv)\n"
    runs_main = HDIT + "\ndef main():\n    import argparse\n    argparse.ArgumentParser().parse_args()\n\nif __name__ == '__main__':\n    main()\n"
    write(tmp_path, {"setup.py": "", "lib/__init__.py": "", "lib/demo.py": demo, "lib/launch.py": launch,
                     "lib/runs_main.py": runs_main})
    assert lint(tmp_path, cache=False) == [(str(tmp_path / "lib/demo.py"), 3)]


def test_a_guard_running_a_cli_runner_makes_a_script(tmp_path):
    fire_script = HDIT + "\nimport fire\n\ndef main(steps=1):\n    pass\n\nif __name__ == '__main__':\n    fire.Fire(main)\n"
    typer_script = HDIT + "\nimport typer\n\ndef main(steps: int = 1):\n    pass\n\nif __name__ == '__main__':\n    typer.run(main)\n"
    write(tmp_path, {"setup.py": "", "lib/__init__.py": "", "lib/fire_cli.py": fire_script, "lib/typer_cli.py": typer_script})
    assert lint(tmp_path, cache=False) == []
