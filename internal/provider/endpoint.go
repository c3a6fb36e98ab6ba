package provider

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"golang.org/x/net/http/httpproxy"

	"github.com/aiwg/agent-loop/internal/process"
)

// endpoint is where a CLI sends its model requests, and what sets it.
type endpoint struct {
	url string
	// setBy names what to change to point the CLI elsewhere: a variable
	// (ANTHROPIC_BASE_URL) or a configuration entry.
	setBy string
}

// endpointVars are the variables that point each CLI at a proxy or
// gateway, with the address the CLI uses without them.
var endpointVars = map[string]struct{ variable, fallback string }{
	"claude": {"ANTHROPIC_BASE_URL", "https://api.anthropic.com"},
	"codex":  {"OPENAI_BASE_URL", "https://api.openai.com/v1"},
	"gemini": {"GOOGLE_GEMINI_BASE_URL", "https://generativelanguage.googleapis.com"},
	"droid":  {"FACTORY_API_BASE_URL", "https://api.factory.ai"},
}

// endpoints returns the model APIs this provider's CLI will call with env,
// as far as they are known (nil: unknown, nothing to check).
func (b *cliBase) endpoints(env []string) []endpoint {
	pick := func(variable, fallback string) endpoint {
		if v, _ := process.Lookup(env, variable); strings.TrimSpace(v) != "" {
			return endpoint{url: strings.TrimSpace(v), setBy: variable}
		}
		return endpoint{url: fallback, setBy: variable}
	}
	switch b.name {
	case "codex":
		if uc := userCodexConfig(b.cfg.AgentConfig, env); uc != nil {
			if uc.baseURL == "" {
				return nil // a provider built into Codex this harness does not know
			}
			return []endpoint{{url: uc.baseURL, setBy: uc.setBy}}
		}
	case "gemini":
		if v, _ := process.Lookup(env, "GOOGLE_GEMINI_BASE_URL"); v == "" && b.cfg.Credentials["GEMINI_API_KEY"] == "" && b.cfg.Credentials["GOOGLE_API_KEY"] != "" {
			return []endpoint{pick("GOOGLE_VERTEX_BASE_URL", "https://aiplatform.googleapis.com")}
		}
	case "opencode":
		// opencode calls the API of the model's provider ("openai/gpt-5");
		// without one, of a provider it was given a key for.
		prefix, _, _ := strings.Cut(b.cfg.Model, "/")
		var out []endpoint
		if prefix == "anthropic" || prefix == "" && b.cfg.Credentials["ANTHROPIC_API_KEY"] != "" {
			out = append(out, pick("ANTHROPIC_BASE_URL", "https://api.anthropic.com"))
		}
		if prefix == "openai" || prefix == "" && b.cfg.Credentials["OPENAI_API_KEY"] != "" {
			out = append(out, pick("OPENAI_BASE_URL", "https://api.openai.com/v1"))
		}
		return out
	}
	if e, ok := endpointVars[b.name]; ok {
		return []endpoint{pick(e.variable, e.fallback)}
	}
	return nil
}

// reachTimeout bounds the check of one endpoint.
const reachTimeout = 8 * time.Second

// checkReachable asks each endpoint once (a HEAD request that carries no
// key), through the proxy env names
// (HTTPS_PROXY, NO_PROXY): any HTTP answer, even 401 or 404, is a server
// that answers. A connection that cannot be made is an UnreachableError,
// so a loop does not start an agent that would wait for the network until
// its idle timeout.
func (b *cliBase) checkReachable(ctx context.Context, env []string) error {
	// Several endpoints are alternatives (opencode without a model): one
	// that answers is enough.
	var errs []error
	for _, ep := range b.endpoints(env) {
		err := reach(ctx, ep.url, env)
		if err == nil {
			return nil
		}
		errs = append(errs, &UnreachableError{Provider: b.name, URL: ep.url, SetBy: ep.setBy, Err: err})
	}
	return errors.Join(errs...)
}

// reach sends one HEAD request to rawURL, without credentials, and returns
// why no answer came.
func reach(ctx context.Context, rawURL string, env []string) error {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%q is not an http(s) address", rawURL)
	}
	get := func(k string) string {
		if v, ok := process.Lookup(env, k); ok {
			return v
		}
		v, _ := process.Lookup(env, strings.ToLower(k))
		return v
	}
	proxy := (&httpproxy.Config{HTTPProxy: get("HTTP_PROXY"), HTTPSProxy: get("HTTPS_PROXY"), NoProxy: get("NO_PROXY")}).ProxyFunc()
	client := &http.Client{
		Timeout: reachTimeout,
		Transport: &http.Transport{
			Proxy:                 func(r *http.Request) (*url.URL, error) { return proxy(r.URL) },
			DialContext:           (&net.Dialer{Timeout: reachTimeout}).DialContext,
			TLSHandshakeTimeout:   reachTimeout,
			ResponseHeaderTimeout: reachTimeout,
			DisableKeepAlives:     true,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodHead, rawURL, nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err == nil {
		resp.Body.Close()
		return nil
	}
	// A certificate the harness does not trust is still a server that
	// answers (the CLI may have its own CA bundle).
	var cv *tls.CertificateVerificationError
	if errors.As(err, &cv) {
		return nil
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// UnreachableError says a provider's model API cannot be reached.
type UnreachableError struct {
	Provider, URL string
	// SetBy is the variable or configuration entry that sets URL.
	SetBy string
	Err   error
}

func (e *UnreachableError) Error() string {
	return fmt.Sprintf("%s provider: the model API at %s is unreachable (%v): check the network, or set %s to the "+
		"proxy or gateway that serves it (an outbound HTTP proxy goes in HTTPS_PROXY)", e.Provider, e.URL, e.Err, e.SetBy)
}

func (e *UnreachableError) Unwrap() error { return e.Err }
