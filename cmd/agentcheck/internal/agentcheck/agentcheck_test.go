package agentcheck_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/aap2agui"
	"github.com/aapagui/aapagui/bridge/agui2aap"
	"github.com/aapagui/aapagui/cmd/agentcheck/internal/agentcheck"
	"github.com/aapagui/aapagui/demo"
	"github.com/aapagui/aapagui/store"
)

func serve(t *testing.T, h http.Handler) string {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

func runAAP(t *testing.T, h http.Handler, opts agentcheck.AAPOptions) *agentcheck.Report {
	t.Helper()
	opts.Prompts = agentcheck.DefaultPrompts()
	return agentcheck.RunAAP(context.Background(), serve(t, h), opts)
}

func runAGUI(t *testing.T, h http.Handler) *agentcheck.Report {
	t.Helper()
	return agentcheck.RunAGUI(context.Background(), serve(t, h), agentcheck.AGUIOptions{Prompts: agentcheck.DefaultPrompts()})
}

// requireClean fails with the report when a check failed.
func requireClean(t *testing.T, r *agentcheck.Report) {
	t.Helper()
	if !r.OK() {
		var b strings.Builder
		require.NoError(t, r.WriteText(&b))
		t.Fatalf("checks failed:\n%s", b.String())
	}
}

// skipped lists the checks that were skipped.
func skipped(r *agentcheck.Report) []string {
	var out []string
	for _, res := range r.Results {
		if res.Status == agentcheck.Skip {
			out = append(out, res.ID)
		}
	}
	return out
}

// aap2aguiServer is aap2agui in front of the AG-UI demo agent, described
// as the program's built-in demo agent is, with two API keys.
func aap2aguiServer(t *testing.T, versions ...aap2agui.Mount) http.Handler {
	t.Helper()
	a := aap2agui.DefaultAgent()
	a.Name = "demo"
	a.Tools = []aap.ToolSpec{demo.SearchToolSpec}
	a.Options = []aap.AgentOption{{Type: aap.OptionSecret, Name: "api_key", Title: "Search API key"}}
	srv, err := aap2agui.New(aap2agui.Config{Upstream: serve(t, demo.AGUIAgent{}), Store: store.NewMemory(), Agent: a, Serving: aap2agui.Serving{APIKeys: []string{"key-one", "key-two"}},
		Versions: versions})
	require.NoError(t, err)
	return srv
}

// Against the project's own AAP servers every check passes: the AAP demo
// agent in each protocol version, and aap2agui (which adds API keys and a
// secret option, so that no check is skipped).
func TestAAPPassesAgainstTheDemoAgents(t *testing.T) {
	t.Run("aap2agui", func(t *testing.T) {
		r := runAAP(t, aap2aguiServer(t), agentcheck.AAPOptions{Key: "key-one", Key2: "key-two"})
		requireClean(t, r)
		assert.Empty(t, skipped(r), "nothing skipped")
		assert.Equal(t, 22, r.Passed)
	})
	t.Run("demo AAP agent v3", func(t *testing.T) {
		r := runAAP(t, demo.NewAAPAgent(demo.AAPAgentOptions{}), agentcheck.AAPOptions{})
		requireClean(t, r)
		// The demo agent takes no keys.
		assert.ElementsMatch(t, []string{"keys.isolation"}, skipped(r))
	})
	// Versions 1 and 2 get every check of version 3 through their own
	// routes, and one of their own (legacy.conversation).
	for _, v := range []int{1, 2} {
		t.Run("demo AAP agent v"+string(rune('0'+v)), func(t *testing.T) {
			r := runAAP(t, demo.NewAAPAgent(demo.AAPAgentOptions{Version: v}), agentcheck.AAPOptions{})
			requireClean(t, r)
			assert.ElementsMatch(t, []string{"keys.isolation"}, skipped(r))
			assert.Equal(t, 22, r.Passed)
			res, ok := r.Find("session.create")
			require.True(t, ok)
			assert.Contains(t, res.Title, "PUT /session")
			assert.Contains(t, res.Section, fmt.Sprintf("aap-v%d/endpoints.md", v))
		})
		t.Run("aap2agui v"+string(rune('0'+v)), func(t *testing.T) {
			r := runAAP(t, aap2aguiServer(t, aap2agui.Mount{Version: v}), agentcheck.AAPOptions{Key: "key-one", Key2: "key-two"})
			requireClean(t, r)
			assert.Empty(t, skipped(r), "nothing skipped")
			assert.Equal(t, 23, r.Passed)
		})
	}
}

func TestAGUIPassesAgainstTheDemoAgents(t *testing.T) {
	t.Run("AG-UI demo agent", func(t *testing.T) {
		r := runAGUI(t, demo.AGUIAgent{})
		requireClean(t, r)
		assert.Empty(t, skipped(r))
	})
	t.Run("agui2aap", func(t *testing.T) {
		srv, err := agui2aap.New(agui2aap.Config{Upstream: serve(t, demo.NewAAPAgent(demo.AAPAgentOptions{})), Store: store.NewMemory()})
		require.NoError(t, err)
		base := serve(t, srv)
		r := agentcheck.RunAGUI(context.Background(), base+"/agents/demo", agentcheck.AGUIOptions{Prompts: agentcheck.DefaultPrompts()})
		requireClean(t, r)
		assert.Empty(t, skipped(r))
	})
}

// rewrite serves h, and passes each response whose request matches to fix
// before it is sent (the whole body at once: these fakes need no
// streaming).
func rewrite(h http.Handler, match func(*http.Request, []byte) bool, fix func([]byte) []byte) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		out := rec.Body.Bytes()
		if match(r, body) {
			out = fix(out)
		}
		for k, vs := range rec.Header() {
			w.Header()[k] = vs
		}
		w.Header().Del("Content-Length")
		w.WriteHeader(rec.Code)
		_, _ = w.Write(out)
	})
}

