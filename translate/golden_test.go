package translate_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/events"
	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"
	"github.com/stretchr/testify/require"
	"golang.org/x/tools/txtar"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/agui"
	"github.com/aapagui/aapagui/internal/sse"
	"github.com/aapagui/aapagui/translate"
)

var update = flag.Bool("update", false, "rewrite the derived sections of the golden files in testdata/golden")

// A golden file holds one conversation in both protocols. Its sections:
//
//	options.json              {"mode": "delta"|"message"|"none", "source": "aap"|"agui", "clientTools": [...], "serverTools": [...]}
//	                          (serverTools, when present, are the server tools the agent declares: a call of any other
//	                          tool that is not a client tool is the agent's own, translate.ToolOwners; absent, the
//	                          translators' defaults: every call waits on the client)
//	turnN.aap.request.json    the AAP messages of turn N's request (hand-written)
//	turnN.aap.sse             the AAP stream of turn N (hand-written when source is aap)
//	turnN.aap.json            the StreamNone response of turn N (mode none; hand-written when source is aap)
//	turnN.agui.sse            the AG-UI stream of run N (hand-written when source is agui)
//	turnN.agui.request.json   the AG-UI side of turn N's request: {"messages", "resume"} (derived)
//	history.aap.json          the whole AAP history after the last turn (derived)
//	history.agui.json         that history as AG-UI messages (derived)
//	history.aap.back.json     history.agui.json back in AAP, present only where it differs from history.aap.json (derived)
//
// Derived sections are checked, and rewritten only with -update.
type goldenOptions struct {
	Mode        aap.StreamMode `json:"mode"`
	Source      string         `json:"source"`
	ClientTools []string       `json:"clientTools"`
	ServerTools []string       `json:"serverTools"`
}

// owners are the translators' options of whose each tool is: none when the
// file does not say which server tools the agent declares.
func (o goldenOptions) owners() (isServer, isAgents func(name string) bool) {
	if o.ServerTools == nil {
		return nil, nil
	}
	owners := translate.ToolOwners{
		Client: func(name string) bool { return slices.Contains(o.ClientTools, name) },
		Server: func(name string) bool { return slices.Contains(o.ServerTools, name) },
	}
	return owners.Server, owners.Agents
}

const threadID = "thread-1"

type golden struct {
	t       *testing.T
	path    string
	arc     *txtar.Archive
	changed bool
}

func (g *golden) section(name string) ([]byte, bool) {
	for _, f := range g.arc.Files {
		if f.Name == name {
			return f.Data, true
		}
	}
	return nil, false
}

func (g *golden) must(name string) []byte {
	data, ok := g.section(name)
	require.True(g.t, ok, "%s: missing section %s", g.path, name)
	return data
}

// check compares a derived section with what the code produced, or
// rewrites it under -update.
func (g *golden) check(name string, got []byte) {
	g.t.Helper()
	want, ok := g.section(name)
	if *update {
		if !ok || !bytes.Equal(want, got) {
			g.set(name, got)
		}
		return
	}
	require.True(g.t, ok, "%s: missing section %s (run go test ./translate -run TestGolden -update)", g.path, name)
	require.Equal(g.t, string(want), string(got), "%s: section %s", g.path, name)
}

func (g *golden) set(name string, data []byte) {
	g.changed = true
	for i := range g.arc.Files {
		if g.arc.Files[i].Name == name {
			g.arc.Files[i].Data = data
			return
		}
	}
	g.arc.Files = append(g.arc.Files, txtar.File{Name: name, Data: data})
}

func TestGolden(t *testing.T) {
	files, err := filepath.Glob("../testdata/golden/*.txtar")
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(files), 14, "golden conversations")
	for _, path := range files {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".txtar"), func(t *testing.T) {
			arc, err := txtar.ParseFile(path)
			require.NoError(t, err)
			g := &golden{t: t, path: path, arc: arc}
			runGolden(g)
			if g.changed {
				require.NoError(t, os.WriteFile(path, txtar.Format(arc), 0o644))
			}
		})
	}
}

var turnSection = regexp.MustCompile(`^turn(\d+)\.`)

