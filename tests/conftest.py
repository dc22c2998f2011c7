import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


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
