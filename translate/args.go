package translate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/aapagui/aapagui/internal/jsonenc"
)

// Tool-call arguments travel as a JSON object in AAP (the tool_use block's
// input) and as a JSON string holding JSON text in AG-UI (function.arguments,
// or the concatenated TOOL_CALL_ARGS deltas). This file converts between the
// two without ever decoding the JSON into Go values: key order, number
// spelling (an integer beyond 2^53 included) and string escapes stay exactly
// as they arrived, only whitespace outside strings is removed. A round trip
// AAP -> AG-UI -> AAP therefore gives back the compacted input byte for byte.

// RawArgumentsKey is the key under which arguments that are not a JSON object
// are preserved (upstream streams only): RecoverInput returns
// {"_raw_arguments":"<the arguments text>"} so that the application can report
// the malformed call back to the agent instead of losing it.
const RawArgumentsKey = "_raw_arguments"

// emptyObject is what missing or empty arguments become, in both directions.
const emptyObject = "{}"

// jsonSpace is the JSON whitespace set (RFC 8259 "ws"); Unicode spaces such as
// U+00A0 are not whitespace in JSON and make the text invalid instead.
const jsonSpace = " \t\n\r"

// ArgumentsError reports tool-call arguments that are not a JSON object.
type ArgumentsError struct {
	// ToolCallID is the tool call the arguments belong to; empty when the
	// caller did not name one (ArgumentsFromInput).
	ToolCallID string
	// Reason says what is wrong, e.g. "not a JSON object (got an array)".
	Reason string
}

// Error names the tool call, quoted, and the reason.
func (e *ArgumentsError) Error() string {
	if e.ToolCallID == "" {
		return "invalid tool call arguments: " + e.Reason
	}
	return fmt.Sprintf("invalid arguments for tool call %q: %s", e.ToolCallID, e.Reason)
}

// ArgumentsFromInput turns an AAP tool input into AG-UI arguments text: the
// compacted JSON; nil/empty/`null` input → "{}"; anything that is not a JSON
// object → *ArgumentsError (with an empty ToolCallID: the caller knows it).
// Text that is not valid UTF-8 is rejected as well, because it could not be
// carried inside a JSON string without being altered.
func ArgumentsFromInput(input json.RawMessage) (string, error) {
	trimmed := bytes.Trim(input, jsonSpace)
	if len(trimmed) == 0 {
		return emptyObject, nil
	}
	if reason := checkObject(trimmed); reason != "" {
		if reason == reasonNull {
			return emptyObject, nil
		}
		return "", &ArgumentsError{Reason: reason}
	}
	if !bytes.ContainsAny(trimmed, jsonSpace) {
		// Already compact (the usual case): one copy, no second pass.
		return string(trimmed), nil
	}
	return string(appendCompact(make([]byte, 0, len(trimmed)), trimmed)), nil
}

// InputFromArguments parses AG-UI arguments text for a client-supplied
// message: "" or all-whitespace → `{}`; a JSON object → compacted bytes;
// anything else (invalid, truncated, array, string, number, null, trailing
// garbage, invalid UTF-8) → *ArgumentsError naming toolCallID.
func InputFromArguments(toolCallID, args string) (json.RawMessage, error) {
	trimmed := strings.Trim(args, jsonSpace)
	if trimmed == "" {
		return json.RawMessage(emptyObject), nil
	}
	// One allocation: copy, validate the copy, then compact it in place
	// (compaction only ever shrinks, so writing forward over it is safe).
	buf := []byte(trimmed)
	if reason := checkObject(buf); reason != "" {
		return nil, &ArgumentsError{ToolCallID: toolCallID, Reason: reason}
	}
	return appendCompact(buf[:0], buf), nil
}

