package judge

import (
	"fmt"
	"strings"
	"testing"

	"github.com/aiwg/agent-loop/internal/loop"
	"github.com/aiwg/agent-loop/internal/testreport"
)

// failing builds a failed iteration record.
func failing(it int, level, fp string, score float64) loop.Record {
	return loop.Record{
		Iteration: it, Level: level, Fingerprint: fp,
		Check:   loop.CheckResult{ExitCode: 1, Tests: testreport.Summary{Known: true, Total: 4, Passed: 3, Failed: 1, Failing: []string{"TestDivByZero"}}},
		Verdict: loop.Verdict{Score: score},
		Stat:    loop.DiffStat{Files: 1, Additions: it, Deletions: 0, Paths: []string{"calc.go"}},
	}
}

func withStat(r loop.Record, s loop.DiffStat) loop.Record {
	r.Stat = s
	return r
}

func TestGuide(t *testing.T) {
	t.Parallel()
	deletion := loop.Regression{
		Type: TestDeletion, Severity: SeverityCritical, Summary: "1 test deleted: TestDivByZero",
		Evidence: []loop.Evidence{{Path: "calc/calc_test.go", Line: 15, Text: "func TestDivByZero(t *testing.T) {"}},
	}
	regressed := failing(2, LevelMinimal, "fp-b", 20)
	regressed.Check.Passed = true
	regressed.Rejected = true
	regressed.Verdict.Regressions = []loop.Regression{deletion}
	stat := loop.DiffStat{Files: 1, Additions: 5, Deletions: 1, Paths: []string{"calc.go"}}
	undo := loop.DiffStat{Files: 1, Additions: 1, Deletions: 5, Paths: []string{"calc.go"}}
	passed := failing(2, LevelMinimal, "", 95)
	passed.Check.Passed = true

	tests := []struct {
		name       string
		opts       Options
		history    []loop.Record
		current    string
		wantLevel  string
		wantReason string // substring; "" means no reason
		wantPrompt []string
		wantStall  string // substring; "" means no stall
	}{
		{
			name: "start", current: "",
			wantLevel: LevelMinimal, wantReason: "Loop initialization",
			wantPrompt: []string{"Keep the tests"},
		},
		{
			name: "start with the engine's default level", current: LevelMinimal,
			wantLevel: LevelMinimal,
		},
		{
			name: "configured starting level", opts: Options{Reinforcement: "standard"}, current: LevelMinimal,
			wantLevel: LevelStandard, wantReason: "Loop initialization",
		},
		{
			name:      "no change before the threshold",
			history:   []loop.Record{failing(1, LevelMinimal, "a", 10), failing(2, LevelMinimal, "b", 30), failing(3, LevelMinimal, "c", 50)},
			current:   LevelMinimal,
			wantLevel: LevelMinimal,
		},
		{
			name:      "STANDARD from iteration 5",
			history:   []loop.Record{failing(1, LevelMinimal, "a", 10), failing(2, LevelMinimal, "b", 20), failing(3, LevelMinimal, "c", 30), failing(4, LevelMinimal, "d", 40)},
			current:   LevelMinimal,
			wantLevel: LevelStandard, wantReason: "Iteration 5 threshold reached",
			wantPrompt: []string{"Earlier attempts did not make the completion command pass (4 iterations so far)", "Still failing after iteration 4: TestDivByZero."},
		},
		{
			name: "AGGRESSIVE from iteration 7",
			history: []loop.Record{
				failing(1, LevelMinimal, "a", 10), failing(2, LevelMinimal, "b", 20), failing(3, LevelMinimal, "c", 30),
				failing(4, LevelMinimal, "d", 40), failing(5, LevelStandard, "e", 50), failing(6, LevelStandard, "f", 60),
			},
			current:   LevelStandard,
			wantLevel: LevelAggressive, wantReason: "Iteration 7 threshold reached",
			wantPrompt: []string{"Do not modify, skip or delete tests.", "6 iterations used so far"},
		},
		{
			name:      "plateau escalates one level",
			history:   []loop.Record{failing(1, LevelMinimal, "a", 41), failing(2, LevelMinimal, "b", 42), failing(3, LevelMinimal, "c", 41.5)},
			current:   LevelMinimal,
			wantLevel: LevelStandard, wantReason: "Quality plateau detected (3 iterations < 5 point delta: 41, 42, 41.5)",
			wantPrompt: []string{"The last 3 iterations scored 41, 42, 41.5"},
		},
		{
			name:      "a plateau counts only iterations run at the current level",
			history:   []loop.Record{failing(1, LevelMinimal, "a", 41), failing(2, LevelMinimal, "b", 42), failing(3, LevelMinimal, "c", 41.5)},
			current:   LevelStandard,
			wantLevel: LevelStandard,
		},
		{
			name:      "a regression escalates to AGGRESSIVE with its evidence",
			history:   []loop.Record{failing(1, LevelMinimal, "fp-a", 30), regressed},
			current:   LevelMinimal,
			wantLevel: LevelAggressive, wantReason: "Regression detected in iteration 2 (test_deletion)",
			wantPrompt: []string{
				"Do not modify, skip or delete tests.",
				"The attempt in iteration 2 was rejected for test_deletion: 1 test deleted: TestDivByZero (calc/calc_test.go:15 `func TestDivByZero(t *testing.T) {`). Restore the tests and fix the code under test instead.",
			},
		},
		{
			name:      "stall: same failing tests with no score gain",
			history:   []loop.Record{failing(1, LevelMinimal, "same", 40), failing(2, LevelMinimal, "same", 40.5), failing(3, LevelMinimal, "same", 40.2)},
			current:   LevelMinimal,
			wantLevel: LevelStandard, wantReason: "plateau",
			wantStall: "failed the same way for 3 iterations in a row (iterations 1-3, fingerprint same) with no score improvement (scores 40, 40.5, 40.2)",
		},
		{
			name:      "no stall while the score improves",
			history:   []loop.Record{failing(1, LevelMinimal, "same", 40), failing(2, LevelMinimal, "same", 44), failing(3, LevelMinimal, "same", 48)},
			current:   LevelMinimal,
			wantLevel: LevelMinimal,
		},
		{
			name:      "StallAfter is honoured",
			opts:      Options{StallAfter: 4},
			history:   []loop.Record{failing(1, LevelMinimal, "same", 40), failing(2, LevelMinimal, "same", 40), failing(3, LevelMinimal, "same", 40)},
			current:   LevelMinimal,
			wantLevel: LevelStandard, wantReason: "plateau",
		},
		{
			name: "stall: empty diffs in a row",
			history: []loop.Record{
				failing(1, LevelMinimal, "a", 40),
				withStat(failing(2, LevelMinimal, "b", 10), loop.DiffStat{}),
				withStat(failing(3, LevelMinimal, "c", 20), loop.DiffStat{}),
			},
			current:   LevelMinimal,
			wantLevel: LevelMinimal,
			wantStall: "the agent changed nothing in 2 iterations in a row (iterations 2-3)",
		},
		{
			name:      "oscillating failing tests: ADAPTIVE first",
			history:   []loop.Record{failing(1, LevelMinimal, "A", 30), failing(2, LevelMinimal, "B", 50), failing(3, LevelMinimal, "A", 30)},
			current:   LevelMinimal,
			wantLevel: LevelAdaptive, wantReason: "Oscillation detected: iterations 1 and 3 ended with the same failing tests, iteration 2 with different ones",
			wantPrompt: []string{"Your attempts are oscillating", "try a different fix"},
		},
		{
			name: "oscillating diffs: ADAPTIVE first",
			history: []loop.Record{
				withStat(failing(1, LevelMinimal, "A", 30), stat), withStat(failing(2, LevelMinimal, "B", 50), undo),
				withStat(failing(3, LevelMinimal, "C", 30), stat),
			},
			current:   LevelMinimal,
			wantLevel: LevelAdaptive, wantReason: "iteration 2 undid the change of iteration 1 and iteration 3 made it again",
		},
		{
			name: "oscillation that goes on under ADAPTIVE stalls",
			history: []loop.Record{
				failing(1, LevelMinimal, "A", 30), failing(2, LevelMinimal, "B", 50), failing(3, LevelMinimal, "A", 30),
				failing(4, LevelAdaptive, "B", 50),
			},
			current:   LevelAdaptive,
			wantLevel: LevelAdaptive,
			wantStall: "keep oscillating",
		},
		{
			name:       "OFF never escalates but still stalls",
			opts:       Options{Reinforcement: "OFF"},
			history:    []loop.Record{failing(1, LevelOff, "a", 30), withStat(failing(2, LevelOff, "b", 0), loop.DiffStat{}), withStat(regressed, loop.DiffStat{})},
			current:    LevelOff,
			wantLevel:  LevelOff,
			wantPrompt: nil,
			wantStall:  "changed nothing",
		},
		{
			name:      "a passed iteration is never a stall",
			history:   []loop.Record{withStat(failing(1, LevelMinimal, "a", 30), loop.DiffStat{}), withStat(passed, loop.DiffStat{})},
			current:   LevelMinimal,
			wantLevel: LevelMinimal,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			g := New(tt.opts).Guide(tt.history, loop.Guidance{Level: tt.current})
			if g.Level != tt.wantLevel {
				t.Errorf("Level = %s, want %s (reason %q)", g.Level, tt.wantLevel, g.Reason)
			}
			if tt.wantReason == "" && g.Reason != "" {
				t.Errorf("Reason = %q, want none", g.Reason)
			}
			if !strings.Contains(g.Reason, tt.wantReason) {
				t.Errorf("Reason = %q, want it to contain %q", g.Reason, tt.wantReason)
			}
			prompt := strings.Join(g.Prompt, "\n")
			for _, p := range tt.wantPrompt {
				if !strings.Contains(prompt, p) {
					t.Errorf("prompt lacks %q:\n%s", p, prompt)
				}
			}
			if g.Level == LevelOff && len(g.Prompt) != 0 {
				t.Errorf("OFF has prompt paragraphs: %q", g.Prompt)
			}
			if tt.wantStall == "" && g.Stall != "" {
				t.Errorf("Stall = %q, want none", g.Stall)
			}
			if !strings.Contains(g.Stall, tt.wantStall) {
				t.Errorf("Stall = %q, want it to contain %q", g.Stall, tt.wantStall)
			}
		})
	}
}

