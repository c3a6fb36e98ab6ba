module example.com/unres
go 1.22