func runGolden(g *golden) {
	t := g.t
	require.NotEmpty(t, strings.TrimSpace(string(g.arc.Comment)), "a golden file opens with a line saying what it covers")
	var opts goldenOptions
	require.NoError(t, json.Unmarshal(g.must("options.json"), &opts))
	require.Contains(t, []string{"aap", "agui"}, opts.Source)
	turns := 0
	for _, f := range g.arc.Files {
		if m := turnSection.FindStringSubmatch(f.Name); m != nil {
			n, _ := strconv.Atoi(m[1])
			turns = max(turns, n)
		}
	}
	require.Positive(t, turns)
	isServer, isAgents := opts.owners()

	streamIDs := translate.SequentialIDs("msg-")
	requestIDs := translate.SequentialIDs("in-")
	var history []aap.Message
	var entries []translate.HistoryEntry // history as a bridge keeps it, snapshots applied
	var open []types.Interrupt
	for n := 1; n <= turns; n++ {
		prefix := fmt.Sprintf("turn%d.", n)
		runID := fmt.Sprintf("run-%d", n)

		// The request: AAP messages ⇄ AG-UI messages and resume entries.
		added := g.request(prefix, open, requestIDs)
		own := map[string]bool{}
		for _, e := range added {
			history = append(history, e.Message)
			own[e.AGUIID] = true
		}
		entries = append(entries, added...)

		// The stream.
		a2g := translate.NewAAPToAGUI(translate.AAPToAGUIOptions{
			ThreadID: threadID, RunID: runID, NewID: streamIDs,
			IsClientTool: func(name string) bool { return slices.Contains(opts.ClientTools, name) },
			IsServerTool: isServer,
		})
		if opts.Source == "aap" {
			var src []aap.Event
			if opts.Mode == aap.StreamNone {
				var resp aap.PostSessionTurnResponse
				require.NoError(t, json.Unmarshal(g.must(prefix+"aap.json"), &resp))
				src = translate.EventsFromResponse(&resp)
			} else {
				src = readAAP(t, g.must(prefix+"aap.sse"))
			}
			aguiEvs := feedAAPToAGUI(t, a2g, src)
			require.NoError(t, agui.Verify(aguiEvs), "AG-UI client rules")
			g.check(prefix+"agui.sse", encodeAGUI(t, aguiEvs))

			// AAP → AG-UI → AAP in memory gives back the same bytes.
			g2a := translate.NewAGUIToAAP(translate.AGUIToAAPOptions{Mode: opts.Mode, IsAgentTool: isAgents})
			round := feedAGUIToAAP(t, g2a, aguiEvs)
			if opts.Mode == aap.StreamNone {
				require.Equal(t, string(g.must(prefix+"aap.json")), string(indentJSON(t, g2a.Response())), "round trip")
			} else {
				require.Equal(t, string(g.must(prefix+"aap.sse")), string(encodeAAP(t, round)), "round trip")
			}
		}

		// AG-UI → AAP from the bytes of the AG-UI stream.
		aguiEvs := readAGUI(t, g.must(prefix+"agui.sse"))
		g2a := translate.NewAGUIToAAP(translate.AGUIToAAPOptions{Mode: opts.Mode, IsAgentTool: isAgents})
		out := feedRun(t, g2a, aguiEvs, entries)
		if opts.Mode == aap.StreamNone {
			g.check(prefix+"aap.json", indentJSON(t, g2a.Response()))
		} else {
			g.check(prefix+"aap.sse", encodeAAP(t, out))
		}
		history = append(history, g2a.Messages()...)
		open = g2a.Interrupts()
		entries = withSnapshot(t, entries, g2a, aguiEvs, own)
		require.Equal(t, string(indentJSON(t, history)), string(indentJSON(t, entryMessages(entries))),
			"turn %d: the history a MESSAGES_SNAPSHOT leaves (translate.MergeSnapshot) is what every turn streamed", n)
	}

	g.check("history.aap.json", indentJSON(t, history))
	aguiHistory, err := translate.MessagesToAGUI(history, translate.SequentialIDs("h-"))
	require.NoError(t, err)
	g.check("history.agui.json", indentJSON(t, aguiHistory))
	back, err := translate.MessagesToAAP(aguiHistory)
	require.NoError(t, err)
	// Where AG-UI cannot hold the AAP history exactly (several text blocks
	// in one assistant message are joined), the file records what comes
	// back in history.aap.back.json; otherwise it must be identical.
	if _, lossy := g.section("history.aap.back.json"); lossy {
		g.check("history.aap.back.json", indentJSON(t, back))
		return
	}
	require.Equal(t, string(indentJSON(t, history)), string(indentJSON(t, back)), "history AG-UI→AAP")
}

// request checks the AG-UI side of the request of the turn (prefix) and
// that it comes back the same; it returns the history entries the turn
// adds, under their AG-UI ids.
func (g *golden) request(prefix string, open []types.Interrupt, requestIDs func() string) []translate.HistoryEntry {
	t := g.t
	t.Helper()
	reqAAP, err := aap.DecodeTurnMessages(g.must(prefix + "aap.request.json"))
	require.NoError(t, err)
	in, err := translate.TurnToAGUI(reqAAP, open, requestIDs)
	require.NoError(t, err)
	g.check(prefix+"agui.request.json", indentJSON(t, in))
	back, err := translate.TurnFromAGUI(in.Messages, in.Resume, open)
	require.NoError(t, err)
	require.Equal(t, string(indentJSON(t, reqAAP)), string(indentJSON(t, back)), "request AG-UI→AAP")
	var added []translate.HistoryEntry
	for i, m := range reqAAP {
		if m.Role() != aap.RoleToolPermission {
			added = append(added, translate.HistoryEntry{Message: m, AGUIID: in.IDs[i]})
		}
	}
	return added
}

