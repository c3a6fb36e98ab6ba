module github.com/go-task/task/v3

go 1.25.0
