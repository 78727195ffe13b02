package agui2aap

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"strings"
	"time"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/events"
	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"
	"github.com/gin-gonic/gin"
	"github.com/rs/zerolog"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/agui"
	"github.com/aapagui/aapagui/bridge/internal/metrics"
	"github.com/aapagui/aapagui/bridge/internal/tracing"
	"github.com/aapagui/aapagui/bridge/internal/web"
	"github.com/aapagui/aapagui/internal/ident"
	"github.com/aapagui/aapagui/store"
	"github.com/aapagui/aapagui/translate"
)

// run answers POST /agents/:name: a run of the thread, streamed as AG-UI
// events. A run that fails before its stream begins is answered with a
// JSON error (fail); one the AG-UI interrupt rules refuse, with RUN_STARTED
// then RUN_ERROR (refuse).
func (s *Server) run(c *gin.Context) {
	in, err := s.serveRun(c)
	var ref *refusal
	switch {
	case errors.As(err, &ref):
		web.Logger(c).Info().Str("code", ref.code).Str("thread", in.ThreadID).Msg("run refused")
		s.refuse(c, in, ref)
	case err != nil:
		s.fail(c, err)
	}
}

// serveRun reads the run's input, takes its thread and runs it; an error
// is returned before the stream began (with the input as far as it was
// read).
func (s *Server) serveRun(c *gin.Context) (*types.RunAgentInput, error) {
	log := web.Logger(c)
	ctx := c.Request.Context()
	in, err := readRunInput(c.Request.Body)
	if err != nil {
		return nil, err
	}
	name := c.Param("name")
	cl, info, err := s.agent(ctx, c.Request, name)
	if err != nil {
		return in, err
	}
	r := &runner{s: s, w: c.Writer, start: metrics.RequestStart(c), cl: cl, in: in, info: info, log: log}
	if r.clientTools, r.fwd, err = runOptions(in); err != nil {
		return in, err
	}

	owner := c.GetString(ownerKey)
	if r.lease, err = s.takeThread(ctx, log, owner, in.ThreadID, runBusy); err != nil {
		return in, err
	}
	defer r.lease.Release()
	// A run whose lock was lost (this process stalled past the lease)
	// stops rather than run beside the run that took it over.
	ctx, unbind := r.lease.Bind(ctx)
	defer unbind()
	ctx, endRun, stopRun := web.TurnContext(ctx, s.cfg.MaxTurnDuration)
	defer stopRun()
	// The request carries the run's context while the run goes on; the
	// error returned is answered under the request's own, which tells
	// whether its client left (web.Left), not that the run ended.
	req := c.Request
	c.Request = req.WithContext(ctx)
	defer func() { c.Request = req }()
	r.end = endRun

	if r.th, err = s.loadThread(ctx, owner, in.ThreadID); err != nil {
		return in, err
	}
	if isHydration(in) {
		return in, s.hydrate(c, cl, info, in, r.th)
	}
	if r.th == nil {
		if err := s.roomForThread(ctx, log, owner); err != nil {
			return in, err
		}
	}
	if r.p, err = s.makePlan(r.th, in, name); err != nil {
		return in, err
	}
	if r.th == nil {
		r.th = &store.Thread{Owner: owner, ID: in.ThreadID}
	}
	return in, r.execute(ctx)
}

// runBusy is the message of a run that finds its thread held by another.
func runBusy(left time.Duration) string {
	return fmt.Sprintf("a run is already in progress on this thread; wait for it to finish (its lock runs out in %.1f s unless the run is still alive)", left.Seconds())
}

// readRunInput reads and checks the request's RunAgentInput; a run
// without an id gets one.
func readRunInput(body io.Reader) (*types.RunAgentInput, error) {
	data, err := io.ReadAll(body)
	if err != nil {
		return nil, web.BodyFailure(err)
	}
	in, err := agui.DecodeRunAgentInputLazy(data)
	if err != nil {
		return nil, web.Fail(web.KindInvalid, "invalid_body", "the body is not a RunAgentInput: "+err.Error())
	}
	if strings.TrimSpace(in.ThreadID) == "" {
		return nil, badInput("threadId is required")
	}
	if err := checkInput(in); err != nil {
		return nil, badInput("%s", err.Error())
	}
	if in.RunID == "" {
		in.RunID = ident.Random("run-")
	}
	return in, nil
}

