package aap2agui

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/store"
	"github.com/aapagui/aapagui/translate"
)

func entryLines(t *testing.T, es []store.Entry) []string {
	t.Helper()
	out := make([]string, len(es))
	for i, e := range es {
		b, err := json.Marshal(e.Message)
		assert.NoError(t, err)
		out[i] = e.AGUIID + " " + string(b)
	}
	return out
}

// A snapshot keeps the interrupt calls aap2agui made and their answers,
// after the entries they followed.
func TestKeepInterruptCalls(t *testing.T) {
	call := func(id string) *aap.ToolUseBlock {
		return &aap.ToolUseBlock{ToolCallID: id, Name: translate.InterruptToolName, Input: json.RawMessage(`{"id":"` + id + `"}`)}
	}
	text := func(s string) aap.Message { return &aap.AssistantMessage{Content: aap.TextContent(s)} }
	old := []store.Entry{
		{Message: aap.UserText("publish"), AGUIID: "u1"},
		{Message: &aap.AssistantMessage{Content: aap.BlockContent(call("int-1"))}, AGUIID: "a1"},
		{Message: &aap.ToolMessage{ToolCallID: "int-1", Content: aap.TextContent(`{"approved":true}`)}, AGUIID: "result-int-1"},
		{Message: aap.UserText("and this"), AGUIID: "u2"},
		{Message: &aap.AssistantMessage{Content: aap.BlockContent(&aap.TextBlock{Text: "Asking."}, call("int-2"))}, AGUIID: "a2"},
	}
	snap := []store.Entry{
		{Message: aap.UserText("publish"), AGUIID: "u1"},
		{Message: text("Published."), AGUIID: "s1"},
		{Message: aap.UserText("and this"), AGUIID: "u2"},
		{Message: text("Asking."), AGUIID: "a2"},
		{Message: text("Done."), AGUIID: "s2"},
	}
	assert.Equal(t, []string{
		`u1 {"role":"user","content":"publish"}`,
		`a1 {"role":"assistant","content":[{"type":"tool_use","toolCallId":"int-1","name":"agui_interrupt","input":{"id":"int-1"}}]}`,
		`result-int-1 {"role":"tool","toolCallId":"int-1","content":"{\"approved\":true}"}`,
		`s1 {"role":"assistant","content":"Published."}`,
		`u2 {"role":"user","content":"and this"}`,
		`a2 {"role":"assistant","content":"Asking."}`,
		`a2-interrupts {"role":"assistant","content":[{"type":"tool_use","toolCallId":"int-2","name":"agui_interrupt","input":{"id":"int-2"}}]}`,
		`s2 {"role":"assistant","content":"Done."}`,
	}, entryLines(t, keepOwnEntries(old, snap, nil, nil, nil)))

	t.Run("nothing to keep: the snapshot as it is", func(t *testing.T) {
		assert.Equal(t, snap, keepOwnEntries(snap, snap, nil, nil, nil))
	})
	t.Run("no anchor: before the run's first message the snapshot holds, else last", func(t *testing.T) {
		got := keepOwnEntries(old[1:2], snap[:2], nil, []aap.Message{text("Published.")}, []string{"s1"})
		assert.Equal(t, []string{"u1", "a1", "s1"}, []string{got[0].AGUIID, got[1].AGUIID, got[2].AGUIID})
		got = keepOwnEntries(old[1:2], snap[:2], nil, nil, nil)
		assert.Equal(t, []string{"u1", "s1", "a1"}, []string{got[0].AGUIID, got[1].AGUIID, got[2].AGUIID})
	})
}

