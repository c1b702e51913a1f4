#!/usr/bin/env bash
# Build the documentation site into docs/_build/html, warnings as errors.
#   pip install "./robot_dynamics[docs]" && bash docs/build.sh
# The tutorials in docs/tutorials_src run during the build: one that fails fails the build.
set -euo pipefail
cd "$(dirname "$0")"
export MPLBACKEND=Agg PYTHONWARNINGS="${PYTHONWARNINGS:-}"
rm -rf _build/html _build/doctrees tutorials
python -m sphinx -W --keep-going -b html -d _build/doctrees . _build/html "$@"
echo "site built: $(pwd)/_build/html/index.html"
