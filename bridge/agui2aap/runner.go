package agui2aap

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/events"
	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"
	"github.com/rs/zerolog"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/agui"
	"github.com/aapagui/aapagui/bridge/internal/metrics"
	"github.com/aapagui/aapagui/bridge/internal/ssestream"
	"github.com/aapagui/aapagui/bridge/internal/turns"
	"github.com/aapagui/aapagui/store"
	"github.com/aapagui/aapagui/translate"
)

// runner carries one run through its AAP turns. It is the protocol
// agui2aap gives the run's sequence (turns.Base.Run): Take, Prepare,
// Call, Stream, Store and Acknowledge, in that order. It is the run's
// intake (what the run was asked, and what the thread and the AAP server
// answer to it: runIntake) and the run's stream (runStream), beside what
// it uses of its server (runEnv) and of its request (its logger); the
// run's context is passed to its steps.
type runner struct {
	env  runEnv
	log  *zerolog.Logger
	turn *turns.Turn // the lease, the run's stream, metrics and log line
	runIntake
	runStream
}

// runIntake is what a run was asked (its input, the client's tools, what
// it forwards), the agent and the AAP server it goes to, the thread it
// continues and the plan made of them: what the run's start reads and
// decides.
type runIntake struct {
	cl        *aap.Client
	version   int  // the AAP server's protocol version
	carry     bool // the AAP server grants the AG-UI extension (extension.go)
	owner     string
	agentName string // the agent as the route names it
	// openSession starts the thread's new AAP session as the server's
	// version does (openerFor), chosen once.
	openSession func(context.Context, newSession) (*aap.PostSessionTurnRequest, error)
	in          *types.RunAgentInput
	pageMeta    agui.Metadata // the metadata of in's messages and tool calls (translate.PageMetadata)
	info        *aap.AgentInfo
	th          *store.Thread
	storedAgent string // the agent the thread was stored with ("" for a new thread)
	p           *translate.RunPlan
	clientTools []aap.ToolSpec
	fwd         *translate.Forwarded
	put         *aap.PutSessionRequest // the first turn of a new session, on a version 1 or 2 server
	movedFrom   string                 // the session a PUT /session replaces ("" for a thread's first)
	// recordable are the client's messages the thread's record will get
	// at the save (copyForRecord).
	recordable []recordable
}

// runStream is the run's stream: its AAP turns (the first, its events)
// and what their reading keeps between events: the translator, whose
// tools are the client's, the results and permissions seen, the size of
// the message being built, the turns run; and the client's writer.
type runStream struct {
	w        turns.Writer[events.Event]  // writes the run, its RUN_FINISHED withheld until the thread is saved
	req      *aap.PostSessionTurnRequest // the run's first turn
	evs      *turnEvents                 // its events, once the AAP server took it
	a2g      *translate.AAPToAGUI
	clients  map[string]bool // client tool names
	results  map[string]bool // toolCallIds with a tool_result in this run
	answered answers         // the permissions the current turn answers
	// size counts what the agent streamed of the message it is building
	// (Serving.MaxMessageSize).
	size turns.MessageSize

	followUp   int32 // the follow-up turns run so far
	openBefore int32 // interrupts open when the run started
}

// runEnv is what a run uses of the server it runs on, handed down to it:
// the configuration and the metrics.
type runEnv struct {
	cfg *Config
	met *metrics.Metrics
}

func (r *runner) mode() aap.StreamMode {
	caps := r.info.Capabilities
	switch {
	case caps.SupportsStream(aap.StreamDelta):
		return aap.StreamDelta
	case caps.SupportsStream(aap.StreamMessage):
		return aap.StreamMessage
	}
	return aap.StreamNone
}

func (r *runner) feed(ev aap.Event) {
	out, err := r.a2g.Feed(ev)
	if err != nil && !errors.Is(err, translate.ErrTerminated) {
		r.log.Warn().Err(err).Msg("AAP event could not be translated")
	}
	r.write(out)
}

// write sends AG-UI events to the client, counting them. With
// Config.SnapshotAfterRuns a MESSAGES_SNAPSHOT of the thread goes right
// before RUN_FINISHED.
func (r *runner) write(evs []events.Event) {
	if r.env.cfg.SnapshotAfterRuns {
		for i, ev := range evs {
			if _, ok := ev.(*events.RunFinishedEvent); ok {
				evs = append(append(append([]events.Event{}, evs[:i]...), events.NewMessagesSnapshotEvent(r.threadMessages())), evs[i:]...)
				break
			}
		}
	}
	r.w.Write(r.turn, evs, nil) // RUN_FINISHED withheld until the thread is saved (finish)
}

// aguiWriter writes a run's AG-UI events, withholding its RUN_FINISHED.
var aguiWriter = turns.Writer[events.Event]{
	Frame: agui.AppendFrame,
	Name:  func(ev events.Event) string { return string(ev.Type()) },
	Final: func(ev events.Event) bool { _, ok := ev.(*events.RunFinishedEvent); return ok },
}

// writeAGUI writes AG-UI events outside a run (a refusal, a hydration).
func writeAGUI(out *ssestream.Stream, evs []events.Event, log *zerolog.Logger) {
	out.Commit(aguiWriter.Append(out.Buffer(), evs, log, nil))
}

// threadMessages is the whole thread as the client should now hold it:
// its messages (activity aside) and those the run produced, a produced
// result for a call the client answered itself left out.
func (r *runner) threadMessages() []types.Message {
	out := make([]types.Message, 0, len(r.in.Messages)+8)
	answered := map[string]bool{}
	for _, m := range r.in.Messages {
		if m.Role == types.RoleActivity {
			continue
		}
		if m.Role == types.RoleTool {
			answered[m.ToolCallID] = true
		}
		out = append(out, m)
	}
	for _, m := range r.a2g.Messages() {
		if m.Role == types.RoleTool && answered[m.ToolCallID] {
			continue
		}
		out = append(out, m)
	}
	return out
}

// permission is how a turn answered an untrusted server tool call.
type permission struct {
	granted bool
	reason  string
}

// answers are the tool_permission answers of a turn, in the turn's order.
type answers struct {
	order []string
	by    map[string]permission // by toolCallId
}

// answersOf returns the tool_permission answers among a turn's messages.
func answersOf(msgs []aap.Message) answers {
	var a answers // (by nil when none: most turns answer no permission)
	for _, m := range msgs {
		if pm, ok := m.(*aap.ToolPermissionMessage); ok {
			if a.by == nil {
				a.by = map[string]permission{}
			}
			a.order = append(a.order, pm.ToolCallID)
			a.by[pm.ToolCallID] = permission{granted: pm.Granted, reason: pm.Reason}
		}
	}
	return a
}

// newSession is what a plan that starts a new session gives the opener
// of the server's protocol version (runner.openSession, chosen once, at
// intake: createSession for version 3, beginPut for versions 1 and 2).
type newSession struct {
	req                        *aap.PostSessionTurnRequest // the session's first turn
	agent                      aap.AgentConfig
	contextDigest, toolsDigest string
	seedMeta                   json.RawMessage // the metadata of the seed's messages (translate.RequestMetadata)
}
