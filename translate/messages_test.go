package translate_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/translate"
)

// msgJSON encodes v compactly for comparison with require.JSONEq.
func msgJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

func msgBlocks(blocks ...aap.ContentBlock) aap.Content { return aap.BlockContent(blocks...) }

func msgUserParts(parts ...types.InputContent) types.Message {
	return types.Message{ID: "u1", Role: types.RoleUser, Content: parts}
}

func TestMessagesToAGUI(t *testing.T) {
	tests := []struct {
		name string
		in   []aap.Message
		want string // the AG-UI messages as JSON; ids come from SequentialIDs("m")
	}{
		{
			name: "system",
			in:   []aap.Message{&aap.SystemMessage{Content: "Be brief."}},
			want: `[{"id":"m1","role":"system","content":"Be brief."}]`,
		},
		{
			name: "user string",
			in:   []aap.Message{aap.UserText("hi")},
			want: `[{"id":"m1","role":"user","content":"hi"}]`,
		},
		{
			name: "user text and https image blocks",
			in: []aap.Message{&aap.UserMessage{Content: msgBlocks(
				&aap.TextBlock{Text: "what is this?"},
				&aap.ImageBlock{URL: "https://example.com/cat.png"},
			)}},
			want: `[{"id":"m1","role":"user","content":[
				{"type":"text","text":"what is this?"},
				{"type":"image","source":{"type":"url","value":"https://example.com/cat.png"}}]}]`,
		},
		{
			name: "user image as base64 data URI",
			in: []aap.Message{&aap.UserMessage{Content: msgBlocks(
				&aap.ImageBlock{URL: "data:image/png;base64,iVBORw0KGgo="},
			)}},
			want: `[{"id":"m1","role":"user","content":[
				{"type":"image","source":{"type":"data","value":"iVBORw0KGgo=","mimeType":"image/png"}}]}]`,
		},
		{
			name: "user image as percent-encoded data URI is re-encoded as base64",
			in: []aap.Message{&aap.UserMessage{Content: msgBlocks(
				&aap.ImageBlock{URL: "data:image/svg+xml,%3Csvg%2F%3E"},
			)}},
			// base64("<svg/>")
			want: `[{"id":"m1","role":"user","content":[
				{"type":"image","source":{"type":"data","value":"PHN2Zy8+","mimeType":"image/svg+xml"}}]}]`,
		},
		{
			name: "data URI without a MIME type gets the RFC 2397 default",
			in: []aap.Message{&aap.UserMessage{Content: msgBlocks(
				&aap.ImageBlock{URL: "data:,A%20B"},
			)}},
			want: `[{"id":"m1","role":"user","content":[
				{"type":"image","source":{"type":"data","value":"QSBC","mimeType":"text/plain;charset=US-ASCII"}}]}]`,
		},
		{
			name: "user with an empty block list stays a list",
			in:   []aap.Message{&aap.UserMessage{Content: msgBlocks()}},
			want: `[{"id":"m1","role":"user","content":[]}]`,
		},
		{
			name: "assistant string",
			in:   []aap.Message{&aap.AssistantMessage{Content: aap.TextContent("hello")}},
			want: `[{"id":"m1","role":"assistant","content":"hello"}]`,
		},
		{
			name: "assistant thinking becomes a reasoning message before it",
			in: []aap.Message{&aap.AssistantMessage{Content: msgBlocks(
				&aap.ThinkingBlock{Thinking: "first"},
				&aap.TextBlock{Text: "answer"},
				&aap.ThinkingBlock{Thinking: "second"},
			)}},
			want: `[
				{"id":"m1-reasoning","role":"reasoning","content":"first"},
				{"id":"m1-reasoning-2","role":"reasoning","content":"second"},
				{"id":"m1","role":"assistant","content":"answer"}]`,
		},
		{
			name: "assistant text blocks joined with blank lines",
			in: []aap.Message{&aap.AssistantMessage{Content: msgBlocks(
				&aap.TextBlock{Text: "one"}, &aap.TextBlock{Text: "two"}, &aap.TextBlock{Text: "three"},
			)}},
			want: `[{"id":"m1","role":"assistant","content":"one\n\ntwo\n\nthree"}]`,
		},
		{
			name: "assistant image rendered as Markdown",
			in: []aap.Message{&aap.AssistantMessage{Content: msgBlocks(
				&aap.TextBlock{Text: "Here:"}, &aap.ImageBlock{URL: "https://example.com/chart.png"},
			)}},
			want: `[{"id":"m1","role":"assistant","content":"Here:\n\n![image](https://example.com/chart.png)"}]`,
		},
		{
			name: "assistant with only tool calls has no content",
			in: []aap.Message{&aap.AssistantMessage{Content: msgBlocks(
				&aap.ToolUseBlock{ToolCallID: "c1", Name: "get_weather", Input: json.RawMessage(`{ "city" : "Oslo" }`)},
				&aap.ToolUseBlock{ToolCallID: "c2", Name: "now"},
			)}},
			want: `[{"id":"m1","role":"assistant","toolCalls":[
				{"id":"c1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Oslo\"}"}},
				{"id":"c2","type":"function","function":{"name":"now","arguments":"{}"}}]}]`,
		},
		{
			name: "assistant text and tool call",
			in: []aap.Message{&aap.AssistantMessage{Content: msgBlocks(
				&aap.TextBlock{Text: "Let me look."},
				&aap.ToolUseBlock{ToolCallID: "c1", Name: "search", Input: json.RawMessage(`{"q":"x"}`)},
			)}},
			want: `[{"id":"m1","role":"assistant","content":"Let me look.","toolCalls":[
				{"id":"c1","type":"function","function":{"name":"search","arguments":"{\"q\":\"x\"}"}}]}]`,
		},
		{
			name: "tool result string",
			in:   []aap.Message{&aap.ToolMessage{ToolCallID: "c1", Content: aap.TextContent("12°C")}},
			want: `[{"id":"m1","role":"tool","toolCallId":"c1","content":"12°C"}]`,
		},
		{
			name: "tool result text blocks joined",
			in: []aap.Message{&aap.ToolMessage{ToolCallID: "c1", Content: msgBlocks(
				&aap.TextBlock{Text: "12"}, &aap.TextBlock{Text: "°C"},
			)}},
			want: `[{"id":"m1","role":"tool","toolCallId":"c1","content":"12°C"}]`,
		},
		{
			name: "tool result with an image is the JSON of its blocks",
			in: []aap.Message{&aap.ToolMessage{ToolCallID: "c1", Content: msgBlocks(
				&aap.TextBlock{Text: "chart:"}, &aap.ImageBlock{URL: "https://example.com/c.png"},
			)}},
			want: `[{"id":"m1","role":"tool","toolCallId":"c1",
				"content":"[{\"type\":\"text\",\"text\":\"chart:\"},{\"type\":\"image\",\"url\":\"https://example.com/c.png\"}]"}]`,
		},
		{
			name: "one id per AAP message, in order",
			in: []aap.Message{
				&aap.SystemMessage{Content: "s"}, aap.UserText("u"),
				&aap.AssistantMessage{Content: aap.TextContent("a")},
			},
			want: `[{"id":"m1","role":"system","content":"s"},{"id":"m2","role":"user","content":"u"},
				{"id":"m3","role":"assistant","content":"a"}]`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := translate.MessagesToAGUI(tt.in, translate.SequentialIDs("m"))
			require.NoError(t, err)
			require.JSONEq(t, tt.want, msgJSON(t, got))
		})
	}
}

