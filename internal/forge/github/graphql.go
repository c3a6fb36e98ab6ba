package github

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// graphqlError is one entry of a GraphQL answer's "errors".
type graphqlError struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// graphql runs one GraphQL operation and decodes its "data" into v. A 200
// answer that carries "errors" is an error too: *PermissionError for
// FORBIDDEN, *APIError otherwise.
func (c *Client) graphql(ctx context.Context, operation, query string, variables map[string]any, v any, need ...string) error {
	ec := errorContext{endpoint: "POST /graphql (" + operation + ")", need: need}
	req, err := c.gh.NewRequest(http.MethodPost, c.graphqlURL, map[string]any{"query": query, "variables": variables})
	if err != nil {
		return fmt.Errorf("%s: %w", ec.endpoint, err)
	}
	var answer struct {
		Data   json.RawMessage `json:"data"`
		Errors []graphqlError  `json:"errors"`
	}
	if _, err := c.gh.Do(ctx, req, &answer); err != nil {
		return c.wrapErr(ec, err)
	}
	if len(answer.Errors) > 0 {
		var msgs []string
		forbidden := false
		for _, e := range answer.Errors {
			msgs = append(msgs, c.redact(e.Message))
			if e.Type == "FORBIDDEN" || strings.Contains(strings.ToLower(e.Message), "resource not accessible") {
				forbidden = true
			}
		}
		msg := strings.Join(msgs, "; ")
		if forbidden {
			return &PermissionError{Need: need, Doc: PermissionsDoc, Endpoint: ec.endpoint, Message: msg}
		}
		return &APIError{Status: http.StatusOK, Endpoint: ec.endpoint, Message: msg}
	}
	if v != nil && len(answer.Data) > 0 {
		if err := json.Unmarshal(answer.Data, v); err != nil {
			return fmt.Errorf("%s: decoding the answer: %w", ec.endpoint, err)
		}
	}
	return nil
}
