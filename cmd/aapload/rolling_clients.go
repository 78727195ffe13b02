package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/aapagui/aapagui/store"
)

// rollingStats are the rolling restart's figures: every request the
// clients made and why those that failed did, the turns acknowledged
// (ended well) and, of those, the ones missing from history or found in
// it more than once.
type rollingStats struct {
	mu               sync.Mutex
	requests         int
	failures         map[string]int
	aapAcked, runs   int
	lost, duplicated int
	threads          store.ThreadStore // agui2aap's store, read directly
	closeStore       func()
	storeErr         error
}

func newRollingStats(spec string) *rollingStats {
	rs := &rollingStats{failures: map[string]int{}, closeStore: func() {}}
	st, err := store.Open(spec)
	if err != nil {
		rs.storeErr = err
		return rs
	}
	rs.closeStore = func() { st.Close() }
	rs.threads = st
	return rs
}

func (rs *rollingStats) close() { rs.closeStore() }

// request counts a request: code is "" when it succeeded, else why not.
func (rs *rollingStats) request(code string) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.requests++
	if code != "" {
		rs.failures[code]++
	}
}

// found counts the acknowledged turns against their copies in history.
func (rs *rollingStats) found(copies []int, agui bool) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	for _, n := range copies {
		if agui {
			rs.runs++
		} else {
			rs.aapAcked++
		}
		switch {
		case n == 0:
			rs.lost++
		case n > 1:
			rs.duplicated++
		}
	}
}

func (rs *rollingStats) failed() int {
	n := 0
	for _, v := range rs.failures {
		n += v
	}
	return n
}

// report prints the restarts and the figures.
func (rs *rollingStats) report(out io.Writer, steps []string, proxyFailed int64) {
	for _, s := range steps {
		fmt.Fprintln(out, s)
	}
	codes := make([]string, 0, len(rs.failures))
	for k, v := range rs.failures {
		codes = append(codes, fmt.Sprintf("%s=%d", k, v))
	}
	slices.Sort(codes)
	failures := "none"
	if len(codes) > 0 {
		failures = strings.Join(codes, " ")
	}
	fmt.Fprintf(out, "rolling restart of %d replicas: requests %d, failed %d (%s), Service proxy errors %d, acknowledged turns %d (aap2agui %d, agui2aap %d), lost %d, in history more than once %d\n",
		len(steps), rs.requests, rs.failed(), failures, proxyFailed, rs.aapAcked+rs.runs, rs.aapAcked, rs.runs, rs.lost, rs.duplicated)
}

// verdict is the test's error: any failed request, lost or duplicated
// turn, or a store it could not read.
func (rs *rollingStats) verdict(proxyFailed int64) error {
	if rs.storeErr != nil {
		return rs.storeErr
	}
	if rs.failed() > 0 || proxyFailed > 0 || rs.lost > 0 || rs.duplicated > 0 || rs.aapAcked == 0 || rs.runs == 0 {
		return fmt.Errorf("the rolling restart was noticed: %d requests failed, %d proxy errors, %d turns lost, %d duplicated (of %d and %d acknowledged)",
			rs.failed(), proxyFailed, rs.lost, rs.duplicated, rs.aapAcked, rs.runs)
	}
	return nil
}

// rollingTurn is the user message of a worker's turn: a unique token,
// every other turn a long one (2,000 deltas), so that restarts find turns
// streaming.
func rollingTurn(worker, session, turn int) (token, content string) {
	token = fmt.Sprintf("turn %s-%d-%d-%d", runID, worker, session, turn)
	if turn%2 == 1 {
		return token, "long 2000 " + token
	}
	return token, token
}

// rollingClients are the load's clients: workers that hold conversations
// of m turns through the Services of both programs until stop, and count
// them in rs.
type rollingClients struct {
	aap, agui *service
	rs        *rollingStats
	stop      atomic.Bool
	m         int
}

