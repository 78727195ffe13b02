package bench

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"

	"github.com/aapagui/aapagui/demo"
	_ "github.com/aapagui/aapagui/store/sqlite" // the bridges' stores, and the floor's database/sql driver
)

// A long conversation: what one turn costs each bridge when the session
// or thread already holds N messages, against the floor of moving that
// conversation once. Each bridge runs in a process of its own with a
// SQLite store, and its CPU is read from /proc; the agents and the client
// run here.

// HistoryOptions configures History. Zero fields take the defaults in
// brackets.
type HistoryOptions struct {
	Command  []string  // the command of this build's bridge processes (required)
	Messages int       // messages of conversation before each turn (required)
	Bytes    int       // bytes of text in each message [2000]
	Reps     int       // turns measured per row [7]
	Out      io.Writer // [os.Stdout]
	// CopilotKit is the command of the CopilotKit runtime relaying to an
	// AG-UI agent (node interop/copilotkit-agent/relay.mjs): the peer a
	// user would put in front of the agent instead, measured on the same
	// RunAgentInput as the relay floor. Nil leaves that row out.
	CopilotKit []string
}

// historyRun is the processes and agents of one History run.
type historyRun struct {
	o        HistoryOptions
	e        *env
	a2g, g2a *bridgeProcess
	relay    *bridgeProcess
	ck       *bridgeProcess // the CopilotKit runtime, when measured
	a2gStore string
	hc       *http.Client
	text     string
	runs     int // a counter for unique run ids
}

// cost is one measured request: the bridge process's CPU and the wall
// time.
type cost struct{ cpu, wall time.Duration }

