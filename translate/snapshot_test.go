package translate_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/translate"
)

type entry = translate.HistoryEntry

func entryLines(t *testing.T, es []entry) []string {
	t.Helper()
	out := make([]string, len(es))
	for i, e := range es {
		b, err := json.Marshal(e.Message)
		assert.NoError(t, err)
		out[i] = e.AGUIID + " " + string(b)
		if e.AGUI != nil {
			out[i] += " " + string(e.AGUI)
		}
	}
	return out
}

func ids(list ...string) map[string]bool {
	set := map[string]bool{}
	for _, id := range list {
		set[id] = true
	}
	return set
}

func assistantText(s string) aap.Message { return &aap.AssistantMessage{Content: aap.TextContent(s)} }

func thought(thinking, text string) aap.Message {
	return &aap.AssistantMessage{Content: aap.BlockContent(&aap.ThinkingBlock{Thinking: thinking}, &aap.TextBlock{Text: text})}
}

// A snapshot keeps the interrupt calls aap2agui made and their answers,
// after the entries they followed.
func TestMergeSnapshotKeepsInterruptCalls(t *testing.T) {
	call := func(id string) *aap.ToolUseBlock {
		return &aap.ToolUseBlock{ToolCallID: id, Name: translate.InterruptToolName, Input: json.RawMessage(`{"id":"` + id + `"}`)}
	}
	old := []entry{
		{Message: aap.UserText("publish"), AGUIID: "u1"},
		{Message: &aap.AssistantMessage{Content: aap.BlockContent(call("int-1"))}, AGUIID: "a1"},
		{Message: &aap.ToolMessage{ToolCallID: "int-1", Content: aap.TextContent(`{"approved":true}`)}, AGUIID: "result-int-1"},
		{Message: aap.UserText("and this"), AGUIID: "u2"},
		{Message: &aap.AssistantMessage{Content: aap.BlockContent(&aap.TextBlock{Text: "Asking."}, call("int-2"))}, AGUIID: "a2"},
	}
	snap := []entry{
		{Message: aap.UserText("publish"), AGUIID: "u1"},
		{Message: assistantText("Published."), AGUIID: "s1"},
		{Message: aap.UserText("and this"), AGUIID: "u2"},
		{Message: assistantText("Asking."), AGUIID: "a2"},
		{Message: assistantText("Done."), AGUIID: "s2"},
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
	}, entryLines(t, translate.MergeSnapshot(snap, translate.SnapshotBase{History: old})))

	t.Run("nothing to keep: the snapshot as it is", func(t *testing.T) {
		assert.Equal(t, snap, translate.MergeSnapshot(snap, translate.SnapshotBase{History: snap}))
	})
	t.Run("no anchor: before the run's first message the snapshot holds, else last", func(t *testing.T) {
		got := translate.MergeSnapshot(snap[:2], translate.SnapshotBase{History: old[1:2], Run: ids("s1")})
		assert.Equal(t, []string{"u1", "a1", "s1"}, []string{got[0].AGUIID, got[1].AGUIID, got[2].AGUIID})
		got = translate.MergeSnapshot(snap[:2], translate.SnapshotBase{History: old[1:2]})
		assert.Equal(t, []string{"u1", "s1", "a1"}, []string{got[0].AGUIID, got[1].AGUIID, got[2].AGUIID})
	})
}

