package translate

import (
	"errors"
	"fmt"
	"reflect"
	"time"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/events"
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

// slabSize is how many per-token events (text and reasoning deltas) a
// translator allocates at once: a long stream then costs one allocation per
// slabSize deltas instead of one per delta. Every event is still its own
// value, never reused, so a caller may keep events as long as it likes (a
// kept event keeps its slab alive: at most slabSize small events).
const slabSize = 32

// firstSlabSize is the size of a stream's first slab of each kind: a
// stream that stays idle after its first few events (most open streams)
// then holds a few small events, not slabSize of them.
const firstSlabSize = 4

// refill gives an empty *slab new elements: firstSlabSize the first time
// (a nil slab), slabSize after. A used-up slab is empty but not nil.
func refill[T any](slab *[]T) {
	if len(*slab) > 0 {
		return
	}
	n := slabSize
	if *slab == nil {
		n = firstSlabSize
	}
	*slab = make([]T, n)
}

// slabEvent is boxEvent taking its box from *slab, refilled when empty.
func slabEvent[E any](slab *[]eventBox[E], typ events.EventType, now func() time.Time) (*E, *events.BaseEvent) {
	refill(slab)
	b := &(*slab)[0]
	*slab = (*slab)[1:]
	return fillBox(b, typ, now)
}

func fillBox[E any](b *eventBox[E], typ events.EventType, now func() time.Time) (*E, *events.BaseEvent) {
	b.base.EventType = typ
	if now != nil {
		b.ts = now().UnixMilli()
		b.base.TimestampMs = &b.ts
	}
	return &b.ev, &b.base
}

// checkEvent rejects a nil event, a typed nil pointer and an event without
// its base, any of which would make the SDK's methods panic.
func checkEvent(ev events.Event) error {
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
