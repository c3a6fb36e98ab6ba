// Package glrepo resolves GitLab repositories from git remotes.
package glrepo

// DefaultHost is the GitLab host used when none is configured.
const DefaultHost = "gitlab.com"
