#!/bin/sh
# CL304's findings on corpus L, one per line (concise format), for the checkout given
# (default: this one). CL304 reports wherever code can be differentiated, not only in
# regions, so each file is linted without the project context (--no-project: only the
# related location of a finding would differ); only files mentioning `where` are read.
#
#   scripts/measure/cl304_corpus.sh [CHECKOUT] > cl304.txt      # corpus: $CORPUS_L or /work/corpus/src
set -eu
checkout=$(cd "${1:-$(dirname "$0")/../..}" && pwd)
corpus=${CORPUS_L:-/work/corpus/src}
python=${PYTHON:-python}
files=$(grep -rlE --include='*.py' 'torch\.where|\.where\(' "$corpus" | sort)
cd "$checkout"
# shellcheck disable=SC2086
PYTHONPATH="$checkout" "$python" -m compile_lint check --no-cache --no-project --select CL304 \
    --output-format concise --exit-zero $files
