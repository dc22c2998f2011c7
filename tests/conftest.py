import importlib.util
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# a file with one safe-fixable finding (CL503) and a look-alike without it
HAZARD = "import torch\nmodel = Net()\ntorch.compile(model)\n"
CLEAN = "import torch\nmodel = torch.compile(Net())\n"


def measure_script(name: str):
    """scripts/measure/<name>.py loaded as a module: the measurement a test reruns on the
    pinned torch (the script's own `__main__` part does not run)."""
    spec = importlib.util.spec_from_file_location(name, os.path.join(ROOT, "scripts", "measure", f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run(*args, cwd, stdin=None):
    """The real command line, as a user runs it, in `cwd`."""
    return subprocess.run(
        [sys.executable, "-m", "compile_lint", *args],
        capture_output=True, text=True, cwd=str(cwd), input=stdin,
    )


@pytest.fixture
def project(tmp_path):
    (tmp_path / "bad.py").write_text(HAZARD)
    (tmp_path / "good.py").write_text(CLEAN)
    return tmp_path


def pytest_addoption(parser):
    parser.addoption(
        "--update-golden",
        action="store_true",
        help="Rewrite the expected files of fixtures/rules/ (tests/test_golden.py) from the current output.",
    )


@pytest.fixture
def update_golden(request) -> bool:
    return bool(request.config.getoption("--update-golden"))


@pytest.fixture(autouse=True)
def _fresh_config_cache():
    from compile_lint import config, discovery

    config.clear_cache()
    discovery._git_root.cache_clear()
    discovery._gitignore_spec.cache_clear()
    yield
