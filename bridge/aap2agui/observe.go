package aap2agui

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/events"
	"github.com/rs/zerolog"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/agui"
	"github.com/aapagui/aapagui/bridge/internal/metrics"
	"github.com/aapagui/aapagui/internal/ident"
	"github.com/aapagui/aapagui/store"
	"github.com/aapagui/aapagui/translate"
)

// The events that change the session rather than the stream: state,
// a MESSAGES_SNAPSHOT, and the results of server tools the session did
// not let the agent run.

// observer handles the events of a run that change the session rather
// than the stream: it keeps the session's state as the agent changes it,
// names the run's tool calls, and hands a MESSAGES_SNAPSHOT to the run's
// history writer, which makes it the history.
type observer struct {
	log     *zerolog.Logger
	sess    *store.Session
	agent   *agent
	tr      *translate.AGUIToAAP
	met     *metrics.Metrics
	history *historyWriter

	state        json.RawMessage // the session's state, as the run leaves it (stateJSON)
	stateChanged bool
	patched      *patchedState         // the state decoded while STATE_DELTAs change it (state.go)
	callNames    map[string]string     // toolCallId → tool name of the calls this run streamed
	dropped      *notCarried           // what the AAP client is not sent (notcarried.go), nil while nothing
	carry        bool                  // the client gets the events the AG-UI extension carries (extension.go)
	acts         *translate.Activities // the session's activity messages, once the run changes them (activities.go)
	actsChanged  bool
	// refused: the event observe took last is left out, not passed on
	// even to a client granted the extension (an ACTIVITY_DELTA that does
	// not apply).
	refused bool
}

// observe handles the events that change the session rather than the
// stream (data: ev's JSON); it reports whether ev goes on to the
// translator. A MESSAGES_SNAPSHOT does not: what it holds that is new in
// the run is streamed, given back as out.
func (r *observer) observe(ctx context.Context, ev events.Event, data []byte) (pass bool, out []aap.Event) {
	r.refused = false
	r.notSentMetadata(data)
	switch e := ev.(type) {
	case *events.ActivitySnapshotEvent:
		r.notSent(ev, ncActivitySnapshot) // (kept with the session)
		r.refuse(!r.snapshotActivity(e, data), ncActivitySnapshot)
	case *events.ActivityDeltaEvent:
		r.notSent(ev, ncActivityDelta)
		r.refuse(!r.applyActivityDelta(e, data), ncActivityDelta)
	case *events.StateSnapshotEvent:
		r.notSent(ev, ncStateSnapshot) // (kept as the session's state)
		r.snapshotState(e, data)
		return false, nil
	case *events.StateDeltaEvent:
		r.notSent(ev, ncStateDelta)
		r.applyDelta(e, data)
		return false, nil
	case *events.MessagesSnapshotEvent:
		return false, r.snapshot(ctx, e, data)
	case *events.ToolCallStartEvent:
		r.nameCall(e.ToolCallID, e.ToolCallName)
	case *events.ToolCallChunkEvent:
		if e.ToolCallID != nil && e.ToolCallName != nil {
			r.nameCall(*e.ToolCallID, *e.ToolCallName)
		}
	case *events.ToolCallResultEvent:
		r.checkRanAsAllowed(e.ToolCallID)
	case *agui.ToolCallResultPartsEvent:
		r.checkRanAsAllowed(e.ToolCallID)
	case *agui.UnknownEvent:
		r.notCarried(ncUnknown, 1)
		r.log.Debug().Str("type", string(e.Type())).Msg("unknown AG-UI event skipped")
		return false, nil
	case *events.StepStartedEvent, *events.StepFinishedEvent, *events.RawEvent, *events.CustomEvent, *events.RunFinishedEvent:
		if k, ok := notCarriedKindOf(ev); ok {
			r.notSent(ev, k)
			if k != ncRunResult {
				r.log.Debug().Str("type", string(ev.Type())).Msg("AG-UI event with no AAP meaning")
			}
		}
	}
	return true, nil
}