// A snapshot that leaves out the messages the application sent in this
// turn keeps them; a kept tool result goes only after its call.
func TestMergeSnapshotKeepsTheTurnsMessages(t *testing.T) {
	old := []entry{
		{Message: aap.UserText("publish"), AGUIID: "u1"},
		{Message: &aap.AssistantMessage{Content: aap.BlockContent(&aap.ToolUseBlock{ToolCallID: "c1", Name: "f", Input: json.RawMessage(`{}`)})}, AGUIID: "a1"},
		{Message: &aap.ToolMessage{ToolCallID: "c1", Content: aap.TextContent("mine")}, AGUIID: "t1"},
		{Message: aap.UserText("never mind"), AGUIID: "u2"},
	}
	own := ids("t1", "u2")
	snap := []entry{
		{Message: aap.UserText("publish"), AGUIID: "u1"},
		{Message: assistantText("Cancelled."), AGUIID: "s1"},
	}
	assert.Equal(t, []string{
		`u1 {"role":"user","content":"publish"}`,
		`u2 {"role":"user","content":"never mind"}`,
		`s1 {"role":"assistant","content":"Cancelled."}`,
	}, entryLines(t, translate.MergeSnapshot(snap, translate.SnapshotBase{History: old, Own: own})), "the result of a call the snapshot dropped is left out")

	snap = []entry{old[0], old[1], {Message: assistantText("Got it."), AGUIID: "s1"}}
	assert.Equal(t, []string{
		`u1 {"role":"user","content":"publish"}`,
		`a1 {"role":"assistant","content":[{"type":"tool_use","toolCallId":"c1","name":"f","input":{}}]}`,
		`t1 {"role":"tool","toolCallId":"c1","content":"mine"}`,
		`u2 {"role":"user","content":"never mind"}`,
		`s1 {"role":"assistant","content":"Got it."}`,
	}, entryLines(t, translate.MergeSnapshot(snap, translate.SnapshotBase{History: old, Own: own})))

	snap = []entry{old[0], {Message: aap.UserText("never mind"), AGUIID: "agent-u2"}, {Message: assistantText("OK."), AGUIID: "s1"}}
	assert.Equal(t, []string{
		`u1 {"role":"user","content":"publish"}`,
		`agent-u2 {"role":"user","content":"never mind"}`,
		`s1 {"role":"assistant","content":"OK."}`,
	}, entryLines(t, translate.MergeSnapshot(snap, translate.SnapshotBase{History: old[3:], Own: own})), "held under an id of its own: once")
}

