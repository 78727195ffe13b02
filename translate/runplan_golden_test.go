package translate_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/tools/txtar"

	"github.com/aapagui/aapagui/agui"
	"github.com/aapagui/aapagui/internal/testkit/txtartest"
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
	txtartest.Run(t, "../testdata/plan/*.txtar", []string{"plan.json"}, *update, func(t *testing.T, arc *txtar.Archive) map[string]string {
		section := func(name string) []byte {
			data, ok := txtartest.Section(arc, name)
			require.True(t, ok, "no section %s", name)
			return data
		}
		var opts struct {
			Agent  string           `json:"agent"`
			Policy translate.Policy `json:"policy"`
		}
		require.NoError(t, json.Unmarshal(section("options.json"), &opts))
		var th *translate.ThreadState
		require.NoError(t, json.Unmarshal(section("thread.json"), &th))
		in, err := agui.DecodeRunAgentInputLazy(section("input.json"))
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
		return map[string]string{"plan.json": string(got) + "\n"}
	})
}