// agent returns the client speaking the AAP server's version for the
// request and the agent name names there.
func (s *Server) agent(ctx context.Context, r *http.Request, name string) (*aap.Client, *aap.AgentInfo, error) {
	cl, key := s.client(r)
	cl, meta, err := s.upstream(ctx, cl, key)
	if err != nil {
		return nil, nil, &upstreamError{err}
	}
	info, ok := meta.Agent(name)
	if !ok {
		return nil, nil, web.Fail(web.KindNotFound, "unknown_agent", "no agent "+name+" on the AAP server")
	}
	return cl, info, nil
}

// runOptions are the run's client tools in AAP form and what its
// forwardedProps ask of the agent.
func runOptions(in *types.RunAgentInput) ([]aap.ToolSpec, *translate.Forwarded, error) {
	clientTools, err := translate.ToolsToAAP(in.Tools)
	if err != nil {
		return nil, nil, badInput("%s", err.Error())
	}
	fwd, err := translate.ForwardedFrom(in.ForwardedProps)
	if err != nil {
		return nil, nil, badInput("%s", err.Error())
	}
	return clientTools, fwd, nil
}

// loadThread reads the thread; nil for one the store does not have.
func (s *Server) loadThread(ctx context.Context, owner, id string) (*store.Thread, error) {
	th, err := s.cfg.Store.GetThread(ctx, owner, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, &storeError{"get thread", err}
	}
	return th, nil
}

// refuse answers a run that breaks the AG-UI interrupt rules: RUN_STARTED
// then RUN_ERROR with the rule's code.
func (s *Server) refuse(c *gin.Context, in *types.RunAgentInput, ref *refusal) {
	t := translate.NewAAPToAGUI(translate.AAPToAGUIOptions{ThreadID: in.ThreadID, RunID: in.RunID})
	out := web.NewStream(c.Writer)
	out.Start()
	writeAGUI(out, t.Fail(inBand(ref)), web.Logger(c))
	out.Flush()
}

// writeAGUI appends AG-UI events as SSE frames, encoding each in place:
// AppendEvent writes compact JSON, which has no raw line breaks, so one
// "data:" line holds it.
func writeAGUI(out *web.Stream, evs []events.Event, log *zerolog.Logger) {
	buf := out.Buffer()
	for _, ev := range evs {
		start := len(buf)
		buf = append(buf, "data: "...)
		var err error
		if buf, err = agui.AppendEvent(buf, ev); err != nil {
			log.Error().Err(err).Str("event", string(ev.Type())).Msg("encoding an AG-UI event")
			buf = buf[:start]
			continue
		}
		buf = append(buf, '\n', '\n')
	}
	out.Commit(buf)
}

// runner carries one run through its AAP turns. It holds what the run
// needs of its request (the response writer, the request's start, the
// request's logger); the run's context is passed to its steps.
type runner struct {
	s           *Server
	w           http.ResponseWriter
	start       time.Time // the request's (metrics.RequestStart)
	cl          *aap.Client
	in          *types.RunAgentInput
	info        *aap.AgentInfo
	th          *store.Thread
	p           *plan
	log         *zerolog.Logger
	clientTools []aap.ToolSpec
	fwd         *translate.Forwarded
	lease       *store.Lease             // the thread's run lock; its release frees the thread for the next run
	end         context.CancelCauseFunc  // ends the run: its client stopped reading
	finished    *events.RunFinishedEvent // held back until the thread is saved
	put         *aap.PutSessionRequest   // the first turn of a new session, on a version 1 or 2 server
	movedFrom   string                   // the session a PUT /session replaces ("" for a thread's first)

	out      *web.Stream
	a2g      *translate.AAPToAGUI
	clients  map[string]bool // client tool names
	results  map[string]bool // toolCallIds with a tool_result in this run
	answered answers         // the permissions the current turn answers
	followUp int

	// For the run's metrics and log line (web.EndTurn).
	t          *metrics.Turn
	stop       string // the stop reason of the last turn
	result     string // the upstream's result: ok, cancelled or an error code
	openBefore int    // interrupts open when the run started
}

