package translate_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/tools/txtar"

	"github.com/aapagui/aapagui/agui"
	"github.com/aapagui/aapagui/translate"
)

// A plan golden file holds one AG-UI run against what the thread's AAP
// session has seen, and what PlanRun makes of it. Its sections:
//
//	options.json   {"agent": the agent the run names, "policy": "interrupt"|"grant"|"deny"} (hand-written)
//	thread.json    the ThreadState, or null for a thread not seen before (hand-written)
//	input.json     the RunAgentInput (hand-written)
//	plan.json      the RunPlan, or {"refusal": …} or {"inputError": …} (derived, rewritten only with -update)
func TestPlanGolden(t *testing.T) {
	files, err := filepath.Glob("../testdata/plan/*.txtar")
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(files), 8, "plan goldens")
	for _, path := range files {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".txtar"), func(t *testing.T) {
			arc, err := txtar.ParseFile(path)
			require.NoError(t, err)
			g := &golden{t: t, path: path, arc: arc}
			require.NotEmpty(t, strings.TrimSpace(string(arc.Comment)), "a plan golden opens with what it shows")
			var opts struct {
				Agent  string           `json:"agent"`
				Policy translate.Policy `json:"policy"`
			}
			require.NoError(t, json.Unmarshal(g.must("options.json"), &opts))
			var th *translate.ThreadState
			require.NoError(t, json.Unmarshal(g.must("thread.json"), &th))
			in, err := agui.DecodeRunAgentInputLazy(g.must("input.json"))
			require.NoError(t, err)
			p, err := translate.PlanRun(th, in, opts.Agent, opts.Policy)
			var out any = p
			var ref *translate.Refusal
			var ie *translate.InputError
			switch {
			case errors.As(err, &ref):
				out = map[string]any{"refusal": ref}
			case errors.As(err, &ie):
				out = map[string]any{"inputError": ie.Message}
			default:
				require.NoError(t, err)
			}
			got, err := json.MarshalIndent(out, "", "  ")
			require.NoError(t, err)
			g.check("plan.json", append(got, '\n'))
			if g.changed {
				require.NoError(t, os.WriteFile(path, txtar.Format(arc), 0o644))
			}
		})
	}
}
