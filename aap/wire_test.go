package aap_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/tools/txtar"

	"github.com/aapagui/aapagui/aap"
)

// The wire transcripts in testdata/wire, one per protocol version, hold
// the request and response bodies of the version's documentation examples
// (see the comment at the top of each file).

// wireSection is one section of a transcript.
type wireSection struct {
	Name        string
	Method      string
	URI         string // path and query
	Label       string // the part in parentheses, if any
	Response    bool
	Status      int
	ContentType string
	Body        []byte // without the final newline
}

var sectionName = regexp.MustCompile(`^(GET|PUT|POST|DELETE) (\S+)(?: \(([^)]*)\))?(?: -> (\d{3})(?: (\S+))?)?$`)

// readTranscript reads testdata/wire/v<version>.txtar.
func readTranscript(t *testing.T, version int) []wireSection {
	t.Helper()
	arc, err := txtar.ParseFile(fmt.Sprintf("../testdata/wire/v%d.txtar", version))
	require.NoError(t, err)
	require.NotEmpty(t, arc.Files)
	var out []wireSection
	for _, f := range arc.Files {
		m := sectionName.FindStringSubmatch(f.Name)
		require.NotNil(t, m, "section name %q", f.Name)
		s := wireSection{Name: f.Name, Method: m[1], URI: m[2], Label: m[3], ContentType: m[5], Body: bytes.TrimSuffix(f.Data, []byte("\n"))}
		if m[4] != "" {
			s.Response = true
			s.Status, _ = strconv.Atoi(m[4])
		}
		out = append(out, s)
	}
	return out
}

// route is the section's path pattern: the session id replaced by {id},
// the query left out.
func (s wireSection) route() string {
	path, _, _ := strings.Cut(s.URI, "?")
	parts := strings.Split(path, "/")
	if len(parts) > 2 && (parts[1] == "session" || parts[1] == "sessions") {
		parts[2] = "{id}"
	}
	return strings.Join(parts, "/")
}

// wireType returns a new value of the type a section decodes into in the
// given protocol version, or nil for a section with a stream or no body.
func wireType(t *testing.T, version int, s wireSection) any {
	t.Helper()
	if s.Response && s.Status >= 400 {
		return new(aap.ErrorResponse)
	}
	key := s.Method + " " + s.route()
	if s.Response {
		key += " ->"
	}
	legacy := map[string]any{
		"GET /meta ->":            new(aap.MetaResponseV1),
		"GET /session/{id} ->":    new(aap.SessionResponseV1),
		"PUT /session":            new(aap.PutSessionRequest),
		"PUT /session ->":         new(aap.PutSessionResponse),
		"POST /session/{id}":      new(aap.SessionTurnRequestV1),
		"POST /session/{id} ->":   new(aap.PostSessionTurnResponse),
		"DELETE /session/{id} ->": nil,
		"GET /sessions ->":        new(aap.SessionListResponseV1),
	}
	if version == aap.Version2 {
		legacy["GET /sessions ->"] = new(aap.SessionListResponseV2)
		legacy["GET /session/{id}/history ->"] = new(aap.GetSessionHistoryResponse)
	}
	current := map[string]any{
		"GET /meta ->":                  new(aap.GetMetaResponse),
		"GET /sessions ->":              new(aap.GetSessionsResponse),
		"POST /sessions":                new(aap.PostSessionsRequest),
		"POST /sessions ->":             new(aap.PostSessionsResponse),
		"GET /sessions/{id} ->":         new(aap.SessionInfo),
		"GET /sessions/{id}/history ->": new(aap.GetSessionHistoryResponse),
		"POST /sessions/{id}/turns":     new(aap.PostSessionTurnRequest),
		"POST /sessions/{id}/turns ->":  new(aap.PostSessionTurnResponse),
		"DELETE /sessions/{id} ->":      nil,
	}
	types := legacy
	if version == aap.Version3 {
		types = current
	}
	v, ok := types[key]
	require.True(t, ok, "%s: no such endpoint in version %d", s.Name, version)
	if s.ContentType == "text/event-stream" {
		return nil
	}
	return v
}

// TestWireTranscripts decodes every body of every version's transcript
// with that version's type and encodes it again: the bytes must be the
// same. Event streams are read event by event and written again.
func TestWireTranscripts(t *testing.T) {
	for _, version := range []int{aap.Version1, aap.Version2, aap.Version3} {
		t.Run(fmt.Sprintf("v%d", version), func(t *testing.T) {
			sections := readTranscript(t, version)
			var meta aap.GetMetaResponse
			for _, s := range sections {
				t.Run(s.Name, func(t *testing.T) {
					v := wireType(t, version, s)
					switch {
					case s.ContentType == "text/event-stream":
						evs := readStream(t, s.Body)
						var out []byte
						for _, ev := range evs {
							var err error
							out, err = aap.AppendFrame(out, ev)
							require.NoError(t, err)
						}
						assert.Equal(t, string(s.Body)+"\n", string(out))
						checkStreamShape(t, version, s, evs)
					case v == nil:
						assert.Empty(t, s.Body, "a response without a body")
					default:
						require.NoError(t, json.Unmarshal(s.Body, v))
						assert.Equal(t, string(s.Body), encodeNoHTML(t, v))
						if s.route() == "/meta" {
							got, err := aap.DecodeMeta(s.Body)
							require.NoError(t, err)
							meta = *got
						}
					}
				})
			}
			assert.Equal(t, version, meta.Version, "the transcript's GET /meta names its version")
		})
	}
}

