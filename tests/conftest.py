import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(autouse=True)
def _fresh_config_cache():
    from compile_lint import config, discovery

    config.clear_cache()
    discovery._git_root.cache_clear()
    discovery._gitignore_spec.cache_clear()
    yield
