package aap2agui

import (
	"bytes"
	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/events"
	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"
	"github.com/rs/zerolog"

	"github.com/aapagui/aapagui/bridge/internal/metrics"
	"github.com/aapagui/aapagui/translate"
)

// What of the agent's events no AAP event carries, so that the AAP client
// is not sent it (docs/MAPPING.md): counted per turn, and at the turn's end
// logged once and added to aap2agui_events_not_carried_total.

// notCarriedKind is one kind of what the AAP client is not sent.
type notCarriedKind uint8

const (
	ncStateSnapshot notCarriedKind = iota
	ncStateDelta
	ncCustom
	ncRaw
	ncActivitySnapshot
	ncActivityDelta
	ncStepStarted
	ncStepFinished
	ncUnknown
	ncActivityMessage // an activity message of a MESSAGES_SNAPSHOT
	ncRunResult       // RUN_FINISHED's result, unless it names a stop reason
	ncMetadata        // an event's metadata (kept with the history, not sent)
	ncKinds
)

// notCarriedNames are the kinds' names: the metric's type label and the
// log's keys; event types as AG-UI names them, "unknown" for a type the
// decoder does not know (its name is the agent's: never a label).
var notCarriedNames = [ncKinds]string{
	ncStateSnapshot:    string(events.EventTypeStateSnapshot),
	ncStateDelta:       string(events.EventTypeStateDelta),
	ncCustom:           string(events.EventTypeCustom),
	ncRaw:              string(events.EventTypeRaw),
	ncActivitySnapshot: string(events.EventTypeActivitySnapshot),
	ncActivityDelta:    string(events.EventTypeActivityDelta),
	ncStepStarted:      string(events.EventTypeStepStarted),
	ncStepFinished:     string(events.EventTypeStepFinished),
	ncUnknown:          "unknown",
	ncActivityMessage:  "MESSAGES_SNAPSHOT:activity",
	ncRunResult:        "RUN_FINISHED:result",
	ncMetadata:         "metadata",
}

// notCarried counts a turn's events by kind; nil until the first. A run
// that sends none of them costs nothing per event.
type notCarried struct{ n [ncKinds]int }

// notCarried counts n of kind k of what the AAP client is not sent.
func (r *observer) notCarried(k notCarriedKind, n int) {
	if n <= 0 {
		return
	}
	if r.dropped == nil {
		r.dropped = new(notCarried)
	}
	r.dropped.n[k] += n
}

// notSent counts ev, of kind k, unless the client is sent it under the
// AG-UI extension (translate.CarriedEvent decides, as for the write).
// notSentMetadata counts, for a client not granted the extension, an
// event's metadata (data: its JSON, nil for a plain event): aap2agui
// keeps it with the history, and AAP has no field to send it in.
func (r *observer) notSentMetadata(data []byte) {
	if !r.carry && data != nil && bytes.Contains(data, metadataKey) {
		r.notCarried(ncMetadata, 1)
	}
}

var metadataKey = []byte(`"metadata"`)

func (r *observer) notSent(ev events.Event, k notCarriedKind) {
	if !r.carry || !translate.CarriedEvent(ev) {
		r.notCarried(k, 1)
	}
}

// notCarriedKindOf is the kind of an event that observe passes on and no
// AAP event carries; ok is false for the others (which the translator
// carries, or which only frame what it carries: RUN_STARTED,
// REASONING_START, …). A CUSTOM on_interrupt is carried (as an
// interrupt); a RUN_FINISHED is counted for its result. (The state events
// and unknown ones observe counts itself: they go no further.)
func notCarriedKindOf(ev events.Event) (k notCarriedKind, ok bool) {
	switch e := ev.(type) {
	case *events.CustomEvent:
		_, carried := translate.InterruptFromOnInterrupt(e)
		return ncCustom, !carried
	case *events.RawEvent:
		return ncRaw, true
	case *events.ActivitySnapshotEvent:
		return ncActivitySnapshot, true
	case *events.ActivityDeltaEvent:
		return ncActivityDelta, true
	case *events.StepStartedEvent:
		return ncStepStarted, true
	case *events.StepFinishedEvent:
		return ncStepFinished, true
	case *events.RunFinishedEvent:
		_, stop := translate.StopReasonFromResult(e.Result)
		return ncRunResult, e.Result != nil && !stop
	}
	return 0, false
}

// activityMessages counts the activity messages of a MESSAGES_SNAPSHOT.
func activityMessages(msgs []types.Message) int {
	n := 0
	for i := range msgs {
		if msgs[i].Role == types.RoleActivity {
			n++
		}
	}
	return n
}

// report adds the turn's counts to the metric and logs them, once, at
// info: nothing when there are none.
func (c *notCarried) report(log *zerolog.Logger, met *metrics.Metrics, session string) {
	if c == nil {
		return
	}
	counts := zerolog.Dict()
	for k, n := range c.n {
		if n > 0 {
			counts.Int(notCarriedNames[k], n)
			met.NotCarried(notCarriedNames[k], n)
		}
	}
	log.Info().Str("session", session).Dict("not_carried", counts).
		Msg("the agent sent what no AAP event carries: the AAP client was not sent it")
}
