module distribute

go 1.19
