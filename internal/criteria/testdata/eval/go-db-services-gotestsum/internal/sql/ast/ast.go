// Package ast holds the SQL syntax tree sqlc compiles.
package ast

// Node is any SQL syntax node.
type Node interface{ Pos() int }
