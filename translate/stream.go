package translate

import (
	"errors"
	"fmt"
	"time"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/events"

	"github.com/aapagui/aapagui/internal/slab"
)

// StreamError reports an event that breaks the rules of its stream (for
// example arguments for a tool call that was never started). The stream
// cannot be translated faithfully past it; Finish still closes it cleanly.
type StreamError struct {
	Event  string // the offending event's type or name
	Reason string
}

// Error describes the failure.
func (e *StreamError) Error() string { return fmt.Sprintf("%s: %s", e.Event, e.Reason) }

// ErrTerminated is returned by Feed for an event that arrives after the
// stream's terminal event. The event is ignored.
var ErrTerminated = errors.New("event after the end of the run")

// eventBox lets an SDK event, its embedded base and its timestamp share one
// allocation: the per-event cost on the hot path is a single allocation.
type eventBox[E any] struct {
	ev   E
	base events.BaseEvent
	ts   int64
}

func boxEvent[E any](typ events.EventType, now func() time.Time) (*E, *events.BaseEvent) {
	return fillBox(new(eventBox[E]), typ, now)
}

// slabEvent is boxEvent taking its box from slab s (internal/slab): a
// long stream costs one allocation per slab of deltas, not one per delta.
func slabEvent[E any](s *[]eventBox[E], typ events.EventType, now func() time.Time) (*E, *events.BaseEvent) {
	return fillBox(slab.Next(s), typ, now)
}

func fillBox[E any](b *eventBox[E], typ events.EventType, now func() time.Time) (*E, *events.BaseEvent) {
	b.base.EventType = typ
	if now != nil {
		b.ts = now().UnixMilli()
		b.base.TimestampMs = &b.ts
	}
	return &b.ev, &b.base
}
