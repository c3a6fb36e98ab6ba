module github.com/Azure/ARO-HCP/tooling/yamlwrap

go 1.24.3
