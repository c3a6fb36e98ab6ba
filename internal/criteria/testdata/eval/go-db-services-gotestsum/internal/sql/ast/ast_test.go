package ast

import "testing"

type leaf int

func (l leaf) Pos() int { return int(l) }

func TestNode(t *testing.T) {
	var n Node = leaf(3)
	if n.Pos() != 3 {
		t.Fatal("position lost")
	}
}