func (r *runner) mode() aap.StreamMode {
	caps := r.info.Capabilities
	switch {
	case caps.SupportsStream(aap.StreamDelta):
		return aap.StreamDelta
	case caps.SupportsStream(aap.StreamMessage):
		return aap.StreamMessage
	}
	return aap.StreamNone
}

// execute runs the plan: it opens the turn (on a new session when the AAP
// server lost the thread's), streams it to the client and saves the
// thread. An error is returned only before the stream began.
func (r *runner) execute(ctx context.Context) error {
	in := r.in
	r.t = r.s.metrics.StartTurn(r.start, r.info.Name, string(r.mode()))
	tracing.Agent(ctx, r.info.Name)
	r.result, r.openBefore = metrics.OutcomeOK, len(r.th.Interrupts)
	defer func() {
		web.EndTurn(r.log, r.t, web.TurnEnd{What: "run", IDKey: "thread", ID: in.ThreadID, Stop: r.stop, Upstream: r.result})
	}()
	req, err := r.begin(ctx)
	if err != nil {
		return err
	}
	r.prepareStream()
	defer r.out.Done()
	evs, err := r.openFirst(ctx, req)
	if err != nil {
		return err
	}
	r.travelLight()
	r.out.Start()
	r.pump(ctx, evs, req)
	if r.th.SessionID == "" {
		r.log.Warn().Str("thread", in.ThreadID).Msg("the AAP server's PUT /session answer named no session (no session_start): the next run starts a new session")
	}
	r.finish(ctx)
	return nil
}

// prepareStream sets up the translator and the client's stream.
func (r *runner) prepareStream() {
	r.clients = map[string]bool{}
	for _, t := range r.in.Tools {
		r.clients[t.Name] = true
	}
	interrupting := r.s.cfg.Policy == PolicyInterrupt
	r.a2g = translate.NewAAPToAGUI(translate.AAPToAGUIOptions{
		ThreadID: r.in.ThreadID, RunID: r.in.RunID,
		// Under a grant or deny policy nothing is ever interrupted.
		IsClientTool: func(name string) bool { return r.clients[name] || !interrupting },
	})
	r.results = map[string]bool{}
	r.out = web.NewStream(r.w)
	r.out.KeepAlive = r.s.cfg.KeepAlive
	r.out.StallTimeout = r.s.cfg.StallTimeout
	r.out.Cancel = r.end
}

// openFirst opens the run's first turn. When the AAP server forgot the
// thread's session (an in-memory server restarted, expiry, deletion), the
// thread moves to a new session seeded with the client's history, as for
// a rewritten history.
func (r *runner) openFirst(ctx context.Context, req *aap.PostSessionTurnRequest) (iter.Seq2[aap.Event, error], error) {
	evs, err := r.open(ctx, r.th.SessionID, req)
	if err != nil && !r.p.fresh && sessionGone(err) {
		r.log.Warn().Str("thread", r.in.ThreadID).Str("session", r.th.SessionID).
			Msg("the AAP server no longer has the thread's session; moving the thread to a new one seeded with the client's history")
		if r.p, err = r.s.lostSessionPlan(r.in); err != nil {
			return nil, err
		}
		if req, err = r.begin(ctx); err != nil {
			return nil, err
		}
		evs, err = r.open(ctx, r.th.SessionID, req)
	}
	if err != nil {
		return nil, &upstreamError{err}
	}
	return evs, nil
}

