package aap2agui

import (
	"context"
	"encoding/json"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/events"
	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"
	"github.com/gin-gonic/gin"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/store"
	"github.com/aapagui/aapagui/translate"
)

// The AG-UI extension of AAP (aap.ExtensionAGUI, docs/MAPPING.md): a
// version 3 request that asks for it is granted it, and then may carry
// the page's state, context and forwarded props (the "agui" member), and
// its turn's stream carries the agent's events that AAP has no event for
// (translate.CarriedEvent). A request that does not ask sees plain AAP.

// carryKey marks, in a request's gin context, that the request was
// granted the extension.
const carryKey = "aap2agui.agui"

// grantAGUI grants the extension to a request that asks for it.
func grantAGUI(c *gin.Context) {
	if aap.HasExtension(c.Request.Header, aap.ExtensionAGUI) {
		c.Header(aap.ExtensionsHeader, aap.ExtensionAGUI)
		c.Set(carryKey, true)
	}
	c.Next()
}

// carries reports whether the request was granted the extension.
func carries(c *gin.Context) bool { return c.GetBool(carryKey) }

// checkCarried refuses an "agui" member in a request that was not granted
// the extension: a plain AAP client never has it taken.
func checkCarried(c *gin.Context, in *aap.AGUIInput) error {
	if in != nil && !carries(c) {
		return invalid("invalid_request", "agui: the AG-UI extension is not in effect for this request: ask for it with the header "+aap.ExtensionsHeader+": "+aap.ExtensionAGUI)
	}
	return nil
}

// carryEvent sends a client granted the extension the agent's event ev
// (data: its JSON, or nil) when the extension carries it, in its place
// before what the translator makes of it.
// The frame is written at once (answer.writeCarried), so data, which the
// reader's buffer holds, need not be copied.
func (r *turnRun) carryEvent(ctx context.Context, ev events.Event, data []byte) {
	if !r.ans.carry || !translate.CarriedEvent(ev) {
		return
	}
	if data == nil { // nothing beyond ev's fields: ev's own encoding is the same
		data, _ = json.Marshal(ev)
	}
	r.ans.writeCarried(data, func() { r.history.storeSettled(ctx) })
}

// writeCarried sends an agui event of data, an AG-UI event's JSON, as
// write sends an event.
func (a *answer) writeCarried(data []byte, beforeFull func()) {
	a.w.WriteFrame(a.turn, string(aap.EventAGUI), func(b []byte) ([]byte, error) { return aap.AppendFrame(b, &aap.AGUIEvent{Data: data}) }, beforeFull)
}

// carriedForm marks, after the stream mode, the run log of a turn whose
// stream carries agui events: only a client granted the extension may
// rejoin it, so that a plain AAP client never sees one.
const carriedForm = "+agui"

// logForm is the Form of a turn's run log: its stream mode, marked when
// the stream carries agui events.
func logForm(mode aap.StreamMode, carry bool) string {
	if carry {
		return string(mode) + carriedForm
	}
	return string(mode)
}

// carriedActivities are, for a client granted the extension, the activity
// messages of a MESSAGES_SNAPSHOT (which AAP has no message for) as the
// ACTIVITY_SNAPSHOT events that make or replace each on the page; nil for
// another client.
func (r *observer) carriedActivities(msgs []types.Message) []aap.Event {
	if !r.carry {
		return nil
	}
	var out []aap.Event
	for _, m := range msgs {
		if m.Role != types.RoleActivity {
			continue
		}
		ev := events.NewActivitySnapshotEvent(m.ID, m.ActivityType, m.Content)
		data, err := json.Marshal(ev)
		if err != nil {
			r.log.Warn().Err(err).Str("session", r.sess.ID).Msg("MESSAGES_SNAPSHOT: an activity message could not be carried")
			continue
		}
		out = append(out, &aap.AGUIEvent{Data: data})
	}
	return out
}

// keptAGUI is what the AG-UI extension keeps of a session, for a client
// granted it (GET /sessions/:id): its state, its activity messages, and
// the metadata of its history's messages (read from the history); nil
// when there is none.
func (s *Server) keptAGUI(c *gin.Context, sess *store.Session) (*aap.AGUISession, error) {
	hist, err := s.cfg.Store.History(c.Request.Context(), sess.ID)
	if err != nil {
		return nil, err
	}
	extras := make([]json.RawMessage, len(hist))
	for i := range hist {
		extras[i] = hist[i].AGUI
	}
	kept := &aap.AGUISession{State: sess.State, Activities: sess.Activities, Metadata: translate.HistoryMetadataOf(extras)}
	if kept.State == nil && kept.Activities == nil && kept.Metadata == nil {
		return nil, nil
	}
	return kept, nil
}

// requestMetadata is the metadata a request's "agui" member gives its
// messages, by the message's index (metadataAt).
type requestMetadata map[int]translate.HistoryMetadata

// metadataAt reads the metadata of a request's "agui" member (nil in:
// none); aap's decoder checked its shape.
func metadataAt(in *aap.AGUIInput) requestMetadata {
	if in == nil || in.Metadata == nil {
		return nil
	}
	list, _ := translate.ParseHistoryMetadata(in.Metadata)
	out := make(requestMetadata, len(list))
	for _, m := range list {
		out[m.At] = m
	}
	return out
}

// extras are the history extras (store.Entry.AGUI) of the request's
// message i: its metadata; nil for none.
func (r requestMetadata) extras(i int) json.RawMessage {
	m, ok := r[i]
	if !ok {
		return nil
	}
	return translate.WithMetadata(nil, m)
}
