package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/demo"
	"github.com/aapagui/aapagui/store"
)

// hugeText is the user message that makes hugeAAP answer with one huge
// message; hugeChunk is the plain ASCII text of each of the message's
// deltas, 64 KiB.
const hugeText = "huge"

var hugeChunk = strings.Repeat("a huge answer ", 64<<10/14+1)[:64<<10]

// hugeAGUI is an AG-UI agent whose every run streams one assistant message
// of mib MiB, in deltas of hugeChunk flushed as they go, until it is all
// sent or the run is cancelled. sent counts the delta bytes written.
type hugeAGUI struct {
	mib  int
	sent *atomic.Int64
}

func (a hugeAGUI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var in struct{ ThreadID, RunID string }
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	fl := w.(http.Flusher)
	fmt.Fprintf(w, "data: {\"type\":\"RUN_STARTED\",\"threadId\":%q,\"runId\":%q}\n\n"+
		"data: {\"type\":\"TEXT_MESSAGE_START\",\"messageId\":\"m\",\"role\":\"assistant\"}\n\n", in.ThreadID, in.RunID)
	fl.Flush()
	frame := []byte(`data: {"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"` + hugeChunk + "\"}\n\n")
	streamChunks(w, r, frame, a.mib, a.sent)
	fmt.Fprintf(w, "data: {\"type\":\"TEXT_MESSAGE_END\",\"messageId\":\"m\"}\n\n"+
		"data: {\"type\":\"RUN_FINISHED\",\"threadId\":%q,\"runId\":%q}\n\n", in.ThreadID, in.RunID)
	fl.Flush()
}

// streamChunks writes frame, which carries hugeChunk, and flushes it until
// mib MiB of chunks were sent, the request's context ends or a write
// fails; sent counts the chunks' bytes.
func streamChunks(w http.ResponseWriter, r *http.Request, frame []byte, mib int, sent *atomic.Int64) {
	fl := w.(http.Flusher)
	for sent.Load() < int64(mib)<<20 && r.Context().Err() == nil {
		if _, err := w.Write(frame); err != nil {
			return
		}
		fl.Flush()
		sent.Add(int64(len(hugeChunk)))
	}
}

// hugeAAP is the demo AAP agent, except that a turn whose body holds the
// user text hugeText streams one text message of mib MiB, in text_delta
// events of hugeChunk, until it is all sent or the turn is cancelled.
// sent counts the delta bytes written.
type hugeAAP struct {
	demo *demo.AAPAgent
	mib  int
	sent *atomic.Int64
}

func (a hugeAAP) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || !strings.HasPrefix(r.URL.Path, "/sessions/") || !strings.HasSuffix(r.URL.Path, "/turns") {
		a.demo.ServeHTTP(w, r)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	if !bytes.Contains(body, []byte(`"`+hugeText+`"`)) {
		r.Body = io.NopCloser(bytes.NewReader(body))
		a.demo.ServeHTTP(w, r)
		return
	}
	start, _ := aap.AppendFrame(nil, &aap.TurnStart{})
	delta, _ := aap.AppendFrame(nil, &aap.TextDelta{Delta: hugeChunk})
	stop, _ := aap.AppendFrame(nil, &aap.TurnStop{StopReason: aap.StopEndTurn})
	w.Header().Set("Content-Type", "text/event-stream")
	_, _ = w.Write(start)
	w.(http.Flusher).Flush()
	streamChunks(w, r, delta, a.mib, a.sent)
	_, _ = w.Write(stop)
	w.(http.Flusher).Flush()
}

// hugeLoad is a measure of what one message of mib MiB, streamed by the
// upstream, costs each bridge's memory: aap2agui in front of an AG-UI
// agent (hugeAGUI) and agui2aap in front of an AAP server (hugeAAP), each
// with one client reading the whole answer.
type hugeLoad struct {
	bin, dir, spec string // the binaries' folder, a scratch folder, the store ("": SQLite in dir)
	mib            int
}

// hugeResult is what one bridge's huge message came to. The memory
// figures are in KiB, as /proc gives them.
type hugeResult struct {
	sent, got int64  // the message's bytes the upstream wrote, the answer's bytes the client read
	ended     string // how the turn ended: its stop reason, or the run's last event and RUN_ERROR code
	before    int    // VmRSS once the bridge was ready, before the message
	peak      int    // VmHWM after the message
	after     int    // VmRSS after the message
	stored    int    // the length of the assistant text the history (aap2agui) or the record (agui2aap) holds; -1: not measured
}

