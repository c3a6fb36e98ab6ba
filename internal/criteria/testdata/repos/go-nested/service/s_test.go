package service

import "testing"

func TestS(t *testing.T) {}
