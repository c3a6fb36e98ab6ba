module github.com/sqlc-dev/sqlc

go 1.23.0

toolchain go1.24.1

require (
	github.com/jackc/pgx/v5 v5.7.2
	github.com/go-sql-driver/mysql v1.9.0
)
