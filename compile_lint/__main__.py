import sys

from .cli import main, run

# `python -m compile_lint` is the whole process: run() may end it without the
# interpreter's teardown. Run from other code (runpy.run_module), this module's
# namespace is not __main__'s: main() raises SystemExit to that code as usual.
if vars(sys.modules["__main__"]) is globals():
    run()
else:
    main()
