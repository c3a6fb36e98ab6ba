module github.com/Azure/ARO-HCP/tooling/templatize

go 1.24.3