// History prints, for a conversation of o.Messages messages, the CPU and
// wall time of an aap2agui turn and of GET /sessions/:id/history, of an
// agui2aap run and of its hydration, and of the floor: the stored rows
// read and laid out as a RunAgentInput (aap2agui's), and the RunAgentInput
// relayed through a net/http hop that only reads and sends it on.
func History(ctx context.Context, o HistoryOptions) error {
	if len(o.Command) == 0 || o.Messages < 2 {
		return errors.New("history: a command and at least 2 messages are required")
	}
	if o.Bytes <= 0 {
		o.Bytes = 2000
	}
	if o.Reps <= 0 {
		o.Reps = 7
	}
	if o.Out == nil {
		o.Out = os.Stdout
	}
	h, cleanup, err := startHistory(o)
	defer cleanup()
	if err != nil {
		return err
	}
	fmt.Fprintf(o.Out, "aapbench history: %d messages of %d bytes (%.1f MB), %d turns a row, load average %s\n",
		o.Messages, o.Bytes, float64(o.Messages*o.Bytes)/1e6, o.Reps, loadavg())
	rows, err := h.measure(ctx)
	if err != nil {
		return err
	}
	w := tabwriter.NewWriter(o.Out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(w, "\nper request (median, range)\tCPU ms\twall ms\tCPU ÷ floor\t\n")
	// The floor is both of its rows: the conversation read from the
	// store, and moved once over HTTP.
	cpuOf := func(c cost) float64 { return float64(c.cpu) }
	floor := median(pick(rows[len(rows)-2].costs, cpuOf)) + median(pick(rows[len(rows)-1].costs, cpuOf))
	for _, r := range rows {
		cpu := pick(r.costs, func(c cost) float64 { return float64(c.cpu) / 1e6 })
		wall := pick(r.costs, func(c cost) float64 { return float64(c.wall) / 1e6 })
		fmt.Fprintf(w, "%s\t%.1f (%.1f–%.1f)\t%.1f\t%.1f×\t\n", r.name, median(cpu), minOf(cpu), maxOf(cpu), median(wall), median(cpu)*1e6/floor)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(o.Out, "load average at the end %s\n", loadavg())
	return nil
}

func startHistory(o HistoryOptions) (*historyRun, func(), error) {
	h := &historyRun{o: o, hc: transport(), text: strings.Repeat("x", o.Bytes-len("00000 ")) + " "}
	set, err := newSetUp("aapbench-history-")
	if err != nil {
		return h, set.close, err
	}
	if h.e, err = newEnv(); err != nil {
		return h, set.close, err
	}
	set.undo = append(set.undo, h.e.close)
	// agui2aap's hydration reads the AAP session's history: the demo AAP
	// agent keeps it (the bench agent keeps nothing).
	aapAgent := set.server(demo.NewAAPAgent(demo.AAPAgentOptions{Name: "bench"}))
	h.a2gStore = filepath.Join(set.dir, "aap2agui.db")
	if h.a2g, err = set.process(bridge(o.Command, "sqlite:"+h.a2gStore), bridgeAAP2AGUI, h.e.aguiURL); err != nil {
		return h, set.close, err
	}
	if h.g2a, err = set.process(bridge(o.Command, "sqlite:"+filepath.Join(set.dir, "agui2aap.db")), bridgeAGUI2AAP, aapAgent.URL); err != nil {
		return h, set.close, err
	}
	if h.relay, err = set.process(bridge(o.Command, "memory:"), relayProxy, h.e.aguiURL); err != nil || o.CopilotKit == nil {
		return h, set.close, err
	}
	h.ck, err = set.process(o.CopilotKit, "copilotkit", h.e.aguiURL)
	return h, set.close, err
}

type historyRow struct {
	name  string
	costs []cost
}

func (h *historyRun) measure(ctx context.Context) ([]historyRow, error) {
	rows := []historyRow{{name: "aap2agui turn"}, {name: "aap2agui GET history"}, {name: "agui2aap run"},
		{name: "agui2aap hydration"}, {name: "CopilotKit runtime run (HttpAgent)"},
		{name: "floor: stored rows read, laid out"}, {name: "floor: net/http relay of the RunAgentInput"}}
	if h.ck == nil {
		rows = slices.Delete(rows, 4, 5)
	}
	for rep := range h.o.Reps {
		a, err := h.aap2agui(ctx, rep)
		if err != nil {
			return nil, err
		}
		g, err := h.agui2aap(ctx, rep)
		if err != nil {
			return nil, err
		}
		f, err := h.floors(ctx, a.session)
		if err != nil {
			return nil, err
		}
		costs := []cost{a.turn, a.history, g.run, g.hydration, f.copilotKit, f.rows, f.relay}
		if h.ck == nil {
			costs = slices.Delete(costs, 4, 5)
		}
		for i, c := range costs {
			rows[i].costs = append(rows[i].costs, c)
		}
	}
	return rows, nil
}

// timed runs f and returns what it cost the processes ps (nil: this one).
func timed(ps []*bridgeProcess, f func() error) (cost, error) {
	c0, err := procsCPU(ps)
	self0 := now()
	if err != nil {
		return cost{}, err
	}
	t0 := time.Now()
	if err := f(); err != nil {
		return cost{}, err
	}
	wall := time.Since(t0)
	if ps == nil {
		return cost{cpu: now().sub(self0).cpu, wall: wall}, nil
	}
	c1, err := procsCPU(ps)
	return cost{cpu: c1 - c0, wall: wall}, err
}

// messages are n messages of conversation, user first, with ids.
func (h *historyRun) messages(n int, prefix string) []types.Message {
	out := make([]types.Message, n)
	for i := range out {
		out[i] = types.Message{ID: prefix + strconv.Itoa(i), Role: types.Role(historyRole(i)), Content: fmt.Sprintf("%05d %s", i, h.text)}
	}
	return out
}

type aap2aguiCosts struct {
	session       string
	turn, history cost
}

// aap2agui seeds a session with the conversation, then measures one turn
// of it and one read of its history.
func (h *historyRun) aap2agui(ctx context.Context, rep int) (aap2aguiCosts, error) {
	var out aap2aguiCosts
	var seed []map[string]string
	for _, m := range h.messages(h.o.Messages, "") {
		seed = append(seed, map[string]string{"role": string(m.Role), "content": m.Content.(string)})
	}
	body, _ := json.Marshal(map[string]any{"agent": map[string]string{"name": "bench"}, "messages": seed})
	var created struct {
		SessionID string `json:"sessionId"`
	}
	if err := h.do(ctx, http.MethodPost, h.a2g.url+"/sessions", body, &created); err != nil {
		return out, fmt.Errorf("aap2agui: seeding a session: %w", err)
	}
	out.session = created.SessionID
	turn := []byte(`{"stream":"delta","messages":[{"role":"user","content":"` + prompt{n: 1}.String() + `"}]}`)
	var err error
	if out.turn, err = timed([]*bridgeProcess{h.a2g}, func() error {
		return h.do(ctx, http.MethodPost, h.a2g.url+"/sessions/"+out.session+"/turns", turn, nil)
	}); err != nil {
		return out, fmt.Errorf("aap2agui turn: %w", err)
	}
	out.history, err = timed([]*bridgeProcess{h.a2g}, func() error {
		return h.do(ctx, http.MethodGet, h.a2g.url+"/sessions/"+out.session+"/history?type=full", nil, nil)
	})
	return out, err
}

type agui2aapCosts struct{ run, hydration cost }

// agui2aap starts a thread with the conversation (one run, unmeasured),
// then measures a hydration of it and a run that carries it whole with
// one new user message, as a client sends it.
func (h *historyRun) agui2aap(ctx context.Context, rep int) (agui2aapCosts, error) {
	var out agui2aapCosts
	thread := "history-" + strconv.Itoa(rep)
	msgs := h.messages(h.o.Messages-1, thread+"-")
	msgs = append(msgs, types.Message{ID: thread + "-first", Role: types.RoleUser, Content: "hello there"})
	if _, err := h.run(ctx, thread, msgs); err != nil {
		return out, fmt.Errorf("agui2aap: starting the thread: %w", err)
	}
	var snapshot []types.Message
	var err error
	if out.hydration, err = timed([]*bridgeProcess{h.g2a}, func() error {
		snapshot, err = h.run(ctx, thread, []types.Message{})
		return err
	}); err != nil {
		return out, fmt.Errorf("agui2aap hydration: %w", err)
	}
	if len(snapshot) < h.o.Messages {
		return out, fmt.Errorf("agui2aap hydration: %d messages, want at least %d", len(snapshot), h.o.Messages)
	}
	next := append(snapshot, types.Message{ID: thread + "-next", Role: types.RoleUser, Content: "hello there"})
	out.run, err = timed([]*bridgeProcess{h.g2a}, func() error {
		_, err := h.run(ctx, thread, next)
		return err
	})
	return out, err
}

// run posts a RunAgentInput of msgs on thread to agui2aap and returns the
// messages of the stream's MESSAGES_SNAPSHOT, if it has one.
func (h *historyRun) run(ctx context.Context, thread string, msgs []types.Message) ([]types.Message, error) {
	h.runs++
	body, err := json.Marshal(runInput(thread, "r"+strconv.Itoa(h.runs), msgs))
	if err != nil {
		return nil, err
	}
	var raw bytes.Buffer
	if err := h.doRaw(ctx, http.MethodPost, h.g2a.url, body, &raw); err != nil {
		return nil, err
	}
	var snapshot []types.Message
	_, err = readAGUI(&raw, onEvent{snapshot: func(msgs []types.Message) { snapshot = msgs }})
	return snapshot, err
}

// floorCosts are the floor's two rows, and the CopilotKit runtime's run of
// the relay's RunAgentInput.
type floorCosts struct{ rows, relay, copilotKit cost }

// floors measures the least each bridge's work could cost: aap2agui's
// stored rows read (one query on its SQLite file) and laid out as the
// messages of a RunAgentInput, in this process; and a RunAgentInput of
// the conversation sent through the relay process to the AG-UI agent.
func (h *historyRun) floors(ctx context.Context, session string) (floorCosts, error) {
	var out floorCosts
	db, err := sql.Open("sqlite", "file:"+h.a2gStore+"?mode=ro")
	if err != nil {
		return out, err
	}
	defer db.Close()
	if out.rows, err = timed(nil, func() error { return layOut(ctx, db, session) }); err != nil {
		return out, fmt.Errorf("floor: %w", err)
	}
	msgs := h.messages(h.o.Messages, "relay-")
	msgs = append(msgs, types.Message{ID: "relay-new", Role: types.RoleUser, Content: prompt{n: 1}.String()})
	in := runInput("relay", "r", msgs)
	body, err := json.Marshal(in)
	if err != nil {
		return out, err
	}
	out.relay, err = timed([]*bridgeProcess{h.relay}, func() error { return h.doRaw(ctx, http.MethodPost, h.relay.url, body, io.Discard) })
	if err != nil || h.ck == nil {
		return out, err
	}
	// A thread of its own each time: the runtime keeps its threads.
	h.runs++
	in.ThreadID, in.RunID = "copilotkit-"+strconv.Itoa(h.runs), "r"+strconv.Itoa(h.runs)
	if body, err = json.Marshal(in); err != nil {
		return out, err
	}
	out.copilotKit, err = timed([]*bridgeProcess{h.ck}, func() error { return h.doRaw(ctx, http.MethodPost, h.ck.url, body, io.Discard) })
	return out, err
}

func layOut(ctx context.Context, db *sql.DB, session string) error {
	rows, err := db.QueryContext(ctx, `SELECT data FROM history WHERE session_id = ? ORDER BY position`, session)
	if err != nil {
		return err
	}
	defer rows.Close()
	buf := []byte(`{"threadId":"t","runId":"r","messages":[`)
	var data []byte
	for rows.Next() {
		if err := rows.Scan(&data); err != nil {
			return err
		}
		buf = append(append(buf, data...), ',')
	}
	buf = append(buf, `]}`...)
	_, err = io.Discard.Write(buf)
	if err == nil {
		err = rows.Err()
	}
	return err
}

func (h *historyRun) do(ctx context.Context, method, url string, body []byte, into any) error {
	var b bytes.Buffer
	if err := h.doRaw(ctx, method, url, body, &b); err != nil {
		return err
	}
	if into == nil {
		return nil
	}
	return json.Unmarshal(b.Bytes(), into)
}

func (h *historyRun) doRaw(ctx context.Context, method, url string, body []byte, w io.Writer) error {
	return request(ctx, h.hc, method, url, body, w)
}

func minOf(xs []float64) float64 {
	m := xs[0]
	for _, x := range xs {
		m = min(m, x)
	}
	return m
}

func maxOf(xs []float64) float64 {
	m := xs[0]
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}
