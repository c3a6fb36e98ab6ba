package unres

import "testing"

func TestU(t *testing.T) {}