// readStream reads the events of a stream section, failing on any error
// or unknown event.
func readStream(t *testing.T, body []byte) []aap.Event {
	t.Helper()
	var evs []aap.Event
	for ev, err := range aap.ReadEvents(bytes.NewReader(append(bytes.Clone(body), '\n')), 0) {
		require.NoError(t, err)
		_, unknown := ev.(*aap.UnknownEvent)
		require.False(t, unknown, "unknown event %q", ev.EventName())
		evs = append(evs, ev)
	}
	require.NotEmpty(t, evs)
	// A bridge pulls them with an EventReader, decoding all but the
	// deltas itself (NextRaw): the same events.
	er := aap.NewEventReader(bytes.NewReader(append(bytes.Clone(body), '\n')), 0)
	var pulled []aap.Event
	for {
		ev, name, data, err := er.NextRaw()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		if ev == nil {
			ev, err = aap.DecodeEvent(name, data)
			require.NoError(t, err)
		}
		pulled = append(pulled, ev)
	}
	require.Equal(t, evs, pulled, "EventReader.NextRaw")
	return evs
}

// checkStreamShape checks the order the docs give: session_start first in
// a PUT /session stream and nowhere else, then turn_start, turn_stop last.
func checkStreamShape(t *testing.T, version int, s wireSection, evs []aap.Event) {
	t.Helper()
	if s.Method == http.MethodPut {
		require.IsType(t, &aap.SessionStart{}, evs[0])
		evs = evs[1:]
	}
	require.IsType(t, &aap.TurnStart{}, evs[0])
	require.IsType(t, &aap.TurnStop{}, evs[len(evs)-1])
	for _, ev := range evs {
		assert.NotEqual(t, aap.EventSessionStart, ev.EventName(), "session_start only opens PUT /session (version %d)", version)
	}
}

// transcriptServer answers requests from a transcript: a request with a
// body is matched with the request section of the same method, path and
// bytes, and answered with the response section of the same label; a
// request without a body with the response section of its method and URI.
// Anything else is a 599 naming what was not found.
type transcriptServer struct {
	sections []wireSection
	mu       sync.Mutex
	seen     []string // "METHOD URI" of each request
}

func (ts *transcriptServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	ts.mu.Lock()
	ts.seen = append(ts.seen, r.Method+" "+r.URL.RequestURI())
	ts.mu.Unlock()
	label, matched := "", len(body) == 0
	for _, s := range ts.sections {
		if !s.Response && s.Method == r.Method && s.URI == r.URL.RequestURI() && bytes.Equal(s.Body, body) {
			label, matched = s.Label, true
			break
		}
	}
	if matched {
		for _, s := range ts.sections {
			if s.Response && s.Method == r.Method && s.URI == r.URL.RequestURI() && s.Label == label {
				if s.ContentType != "" {
					w.Header().Set("Content-Type", s.ContentType)
				}
				w.WriteHeader(s.Status)
				if len(s.Body) > 0 {
					_, _ = w.Write(append(bytes.Clone(s.Body), '\n'))
				}
				return
			}
		}
	}
	w.WriteHeader(599)
	_, _ = fmt.Fprintf(w, "not in the transcript: %s %s %s", r.Method, r.URL.RequestURI(), body)
}

// TestClientSpeaksTranscripts sends every request of each version's
// transcript with a client that reads the version from GET /meta: the
// server (which answers from the transcript) must receive the section's
// bytes, and the client must read every response.
func TestClientSpeaksTranscripts(t *testing.T) {
	ctx := context.Background()
	for _, version := range []int{aap.Version1, aap.Version2, aap.Version3} {
		t.Run(fmt.Sprintf("v%d", version), func(t *testing.T) {
			sections := readTranscript(t, version)
			ts := &transcriptServer{sections: sections}
			srv := httptest.NewServer(ts)
			defer srv.Close()
			c := aap.NewClient(srv.URL, aap.ClientOptions{})
			got, err := c.Version(ctx)
			require.NoError(t, err)
			require.Equal(t, version, got)

			for _, s := range sections {
				if s.Response && (s.Method != http.MethodGet && s.Method != http.MethodDelete) {
					continue // answers to the requests below
				}
				if s.Response && s.Status >= 400 {
					continue
				}
				t.Run(s.Name, func(t *testing.T) { sendSection(t, c, version, sections, s) })
			}
			assert.Equal(t, "GET /meta", ts.seen[0], "the version is read first")
			metas := 0
			for _, r := range ts.seen {
				if r == "GET /meta" {
					metas++
				}
			}
			assert.Equal(t, 2, metas, "GET /meta is read once for the version, and once by Meta")
		})
	}
}

