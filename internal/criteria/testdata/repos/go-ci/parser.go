package goci

func Parse(s string) string { return s }
