package api

import "testing"

func TestA(t *testing.T) {}
