// Package lazyre holds regular expressions that are compiled on first use.
//
// The judge, the test-report parsers and completion inference hold several
// hundred patterns. Compiled at package initialisation they cost about 10 ms
// of every command, `agent-loop version` included, most of which never uses
// them. A *Regexp is declared like a package-level *regexp.Regexp and has
// the methods the code base uses; the first call compiles it.
//
// A pattern that does not compile panics on first use, as
// regexp.MustCompile would at start-up. CompileAll compiles every pattern
// made so far: each package that uses lazyre calls it in a test, so a bad
// pattern fails `go test`, never a run.
package lazyre

import (
	"errors"
	"fmt"
	"regexp"
	"sync"
)

// Regexp is a regular expression compiled on first use. It is safe for
// concurrent use.
type Regexp struct {
	expr string
	once sync.Once
	re   *regexp.Regexp
	err  error
}

var (
	mu  sync.Mutex
	all []*Regexp
)

// New returns expr, to be compiled on first use.
func New(expr string) *Regexp {
	r := &Regexp{expr: expr}
	mu.Lock()
	all = append(all, r)
	mu.Unlock()
	return r
}

func (r *Regexp) compile() {
	r.once.Do(func() { r.re, r.err = regexp.Compile(r.expr) })
}

// Regexp returns the compiled expression; it panics if expr does not
// compile.
func (r *Regexp) Regexp() *regexp.Regexp {
	r.compile()
	if r.err != nil {
		panic(fmt.Sprintf("lazyre: %v", r.err))
	}
	return r.re
}

// CompileAll compiles every expression made by New so far and returns the
// errors of those that do not compile.
func CompileAll() error {
	mu.Lock()
	list := append([]*Regexp(nil), all...)
	mu.Unlock()
	var errs []error
	for _, r := range list {
		if r.compile(); r.err != nil {
			errs = append(errs, r.err)
		}
	}
	return errors.Join(errs...)
}

// Count is the number of expressions made by New so far.
func Count() int {
	mu.Lock()
	defer mu.Unlock()
	return len(all)
}

// String returns the source text.
func (r *Regexp) String() string { return r.expr }

func (r *Regexp) Match(b []byte) bool            { return r.Regexp().Match(b) }
func (r *Regexp) MatchString(s string) bool      { return r.Regexp().MatchString(s) }
func (r *Regexp) FindString(s string) string     { return r.Regexp().FindString(s) }
func (r *Regexp) FindStringIndex(s string) []int { return r.Regexp().FindStringIndex(s) }
func (r *Regexp) FindSubmatch(b []byte) [][]byte { return r.Regexp().FindSubmatch(b) }
func (r *Regexp) FindStringSubmatch(s string) []string {
	return r.Regexp().FindStringSubmatch(s)
}
func (r *Regexp) FindStringSubmatchIndex(s string) []int {
	return r.Regexp().FindStringSubmatchIndex(s)
}
func (r *Regexp) FindAllString(s string, n int) []string {
	return r.Regexp().FindAllString(s, n)
}
func (r *Regexp) FindAllStringIndex(s string, n int) [][]int {
	return r.Regexp().FindAllStringIndex(s, n)
}
func (r *Regexp) FindAllStringSubmatch(s string, n int) [][]string {
	return r.Regexp().FindAllStringSubmatch(s, n)
}
func (r *Regexp) FindAllStringSubmatchIndex(s string, n int) [][]int {
	return r.Regexp().FindAllStringSubmatchIndex(s, n)
}
func (r *Regexp) ReplaceAllString(src, repl string) string {
	return r.Regexp().ReplaceAllString(src, repl)
}
func (r *Regexp) ReplaceAllLiteralString(src, repl string) string {
	return r.Regexp().ReplaceAllLiteralString(src, repl)
}
func (r *Regexp) ReplaceAllStringFunc(src string, repl func(string) string) string {
	return r.Regexp().ReplaceAllStringFunc(src, repl)
}
func (r *Regexp) Split(s string, n int) []string { return r.Regexp().Split(s, n) }
func (r *Regexp) SubexpIndex(name string) int    { return r.Regexp().SubexpIndex(name) }
func (r *Regexp) NumSubexp() int                 { return r.Regexp().NumSubexp() }
