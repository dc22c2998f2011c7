"""`python -m compile_lint.verify [PATHS]`, the same as `compile-lint verify`."""
from .command import verify_command

if __name__ == "__main__":
    verify_command(prog_name="python -m compile_lint.verify")
