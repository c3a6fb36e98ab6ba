module github.com/Azure/ARO-HCP/tooling/pipeline-documentation

go 1.24.3