// sendSection makes the client call that sends the section's request
// (or, for a GET or DELETE response section, the request it answers).
func sendSection(t *testing.T, c *aap.Client, version int, sections []wireSection, s wireSection) {
	t.Helper()
	ctx := context.Background()
	path, query, _ := strings.Cut(s.URI, "?")
	id := "sess_abc123"
	switch route := s.Method + " " + s.route(); {
	case route == "GET /meta":
		m, err := c.Meta(ctx)
		require.NoError(t, err)
		require.Len(t, m.Agents, 1)
		require.Len(t, m.Agents[0].Tools, 1)
		assert.JSONEq(t, `{"type":"object","properties":{"query":{"type":"string","description":"Search query"}},"required":["query"]}`, string(m.Agents[0].Tools[0].Parameters))
	case route == "GET /sessions":
		after := strings.TrimPrefix(query, "after=")
		page, err := c.ListSessions(ctx, after)
		require.NoError(t, err)
		if version == aap.Version1 {
			var want aap.SessionListResponseV1
			require.NoError(t, json.Unmarshal(s.Body, &want))
			require.Len(t, page.Sessions, len(want.Sessions))
			for i, id := range want.Sessions {
				assert.Equal(t, aap.SessionInfo{SessionID: id}, page.Sessions[i])
			}
			assert.Equal(t, want.Next, page.Next)
			return
		}
		for _, si := range page.Sessions {
			assert.Equal(t, "get_weather", si.Tools[0].Name)
			assert.NotEmpty(t, si.Tools[0].Parameters)
		}
	case strings.HasPrefix(query, "history=") || strings.HasSuffix(path, "/history"):
		ht := aap.HistoryType(query[strings.Index(query, "=")+1:])
		msgs, err := c.History(ctx, id, ht)
		require.NoError(t, err)
		assert.Len(t, msgs, 6)
	case route == "GET /session/{id}" || route == "GET /sessions/{id}":
		si, err := c.GetSession(ctx, id)
		require.NoError(t, err)
		if version != aap.Version3 {
			v1 := si.V1()
			assert.Equal(t, string(s.Body), encodeNoHTML(t, &v1))
		} else {
			assert.Equal(t, string(s.Body), encodeNoHTML(t, si))
		}
	case s.Method == http.MethodDelete:
		require.NoError(t, c.DeleteSession(ctx, id))
	case route == "POST /sessions":
		var req aap.PostSessionsRequest
		require.NoError(t, json.Unmarshal(s.Body, &req))
		resp, err := c.CreateSession(ctx, &req)
		require.NoError(t, err)
		assert.Equal(t, id, resp.SessionID)
	case route == "PUT /session":
		var req aap.PutSessionRequest
		require.NoError(t, json.Unmarshal(s.Body, &req))
		if req.Mode() == aap.StreamNone {
			resp, err := c.PutSession(ctx, &req)
			require.NoError(t, err)
			assert.Equal(t, string(responseOf(t, sections, s)), encodeNoHTML(t, resp))
			return
		}
		assertStream(t, responseOf(t, sections, s), c.StreamPutSession(ctx, &req))
	default: // a turn
		var req aap.PostSessionTurnRequest
		if version == aap.Version3 {
			require.NoError(t, json.Unmarshal(s.Body, &req))
		} else {
			var old aap.SessionTurnRequestV1
			require.NoError(t, json.Unmarshal(s.Body, &old))
			req = *old.V3()
		}
		if req.Mode() == aap.StreamNone {
			resp, err := c.Turn(ctx, id, &req)
			require.NoError(t, err)
			assert.Equal(t, string(responseOf(t, sections, s)), encodeNoHTML(t, resp))
			return
		}
		assertStream(t, responseOf(t, sections, s), c.StreamTurn(ctx, id, &req))
	}
}

// responseOf returns the body of the response section that answers the
// request section s.
func responseOf(t *testing.T, sections []wireSection, s wireSection) []byte {
	t.Helper()
	for _, r := range sections {
		if r.Response && r.Method == s.Method && r.URI == s.URI && r.Label == s.Label {
			return r.Body
		}
	}
	t.Fatalf("no response to %s", s.Name)
	return nil
}

// assertStream checks that a stream's events encode to the section's
// bytes.
func assertStream(t *testing.T, want []byte, seq func(func(aap.Event, error) bool)) {
	t.Helper()
	var out []byte
	for ev, err := range seq {
		require.NoError(t, err)
		out, err = aap.AppendFrame(out, ev)
		require.NoError(t, err)
	}
	assert.Equal(t, string(want)+"\n", string(out))
}