// hugeTarget is the peak growth the issue asks of a 256 MiB message, in MB.
const hugeTarget = 64

// run measures each bridge in turn and prints its figures.
func (l hugeLoad) run(out io.Writer) error {
	for _, b := range []struct {
		name    string
		measure func() (hugeResult, error)
	}{
		{"aap2agui", l.aap2agui},
		{"agui2aap", l.agui2aap},
	} {
		res, err := b.measure()
		if err != nil {
			return fmt.Errorf("%s: %w", b.name, err)
		}
		res.print(out, b.name, l.mib)
	}
	return nil
}

// mb is KiB in MB (10⁶ bytes), the target's unit.
func mb(kib int) float64 { return float64(kib) * 1024 / 1e6 }

func (r hugeResult) print(w io.Writer, name string, mib int) {
	within := "no"
	if growth := mb(r.peak - r.before); growth <= hugeTarget {
		within = "yes"
	}
	fmt.Fprintf(w, "%s, one message of %d MiB from its upstream: upstream sent %.1f MiB, client got %.1f MiB, ended: %s\n",
		name, mib, float64(r.sent)/(1<<20), float64(r.got)/(1<<20), r.ended)
	stored := ""
	if r.stored >= 0 {
		stored = fmt.Sprintf("; the store holds %d bytes (%.1f MiB) of the assistant's text", r.stored, float64(r.stored)/(1<<20))
	}
	fmt.Fprintf(w, "%s: RSS %.1f MB before, peak growth %.1f MB, RSS %.1f MB after%s; within %d MB: %s\n",
		name, mb(r.before), mb(r.peak-r.before), mb(r.after), stored, hugeTarget, within)
}

// serve serves h on a loopback port of its own; stop stops it.
func serve(h http.Handler) (base string, stop func(), err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	hs := &http.Server{Handler: h}
	go func() { _ = hs.Serve(ln) }()
	return "http://" + ln.Addr().String(), func() { _ = hs.Close() }, nil
}

// aap2agui runs one turn of aap2agui whose agent answers with the huge
// message, and reads what its history stored of it.
func (l hugeLoad) aap2agui() (hugeResult, error) {
	res := hugeResult{stored: -1}
	sent := &atomic.Int64{}
	agent, closeAgent, err := serve(hugeAGUI{mib: l.mib, sent: sent})
	if err != nil {
		return res, err
	}
	defer closeAgent()
	cfg := filepath.Join(l.dir, "agent.json")
	if err := os.WriteFile(cfg, []byte(`{"name":"demo","capabilities":{"history":{"compacted":{},"full":{}},"stream":{"delta":{},"message":{},"none":{}},"application":{"tools":{}}}}`), 0o600); err != nil {
		return res, err
	}
	p, err := start(filepath.Join(l.bin, "aap2agui"), l.storeFor("aap2agui"), "--upstream", agent, "--agent-config", cfg)
	if err != nil {
		return res, err
	}
	defer p.stop()
	resp, err := postJSON(p.base+"/sessions", map[string]any{"agent": map[string]any{"name": "demo"}})
	if err != nil {
		return res, err
	}
	if resp.StatusCode != http.StatusCreated {
		return res, errors.New("create: " + failure(resp))
	}
	var created struct{ SessionID string }
	if err := decodeJSON(resp, &created); err != nil {
		return res, err
	}
	res.before = p.rss()
	resp, err = postJSON(p.base+"/sessions/"+created.SessionID+"/turns", map[string]any{
		"stream": "delta", "messages": []any{map[string]any{"role": "user", "content": hugeText}},
	})
	if err != nil {
		return res, err
	}
	if resp.StatusCode != http.StatusOK {
		return res, errors.New("turn: " + failure(resp))
	}
	res.got, res.ended, err = readAAPStop(resp.Body)
	resp.Body.Close()
	if err != nil {
		return res, err
	}
	res.peak, res.after, res.sent = p.peakRSS(), p.rss(), sent.Load()
	res.stored, err = storedText(p.base, created.SessionID)
	return res, err
}

