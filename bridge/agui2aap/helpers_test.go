package agui2aap_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/events"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/agui"
	"github.com/aapagui/aapagui/bridge/agui2aap"
	"github.com/aapagui/aapagui/bridge/internal/bridgetest"
	"github.com/aapagui/aapagui/demo"
	"github.com/aapagui/aapagui/internal/sse"
	"github.com/aapagui/aapagui/store"
)

// env is agui2aap, over real HTTP, in front of an AAP server.
type env struct {
	URL       string        // the bridge's root URL
	AAP       string        // the AAP server's base URL
	AAPClient *aap.Client   // talks to the AAP server directly
	Store     store.Threads // the bridge's thread store
	server    *httptest.Server
}

// newEnv starts the AAP demo agent and agui2aap in front of it with a
// memory store and web_search enabled, untrusted; configure may change the
// Config.
func newEnv(t testing.TB, configure ...func(*agui2aap.Config)) *env {
	t.Helper()
	return newBridge(t, demoAAPServer(t), configure...)
}

// demoAAPServer starts the AAP demo agent and returns its URL.
func demoAAPServer(t testing.TB) string {
	t.Helper()
	s := httptest.NewServer(demo.NewAAPAgent(demo.AAPAgentOptions{}))
	t.Cleanup(s.Close)
	return s.URL
}

// newBridge starts agui2aap in front of the AAP server at upstream.
func newBridge(t testing.TB, upstream string, configure ...func(*agui2aap.Config)) *env {
	t.Helper()
	cfg := agui2aap.Config{
		Upstream:    upstream,
		Store:       store.NewMemory(),
		ServerTools: []agui2aap.ServerTool{{Name: demo.SearchTool}},
	}
	for _, f := range configure {
		f(&cfg)
	}
	srv, err := agui2aap.New(cfg)
	require.NoError(t, err)
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	return &env{URL: hs.URL, AAP: upstream, AAPClient: aap.NewClient(upstream, aap.ClientOptions{}), Store: cfg.Store, server: hs}
}

// response is one answer of the bridge, read to the end. A stream's events
// have been decoded and checked with agui.Verify.
type response struct {
	Status int
	Header http.Header
	Body   string
	Events []events.Event
}

// errorCode is the code of a JSON error body, "" if it is not one.
func (r *response) errorCode() string {
	var er aap.ErrorResponse
	if json.Unmarshal([]byte(r.Body), &er) != nil {
		return ""
	}
	return er.Error.Code
}

// errorMessage is the message of a JSON error body.
func (r *response) errorMessage() string {
	var er aap.ErrorResponse
	_ = json.Unmarshal([]byte(r.Body), &er)
	return er.Error.Message
}

// runError is the stream's RUN_ERROR, nil if it has none.
func (r *response) runError() *events.RunErrorEvent {
	for _, ev := range r.Events {
		if e, ok := ev.(*events.RunErrorEvent); ok {
			return e
		}
	}
	return nil
}

// errorCodeInBand is the code of the stream's RUN_ERROR, "" if none.
func (r *response) errorCodeInBand() string {
	if e := r.runError(); e != nil && e.Code != nil {
		return *e.Code
	}
	return ""
}

// types lists the stream's event types.
func (r *response) types() []string {
	out := make([]string, len(r.Events))
	for i, ev := range r.Events {
		out[i] = string(ev.Type())
	}
	return out
}

// post sends body (JSON-encoded unless it is a string or []byte) to the
// bridge the way HttpAgent does, with extra headers as name/value pairs.
func (e *env) post(t testing.TB, path string, body any, headers ...string) *response {
	t.Helper()
	return e.postCtx(bridgetest.Context(t), t, path, body, headers...)
}

func (e *env) postCtx(ctx context.Context, t testing.TB, path string, body any, headers ...string) *response {
	t.Helper()
	var data []byte
	switch b := body.(type) {
	case string:
		data = []byte(b)
	case []byte:
		data = b
	default:
		var err error
		data, err = json.Marshal(body)
		require.NoError(t, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.URL+path, bytes.NewReader(data))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	return do(t, req)
}

// get sends a GET with extra headers as name/value pairs.
func (e *env) get(t testing.TB, path string, headers ...string) *response {
	t.Helper()
	req, err := http.NewRequestWithContext(bridgetest.Context(t), http.MethodGet, e.URL+path, nil)
	require.NoError(t, err)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	return do(t, req)
}

// do sends the request and reads the answer; an event stream is decoded
// and verified.
func do(t testing.TB, req *http.Request) *response {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err, "reading the response")
	r := &response{Status: resp.StatusCode, Header: resp.Header, Body: string(body)}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		r.Events = decodeStream(t, body)
	}
	return r
}

// decodeStream decodes an AG-UI event stream, checking its framing (LF
// only, data lines only, each but a hydration's after the id of its run
// log, numbered on from 1) and that it passes agui.Verify.
func decodeStream(t testing.TB, body []byte) []events.Event {
	t.Helper()
	require.NotContains(t, string(body), "\r", "LF-only framing")
	log, n, idAbove := "", 0, false
	for _, line := range strings.Split(string(body), "\n") {
		switch {
		case line == "":
		case strings.HasPrefix(line, "id: "):
			id := strings.TrimPrefix(line, "id: ")
			if n++; n == 1 {
				log, _, _ = strings.Cut(id, ":")
			}
			require.Equal(t, fmt.Sprintf("%s:%d", log, n), id, "the events' ids")
			idAbove = true
		default:
			require.True(t, strings.HasPrefix(line, "data: "), "only id and data lines: %q", line)
			require.True(t, idAbove || n == 0, "an id on every event of a run: %q", line)
			idAbove = false
		}
	}
	var evs []events.Event
	for ev, err := range sse.Read(bytes.NewReader(body), sse.ReadOptions{MaxEventSize: 64 << 20}) {
		require.NoError(t, err)
		require.Empty(t, ev.Name, "AG-UI frames have no event name")
		decoded, err := agui.DecodeEvent(ev.Data)
		require.NoError(t, err, "event %s", ev.Data)
		evs = append(evs, decoded)
	}
	require.NoError(t, agui.Verify(evs), "the stream must pass the AG-UI verifier:\n%s", body)
	return evs
}

// sessions lists the AAP server's sessions (the demo agent without keys
// shows every session to everyone).
func (e *env) sessions(t testing.TB) []aap.SessionInfo {
	t.Helper()
	var out []aap.SessionInfo
	for s, err := range e.AAPClient.Sessions(bridgetest.Context(t)) {
		require.NoError(t, err)
		out = append(out, s)
	}
	return out
}

// onlySession requires the AAP server to have exactly one session and
// returns its id.
func (e *env) onlySession(t testing.TB) string {
	t.Helper()
	ss := e.sessions(t)
	require.Len(t, ss, 1, "the AAP server's sessions")
	return ss[0].SessionID
}

// history is the AAP session's full history.
func (e *env) history(t testing.TB, id string) []aap.Message {
	t.Helper()
	msgs, err := e.AAPClient.History(bridgetest.Context(t), id, aap.HistoryFull)
	require.NoError(t, err)
	return msgs
}

// thread is the stored thread of the open (keyless) bridge.
func (e *env) thread(t testing.TB, id string) *store.Thread {
	t.Helper()
	th, err := e.Store.GetThread(bridgetest.Context(t), "", id)
	require.NoError(t, err)
	return th
}
