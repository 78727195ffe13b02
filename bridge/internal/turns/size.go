package turns

import "github.com/aapagui/aapagui/bridge/internal/fault"

// MessageSize counts what the agent streamed of the message it is
// building (its text, thinking and tool-argument bytes) against the cap on
// one message (Serving.MaxMessageSize): a turn whose message would grow
// past it ends with fault.MessageTooLargeError, the message kept up to
// the cap. The bridge starts the count again with each message (Reset).
type MessageSize struct {
	// Max is the cap; zero or negative means none.
	Max int
	n   int
}

// Fits reports whether n more bytes fit the message.
func (m *MessageSize) Fits(n int) bool { return m.Max <= 0 || m.n+n <= m.Max }

// Add counts n more bytes (taken only when they fit).
func (m *MessageSize) Add(n int) { m.n += n }

// Grow counts n more bytes, or refuses them when they do not fit.
func (m *MessageSize) Grow(n int) error {
	if !m.Fits(n) {
		return &fault.MessageTooLargeError{Limit: m.Max}
	}
	m.n += n
	return nil
}

// Reset starts the count of a new message.
func (m *MessageSize) Reset() { m.n = 0 }

// Bytes is what the message has counted so far.
func (m *MessageSize) Bytes() int { return m.n }
