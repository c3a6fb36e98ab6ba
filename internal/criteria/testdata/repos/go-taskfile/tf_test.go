package tf

import "testing"

func TestX(t *testing.T) {}