func TestMessagesToAGUIRandomIDs(t *testing.T) {
	got, err := translate.MessagesToAGUI([]aap.Message{aap.UserText("a"), aap.UserText("b")}, nil)
	require.NoError(t, err)
	require.Len(t, got, 2)
	assert.True(t, strings.HasPrefix(got[0].ID, "msg-"), got[0].ID)
	assert.NotEqual(t, got[0].ID, got[1].ID)
}

func TestMessagesToAGUIErrors(t *testing.T) {
	tests := []struct {
		name        string
		in          []aap.Message
		wantIndex   int
		wantID      string
		wantIn      []string // substrings of the error text
		unsupported bool     // errors.Is(err, ErrUnsupportedContent)
	}{
		{
			name:      "tool_permission is not history",
			in:        []aap.Message{aap.UserText("x"), &aap.ToolPermissionMessage{ToolCallID: "c1", Granted: true}},
			wantIndex: 1, wantID: "m2",
			wantIn: []string{"message 1", "tool_permission", "resume"},
		},
		{
			name: "thinking block in a user message",
			in: []aap.Message{&aap.UserMessage{Content: msgBlocks(
				&aap.TextBlock{Text: "a"}, &aap.ThinkingBlock{Thinking: "b"},
			)}},
			wantIndex: 0, wantID: "m1",
			wantIn:      []string{"message 0", "content[1]", "thinking"},
			unsupported: true,
		},
		{
			name: "tool_use block in a user message",
			in: []aap.Message{aap.UserText("x"), aap.UserText("y"), &aap.UserMessage{Content: msgBlocks(
				&aap.ToolUseBlock{ToolCallID: "c1", Name: "n", Input: json.RawMessage(`{}`)},
			)}},
			wantIndex: 2, wantID: "m3",
			wantIn:      []string{"message 2", `"m3"`, "tool_use"},
			unsupported: true,
		},
		{
			name: "tool input that is not an object",
			in: []aap.Message{&aap.AssistantMessage{Content: msgBlocks(
				&aap.ToolUseBlock{ToolCallID: "call_9", Name: "n", Input: json.RawMessage(`[1,2]`)},
			)}},
			wantIndex: 0, wantID: "m1",
			wantIn: []string{"message 0", `"call_9"`},
		},
		{
			name: "data URI without a comma",
			in: []aap.Message{&aap.UserMessage{Content: msgBlocks(
				&aap.ImageBlock{URL: "data:image/png;base64"},
			)}},
			wantIndex: 0, wantID: "m1",
			wantIn: []string{"content[0]", "data: URI"},
		},
		{
			name: "data URI with a bad percent escape",
			in: []aap.Message{&aap.UserMessage{Content: msgBlocks(
				&aap.ImageBlock{URL: "data:image/svg+xml,%zz"},
			)}},
			wantIndex: 0, wantID: "m1",
			wantIn: []string{"content[0]", "data: URI"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := translate.MessagesToAGUI(tt.in, translate.SequentialIDs("m"))
			require.Error(t, err)
			assert.Nil(t, got)
			var me *translate.MessageError
			require.ErrorAs(t, err, &me)
			assert.Equal(t, tt.wantIndex, me.Index)
			assert.Equal(t, tt.wantID, me.ID)
			for _, s := range tt.wantIn {
				assert.Contains(t, err.Error(), s)
			}
			assert.Equal(t, tt.unsupported, errors.Is(err, translate.ErrUnsupportedContent), "errors.Is ErrUnsupportedContent")
		})
	}
}