// finish saves and frees the thread, in one write, before the client sees
// the end of the run: a client that starts its next run at once
// (CopilotKit does, after a frontend tool) must find the thread saved and
// free; and a run whose thread could not be saved does not finish
// (RUN_ERROR STORE_ERROR instead of RUN_FINISHED).
func (r *runner) finish(ctx context.Context) {
	err := r.save(ctx)
	r.lease.Release()
	if fin := r.finished; fin != nil {
		r.finished = nil
		var end events.Event = fin
		if err != nil {
			r.result = "store_error"
			message, code := inBand(errRunNotStored)
			end = &events.RunErrorEvent{BaseEvent: events.NewBaseEvent(events.EventTypeRunError), Message: message, Code: &code}
		}
		r.t.Out(string(end.Type()))
		writeAGUI(r.out, []events.Event{end}, r.log)
	}
	r.out.Flush()
}

// travelLight lets go of what grows with the conversation once the turn
// is under way, so that an open stream's memory does not: the client's
// messages (the thread's title is taken from them first) and the plan's
// seed. With SnapshotAfterRuns the messages stay, for the snapshot at the
// end.
func (r *runner) travelLight() {
	if r.th.Title == "" {
		r.th.Title = threadTitle(r.in.Messages)
	}
	r.p.seed = nil
	if !r.s.cfg.SnapshotAfterRuns {
		r.in.Messages = nil
	}
}

// begin builds the plan's turn request, creating the new session first
// when the plan starts one.
func (r *runner) begin(ctx context.Context) (*aap.PostSessionTurnRequest, error) {
	in, th, p := r.in, r.th, r.p
	toolsDigest := digest(in.Tools)
	contextDigest := ""
	if len(in.Context) > 0 {
		contextDigest = digest(in.Context)
	}
	req := &aap.PostSessionTurnRequest{Stream: r.mode(), Messages: p.turn}
	if u, ok := p.turn[0].(*aap.UserMessage); ok {
		if contextDigest != "" && (p.fresh || contextDigest != th.ContextDigest) {
			req.Messages = []aap.Message{withContext(u, in.Context)}
		}
		// Remember what the session has seen, so that context that goes
		// away and comes back is sent again.
		th.ContextDigest = contextDigest
	}
	if p.fresh {
		agent := aap.AgentConfig{Name: r.info.Name, Tools: r.s.cfg.serverTools(r.info)}
		if r.fwd != nil && r.fwd.Agent != nil {
			if r.fwd.Agent.Tools != nil {
				agent.Tools = r.fwd.Agent.Tools
			}
			agent.Options = r.fwd.Agent.Options
		}
		if v, err := r.cl.Version(ctx); err == nil && v != aap.Version3 {
			return r.beginPut(ctx, req, agent, contextDigest, toolsDigest)
		}
		created, err := r.cl.CreateSession(ctx, &aap.PostSessionsRequest{Agent: agent, Messages: p.seed, Tools: r.clientTools})
		r.result = r.s.upstreamCall(ctx, "create_session", r.info.Name, err)
		if err != nil {
			return nil, &upstreamError{err}
		}
		r.sessionLog(th.SessionID, created.SessionID)
		th.SessionID, th.Agent, th.Delivered, th.ClientCalls, th.Interrupts = created.SessionID, r.info.Name, nil, nil, nil
		th.ToolsDigest = toolsDigest
	} else {
		if toolsDigest != th.ToolsDigest {
			req.Tools = r.clientTools
			if req.Tools == nil {
				req.Tools = []aap.ToolSpec{}
			}
			th.ToolsDigest = toolsDigest
		}
		if r.fwd != nil && r.fwd.Agent != nil {
			req.Agent = &aap.AgentConfig{Tools: r.fwd.Agent.Tools, Options: r.fwd.Agent.Options}
		}
	}
	return req, nil
}

