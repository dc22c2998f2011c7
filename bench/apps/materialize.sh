#!/usr/bin/env bash
# Materialize the applications of bench/apps/apps.toml as plain work trees.
#
#   bench/apps/materialize.sh DEST                 # git clone from GitHub (needs network)
#   bench/apps/materialize.sh DEST SNAPSHOTS       # from local bare snapshots:
#        SNAPSHOTS/<owner>+<name>/repo (a git dir holding the pinned commit)
#   APPS_TOML=bench/testset/apps.toml bench/apps/materialize.sh DEST [SNAPSHOTS]   # another app list
#
# Each app lands in DEST/<owner>__<name>/ with only its .py/.toml/.cfg/.yaml files (what the
# linter reads), at the pinned commit, minus the app's `exclude` folders.
set -euo pipefail
dest=${1:?usage: materialize.sh DEST [SNAPSHOTS]}
snapshots=${2:-}
here=$(cd "$(dirname "$0")" && pwd)
py=${PYTHON:-python3}
mkdir -p "$dest"
"$py" - "${APPS_TOML:-$here/apps.toml}" <<'PY' |
import sys
try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    import tomli as tomllib
for app in tomllib.load(open(sys.argv[1], "rb"))["app"]:
    print(app["name"], app["repo"], app["commit"], ",".join(app.get("exclude", [])))
PY
while read -r name repo commit exclude; do
  out="$dest/$name"
  rm -rf "$out" && mkdir -p "$out"
  if [ -n "$snapshots" ]; then
    gitdir="$snapshots/${repo/\//+}/repo"
    # (a snapshot may also hold its git dir one level down: repo/.git)
    if [ -d "$gitdir/.git" ]; then gitdir="$gitdir/.git"; fi
  else
    gitdir="$dest/.git-$name"
    if [ ! -d "$gitdir" ]; then
      git clone --quiet --bare --filter=blob:limit=1m "https://github.com/$repo.git" "$gitdir"
    fi
  fi
  git --git-dir="$gitdir" cat-file -e "$commit^{commit}" || { echo "$name: commit $commit not in $gitdir" >&2; exit 1; }
  git --git-dir="$gitdir" ls-tree -r -z --name-only "$commit" \
    | grep -zE '\.(py|toml|cfg|yaml|yml)$' \
    | xargs -0 -r git --git-dir="$gitdir" archive "$commit" -- 2>"$out.archive-err" \
    | tar -x -i -C "$out"  # -i: xargs may run `git archive` more than once, one tar stream each
  # snapshots may lack large blobs (images, notebooks): git archive complains about them
  # even when they are outside the pathspec; anything else is a real error
  grep -v 'invalid object .* for ' "$out.archive-err" >&2 || true
  rm -f "$out.archive-err"
  IFS=, read -ra ex <<< "$exclude"
  for e in "${ex[@]}"; do rm -rf "${out:?}/$e"; done
  echo "$name $commit $(find "$out" -name '*.py' | wc -l) .py files"
done