func TestAppendMessageToAGUIKeepsDestinationOnError(t *testing.T) {
	dst := []types.Message{{ID: "x", Role: types.RoleUser, Content: "earlier"}}
	bad := &aap.UserMessage{Content: msgBlocks(&aap.ThinkingBlock{Thinking: "t"})}
	got, err := translate.AppendMessageToAGUI(dst, bad, "m9")
	require.Error(t, err)
	assert.Equal(t, dst, got)

	got, err = translate.AppendMessageToAGUI(dst, aap.UserText("now"), "m9")
	require.NoError(t, err)
	require.JSONEq(t, `[{"id":"x","role":"user","content":"earlier"},{"id":"m9","role":"user","content":"now"}]`, msgJSON(t, got))
}

func TestToolContentString(t *testing.T) {
	tests := []struct {
		name string
		in   aap.Content
		want string
	}{
		{"string", aap.TextContent("ok"), "ok"},
		{"empty string", aap.TextContent(""), ""},
		{"no blocks", msgBlocks(), ""},
		{"one text block", msgBlocks(&aap.TextBlock{Text: "a"}), "a"},
		{"text blocks joined in order", msgBlocks(&aap.TextBlock{Text: "a"}, &aap.TextBlock{Text: "b"}), "ab"},
		{
			"a non-text block gives the JSON of every block",
			msgBlocks(&aap.ImageBlock{URL: "https://x/y.png"}, &aap.TextBlock{Text: "b"}),
			`[{"type":"image","url":"https://x/y.png"},{"type":"text","text":"b"}]`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, translate.ToolContentString(tt.in))
		})
	}
}

