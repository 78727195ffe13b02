package translate_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/internal/ident"
	"github.com/aapagui/aapagui/translate"
)

func permJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

func TestInterruptIDRoundTrip(t *testing.T) {
	id := ident.Interrupt("call_1")
	assert.NotEqual(t, "call_1", id)
	got, ok := ident.ToolCallFromInterrupt(id)
	require.True(t, ok)
	assert.Equal(t, "call_1", got)

	for _, foreign := range []string{"", "call_1", ident.Interrupt("")} {
		_, ok := ident.ToolCallFromInterrupt(foreign)
		assert.False(t, ok, "%q is not an id ident.Interrupt made", foreign)
	}
}

func TestPermissionInterrupt(t *testing.T) {
	in := translate.PermissionInterrupt(&aap.ToolCall{
		ToolCallID: "call_6", Name: "web_search", Input: json.RawMessage(`{ "query": "secrets" }`),
	})
	assert.Equal(t, ident.Interrupt("call_6"), in.ID)
	assert.Equal(t, translate.InterruptReasonToolCall, in.Reason)
	assert.Equal(t, "call_6", in.ToolCallID)
	assert.Equal(t, `Allow the agent to run web_search with {"query":"secrets"}?`, in.Message)
	require.JSONEq(t, `{
		"type":"object",
		"properties":{
			"approved":{"type":"boolean","description":"Whether the tool call may run."},
			"reason":{"type":"string","description":"Why, told to the agent (mostly when denied)."}},
		"required":["approved"]}`, permJSON(t, in.ResponseSchema))
	require.JSONEq(t, `{"aap":{"toolName":"web_search"}}`, permJSON(t, in.Metadata))

	t.Run("no arguments", func(t *testing.T) {
		in := translate.PermissionInterrupt(&aap.ToolCall{ToolCallID: "c", Name: "reboot"})
		assert.Equal(t, "Allow the agent to run reboot?", in.Message)
	})
	t.Run("long arguments are truncated", func(t *testing.T) {
		long := `{"text":"` + strings.Repeat("a", 500) + `"}`
		in := translate.PermissionInterrupt(&aap.ToolCall{ToolCallID: "c", Name: "write", Input: json.RawMessage(long)})
		assert.Less(t, len(in.Message), 300)
		assert.Contains(t, in.Message, "…?")
	})
	t.Run("input that is not an object is shown as is", func(t *testing.T) {
		in := translate.PermissionInterrupt(&aap.ToolCall{ToolCallID: "c", Name: "odd", Input: json.RawMessage(`[1]`)})
		assert.Equal(t, "Allow the agent to run odd with [1]?", in.Message)
	})
}