// RecoverInput is InputFromArguments for an upstream agent's stream, where
// nothing may be dropped: on error it returns
// {"_raw_arguments":"<args as a JSON string>"} and ok=false. A valid object
// that happens to contain the key RawArgumentsKey is returned as is with
// ok=true; only ok tells the two apart.
func RecoverInput(args string) (input json.RawMessage, ok bool) {
	in, err := InputFromArguments("", args)
	if err == nil {
		return in, true
	}
	var buf bytes.Buffer
	buf.Grow(len(args) + len(RawArgumentsKey) + 8)
	buf.WriteString(`{"` + RawArgumentsKey + `":`)
	_ = jsonenc.Encode(&buf, args) // <, > and & stay readable; encoding a string cannot fail
	buf.Truncate(buf.Len() - 1)
	buf.WriteByte('}')
	return buf.Bytes(), false
}

// reasonNull is checkObject's reason for the JSON literal null, which
// ArgumentsFromInput accepts as "no input".
const reasonNull = "not a JSON object (got null)"

// checkObject returns "" when b (non-empty, trimmed of JSON whitespace) is one
// valid JSON object in valid UTF-8, and otherwise the reason it is not.
func checkObject(b []byte) string {
	if !json.Valid(b) {
		return syntaxReason(b)
	}
	if !utf8.Valid(b) {
		return "not valid UTF-8"
	}
	switch b[0] {
	case '{':
		return ""
	case '[':
		return "not a JSON object (got an array)"
	case '"':
		return "not a JSON object (got a string)"
	case 't', 'f':
		return "not a JSON object (got a boolean)"
	case 'n':
		return reasonNull
	default:
		return "not a JSON object (got a number)"
	}
}

// syntaxReason describes why b is not valid JSON. It runs only on the error
// path, so the second scan does not matter.
func syntaxReason(b []byte) string {
	var v json.RawMessage
	err := json.Unmarshal(b, &v)
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("not valid JSON: %s (at byte %d)", se.Error(), se.Offset)
	}
	return "not valid JSON"
}

// appendCompact appends src to dst without the whitespace outside strings.
// src must be valid JSON: the scan only tracks strings and escapes. dst may
// share src's backing array as long as it starts at or before src, because
// every byte is written at or before the position it is read from.
func appendCompact(dst, src []byte) []byte {
	inString, escaped := false, false
	start := 0
	for i, c := range src {
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case ' ', '\t', '\n', '\r':
			dst = append(dst, src[start:i]...)
			start = i + 1
		}
	}
	return append(dst, src[start:]...)
}

// CompletedCall is a tool call whose arguments have been fully received.
type CompletedCall struct {
	ToolCallID      string
	Name            string
	ParentMessageID string
	// Arguments is the concatenation of every delta appended to the call, in
	// order, unparsed: pass it to InputFromArguments or RecoverInput.
	Arguments string
}

// ArgsAccumulator collects streamed argument deltas for several tool calls at
// once (their deltas may interleave), keyed by toolCallId, in the order calls
// were started. The zero value is ready to use. It is not safe for concurrent
// use; one accumulator serves one stream.
//
// Append costs no allocation beyond amortised growth of the call's buffer, and
// buffers of ended calls are reused by later calls, so a long run with many
// tool calls reaches a steady state of one allocation per call (the arguments
// string End returns).
type ArgsAccumulator struct {
	open    holed[argsCall]      // open calls, in start order
	byID    map[string]*argsCall // open calls by toolCallId
	ended   map[string]struct{}  // toolCallIds of calls already ended
	last    *argsCall            // one-entry cache: the call most recently appended to
	chunked *argsCall            // the call opened by TOOL_CALL_CHUNK, while open
	free    []*argsCall          // ended calls kept for reuse, with their buffers
}

// argsCall is one open tool call.
type argsCall struct {
	id, name, parent string
	buf              []byte
	at               int // index in open
}

const (
	// maxFreeCalls bounds how many ended calls are kept for reuse.
	maxFreeCalls = 8
	// maxReusedBuffer is the largest buffer kept for reuse; a call with huge
	// arguments should not pin its memory for the rest of the stream.
	maxReusedBuffer = 64 << 10
)