func TestMessagesToAAP(t *testing.T) {
	tests := []struct {
		name string
		in   []types.Message
		want string // the AAP messages as JSON
	}{
		{
			name: "developer becomes system",
			in:   []types.Message{{ID: "d", Role: types.RoleDeveloper, Content: "rules"}},
			want: `[{"role":"system","content":"rules"}]`,
		},
		{
			name: "system",
			in:   []types.Message{{ID: "s", Role: types.RoleSystem, Content: "rules"}},
			want: `[{"role":"system","content":"rules"}]`,
		},
		{
			name: "activity is skipped",
			in: []types.Message{
				{ID: "u", Role: types.RoleUser, Content: "hi"},
				{ID: "act", Role: types.RoleActivity, ActivityType: "PLAN", Content: map[string]any{"steps": 3}},
				{ID: "a", Role: types.RoleAssistant, Content: "hello"},
			},
			want: `[{"role":"user","content":"hi"},{"role":"assistant","content":"hello"}]`,
		},
		{
			name: "user string",
			in:   []types.Message{{ID: "u", Role: types.RoleUser, Content: "hi"}},
			want: `[{"role":"user","content":"hi"}]`,
		},
		{
			name: "user without content",
			in:   []types.Message{{ID: "u", Role: types.RoleUser}},
			want: `[{"role":"user","content":""}]`,
		},
		{
			name: "user text and image by URL",
			in: []types.Message{msgUserParts(
				types.InputContent{Type: types.InputContentTypeText, Text: "look"},
				types.InputContent{Type: types.InputContentTypeImage, Source: &types.InputContentSource{
					Type: types.InputContentSourceTypeURL, Value: "https://example.com/a.png",
				}},
			)},
			want: `[{"role":"user","content":[{"type":"text","text":"look"},{"type":"image","url":"https://example.com/a.png"}]}]`,
		},
		{
			name: "user image by URL that is a data URI",
			in: []types.Message{msgUserParts(types.InputContent{Type: types.InputContentTypeImage, Source: &types.InputContentSource{
				Type: types.InputContentSourceTypeURL, Value: "data:image/gif;base64,R0lGOD",
			}})},
			want: `[{"role":"user","content":[{"type":"image","url":"data:image/gif;base64,R0lGOD"}]}]`,
		},
		{
			name: "user image by data",
			in: []types.Message{msgUserParts(types.InputContent{Type: types.InputContentTypeImage, Source: &types.InputContentSource{
				Type: types.InputContentSourceTypeData, Value: "iVBORw0KGgo=", MimeType: "image/png",
			}})},
			want: `[{"role":"user","content":[{"type":"image","url":"data:image/png;base64,iVBORw0KGgo="}]}]`,
		},
		{
			name: "legacy binary image with url",
			in: []types.Message{msgUserParts(types.InputContent{
				Type: types.InputContentTypeBinary, MimeType: "image/jpeg", URL: "https://example.com/b.jpg",
			})},
			want: `[{"role":"user","content":[{"type":"image","url":"https://example.com/b.jpg"}]}]`,
		},
		{
			name: "legacy binary image with data",
			in: []types.Message{msgUserParts(types.InputContent{
				Type: types.InputContentTypeBinary, MimeType: "image/webp", Data: "UklGRg==",
			})},
			want: `[{"role":"user","content":[{"type":"image","url":"data:image/webp;base64,UklGRg=="}]}]`,
		},
		{
			name: "legacy binary image with both prefers the url",
			in: []types.Message{msgUserParts(types.InputContent{
				Type: types.InputContentTypeBinary, MimeType: "image/png", URL: "https://example.com/c.png", Data: "AAAA",
			})},
			want: `[{"role":"user","content":[{"type":"image","url":"https://example.com/c.png"}]}]`,
		},
		{
			name: "reasoning folded into the next assistant",
			in: []types.Message{
				{ID: "u", Role: types.RoleUser, Content: "q"},
				{ID: "r1", Role: types.RoleReasoning, Content: "hmm"},
				{ID: "r2", Role: types.RoleReasoning, Content: "aha"},
				{ID: "a", Role: types.RoleAssistant, Content: "answer"},
			},
			want: `[{"role":"user","content":"q"},{"role":"assistant","content":[
				{"type":"thinking","thinking":"hmm"},{"type":"thinking","thinking":"aha"},{"type":"text","text":"answer"}]}]`,
		},
		{
			name: "reasoning folded into an assistant with only tool calls",
			in: []types.Message{
				{ID: "r", Role: types.RoleReasoning, Content: "need data"},
				{ID: "a", Role: types.RoleAssistant, ToolCalls: []types.ToolCall{{ID: "c1", Type: "function", Function: types.FunctionCall{Name: "f", Arguments: `{"a":1}`}}}},
			},
			want: `[{"role":"assistant","content":[{"type":"thinking","thinking":"need data"},
				{"type":"tool_use","toolCallId":"c1","name":"f","input":{"a":1}}]}]`,
		},
		{
			name: "trailing reasoning with no assistant after it",
			in: []types.Message{
				{ID: "u", Role: types.RoleUser, Content: "q"},
				{ID: "r", Role: types.RoleReasoning, Content: "still thinking"},
			},
			want: `[{"role":"user","content":"q"},{"role":"assistant","content":[{"type":"thinking","thinking":"still thinking"}]}]`,
		},
		{
			name: "reasoning followed by a user message stands alone",
			in: []types.Message{
				{ID: "r", Role: types.RoleReasoning, Content: "t"},
				{ID: "u", Role: types.RoleUser, Content: "q"},
			},
			want: `[{"role":"assistant","content":[{"type":"thinking","thinking":"t"}]},{"role":"user","content":"q"}]`,
		},
		{
			name: "reasoning is not carried past an activity message",
			in: []types.Message{
				{ID: "r", Role: types.RoleReasoning, Content: "t"},
				{ID: "act", Role: types.RoleActivity, ActivityType: "X"},
				{ID: "a", Role: types.RoleAssistant, Content: "hi"},
			},
			want: `[{"role":"assistant","content":[{"type":"thinking","thinking":"t"},{"type":"text","text":"hi"}]}]`,
		},
		{
			name: "assistant with only tool calls",
			in: []types.Message{{ID: "a", Role: types.RoleAssistant, ToolCalls: []types.ToolCall{
				{ID: "c1", Type: "function", Function: types.FunctionCall{Name: "get", Arguments: ` { "k" : [1, 2] } `}},
				{ID: "c2", Type: "function", Function: types.FunctionCall{Name: "now", Arguments: ""}},
			}}},
			want: `[{"role":"assistant","content":[
				{"type":"tool_use","toolCallId":"c1","name":"get","input":{"k":[1,2]}},
				{"type":"tool_use","toolCallId":"c2","name":"now","input":{}}]}]`,
		},
		{
			name: "assistant text and tool call",
			in: []types.Message{{ID: "a", Role: types.RoleAssistant, Content: "ok", ToolCalls: []types.ToolCall{
				{ID: "c1", Type: "function", Function: types.FunctionCall{Name: "get", Arguments: `{}`}},
			}}},
			want: `[{"role":"assistant","content":[{"type":"text","text":"ok"},
				{"type":"tool_use","toolCallId":"c1","name":"get","input":{}}]}]`,
		},
		{
			name: "assistant without content",
			in:   []types.Message{{ID: "a", Role: types.RoleAssistant}},
			want: `[{"role":"assistant","content":""}]`,
		},
		{
			name: "tool result",
			in:   []types.Message{{ID: "t", Role: types.RoleTool, ToolCallID: "c1", Content: "42"}},
			want: `[{"role":"tool","toolCallId":"c1","content":"42"}]`,
		},
		{
			name: "tool error folded into the content",
			in:   []types.Message{{ID: "t", Role: types.RoleTool, ToolCallID: "c1", Content: "partial output", Error: "timeout"}},
			want: `[{"role":"tool","toolCallId":"c1","content":"Error: timeout\n\npartial output"}]`,
		},
		{
			name: "tool error with no content",
			in:   []types.Message{{ID: "t", Role: types.RoleTool, ToolCallID: "c1", Error: "timeout"}},
			want: `[{"role":"tool","toolCallId":"c1","content":"Error: timeout"}]`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := translate.MessagesToAAP(tt.in)
			require.NoError(t, err)
			require.JSONEq(t, tt.want, msgJSON(t, got))
		})
	}
}

