package bench

import (
	"bytes"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aapagui/aapagui/internal/reqbody"
)

// A prompt tells the bench agents what to stream. It is the text
// "bench:<n>:<interval µs>:<hold>" somewhere in the request body (the
// agents look for it in the raw JSON, so that they spend no time
// decoding): n text deltas, one every interval (0: as fast as the socket
// takes them), then, when hold is 1, no end until the agent is released.
// A trickled delta is the send time in nanoseconds since the harness
// started, so that the client can compute each event's latency.
type prompt struct {
	n        int
	interval time.Duration
	hold     bool
	// history is how many messages of conversation come before the
	// prompt (a session's seed on AAP, the run's messages on AG-UI).
	history int
}

// historyText is one message of a prompt's earlier conversation: about
// the length of a short chat answer.
var historyText = strings.Repeat("an earlier message of the conversation; ", 6)

func (p prompt) String() string {
	h := "0"
	if p.hold {
		h = "1"
	}
	return "bench:" + strconv.Itoa(p.n) + ":" + strconv.Itoa(int(p.interval/time.Microsecond)) + ":" + h
}

func parsePrompt(body []byte) (prompt, bool) {
	i := bytes.LastIndex(body, []byte("bench:"))
	if i < 0 {
		return prompt{}, false
	}
	rest := body[i+len("bench:"):]
	var nums [3]int
	for k := range nums {
		j := 0
		for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
			j++
		}
		if j == 0 {
			return prompt{}, false
		}
		nums[k], _ = strconv.Atoi(string(rest[:j]))
		rest = rest[j:]
		if k < 2 {
			if len(rest) == 0 || rest[0] != ':' {
				return prompt{}, false
			}
			rest = rest[1:]
		}
	}
	return prompt{n: nums[0], interval: time.Duration(nums[1]) * time.Microsecond, hold: nums[2] == 1}, true
}

// base is the origin of the trickled timestamps.
var base = time.Now()

func stamp() int64 { return int64(time.Since(base)) }

// release ends every held stream of both agents; sent counts the bytes
// both have written into their streams.
type release struct {
	mu   sync.Mutex
	ch   chan struct{}
	sent atomic.Int64
}

func newRelease() *release { return &release{ch: make(chan struct{})} }

func (r *release) wait() <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.ch
}

func (r *release) all() {
	r.mu.Lock()
	defer r.mu.Unlock()
	close(r.ch)
	r.ch = make(chan struct{})
}

// streamer writes pre-encoded SSE frames: a burst goes out in 32 KiB
// writes, a trickle as one write and flush per frame.
type streamer struct {
	w    http.ResponseWriter
	rc   *http.ResponseController
	buf  []byte
	err  error
	sent *atomic.Int64 // counts what is written
}

func newStreamer(w http.ResponseWriter, sent *atomic.Int64) *streamer {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	return &streamer{w: w, rc: http.NewResponseController(w), buf: make([]byte, 0, 40<<10), sent: sent}
}

func (s *streamer) add(frame ...[]byte) {
	for _, f := range frame {
		s.buf = append(s.buf, f...)
	}
	if len(s.buf) >= 32<<10 {
		s.write()
	}
}

func (s *streamer) flush() {
	s.write()
	if s.err == nil {
		s.err = s.rc.Flush()
	}
}

func (s *streamer) write() {
	if s.err == nil && len(s.buf) > 0 {
		var n int
		n, s.err = s.w.Write(s.buf)
		s.sent.Add(int64(n))
	}
	s.buf = s.buf[:0]
}

// deltas streams p's deltas, each framed by pre and post around its text.
func (s *streamer) deltas(p prompt, pre, post []byte, done <-chan struct{}) bool {
	if p.interval == 0 {
		word := []byte(" word")
		for range p.n {
			s.add(pre, word, post)
			if s.err != nil {
				return false
			}
		}
		return true
	}
	t := time.NewTicker(p.interval)
	defer t.Stop()
	var num []byte
	for range p.n {
		select {
		case <-t.C:
		case <-done:
			return false
		}
		num = strconv.AppendInt(num[:0], stamp(), 10)
		s.add(pre, num, post)
		s.flush()
		if s.err != nil {
			return false
		}
	}
	return true
}

func hold(p prompt, s *streamer, rel <-chan struct{}, done <-chan struct{}) bool {
	if !p.hold {
		return true
	}
	s.flush()
	select {
	case <-rel:
		return true
	case <-done:
		return false
	}
}

// frames are how an agent streams a bench prompt: start, each delta's
// text between deltaPre and deltaPost, then end.
type frames struct {
	start, end          [][]byte
	deltaPre, deltaPost []byte
}

// serve answers a request holding a bench prompt with its stream, framed
// as f; a request without one is 400.
func (rel *release) serve(w http.ResponseWriter, r *http.Request, f frames) {
	body, err := readAll(r)
	p, ok := parsePrompt(body)
	if err != nil || !ok {
		http.Error(w, "no bench prompt", http.StatusBadRequest)
		return
	}
	released := rel.wait()
	s := newStreamer(w, &rel.sent)
	s.add(f.start...)
	if !s.deltas(p, f.deltaPre, f.deltaPost, r.Context().Done()) {
		return
	}
	if !hold(p, s, released, r.Context().Done()) {
		return
	}
	s.add(f.end...)
	s.flush()
}

