#!/usr/bin/env bash
# Installs the agent CLIs that agent-loop's provider tests run for real, each
# into its own project-local npm prefix (skipped when already there), links
# their binaries into one bin dir and prints that dir on the last line:
#
#   export AGENT_LOOP_CLI_BIN="$(bash .ci/install-agents.sh | tail -n1)"
#
# Every CLI ships a native binary (or a bundled script) inside its npm
# package: nothing is downloaded at run time, and each one's `--version` runs
# offline. The provider tests run Claude Code, Codex, opencode and Gemini CLI
# for real against internal/fakemodel; droid needs Factory's servers for any
# task, so only its authentication failure runs for real. The script fails
# when one of them does not install or run.
#
# Environment: AGENT_LOOP_CLI_CACHE (default $HOME/.cache/agent-loop-cli),
# AGENT_LOOP_CLI_ONLY="claude codex" to install a subset.
set -uo pipefail

cache="${AGENT_LOOP_CLI_CACHE:-$HOME/.cache/agent-loop-cli}"
bin="$cache/bin"
mkdir -p "$bin"

# name | npm package@version (pinned; bump deliberately) | binary | required
agents=(
	"claude|@anthropic-ai/claude-code@2.1.330|claude|required"
	"codex|@openai/codex@0.169.0|codex|required"
	"opencode|opencode-ai@1.18.33|opencode|required"
	"gemini|@google/gemini-cli@0.61.0|gemini|required"
	"droid|droid@0.215.0|droid|required"
)

log() { printf '%s\n' "$*" >&2; }

failed=0
for entry in "${agents[@]}"; do
	IFS='|' read -r name spec exe need <<<"$entry"
	if [[ -n "${AGENT_LOOP_CLI_ONLY:-}" && " $AGENT_LOOP_CLI_ONLY " != *" $name "* ]]; then
		continue
	fi
	prefix="$cache/${spec//\//_}"
	if [[ ! -x "$prefix/node_modules/.bin/$exe" ]]; then
		log "installing $spec into $prefix"
		rm -rf "$prefix.tmp"
		mkdir -p "$prefix.tmp"
		if npm install --prefix "$prefix.tmp" --no-audit --no-fund --loglevel=error "$spec" >&2; then
			rm -rf "$prefix"
			mv "$prefix.tmp" "$prefix"
		else
			rm -rf "$prefix.tmp"
			log "FAILED to install $spec ($need)"
			[[ $need == required ]] && failed=1
			continue
		fi
	fi
	# npm's .bin links are relative to node_modules/.bin: link to the target.
	target="$(readlink -f "$prefix/node_modules/.bin/$exe")"
	ln -sfn "$target" "$bin/$exe"
	# A smoke run: --version must work offline, within 30 s.
	if version="$(cd /tmp && timeout 30 env DISABLE_AUTOUPDATER=1 CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 \
		"$bin/$exe" --version 2>&1 </dev/null)"; then
		log "ok $name: $(printf '%s' "$version" | tail -n1)"
	else
		log "FAILED $name: '$exe --version' did not run: $(printf '%s' "$version" | tail -n3)"
		rm -f "$bin/$exe"
		[[ $need == required ]] && failed=1
	fi
done

if [[ $failed != 0 ]]; then
	log "an agent CLI did not install or run"
	exit 1
fi
printf '%s\n' "$bin"
