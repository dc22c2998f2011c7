#!/bin/sh
# Runs the hazard measurements of issue 21 and writes each one's output (stdout; the
# header line names the torch version and the date) to scripts/measure/out/NAME.txt.
# Torch wheels for the source checks: $TORCH_WHEELS (see measure_env.py).
#
#   scripts/measure/run_hazards.sh [NAME ...]      # default: all of them
set -eu
here=$(cd "$(dirname "$0")" && pwd)
python=${PYTHON:-python}
names=${*:-"orig_mod_checkpoint_keys hooks_after_compile graph_break_in_loop torchscript_deprecated
weights_swapped_after_compile side_effects_replay export_train_mode compile_before_ddp cl513_fixture_hooks
optimizer_float_lr_recompile inference_mode_recompile compiled_module_bool tensor_assert_compiled
lazy_layer_first_call"}
mkdir -p "$here/out"
for name in $names; do
    start=$(date +%s)
    "$python" "$here/$name.py" > "$here/out/$name.txt" 2> "$here/out/$name.stderr" || {
        echo "$name: failed, see out/$name.stderr" >&2; exit 1; }
    rm -f "$here/out/$name.stderr"
    echo "$name: $(($(date +%s) - start)) s: $(grep '^VERDICT' "$here/out/$name.txt" | cut -c1-100)"
done