func TestMessagesToAAPEmpty(t *testing.T) {
	got, err := translate.MessagesToAAP(nil)
	require.NoError(t, err)
	assert.NotNil(t, got)
	assert.Empty(t, got)
}

func TestMessagesToAAPErrors(t *testing.T) {
	image := func(kind, value, mime string) types.InputContent {
		return types.InputContent{Type: types.InputContentTypeImage, Source: &types.InputContentSource{Type: kind, Value: value, MimeType: mime}}
	}
	tests := []struct {
		name        string
		in          []types.Message
		wantIndex   int
		wantID      string
		wantIn      []string // substrings of the error text
		unsupported bool     // errors.Is(err, ErrUnsupportedContent)
	}{
		{
			name: "audio",
			in: []types.Message{
				{ID: "u0", Role: types.RoleUser, Content: "first"},
				{ID: "u-audio", Role: types.RoleUser, Content: []types.InputContent{
					{Type: types.InputContentTypeText, Text: "listen"},
					{Type: types.InputContentTypeAudio, Source: &types.InputContentSource{Type: "data", Value: "AAAA", MimeType: "audio/wav"}},
				}},
			},
			wantIndex: 1, wantID: "u-audio",
			wantIn:      []string{"message 1", `"u-audio"`, "content[1]", "audio"},
			unsupported: true,
		},
		{
			name: "video",
			in: []types.Message{{ID: "u-video", Role: types.RoleUser, Content: []types.InputContent{
				{Type: types.InputContentTypeVideo, Source: &types.InputContentSource{Type: "url", Value: "https://x/v.mp4"}},
			}}},
			wantIndex: 0, wantID: "u-video",
			wantIn:      []string{"message 0", `"u-video"`, "video"},
			unsupported: true,
		},
		{
			name: "document",
			in: []types.Message{{ID: "u-doc", Role: types.RoleUser, Content: []types.InputContent{
				{Type: types.InputContentTypeDocument, Source: &types.InputContentSource{Type: "url", Value: "https://x/d.pdf"}},
			}}},
			wantIndex: 0, wantID: "u-doc",
			wantIn:      []string{`"u-doc"`, "document"},
			unsupported: true,
		},
		{
			name: "binary that is not an image",
			in: []types.Message{{ID: "u-pdf", Role: types.RoleUser, Content: []types.InputContent{
				{Type: types.InputContentTypeBinary, MimeType: "application/pdf", Data: "JVBERi0="},
			}}},
			wantIndex: 0, wantID: "u-pdf",
			wantIn:      []string{`"u-pdf"`, "application/pdf"},
			unsupported: true,
		},
		{
			name:      "http image URL",
			in:        []types.Message{msgUserParts(image(types.InputContentSourceTypeURL, "http://example.com/a.png", ""))},
			wantIndex: 0, wantID: "u1",
			wantIn: []string{"http://example.com/a.png", "https://"},
		},
		{
			name: "legacy binary image with an http url",
			in: []types.Message{msgUserParts(types.InputContent{
				Type: types.InputContentTypeBinary, MimeType: "image/png", URL: "http://example.com/a.png",
			})},
			wantIndex: 0, wantID: "u1",
			wantIn: []string{"https://"},
		},
		{
			name: "legacy binary image given only by id",
			in: []types.Message{msgUserParts(types.InputContent{
				Type: types.InputContentTypeBinary, MimeType: "image/png", ID: "file-1",
			})},
			wantIndex: 0, wantID: "u1",
			wantIn: []string{"binary image"},
		},
		{
			name:      "image data without a MIME type",
			in:        []types.Message{msgUserParts(image(types.InputContentSourceTypeData, "AAAA", ""))},
			wantIndex: 0, wantID: "u1",
			wantIn: []string{"mimeType"},
		},
		{
			name:      "image data with a comma in its MIME type",
			in:        []types.Message{msgUserParts(image(types.InputContentSourceTypeData, "AAAA", "image/png,evil"))},
			wantIndex: 0, wantID: "u1",
			wantIn: []string{"mimeType"},
		},
		{
			name:      "image with an unknown source type",
			in:        []types.Message{msgUserParts(image("s3", "bucket/key", ""))},
			wantIndex: 0, wantID: "u1",
			wantIn: []string{`"s3"`},
		},
		{
			name:      "image without a source",
			in:        []types.Message{msgUserParts(types.InputContent{Type: types.InputContentTypeImage})},
			wantIndex: 0, wantID: "u1",
			wantIn: []string{"image without source"},
		},
		{
			name:      "unknown input part type",
			in:        []types.Message{msgUserParts(types.InputContent{Type: "hologram"})},
			wantIndex: 0, wantID: "u1",
			wantIn: []string{`"hologram"`},
		},
		{
			name:      "user content that is an object",
			in:        []types.Message{{ID: "u", Role: types.RoleUser, Content: map[string]any{"text": "x"}}},
			wantIndex: 0, wantID: "u",
			wantIn: []string{"an object"},
		},
		{
			name: "tool arguments that are not an object",
			in: []types.Message{
				{ID: "u", Role: types.RoleUser, Content: "q"},
				{ID: "a", Role: types.RoleAssistant, ToolCalls: []types.ToolCall{
					{ID: "call_7", Type: "function", Function: types.FunctionCall{Name: "f", Arguments: `["x"]`}},
				}},
			},
			wantIndex: 1, wantID: "a",
			wantIn: []string{"message 1", `"call_7"`},
		},
		{
			name: "truncated tool arguments",
			in: []types.Message{{ID: "a", Role: types.RoleAssistant, ToolCalls: []types.ToolCall{
				{ID: "call_8", Type: "function", Function: types.FunctionCall{Name: "f", Arguments: `{"a":`}},
			}}},
			wantIndex: 0, wantID: "a",
			wantIn: []string{`"call_8"`},
		},
		{
			name: "tool call without a name",
			in: []types.Message{{ID: "a", Role: types.RoleAssistant, ToolCalls: []types.ToolCall{
				{ID: "c1", Type: "function", Function: types.FunctionCall{Arguments: `{}`}},
			}}},
			wantIndex: 0, wantID: "a",
			wantIn: []string{"function name"},
		},
		{
			name:      "assistant content that is an array",
			in:        []types.Message{{ID: "a", Role: types.RoleAssistant, Content: []any{"x"}}},
			wantIndex: 0, wantID: "a",
			wantIn: []string{"must be a string", "an array"},
		},
		{
			name:      "system content that is a number",
			in:        []types.Message{{ID: "s", Role: types.RoleSystem, Content: 3.5}},
			wantIndex: 0, wantID: "s",
			wantIn: []string{"a number"},
		},
		{
			name:      "reasoning content that is not a string",
			in:        []types.Message{{ID: "r", Role: types.RoleReasoning, Content: true}},
			wantIndex: 0, wantID: "r",
			wantIn: []string{"a boolean"},
		},
		{
			name:      "tool message without toolCallId",
			in:        []types.Message{{ID: "t", Role: types.RoleTool, Content: "x"}},
			wantIndex: 0, wantID: "t",
			wantIn: []string{"toolCallId"},
		},
		{
			name:      "unknown role",
			in:        []types.Message{{ID: "z", Role: "narrator", Content: "x"}},
			wantIndex: 0, wantID: "z",
			wantIn: []string{`"narrator"`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := translate.MessagesToAAP(tt.in)
			require.Error(t, err)
			assert.Nil(t, got)
			var me *translate.MessageError
			require.ErrorAs(t, err, &me)
			assert.Equal(t, tt.wantIndex, me.Index)
			assert.Equal(t, tt.wantID, me.ID)
			for _, s := range tt.wantIn {
				assert.Contains(t, err.Error(), s)
			}
			assert.Equal(t, tt.unsupported, errors.Is(err, translate.ErrUnsupportedContent), "errors.Is ErrUnsupportedContent")
		})
	}
}

