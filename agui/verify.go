package agui

import (
	"fmt"
	"reflect"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/events"
)

// Verifier checks an AG-UI event stream against the rules the AG-UI
// TypeScript client enforces on what it receives: RUN_STARTED first;
// exactly one terminal event (RUN_FINISHED or RUN_ERROR) and nothing after
// it; text messages, reasoning messages and tool calls started before
// their content and end, never started twice while open, and all closed
// before the terminal event; no empty text, reasoning or argument deltas.
// The zero value is ready to use.
type Verifier struct {
	n          int
	started    bool
	terminated bool
	texts      map[string]bool
	reasoning  map[string]bool
	tools      map[string]bool
}

func (v *Verifier) fail(ev events.Event, format string, args ...any) error {
	return fmt.Errorf("event %d (%s): %s", v.n, ev.Type(), fmt.Sprintf(format, args...))
}

// Check checks the next event.
func (v *Verifier) Check(ev events.Event) error {
	v.n++
	if CheckEvent(ev) != nil {
		return fmt.Errorf("event %d: nil event", v.n)
	}
	ev = passedOn(ev)
	typ := ev.Type()
	if v.terminated {
		return v.fail(ev, "after the terminal event")
	}
	if !v.started {
		if typ != events.EventTypeRunStarted {
			return v.fail(ev, "the first event must be RUN_STARTED")
		}
		v.started = true
		return nil
	}
	open := func(m *map[string]bool, id, what string) error {
		if id == "" {
			return v.fail(ev, "%s without an id", what)
		}
		if *m == nil {
			*m = make(map[string]bool)
		}
		if (*m)[id] {
			return v.fail(ev, "%s %q started while already open", what, id)
		}
		(*m)[id] = true
		return nil
	}
	inside := func(m map[string]bool, id, what string) error {
		if !m[id] {
			return v.fail(ev, "%s %q is not open", what, id)
		}
		return nil
	}
	switch e := ev.(type) {
	case *events.RunStartedEvent:
		return v.fail(ev, "a second RUN_STARTED")
	case *events.TextMessageStartEvent:
		return open(&v.texts, e.MessageID, "text message")
	case *events.TextMessageContentEvent:
		if e.Delta == "" {
			return v.fail(ev, "empty delta")
		}
		return inside(v.texts, e.MessageID, "text message")
	case *events.TextMessageEndEvent:
		if err := inside(v.texts, e.MessageID, "text message"); err != nil {
			return err
		}
		delete(v.texts, e.MessageID)
	case *events.ReasoningMessageStartEvent:
		return open(&v.reasoning, e.MessageID, "reasoning message")
	case *events.ReasoningMessageContentEvent:
		if e.Delta == "" {
			return v.fail(ev, "empty delta")
		}
		return inside(v.reasoning, e.MessageID, "reasoning message")
	case *events.ReasoningMessageEndEvent:
		if err := inside(v.reasoning, e.MessageID, "reasoning message"); err != nil {
			return err
		}
		delete(v.reasoning, e.MessageID)
	case *events.ToolCallStartEvent:
		if e.ToolCallName == "" {
			return v.fail(ev, "tool call without a name")
		}
		return open(&v.tools, e.ToolCallID, "tool call")
	case *events.ToolCallArgsEvent:
		if e.Delta == "" {
			return v.fail(ev, "empty delta")
		}
		return inside(v.tools, e.ToolCallID, "tool call")
	case *events.ToolCallEndEvent:
		if err := inside(v.tools, e.ToolCallID, "tool call"); err != nil {
			return err
		}
		delete(v.tools, e.ToolCallID)
	case *events.ToolCallResultEvent:
		if v.tools[e.ToolCallID] {
			return v.fail(ev, "result for tool call %q before its end", e.ToolCallID)
		}
		if e.MessageID == "" || e.Content == "" {
			return v.fail(ev, "result without messageId or content")
		}
	case *events.RunFinishedEvent, *events.RunErrorEvent:
		for what, m := range map[string]map[string]bool{"text message": v.texts, "reasoning message": v.reasoning, "tool call": v.tools} {
			for id := range m {
				return v.fail(ev, "%s %q still open at the end of the run", what, id)
			}
		}
		if f, ok := e.(*events.RunFinishedEvent); ok && f.Outcome != nil &&
			f.Outcome.Type == events.RunFinishedOutcomeTypeInterrupt && len(f.Outcome.Interrupts) == 0 {
			return v.fail(ev, "interrupt outcome without interrupts")
		}
		v.terminated = true
	}
	return nil
}

// Finish checks that the stream ended with its terminal event.
func (v *Verifier) Finish() error {
	if !v.terminated {
		return fmt.Errorf("the stream ended without RUN_FINISHED or RUN_ERROR (after %d events)", v.n)
	}
	return nil
}

// Verify checks a whole stream with a Verifier.
func Verify(evs []events.Event) error {
	var v Verifier
	for _, ev := range evs {
		if err := v.Check(ev); err != nil {
			return err
		}
	}
	return v.Finish()
}

// passedOn is an event passed on as its JSON (PassOn) decoded, to be
// checked as what it is; ev itself otherwise.
func passedOn(ev events.Event) events.Event {
	if u, ok := ev.(*UnknownEvent); ok && u.Raw != nil {
		if d, err := DecodeEvent(u.Raw); err == nil {
			if _, still := d.(*UnknownEvent); !still {
				return d
			}
		}
	}
	return ev
}

// CheckEvent rejects a nil event, a typed nil pointer and an event without
// its base, any of which would make the SDK's methods panic.
func CheckEvent(ev events.Event) error {
	if ev == nil {
		return ErrNilEvent
	}
	if v := reflect.ValueOf(ev); v.Kind() == reflect.Pointer && v.IsNil() {
		return ErrNilEvent
	}
	if ev.GetBaseEvent() == nil {
		return fmt.Errorf("%w (%T)", ErrNilBaseEvent, ev)
	}
	return nil
}
