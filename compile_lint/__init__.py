"""compile-lint: find, fix and prove PyTorch code that changes meaning under
torch.compile, torch.jit.trace and torch.export.

The pipeline, one module a step:
  discovery (find files) -> source (read, parse) -> analysis (names, regions)
  -> rules (findings) -> suppression -> report (output) | fixer (rewrite via codemods/)
`verify` lives apart in compile_lint.verify and imports torch lazily.
"""

__version__ = "0.1.0"
