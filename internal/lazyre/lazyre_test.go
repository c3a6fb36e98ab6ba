package lazyre

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

var (
	word   = New(`\b(\w+)\b`)
	broken = New(`(unclosed`)
)

func TestCompiledOnFirstUseOnly(t *testing.T) {
	r := New(`a+b`)
	if r.re != nil {
		t.Fatal("compiled before first use")
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if !r.MatchString("xaab") || r.MatchString("xb") {
				t.Error("a+b matches wrongly")
			}
		})
	}
	wg.Wait()
	if r.re == nil || r.String() != "a+b" {
		t.Fatalf("after use: re %v, String %q", r.re, r.String())
	}
	if got := word.FindAllString("two words", -1); len(got) != 2 || got[1] != "words" {
		t.Errorf("FindAllString = %q", got)
	}
	if got := word.ReplaceAllString("a b", "<$1>"); got != "<a> <b>" {
		t.Errorf("ReplaceAllString = %q", got)
	}
}

func TestCompileAllReportsABadPattern(t *testing.T) {
	err := CompileAll()
	if err == nil || !strings.Contains(err.Error(), "(unclosed") {
		t.Fatalf("CompileAll = %v, want the error of %q", err, broken.String())
	}
	defer func() {
		if recover() == nil {
			t.Error("using a pattern that does not compile did not panic")
		}
	}()
	broken.MatchString("x")
}

// TestDeclaredAtPackageLevel: New registers every expression for
// CompileAll, so a call inside a function would add one per call. No
// package under internal/ does that.
func TestDeclaredAtPackageLevel(t *testing.T) {
	fset := token.NewFileSet()
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				if sel, ok := call.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "New" {
					if id, ok := sel.X.(*ast.Ident); ok && id.Name == "lazyre" {
						t.Errorf("%s: lazyre.New inside %s: declare the expression at package level", fset.Position(call.Pos()), fn.Name.Name)
					}
				}
				return true
			})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
