#!/usr/bin/env bash
# Run `compile-lint verify --device cuda` on the fixtures that need a GPU (CUDA graphs:
# CL401 held outputs, CL402 one graph per input size, CL403 mutated inputs) and check
# what it measured. Needs a CUDA build of torch and a GPU.
#
#   scripts/gpu_verify.sh [OUT_DIR [VERIFY_OPTION ...]]    # default OUT_DIR: verify-gpu
#
# Options after OUT_DIR go to verify after the script's own, so they win: e.g.
# `--budget 300` to fit a time-limited machine (what does not fit is reported not-run).
#
# Writes OUT_DIR/report.json, OUT_DIR/junit.xml, OUT_DIR/report.txt and PNGs under
# OUT_DIR/png; exits 0 when every expected hazard was confirmed, 1 otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
python=${PYTHON:-python}
out=${1:-verify-gpu}
shift $(( $# > 0 ? 1 : 0 ))
mkdir -p "$out"

if ! "$python" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)'; then
    echo "gpu_verify: this torch sees no CUDA device" >&2
    exit 2
fi

targets=()
while IFS= read -r line; do
    targets+=(--target "scripts/${line}")
done < <(sed -n 's/^target = "\(.*\)"$/\1/p' scripts/gpu_verify.toml)

# verify exits 1 because the fixtures' hazards diverge: that is what is being checked.
# --full: every compile mode (max-autotune included), not the CPU-sized default plan.
set +e
"$python" -m compile_lint.verify --device cuda --full --config scripts/gpu_verify.toml "${targets[@]}" \
    --report json --output-file "$out/report.json" --junit-xml "$out/junit.xml" --artifacts "$out/png" "$@"
status=$?
set -e
if [ "$status" -ge 2 ] && [ "$status" -lt 128 ]; then
    echo "gpu_verify: verify failed to run (exit $status)" >&2
    exit "$status"
fi
if [ "$status" -ge 128 ]; then
    echo "gpu_verify: verify was interrupted (exit $status); checking the partial report" >&2
fi
"$python" scripts/gpu_verify_check.py "$out/report.json" | tee "$out/report.txt"
