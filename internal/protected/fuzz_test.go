package protected

import "testing"

func FuzzMatch(f *testing.F) {
	f.Add(".github/**", ".github/workflows/ci.yml")
	f.Add("[!a-", "x")
	f.Add(`a\`, "a")
	f.Add("**/x/**/y", "x/y")
	f.Fuzz(func(t *testing.T, pattern, p string) {
		s, err := Compile([]string{pattern})
		if err != nil {
			return
		}
		_, _ = s.Match(p)
		_, _ = s.Split([]Change{{Status: 'R', Path: p, OldPath: pattern}})
	})
}
