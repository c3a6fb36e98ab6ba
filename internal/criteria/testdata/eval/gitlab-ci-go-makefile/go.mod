module gitlab.com/gitlab-org/cli

go 1.25.0
