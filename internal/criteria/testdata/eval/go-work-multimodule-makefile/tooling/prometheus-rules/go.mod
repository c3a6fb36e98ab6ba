module github.com/Azure/ARO-HCP/tooling/prometheus-rules

go 1.24.3