func every(*http.Request, []byte) bool { return true }

func history(r *http.Request, _ []byte) bool { return strings.HasSuffix(r.URL.Path, "/history") }

// editHistory decodes a history response, lets edit change its messages
// (as JSON objects) and encodes it again.
func editHistory(edit func([]map[string]any) []map[string]any) func([]byte) []byte {
	return func(b []byte) []byte {
		var h struct {
			History map[string][]map[string]any `json:"history"`
		}
		if json.Unmarshal(b, &h) != nil {
			return b
		}
		for typ, msgs := range h.History {
			h.History[typ] = edit(msgs)
		}
		out, _ := json.Marshal(h)
		return out
	}
}

// Each fake breaks one rule, the way a real server was seen to; exactly the
// checks that rest on that rule fail.
func TestAAPCatchesEachDeviation(t *testing.T) {
	demoAgent := func() http.Handler { return demo.NewAAPAgent(demo.AAPAgentOptions{}) }
	cases := []struct {
		name string
		h    http.Handler
		want []string
	}{{
		// The AAP reference TypeScript server (0.8) stores a granted call's
		// result in history but streams no tool_result; the demo agent's
		// QuietPermissionResults does the same.
		name: "no tool_result after a granted permission",
		h:    demo.NewAAPAgent(demo.AAPAgentOptions{QuietPermissionResults: true}),
		want: []string{"permission.grant"},
	}, {
		// The reference server words a denial "Tool use denied".
		name: "Tool use denied",
		h: rewrite(demoAgent(), every, func(b []byte) []byte {
			return bytes.ReplaceAll(b, []byte("Tool call denied"), []byte("Tool use denied"))
		}),
		want: []string{"permission.deny"},
	}, {
		// The reference server ends a message-mode stream on a model
		// error without turn_stop.
		name: "message-mode error without turn_stop",
		h: rewrite(demoAgent(), func(_ *http.Request, body []byte) bool { return bytes.Contains(body, []byte(`"stream":"message"`)) },
			func(b []byte) []byte {
				return regexp.MustCompile(`event: turn_stop\ndata: \{"stopReason":"error"\}\n\n`).ReplaceAll(b, nil)
			}),
		want: []string{"error.message-mode"},
	}, {
		// The reference server answers malformed JSON with 500.
		name: "500 for malformed JSON",
		h: func() http.Handler {
			inner := demoAgent()
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				if len(body) > 0 && !json.Valid(body) {
					http.Error(w, `{"error":"Unexpected end of JSON input"}`, http.StatusInternalServerError)
					return
				}
				r.Body = io.NopCloser(bytes.NewReader(body))
				inner.ServeHTTP(w, r)
			})
		}(),
		want: []string{"errors.malformed-create", "errors.malformed-turn"},
	}, {
		// The reference server's history repeats a tool result.
		name: "duplicated tool results in history",
		h: rewrite(demoAgent(), history, editHistory(func(h []map[string]any) []map[string]any {
			var out []map[string]any
			for _, m := range h {
				out = append(out, m)
				if m["role"] == "tool" {
					out = append(out, m)
				}
			}
			return out
		})),
		want: []string{"history.tool-results"},
	}, {
		// The reference server's delta-mode history puts thinking after
		// the text it preceded.
		name: "thinking after text in delta-mode history",
		h: rewrite(demoAgent(), history, editHistory(func(h []map[string]any) []map[string]any {
			for _, m := range h {
				blocks, ok := m["content"].([]any)
				if !ok || m["role"] != "assistant" {
					continue
				}
				var thinking, rest []any
				for _, b := range blocks {
					if b.(map[string]any)["type"] == "thinking" {
						thinking = append(thinking, b)
					} else {
						rest = append(rest, b)
					}
				}
				m["content"] = append(rest, thinking...)
			}
			return h
		})),
		want: []string{"thinking.order"},
	}, {
		// A server that declares compacted history and does not serve it.
		name: "a declared history type not served",
		h: func() http.Handler {
			inner := demoAgent()
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Query().Get("type") == "compacted" {
					http.Error(w, `{"error":{"code":"invalid_request","message":"unsupported history type"}}`, http.StatusBadRequest)
					return
				}
				inner.ServeHTTP(w, r)
			})
		}(),
		want: []string{"history.types"},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := runAAP(t, c.h, agentcheck.AAPOptions{})
			assert.ElementsMatch(t, c.want, r.Failures())
			for _, id := range c.want {
				res, _ := r.Find(id)
				assert.NotEmpty(t, res.Section, "%s names its section", id)
				assert.NotEmpty(t, res.Sent+res.Detail, "%s says what was sent", id)
			}
		})
	}
}