// beginPut prepares the first turn of a new session on a version 1 or 2
// server: PUT /session with the seed and a user message, the session's id
// coming with the answer (session_start). A plan whose turn is tool
// results or permissions cannot start a session there: the last user
// message of the seed is asked again, as a fresh session of a history
// ending with the agent's own tool results is (see MAPPING).
func (r *runner) beginPut(ctx context.Context, req *aap.PostSessionTurnRequest, agent aap.AgentConfig, contextDigest, toolsDigest string) (*aap.PostSessionTurnRequest, error) {
	in, th, p := r.in, r.th, r.p
	seed := p.seed
	if _, ok := req.Messages[0].(*aap.UserMessage); !ok {
		u := len(seed) - 1
		for u >= 0 && seed[u].Role() != aap.RoleUser {
			u--
		}
		if u < 0 {
			return nil, badInput("the AAP server (protocol version %d) starts a session with a user message, and the history has none to start from", r.version(ctx))
		}
		r.log.Warn().Str("thread", in.ThreadID).Int("version", r.version(ctx)).Int("answers", len(req.Messages)).
			Msg("a new session on a version 1 or 2 AAP server starts with a user message: the last one is asked again, without the tool results or permissions this run brought")
		msg := seed[u]
		if um, ok := msg.(*aap.UserMessage); ok && contextDigest != "" {
			msg = withContext(um, in.Context)
		}
		th.ContextDigest = contextDigest
		seed, req.Messages = seed[:u], []aap.Message{msg}
	}
	r.put = &aap.PutSessionRequest{
		Agent: agent, Stream: req.Stream, Tools: aap.ToolSpecsToV1(r.clientTools),
		Messages: append(seed[:len(seed):len(seed)], req.Messages...),
	}
	// The session's id comes with the answer (started).
	r.movedFrom = th.SessionID
	th.SessionID, th.Agent, th.Delivered, th.ClientCalls, th.Interrupts = "", r.info.Name, nil, nil, nil
	th.ToolsDigest = toolsDigest
	return req, nil
}

// version is the protocol version of the AAP server (3 when it cannot be
// told, which the run would already have failed on).
func (r *runner) version(ctx context.Context) int {
	v, err := r.cl.Version(ctx)
	if err != nil {
		return aap.Version3
	}
	return v
}

// started records the id of the session a PUT /session created.
func (r *runner) started(id string) {
	r.th.SessionID = id
	r.sessionLog(r.movedFrom, id)
}

// sessionLog logs the thread's new AAP session: "started" for a thread's
// first, "moved" when it replaces the session from (a rewritten history,
// a session the AAP server lost).
func (r *runner) sessionLog(from, id string) {
	if from == "" {
		r.log.Info().Str("thread", r.in.ThreadID).Str("session", id).Int("seed", len(r.p.seed)).Msg("thread started on a new AAP session")
		return
	}
	r.log.Info().Str("thread", r.in.ThreadID).Str("session", id).Str("from", from).Int("seed", len(r.p.seed)).Msg("thread moved to a new AAP session")
}

// sessionGone reports an AAP server's 404 for the thread's session.
func sessionGone(err error) bool {
	var he *aap.HTTPError
	return errors.As(err, &he) && he.StatusCode == http.StatusNotFound
}

// open starts a turn and returns its events; an error before any event is
// the upstream refusing the turn.
func (r *runner) open(ctx context.Context, session string, req *aap.PostSessionTurnRequest) (iter.Seq2[aap.Event, error], error) {
	put := r.put // the turn starts a session on a version 1 or 2 server
	r.put = nil
	if req.Stream == aap.StreamNone {
		var resp *aap.PostSessionTurnResponse
		var err error
		var evs []aap.Event
		if put != nil {
			var pr *aap.PutSessionResponse
			if pr, err = r.cl.PutSession(ctx, put); err == nil {
				resp, evs = pr.Turn(), []aap.Event{&aap.SessionStart{SessionID: pr.SessionID}}
			}
		} else {
			resp, err = r.cl.Turn(ctx, session, req)
		}
		if err != nil {
			r.result = r.s.upstreamCall(ctx, "turn", r.info.Name, err)
			return nil, err
		}
		evs = append(evs, translate.EventsFromResponse(resp)...)
		return func(yield func(aap.Event, error) bool) {
			for _, ev := range evs {
				if !yield(ev, nil) {
					return
				}
			}
		}, nil
	}
	// The response headers are waited for ConnectTimeout at most; then the
	// stream may run as long as it keeps sending within IdleTimeout.
	ctx, cancel, connected := web.Connect(ctx, r.s.cfg.ConnectTimeout)
	var body io.ReadCloser
	var err error
	if put != nil {
		body, err = r.cl.OpenPutSession(ctx, put)
	} else {
		body, err = r.cl.OpenTurn(ctx, session, req)
	}
	if err = connected(err); err != nil {
		if body != nil {
			body.Close() // the timer fired just as the headers arrived
		}
		cancel(nil)
		r.result = r.s.upstreamCall(ctx, "turn", r.info.Name, err)
		return nil, err
	}
	idle := web.IdleTimeout(body, r.s.cfg.IdleTimeout, cancel)
	return func(yield func(aap.Event, error) bool) {
		defer cancel(nil)
		defer idle.Close()
		for ev, err := range aap.ReadEvents(web.FlushBeforeRead(idle, r.out), r.s.cfg.MaxEventSize) {
			if err == nil {
				idle.Touch()
			}
			if !yield(ev, err) || err != nil {
				return
			}
		}
	}, nil
}

