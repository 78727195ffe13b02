package agui2aap

import (
	"bytes"
	"context"
	"encoding/json"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/events"
	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"
	"github.com/rs/zerolog"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/agui"
	"github.com/aapagui/aapagui/bridge/internal/metrics"
	"github.com/aapagui/aapagui/store"
	"github.com/aapagui/aapagui/translate"
)

// The AG-UI extension of AAP (aap.ExtensionAGUI, docs/MAPPING.md). Every
// request to the AAP server asks for it (newClient); a version 3 server
// whose GET /meta grants it (aap2agui) gets the page's state, context and
// forwarded props with each run's first turn (the "agui" member) instead
// of the context written into the user message, and streams the agent's
// events that AAP has no event for, which reach the page as the agent
// sent them (translate.AAPToAGUI). An AAP server that does not grant it
// sees the requests it saw before the extension.

// carriedInput is what a run's input holds that AAP has no field for,
// for a server that grants the extension: the state, the context and the
// forwarded props (when they are an object), each as its JSON; nil when
// the input holds none of them.
func carriedInput(in *types.RunAgentInput) *aap.AGUIInput {
	var out aap.AGUIInput
	if in.State != nil {
		out.State = marshalled(in.State)
	}
	if len(in.Context) > 0 {
		out.Context = marshalled(in.Context)
	}
	if in.ForwardedProps != nil {
		if b := marshalled(in.ForwardedProps); len(b) > 0 && b[0] == '{' {
			out.ForwardedProps = b
		}
	}
	if out.Empty() {
		return nil
	}
	return &out
}

// marshalled is v's JSON: a value decoded from JSON marshals (nil if it
// cannot, or is null).
func marshalled(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil || bytes.Equal(b, []byte("null")) {
		return nil
	}
	return b
}

// The types agui2aap counts in events_not_carried_total: what of the
// page's run an AAP server without the extension is not sent.
const (
	notCarriedState = "RunAgentInput.state"
	notCarriedProps = "RunAgentInput.forwardedProps"
)

// noteNotCarried counts and logs, once for the run, what of its input an
// AAP server that does not grant the extension is not sent: a state that
// holds something, and forwarded props beyond the "aap" member agui2aap
// reads itself. (The context is sent, written into the user message.)
func noteNotCarried(log *zerolog.Logger, met *metrics.Metrics, in *types.RunAgentInput) {
	counts := zerolog.Dict()
	n := 0
	count := func(typ string) {
		counts.Int(typ, 1)
		met.NotCarried(typ, 1)
		n++
	}
	if nonEmpty(in.State) {
		count(notCarriedState)
	}
	if props, ok := in.ForwardedProps.(map[string]any); ok {
		if _, own := props[translate.ForwardedPropsKey]; len(props) > 1 || len(props) == 1 && !own {
			count(notCarriedProps)
		}
	}
	if n > 0 {
		log.Info().Str("thread", in.ThreadID).Dict("not_carried", counts).
			Msg("the AAP server does not grant the AG-UI extension: what AAP has no field for of the page's run was not sent")
	}
}

// nonEmpty reports a state that is neither absent, null nor an
// empty object, as the input's decoder leaves it (a map, or the JSON),
// without encoding it.
func nonEmpty(state any) bool {
	switch v := state.(type) {
	case nil:
		return false
	case map[string]any:
		return len(v) > 0
	case json.RawMessage:
		var b bytes.Buffer
		if json.Compact(&b, v) != nil {
			return len(bytes.TrimSpace(v)) > 0
		}
		return b.String() != "null" && b.String() != "{}"
	}
	return true
}

// sessionKept is what the thread's AAP session keeps under the extension
// (GET /sessions/:id): its state and its activity messages, as stored,
// which a hydration gives the page back; nil without the extension, or
// when there is none or it cannot be read (logged: the page then starts
// from its own state, and without the activity messages).
func sessionKept(ctx context.Context, ua upstreamAgent, th *store.Thread, log *zerolog.Logger) *keptByServer {
	if !ua.carry || th == nil || th.SessionID == "" || th.Agent != ua.info.Name {
		return nil
	}
	sess, err := ua.cl.GetSession(ctx, th.SessionID)
	if err != nil {
		log.Warn().Err(err).Str("session", th.SessionID).Msg("reading the AAP session's state for a hydration: the page gets none")
		return nil
	}
	if sess.AGUI == nil {
		return nil
	}
	return &keptByServer{AGUISession: sess.AGUI, session: th.SessionID, log: log}
}