// aapWorker runs sessions of m turns through the aap2agui Service until
// stop, each request to the replica the Service picks, and checks each
// session's history.
func (cl *rollingClients) aapWorker(ctx context.Context, worker int) {
	svc, rs := cl.aap, cl.rs
	for s := 0; !cl.stop.Load(); s++ {
		var created struct{ SessionID string }
		code := viaService(ctx, svc, func(base string) string {
			resp, err := postJSON(base+"/sessions", map[string]any{"agent": map[string]any{"name": "demo"}})
			if err != nil {
				return "create_transport"
			}
			if resp.StatusCode != http.StatusCreated {
				return "create_" + failure(resp)
			}
			if decodeJSON(resp, &created) != nil {
				return "create_body"
			}
			return ""
		})
		rs.request(code)
		if code != "" {
			continue
		}
		var acked []string
		for j := range cl.m {
			token, content := rollingTurn(worker, s, j)
			code := viaService(ctx, svc, func(base string) string { return aapTurn(base, created.SessionID, content) })
			rs.request(code)
			if code == "" {
				acked = append(acked, token)
			}
		}
		copies, code := historyCopies(ctx, svc, created.SessionID, acked)
		rs.request(code)
		if code == "" {
			rs.found(copies, false)
		}
	}
}

// viaService runs call with the URL of the replica the Service picks,
// counted as open on it meanwhile.
func viaService(ctx context.Context, svc *service, call func(base string) string) string {
	r, base := svc.pick(ctx)
	if r == nil {
		return "no_replica"
	}
	r.inflight.Add(1)
	defer r.inflight.Add(-1)
	return call(base)
}

// historyCopies reads the session's full history through the aap2agui
// Service and returns, for each token, the user messages that hold it.
func historyCopies(ctx context.Context, svc *service, session string, tokens []string) ([]int, string) {
	var h struct {
		History struct {
			Full []struct {
				Role    string
				Content json.RawMessage
			}
		}
	}
	code := viaService(ctx, svc, func(base string) string {
		resp, err := client.Get(base + "/sessions/" + session + "/history?type=full")
		if err != nil {
			return "history_transport"
		}
		if resp.StatusCode != http.StatusOK {
			return "history_" + failure(resp)
		}
		if decodeJSON(resp, &h) != nil {
			return "history_body"
		}
		return ""
	})
	if code != "" {
		return nil, code
	}
	copies := make([]int, len(tokens))
	for _, msg := range h.History.Full {
		if msg.Role != "user" {
			continue
		}
		for i, tok := range tokens {
			if strings.Contains(string(msg.Content), tok) {
				copies[i]++
			}
		}
	}
	return copies, ""
}

// aguiWorker runs threads of m runs through the agui2aap Service until
// stop, each run resending the thread's history, and checks each thread:
// agui2aap's store must say each acknowledged user message reached the
// AAP session once, and that session's history (read from aap2agui, its
// AAP server) must hold it once.
func (cl *rollingClients) aguiWorker(ctx context.Context, worker int) {
	svc, rs := cl.agui, cl.rs
	for s := 0; !cl.stop.Load(); s++ {
		thread := fmt.Sprintf("roll-%s-%d-%d", runID, worker, s)
		var history []aguiMsg
		var ids, tokens []string
		for j := range cl.m {
			token, content := rollingTurn(worker, s, j)
			user := aguiMsg{ID: fmt.Sprintf("u-%d-%d-%d", worker, s, j), Role: "user", Content: content}
			var texts []aguiMsg
			code := viaService(ctx, svc, func(base string) string {
				var code string
				texts, code = aguiRun(base, thread, fmt.Sprintf("r-%d-%d-%d", worker, s, j), append(slices.Clone(history), user))
				return code
			})
			rs.request(code)
			if code == "" {
				history = append(append(history, user), texts...)
				ids, tokens = append(ids, user.ID), append(tokens, token)
			}
		}
		rs.checkThread(ctx, cl.aap, thread, ids, tokens)
	}
}

// checkThread counts the thread's acknowledged runs against agui2aap's
// store (each id delivered once) and the AAP session's history.
func (rs *rollingStats) checkThread(ctx context.Context, aapSvc *service, thread string, ids, tokens []string) {
	if rs.threads == nil || len(ids) == 0 {
		return
	}
	th, err := rs.threads.GetThread(ctx, "", thread)
	if err != nil {
		rs.found(make([]int, len(ids)), true)
		return
	}
	delivered := make([]int, len(ids))
	for _, d := range th.Delivered {
		if i := slices.Index(ids, d); i >= 0 {
			delivered[i]++
		}
	}
	copies, code := historyCopies(ctx, aapSvc, th.SessionID, tokens)
	rs.request(code)
	if code != "" {
		return
	}
	for i := range copies { // lost if either lost it, twice if either has it twice
		switch {
		case delivered[i] == 0 || copies[i] == 0:
			copies[i] = 0
		case delivered[i] > 1 || copies[i] > 1:
			copies[i] = 2
		}
	}
	rs.found(copies, true)
}
