module example.com/goci

go 1.22
