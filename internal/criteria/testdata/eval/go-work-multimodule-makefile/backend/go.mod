module github.com/Azure/ARO-HCP/backend

go 1.24.3