// sseRewrite rewrites each SSE event ("data: …\n\n") of the AG-UI demo
// agent's answers; an event fix returns "" is dropped.
func sseRewrite(fix func(event string) string) http.Handler {
	return rewrite(demo.AGUIAgent{}, every, func(b []byte) []byte {
		var out strings.Builder
		for _, ev := range strings.SplitAfter(string(b), "\n\n") {
			out.WriteString(fix(ev))
		}
		return []byte(out.String())
	})
}

func TestAGUICatchesEachDeviation(t *testing.T) {
	cases := []struct {
		name string
		h    http.Handler
		want []string
	}{{
		name: "TEXT_MESSAGE_CONTENT without TEXT_MESSAGE_START",
		h: sseRewrite(func(ev string) string {
			if strings.Contains(ev, `"type":"TEXT_MESSAGE_START"`) {
				return ""
			}
			return ev
		}),
		want: []string{"agui.order", "agui.client-tool", "agui.interrupt-resume", "agui.long-history"},
	}, {
		// An agent whose server dies mid-run, or a framework that forgets
		// the terminal event.
		name: "no RUN_FINISHED",
		h: sseRewrite(func(ev string) string {
			if strings.Contains(ev, `"type":"RUN_FINISHED"`) {
				return ""
			}
			return ev
		}),
		want: []string{"agui.order", "agui.bridge", "agui.client-tool", "agui.interrupt-resume", "agui.long-history"},
	}, {
		name: "tool arguments that are not JSON",
		h: sseRewrite(func(ev string) string {
			if strings.Contains(ev, `"type":"TOOL_CALL_ARGS"`) {
				return regexp.MustCompile(`"delta":"(?:[^"\\]|\\.)*"`).ReplaceAllString(ev, `"delta":"{location: Paris"`)
			}
			return ev
		}),
		want: []string{"agui.client-tool"},
	}, {
		// SSE with an event: field per type, as some servers write.
		name: "named SSE events",
		h: sseRewrite(func(ev string) string {
			if m := regexp.MustCompile(`"type":"([A-Z_]+)"`).FindStringSubmatch(ev); m != nil {
				return "event: " + m[1] + "\n" + ev
			}
			return ev
		}),
		want: []string{"agui.framing", "agui.client-tool", "agui.interrupt-resume", "agui.long-history"},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := runAGUI(t, c.h)
			assert.ElementsMatch(t, c.want, r.Failures())
		})
	}
}

