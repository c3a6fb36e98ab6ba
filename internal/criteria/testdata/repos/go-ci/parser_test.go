package goci

import "testing"

func TestParse(t *testing.T) {}
