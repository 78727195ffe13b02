package bridgetest

import (
	"bytes"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// SyncBuffer is a log destination safe for concurrent writes.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p to the log.
func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String is the log so far.
func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// LogLines returns the JSON log lines with this message.
func LogLines(t *testing.T, log, message string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(log, "\n") {
		if line == "" {
			continue
		}
		var l map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &l), line)
		if l["message"] == message {
			out = append(out, l)
		}
	}
	return out
}
