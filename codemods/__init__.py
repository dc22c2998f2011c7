"""The rules' rewrites, as libcst codemods.

Each codemod rewrites the nodes where its rule reported a fixable finding. Run by
`compile-lint fix`, which passes the findings in, or by libcst's own runner:

    python -m libcst.tool codemod assign_compile_result.AssignCompileResult src/

in which case the codemod asks compile-lint for its rule's findings in each file
(detection lives only in the rule, the rewrite only here).
"""
