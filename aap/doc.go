// Package aap implements the Agent Application Protocol (AAP) on the wire,
// version 3 and the earlier versions 1 and 2: the JSON types of every
// request, response and message (the version 1 and 2 forms beside the
// version 3 ones, with conversions between them), the SSE events of a
// streaming turn, and an HTTP client that speaks whichever version the
// server announces.
//
// Decoding is strict and total. Unknown roles and content-block types,
// missing required fields, values of the wrong JSON type and turns of the
// wrong shape are reported as a *DecodeError naming the field, never a panic.
// Unknown object keys are ignored so that newer peers stay readable, and an
// unknown SSE event name decodes to *UnknownEvent rather than failing a
// stream.
//
// Two representation choices keep AAP exact through a proxy:
//
//   - [Content] remembers whether it was a string or a list of blocks, so a
//     message re-encodes the way it arrived.
//   - Tool input ([ToolUseBlock.Input], [ToolCall.Input]) is kept as raw JSON
//     bytes: keys keep their order, numbers keep every digit, escapes are not
//     rewritten. Encoding only compacts it.
//
// A typical client session:
//
//	c := aap.NewClient("http://localhost:8080", aap.ClientOptions{APIKey: key})
//	sess, err := c.CreateSession(ctx, &aap.PostSessionsRequest{Agent: aap.AgentConfig{Name: "demo"}})
//	...
//	for ev, err := range c.StreamTurn(ctx, sess.SessionID, &aap.PostSessionTurnRequest{
//		Stream:   aap.StreamDelta,
//		Messages: []aap.Message{aap.UserText("hello")},
//	}) {
//		...
//	}
package aap