// refuse notes an event left out (not passed on even to a client granted
// the extension, which then counts it as not carried).
func (r *observer) refuse(refused bool, k notCarriedKind) {
	r.refused = refused
	if refused && r.carry {
		r.notCarried(k, 1)
	}
}

func (r *observer) nameCall(id, name string) {
	if r.callNames == nil {
		r.callNames = map[string]string{}
	}
	r.callNames[id] = name
}

// checkRanAsAllowed notes a server tool that the agent ran (its result
// came in the run that made the call) although the session did not enable
// it with trust: the agent config says the agent honours enabling and
// trust (permissions: aap), and it did not. The result is kept (it is what
// happened), the AAP application sees it as it came, and the operator is
// told which tool to declare "permissions: none".
func (r *observer) checkRanAsAllowed(toolCallID string) {
	name, ok := r.callNames[toolCallID]
	if !ok || !r.tr.CallOfRun(toolCallID) { // a call of an earlier turn, streamed again
		return
	}
	if !r.agent.serverTool(name) {
		return
	}
	setting, label := "not enabled", "not_enabled"
	for _, t := range r.sess.Agent.Tools {
		if t.Name == name {
			if t.Trust {
				return
			}
			setting, label = "enabled without trust", "untrusted"
		}
	}
	r.met.ToolRanAgainstSettings(name, label)
	r.log.Warn().Str("session", r.sess.ID).Str("tool", name).Str("tool_call_id", toolCallID).Str("session_setting", setting).
		Msg("the agent ran a server tool against the session's settings: if it cannot honour enabling and trust, declare the tool with permissions: none in --agent-config")
}

// snapshot makes a MESSAGES_SNAPSHOT the session's history (data: the
// event's JSON, which holds the tool calls' encrypted values: the SDK's
// messages have no field for them), and returns the events that stream
// what it holds that is new in the run (historyWriter.snapshot).
func (r *observer) snapshot(ctx context.Context, e *events.MessagesSnapshotEvent, data []byte) []aap.Event {
	msgs, ids, err := translate.MessagesToAAPWithIDs(e.Messages)
	if err != nil {
		r.log.Warn().Err(err).Msg("MESSAGES_SNAPSHOT could not be translated; history unchanged")
		return nil
	}
	carried := r.carriedActivities(e.Messages)
	if !r.carry {
		r.notCarried(ncActivityMessage, activityMessages(e.Messages))
	}
	extras := translate.SnapshotEncrypted(e.Messages, data)
	orphans := map[int]bool{}
	for _, i := range translate.OrphanResults(msgs) {
		orphans[i] = true
		r.log.Warn().Str("session", r.sess.ID).Str("tool_call_id", msgs[i].(*aap.ToolMessage).ToolCallID).
			Msg("MESSAGES_SNAPSHOT: a tool message without its tool_use before it, or a second result for its call, left out of history")
	}
	entries := make([]store.Entry, 0, len(msgs))
	sources := make([]string, 0, len(msgs)) // the snapshot's message each entry was made of
	for i, m := range msgs {
		if orphans[i] {
			continue
		}
		id := ids[i]
		sources = append(sources, id)
		if id == "" {
			id = ident.Random("msg-")
		}
		var agui json.RawMessage
		if i < len(extras) {
			agui = extras[i]
		}
		entries = append(entries, store.Entry{Message: m, AGUIID: id, AGUI: agui})
	}
	r.acts, r.actsChanged = translate.OfSnapshot(e.Messages, sources), true
	out, err := r.history.snapshot(ctx, entries)
	if err != nil && !errors.Is(err, translate.ErrTerminated) {
		r.log.Warn().Err(err).Str("session", r.sess.ID).Msg("MESSAGES_SNAPSHOT: a tool message without its call left out of the stream")
	}
	return append(out, carried...)
}