// pump translates the turn's events to the client, running follow-up turns
// when the permission policy answers for the client.
func (r *runner) pump(ctx context.Context, evs iter.Seq2[aap.Event, error], req *aap.PostSessionTurnRequest) {
	r.answered = answersOf(req.Messages)
	for {
		next := r.stream(ctx, evs)
		if next == nil {
			break
		}
		if r.followUp++; r.followUp > r.s.cfg.MaxFollowUps {
			r.write(r.a2g.Fail(inBand(errTooManyFollowUps)))
			return
		}
		r.answered = answersOf(next)
		fu := &aap.PostSessionTurnRequest{Stream: req.Stream, Messages: next}
		var err error
		if evs, err = r.open(ctx, r.th.SessionID, fu); err != nil {
			r.log.Warn().Err(err).Msg("follow-up turn refused")
			r.write(r.a2g.Fail(inBand(&followUpError{err})))
			return
		}
	}
	if !r.a2g.Done() {
		r.write(r.a2g.Finish())
	}
}

// stream feeds one turn's events to the translator. It returns the
// permissions of a follow-up turn when the turn stopped for untrusted
// server tools only and the policy answers them, else nil.
//
// The result of each call the turn answered with a tool_permission reaches
// the client before anything of the answer that follows it: as the AAP
// server streams it, or, from a server that only stores it, read from the
// session's history when the answer begins. A server that has not stored it
// yet by then (it saves the turn at its end) makes the bridge hold the
// answer back until the turn ends and read the history again.
func (r *runner) stream(ctx context.Context, evs iter.Seq2[aap.Event, error]) []aap.Message {
	first := r.followUp == 0
	r.stop = ""
	result := "" // set by a failure; else worked out from the stop reason
	defer func() { r.turnDone(result) }()
	h := holdback{missing: r.missingResults()}
	for ev, err := range evs {
		if err != nil {
			if h.holding {
				r.release(ctx, &h)
			}
			result = r.failed(ctx, err)
			return nil
		}
		r.countIn(ev)
		switch e := ev.(type) {
		case *aap.TurnStart:
			if !first {
				continue // one run, several turns
			}
		case *aap.ToolResult:
			if r.lateResult(ctx, &h, e) {
				continue
			}
		case *aap.SessionStart:
			r.started(e.SessionID)
			continue
		case *aap.UnknownEvent:
			r.log.Debug().Str("event", string(e.Name)).Msg("unknown AAP event skipped")
			continue
		case *aap.TurnStop:
			r.stop = string(e.StopReason)
		}
		if r.holdBack(ctx, &h, ev) {
			continue
		}
		if next := r.policyTurn(ev); next != nil {
			return next
		}
		r.feed(ev)
		if r.a2g.Done() {
			return nil
		}
	}
	if h.holding {
		r.release(ctx, &h)
	}
	return nil
}

// holdback is the answer of a turn held back while results of the calls
// it answered are missing (see stream).
type holdback struct {
	missing map[string]permission // answered calls without a result yet
	held    []aap.Event           // the answer, held back while results are missing
	holding bool
}

