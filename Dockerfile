# syntax=docker/dockerfile:1

# The image of the agent-loop container action: the static Go binary plus the
# agent CLIs it drives. Released action.yml files reference the image built
# from this file by digest (.github/workflows/release.yml).
#
# Base images are pinned by tag. At release, pin them by digest too
# (golang:1.26-bookworm@sha256:..., node:22-bookworm-slim@sha256:...):
# `docker buildx imagetools inspect golang:1.26-bookworm` prints it.

# --- build --------------------------------------------------------------------
# BUILDPLATFORM: the compiler runs natively and cross-compiles for each
# target platform (no emulation for the Go build).
FROM --platform=$BUILDPLATFORM golang:1.26-bookworm AS builder
ARG TARGETOS
ARG TARGETARCH
ARG VERSION=dev
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 GOOS=$TARGETOS GOARCH=$TARGETARCH \
    go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" \
    -o /out/agent-loop ./cmd/agent-loop

# --- runtime ------------------------------------------------------------------
# Node 22, not 20: @anthropic-ai/claude-code declares engines node >= 22, and
# Node 20 reached its end of life in April 2026.
FROM node:22-bookworm-slim

# The agent CLIs, pinned (update with `npm view <package> version`).
ARG CLAUDE_CODE_VERSION=2.1.330
ARG CODEX_VERSION=0.169.0
ARG GEMINI_CLI_VERSION=0.61.0
ARG OPENCODE_VERSION=1.18.33
ARG DROID_VERSION=0.215.0

# git for the harness and the agents; ca-certificates for HTTPS; the rest are
# what completion commands and agents commonly call (make, python3, curl,
# xz/unzip to fetch a toolchain in the `setup` input, ps/kill).
RUN apt-get update \
    && apt-get install -y --no-install-recommends \
       git ca-certificates curl make python3 xz-utils unzip procps openssh-client \
    && rm -rf /var/lib/apt/lists/*

RUN npm install --global --no-fund --no-audit --no-update-notifier \
       "@anthropic-ai/claude-code@${CLAUDE_CODE_VERSION}" \
       "@openai/codex@${CODEX_VERSION}" \
       "@google/gemini-cli@${GEMINI_CLI_VERSION}" \
       "opencode-ai@${OPENCODE_VERSION}" \
       "droid@${DROID_VERSION}" \
    && npm cache clean --force \
    && for cli in claude codex gemini opencode droid; do \
         command -v "$cli" >/dev/null || { echo "missing $cli" >&2; exit 1; }; \
       done

# The sandbox user: the agent, the completion command and everything they
# start run as agentloop (uid and gid 47001, no capabilities, no_new_privs),
# never as root beside the harness (internal/sandbox). Fixed ids: the
# harness finds it by name and checks it is not root; its home holds the
# agent CLIs' configuration and the caches of the completion command.
RUN groupadd --gid 47001 agentloop \
    && useradd --uid 47001 --gid 47001 --create-home --home-dir /home/agentloop \
       --shell /bin/sh --comment "agent-loop sandbox" agentloop \
    && chmod 0700 /home/agentloop

COPY --from=builder /out/agent-loop /agent-loop
# The post step's entrypoint (action.yml runs.post-entrypoint). The runner
# passes it as one word to `docker run --entrypoint` and appends runs.args to
# every stage, so the binary tells post from main by argv[0].
RUN ln -s /agent-loop /agent-loop-post

# IS_SANDBOX=1: Claude Code refuses --dangerously-skip-permissions when run
# as root unless told it is in a sandbox. This container is one: it is
# created for one step of one job and discarded, and it must run as root
# (GitHub runs container actions without --user and mounts the workspace
# owned by the runner's user; see the chown back at the end of a loop).
# The agents' auto-updaters and telemetry are off: the versions above are
# the ones tested, and the job may have no outbound network beyond the APIs.
ENV IS_SANDBOX=1 \
    DISABLE_AUTOUPDATER=1 \
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 \
    NO_UPDATE_NOTIFIER=1 \
    NPM_CONFIG_UPDATE_NOTIFIER=false

# No USER: GitHub requires container actions to run as root. The harness
# stays root (it must write the workspace and the workflow command files,
# and end every process of the sandbox user); the agent never is.
# Exec form and no init wrapper (no tini, no shell): a /bin/sh entrypoint
# would drop the INPUT_* variables whose names contain hyphens, and the
# binary handles SIGINT/SIGTERM itself (stop the agent, save the state).
ENTRYPOINT ["/agent-loop"]
