// Package translate converts between AAP v3 and AG-UI, in both directions:
// messages and content blocks, tool specs, tool-call arguments, stop reasons,
// tool permissions and interrupts, and whole event streams.
//
// It is a pure library: no I/O, no logging, no goroutines. Anything that
// would vary between runs (message ids, timestamps) is injected, so the same
// input always gives the same bytes.
//
// Stream translation is done by two explicit state machines. Feed them one
// event at a time; each call returns the events to emit; Finish closes
// whatever is still open and guarantees exactly one terminal event:
//
//	t := translate.NewAAPToAGUI(translate.AAPToAGUIOptions{ThreadID: "t1", RunID: "r1"})
//	for ev, err := range client.StreamTurn(ctx, id, req) {
//		if err != nil {
//			break
//		}
//		out, err := t.Feed(ev)
//		...write out...
//	}
//	...write t.Finish()...
//
// AG-UI event structs are those of the AG-UI Go SDK (pkg/core/events) and
// of package agui, the AG-UI wire, which also reads and writes their JSON;
// this package holds no codec of its own.
//
// The rules followed here, including every case where one side has no exact
// counterpart on the other, are listed in the project's docs/MAPPING.md.
package translate