// missingResults are the calls the turn answers whose results the client
// has not been sent.
func (r *runner) missingResults() map[string]permission {
	missing := map[string]permission{}
	for id, p := range r.answered.by {
		if !r.results[id] {
			missing[id] = p
		}
	}
	return missing
}

// countIn counts an event from the upstream, by name (bounded: an unknown
// event's name is whatever the server sent).
func (r *runner) countIn(ev aap.Event) {
	if _, unknown := ev.(*aap.UnknownEvent); unknown {
		r.t.In("unknown")
	} else {
		r.t.In(string(ev.EventName()))
	}
}

// lateResult records a tool result. One that was missing while the answer
// is held back goes to the client at once, before the answer (true: ev is
// done with), releasing the answer once none is missing.
func (r *runner) lateResult(ctx context.Context, h *holdback, e *aap.ToolResult) bool {
	r.results[e.ToolCallID] = true
	_, wanted := h.missing[e.ToolCallID]
	delete(h.missing, e.ToolCallID)
	if !wanted || !h.holding {
		return false
	}
	r.feed(e)
	if len(h.missing) == 0 {
		r.release(ctx, h)
	}
	return true
}

// holdBack starts holding the answer back when it begins while results
// are missing and the AAP server has not stored them either; it returns
// true for an event held back. The turn's end releases what was held.
func (r *runner) holdBack(ctx context.Context, h *holdback, ev aap.Event) bool {
	if len(h.missing) > 0 && !h.holding && answerBegins(ev) {
		r.storedResults(ctx, h.missing, false)
		h.holding = len(h.missing) > 0
	}
	if !h.holding {
		return false
	}
	if _, stop := ev.(*aap.TurnStop); !stop {
		h.held = append(h.held, ev)
		return true
	}
	r.release(ctx, h)
	return false
}

// release sends the results still missing (read from the session's
// history) and then the answer held back.
func (r *runner) release(ctx context.Context, h *holdback) {
	r.storedResults(ctx, h.missing, true)
	h.holding = false
	for _, ev := range h.held {
		r.feed(ev)
	}
	h.held = nil
}

// policyTurn returns the permissions of a follow-up turn when ev ends the
// turn for tool calls the grant or deny policy answers; else nil.
func (r *runner) policyTurn(ev aap.Event) []aap.Message {
	if e, ok := ev.(*aap.TurnStop); ok && e.StopReason == aap.StopToolUse && r.s.cfg.Policy != PolicyInterrupt {
		return r.policyAnswers()
	}
	return nil
}

// failed ends the run for a failure of its turn's stream (RUN_ERROR with
// the failure's code, unless the client is gone) and logs it; it returns
// the upstream's result for the metrics and the run's log line.
func (r *runner) failed(ctx context.Context, err error) string {
	cause := context.Cause(ctx)
	switch {
	case ctx.Err() != nil && errors.Is(cause, store.ErrLeaseLost):
		r.log.Error().Err(cause).Msg("the run stopped: its lock could not be kept")
		r.write(r.a2g.Fail(inBand(cause)))
		return "lease_lost"
	case ctx.Err() != nil && errors.Is(cause, web.ErrClientStalled):
		r.log.Info().Msg("client stopped reading; upstream turn cancelled")
		return metrics.OutcomeCancelled
	case ctx.Err() != nil && !errors.Is(cause, web.ErrTurnTooLong):
		r.log.Info().Msg("client went away; upstream turn cancelled")
		return metrics.OutcomeCancelled
	case ctx.Err() != nil:
		err = cause
	}
	code, msg := web.StreamFailure(err)
	r.log.Warn().Err(err).Str("code", code).Msg(msg)
	r.write(r.a2g.Fail(inBand(err)))
	return code
}

// policyAnswers returns the permissions the policy gives when every pending
// call is an untrusted server tool; nil otherwise (client tools pending:
// the run ends and the policy answers with the client's results).
func (r *runner) policyAnswers() []aap.Message {
	var out []aap.Message
	for _, c := range r.a2g.PendingCalls() {
		if r.clients[c.Name] {
			return nil
		}
		out = append(out, r.s.policyPermission(c.ToolCallID))
	}
	return out
}