func TestMessagesToAAPArgumentsErrorIsTyped(t *testing.T) {
	_, err := translate.MessagesToAAP([]types.Message{{ID: "a", Role: types.RoleAssistant, ToolCalls: []types.ToolCall{
		{ID: "call_1", Type: "function", Function: types.FunctionCall{Name: "f", Arguments: `42`}},
	}}})
	var ae *translate.ArgumentsError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, "call_1", ae.ToolCallID)
}

// A RunAgentInput read with encoding/json holds user content as []any of
// map[string]any: it must translate exactly as the typed form does.
func TestMessagesToAAPContentFromJSON(t *testing.T) {
	typed := []types.Message{
		msgUserParts(
			types.InputContent{Type: types.InputContentTypeText, Text: "see"},
			types.InputContent{Type: types.InputContentTypeImage, Source: &types.InputContentSource{
				Type: types.InputContentSourceTypeData, Value: "iVBORw0KGgo=", MimeType: "image/png",
			}},
			types.InputContent{Type: types.InputContentTypeImage, Source: &types.InputContentSource{
				Type: types.InputContentSourceTypeURL, Value: "https://example.com/a.png",
			}},
			types.InputContent{Type: types.InputContentTypeBinary, MimeType: "image/jpeg", URL: "https://example.com/b.jpg"},
			types.InputContent{Type: types.InputContentTypeBinary, MimeType: "image/gif", Data: "R0lGOD"},
		),
	}
	raw, err := json.Marshal(types.RunAgentInput{ThreadID: "t", RunID: "r", Messages: typed})
	require.NoError(t, err)
	var decoded types.RunAgentInput
	require.NoError(t, json.Unmarshal(raw, &decoded))
	require.IsType(t, []any{}, decoded.Messages[0].Content, "precondition: content decoded as []any")

	want, err := translate.MessagesToAAP(typed)
	require.NoError(t, err)
	got, err := translate.MessagesToAAP(decoded.Messages)
	require.NoError(t, err)
	require.JSONEq(t, msgJSON(t, want), msgJSON(t, got))

	t.Run("snake_case mime_type", func(t *testing.T) {
		var in types.RunAgentInput
		require.NoError(t, json.Unmarshal([]byte(`{"threadId":"t","runId":"r","messages":[{"id":"u","role":"user","content":[
			{"type":"image","source":{"type":"data","value":"AAAA","mime_type":"image/png"}}]}]}`), &in))
		got, err := translate.MessagesToAAP(in.Messages)
		require.NoError(t, err)
		require.JSONEq(t, `[{"role":"user","content":[{"type":"image","url":"data:image/png;base64,AAAA"}]}]`, msgJSON(t, got))
	})

	t.Run("audio is rejected the same way", func(t *testing.T) {
		content := []any{map[string]any{"type": "audio", "source": map[string]any{"type": "data", "value": "AAAA", "mimeType": "audio/wav"}}}
		_, err := translate.MessagesToAAP([]types.Message{{ID: "u-a", Role: types.RoleUser, Content: content}})
		require.ErrorIs(t, err, translate.ErrUnsupportedContent)
		assert.Contains(t, err.Error(), `"u-a"`)
	})

	t.Run("parts that are not objects", func(t *testing.T) {
		_, err := translate.MessagesToAAP([]types.Message{{ID: "u-s", Role: types.RoleUser, Content: []any{"just a string"}}})
		var me *translate.MessageError
		require.ErrorAs(t, err, &me)
		assert.Equal(t, "u-s", me.ID)
	})
}

