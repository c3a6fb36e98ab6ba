package github

import "context"

// OwnLogins returns the logins what this token writes is authored by (the
// token's user, or "<app>[bot]" for an App or GITHUB_TOKEN): a workflow run
// whose actor is one of them was caused by agent-loop itself.
func (c *Client) OwnLogins(ctx context.Context) ([]string, error) {
	logins, err := c.ownLogins(ctx)
	if err != nil {
		return nil, err
	}
	return append([]string(nil), logins...), nil
}
