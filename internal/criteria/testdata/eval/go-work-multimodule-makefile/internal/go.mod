module github.com/Azure/ARO-HCP/internal

go 1.24.3
