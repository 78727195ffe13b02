package reqbody

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"sync"
)

// ErrReleased is GetBody's error after Release: the bytes are gone.
var ErrReleased = errors.New("reqbody: the request body was released")

// Body is the source of a request's body.
type Body struct {
	mu   sync.Mutex
	data []byte
}

// Set makes data the body of req, with ContentLength and GetBody as
// http.NewRequest sets them for a bytes.Reader. Each reader of it lets
// the bytes go once it has read them all; the Body itself (what GetBody
// reads from, for a retry on a fresh connection) keeps them until Release.
func Set(req *http.Request, data []byte) *Body {
	b := &Body{data: data}
	req.ContentLength = int64(len(data))
	if len(data) == 0 {
		req.Body, req.GetBody = http.NoBody, func() (io.ReadCloser, error) { return http.NoBody, nil }
		return b
	}
	req.Body = &reader{data: data}
	req.GetBody = b.get
	return b
}

func (b *Body) get() (io.ReadCloser, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.data == nil {
		return nil, ErrReleased
	}
	return &reader{data: b.data}, nil
}

// Release lets the bytes go: call it once the response's headers have
// arrived, when the transport no longer retries the request.
func (b *Body) Release() {
	b.mu.Lock()
	b.data = nil
	b.mu.Unlock()
}

// reader reads data once and then drops it.
type reader struct {
	data []byte
}

func (r *reader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		r.data = nil
		return 0, io.EOF
	}
	n := copy(p, r.data)
	r.data = r.data[n:]
	if len(r.data) == 0 {
		r.data = nil // read whole: nothing keeps the bytes
	}
	return n, nil
}

// WriteTo lets the transport write the bytes in one call.
func (r *reader) WriteTo(w io.Writer) (int64, error) {
	data := r.data
	r.data = nil
	n, err := bytes.NewReader(data).WriteTo(w)
	return n, err
}

// Close does nothing: the transport may call it from another goroutine
// while a read is in flight.
func (*reader) Close() error { return nil }