// errChunkWithoutID is what the TS client throws as "First TOOL_CALL_CHUNK
// must have a toolCallId".
var errChunkWithoutID = errors.New("TOOL_CALL_CHUNK without toolCallId and no chunked tool call in progress")

// Start opens a tool call (TOOL_CALL_START). An empty id or name, or an id
// already open or already ended in this accumulator, is an error: AAP keys
// tool results by toolCallId, so an id must name exactly one call.
func (a *ArgsAccumulator) Start(id, name, parentMessageID string) error {
	_, err := a.start(id, name, parentMessageID)
	return err
}

func (a *ArgsAccumulator) start(id, name, parent string) (*argsCall, error) {
	switch {
	case id == "":
		return nil, errors.New("tool call start with an empty toolCallId")
	case name == "":
		return nil, fmt.Errorf("tool call %q: empty toolCallName", id)
	}
	if _, ok := a.byID[id]; ok {
		return nil, fmt.Errorf("tool call %q: started twice", id)
	}
	if _, ok := a.ended[id]; ok {
		return nil, fmt.Errorf("tool call %q: started again after it ended", id)
	}
	var c *argsCall
	if n := len(a.free); n > 0 {
		c = a.free[n-1]
		a.free[n-1] = nil
		a.free = a.free[:n-1]
	} else {
		c = new(argsCall)
	}
	c.id, c.name, c.parent = id, name, parent
	if a.byID == nil {
		a.byID = make(map[string]*argsCall)
	}
	a.byID[id] = c
	c.at = a.open.push(c)
	return c, nil
}

// Append adds one TOOL_CALL_ARGS delta to the open call id. An id that is not
// open (never started, or already ended) is an error. An empty delta is
// accepted and changes nothing.
func (a *ArgsAccumulator) Append(id, delta string) error {
	c := a.last
	if c == nil || c.id != id {
		c = a.byID[id]
		if c == nil {
			return a.notOpen(id, "args")
		}
		a.last = c
	}
	c.buf = append(c.buf, delta...)
	return nil
}

// End closes the open call id (TOOL_CALL_END) and returns it with its
// arguments. An id that is not open is an error.
func (a *ArgsAccumulator) End(id string) (CompletedCall, error) {
	c := a.byID[id]
	if c == nil {
		return CompletedCall{}, a.notOpen(id, "end")
	}
	return a.end(c), nil
}

func (a *ArgsAccumulator) end(c *argsCall) CompletedCall {
	done := CompletedCall{
		ToolCallID:      c.id,
		Name:            c.name,
		ParentMessageID: c.parent,
		Arguments:       string(c.buf),
	}
	delete(a.byID, c.id)
	a.open.drop(c.at)
	if a.open.tidy() {
		for i, o := range a.open.items() {
			o.at = i
		}
	}
	if a.ended == nil {
		a.ended = make(map[string]struct{})
	}
	a.ended[c.id] = struct{}{}
	a.recycle(c)
	return done
}

// notOpen builds the error for an event naming a call that is not open.
func (a *ArgsAccumulator) notOpen(id, what string) error {
	if _, ok := a.ended[id]; ok {
		return fmt.Errorf("tool call %q: %s after the call ended", id, what)
	}
	return fmt.Errorf("tool call %q: %s for a call that was not started", id, what)
}

// recycle forgets c and keeps it, with its buffer, for a later call.
func (a *ArgsAccumulator) recycle(c *argsCall) {
	if a.last == c {
		a.last = nil
	}
	if a.chunked == c {
		a.chunked = nil
	}
	if len(a.free) >= maxFreeCalls {
		return
	}
	buf := c.buf[:0]
	if cap(buf) > maxReusedBuffer {
		buf = nil
	}
	*c = argsCall{buf: buf}
	a.free = append(a.free, c)
}

