module github.com/Azure/ARO-HCP/tooling/olm-bundle-repkg

go 1.24.3
