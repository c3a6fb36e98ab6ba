#!/usr/bin/env bash
set -euo pipefail
mode="${1:-code}"
echo "run=true" >> "${GITHUB_OUTPUT:-/dev/stdout}"
echo "mode=${mode}"
