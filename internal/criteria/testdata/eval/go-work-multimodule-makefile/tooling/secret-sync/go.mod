module github.com/Azure/ARO-HCP/tooling/secret-sync

go 1.24.3
