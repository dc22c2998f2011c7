"""Code that never runs compiled, or runs only on another torch: the eager side of
`is_compiling()` tests (`compiling`), branches for a torch without a feature
(`feature_tests`), and `except` fallbacks to an older spelling (`fallbacks`)."""
