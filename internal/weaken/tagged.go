//go:build agentloop_weaken

package weaken

func init() { tagged = true }
