import sys

if sys.argv[1:] == ["server"] and vars(sys.modules["__main__"]) is globals():
    # what an editor starts: straight to the server, without the command line's
    # imports (click and the reports, ~0.08 s of the time to first diagnostics)
    from .lsp.server import main as serve

    serve()

from .cli import main, run

# `python -m compile_lint` is the whole process: run() may end it without the
# interpreter's teardown. Run from other code (runpy.run_module), this module's
# namespace is not __main__'s: main() raises SystemExit to that code as usual.
if vars(sys.modules["__main__"]) is globals():
    run()
else:
    main()
