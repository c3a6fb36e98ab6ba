module github.com/Azure/ARO-HCP/admin

go 1.24.3
