package translate

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/events"
	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/agui"
)

// CarriedEvent reports whether the AG-UI extension of AAP
// (aap.ExtensionAGUI) carries ev whole, as an aap.AGUIEvent, from an
// agent's run to the page: the events AAP has no event for. State
// (STATE_SNAPSHOT, STATE_DELTA), steps (STEP_STARTED, STEP_FINISHED),
// activities (ACTIVITY_SNAPSHOT, ACTIVITY_DELTA), RAW and CUSTOM, but a
// LangGraph on_interrupt CUSTOM, which the translators turn into the
// run's interrupt (the page gets it as RUN_FINISHED's outcome, not twice),
// and a CUSTOM named MetadataNote, which is the extension's own.
// Everything else has an AAP form, and an event of a type this project
// does not know is never carried: the page's client would refuse it.
func CarriedEvent(ev events.Event) bool {
	switch e := ev.(type) {
	case *events.StateSnapshotEvent, *events.StateDeltaEvent, *events.StepStartedEvent, *events.StepFinishedEvent,
		*events.ActivitySnapshotEvent, *events.ActivityDeltaEvent, *events.RawEvent:
		return true
	case *events.CustomEvent:
		return e.Name != OnInterruptEvent && e.Name != MetadataNote
	case *events.RunFinishedEvent:
		return carriedResult(e)
	}
	return false
}

// carriedResult reports a RUN_FINISHED whose result the extension
// carries: one that is there and does not name an AAP stop reason (which
// turn_stop carries already). The page's run ends with the result, not
// with the carried event: only the result crosses.
func carriedResult(e *events.RunFinishedEvent) bool {
	_, stop := StopReasonFromResult(e.Result)
	return e.Result != nil && !stop
}

// carried passes on an AG-UI event the extension carried (aap.AGUIEvent)
// as its JSON, byte for byte, once it is known to be one CarriedEvent
// allows: an AAP server cannot start, end or reshape the run through it.
// A RUN_FINISHED gives its result to the run's own RUN_FINISHED; a
// TOOL_CALL_START or TOOL_CALL_ARGS is a call's preview (previews.go).
func (t *AAPToAGUI) carried(e *aap.AGUIEvent) error {
	ev, err := agui.DecodeEvent(e.Data)
	if err != nil {
		return &StreamError{Event: string(aap.EventAGUI), Reason: err.Error()}
	}
	switch p := ev.(type) {
	case *events.ToolCallStartEvent:
		return t.previewStart(p)
	case *events.ToolCallArgsEvent:
		return t.previewArgs(p)
	case *events.CustomEvent:
		if p.Name == MetadataNote {
			var w struct {
				Value json.RawMessage `json:"value"`
			}
			_ = json.Unmarshal(e.Data, &w)
			return t.takeNote(w.Value)
		}
	}
	if !CarriedEvent(ev) {
		return &StreamError{Event: string(aap.EventAGUI), Reason: fmt.Sprintf("%s is not an event the AG-UI extension carries", ev.Type())}
	}
	if _, ok := ev.(*events.RunFinishedEvent); ok {
		var w struct {
			Result json.RawMessage `json:"result"`
		}
		if json.Unmarshal(e.Data, &w) == nil {
			t.result = w.Result
		}
		return nil
	}
	t.out = append(t.out, agui.PassOn(ev.Type(), e.Data))
	return nil
}

// WithAGUIInput gives an agent's run what the page sent under the AG-UI
// extension (aap.AGUIInput) beside the AAP turn: its context, and its
// forwarded props, into which the bridge's own key (ForwardedPropsKey) is
// set over any of the page's (the page's "aap" member is agui2aap's, read
// there already). The page's state is the session's (the bridge sets it
// before building the run). Values keep the page's bytes. nil in changes
// nothing; forwarded props that are not a JSON object are an error.
func WithAGUIInput(run *types.RunAgentInput, in *aap.AGUIInput) error {
	if in == nil {
		return nil
	}
	if in.Context != nil {
		var ctx []types.Context
		if err := json.Unmarshal(in.Context, &ctx); err != nil {
			return fmt.Errorf("agui.context: %w", err)
		}
		run.Context = append(run.Context, ctx...)
	}
	if in.ForwardedProps == nil {
		return nil
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(in.ForwardedProps, &members); err != nil || members == nil {
		return errors.New("agui.forwardedProps: must be a JSON object, so that the bridge's own key can go in it")
	}
	props := make(map[string]any, len(members)+1)
	for k, v := range members {
		props[k] = v
	}
	if own, ok := run.ForwardedProps.(map[string]any); ok {
		if v, ok := own[ForwardedPropsKey]; ok {
			props[ForwardedPropsKey] = v
		}
	}
	run.ForwardedProps = props
	return nil
}