// agui2aap runs one run of agui2aap whose AAP server answers with the huge
// message.
func (l hugeLoad) agui2aap() (hugeResult, error) {
	res := hugeResult{stored: -1}
	sent := &atomic.Int64{}
	upstream, closeUpstream, err := serve(hugeAAP{demo: demo.NewAAPAgent(demo.AAPAgentOptions{}), mib: l.mib, sent: sent})
	if err != nil {
		return res, err
	}
	defer closeUpstream()
	p, err := start(filepath.Join(l.bin, "agui2aap"), l.storeFor("agui2aap"), "--upstream", upstream)
	if err != nil {
		return res, err
	}
	defer p.stop()
	res.before = p.rss()
	resp, err := postJSON(p.base+"/agents/demo", map[string]any{
		"threadId": hugeText, "runId": "r1", "messages": []aguiMsg{{ID: "u1", Role: "user", Content: hugeText}},
		"tools": []any{}, "context": []any{}, "state": map[string]any{}, "forwardedProps": map[string]any{},
	})
	if err != nil {
		return res, err
	}
	if resp.StatusCode != http.StatusOK {
		return res, errors.New("run: " + failure(resp))
	}
	res.got, res.ended, err = readAGUIEnd(resp.Body)
	resp.Body.Close()
	if err != nil {
		return res, err
	}
	res.peak, res.after, res.sent = p.peakRSS(), p.rss(), sent.Load()
	res.stored, err = recordedText(l.storeFor("agui2aap"), hugeText)
	return res, err
}

// recordedText is the length of the text of the last assistant message in
// the record of thread id (of the owner without a key), read from the
// store at spec.
func recordedText(spec, id string) (int, error) {
	st, err := store.Open(spec)
	if err != nil {
		return 0, err
	}
	defer st.Close()
	rec, err := st.ThreadRecord(context.Background(), "", id)
	if err != nil {
		return 0, fmt.Errorf("the thread's record: %w", err)
	}
	n := 0
	for _, raw := range rec {
		var m struct{ Role, Content string }
		if json.Unmarshal(raw, &m) == nil && m.Role == "assistant" {
			n = len(m.Content)
		}
	}
	return n, nil
}

// storeFor is the store of the named program: -store, else a SQLite file
// of its own in the scratch folder.
func (l hugeLoad) storeFor(name string) string {
	if l.spec != "" {
		return l.spec
	}
	return "sqlite:" + filepath.Join(l.dir, name+"-huge.db")
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// readAAPStop reads an AAP turn's stream to its end: the bytes read and
// "turn_stop <reason>" (with the code, should the turn_stop carry one).
func readAAPStop(body io.Reader) (int64, string, error) {
	cr := &countingReader{r: body}
	ended := "no turn_stop"
	err := frames(cr, func(name, data string) {
		if name != string(aap.EventTurnStop) {
			return
		}
		var ts struct{ StopReason, Code string }
		_ = json.Unmarshal([]byte(data), &ts)
		ended = "turn_stop " + ts.StopReason
		if ts.Code != "" {
			ended += " (" + ts.Code + ")"
		}
	})
	return cr.n, ended, err
}

// readAGUIEnd reads an AG-UI run's stream to its end: the bytes read and
// the last event's type (with its code, for a RUN_ERROR).
func readAGUIEnd(body io.Reader) (int64, string, error) {
	cr := &countingReader{r: body}
	ended := "no event"
	err := frames(cr, func(_, data string) {
		var ev struct{ Type, Code string }
		if json.Unmarshal([]byte(data), &ev) != nil {
			return
		}
		ended = ev.Type
		if ev.Code != "" {
			ended += " " + ev.Code
		}
	})
	return cr.n, ended, err
}

// storedText is the length of the text of the last assistant message in
// the session's full history.
func storedText(base, session string) (int, error) {
	resp, err := client.Get(base + "/sessions/" + session + "/history?type=full")
	if err != nil {
		return 0, err
	}
	if resp.StatusCode != http.StatusOK {
		return 0, errors.New("history: " + failure(resp))
	}
	var h aap.GetSessionHistoryResponse
	if err := decodeJSON(resp, &h); err != nil {
		return 0, err
	}
	n := 0
	for _, m := range h.History.Full {
		if a, ok := m.(*aap.AssistantMessage); ok {
			n = len(a.Content.Text)
			for _, b := range a.Content.Blocks {
				if t, ok := b.(*aap.TextBlock); ok {
					n += len(t.Text)
				}
			}
		}
	}
	return n, nil
}
