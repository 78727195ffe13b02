package sse_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/internal/sse"
)

func TestAppendEvent(t *testing.T) {
	tests := []struct {
		name      string
		eventName string
		data      string
		want      string
	}{
		{"AG-UI frame", "", `{"type":"RUN_STARTED"}`, "data: {\"type\":\"RUN_STARTED\"}\n\n"},
		{"AAP frame", "turn_start", "{}", "event: turn_start\ndata: {}\n\n"},
		{"empty data", "", "", "data: \n\n"},
		{"LF in data", "", "a\nb", "data: a\ndata: b\n\n"},
		{"CRLF in data", "", "a\r\nb", "data: a\ndata: b\n\n"},
		{"CR in data", "", "a\rb", "data: a\ndata: b\n\n"},
		{"CR then LF lines", "", "a\r\rb\n\nc", "data: a\ndata: \ndata: b\ndata: \ndata: c\n\n"},
		{"trailing line break", "", "a\n", "data: a\ndata: \n\n"},
		{"only a line break", "", "\r\n", "data: \ndata: \n\n"},
		{"leading space kept", "", " a", "data:  a\n\n"},
		{"line breaks removed from name", "a\r\nb\n", "x", "event: ab\ndata: x\n\n"},
		{"name of only line breaks", "\r\n", "x", "data: x\n\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := sse.AppendEvent([]byte("prefix|"), tt.eventName, []byte(tt.data))
			assert.Equal(t, "prefix|"+tt.want, string(got))
		})
	}
}

func TestAppendEventNoAllocs(t *testing.T) {
	dst := make([]byte, 0, 256)
	data := []byte(`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"hi"}`)
	multi := []byte("a\nb\r\nc")
	allocs := testing.AllocsPerRun(100, func() {
		dst = sse.AppendEvent(dst[:0], "text_delta", data)
		dst = sse.AppendEvent(dst[:0], "a\nb", multi)
	})
	assert.Zero(t, allocs)
}

// TestRoundTrip writes with AppendEvent and reads back with Read: the data
// comes back with its line breaks normalised to LF.
func TestRoundTrip(t *testing.T) {
	tests := []struct {
		name      string
		eventName string
		data      string
		want      string
	}{
		{"JSON", "text_delta", `{"delta":"a\nb"}`, `{"delta":"a\nb"}`},
		{"lines", "", "a\nb\nc", "a\nb\nc"},
		{"CRLF and CR", "", "a\r\nb\rc", "a\nb\nc"},
		{"blank lines", "", "\n\n", "\n\n"},
		{"only CRLF", "", "\r\n", "\n"},
		{"CR LF as two breaks", "", "\n\r", "\n\n"},
		{"looks like fields", "x", "data: y\nevent: z\n: c\nid: 1", "data: y\nevent: z\n: c\nid: 1"},
		{"leading spaces", " n", "  a\n b", "  a\n b"},
		{"BOM in data", "", "\xEF\xBB\xBFa", "\xEF\xBB\xBFa"},
		{"raw bytes", "\x00", "\x00\xff", "\x00\xff"},
		{"large", "snapshot", strings.Repeat("0123456789", 100_000), strings.Repeat("0123456789", 100_000)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			frames := sse.AppendEvent(nil, tt.eventName, []byte(tt.data))
			frames = sse.AppendEvent(frames, "next", []byte("{}"))
			got, err := readAll(t, strings.NewReader(string(frames)), sse.ReadOptions{})
			require.NoError(t, err)
			assert.Equal(t, []event{{tt.eventName, tt.want}, {"next", "{}"}}, got)
		})
	}
}
