package agui_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/agui"
)

func runInputBody(n int) string {
	var sb strings.Builder
	sb.WriteString(`{"threadId":"t","runId":"r","state":{"a":1},"tools":[{"name":"get_weather","description":"d","parameters":{"type":"object"}}],"context":[{"description":"page","value":"home"}],"forwardedProps":{"aap":{"agent":{"options":{"x":"y"}}}},"resume":[{"interruptId":"i","status":"resolved","payload":{"approved":true}}],"messages":[`)
	for i := range n {
		if i > 0 {
			sb.WriteByte(',')
		}
		switch i % 4 {
		case 0:
			fmt.Fprintf(&sb, `{"id":"u%d","role":"user","content":"hello %d"}`, i, i)
		case 1:
			fmt.Fprintf(&sb, `{"id":"a%d","role":"assistant","content":"hi","toolCalls":[{"id":"c%d","type":"function","function":{"name":"get_weather","arguments":"{\"location\":\"Paris\"}"}}]}`, i, i)
		case 2:
			fmt.Fprintf(&sb, `{"id":"t%d","role":"tool","toolCallId":"c%d","content":"Sunny","error":"none"}`, i, i-1)
		case 3:
			fmt.Fprintf(&sb, `{"id":"i%d","role":"user","content":[{"type":"text","text":"see"},{"type":"image","source":{"type":"url","value":"https://x/y.png"}}]}`, i)
		}
	}
	sb.WriteString(`]}`)
	return sb.String()
}

// DecodeRunAgentInput must read exactly what the SDK's decoder reads.
func TestDecodeRunAgentInputMatchesSDK(t *testing.T) {
	for name, body := range map[string]string{
		"camelCase": runInputBody(12),
		"snake_case": `{"thread_id":"t","run_id":"r","messages":[{"id":"m","role":"tool","tool_call_id":"c","content":"x"}],` +
			`"forwarded_props":{"a":1}}`,
		"empty": `{}`,
	} {
		t.Run(name, func(t *testing.T) {
			var want types.RunAgentInput
			require.NoError(t, json.Unmarshal([]byte(body), &want))
			got, err := agui.DecodeRunAgentInput([]byte(body))
			require.NoError(t, err)
			require.Equal(t, want, *got)
		})
	}
	_, err := agui.DecodeRunAgentInput([]byte(`{"messages":"nope"}`))
	require.Error(t, err)
}

func BenchmarkDecodeRunAgentInput1000(b *testing.B) {
	body := []byte(runInputBody(1000))
	b.Run("sdk", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var in types.RunAgentInput
			_ = json.Unmarshal(body, &in)
		}
	})
	b.Run("translate", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = agui.DecodeRunAgentInput(body)
		}
	})
}

// PatchToolCallValues adds encryptedValue to the named tool calls only,
// leaves a body with none of them as it was, and refuses a body that is
// not a RunAgentInput.
func TestPatchToolCallValues(t *testing.T) {
	body := []byte(`{"threadId":"t","messages":[{"id":"u1","role":"user","content":"<hi>"},` +
		`{"id":"a1","role":"assistant","toolCalls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}},` +
		`{"id":"c2","type":"function","function":{"name":"g","arguments":"{}"}}]}]}`)
	out, err := agui.PatchToolCallValues(body, map[string]string{"c2": "sealed&", "absent": "x"})
	require.NoError(t, err)
	in, err := agui.DecodeRunAgentInput(out)
	require.NoError(t, err)
	require.Len(t, in.Messages, 2)
	assert.Equal(t, "<hi>", in.Messages[0].Content, "no HTML escaping, other messages kept")
	var msgs []struct {
		ToolCalls []map[string]any `json:"toolCalls"`
	}
	var top struct{ Messages json.RawMessage }
	require.NoError(t, json.Unmarshal(out, &top))
	require.NoError(t, json.Unmarshal(top.Messages, &msgs))
	assert.NotContains(t, msgs[1].ToolCalls[0], "encryptedValue")
	assert.Equal(t, "sealed&", msgs[1].ToolCalls[1]["encryptedValue"])

	same, err := agui.PatchToolCallValues(body, map[string]string{"absent": "x"})
	require.NoError(t, err)
	assert.Equal(t, string(body), string(same), "nothing to add: the body as it was")
	_, err = agui.PatchToolCallValues([]byte(`[1]`), map[string]string{"c1": "x"})
	assert.Error(t, err)
}

// BenchmarkDecodeRunAgentInputLazy1000x2KB reads what agui2aap reads of a
// 2 MB conversation: a thousand messages of about 2 KB, contents left raw.
func BenchmarkDecodeRunAgentInputLazy1000x2KB(b *testing.B) {
	var sb strings.Builder
	sb.WriteString(`{"threadId":"t","runId":"r","messages":[`)
	pad := strings.Repeat("lorem ipsum ", 170)
	for i := range 1000 {
		if i > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, `{"id":"m%d","role":"user","content":"%s %d"}`, i, pad, i)
	}
	sb.WriteString(`]}`)
	body := []byte(sb.String())
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := agui.DecodeRunAgentInputLazy(body); err != nil {
			b.Fatal(err)
		}
	}
}

// PatchMetadata sets the metadata of the named messages and tool calls,
// in a RunAgentInput or a MESSAGES_SNAPSHOT alike, and leaves a body with
// none of them as it was.
func TestPatchMetadata(t *testing.T) {
	body := []byte(`{"type":"MESSAGES_SNAPSHOT","messages":[{"id":"u1","role":"user","content":"<hi>"},` +
		`{"id":"a1","role":"assistant","toolCalls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]}]}`)
	out, err := agui.PatchMetadata(body, agui.Metadata{
		Messages:  map[string]json.RawMessage{"u1": json.RawMessage(`{"n":1.50}`), "absent": json.RawMessage(`{}`)},
		ToolCalls: map[string]json.RawMessage{"c1": json.RawMessage(`{"c":true}`)},
	})
	require.NoError(t, err)
	var snap struct {
		Type     string
		Messages []struct {
			Content   string          `json:"content"`
			Metadata  json.RawMessage `json:"metadata"`
			ToolCalls []struct {
				Metadata json.RawMessage `json:"metadata"`
			} `json:"toolCalls"`
		} `json:"messages"`
	}
	require.NoError(t, json.Unmarshal(out, &snap))
	assert.Equal(t, "MESSAGES_SNAPSHOT", snap.Type)
	assert.Equal(t, "<hi>", snap.Messages[0].Content)
	assert.Equal(t, `{"n":1.50}`, string(snap.Messages[0].Metadata), "as it was written")
	assert.Nil(t, snap.Messages[1].Metadata)
	assert.JSONEq(t, `{"c":true}`, string(snap.Messages[1].ToolCalls[0].Metadata))
	assert.NotContains(t, string(out), `\u003c`, "no HTML escaping")

	same, err := agui.PatchMetadata(body, agui.Metadata{Messages: map[string]json.RawMessage{"absent": json.RawMessage(`{}`)}})
	require.NoError(t, err)
	assert.Equal(t, string(body), string(same))
}
