package agui2aap

import (
	"context"
	"time"

	"github.com/aapagui/aapagui/aap"
)

// Withholding an answer: the results of the calls a turn answered with a
// tool_permission reach the client before anything of the answer after
// them, streamed or read from the session's history.

// answerBegins reports an event that starts (or ends) the answer after the
// permissions: anything but turn_start and tool results.
func answerBegins(ev aap.Event) bool {
	switch ev.(type) {
	case *aap.TextDelta, *aap.Text, *aap.ThinkingDelta, *aap.Thinking, *aap.ToolCall, *aap.TurnStop:
		return true
	}
	return false
}

// historyTimeout bounds the history read that looks for a permission's
// result.
const historyTimeout = 10 * time.Second

// storedResults feeds the client the results of permission-answered calls
// that the AAP server stored in its history without streaming them (some
// servers do: the reference TypeScript SDK 0.8 runs a granted tool and
// stores its result, but emits no tool_result). Each one found is sent as
// TOOL_CALL_RESULT and taken out of missing. When final (the turn is over:
// nothing more can come), a denied call still missing gets the denial
// wording AAP prescribes, so that every denied call has a result.
func (r *runner) storedResults(ctx context.Context, missing map[string]permission, final bool) {
	if len(missing) == 0 {
		return
	}
	if ht, ok := historyType(r.info); ok {
		ctx, cancel := context.WithTimeout(ctx, historyTimeout)
		hist, err := r.cl.History(ctx, r.th.SessionID, ht)
		r.env.upstreamCall(ctx, "history", r.info.Name, err)
		cancel()
		if err != nil {
			r.log.Warn().Err(err).Str("session", r.th.SessionID).Msg("reading the AAP session's history for the results of answered permissions")
		}
		// The latest tool message of each call is its result.
		found := map[string]*aap.ToolMessage{}
		for _, m := range hist {
			if tm, ok := m.(*aap.ToolMessage); ok {
				if _, want := missing[tm.ToolCallID]; want {
					found[tm.ToolCallID] = tm
				}
			}
		}
		// In the order the calls appear in the history, so that several
		// results come out as the server stored them.
		for _, m := range hist {
			tm, ok := m.(*aap.ToolMessage)
			if !ok || found[tm.ToolCallID] != tm {
				continue
			}
			r.feed(&aap.ToolResult{ToolCallID: tm.ToolCallID, Content: tm.Content})
			r.resulted(tm.ToolCallID)
			delete(missing, tm.ToolCallID)
		}
	}
	if !final {
		return
	}
	for _, id := range r.answered.order {
		p, ok := missing[id]
		if !ok {
			continue
		}
		if !p.granted {
			r.feed(&aap.ToolResult{ToolCallID: id, Content: aap.TextContent(aap.DeniedResult(p.reason))})
			r.resulted(id)
		} else {
			r.log.Info().Str("session", r.th.SessionID).Str("tool_call", id).Msg("the AAP server neither sent nor stored the result of a granted call")
		}
		delete(missing, id)
	}
}

// historyType is the history the agent serves, full preferred; false when
// it serves none.
func historyType(info *aap.AgentInfo) (aap.HistoryType, bool) {
	caps := info.Capabilities
	switch {
	case caps.SupportsHistory(aap.HistoryFull):
		return aap.HistoryFull, true
	case caps.SupportsHistory(aap.HistoryCompacted):
		return aap.HistoryCompacted, true
	}
	return "", false
}

// withheldAnswer is the answer of a turn, withheld while results of the
// calls it answered are missing (see stream).
type withheldAnswer struct {
	missing     map[string]permission // answered calls without a result yet
	withheld    []aap.Event           // the answer, withheld while results are missing
	withholding bool
}

// missingResults are the calls the turn answers whose results the client
// has not been sent.
func (r *runner) missingResults() map[string]permission {
	var missing map[string]permission // (nil when none: most turns answer no permission)
	for id, p := range r.answered.by {
		if !r.results[id] {
			if missing == nil {
				missing = map[string]permission{}
			}
			missing[id] = p
		}
	}
	return missing
}

// resulted records that the client has call id's result (results: made
// with the first, as most runs have none).
func (r *runner) resulted(id string) {
	if r.results == nil {
		r.results = map[string]bool{}
	}
	r.results[id] = true
}

// withholdingRun is what a withheld answer uses of its run: it writes the
// run's events (feed), reads the results the AAP server stored
// (storedResults) and records the results the client has (resulted).
type withholdingRun interface {
	feed(ev aap.Event)
	storedResults(ctx context.Context, missing map[string]permission, final bool)
	resulted(id string)
}

// lateResult records a tool result. One that was missing while the answer
// is withheld goes to the client at once, before the answer (true: ev is
// done with), sending the answer once none is missing.
func (a *withheldAnswer) lateResult(ctx context.Context, run withholdingRun, e *aap.ToolResult) bool {
	run.resulted(e.ToolCallID)
	_, wanted := a.missing[e.ToolCallID]
	delete(a.missing, e.ToolCallID)
	if !wanted || !a.withholding {
		return false
	}
	run.feed(e)
	if len(a.missing) == 0 {
		a.send(ctx, run)
	}
	return true
}

// withhold starts withholding the answer when it begins while results are
// missing and the AAP server has not stored them either; it returns true
// for an event withheld. The turn's end sends what was withheld.
func (a *withheldAnswer) withhold(ctx context.Context, run withholdingRun, ev aap.Event) bool {
	if len(a.missing) > 0 && !a.withholding && answerBegins(ev) {
		run.storedResults(ctx, a.missing, false)
		a.withholding = len(a.missing) > 0
	}
	if !a.withholding {
		return false
	}
	if _, stop := ev.(*aap.TurnStop); !stop {
		a.withheld = append(a.withheld, ev)
		return true
	}
	a.send(ctx, run)
	return false
}

// send sends the results still missing (read from the session's
// history) and then the answer withheld.
func (a *withheldAnswer) send(ctx context.Context, run withholdingRun) {
	run.storedResults(ctx, a.missing, true)
	a.withholding = false
	for _, ev := range a.withheld {
		run.feed(ev)
	}
	a.withheld = nil
}
