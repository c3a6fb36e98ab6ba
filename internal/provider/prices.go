package provider

import "strings"

// Price is what a model costs, in USD per million tokens.
type Price struct {
	Input       float64 `json:"input" yaml:"input"`
	CachedInput float64 `json:"cached_input" yaml:"cached_input"` // 0: same as Input
	Output      float64 `json:"output" yaml:"output"`
}

// Prices maps a model name (or a prefix of it: the longest match wins) to
// its price. It estimates the cost for CLIs that report tokens but no cost
// (codex, gemini); such results have CostEstimated set.
type Prices map[string]Price

// DefaultPrices are public list prices (USD per million tokens) of common
// models; a model that matches none is estimated at its provider's fallback
// model (gpt-5 for codex, gemini-2.5-pro for gemini). Estimates, not bills:
// override them with Config.Prices.
func DefaultPrices() Prices {
	return Prices{
		"gpt-5":                 {Input: 1.25, CachedInput: 0.125, Output: 10},
		"gpt-5-mini":            {Input: 0.25, CachedInput: 0.025, Output: 2},
		"gpt-5-nano":            {Input: 0.05, CachedInput: 0.005, Output: 0.40},
		"gpt-5.1-codex-mini":    {Input: 0.25, CachedInput: 0.025, Output: 2},
		"gpt-4.1":               {Input: 2, CachedInput: 0.50, Output: 8},
		"gpt-4.1-mini":          {Input: 0.40, CachedInput: 0.10, Output: 1.60},
		"o3":                    {Input: 2, CachedInput: 0.50, Output: 8},
		"o4-mini":               {Input: 1.10, CachedInput: 0.275, Output: 4.40},
		"codex-mini":            {Input: 1.50, CachedInput: 0.375, Output: 6},
		"gemini-2.5-pro":        {Input: 1.25, CachedInput: 0.31, Output: 10},
		"gemini-2.5-flash":      {Input: 0.30, CachedInput: 0.075, Output: 2.50},
		"gemini-2.5-flash-lite": {Input: 0.10, CachedInput: 0.025, Output: 0.40},
		"gemini-3-pro":          {Input: 2, CachedInput: 0.20, Output: 12},
		"claude-opus-4":         {Input: 15, CachedInput: 1.50, Output: 75},
		"claude-sonnet-4":       {Input: 3, CachedInput: 0.30, Output: 15},
		"claude-haiku-4":        {Input: 1, CachedInput: 0.10, Output: 5},
	}
}

// Lookup returns the price of model: an exact entry, else the longest
// prefix, else the fallback model's.
func (p Prices) Lookup(model, fallback string) (Price, bool) {
	if pr, ok := p[model]; ok {
		return pr, true
	}
	best, bestLen := Price{}, -1
	for k, pr := range p {
		if strings.HasPrefix(model, k) && len(k) > bestLen {
			best, bestLen = pr, len(k)
		}
	}
	if bestLen >= 0 {
		return best, true
	}
	if fallback != "" && fallback != model {
		return p.Lookup(fallback, "")
	}
	return Price{}, false
}

// Cost estimates the cost of input tokens (cached of them read from the
// cache) and output tokens.
func (pr Price) Cost(input, cached, output int64) float64 {
	if cached > input {
		cached = input
	}
	cachedPrice := pr.CachedInput
	if cachedPrice == 0 {
		cachedPrice = pr.Input
	}
	return (float64(input-cached)*pr.Input + float64(cached)*cachedPrice + float64(output)*pr.Output) / 1e6
}

func (b *cliBase) prices() Prices {
	if b.cfg.Prices != nil {
		return b.cfg.Prices
	}
	return DefaultPrices()
}
