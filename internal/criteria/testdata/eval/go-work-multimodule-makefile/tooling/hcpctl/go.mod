module github.com/Azure/ARO-HCP/tooling/hcpctl

go 1.24.3
