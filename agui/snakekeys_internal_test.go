package agui

import (
	"bytes"
	"testing"
)

// containsSnakeKey is what hasSnakeKey must answer: one search per key.
func containsSnakeKey(data []byte) bool {
	for _, k := range snakeKeys {
		if bytes.Contains(data, k) {
			return true
		}
	}
	return false
}

func TestHasSnakeKey(t *testing.T) {
	for _, tc := range []struct {
		data string
		want bool
	}{
		{`{"threadId":"t","runId":"r","messages":[]}`, false},
		{`{"thread_id":"t"}`, true},
		{`{"messages":[{"id":"a","role":"assistant","tool_calls":[]}]}`, true},
		{`"parent_run_id"`, true},
		{`{"content":"snake_case words, a_b_c, tool_calls without quotes"}`, false},
		{`{"content":"an escaped \"tool_call_id\" in text"}`, false},
		{`_"run_id"_`, true},
		{`"run_i"d"`, false},
		{`_`, false},
		{``, false},
		{`"interrupt_id`, false},
		{`"interrupt_id"`, true},
	} {
		if got := hasSnakeKey([]byte(tc.data)); got != tc.want {
			t.Errorf("hasSnakeKey(%q) = %v, want %v", tc.data, got, tc.want)
		}
	}
}

// FuzzHasSnakeKey holds hasSnakeKey to the searches it replaces.
func FuzzHasSnakeKey(f *testing.F) {
	for _, k := range snakeKeys {
		f.Add(append([]byte(`{"x":"a_b",`), append(k, ':', '1', '}')...))
		f.Add(k[:len(k)-1])
		f.Add(k[1:])
	}
	f.Add([]byte(`{"threadId":"t","messages":[{"content":"x_y"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if got, want := hasSnakeKey(data), containsSnakeKey(data); got != want {
			t.Fatalf("hasSnakeKey(%q) = %v, the searches say %v", data, got, want)
		}
	})
}