// Chunk applies one TOOL_CALL_CHUNK; its arguments are the fields of the Go
// SDK's events.ToolCallChunkEvent, where nil means absent.
//
// It follows transformChunks in @ag-ui/client
// (ag-ui-protocol/ag-ui, sdks/typescript/packages/client/src/chunks/transform.ts;
// the logic below is the same at commits 22d69d98 and 1ce794cb of that file):
//   - a chunk whose toolCallId differs from the current chunked call ends the
//     current call (the TS client emits TOOL_CALL_END) and starts a new one;
//   - with no chunked call in progress, a chunk must carry toolCallId and
//     toolCallName ("First TOOL_CALL_CHUNK must have a toolCallId/
//     toolCallName") and starts the call with its parentMessageId;
//   - a chunk without toolCallId, or with the current one, continues the
//     current call; a later chunk's toolCallName and parentMessageId are
//     ignored, as in the TS client;
//   - a delta, if present, is appended to the current call.
//
// Chunk returns the calls this chunk ended (0 or 1) and whether it started
// one. When err is not nil, ended is still valid: the previous call was
// closed before the new one was refused, as the TS client does, and its
// arguments must not be lost. A chunk naming a call opened by Start, or an
// id that already ended, is an error (the TS client would emit a second
// TOOL_CALL_START for it).
func (a *ArgsAccumulator) Chunk(id, name, parentMessageID, delta *string) (ended []CompletedCall, started bool, err error) {
	if a.chunked != nil && id != nil && *id != a.chunked.id {
		ended = []CompletedCall{a.end(a.chunked)}
	}
	if a.chunked == nil {
		switch {
		case id == nil:
			return ended, false, errChunkWithoutID
		case name == nil:
			return ended, false, fmt.Errorf("tool call %q: first TOOL_CALL_CHUNK has no toolCallName", *id)
		}
		parent := ""
		if parentMessageID != nil {
			parent = *parentMessageID
		}
		c, err := a.start(*id, *name, parent)
		if err != nil {
			return ended, false, err
		}
		a.chunked = c
		started = true
	}
	if delta != nil {
		a.chunked.buf = append(a.chunked.buf, *delta...)
	}
	return ended, started, nil
}

// EndChunked ends the current chunked call, if any. Call it when a non-chunk
// event arrives, as the TS client does, and at stream end.
//
// In transformChunks every event closes a pending chunked call before it is
// passed on (TEXT_MESSAGE_CHUNK and REASONING_MESSAGE_CHUNK too), except RAW,
// ACTIVITY_SNAPSHOT, ACTIVITY_DELTA, REASONING_ENCRYPTED_VALUE and
// SUBAGENT_*, which pass through without closing it. At stream completion its
// finalize handler computes the closing TOOL_CALL_END but discards it, so in
// the TS client only a terminal RUN_FINISHED or RUN_ERROR closes the last
// chunked call; calling EndChunked at stream end instead keeps the arguments
// of a stream that stops early, since nothing from an upstream may be dropped.
func (a *ArgsAccumulator) EndChunked() (CompletedCall, bool) {
	if a.chunked == nil {
		return CompletedCall{}, false
	}
	return a.end(a.chunked), true
}

// Open returns the ids of the calls still open, in start order (nil if none).
// The bridge closes them (or reports them) when the stream ends.
func (a *ArgsAccumulator) Open() []string {
	if a.open.len() == 0 {
		return nil
	}
	ids := make([]string, 0, a.open.len())
	for _, c := range a.open.items() {
		if c != nil {
			ids = append(ids, c.id)
		}
	}
	return ids
}

// Reset forgets every call, open or ended, so the accumulator can serve a new
// stream; buffers are kept for reuse.
func (a *ArgsAccumulator) Reset() {
	for _, c := range a.open.items() {
		if c != nil {
			a.recycle(c)
		}
	}
	a.open.reset()
	clear(a.byID)
	clear(a.ended)
	a.last, a.chunked = nil, nil
}
