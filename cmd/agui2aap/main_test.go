package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/cmd/internal/clitest"
	"github.com/aapagui/aapagui/internal/testkit/pgtest"
	"github.com/aapagui/aapagui/internal/testkit/proctest"
	"github.com/aapagui/aapagui/store"
	"github.com/aapagui/aapagui/store/postgres"
	"github.com/aapagui/aapagui/store/sqlite"
)

func TestMain(m *testing.M) { proctest.Main(m, run) }

// runBody is an HttpAgent run on thread "t1" with the given messages.
func runBody(runID, messages string) string {
	return `{"threadId":"t1","runId":"` + runID + `","state":{},"messages":[` + messages +
		`],"tools":[],"context":[],"forwardedProps":{}}`
}

// TestKilledMidRun kills agui2aap with SIGKILL in the middle of a streamed
// run: a new process on the same store answers the thread's next run with
// 409 and Retry-After while the dead run's lease runs out, then takes it
// within 10 s.
func TestKilledMidRun(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	db := "sqlite:" + filepath.Join(t.TempDir(), "agui2aap.db")
	a := proctest.Start(t, nil, "--listen", "127.0.0.1:0", "--store", db)
	first := `{"id":"u1","role":"user","content":"long 1000000"}`
	resp := post(t, ctx, a.URL()+"/agents/demo", runBody("r1", first))
	require.Equal(t, http.StatusOK, resp.StatusCode)
	sc := bufio.NewScanner(resp.Body)
	deltas := 0
	for deltas < 3 && sc.Scan() {
		if strings.Contains(sc.Text(), `"TEXT_MESSAGE_CONTENT"`) {
			deltas++
		}
	}
	require.Equal(t, 3, deltas, "the run is streaming")
	a.Kill()
	killed := time.Now()

	b := proctest.Start(t, nil, "--listen", "127.0.0.1:0", "--store", db)
	next := runBody("r2", first+`,{"id":"u2","role":"user","content":"are you there?"}`)
	for {
		resp := post(t, ctx, b.URL()+"/agents/demo", next)
		if resp.StatusCode == http.StatusOK {
			break
		}
		require.Equal(t, http.StatusConflict, resp.StatusCode, "only 409 while the dead run's lease runs")
		secs, err := strconv.Atoi(resp.Header.Get("Retry-After"))
		require.NoError(t, err, "409 without Retry-After")
		assert.LessOrEqual(t, secs, int(store.LeaseTTL.Seconds()))
		require.Less(t, time.Since(killed), 10*time.Second, "the dead run's lock was not taken over")
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("thread usable again %s after kill -9", time.Since(killed).Round(10*time.Millisecond))
}

// post posts a run's JSON body to url, asking for its event stream.
func post(t *testing.T, ctx context.Context, url, body string) *http.Response {
	t.Helper()
	return clitest.Post(t, ctx, url, body, "Accept", "text/event-stream")
}

// --copy-from moves threads from SQLite to PostgreSQL: a thread goes on
// with its AAP session.
func TestCopyFromSQLite(t *testing.T) {
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "agui2aap.db")
	src, err := sqlite.Open(db)
	require.NoError(t, err)
	th := &store.Thread{Owner: "", ID: "t1", Agent: "demo", SessionID: "sess_1", Delivered: []string{"u1", "a1"}}
	require.NoError(t, src.SaveThread(ctx, th, ""))
	require.NoError(t, src.Close())

	dsn := pgtest.Schema(t)
	require.NoError(t, run([]string{"--store", dsn, "--copy-from", "sqlite:" + db, "--log-level", "error"}))
	dst, err := postgres.Open(ctx, dsn)
	require.NoError(t, err)
	defer dst.Close()
	got, err := dst.GetThread(ctx, "", "t1")
	require.NoError(t, err)
	assert.Equal(t, "sess_1", got.SessionID)
	assert.Equal(t, []string{"u1", "a1"}, got.Delivered)
}

// docs/USING.md's promise: with the built-in AAP demo agent and a SQLite
// store, agui2aap restarted mid-conversation answers the next message with
// the conversation's context. The built-in agent keeps its sessions in
// memory, so the thread's session is gone after the restart: the thread
// moves to a new session seeded with the client's history (logged with
// the seed's length).
func TestRestartMidConversation(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	db := "sqlite:" + filepath.Join(t.TempDir(), "agui2aap.db")
	a := proctest.Start(t, nil, "--listen", "127.0.0.1:0", "--store", db)
	first := `{"id":"u1","role":"user","content":"hello there"}`
	body := readBody(t, post(t, ctx, a.URL()+"/agents/demo", runBody("r1", first)))
	require.Contains(t, body, `"RUN_FINISHED"`)
	a.Kill()

	b := proctest.Start(t, nil, "--listen", "127.0.0.1:0", "--store", db)
	answer := `{"id":"` + textMessageID(t, body) + `","role":"assistant","content":"You said: hello there"}`
	next := runBody("r2", first+","+answer+`,{"id":"u2","role":"user","content":"are you there?"}`)
	resp := post(t, ctx, b.URL()+"/agents/demo", next)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	body = readBody(t, resp)
	assert.Contains(t, body, `"RUN_FINISHED"`)
	assert.NotContains(t, body, `"RUN_ERROR"`)
	assert.Equal(t, "You said: are you there?", streamText(t, body))
	assert.Contains(t, b.Log(), "no longer has the thread's session")
	assert.Contains(t, b.Log(), `"seed":2`, "the new session is seeded with the two earlier messages")
}