// An agent whose every run snapshots the whole thread without reasoning:
// whatever run stored the thinking, the encrypted values and the user's
// messages, each message the snapshot still has keeps them; a message it
// drops goes with all of it.
func TestMergeSnapshotKeepsWhatEarlierRunsStored(t *testing.T) {
	call := &aap.ToolUseBlock{ToolCallID: "c1", Name: "get_weather", Input: json.RawMessage(`{"city":"Lima"}`)}
	image := &aap.UserMessage{Content: aap.BlockContent(&aap.TextBlock{Text: "what is this?"},
		&aap.ImageBlock{URL: "https://example.com/cat.png"})}
	old := []entry{
		{Message: aap.UserText("think about cats"), AGUIID: "u1"},
		{Message: thought("Cats.", "Done thinking."), AGUIID: "a1",
			AGUI: json.RawMessage(`{"encryptedValue":"msg-value","reasoning":[{"id":"r1","block":0,"encryptedValue":"sig-1"}]}`)},
		{Message: image, AGUIID: "u2"},
		{Message: &aap.AssistantMessage{Content: aap.BlockContent(&aap.ThinkingBlock{Thinking: "A picture."}, call)}, AGUIID: "a2",
			AGUI: json.RawMessage(`{"reasoning":[{"block":0,"encryptedValue":"sig-2"}],"toolCalls":{"c1":"call-value"}}`)},
		{Message: &aap.ToolMessage{ToolCallID: "c1", Content: aap.TextContent("Sunny")}, AGUIID: "t1"},
		{Message: assistantText("It is sunny."), AGUIID: "a3"},
	}
	snap := []entry{
		{Message: aap.UserText("think about cats"), AGUIID: "u1"},
		{Message: assistantText("Done thinking."), AGUIID: "a1"},
		{Message: aap.UserText(`what is this? [image]`), AGUIID: "u2"},
		{Message: &aap.AssistantMessage{Content: aap.BlockContent(call)}, AGUIID: "a2"},
		{Message: &aap.ToolMessage{ToolCallID: "c1", Content: aap.TextContent("Sunny")}, AGUIID: "t1"},
		{Message: assistantText("It is sunny."), AGUIID: "a3"},
		{Message: aap.UserText("hello"), AGUIID: "u4"},
		{Message: assistantText("You said: hello"), AGUIID: "a4"},
	}
	want := []string{
		`u1 {"role":"user","content":"think about cats"}`,
		`a1 {"role":"assistant","content":[{"type":"thinking","thinking":"Cats."},{"type":"text","text":"Done thinking."}]} {"encryptedValue":"msg-value","reasoning":[{"id":"r1","block":0,"encryptedValue":"sig-1"}]}`,
		`u2 {"role":"user","content":[{"type":"text","text":"what is this?"},{"type":"image","url":"https://example.com/cat.png"}]}`,
		`a2 {"role":"assistant","content":[{"type":"thinking","thinking":"A picture."},{"type":"tool_use","toolCallId":"c1","name":"get_weather","input":{"city":"Lima"}}]} {"reasoning":[{"block":0,"encryptedValue":"sig-2"}],"toolCalls":{"c1":"call-value"}}`,
		`t1 {"role":"tool","toolCallId":"c1","content":"Sunny"}`,
		`a3 {"role":"assistant","content":"It is sunny."}`,
		`u4 {"role":"user","content":"hello"}`,
		`a4 {"role":"assistant","content":"You said: hello"}`,
	}
	got := translate.MergeSnapshot(snap, translate.SnapshotBase{History: old})
	assert.Equal(t, want, entryLines(t, got))
	assert.Equal(t, `a1 {"role":"assistant","content":"Done thinking."}`, entryLines(t, snap[1:2])[0], "snap itself unchanged")

	t.Run("the next snapshot, with the merged history: the same", func(t *testing.T) {
		assert.Equal(t, want, entryLines(t, translate.MergeSnapshot(snap, translate.SnapshotBase{History: got})))
	})
	t.Run("ids of the agent's own: the same message, thinking aside", func(t *testing.T) {
		renamed := make([]entry, len(snap))
		for i, e := range snap {
			renamed[i] = entry{Message: e.Message, AGUIID: "x-" + e.AGUIID}
		}
		renamed[2].Message = image // the agent keeps the user's words
		lines := entryLines(t, translate.MergeSnapshot(renamed, translate.SnapshotBase{History: old}))
		for i := range want {
			assert.Equal(t, "x-"+want[i], lines[i])
		}
	})
	t.Run("a snapshot that compacts: what it drops goes with all of it", func(t *testing.T) {
		compacted := []entry{{Message: aap.UserText("Summary: cats, a picture, sunny."), AGUIID: "sum"}, snap[6], snap[7]}
		assert.Equal(t, []string{
			`sum {"role":"user","content":"Summary: cats, a picture, sunny."}`,
			`u4 {"role":"user","content":"hello"}`,
			`a4 {"role":"assistant","content":"You said: hello"}`,
		}, entryLines(t, translate.MergeSnapshot(compacted, translate.SnapshotBase{History: got})))
	})
	t.Run("a message the agent rewrote keeps the thinking, before its content", func(t *testing.T) {
		rewritten := []entry{snap[0], {Message: assistantText("Cats, done."), AGUIID: "a1"}}
		assert.Equal(t, []string{
			`u1 {"role":"user","content":"think about cats"}`,
			`a1 {"role":"assistant","content":[{"type":"thinking","thinking":"Cats."},{"type":"text","text":"Cats, done."}]} {"encryptedValue":"msg-value","reasoning":[{"id":"r1","block":0,"encryptedValue":"sig-1"}]}`,
		}, entryLines(t, translate.MergeSnapshot(rewritten, translate.SnapshotBase{History: old})))
	})
	t.Run("a snapshot's own thinking and values win", func(t *testing.T) {
		own := []entry{snap[0], {Message: thought("Its own.", "Done thinking."), AGUIID: "a1", AGUI: json.RawMessage(`{"encryptedValue":"new"}`)}}
		assert.Equal(t, []string{
			`u1 {"role":"user","content":"think about cats"}`,
			`a1 {"role":"assistant","content":[{"type":"thinking","thinking":"Its own."},{"type":"text","text":"Done thinking."}]} {"encryptedValue":"new"}`,
		}, entryLines(t, translate.MergeSnapshot(own, translate.SnapshotBase{History: old})))
	})
}
