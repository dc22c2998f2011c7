"""`compile-lint verify`: run the code the linter flags, eagerly and compiled, and say
which findings are real.

The parent process (command, config, targets, runner, report, results) never imports
torch; each target runs in a worker process (worker, session, checks, compare, inputs,
reference, cudagraphs, artifacts) that does.
"""