// The report's text and JSON forms carry every check and the failures'
// details.
func TestReportForms(t *testing.T) {
	r := runAAP(t, demo.NewAAPAgent(demo.AAPAgentOptions{QuietPermissionResults: true}), agentcheck.AAPOptions{})
	var text bytes.Buffer
	require.NoError(t, r.WriteText(&text))
	assert.Contains(t, text.String(), "FAIL  permission.grant")
	assert.Contains(t, text.String(), "want: tool_result (toolCallId")
	assert.Regexp(t, `\n\d+ passed, 1 failed, 1 skipped\n$`, text.String())

	var js bytes.Buffer
	require.NoError(t, r.WriteJSON(&js))
	var back agentcheck.Report
	require.NoError(t, json.Unmarshal(js.Bytes(), &back))
	assert.Equal(t, r.Results, back.Results)
	assert.Equal(t, 1, back.Failed)
}

// A version 1 server is checked through its own routes: one whose PUT
// /session stream does not open with session_start fails exactly the
// checks that start a session with a streamed PUT, and one that answers
// an unknown session with 200 fails the unknown-session checks.
func TestAAPCatchesLegacyDeviations(t *testing.T) {
	v1 := func() http.Handler { return demo.NewAAPAgent(demo.AAPAgentOptions{Version: 1}) }
	t.Run("no session_start", func(t *testing.T) {
		h := rewrite(v1(), func(r *http.Request, _ []byte) bool { return r.Method == http.MethodPut },
			func(b []byte) []byte {
				return regexp.MustCompile(`event: session_start\ndata: [^\n]*\n\n`).ReplaceAll(b, nil)
			})
		r := runAAP(t, h, agentcheck.AAPOptions{})
		assert.ElementsMatch(t, []string{
			"legacy.conversation", "thinking.order", "error.message-mode", "error.delta-mode",
			"tools.client", "permission.grant", "permission.deny",
		}, r.Failures())
		res, _ := r.Find("tools.client")
		assert.Contains(t, res.Sent, "PUT /session")
	})
	t.Run("200 for an unknown session", func(t *testing.T) {
		inner := v1()
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodGet && strings.Contains(r.URL.Path, "agentcheck-no-such-session") {
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte(`{"sessionId":"agentcheck-no-such-session"}`))
				return
			}
			inner.ServeHTTP(w, r)
		})
		r := runAAP(t, h, agentcheck.AAPOptions{})
		assert.ElementsMatch(t, []string{"errors.unknown-session", "errors.unknown-history"}, r.Failures())
		res, _ := r.Find("errors.unknown-history")
		assert.Contains(t, res.Title, "GET /session/:id?history=")
	})
}
