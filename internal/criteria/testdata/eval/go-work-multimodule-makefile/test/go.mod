module github.com/Azure/ARO-HCP/test

go 1.24.3
