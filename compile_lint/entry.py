"""The `compile-lint` script: `compile-lint server` (what an editor starts) goes straight
to the language server, without the command line's imports (click and the reports,
~0.08 s of the time to first diagnostics); every other command is cli.run()."""
import sys


def run() -> None:
    if sys.argv[1:] == ["server"]:
        from .lsp.server import main as serve

        serve()
        return
    from .cli import run as cli_run

    cli_run()
