#!/usr/bin/env bash
# Installs what internal/report's TestRenderedAsGitHub renders with: Debian's
# Chromium (with colour emoji and Arial-metric fonts, so the screenshots look
# like GitHub's) and the npm packages pinned by
# internal/report/testdata/render/package-lock.json (GFM, GitHub's HTML
# allowlist, GitHub's Markdown CSS, mermaid, playwright-core), installed with
# `npm ci` into a cache dir (reinstalled when the lock file changes). Prints
# the node_modules dir on the last line:
#
#   export AGENT_LOOP_RENDER_MODULES="$(bash .ci/install-render.sh | tail -n1)"
#
# Environment: AGENT_LOOP_RENDER_CACHE (default $HOME/.cache/agent-loop-render).
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf '%s\n' "$*" >&2; }

if ! command -v chromium >/dev/null; then
	log "installing Debian's chromium"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >&2
	apt-get install -y -qq --no-install-recommends chromium fonts-noto-color-emoji fonts-liberation >&2
fi
log "ok $(chromium --version 2>/dev/null | head -n1)"

src=internal/report/testdata/render
cache="${AGENT_LOOP_RENDER_CACHE:-$HOME/.cache/agent-loop-render}"
if [[ ! -d "$cache/node_modules" ]] || ! cmp -s "$src/package-lock.json" "$cache/package-lock.json"; then
	log "installing the renderer's npm packages into $cache"
	rm -rf "$cache.tmp"
	mkdir -p "$cache.tmp"
	cp "$src/package.json" "$src/package-lock.json" "$cache.tmp/"
	(cd "$cache.tmp" && npm ci --no-audit --no-fund --loglevel=error >&2)
	rm -rf "$cache"
	mv "$cache.tmp" "$cache"
fi
(cd "$cache" && node -e 'require.resolve("playwright-core"); require.resolve("mermaid/dist/mermaid.min.js")')
printf '%s\n' "$cache/node_modules"