// keptByServer is what an AAP session keeps under the extension, and
// what a hydration made of it: the metadata of the snapshot's messages
// (place).
type keptByServer struct {
	*aap.AGUISession
	session string
	log     *zerolog.Logger
	page    agui.Metadata // by the snapshot's own ids (place)
}

// stateSnapshot is the STATE_SNAPSHOT of the state kept; nil for none.
func (k *keptByServer) stateSnapshot() events.Event {
	if k == nil || k.State == nil {
		return nil
	}
	raw := append(append([]byte(`{"type":"STATE_SNAPSHOT","snapshot":`), k.State...), '}')
	return agui.PassOn(events.EventTypeStateSnapshot, raw)
}

// place puts what the session keeps beside its history into msgs, the
// AG-UI form of hist: the activity messages each before the messages made
// of the history message at its place, and the metadata of each message
// (and its tool calls) noted under the message's id here, for the
// snapshot. The messages that are not reasoning are hist's, tool
// permissions aside, one for one and in order. What cannot be read is
// logged and left out.
func (k *keptByServer) place(msgs []types.Message, hist []aap.Message) []types.Message {
	acts, err := translate.ParseActivities(k.Activities)
	if err != nil {
		k.log.Warn().Err(err).Str("session", k.session).Msg("the AAP session's activity messages could not be read: the page gets none")
	}
	var metas []translate.HistoryMetadata
	if k.Metadata != nil && json.Unmarshal(k.Metadata, &metas) != nil {
		k.log.Warn().Str("session", k.session).Msg("the AAP session's metadata could not be read: the page gets none")
		metas = nil
	}
	metaAt := make(map[int]*translate.HistoryMetadata, len(metas))
	for i := range metas {
		metaAt[metas[i].At] = &metas[i]
	}
	orig := make([]int, 0, len(hist)) // the place in hist of each message msgs was made of
	for i, m := range hist {
		if _, ok := m.(*aap.ToolPermissionMessage); !ok {
			orig = append(orig, i)
		}
	}
	place := acts.Placer()
	out := make([]types.Message, 0, len(msgs))
	start, j := 0, 0 // the first message of the next history message's (its reasoning first); its index in orig
	for i := range msgs {
		if msgs[i].Role == types.RoleReasoning || j >= len(orig) {
			continue
		}
		out = place.Before(out, orig[j])
		out = append(out, msgs[start:i+1]...)
		if m := metaAt[orig[j]]; m != nil {
			k.note(msgs[i].ID, m)
		}
		start, j = i+1, j+1
	}
	return place.Rest(append(out, msgs[start:]...))
}

// note keeps m's metadata for the snapshot's message of id.
func (k *keptByServer) note(id string, m *translate.HistoryMetadata) {
	if m.Metadata != nil {
		if k.page.Messages == nil {
			k.page.Messages = map[string]json.RawMessage{}
		}
		k.page.Messages[id] = m.Metadata
	}
	for call, meta := range m.ToolCalls {
		if k.page.ToolCalls == nil {
			k.page.ToolCalls = map[string]json.RawMessage{}
		}
		k.page.ToolCalls[call] = meta
	}
}

// snapshot is the hydration's MESSAGES_SNAPSHOT of msgs, with the
// metadata place noted (written as its JSON: the SDK's messages have no
// field for it).
func (k *keptByServer) snapshot(msgs []types.Message) events.Event {
	ev := events.NewMessagesSnapshotEvent(msgs)
	if k == nil || len(k.page.Messages)+len(k.page.ToolCalls) == 0 {
		return ev
	}
	data, err := json.Marshal(ev)
	if err == nil {
		data, err = agui.PatchMetadata(data, k.page)
	}
	if err != nil {
		k.log.Warn().Err(err).Str("session", k.session).Msg("the hydration's metadata could not be written: the page gets none")
		return ev
	}
	return agui.PassOn(events.EventTypeMessagesSnapshot, data)
}
