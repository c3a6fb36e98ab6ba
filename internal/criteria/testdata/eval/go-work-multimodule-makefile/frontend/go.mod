module github.com/Azure/ARO-HCP/frontend

go 1.24.3