// What AG-UI can hold exactly comes back unchanged: AAP → AG-UI → AAP.
func TestMessagesRoundTrip(t *testing.T) {
	history := []aap.Message{
		&aap.SystemMessage{Content: "sys"},
		&aap.UserMessage{Content: msgBlocks(
			&aap.TextBlock{Text: "two pictures"},
			&aap.ImageBlock{URL: "https://example.com/1.png"},
			&aap.ImageBlock{URL: "data:image/png;base64,iVBORw0KGgo="},
		)},
		&aap.AssistantMessage{Content: msgBlocks(
			&aap.ThinkingBlock{Thinking: "compare them"},
			&aap.TextBlock{Text: "Checking."},
			&aap.ToolUseBlock{ToolCallID: "c1", Name: "diff", Input: json.RawMessage(`{"n":12345678901234567890,"s":"\u00e9"}`)},
		)},
		&aap.ToolMessage{ToolCallID: "c1", Content: aap.TextContent("same")},
		&aap.AssistantMessage{Content: aap.TextContent("They are the same.")},
	}
	agui, err := translate.MessagesToAGUI(history, translate.SequentialIDs("m"))
	require.NoError(t, err)
	back, err := translate.MessagesToAAP(agui)
	require.NoError(t, err)
	assert.Equal(t, msgJSON(t, history), msgJSON(t, back))
}

func TestToolsToAGUI(t *testing.T) {
	t.Run("nil stays nil", func(t *testing.T) {
		assert.Nil(t, translate.ToolsToAGUI(nil))
	})
	t.Run("empty stays empty", func(t *testing.T) {
		got := translate.ToolsToAGUI([]aap.ToolSpec{})
		assert.NotNil(t, got)
		assert.Empty(t, got)
	})
	t.Run("title dropped, parameters kept, missing parameters become an empty object schema", func(t *testing.T) {
		got := translate.ToolsToAGUI([]aap.ToolSpec{
			{Name: "get_weather", Title: "Weather", Description: "Weather for a city",
				Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)},
			{Name: "now", Description: "The time"},
		})
		require.JSONEq(t, `[
			{"name":"get_weather","description":"Weather for a city",
			 "parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}},
			{"name":"now","description":"The time","parameters":{"type":"object","properties":{}}}]`, msgJSON(t, got))
	})
}

