// Package translate converts between AAP v3 and AG-UI, in both directions:
// messages and content blocks, tool specs, tool-call arguments, stop reasons,
// tool permissions and interrupts, and whole event streams.
//
// The package does no I/O of its own: it opens no connection and no file,
// logs nothing and starts no goroutine. What it cannot decide alone, the
// caller gives it as functions, which it calls synchronously, on the
// caller's goroutine, from the call that needs them: the ids of the
// messages it makes (NewID; nil means random ids), the events' timestamps
// (Now; nil means none), whose tools are whose (IsClientTool,
// IsServerTool, IsAgentTool: see ToolOwners), and, for a long text, where
// to write its parts as it streams (Spill, a TextSpill). The bridges give
// their store's write there: a translator given a Spill writes to the
// store from within the call that fed it the text (Feed, AddTextDelta),
// before that call returns, and learns only whether the write failed (it
// then holds the rest of the text itself). Given sequential ids
// (SequentialIDs), no clock and no Spill, the same input always gives the
// same bytes: the golden files are made so.
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