func readBody(t *testing.T, resp *http.Response) string {
	t.Helper()
	data, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return string(data)
}

// streamText is the text of a stream's TEXT_MESSAGE_CONTENT deltas.
func streamText(t *testing.T, body string) string {
	t.Helper()
	var sb strings.Builder
	for _, line := range strings.Split(body, "\n") {
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok || !strings.Contains(data, `"TEXT_MESSAGE_CONTENT"`) {
			continue
		}
		var ev struct {
			Delta string `json:"delta"`
		}
		require.NoError(t, json.Unmarshal([]byte(data), &ev))
		sb.WriteString(ev.Delta)
	}
	return sb.String()
}

// textMessageID is the messageId of a stream's TEXT_MESSAGE_START.
func textMessageID(t *testing.T, body string) string {
	t.Helper()
	for _, line := range strings.Split(body, "\n") {
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok || !strings.Contains(data, `"TEXT_MESSAGE_START"`) {
			continue
		}
		var ev struct {
			MessageID string `json:"messageId"`
		}
		require.NoError(t, json.Unmarshal([]byte(data), &ev))
		return ev.MessageID
	}
	t.Fatalf("no TEXT_MESSAGE_START in %s", body)
	return ""
}

// --demo-quiet-permission-results makes the built-in demo agent store a
// granted search's result without sending it, as some AAP servers do: the
// client still gets TOOL_CALL_RESULT, before the answer. With --upstream it
// is refused.
func TestDemoQuietPermissionResults(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p := proctest.Start(t, nil, "--listen", "127.0.0.1:0", "--store", "memory:", "--demo-quiet-permission-results")
	first := `{"id":"u1","role":"user","content":"search dogs"}`
	body := readBody(t, post(t, ctx, p.URL()+"/agents/demo", runBody("r1", first)))
	require.Contains(t, body, `"interrupt"`)
	var call string
	for _, line := range strings.Split(body, "\n") {
		if data, ok := strings.CutPrefix(line, "data: "); ok && strings.Contains(data, `"TOOL_CALL_START"`) {
			var ev struct {
				ToolCallID string `json:"toolCallId"`
			}
			require.NoError(t, json.Unmarshal([]byte(data), &ev))
			call = ev.ToolCallID
		}
	}
	require.NotEmpty(t, call)
	assistant := `{"id":"a1","role":"assistant","toolCalls":[{"id":"` + call + `","type":"function","function":{"name":"web_search","arguments":"{\"query\":\"dogs\"}"}}]}`
	resume := `{"threadId":"t1","runId":"r2","state":{},"messages":[` + first + `,` + assistant +
		`],"tools":[],"context":[],"forwardedProps":{},"resume":[{"interruptId":"perm-` + call + `","status":"resolved","payload":{"approved":true}}]}`
	body = readBody(t, post(t, ctx, p.URL()+"/agents/demo", resume))
	result := strings.Index(body, `"TOOL_CALL_RESULT"`)
	text := strings.Index(body, `"TEXT_MESSAGE_START"`)
	require.GreaterOrEqual(t, result, 0, "no TOOL_CALL_RESULT in %s", body)
	assert.Less(t, result, text, "the result comes before the answer")
	assert.Contains(t, body, "Results for dogs")

	err := run([]string{"--upstream", "http://127.0.0.1:1", "--demo-quiet-permission-results", "--store", "memory:"})
	require.ErrorContains(t, err, "--demo-quiet-permission-results")
}

// --demo-long-pace paces the built-in demo agent's "long <n>" answer, and
// is refused beside --upstream or out of range.
func TestDemoLongPace(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"--upstream", "http://127.0.0.1:1", "--demo-long-pace", "10ms"},
		{"--demo-long-pace", "-1s"},
		{"--demo-long-pace", "2m"},
	} {
		err := run(append(args, "--store", "memory:", "--listen", "127.0.0.1:0"))
		require.ErrorContains(t, err, "--demo-long-pace", args)
	}
	p := proctest.Start(t, nil, "--listen", "127.0.0.1:0", "--store", "memory:", "--demo-long-pace", "1ms")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	body := readBody(t, post(t, ctx, p.URL()+"/agents/demo", `{"threadId":"t1","runId":"r1","state":{},"messages":[{"id":"m1","role":"user","content":"long 20"}],"tools":[],"context":[],"forwardedProps":{}}`))
	assert.Equal(t, 20, strings.Count(body, `"type":"TEXT_MESSAGE_CONTENT"`), "every word, one event each")
	assert.Contains(t, body, `"type":"RUN_FINISHED"`)
}