// AGUIAgent is a minimal AG-UI agent: POST any RunAgentInput holding a
// prompt and it streams RUN_STARTED, TEXT_MESSAGE_START, the deltas as
// TEXT_MESSAGE_CONTENT, TEXT_MESSAGE_END and RUN_FINISHED.
type AGUIAgent struct{ rel *release }

func (a *AGUIAgent) ServeHTTP(w http.ResponseWriter, r *http.Request) { a.rel.serve(w, r, aguiFrames) }

// aguiFrames are the AG-UI agent's frames.
var aguiFrames = frames{
	start: [][]byte{[]byte("data: {\"type\":\"RUN_STARTED\",\"threadId\":\"t\",\"runId\":\"r\"}\n\n"),
		[]byte("data: {\"type\":\"TEXT_MESSAGE_START\",\"messageId\":\"m\",\"role\":\"assistant\"}\n\n")},
	deltaPre:  []byte("data: {\"type\":\"TEXT_MESSAGE_CONTENT\",\"messageId\":\"m\",\"delta\":\""),
	deltaPost: []byte("\"}\n\n"),
	end: [][]byte{[]byte("data: {\"type\":\"TEXT_MESSAGE_END\",\"messageId\":\"m\"}\n\n"),
		[]byte("data: {\"type\":\"RUN_FINISHED\",\"threadId\":\"t\",\"runId\":\"r\"}\n\n")},
}

// AAPAgent is a minimal AAP agent named "bench": GET /meta, POST
// /sessions (any body), and POST /sessions/{id}/turns holding a prompt,
// which streams turn_start, the deltas as text_delta and turn_stop.
type AAPAgent struct {
	rel *release
	mux *http.ServeMux
	mu  sync.Mutex
	seq int
}

func newAAPAgent(rel *release) *AAPAgent {
	a := &AAPAgent{rel: rel, mux: http.NewServeMux()}
	a.mux.HandleFunc("GET /meta", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"version":3,"agents":[{"name":"bench","version":"1","capabilities":{"stream":{"delta":{}}}}]}`))
	})
	a.mux.HandleFunc("POST /sessions", func(w http.ResponseWriter, r *http.Request) {
		_, _ = readAll(r)
		a.mu.Lock()
		a.seq++
		id := strconv.Itoa(a.seq)
		a.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		w.Write([]byte(`{"sessionId":"s` + id + `"}`))
	})
	a.mux.HandleFunc("POST /sessions/{id}/turns", a.turn)
	return a
}

func (a *AAPAgent) ServeHTTP(w http.ResponseWriter, r *http.Request) { a.mux.ServeHTTP(w, r) }

func (a *AAPAgent) turn(w http.ResponseWriter, r *http.Request) { a.rel.serve(w, r, aapFrames) }

// aapFrames are the AAP agent's frames.
var aapFrames = frames{
	start:     [][]byte{[]byte("event: turn_start\ndata: {}\n\n")},
	deltaPre:  []byte("event: text_delta\ndata: {\"delta\":\""),
	deltaPost: []byte("\"}\n\n"),
	end:       [][]byte{[]byte("event: turn_stop\ndata: {\"stopReason\":\"end_turn\"}\n\n")},
}

func readAll(r *http.Request) ([]byte, error) {
	var b bytes.Buffer
	_, err := b.ReadFrom(http.MaxBytesReader(nil, r.Body, 256<<20))
	return b.Bytes(), err
}

// relay is the least a hop written on net/http does, what each bridge
// does less the translating and the store: it reads the request's body,
// sends it upstream with the transport the bridges make by default (the
// same buffers per connection), and passes the response on read by read,
// flushed after each, into a buffer grown as the bridges' SSE reader
// grows its own (1 KiB, doubled while reads fill it, up to 64 KiB). The
// harness reads AG-UI through it to measure what the hop alone costs.
type relay struct {
	upstream string
	hc       *http.Client
}

func (rl *relay) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	req, err := http.NewRequestWithContext(r.Context(), r.Method, rl.upstream+r.URL.RequestURI(), nil)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	sent := reqbody.Set(req, body)
	req.Header.Set("Content-Type", r.Header.Get("Content-Type"))
	req.Header.Set("Accept", r.Header.Get("Accept"))
	resp, err := rl.hc.Do(req)
	sent.Release()
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	w.Header().Set("Content-Type", resp.Header.Get("Content-Type"))
	w.WriteHeader(resp.StatusCode)
	rc := http.NewResponseController(w)
	buf := make([]byte, 1<<10)
	for {
		n, err := resp.Body.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return
			}
			if werr := rc.Flush(); werr != nil {
				return
			}
			if n == len(buf) && len(buf) < 64<<10 {
				buf = make([]byte, 2*len(buf))
			}
		}
		if err != nil {
			return
		}
	}
}
