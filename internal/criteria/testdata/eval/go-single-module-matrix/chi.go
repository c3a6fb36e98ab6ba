// Package chi is a small, idiomatic and composable router for building HTTP services.
package chi

import "net/http"

// Router consisting of the core routing methods used by chi's Mux.
type Router interface {
	http.Handler
	Get(pattern string, h http.HandlerFunc)
}