func TestToolsToAAP(t *testing.T) {
	tests := []struct {
		name  string
		in    []types.Tool
		want  string // JSON; "null" for a nil slice
		isNil bool
	}{
		{name: "nil stays nil", in: nil, want: `null`, isNil: true},
		{name: "empty stays empty", in: []types.Tool{}, want: `[]`},
		{
			name: "parameters as decoded JSON",
			in: []types.Tool{{Name: "f", Description: "d", Parameters: map[string]any{
				"type": "object", "properties": map[string]any{"a": map[string]any{"type": "number"}},
			}}},
			want: `[{"name":"f","description":"d","parameters":{"type":"object","properties":{"a":{"type":"number"}}}}]`,
		},
		{
			name: "parameters as raw JSON",
			in:   []types.Tool{{Name: "f", Description: "d", Parameters: json.RawMessage(`{"type":"object"}`)}},
			want: `[{"name":"f","description":"d","parameters":{"type":"object"}}]`,
		},
		{
			name: "nil parameters become an empty object schema",
			in:   []types.Tool{{Name: "f", Description: "d"}},
			want: `[{"name":"f","description":"d","parameters":{"type":"object","properties":{}}}]`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := translate.ToolsToAAP(tt.in)
			require.NoError(t, err)
			assert.Equal(t, tt.isNil, got == nil)
			require.JSONEq(t, tt.want, msgJSON(t, got))
		})
	}
}

func TestToolsToAAPErrors(t *testing.T) {
	tests := []struct {
		name   string
		in     []types.Tool
		wantIn []string
	}{
		{
			name:   "parameters that are an array",
			in:     []types.Tool{{Name: "ok", Parameters: map[string]any{}}, {Name: "lister", Parameters: []any{"a"}}},
			wantIn: []string{"tools[1]", "lister", "JSON Schema object"},
		},
		{
			name:   "parameters that are a string",
			in:     []types.Tool{{Name: "stringy", Parameters: "object"}},
			wantIn: []string{"tools[0]", "stringy"},
		},
		{
			name:   "raw parameters that are not an object",
			in:     []types.Tool{{Name: "raw", Parameters: json.RawMessage(`[1]`)}},
			wantIn: []string{"raw", "JSON Schema object"},
		},
		{
			name:   "parameters that cannot be encoded",
			in:     []types.Tool{{Name: "chan", Parameters: make(chan int)}},
			wantIn: []string{"chan", "parameters"},
		},
		{
			name:   "no name",
			in:     []types.Tool{{Description: "nameless"}},
			wantIn: []string{"tools[0]", "name is required"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := translate.ToolsToAAP(tt.in)
			require.Error(t, err)
			assert.Nil(t, got)
			for _, s := range tt.wantIn {
				assert.Contains(t, err.Error(), s)
			}
		})
	}
}

func TestToolsToAAPRejectsInvalidRawParameters(t *testing.T) {
	_, err := translate.ToolsToAAP([]types.Tool{{Name: "broken", Parameters: json.RawMessage(`{"type":`)}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "broken")
}

// MessagesToAAPWithIDs gives each AAP message the AG-UI id it came from,
// by the rules MessagesToAAP folds messages with.
func TestMessagesToAAPWithIDs(t *testing.T) {
	tests := []struct {
		name string
		in   []types.Message
		want []string
	}{
		{"one each", []types.Message{
			{ID: "s", Role: types.RoleSystem, Content: "be brief"},
			{ID: "u", Role: types.RoleUser, Content: "hi"},
			{ID: "a", Role: types.RoleAssistant, Content: "hello"},
		}, []string{"s", "u", "a"}},
		{"reasoning folds into the assistant after it", []types.Message{
			{ID: "u", Role: types.RoleUser, Content: "hi"},
			{ID: "r1", Role: types.RoleReasoning, Content: "hm"},
			{ID: "act", Role: types.RoleActivity},
			{ID: "r2", Role: types.RoleReasoning, Content: "so"},
			{ID: "a", Role: types.RoleAssistant, Content: "hello"},
		}, []string{"u", "a"}},
		{"reasoning with no assistant after it keeps its first id", []types.Message{
			{ID: "r1", Role: types.RoleReasoning, Content: "hm"},
			{ID: "r2", Role: types.RoleReasoning, Content: "so"},
			{ID: "u", Role: types.RoleUser, Content: "hi"},
			{ID: "r3", Role: types.RoleReasoning, Content: "end"},
		}, []string{"r1", "u", "r3"}},
		{"activity is skipped", []types.Message{
			{ID: "act", Role: types.RoleActivity},
			{ID: "tool", Role: types.RoleTool, ToolCallID: "c1", Content: "42"},
		}, []string{"tool"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want, err := translate.MessagesToAAP(tt.in)
			require.NoError(t, err)
			got, ids, err := translate.MessagesToAAPWithIDs(tt.in)
			require.NoError(t, err)
			assert.Equal(t, want, got)
			assert.Equal(t, tt.want, ids)
		})
	}
}
