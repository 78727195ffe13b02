package storetest

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/store"
)

// Session is a session of owner with the least a session has.
func Session(id, owner string) *store.Session {
	return &store.Session{ID: id, Owner: owner, Agent: aap.AgentConfig{Name: "agent"}}
}

// RichSession uses every field of a session.
func RichSession(id, owner string, created time.Time) *store.Session {
	return &store.Session{
		ID:    id,
		Owner: owner,
		Agent: aap.AgentConfig{
			Name:    "agent",
			Tools:   []aap.ServerToolRef{{Name: "search", Trust: true}, {Name: "shell"}},
			Options: map[string]string{"model": "small", "api_key": "sk-secret"},
		},
		Tools: []aap.ToolSpec{
			{Name: "confirm", Title: "Confirm", Description: "Ask <the> user & wait", Parameters: json.RawMessage(`{"b":1,"a":"<&>"}`)},
			{Name: "noop", Description: "", Parameters: json.RawMessage(`{}`)},
		},
		State:      json.RawMessage(`{"z":[1,2],"a":"<b>&"}`),
		Activities: json.RawMessage(`[{"at":1,"id":"a1","activityType":"a2ui","content":{"z":1,"a":"<&>"}}]`),
		Interrupts: []types.Interrupt{{
			ID:             "int-1",
			Reason:         "tool_call",
			Message:        "May I?",
			ToolCallID:     "call-1",
			ResponseSchema: map[string]any{"type": "object"},
			ExpiresAt:      "2026-07-01T15:00:00Z",
			Metadata:       map[string]any{"k": "v", "n": 1.5},
		}, {ID: "int-2", Reason: "input"}},
		CreatedAt: created,
	}
}

// AllMessages holds every message role and content-block type.
func AllMessages() []store.Entry {
	return []store.Entry{
		{AGUIID: "u-2", Message: &aap.UserMessage{Content: aap.BlockContent(
			&aap.TextBlock{Text: "look:"},
			&aap.ImageBlock{URL: "https://example.com/a.png?x=1&y=<2>"},
			&aap.ImageBlock{URL: "data:image/png;base64,iVBORw0KGgo="},
		)}},
		{AGUIID: "u-3", Message: &aap.UserMessage{Content: aap.BlockContent()}},
		{AGUIID: "a-1", Message: &aap.AssistantMessage{Content: aap.BlockContent(
			&aap.ThinkingBlock{Thinking: "hmm\nlet me see"},
			&aap.ToolUseBlock{ToolCallID: "call-1", Name: "lookup", Input: json.RawMessage(`{"z":1,"a":9007199254740993}`)},
			&aap.TextBlock{Text: "done \u2028 ok"},
			&aap.ToolUseBlock{ToolCallID: "call-2", Name: "echo", Input: json.RawMessage(`{"q":"<a&b>"}`)},
		)}},
		{AGUIID: "t-1", Message: &aap.ToolMessage{ToolCallID: "call-1", Content: aap.TextContent(`{"ok":true}`)}},
		{AGUIID: "t-2", Message: &aap.ToolMessage{ToolCallID: "call-2", Content: aap.BlockContent(&aap.TextBlock{Text: "<a&b>"})}},
		{AGUIID: "p-1", Message: &aap.ToolPermissionMessage{ToolCallID: "call-3", Granted: true}},
		{AGUIID: "p-2", Message: &aap.ToolPermissionMessage{ToolCallID: "call-4", Granted: false, Reason: "not today"}},
		{AGUIID: "a-2", Message: &aap.AssistantMessage{Content: aap.TextContent("plain")}},
		{AGUIID: "", Message: aap.UserText("")},
	}
}

// User is a user entry with AG-UI id id saying text.
func User(id, text string) store.Entry {
	return store.Entry{AGUIID: id, Message: aap.UserText(text)}
}

// Users returns one user entry per id, with the id as text.
func Users(ids ...string) []store.Entry {
	out := make([]store.Entry, len(ids))
	for i, id := range ids {
		out[i] = User(id, id)
	}
	return out
}

// History is session id's history in s; the test fails if it cannot be
// read.
func History(t *testing.T, s store.Store, id string) []store.Entry {
	t.Helper()
	h, err := s.History(context.Background(), id)
	require.NoError(t, err)
	return h
}

// IDs are the ids of ss, in order.
func IDs(ss []*store.Session) []string {
	var out []string
	for _, s := range ss {
		out = append(out, s.ID)
	}
	return out
}