// withSnapshot is entries (the history before the run, the turn's own
// messages, own, included) after the run g2a translated (its events evs):
// with the run's messages, and the run's last MESSAGES_SNAPSHOT, if any,
// merged in as a bridge does (translate.MergeSnapshot).
func withSnapshot(t *testing.T, entries []translate.HistoryEntry, g2a *translate.AGUIToAAP, evs []events.Event, own map[string]bool) []translate.HistoryEntry {
	t.Helper()
	msgs, ids := g2a.Messages(), g2a.MessageIDs()
	run := map[string]bool{}
	for i, m := range msgs {
		entries = append(entries, translate.HistoryEntry{Message: m, AGUIID: ids[i]})
		run[ids[i]] = true
	}
	var snapshot *events.MessagesSnapshotEvent
	for _, ev := range evs {
		if e, ok := ev.(*events.MessagesSnapshotEvent); ok {
			snapshot = e
		}
	}
	if snapshot == nil {
		return entries
	}
	return translate.MergeSnapshot(snapshotEntries(t, snapshot), translate.SnapshotBase{History: entries, Own: own, Run: run})
}

// feedRun is feedAGUIToAAP for a run that was sent sent (the history
// before it, the turn's own messages included), as a bridge feeds it: a
// MESSAGES_SNAPSHOT streams what it holds that is new in the run
// (AGUIToAAP.FeedSnapshot), and the history a later snapshot replaces is
// that one.
func feedRun(t *testing.T, tr *translate.AGUIToAAP, src []events.Event, sent []translate.HistoryEntry) []aap.Event {
	t.Helper()
	var out []aap.Event
	for _, ev := range src {
		var evs []aap.Event
		var err error
		if e, ok := ev.(*events.MessagesSnapshotEvent); ok {
			snap := snapshotEntries(t, e)
			evs, err = tr.FeedSnapshot(snap, sent, nil)
			sent = snap
		} else {
			evs, err = tr.Feed(ev)
		}
		require.NoError(t, err)
		out = append(out, evs...)
	}
	return append(out, tr.Finish()...)
}

// snapshotEntries are the messages of a MESSAGES_SNAPSHOT as history
// entries, under their AG-UI ids.
func snapshotEntries(t *testing.T, e *events.MessagesSnapshotEvent) []translate.HistoryEntry {
	t.Helper()
	msgs, ids, err := translate.MessagesToAAPWithIDs(e.Messages)
	require.NoError(t, err)
	out := make([]translate.HistoryEntry, len(msgs))
	for i, m := range msgs {
		out[i] = translate.HistoryEntry{Message: m, AGUIID: ids[i]}
	}
	return out
}

func entryMessages(entries []translate.HistoryEntry) []aap.Message {
	out := make([]aap.Message, len(entries))
	for i, e := range entries {
		out[i] = e.Message
	}
	return out
}

func indentJSON(t *testing.T, v any) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	require.NoError(t, enc.Encode(v))
	return buf.Bytes()
}

func readAAP(t *testing.T, data []byte) []aap.Event {
	t.Helper()
	var out []aap.Event
	for ev, err := range aap.ReadEvents(bytes.NewReader(data), 0) {
		require.NoError(t, err)
		out = append(out, ev)
	}
	return out
}

func encodeAAP(t *testing.T, evs []aap.Event) []byte {
	t.Helper()
	var buf []byte
	for _, ev := range evs {
		var err error
		buf, err = aap.AppendFrame(buf, ev)
		require.NoError(t, err)
	}
	return buf
}

func readAGUI(t *testing.T, data []byte) []events.Event {
	t.Helper()
	var out []events.Event
	for f, err := range sse.Read(bytes.NewReader(data), sse.ReadOptions{}) {
		require.NoError(t, err)
		ev, err := agui.DecodeEvent(f.Data)
		require.NoError(t, err)
		out = append(out, ev)
	}
	return out
}

func encodeAGUI(t *testing.T, evs []events.Event) []byte {
	t.Helper()
	var buf, data []byte
	for _, ev := range evs {
		var err error
		data, err = agui.AppendEvent(data[:0], ev)
		require.NoError(t, err)
		buf = sse.AppendEvent(buf, "", data)
	}
	return buf
}

func feedAAPToAGUI(t *testing.T, tr *translate.AAPToAGUI, src []aap.Event) []events.Event {
	t.Helper()
	var out []events.Event
	for _, ev := range src {
		evs, err := tr.Feed(ev)
		require.NoError(t, err)
		out = append(out, evs...)
	}
	return append(out, tr.Finish()...)
}

func feedAGUIToAAP(t *testing.T, tr *translate.AGUIToAAP, src []events.Event) []aap.Event {
	t.Helper()
	var out []aap.Event
	for _, ev := range src {
		evs, err := tr.Feed(ev)
		require.NoError(t, err)
		out = append(out, evs...)
	}
	return append(out, tr.Finish()...)
}