func (r *runner) feed(ev aap.Event) {
	out, err := r.a2g.Feed(ev)
	if err != nil && !errors.Is(err, translate.ErrTerminated) {
		r.log.Warn().Err(err).Msg("AAP event could not be translated")
	}
	r.write(out)
}

// write sends AG-UI events to the client, counting them. With
// Config.SnapshotAfterRuns a MESSAGES_SNAPSHOT of the thread goes right
// before RUN_FINISHED.
func (r *runner) write(evs []events.Event) {
	if r.s.cfg.SnapshotAfterRuns {
		for i, ev := range evs {
			if _, ok := ev.(*events.RunFinishedEvent); ok {
				evs = append(append(append([]events.Event{}, evs[:i]...), events.NewMessagesSnapshotEvent(r.threadMessages())), evs[i:]...)
				break
			}
		}
	}
	if n := len(evs); n > 0 {
		if fin, ok := evs[n-1].(*events.RunFinishedEvent); ok {
			r.finished, evs = fin, evs[:n-1] // sent once the thread is saved
		}
	}
	for _, ev := range evs {
		r.t.Out(string(ev.Type()))
	}
	writeAGUI(r.out, evs, r.log)
}

// threadMessages is the whole thread as the client should now hold it:
// its messages (activity aside) and those the run produced, a produced
// result for a call the client answered itself left out.
func (r *runner) threadMessages() []types.Message {
	out := make([]types.Message, 0, len(r.in.Messages)+8)
	answered := map[string]bool{}
	for _, m := range r.in.Messages {
		if m.Role == types.RoleActivity {
			continue
		}
		if m.Role == types.RoleTool {
			answered[m.ToolCallID] = true
		}
		out = append(out, m)
	}
	for _, m := range r.a2g.Messages() {
		if m.Role == types.RoleTool && answered[m.ToolCallID] {
			continue
		}
		out = append(out, m)
	}
	return out
}

// turnDone counts an upstream turn that streamed: its result is the
// failure's, or worked out from how it stopped (an agent error, no stop at
// all, or ok).
func (r *runner) turnDone(result string) {
	switch {
	case result != "":
	case r.stop == "":
		result, _ = web.StreamFailure(nil)
	case r.stop == string(aap.StopError):
		result = web.AgentError
	default:
		result = metrics.OutcomeOK
	}
	r.s.metrics.Upstream("turn", r.info.Name, result)
	r.result = result
}

// save records what the session has now seen: the client's messages this
// run delivered and the messages the run produced (by the ids the client
// will send them back under), the calls still waiting, and the open
// interrupts.
//
// The save is tried again while the run's lease holds (a thread's save is
// the same whether an earlier try was stored or not); the error it returns
// means the thread is not saved and the run must not finish.
func (r *runner) save(ctx context.Context) error {
	th := r.th
	th.Delivered = append(th.Delivered, r.p.delivered...)
	for _, m := range r.a2g.Messages() {
		if m.Role != types.RoleReasoning {
			th.Delivered = append(th.Delivered, m.ID)
		}
	}
	th.ClientCalls, th.Interrupts = nil, nil
	for _, call := range r.a2g.PendingCalls() {
		if r.clients[call.Name] {
			th.ClientCalls = append(th.ClientCalls, call.ToolCallID)
		} else {
			th.Interrupts = append(th.Interrupts, translate.PermissionInterrupt(call))
		}
	}
	th.RunID = r.in.RunID
	if th.Title == "" {
		th.Title = threadTitle(r.in.Messages)
	}
	// Saved even when the client has gone: a context not cancelled with
	// the request's, which lends it only its values (the trace).
	ctx = context.WithoutCancel(ctx)
	err := r.lease.ReleaseWith(func(holder string) error {
		ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		return r.s.cfg.Store.SaveThreadUnlock(ctx, th, holder)
	})
	if err != nil {
		r.log.Error().Err(err).Str("thread", th.ID).Msg("store: save thread: the run ends with RUN_ERROR")
		return err
	}
	r.s.metrics.InterruptsChanged(len(th.Interrupts) - r.openBefore)
	return nil
}
