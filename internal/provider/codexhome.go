package provider

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/pelletier/go-toml/v2"

	"github.com/aiwg/agent-loop/internal/process"
)

// codexUserConfig is the part of the user's own Codex configuration
// ($CODEX_HOME/config.toml) the harness needs to run Codex with it.
type codexUserConfig struct {
	home     string // the user's CODEX_HOME
	provider string // the model provider it selects ("" = Codex's default, openai)
	// baseURL is where that provider sends requests ("" when it is built
	// into Codex and unknown here); setBy says where it is configured.
	baseURL string
	setBy   string
	envKey  string // the variable holding its key ("" = none, or a login)
}

// userCodexConfig returns the user's Codex configuration when agentConfig
// asks for it ("user"), or allows it and it exists ("auto": CODEX_HOME is
// set, or ~/.codex holds a config.toml or a login); nil means a private
// configuration directory. env is the environment the CLI will get.
func userCodexConfig(agentConfig string, env []string) *codexUserConfig {
	if agentConfig != "user" && agentConfig != "auto" {
		return nil
	}
	home, explicit := process.Lookup(env, "CODEX_HOME")
	explicit = explicit && strings.TrimSpace(home) != ""
	if !explicit {
		h, _ := process.Lookup(env, "HOME")
		if h == "" {
			return nil
		}
		home = filepath.Join(h, ".codex")
	}
	if agentConfig == "auto" && !explicit && !exists(filepath.Join(home, "config.toml")) && !exists(filepath.Join(home, "auth.json")) {
		return nil
	}
	uc := &codexUserConfig{home: home}
	var cfg struct {
		ModelProvider string `toml:"model_provider"`
		Profile       string `toml:"profile"`
		Profiles      map[string]struct {
			ModelProvider string `toml:"model_provider"`
		} `toml:"profiles"`
		ModelProviders map[string]struct {
			BaseURL string `toml:"base_url"`
			EnvKey  string `toml:"env_key"`
		} `toml:"model_providers"`
	}
	cfgPath := filepath.Join(home, "config.toml")
	if b, err := os.ReadFile(cfgPath); err == nil {
		_ = toml.Unmarshal(b, &cfg) // Codex reports a broken file itself
	}
	uc.provider = cfg.ModelProvider
	if p, ok := cfg.Profiles[cfg.Profile]; ok && p.ModelProvider != "" {
		uc.provider = p.ModelProvider
	}
	switch p, defined := cfg.ModelProviders[uc.provider]; {
	case defined:
		uc.baseURL, uc.envKey = strings.TrimSpace(p.BaseURL), p.EnvKey
		uc.setBy = "base_url of [model_providers." + uc.provider + "] in " + cfgPath
	case uc.provider == "" || uc.provider == "openai":
		uc.baseURL, uc.setBy = "https://api.openai.com/v1", "OPENAI_BASE_URL"
		if v, _ := process.Lookup(env, "OPENAI_BASE_URL"); strings.TrimSpace(v) != "" {
			uc.baseURL = strings.TrimSpace(v)
		}
	case uc.provider == "oss" || uc.provider == "ollama":
		uc.baseURL, uc.setBy = "http://localhost:11434/v1", "CODEX_OSS_BASE_URL"
		if v, _ := process.Lookup(env, "CODEX_OSS_BASE_URL"); strings.TrimSpace(v) != "" {
			uc.baseURL = strings.TrimSpace(v)
		}
	}
	return uc
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