func TestResumeFromPermission(t *testing.T) {
	tests := []struct {
		name string
		in   *aap.ToolPermissionMessage
		want string
	}{
		{"granted", &aap.ToolPermissionMessage{ToolCallID: "c1", Granted: true},
			`{"interruptId":"int-1","status":"resolved","payload":{"approved":true}}`},
		{"denied with a reason", &aap.ToolPermissionMessage{ToolCallID: "c1", Reason: "no"},
			`{"interruptId":"int-1","status":"resolved","payload":{"approved":false,"reason":"no"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.JSONEq(t, tt.want, permJSON(t, translate.ResumeFromPermission(tt.in, "int-1")))
		})
	}
}

func TestPermissionFromResume(t *testing.T) {
	resolved, cancelled := types.ResumeStatusResolved, types.ResumeStatusCancelled
	tests := []struct {
		name    string
		entry   types.ResumeEntry
		want    *aap.ToolPermissionMessage
		wantErr string // substring of the *ResumeError text
	}{
		{name: "approved", entry: types.ResumeEntry{Status: resolved, Payload: map[string]any{"approved": true}},
			want: &aap.ToolPermissionMessage{ToolCallID: "c1", Granted: true}},
		{name: "denied with a reason", entry: types.ResumeEntry{Status: resolved, Payload: map[string]any{"approved": false, "reason": "too risky"}},
			want: &aap.ToolPermissionMessage{ToolCallID: "c1", Reason: "too risky"}},
		{name: "null reason", entry: types.ResumeEntry{Status: resolved, Payload: map[string]any{"approved": true, "reason": nil}},
			want: &aap.ToolPermissionMessage{ToolCallID: "c1", Granted: true}},
		{name: "cancelled", entry: types.ResumeEntry{Status: cancelled},
			want: &aap.ToolPermissionMessage{ToolCallID: "c1", Reason: "cancelled"}},
		{name: "cancelled with the payload's reason", entry: types.ResumeEntry{Status: cancelled, Payload: map[string]any{"reason": "closed the tab"}},
			want: &aap.ToolPermissionMessage{ToolCallID: "c1", Reason: "closed the tab"}},
		{name: "cancelled even when the payload approves", entry: types.ResumeEntry{Status: cancelled, Payload: map[string]any{"approved": true}},
			want: &aap.ToolPermissionMessage{ToolCallID: "c1", Reason: "cancelled"}},
		{name: "json.RawMessage payload", entry: types.ResumeEntry{Status: resolved, Payload: json.RawMessage(`{"approved":true,"reason":"fine"}`)},
			want: &aap.ToolPermissionMessage{ToolCallID: "c1", Granted: true, Reason: "fine"}},
		{name: "struct payload", entry: types.ResumeEntry{Status: resolved, Payload: struct {
			Approved bool `json:"approved"`
		}{true}},
			want: &aap.ToolPermissionMessage{ToolCallID: "c1", Granted: true}},

		{name: "resolved without approved", entry: types.ResumeEntry{Status: resolved, Payload: map[string]any{"reason": "x"}},
			wantErr: "payload.approved must be a boolean"},
		{name: "resolved without payload", entry: types.ResumeEntry{Status: resolved},
			wantErr: "payload.approved must be a boolean"},
		{name: "approved as a string", entry: types.ResumeEntry{Status: resolved, Payload: map[string]any{"approved": "true"}},
			wantErr: "payload.approved must be a boolean"},
		{name: "reason not a string", entry: types.ResumeEntry{Status: resolved, Payload: map[string]any{"approved": false, "reason": 7}},
			wantErr: "payload.reason must be a string"},
		{name: "string payload", entry: types.ResumeEntry{Status: resolved, Payload: "yes"},
			wantErr: "payload must be a JSON object"},
		{name: "array payload", entry: types.ResumeEntry{Status: resolved, Payload: []any{true}},
			wantErr: "payload must be a JSON object"},
		{name: "json.RawMessage null", entry: types.ResumeEntry{Status: resolved, Payload: json.RawMessage(`null`)},
			wantErr: "payload must be a JSON object"},
		{name: "json.RawMessage array", entry: types.ResumeEntry{Status: resolved, Payload: json.RawMessage(`[true]`)},
			wantErr: "payload must be a JSON object"},
		{name: "payload that cannot be encoded", entry: types.ResumeEntry{Status: resolved, Payload: make(chan int)},
			wantErr: "payload"},
		{name: "unknown status", entry: types.ResumeEntry{Status: "maybe", Payload: map[string]any{"approved": true}},
			wantErr: `unknown status "maybe"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.entry.InterruptID = "int-1"
			got, err := translate.PermissionFromResume(tt.entry, "c1")
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Nil(t, got)
				var re *translate.ResumeError
				require.ErrorAs(t, err, &re)
				assert.Equal(t, "int-1", re.InterruptID)
				assert.Contains(t, err.Error(), `"int-1"`)
				assert.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestStopReasonFromResult(t *testing.T) {
	tests := []struct {
		name   string
		result any
		want   aap.StopReason
		ok     bool
	}{
		{"nil", nil, "", false},
		{"StopResult", translate.StopResult{StopReason: aap.StopMaxTokens}, aap.StopMaxTokens, true},
		{"*StopResult", &translate.StopResult{StopReason: aap.StopRefusal}, aap.StopRefusal, true},
		{"decoded JSON", map[string]any{"stopReason": "max_tokens", "other": 1}, aap.StopMaxTokens, true},
		{"unknown stop reason", map[string]any{"stopReason": "tired"}, "tired", false},
		{"stop reason not a string", map[string]any{"stopReason": 3}, "", false},
		{"object without stopReason", map[string]any{"answer": 42}, "", false},
		{"a string result", "max_tokens", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := translate.StopReasonFromResult(tt.result)
			assert.Equal(t, tt.ok, ok)
			if ok {
				assert.Equal(t, tt.want, got)
			}
		})
	}
	// The translator's own result survives the wire.
	var decoded any
	require.NoError(t, json.Unmarshal([]byte(permJSON(t, translate.StopResult{StopReason: aap.StopRefusal})), &decoded))
	got, ok := translate.StopReasonFromResult(decoded)
	assert.True(t, ok)
	assert.Equal(t, aap.StopRefusal, got)
}

func TestTurnToAGUI(t *testing.T) {
	bound := types.Interrupt{ID: "lg-int-1", Reason: translate.InterruptReasonToolCall, ToolCallID: "c1"}
	asked := types.Interrupt{ID: "lg-int-2", Reason: "input_required", Message: "Which city?"}
	open := []types.Interrupt{bound, asked}
	tests := []struct {
		name string
		msgs []aap.Message
		open []types.Interrupt
		want string // TurnInput as JSON; message ids from SequentialIDs("in-")
	}{
		{
			name: "user message only",
			msgs: []aap.Message{aap.UserText("hi")},
			want: `{"messages":[{"id":"in-1","role":"user","content":"hi"}]}`,
		},
		{
			name: "tool results become tool messages",
			msgs: []aap.Message{&aap.ToolMessage{ToolCallID: "c9", Content: aap.TextContent("done")}},
			want: `{"messages":[{"id":"in-1","role":"tool","toolCallId":"c9","content":"done"}]}`,
		},
		{
			name: "permission with unknown open interrupts uses the derived id",
			msgs: []aap.Message{&aap.ToolPermissionMessage{ToolCallID: "c1", Granted: true}},
			want: `{"messages":[],"resume":[{"interruptId":"perm-c1","status":"resolved","payload":{"approved":true}}]}`,
		},
		{
			name: "permission found by toolCallId among the open interrupts",
			msgs: []aap.Message{&aap.ToolPermissionMessage{ToolCallID: "c1", Granted: false, Reason: "no"}},
			open: open,
			want: `{"messages":[],"resume":[{"interruptId":"lg-int-1","status":"resolved","payload":{"approved":false,"reason":"no"}}]}`,
		},
		{
			name: "tool result for an interrupt call with a JSON answer",
			msgs: []aap.Message{&aap.ToolMessage{ToolCallID: "lg-int-2", Content: aap.TextContent(`{"city":"Oslo"}`)}},
			open: open,
			want: `{"messages":[],"resume":[{"interruptId":"lg-int-2","status":"resolved","payload":{"city":"Oslo"}}]}`,
		},
		{
			name: "tool result for an interrupt call with a plain-text answer",
			msgs: []aap.Message{&aap.ToolMessage{ToolCallID: "lg-int-2", Content: aap.TextContent("Oslo")}},
			open: open,
			want: `{"messages":[],"resume":[{"interruptId":"lg-int-2","status":"resolved","payload":"Oslo"}]}`,
		},
		{
			name: "tool result for an interrupt call given as text blocks",
			msgs: []aap.Message{&aap.ToolMessage{ToolCallID: "lg-int-2", Content: aap.BlockContent(&aap.TextBlock{Text: "4"}, &aap.TextBlock{Text: "2"})}},
			open: open,
			want: `{"messages":[],"resume":[{"interruptId":"lg-int-2","status":"resolved","payload":42}]}`,
		},
		{
			name: "permission for an interrupt call",
			msgs: []aap.Message{&aap.ToolPermissionMessage{ToolCallID: "lg-int-2", Granted: true}},
			open: open,
			want: `{"messages":[],"resume":[{"interruptId":"lg-int-2","status":"resolved","payload":{"approved":true}}]}`,
		},
		{
			name: "tool result for a call bound to an interrupt stays a tool message",
			msgs: []aap.Message{&aap.ToolMessage{ToolCallID: "c1", Content: aap.TextContent("ran it myself")}},
			open: open,
			want: `{"messages":[{"id":"in-1","role":"tool","toolCallId":"c1","content":"ran it myself"}]}`,
		},
		{
			name: "with unknown open interrupts an interrupt-looking tool result is a plain tool message",
			msgs: []aap.Message{&aap.ToolMessage{ToolCallID: "lg-int-2", Content: aap.TextContent("Oslo")}},
			want: `{"messages":[{"id":"in-1","role":"tool","toolCallId":"lg-int-2","content":"Oslo"}]}`,
		},
		{
			name: "mixed, in order",
			msgs: []aap.Message{
				&aap.ToolPermissionMessage{ToolCallID: "c1", Granted: true},
				&aap.ToolMessage{ToolCallID: "c7", Content: aap.TextContent("7")},
				&aap.ToolMessage{ToolCallID: "lg-int-2", Content: aap.TextContent(`"Bergen"`)},
				aap.UserText("and then?"),
			},
			open: open,
			want: `{"messages":[
				{"id":"in-1","role":"tool","toolCallId":"c7","content":"7"},
				{"id":"in-2","role":"user","content":"and then?"}],
			"resume":[
				{"interruptId":"lg-int-1","status":"resolved","payload":{"approved":true}},
				{"interruptId":"lg-int-2","status":"resolved","payload":"Bergen"}]}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := translate.TurnToAGUI(tt.msgs, tt.open, translate.SequentialIDs("in-"))
			require.NoError(t, err)
			require.JSONEq(t, tt.want, permJSON(t, got))
		})
	}
}

func TestTurnToAGUIPayloadKeepsJSONBytes(t *testing.T) {
	open := []types.Interrupt{{ID: "i1", Reason: "input_required"}}
	got, err := translate.TurnToAGUI([]aap.Message{
		&aap.ToolMessage{ToolCallID: "i1", Content: aap.TextContent(`{"n":12345678901234567890}`)},
	}, open, nil)
	require.NoError(t, err)
	require.Len(t, got.Resume, 1)
	assert.Equal(t, `{"interruptId":"i1","status":"resolved","payload":{"n":12345678901234567890}}`, permJSON(t, got.Resume[0]))
}

func TestTurnToAGUIErrors(t *testing.T) {
	open := []types.Interrupt{{ID: "lg-int-1", Reason: translate.InterruptReasonToolCall, ToolCallID: "c1"}}
	tests := []struct {
		name      string
		msgs      []aap.Message
		open      []types.Interrupt
		wantIndex int
		wantIn    []string
	}{
		{
			name:      "permission for a call that is not waiting",
			msgs:      []aap.Message{aap.UserText("x"), &aap.ToolPermissionMessage{ToolCallID: "c2", Granted: true}},
			open:      open,
			wantIndex: 1,
			wantIn:    []string{"message 1", `"c2"`, "waiting for permission"},
		},
		{
			name:      "permission when no interrupt is open",
			msgs:      []aap.Message{&aap.ToolPermissionMessage{ToolCallID: "c1", Granted: true}},
			open:      []types.Interrupt{},
			wantIndex: 0,
			wantIn:    []string{`"c1"`},
		},
		{
			name:   "permission for an unknown toolCallId",
			msgs:   []aap.Message{&aap.ToolPermissionMessage{ToolCallID: "lg-int-1x", Granted: true}},
			open:   open,
			wantIn: []string{`"lg-int-1x"`},
		},
		{
			name: "untranslatable message",
			msgs: []aap.Message{aap.UserText("a"), aap.UserText("b"), &aap.UserMessage{Content: aap.BlockContent(
				&aap.ThinkingBlock{Thinking: "x"})}},
			wantIndex: 2,
			wantIn:    []string{"message 2", "thinking"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := translate.TurnToAGUI(tt.msgs, tt.open, translate.SequentialIDs("in-"))
			require.Error(t, err)
			assert.Empty(t, got.Messages)
			assert.Empty(t, got.Resume)
			var me *translate.MessageError
			require.ErrorAs(t, err, &me)
			assert.Equal(t, tt.wantIndex, me.Index)
			for _, s := range tt.wantIn {
				assert.Contains(t, err.Error(), s)
			}
		})
	}
}

func TestTurnFromAGUI(t *testing.T) {
	approve := func(id string) types.ResumeEntry {
		return types.ResumeEntry{InterruptID: id, Status: types.ResumeStatusResolved, Payload: map[string]any{"approved": true}}
	}
	// The tool message CopilotKit appends for an interrupted call: the
	// resume payload as JSON.
	copilotTool := types.Message{ID: "ck-1", Role: types.RoleTool, ToolCallID: "c1", Content: `{"approved":true}`}
	open := []types.Interrupt{
		{ID: ident.Interrupt("c1"), Reason: translate.InterruptReasonToolCall, ToolCallID: "c1"},
		{ID: "custom-7", Reason: "confirmation"},
	}
	tests := []struct {
		name   string
		msgs   []types.Message
		resume []types.ResumeEntry
		open   []types.Interrupt
		want   string // the AAP turn messages as JSON
	}{
		{
			name: "no resume",
			msgs: []types.Message{{ID: "u", Role: types.RoleUser, Content: "hi"}, {ID: "t", Role: types.RoleTool, ToolCallID: "c1", Content: "r"}},
			want: `[{"role":"user","content":"hi"},{"role":"tool","toolCallId":"c1","content":"r"}]`,
		},
		{
			name:   "the CopilotKit tool message for an answered call is dropped",
			msgs:   []types.Message{copilotTool},
			resume: []types.ResumeEntry{approve(ident.Interrupt("c1"))},
			open:   open,
			want:   `[{"role":"tool_permission","toolCallId":"c1","granted":true}]`,
		},
		{
			name: "other new messages come first, then the permissions",
			msgs: []types.Message{
				copilotTool,
				{ID: "t2", Role: types.RoleTool, ToolCallID: "c2", Content: "client result"},
				{ID: "u", Role: types.RoleUser, Content: "go on"},
			},
			resume: []types.ResumeEntry{{InterruptID: ident.Interrupt("c1"), Status: types.ResumeStatusCancelled}},
			open:   open,
			want: `[{"role":"tool","toolCallId":"c2","content":"client result"},{"role":"user","content":"go on"},
				{"role":"tool_permission","toolCallId":"c1","granted":false,"reason":"cancelled"}]`,
		},
		{
			name:   "unknown open interrupts: the id is read back with ident.ToolCallFromInterrupt",
			msgs:   []types.Message{copilotTool},
			resume: []types.ResumeEntry{approve(ident.Interrupt("c1"))},
			want:   `[{"role":"tool_permission","toolCallId":"c1","granted":true}]`,
		},
		{
			name:   "an interrupt without a toolCallId answers the call named by its id",
			resume: []types.ResumeEntry{approve("custom-7")},
			open:   open,
			want:   `[{"role":"tool_permission","toolCallId":"custom-7","granted":true}]`,
		},
		{
			name: "an empty open list with no resume",
			msgs: []types.Message{{ID: "u", Role: types.RoleUser, Content: "hi"}},
			open: []types.Interrupt{},
			want: `[{"role":"user","content":"hi"}]`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := translate.TurnFromAGUI(tt.msgs, tt.resume, tt.open)
			require.NoError(t, err)
			require.JSONEq(t, tt.want, permJSON(t, got))
		})
	}
}

func TestTurnFromAGUIErrors(t *testing.T) {
	open := []types.Interrupt{{ID: ident.Interrupt("c1"), Reason: translate.InterruptReasonToolCall, ToolCallID: "c1"}}
	ok := map[string]any{"approved": true}
	tests := []struct {
		name     string
		msgs     []types.Message
		resume   []types.ResumeEntry
		open     []types.Interrupt
		resumeID string // the InterruptID of the *ResumeError; "" for a *MessageError
		wantIn   []string
	}{
		{
			name:     "unknown interrupt id",
			resume:   []types.ResumeEntry{{InterruptID: "perm-c9", Status: types.ResumeStatusResolved, Payload: ok}},
			open:     open,
			resumeID: "perm-c9",
			wantIn:   []string{"no such open interrupt"},
		},
		{
			name:     "unknown open interrupts and an id this bridge did not issue",
			resume:   []types.ResumeEntry{{InterruptID: "lg-123", Status: types.ResumeStatusResolved, Payload: ok}},
			resumeID: "lg-123",
			wantIn:   []string{"not an interrupt this bridge issued"},
		},
		{
			name:     "a payload that is not a permission",
			resume:   []types.ResumeEntry{{InterruptID: "perm-c1", Status: types.ResumeStatusResolved, Payload: "sure"}},
			open:     open,
			resumeID: "perm-c1",
			wantIn:   []string{"JSON object"},
		},
		{
			name:   "an untranslatable new message",
			msgs:   []types.Message{{ID: "u-a", Role: types.RoleUser, Content: []types.InputContent{{Type: types.InputContentTypeAudio}}}},
			resume: []types.ResumeEntry{{InterruptID: "perm-c1", Status: types.ResumeStatusResolved, Payload: ok}},
			open:   open,
			wantIn: []string{`"u-a"`, "audio"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := translate.TurnFromAGUI(tt.msgs, tt.resume, tt.open)
			require.Error(t, err)
			assert.Nil(t, got)
			for _, s := range tt.wantIn {
				assert.Contains(t, err.Error(), s)
			}
			if tt.resumeID == "" {
				var me *translate.MessageError
				require.ErrorAs(t, err, &me)
				return
			}
			var re *translate.ResumeError
			require.ErrorAs(t, err, &re)
			assert.Equal(t, tt.resumeID, re.InterruptID)
		})
	}
}

func TestEventsFromResponse(t *testing.T) {
	resp := &aap.PostSessionTurnResponse{
		StopReason: aap.StopToolUse,
		Messages: []aap.Message{
			&aap.AssistantMessage{Content: aap.BlockContent(
				&aap.ThinkingBlock{Thinking: "hmm"},
				&aap.TextBlock{Text: "Looking."},
				&aap.ToolUseBlock{ToolCallID: "s1", Name: "search", Input: json.RawMessage(`{"q":"x"}`)},
			)},
			&aap.ToolMessage{ToolCallID: "s1", Content: aap.TextContent("found")},
			&aap.AssistantMessage{Content: aap.TextContent("")},
			&aap.AssistantMessage{Content: aap.BlockContent(
				&aap.ImageBlock{URL: "https://example.com/p.png"},
				&aap.ToolUseBlock{ToolCallID: "c1", Name: "show", Input: json.RawMessage(`{}`)},
			)},
			&aap.AssistantMessage{Content: aap.TextContent("plain")},
		},
	}
	var got []string
	for _, ev := range translate.EventsFromResponse(resp) {
		data, err := ev.AppendData(nil)
		require.NoError(t, err)
		got = append(got, string(ev.EventName())+" "+string(data))
	}
	assert.Equal(t, []string{
		`turn_start {}`,
		`thinking {"thinking":"hmm"}`,
		`text {"text":"Looking."}`,
		`tool_call {"toolCallId":"s1","name":"search","input":{"q":"x"}}`,
		`tool_result {"toolCallId":"s1","content":"found"}`,
		`text {"text":"![image](https://example.com/p.png)"}`,
		`tool_call {"toolCallId":"c1","name":"show","input":{}}`,
		`text {"text":"plain"}`,
		`turn_stop {"stopReason":"tool_use"}`,
	}, got)

	t.Run("no messages", func(t *testing.T) {
		evs := translate.EventsFromResponse(&aap.PostSessionTurnResponse{StopReason: aap.StopEndTurn})
		require.Len(t, evs, 2)
		assert.IsType(t, &aap.TurnStart{}, evs[0])
		assert.Equal(t, &aap.TurnStop{StopReason: aap.StopEndTurn}, evs[1])
	})
}

// InterruptToolName documents that a tool_permission answering an interrupt
// that does not ask for an approval resumes it resolved with
// {"approved":true} when granted and cancelled (with the reason) when
// denied.
func TestTurnToAGUIDeniedInterruptCallIsCancelled(t *testing.T) {
	open := []types.Interrupt{{ID: "lg-int-2", Reason: "input_required", Message: "Which city?"}}
	t.Run("granted", func(t *testing.T) {
		got, err := translate.TurnToAGUI([]aap.Message{&aap.ToolPermissionMessage{ToolCallID: "lg-int-2", Granted: true}}, open, nil)
		require.NoError(t, err)
		require.Len(t, got.Resume, 1)
		assert.Equal(t, types.ResumeStatusResolved, got.Resume[0].Status)
		require.JSONEq(t, `{"approved":true}`, permJSON(t, got.Resume[0].Payload))
	})
	t.Run("denied", func(t *testing.T) {
		got, err := translate.TurnToAGUI([]aap.Message{&aap.ToolPermissionMessage{ToolCallID: "lg-int-2", Reason: "not now"}}, open, nil)
		require.NoError(t, err)
		require.Len(t, got.Resume, 1)
		assert.Equal(t, "lg-int-2", got.Resume[0].InterruptID)
		assert.Equal(t, types.ResumeStatusCancelled, got.Resume[0].Status)
		require.JSONEq(t, `{"reason":"not now"}`, permJSON(t, got.Resume[0].Payload))
	})
}

// A denied tool_permission reaches every interrupt that asks for an
// approval as a denial with its reason, resolved {"approved":false,
// "reason"}, whatever the interrupt's id: aap2agui's own (perm-<id>),
// CopilotKit BuiltInAgent's (the toolCallId itself), another framework's
// tool_call interrupt, or an interrupt of another reason whose
// responseSchema has "approved" (Mastra's tool suspension).
func TestTurnToAGUIDenialOfEveryApprovalShape(t *testing.T) {
	approval := map[string]any{"type": "object", "properties": map[string]any{"approved": map[string]any{"type": "boolean"}, "reason": map[string]any{"type": "string"}}}
	tests := []struct {
		name   string
		open   types.Interrupt
		answer string // the toolCallId the tool_permission names
	}{
		{"aap2agui's own", types.Interrupt{ID: "perm-c1", Reason: "tool_call", ToolCallID: "c1"}, "c1"},
		{"CopilotKit BuiltInAgent: the id is the toolCallId", types.Interrupt{ID: "call_ck", Reason: "tool_call", ToolCallID: "call_ck"}, "call_ck"},
		{"a tool_call interrupt of its own id", types.Interrupt{ID: "int-7", Reason: "tool_call", ToolCallID: "c7"}, "c7"},
		{"a tool_call interrupt for a call never streamed, answered by its id", types.Interrupt{ID: "int-8", Reason: "tool_call", ToolCallID: "c-elsewhere"}, "int-8"},
		{"Mastra: a schema with approved", types.Interrupt{ID: "run-1::call-1", Reason: "mastra:tool_suspend", ToolCallID: "call-1", ResponseSchema: approval}, "run-1::call-1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.True(t, translate.AsksApproval(tt.open))
			for _, p := range []struct {
				perm *aap.ToolPermissionMessage
				want string
			}{
				{&aap.ToolPermissionMessage{ToolCallID: tt.answer, Reason: "too risky"}, `{"approved":false,"reason":"too risky"}`},
				{&aap.ToolPermissionMessage{ToolCallID: tt.answer}, `{"approved":false}`},
				{&aap.ToolPermissionMessage{ToolCallID: tt.answer, Granted: true}, `{"approved":true}`},
			} {
				got, err := translate.TurnToAGUI([]aap.Message{p.perm}, []types.Interrupt{tt.open}, nil)
				require.NoError(t, err)
				require.Len(t, got.Resume, 1)
				assert.Equal(t, tt.open.ID, got.Resume[0].InterruptID)
				assert.Equal(t, types.ResumeStatusResolved, got.Resume[0].Status)
				assert.JSONEq(t, p.want, permJSON(t, got.Resume[0].Payload))
				assert.Empty(t, got.Messages)
			}
		})
	}
	assert.False(t, translate.AsksApproval(types.Interrupt{ID: "i", Reason: "input_required", ResponseSchema: map[string]any{"type": "string"}}))
	assert.False(t, translate.AsksApproval(types.Interrupt{ID: "i", Reason: "confirmation"}))
}

// TurnInput.IDs gives each message of the turn the AG-UI id its history
// entry goes under: the id of its AG-UI message, the result id of an
// interrupt's answer, none for a tool_permission.
func TestTurnToAGUIIDs(t *testing.T) {
	open := []types.Interrupt{
		{ID: "int-c1", ToolCallID: "c1", Reason: translate.InterruptReasonToolCall},
		{ID: "lg-int-2", Reason: "input_required"},
	}
	got, err := translate.TurnToAGUI([]aap.Message{
		&aap.ToolPermissionMessage{ToolCallID: "c1", Granted: true},
		&aap.ToolMessage{ToolCallID: "lg-int-2", Content: aap.TextContent("Paris")},
		&aap.ToolMessage{ToolCallID: "c9", Content: aap.TextContent("42")},
	}, open, translate.SequentialIDs("in-"))
	require.NoError(t, err)
	assert.Equal(t, []string{"", "result-lg-int-2", "in-1"}, got.IDs)
	require.Len(t, got.Messages, 1)
	assert.Equal(t, "in-1", got.Messages[0].ID)
}

// InterruptFor prefers the interrupt bound to the call over one whose id
// the toolCallId is.
func TestInterruptFor(t *testing.T) {
	open := []types.Interrupt{
		{ID: "x", Reason: "input_required"},
		{ID: "int-x", ToolCallID: "x", Reason: translate.InterruptReasonToolCall},
	}
	in, ok := translate.InterruptFor(open, "x")
	require.True(t, ok)
	assert.Equal(t, "int-x", in.ID)
	in, ok = translate.InterruptFor(open[:1], "x")
	require.True(t, ok)
	assert.Equal(t, "x", in.ID)
	_, ok = translate.InterruptFor(open, "y")
	assert.False(t, ok)
}
