package edge_test

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/bridge/internal/ssestream"
)

// Frames are held until Flush (or until the buffer is large), then written
// in one write.
func TestStreamCoalesces(t *testing.T) {
	rec := httptest.NewRecorder()
	s := ssestream.New(rec)
	s.Start()
	buf := s.Buffer()
	buf = append(buf, "data: 1\n\n"...)
	s.Commit(buf)
	buf = append(s.Buffer(), "data: 2\n\n"...)
	s.Commit(buf)
	assert.Empty(t, rec.Body.String(), "nothing written before a flush")
	s.Flush()
	assert.Equal(t, "data: 1\n\ndata: 2\n\n", rec.Body.String())
	assert.Equal(t, "text/event-stream", rec.Header().Get("Content-Type"))

	big := ssestream.New(httptest.NewRecorder())
	big.MaxBuffer = 16
	b := append(big.Buffer(), strings.Repeat("x", 20)...)
	big.Commit(b)
	assert.Empty(t, big.Buffer(), "a buffer past MaxBuffer is written out")

	// FlushBeforeRead flushes what is pending before each upstream read.
	rec = httptest.NewRecorder()
	s = ssestream.New(rec)
	s.Commit(append(s.Buffer(), "data: x\n\n"...))
	r := ssestream.FlushBeforeRead(strings.NewReader("upstream"), s)
	p := make([]byte, 8)
	_, err := r.Read(p)
	require.NoError(t, err)
	assert.Equal(t, "data: x\n\n", rec.Body.String())
}
