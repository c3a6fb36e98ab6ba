// Package api holds the ARO-HCP resource provider API types.
package api

// Version is the API version served by the frontend.
const Version = "2024-06-10-preview"
