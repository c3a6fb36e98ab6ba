package svc

import "testing"

func TestOK(t *testing.T) {}