func TestValidateLevel(t *testing.T) {
	t.Parallel()
	for _, ok := range []string{"OFF", "minimal", " Standard ", "AGGRESSIVE", "adaptive"} {
		if err := ValidateLevel(ok); err != nil {
			t.Errorf("ValidateLevel(%q) = %v", ok, err)
		}
	}
	err := ValidateLevel("LOUD")
	if err == nil || !strings.Contains(err.Error(), "OFF, MINIMAL, STANDARD, AGGRESSIVE, ADAPTIVE") {
		t.Errorf("ValidateLevel(LOUD) = %v, want an error listing the valid levels", err)
	}
}

// TestGuidePrompts records the paragraphs of every level, as the agent
// reads them.
func TestGuidePrompts(t *testing.T) {
	t.Parallel()
	deletion := loop.Regression{
		Type: TestDeletion, Severity: SeverityCritical, Summary: "1 test deleted: TestDivByZero",
		Evidence: []loop.Evidence{{Path: "calc/calc_test.go", Line: 15, Text: "func TestDivByZero(t *testing.T) {"}},
	}
	swallow := loop.Regression{
		Type: ErrorSuppression, Severity: SeverityHigh, Summary: "1 error swallowed in non-test code",
		Evidence: []loop.Evidence{{Path: "calc/calc.go", Line: 9, Text: "_ = err"}},
	}
	bad := failing(3, LevelStandard, "B", 20)
	bad.Rejected = true
	bad.Verdict.Regressions = []loop.Regression{deletion, swallow}
	history := []loop.Record{failing(1, LevelMinimal, "A", 30), failing(2, LevelMinimal, "A", 32), bad}
	j := New(Options{})
	var b strings.Builder
	for _, level := range []string{LevelOff, LevelMinimal, LevelStandard, LevelAggressive, LevelAdaptive} {
		st := guideState{}
		if level == LevelAdaptive {
			st.oscillation = "iterations 1 and 3 ended with the same failing tests, iteration 2 with different ones"
			st.regression = true
		}
		fmt.Fprintf(&b, "## %s\n", level)
		for _, p := range j.prompt(level, history, st) {
			fmt.Fprintf(&b, "%s\n\n", p)
		}
	}
	golden(t, "TestGuidePrompts.golden", b.String())
}
