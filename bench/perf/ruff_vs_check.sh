#!/bin/bash
# Ruff and a cold compile-lint check back to back, twice, on corpus M (wall and CPU of
# each, load average before and after); then the findings of every app in /work/apps
# and bench/region_resolution.py, for comparing two checkouts' findings
# (bench/perf/compare_findings.py). bench/results.md, 2026-12-01 (h-perf), used it.
# usage: bench/perf/ruff_vs_check.sh CODE_DIR OUT_DIR   (CODE_DIR: an absolute checkout)
CODE=$1; OUT=$2; mkdir -p $OUT
CORPUS=${CORPUS:-$CODE/bench/.work/corpus/M/src}
PY=/work/main/.venv/bin/python
RUFF=/work/main/bench/.work/ruff-venv/bin/ruff
export PYTHONPATH=$CODE
export COMPILE_LINT_STATS=$OUT/stats.jsonl
cd "$CORPUS"
for rep in 1 2; do
  echo "rep $rep load: $(cat /proc/loadavg)" >> $OUT/times.txt
  /usr/bin/time -o $OUT/ruff_$rep.time -f "%e wall %U user %S sys" $RUFF check --select ALL --no-cache --no-respect-gitignore -q . > /dev/null 2>&1
  /usr/bin/time -o $OUT/cl_$rep.time -f "%e wall %U user %S sys" $PY -m compile_lint check --no-cache -j 2 --output-format json . > $OUT/M_$rep.json 2> $OUT/M_$rep.err
  echo "rep $rep ruff $(cat $OUT/ruff_$rep.time) | compile-lint $(cat $OUT/cl_$rep.time) | load after: $(cat /proc/loadavg)" >> $OUT/times.txt
done
echo measured >> $OUT/times.txt
for a in /work/apps/*/; do n=$(basename $a); (cd $a && COMPILE_LINT_STATS= $PY -m compile_lint check --no-cache -j 2 --output-format json . > $OUT/app_$n.json 2>$OUT/app_$n.err); done
cd $CODE && COMPILE_LINT_STATS= $PY $CODE/bench/region_resolution.py /work/apps --json $OUT/regres.json > $OUT/regres.txt 2>&1
echo done > $OUT/DONE
