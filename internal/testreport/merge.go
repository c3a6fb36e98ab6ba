package testreport

// Merge combines the Summary read from the output (a) with the one read from
// report files (b, from ScanReports). Reports are more precise, so when b is
// Known its counts, names and runner win; b's coverage wins when present.
// One exception keeps a failure from disappearing: when the reports show no
// failure but the output does (a package that did not compile writes no
// report), a's failures are added to b's counts and names, and the runner
// names both ("junit-xml+go").
func Merge(a, b Summary) Summary {
	m := a
	if b.Known {
		m = b
		m.Failing = append([]string(nil), b.Failing...)
		m.Passing = append([]string(nil), b.Passing...)
		if b.Failed == 0 && a.Known && a.Failed > 0 {
			m.Failed += a.Failed
			m.Total += a.Failed
			m.Failing = sortedUnique(append(m.Failing, a.Failing...))
			if a.Runner != "" && a.Runner != b.Runner {
				m.Runner = b.Runner + "+" + a.Runner
			}
		}
		if len(m.Failing) == 0 {
			m.Failing = nil
		}
		if len(m.Passing) == 0 {
			m.Passing = nil
		}
	}
	switch {
	case b.Coverage != nil:
		c := *b.Coverage
		m.Coverage = &c
	case a.Coverage != nil:
		c := *a.Coverage
		m.Coverage = &c
	default:
		m.Coverage = nil
	}
	return m
}