// A snapshot that leaves out the messages the application sent in this
// turn keeps them; a kept tool result goes only after its call.
func TestKeepOwnEntries(t *testing.T) {
	old := []store.Entry{
		{Message: aap.UserText("publish"), AGUIID: "u1"},
		{Message: &aap.AssistantMessage{Content: aap.BlockContent(&aap.ToolUseBlock{ToolCallID: "c1", Name: "f", Input: json.RawMessage(`{}`)})}, AGUIID: "a1"},
		{Message: &aap.ToolMessage{ToolCallID: "c1", Content: aap.TextContent("mine")}, AGUIID: "t1"},
		{Message: aap.UserText("never mind"), AGUIID: "u2"},
	}
	own := entryIDs(old[2:])
	snap := []store.Entry{
		{Message: aap.UserText("publish"), AGUIID: "u1"},
		{Message: &aap.AssistantMessage{Content: aap.TextContent("Cancelled.")}, AGUIID: "s1"},
	}
	assert.Equal(t, []string{
		`u1 {"role":"user","content":"publish"}`,
		`u2 {"role":"user","content":"never mind"}`,
		`s1 {"role":"assistant","content":"Cancelled."}`,
	}, entryLines(t, keepOwnEntries(old, snap, own, nil, nil)), "the result of a call the snapshot dropped is left out")

	snap = []store.Entry{old[0], old[1], {Message: &aap.AssistantMessage{Content: aap.TextContent("Got it.")}, AGUIID: "s1"}}
	assert.Equal(t, []string{
		`u1 {"role":"user","content":"publish"}`,
		`a1 {"role":"assistant","content":[{"type":"tool_use","toolCallId":"c1","name":"f","input":{}}]}`,
		`t1 {"role":"tool","toolCallId":"c1","content":"mine"}`,
		`u2 {"role":"user","content":"never mind"}`,
		`s1 {"role":"assistant","content":"Got it."}`,
	}, entryLines(t, keepOwnEntries(old, snap, own, nil, nil)))
}

// A snapshot keeps the thinking the run streamed in a message it holds
// without it.
func TestKeepStreamedThinking(t *testing.T) {
	streamed := &aap.AssistantMessage{Content: aap.BlockContent(&aap.ThinkingBlock{Thinking: "hmm"}, &aap.TextBlock{Text: "Done."})}
	snap := []store.Entry{
		{Message: aap.UserText("think"), AGUIID: "u1"},
		{Message: &aap.AssistantMessage{Content: aap.TextContent("Done.")}, AGUIID: "m1"},
	}
	got := keepOwnEntries(snap[:1], snap, nil, []aap.Message{streamed}, []string{"m1"})
	assert.Equal(t, []string{
		`u1 {"role":"user","content":"think"}`,
		`m1 {"role":"assistant","content":[{"type":"thinking","thinking":"hmm"},{"type":"text","text":"Done."}]}`,
	}, entryLines(t, got))
	assert.Equal(t, `{"role":"assistant","content":"Done."}`, entryLines(t, snap[1:])[0][3:], "snap itself unchanged")

	own := []store.Entry{snap[0], {Message: &aap.AssistantMessage{Content: aap.BlockContent(&aap.ThinkingBlock{Thinking: "its own"}, &aap.TextBlock{Text: "Done."})}, AGUIID: "m1"}}
	assert.Equal(t, own, keepOwnEntries(own, own, nil, []aap.Message{streamed}, []string{"m1"}), "a message with thinking of its own keeps it")
}

func TestMissingResults(t *testing.T) {
	hist := []store.Entry{
		{Message: &aap.AssistantMessage{Content: aap.BlockContent(
			&aap.ToolUseBlock{ToolCallID: "c1", Name: "f", Input: json.RawMessage(`{}`)},
			&aap.ToolUseBlock{ToolCallID: "c2", Name: "f", Input: json.RawMessage(`{}`)},
		)}},
		{Message: &aap.ToolMessage{ToolCallID: "c1", Content: aap.TextContent("done")}},
	}
	results := []store.Entry{
		{Message: &aap.ToolMessage{ToolCallID: "c1", Content: aap.TextContent(grantedText)}},
		{Message: &aap.ToolMessage{ToolCallID: "c2", Content: aap.TextContent(grantedText)}},
		{Message: &aap.ToolMessage{ToolCallID: "gone", Content: aap.TextContent(grantedText)}},
	}
	assert.Equal(t, results[1:2], missingResults(hist, results))
	assert.Nil(t, missingResults(hist, nil))
}
