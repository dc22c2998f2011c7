"""`compile-lint record`: regions, options and input shapes taken from a real run.

recorder.py is loaded into the recorded processes (stdlib only, torch patched when the
program imports it); merge.py and command.py run in compile-lint's own process, which
never imports torch.
"""
