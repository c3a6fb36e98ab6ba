// Command infer-study scores `agent-loop infer` against the labelled study
// set of real repositories (testdata/study/repos). It is driven by
// .ci/infer-study; run it from the repository:
//
//	infer-study validate [--labels DIR]
//	infer-study prepare  [--labels DIR] [--mirrors DIR] [--checkouts DIR]
//	infer-study eval     [--labels DIR] [--bin PATH] [--timeout D] [--run RE] [--json] [--out FILE] [--allow-missing] [CHECKOUTS]
//	infer-study compare  OLD.json NEW.json
//
// Exit codes: 0 done, 1 a failure (missing checkouts, a build or clone that
// failed), 2 bad usage or invalid labels.
package main

import (
	"os"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}
