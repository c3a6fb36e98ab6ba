module github.com/sqlc-dev/sqlc/endtoend

go 1.18
