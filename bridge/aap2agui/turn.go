package aap2agui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/events"
	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"
	jsonpatch "github.com/evanphx/json-patch/v5"
	"github.com/gin-gonic/gin"
	"github.com/rs/zerolog"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/agui"
	"github.com/aapagui/aapagui/bridge/internal/metrics"
	"github.com/aapagui/aapagui/bridge/internal/web"
	"github.com/aapagui/aapagui/internal/ident"
	"github.com/aapagui/aapagui/internal/sse"
	"github.com/aapagui/aapagui/store"
	"github.com/aapagui/aapagui/translate"
)

// Texts stored for tool calls that a new user message leaves unanswered,
// so that the history handed to the agent stays valid (every call has a
// result).
const unansweredCall = "Tool call was not answered: the user sent a new message instead."

// pending describes what the session is waiting for before the next turn.
type pending struct {
	calls      map[string]string // toolCallId → tool name: calls without a result
	order      []string          // their ids, in order
	interrupts []types.Interrupt // open interrupts
	// own reports a tool the agent runs on its own (Config.OwnTools): the
	// application is not asked for its calls' results.
	own func(name string) bool
}

// pendingState finds the tool calls since the last user message that have
// no tool result yet.
func pendingState(sess *store.Session, hist []store.Entry) pending {
	p := pending{calls: map[string]string{}, interrupts: sess.Interrupts}
	for _, e := range hist {
		switch m := e.Message.(type) {
		case *aap.UserMessage:
			p.calls, p.order = map[string]string{}, nil
		case *aap.AssistantMessage:
			for _, b := range m.Content.Blocks {
				if tu, ok := b.(*aap.ToolUseBlock); ok {
					p.calls[tu.ToolCallID] = tu.Name
					p.order = append(p.order, tu.ToolCallID)
				}
			}
		case *aap.ToolMessage:
			delete(p.calls, m.ToolCallID)
		}
	}
	var order []string
	for _, id := range p.order {
		if _, ok := p.calls[id]; ok {
			order = append(order, id)
		}
	}
	p.order = order
	return p
}

// interruptFor returns the open interrupt that a toolCallId is waiting on.
func (p *pending) interruptFor(toolCallID string) (types.Interrupt, bool) {
	for _, in := range p.interrupts {
		if (in.Reason == translate.InterruptReasonToolCall && in.ToolCallID == toolCallID) || in.ID == toolCallID {
			return in, true
		}
	}
	return types.Interrupt{}, false
}

// checkTurn validates the turn's messages against what the session is
// waiting for and returns the messages to store before the run (tool
// results, and the closing results a new user message implies) and the
// resume entries for cancelled interrupts.
func checkTurn(p pending, msgs []aap.Message) (closing []aap.Message, cancelled []types.ResumeEntry, err error) {
	if u, ok := msgs[0].(*aap.UserMessage); ok && u != nil {
		// A new user message closes whatever is still open.
		for _, id := range p.order {
			closing = append(closing, &aap.ToolMessage{ToolCallID: id, Content: aap.TextContent(unansweredCall)})
		}
		for _, in := range p.interrupts {
			cancelled = append(cancelled, types.ResumeEntry{InterruptID: in.ID, Status: types.ResumeStatusCancelled})
		}
		return closing, cancelled, nil
	}
	answered := map[string]bool{}
	for i, m := range msgs {
		switch m := m.(type) {
		case *aap.ToolMessage:
			in, waiting := p.interruptFor(m.ToolCallID)
			switch {
			case waiting && in.ID != m.ToolCallID:
				return nil, nil, fmt.Errorf("messages[%d]: tool call %q is waiting for a tool_permission, not a result", i, m.ToolCallID)
			case !waiting && p.calls[m.ToolCallID] == "":
				return nil, nil, fmt.Errorf("messages[%d]: no tool call %q is waiting for a result", i, m.ToolCallID)
			}
		case *aap.ToolPermissionMessage:
			if _, waiting := p.interruptFor(m.ToolCallID); !waiting {
				return nil, nil, fmt.Errorf("messages[%d]: tool call %q is not waiting for permission", i, m.ToolCallID)
			}
		}
		answered[toolCallIDOf(m)] = true
	}
	for _, id := range p.order {
		if !answered[id] {
			if _, waiting := p.interruptFor(id); waiting {
				return nil, nil, fmt.Errorf("tool call %q is waiting for a tool_permission: answer every pending call in the same turn", id)
			}
			if p.own != nil && p.own(p.calls[id]) {
				continue // the agent finishes it (an interrupt raised inside the tool, once answered)
			}
			return nil, nil, fmt.Errorf("tool call %q is waiting for its result: answer every pending call in the same turn", id)
		}
	}
	for _, in := range p.interrupts {
		if !answered[in.ToolCallID] && !answered[in.ID] {
			return nil, nil, fmt.Errorf("interrupt %q is open: answer it (tool_permission for tool call %q) in the same turn", in.ID, in.ToolCallID)
		}
	}
	return nil, nil, nil
}

func toolCallIDOf(m aap.Message) string {
	switch m := m.(type) {
	case *aap.ToolMessage:
		return m.ToolCallID
	case *aap.ToolPermissionMessage:
		return m.ToolCallID
	}
	return ""
}

// mergeAgent applies a turn's overrides to the session: server tools
// replace, options merge by key, client tools replace.
func mergeAgent(sess *store.Session, req *aap.PostSessionTurnRequest) {
	sess.Agent.Override(req.Agent)
	if req.Tools != nil {
		sess.Tools = req.Tools
	}
}

// turn answers POST /sessions/:id/turns (version 3).
func (s *Server) turn(c *gin.Context) {
	var req aap.PostSessionTurnRequest
	if !readBody(c, &req) {
		return
	}
	s.runTurn(c, c.Param("id"), &req, false)
}

// turnV1 answers POST /session/:id (versions 1 and 2): a turn whose tool
// specs come with inputSchema.
func (s *Server) turnV1(c *gin.Context) {
	var req aap.SessionTurnRequestV1
	if !readBody(c, &req) {
		return
	}
	s.runTurn(c, c.Param("id"), req.V3(), false)
}

// putSession answers PUT /session (versions 1 and 2): it creates the
// session from the messages before the last, then runs the last (a user
// message) as the first turn, whose stream opens with session_start (a
// none answer carries sessionId). A first turn that cannot start (the
// agent cannot be called) takes the session back: the client never
// learned its id.
func (s *Server) putSession(c *gin.Context) {
	var req aap.PutSessionRequest
	if !readBody(c, &req) {
		return
	}
	create := aap.PostSessionsRequest{Agent: req.Agent, Messages: req.Seed(), Tools: aap.ToolSpecsFromV1(req.Tools)}
	sess, ok := s.newSession(c, &create, req.Turn())
	if !ok {
		return
	}
	if s.runTurn(c, sess.ID, &aap.PostSessionTurnRequest{Stream: req.Stream, Messages: req.Turn()}, true) {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(c.Request.Context()), 10*time.Second)
	defer cancel()
	if err := s.cfg.Store.DeleteSession(ctx, sess.Owner, sess.ID); err != nil {
		web.Logger(c).Error().Err(err).Str("session", sess.ID).Msg("taking back the session of a PUT /session whose first turn did not start")
		return
	}
	s.metrics.InterruptsChanged(-len(sess.Interrupts))
}

// runTurn runs a turn of the session with the given id and answers the
// client. It reports whether the agent took the turn: from then on the
// turn is part of the session, whatever happens to the stream. With
// sessionStart the answer opens with session_start (PUT /session).
func (s *Server) runTurn(c *gin.Context, id string, req *aap.PostSessionTurnRequest, sessionStart bool) (started bool) {
	log := web.Logger(c)
	ctx := c.Request.Context()
	if err := s.checkAgent(req.Agent, req.Tools); err != nil {
		web.Error(c, http.StatusBadRequest, "invalid_request", err.Error())
		return
	}

	// The lock, then the session and its history read under it (a turn
	// that just finished may have changed them): one round trip on
	// PostgreSQL.
	lease, sess, hist, err := store.TakeAndLoadSession(ctx, s.cfg.Store, owner(c), id, store.LeaseOptions{OnError: web.LeaseLog(log, "session", id)})
	var held *store.HeldError
	if errors.As(err, &held) {
		web.Reply(c, web.Locked("turn_in_progress", fmt.Sprintf("a turn is already running in this session; wait for it to finish (its lock runs out in %.1f s unless the turn is still alive)", held.Left.Seconds()), held.Left))
		return
	}
	if err != nil {
		s.storeError(c, err)
		return
	}
	defer lease.Release()
	// A turn whose lock was lost (this process stalled past the lease)
	// stops rather than run beside the turn that took it over.
	ctx, unbind := lease.Bind(ctx)
	defer unbind()
	ctx, endTurn, stopTurn := web.TurnContext(ctx, s.cfg.MaxTurnDuration)
	defer stopTurn()
	c.Request = c.Request.WithContext(ctx)

	a, err := s.admit(sess, hist, req)
	if err != nil {
		refused := err.(*turnRefused)
		web.Error(c, http.StatusBadRequest, refused.code, refused.message)
		return
	}
	hist, added := a.hist, a.added
	// From here on the turn is in flight: it ends with its metrics and
	// its log line, whatever happens.
	t := s.metrics.StartTurn(metrics.RequestStart(c), string(req.Mode()))
	stop, result := "", metrics.OutcomeOK
	defer func() {
		s.metrics.Upstream("turn", result)
		web.EndTurn(log, t, web.TurnEnd{What: "turn", IDKey: "session", ID: sess.ID, Stop: stop, Upstream: result})
	}()
	body, err := s.postTurn(ctx, a.run, a.calls)
	if err != nil {
		ue := &upstreamError{http.StatusBadGateway, "upstream_error", "the agent could not be called", err}
		errors.As(err, &ue)
		if result = ue.code; ctx.Err() != nil {
			result = metrics.OutcomeCancelled
		}
		ev := log.Warn()
		if web.Left(c) {
			// No upstream failure: the client went away (answered 499).
			ev = log.Debug().Bool("client_left", true)
		}
		ev.Err(ue.detail).Str("session", sess.ID).Str("code", ue.code).Msg("upstream failed before the stream")
		web.Error(c, ue.status, ue.code, ue.message)
		return
	}
	defer body.Close()

	// The agent took the run: from here on the turn is part of the session.
	if a.moved {
		// Closing results placed before later messages.
		if err := s.cfg.Store.ReplaceHistory(ctx, sess.ID, hist); err != nil {
			s.storeError(c, err)
			return
		}
	}
	prevInterrupts := sess.Interrupts
	sess.Interrupts = nil
	// The turn's own messages are saved while the agent works on its
	// first event, so that the write and the agent's time to first token
	// overlap; stream waits for the save before anything of the answer
	// reaches the client or the store. A PUT /session saves first: its
	// stream opens with session_start before the agent has said anything.
	var saved chan error
	if sessionStart {
		if err := s.cfg.Store.SaveSession(ctx, sess, added); err != nil {
			s.storeError(c, err)
			return
		}
	} else {
		saved = make(chan error, 1)
		go func() { saved <- s.cfg.Store.SaveSession(ctx, sess, added) }()
	}
	r := &turnRun{s: s, sess: sess, log: log, perms: permissionsOf(req.Messages), prevInterrupts: prevInterrupts,
		tr: translate.NewAGUIToAAP(translate.AGUIToAAPOptions{Mode: req.Mode(), Prior: translate.PriorCallsOf(historyMessages(hist, added))}), baseLen: len(hist) + len(added), own: entryIDs(added), lease: lease, end: endTurn}
	stop, result = r.stream(c, req, body, saved, t, sessionStart)
	return true
}

// admission is what a turn brings to its session, decided before the
// agent is called.
type admission struct {
	hist  []store.Entry // the history, closing results placed in it when moved
	added []store.Entry // the turn's new entries: closing results (unless moved), then its messages
	moved bool          // closing results went before later messages: hist is rewritten
	run   *types.RunAgentInput
	calls map[string]string // the encrypted values of the run's tool calls (post)
}

// turnRefused is a turn the session cannot take: a 400 with code.
type turnRefused struct{ code, message string }

func (e *turnRefused) Error() string { return e.message }

// admit checks a turn against what the session waits for and works out
// its history entries and its run; the error is a *turnRefused.
func (s *Server) admit(sess *store.Session, hist []store.Entry, req *aap.PostSessionTurnRequest) (*admission, error) {
	if req.Agent != nil && req.Agent.Name != "" && req.Agent.Name != sess.Agent.Name {
		return nil, &turnRefused{"invalid_request", fmt.Sprintf("agent.name: a session's agent cannot change (it is %q)", sess.Agent.Name)}
	}
	p := pendingState(sess, hist)
	p.own = s.ownTool
	closing, cancelled, err := checkTurn(p, req.Messages)
	if err != nil {
		return nil, &turnRefused{"invalid_turn", err.Error()}
	}
	mergeAgent(sess, req)

	// The new history entries: closing results, each right after its
	// call, then the turn's own messages (tool permissions are answers,
	// not history).
	closingEntries := make([]store.Entry, len(closing))
	for i, m := range closing {
		closingEntries[i] = store.Entry{Message: m, AGUIID: ident.Random("msg-")}
	}
	var added []store.Entry
	placed, moved := placeResults(hist, closingEntries)
	if moved {
		hist = placed
	} else {
		added = closingEntries
	}
	input, err := translate.TurnToAGUI(req.Messages, nonNil(p.interrupts), func() string { return ident.Random("msg-") })
	if err != nil {
		return nil, &turnRefused{"invalid_turn", err.Error()}
	}
	j := 0
	for _, m := range req.Messages {
		if m.Role() == aap.RoleToolPermission {
			continue
		}
		if tm, ok := m.(*aap.ToolMessage); ok {
			if in, waiting := p.interruptFor(tm.ToolCallID); waiting && in.ID == tm.ToolCallID {
				// The answer to an interrupt presented as a tool call: it
				// goes in resume, and in history as the call's result.
				added = append(added, store.Entry{Message: m, AGUIID: ident.ToolResultMessage(tm.ToolCallID)})
				continue
			}
		}
		added = append(added, store.Entry{Message: m, AGUIID: input.Messages[j].ID})
		j++
	}

	run, err := s.runInput(sess, append(hist[:len(hist):len(hist)], added...), append(cancelled, input.Resume...))
	if err != nil {
		return nil, &turnRefused{"invalid_turn", err.Error()}
	}
	calls := storedToolCallValues(hist, added)
	return &admission{hist: hist, added: added, moved: moved, run: run, calls: calls}, nil
}

// permissionsOf returns the tool permissions among a turn's messages.
func permissionsOf(msgs []aap.Message) []*aap.ToolPermissionMessage {
	var perms []*aap.ToolPermissionMessage
	for _, m := range msgs {
		if pm, ok := m.(*aap.ToolPermissionMessage); ok {
			perms = append(perms, pm)
		}
	}
	return perms
}

// historyMessages returns the messages of the entries of hist, then added.
func historyMessages(hist, added []store.Entry) []aap.Message {
	out := make([]aap.Message, 0, len(hist)+len(added))
	for _, e := range hist {
		out = append(out, e.Message)
	}
	for _, e := range added {
		out = append(out, e.Message)
	}
	return out
}

// deniedText is the tool message AAP prescribes for a denied call.
func deniedText(reason string) string {
	if reason == "" {
		return "Tool call denied"
	}
	return "Tool call denied: " + reason
}

// grantedText is stored for a granted call whose result the agent never
// reported, in a run that went on past it: the call was answered, so it is
// not open, and the history stays valid (every call has a result) without
// claiming a result the agent did not give.
const grantedText = "Tool call granted; the agent did not report its result."

// placeResults returns hist with each entry of results (tool messages)
// placed right after the assistant message holding its call, after the
// tool messages already there; a result whose call is not in hist goes at
// the end. moved reports that some result went before a later message
// (otherwise the results are simply appended, in order).
func placeResults(hist, results []store.Entry) (out []store.Entry, moved bool) {
	if len(results) == 0 {
		return hist, false
	}
	callAt := map[string]int{} // toolCallId → index of its assistant message
	for i, e := range hist {
		if am, ok := e.Message.(*aap.AssistantMessage); ok {
			for _, b := range am.Content.Blocks {
				if tu, ok := b.(*aap.ToolUseBlock); ok {
					callAt[tu.ToolCallID] = i
				}
			}
		}
	}
	after := map[int][]store.Entry{} // index of the last entry to go after → results
	var atEnd []store.Entry
	for _, r := range results {
		i, ok := callAt[toolCallIDOf(r.Message)]
		if !ok {
			atEnd = append(atEnd, r)
			continue
		}
		for i+1 < len(hist) && hist[i+1].Message.Role() == aap.RoleTool {
			i++
		}
		if i == len(hist)-1 {
			atEnd = append(atEnd, r)
			continue
		}
		after[i] = append(after[i], r)
		moved = true
	}
	out = make([]store.Entry, 0, len(hist)+len(results))
	for i, e := range hist {
		out = append(out, e)
		out = append(out, after[i]...)
	}
	return append(out, atEnd...), moved
}

func nonNil(in []types.Interrupt) []types.Interrupt {
	if in == nil {
		return []types.Interrupt{}
	}
	return in
}

// runInput builds the RunAgentInput of a turn.
func (s *Server) runInput(sess *store.Session, hist []store.Entry, resume []types.ResumeEntry) (*types.RunAgentInput, error) {
	msgs := make([]types.Message, 0, len(hist))
	synthetic := map[string]bool{}
	for _, e := range hist {
		m := withoutInterruptCalls(e.Message, synthetic)
		if m == nil {
			continue
		}
		var err error
		from := len(msgs)
		if msgs, err = translate.AppendMessageToAGUI(msgs, m, e.AGUIID); err != nil {
			return nil, err
		}
		msgs = translate.ApplyEncrypted(msgs, from, e.AGUIID, e.AGUI, nil)
		s.toolResultParts(msgs[from:], m)
	}
	tools := translate.ToolsToAGUI(sess.Tools)
	if tools == nil {
		tools = []types.Tool{}
	}
	var state any = map[string]any{}
	if len(sess.State) > 0 {
		state = json.RawMessage(sess.State)
	}
	agent := sess.Agent
	return &types.RunAgentInput{
		ThreadID:       s.cfg.threadID(sess.ID),
		RunID:          ident.Random("run-"),
		State:          state,
		Messages:       msgs,
		Tools:          tools,
		Context:        []types.Context{},
		ForwardedProps: map[string]any{translate.ForwardedPropsKey: translate.Forwarded{Agent: &agent}},
		Resume:         resume,
	}, nil
}

// withoutInterruptCalls hides from the agent the calls of the reserved
// interrupt tool (translate.InterruptToolName) and their answers: they are
// how an AAP application sees the agent's own interrupts, not tool calls
// the agent made (their answers travel as resume entries); and likewise
// the calls of the reserved subagent tool (translate.SubagentToolName),
// how it sees a subagent's run. It returns nil
// for a message with nothing left; seen collects the hidden call ids.
func withoutInterruptCalls(m aap.Message, seen map[string]bool) aap.Message {
	switch m := m.(type) {
	case *aap.AssistantMessage:
		if !m.Content.IsBlocks() {
			return m
		}
		var kept []aap.ContentBlock
		for _, b := range m.Content.Blocks {
			if tu, ok := b.(*aap.ToolUseBlock); ok && (tu.Name == translate.InterruptToolName || tu.Name == translate.SubagentToolName) {
				seen[tu.ToolCallID] = true
				continue
			}
			kept = append(kept, b)
		}
		switch {
		case len(kept) == len(m.Content.Blocks):
			return m
		case len(kept) == 0:
			return nil
		}
		return &aap.AssistantMessage{Content: aap.BlockContent(kept...)}
	case *aap.ToolMessage:
		if seen[m.ToolCallID] {
			return nil
		}
	}
	return m
}

// turnRun is the state of one streaming turn.
type turnRun struct {
	s     *Server
	sess  *store.Session
	tr    *translate.AGUIToAAP
	saved int // history messages of the run already stored
	state json.RawMessage
	log   *zerolog.Logger

	callNames    map[string]string // toolCallId → tool name of the calls this run streamed
	stateChanged bool
	replaced     bool                         // a MESSAGES_SNAPSHOT replaced the history
	own          map[string]bool              // the AG-UI ids of the turn's own entries (its messages, the results it closed)
	snapIDs      map[string]bool              // the AG-UI ids of that snapshot's messages
	perms        []*aap.ToolPermissionMessage // the permissions this turn answers
	enc          encryptedRun                 // the run's encrypted reasoning values (encrypted.go)
	// prevInterrupts were open before this turn.
	prevInterrupts []types.Interrupt

	lease   *store.Lease            // the session's turn lock
	end     context.CancelCauseFunc // ends the turn: its client stopped reading
	stop    *aap.TurnStop           // the turn's stop, held back until the turn is stored
	stopped bool                    // the stop has been let through

	// The answer (stream).
	mode         aap.StreamMode
	sessionStart bool        // the answer opens with session_start (PUT /session)
	out          *web.Stream // the client's event stream
	t            *metrics.Turn
	saving       <-chan error // the save of the turn's own messages, until awaited

	// msgBytes counts what the agent streamed of the message it is
	// building (Config.MaxMessageSize); settled is how many messages had
	// settled when it was reset.
	msgBytes, settled int

	// Checkpoints of the streamed answer (checkpoint.go).
	entries        []store.Entry // the run's entries stored so far
	baseLen        int           // how many entries the history had before them
	baseHist       []store.Entry // those entries, once read (or a snapshot's)
	draft          bool          // a draft is stored after entries
	draftID        string
	lastCheckpoint time.Time
	// The draft's size (msgBytes) and the settled messages when it was
	// last checkpointed.
	ckBytes, ckSettled int
	// uncertain: a write of the run failed, and may or may not have been
	// stored (a connection that broke at the commit): the run's end
	// writes the whole history, which is the same whether it was or not.
	uncertain bool
}

// stream reads the agent's events, writes the AAP response and stores
// what the run produces as it goes.
// It returns the turn's stop reason and the upstream's result (see
// web.EndTurn).
//
// saved, when not nil, delivers the outcome of saving the turn's own
// messages, begun beside the upstream call: nothing of the answer is sent
// or saved before it succeeded, and a failed save ends the turn as a store
// error (500 when nothing has been sent yet, else an error stop), with
// nothing of it stored.
//
// The turn's stop (turn_stop, or the none answer) is sent only once the
// run is stored: a run that cannot be stored ends with an error stop (a
// 500 in mode none), never with a clean end for what is not in history.
func (r *turnRun) stream(c *gin.Context, req *aap.PostSessionTurnRequest, body *upstreamBody, saved <-chan error, t *metrics.Turn, sessionStart bool) (stop, result string) {
	ctx := c.Request.Context()
	r.s.streaming.Add(1)
	defer r.s.streaming.Add(-1)
	r.mode, r.t, r.sessionStart, r.saving = req.Mode(), t, sessionStart, saved
	r.state = r.sess.State
	r.out = web.NewStream(c.Writer)
	r.out.KeepAlive = r.s.cfg.KeepAlive
	r.out.StallTimeout = r.s.cfg.StallTimeout
	r.out.Cancel = r.end
	defer r.out.Done()
	var reader io.Reader = body
	if r.mode != aap.StreamNone {
		r.out.Start()
		reader = web.FlushBeforeRead(body, r.out)
	}
	// History messages that became final (a tool's result settles the
	// call before it) are saved when the agent's stream has nothing more
	// buffered, before what is buffered for the client goes out: a client
	// that has an event finds every message before it stored, and a burst
	// that settles messages and ends the run is one write, at the end.
	// Checkpoints of the message still streaming are due then too, after
	// those saves (a draft is the last entry): the clock is read once per
	// read of the agent's stream, not per event.
	reader = saveBeforeRead{r: reader, save: func() {
		r.saveSettled(ctx)
		r.checkpoint(ctx)
	}}
	if sessionStart && r.mode != aap.StreamNone {
		r.write(ctx, []aap.Event{&aap.SessionStart{SessionID: r.sess.ID}})
	}
	failure, answered := r.read(c, reader, body)
	if answered || !r.awaitSave(c) { // (the agent's stream ended before its first event)
		return string(aap.StopError), "store_error"
	}
	return r.conclude(c, failure)
}

// read feeds the agent's events to the translator and the client until
// the run ends; it returns what cut the stream short, if anything, and
// whether the turn has been answered already (its own messages could not
// be stored).
func (r *turnRun) read(c *gin.Context, reader io.Reader, body *upstreamBody) (failure error, answered bool) {
	ctx := c.Request.Context()
	var dec agui.Decoder
	for frame, err := range sse.Read(reader, sse.ReadOptions{MaxEventSize: r.s.cfg.MaxEventSize}) {
		if r.saving != nil && !r.awaitSave(c) { // the first event only
			return nil, true
		}
		if err != nil {
			return err, false
		}
		body.Touch()
		ev, err := dec.Decode(frame.Data)
		if err != nil {
			return fmt.Errorf("%w: %w", web.ErrBadEvent, err), false
		}
		if _, unknown := ev.(*agui.UnknownEvent); unknown {
			r.t.In("unknown") // bounded: the type is whatever the agent sent
		} else {
			r.t.In(string(ev.Type()))
		}
		r.enc.before(ev, frame.Data)
		if !r.observe(ctx, ev) {
			continue
		}
		if err := r.grow(ev); err != nil {
			return err, false
		}
		evs, err := r.tr.FeedJSON(ev, frame.Data)
		if err != nil {
			r.feedError(err)
		}
		r.enc.after(r.tr, ev, frame.Data)
		r.write(ctx, evs)
		if r.tr.Done() {
			return nil, false
		}
	}
	return nil, false
}

// write sends AAP events to the client (coalesced by the stream), counting
// them; the turn's stop is held back until the turn is stored (sendStop).
func (r *turnRun) write(ctx context.Context, evs []aap.Event) {
	if n := len(evs); n > 0 && !r.stopped {
		if ts, ok := evs[n-1].(*aap.TurnStop); ok {
			r.stop, evs = ts, evs[:n-1]
		}
	}
	buf := r.out.Buffer()
	for _, ev := range evs {
		var err error
		if buf, err = aap.AppendFrame(buf, ev); err != nil {
			r.log.Error().Err(err).Str("event", string(ev.EventName())).Msg("encoding an AAP event")
			continue
		}
		r.t.Out(string(ev.EventName()))
	}
	if r.out.Full(buf) {
		r.saveSettled(ctx) // before a large burst goes out
	}
	r.out.Commit(buf)
}

// awaitSave waits for the turn's own messages to be stored; false: they
// could not be, and the turn has been answered as a store error.
func (r *turnRun) awaitSave(c *gin.Context) bool {
	if r.saving == nil {
		return true
	}
	err := <-r.saving
	r.saving = nil
	if err == nil {
		return true
	}
	if !c.Writer.Written() {
		// Nothing has gone out (headers included): the answer a save
		// failing before the upstream call would get.
		for _, h := range []string{"Content-Type", "Cache-Control", "X-Accel-Buffering"} {
			c.Writer.Header().Del(h)
		}
		r.s.storeError(c, err)
		return false
	}
	// A keep-alive went out while the save waited: end the stream.
	r.log.Error().Err(err).Str("session", r.sess.ID).Msg("store: the turn's messages could not be saved")
	r.write(c.Request.Context(), r.tr.Finish())
	r.sendStop(c.Request.Context(), aap.StopError)
	return false
}

// conclude ends the turn once the agent's stream has: it stores the run,
// frees the session and only then sends the turn's stop (or the none
// answer), an error stop when the run could not be stored.
func (r *turnRun) conclude(c *gin.Context, failure error) (stop, result string) {
	ctx, log, sess := c.Request.Context(), r.log, r.sess
	result = metrics.OutcomeOK
	if failure != nil && !r.tr.Done() {
		result = r.failed(ctx, failure)
	}
	r.write(ctx, r.tr.Finish())
	if r.tr.Incomplete() && failure == nil {
		result, _ = web.StreamFailure(nil)
		log.Warn().Str("session", sess.ID).Msg("the agent's stream ended without RUN_FINISHED")
	}
	if u := r.tr.Usage(); len(u) > 0 {
		r.t.Tokens(sess.Agent.Name, agui.UsageCounts(u))
	}
	if r.tr.Cancelled() {
		result = "agent_cancelled"
		log.Warn().Str("session", sess.ID).Msg("the agent cancelled the run (RUN_FINISHED outcome cancelled): the turn ends with an error stop")
	}
	if re := r.tr.RunError(); re != nil {
		code := ""
		if re.Code != nil {
			code = *re.Code
		}
		result = web.AgentError
		log.Warn().Str("session", sess.ID).Str("agent_code", code).Str("agent_message", re.Message).Msg("the agent reported an error")
	}
	// Save and free the session before the client sees the end of the
	// turn: a client that sends its next turn at once must find the
	// history complete and the session free; and a turn that could not be
	// stored is not acknowledged.
	stored := r.finish(ctx)
	r.lease.Release()
	stopReason := r.tr.StopReason()
	if stored != nil {
		result, stopReason = "store_error", aap.StopError
		log.Error().Err(stored).Str("session", sess.ID).Msg("store: the turn could not be stored; it ends with an error stop")
	}
	switch {
	case r.mode != aap.StreamNone:
		r.sendStop(ctx, stopReason)
	case stored != nil:
		r.s.storeError(c, stored)
	case r.sessionStart:
		resp := r.tr.Response()
		web.JSON(c, http.StatusOK, aap.PutSessionResponse{SessionID: sess.ID, StopReason: resp.StopReason, Messages: resp.Messages})
	default:
		web.JSON(c, http.StatusOK, r.tr.Response())
	}
	if stored == nil {
		r.s.metrics.InterruptsChanged(len(sess.Interrupts) - len(r.prevInterrupts))
	}
	return string(stopReason), result
}

// sendStop writes the turn's stop, with the reason given (the translator's
// own, or error when the run could not be stored), and flushes the stream.
func (r *turnRun) sendStop(ctx context.Context, reason aap.StopReason) {
	stop := r.stop
	if stop == nil {
		stop = &aap.TurnStop{}
	}
	stop.StopReason = reason
	r.stopped = true // write lets it through
	r.write(ctx, []aap.Event{stop})
	r.out.Flush()
}

// failed classifies what ended the agent's stream early and logs it; it
// returns the upstream's result for the metrics and the turn's log line.
func (r *turnRun) failed(ctx context.Context, failure error) string {
	log, id := r.log, r.sess.ID
	cause := context.Cause(ctx)
	switch {
	case ctx.Err() == nil || errors.Is(cause, web.ErrTurnTooLong):
		if ctx.Err() != nil {
			failure = cause
		}
		code, msg := web.StreamFailure(failure)
		log.Warn().Err(failure).Str("session", id).Str("code", code).Msg(msg)
		return code
	case errors.Is(cause, store.ErrLeaseLost):
		log.Error().Err(cause).Str("session", id).Msg("the turn stopped: its lock could not be kept")
		return "lease_lost"
	case errors.Is(cause, web.ErrClientStalled):
		log.Info().Str("session", id).Msg("client stopped reading; upstream call cancelled")
	default:
		log.Info().Str("session", id).Msg("client went away; upstream call cancelled")
	}
	return metrics.OutcomeCancelled
}

// grow counts what ev adds to the message the agent is building and
// refuses an event that would take it past Config.MaxMessageSize.
func (r *turnRun) grow(ev events.Event) error {
	n := deltaSize(ev)
	if n == 0 {
		return nil
	}
	if s := len(r.tr.Settled()); s != r.settled {
		r.settled, r.msgBytes = s, 0
	}
	if max := r.s.cfg.MaxMessageSize; max > 0 && r.msgBytes+n > max {
		return &web.MessageTooLargeError{Limit: max}
	}
	r.msgBytes += n
	return nil
}

// deltaSize is what ev adds to the message being built: the bytes of its
// text, thinking or tool-argument delta.
func deltaSize(ev events.Event) int {
	switch e := ev.(type) {
	case *events.TextMessageContentEvent:
		return len(e.Delta)
	case *events.ToolCallArgsEvent:
		return len(e.Delta)
	case *events.ReasoningMessageContentEvent:
		return len(e.Delta)
	case *events.ThinkingTextMessageContentEvent:
		return len(e.Delta)
	case *events.TextMessageChunkEvent:
		return lenOf(e.Delta)
	case *events.ToolCallChunkEvent:
		return lenOf(e.Delta)
	case *events.ReasoningMessageChunkEvent:
		return lenOf(e.Delta)
	}
	return 0
}

func lenOf(s *string) int {
	if s == nil {
		return 0
	}
	return len(*s)
}

// feedError logs what the translator reported about an event.
func (r *turnRun) feedError(err error) {
	var dropped *translate.DroppedResultError
	switch {
	case errors.As(err, &dropped):
		r.log.Warn().Str("session", r.sess.ID).Str("tool_call_id", dropped.ToolCallID).Str("reason", dropped.Reason).
			Msg("a tool result from the agent left out: history keeps every tool result after its tool_use")
	case !errors.Is(err, translate.ErrTerminated):
		r.log.Warn().Err(err).Str("session", r.sess.ID).Msg("event out of order from the agent")
	}
}

// observe handles the events that change the session rather than the
// stream; it reports whether ev goes on to the translator.
func (r *turnRun) observe(ctx context.Context, ev events.Event) bool {
	switch e := ev.(type) {
	case *events.StateSnapshotEvent:
		b, err := json.Marshal(e.Snapshot)
		if err != nil {
			r.log.Warn().Err(err).Msg("STATE_SNAPSHOT")
			return false
		}
		r.state, r.stateChanged = b, true
		return false
	case *events.StateDeltaEvent:
		r.applyDelta(e)
		return false
	case *events.MessagesSnapshotEvent:
		r.snapshot(ctx, e)
		return false
	case *events.ToolCallStartEvent:
		r.nameCall(e.ToolCallID, e.ToolCallName)
	case *events.ToolCallChunkEvent:
		if e.ToolCallID != nil && e.ToolCallName != nil {
			r.nameCall(*e.ToolCallID, *e.ToolCallName)
		}
	case *events.ToolCallResultEvent:
		r.checkRanAsAllowed(e.ToolCallID)
	case *agui.ToolCallResultPartsEvent:
		r.checkRanAsAllowed(e.ToolCallID)
	case *agui.UnknownEvent:
		r.log.Debug().Str("type", string(e.Type())).Msg("unknown AG-UI event skipped")
		return false
	case *events.StepStartedEvent, *events.StepFinishedEvent, *events.ActivitySnapshotEvent,
		*events.ActivityDeltaEvent, *events.RawEvent, *events.CustomEvent:
		r.log.Debug().Str("type", string(ev.Type())).Msg("AG-UI event with no AAP meaning")
	}
	return true
}

func (r *turnRun) nameCall(id, name string) {
	if r.callNames == nil {
		r.callNames = map[string]string{}
	}
	r.callNames[id] = name
}

// checkRanAsAllowed notes a server tool that the agent ran (its result
// came in the run that made the call) although the session did not enable
// it with trust: the agent config says the agent honours enabling and
// trust (permissions: aap), and it did not. The result is kept (it is what
// happened), the AAP application sees it as it came, and the operator is
// told which tool to declare "permissions: none".
func (r *turnRun) checkRanAsAllowed(toolCallID string) {
	name, ok := r.callNames[toolCallID]
	if !ok || !r.tr.CallOfRun(toolCallID) { // a call of an earlier turn, streamed again
		return
	}
	if _, declared := r.s.cfg.Agent.Tool(name); !declared {
		return
	}
	setting, label := "not enabled", "not_enabled"
	for _, t := range r.sess.Agent.Tools {
		if t.Name == name {
			if t.Trust {
				return
			}
			setting, label = "enabled without trust", "untrusted"
		}
	}
	r.s.metrics.ToolRanAgainstSettings(name, label)
	r.log.Warn().Str("session", r.sess.ID).Str("tool", name).Str("tool_call_id", toolCallID).Str("session_setting", setting).
		Msg("the agent ran a server tool against the session's settings: if it cannot honour enabling and trust, declare the tool with permissions: none in --agent-config")
}

func (r *turnRun) applyDelta(e *events.StateDeltaEvent) {
	ops, err := json.Marshal(e.Delta)
	if err == nil {
		var patch jsonpatch.Patch
		if patch, err = jsonpatch.DecodePatch(ops); err == nil {
			doc := r.state
			if len(doc) == 0 {
				doc = json.RawMessage(`{}`)
			}
			var next []byte
			if next, err = patch.Apply(doc); err == nil {
				r.state, r.stateChanged = next, true
				return
			}
		}
	}
	r.log.Warn().Err(err).Msg("STATE_DELTA could not be applied; state unchanged")
}

// snapshot makes a MESSAGES_SNAPSHOT the session's history.
func (r *turnRun) snapshot(ctx context.Context, e *events.MessagesSnapshotEvent) {
	msgs, err := translate.MessagesToAAP(e.Messages)
	if err != nil {
		r.log.Warn().Err(err).Msg("MESSAGES_SNAPSHOT could not be translated; history unchanged")
		return
	}
	ids := snapshotIDs(e.Messages)
	extras := translate.SnapshotEncrypted(e.Messages, r.enc.snapshot)
	orphans := map[int]bool{}
	for _, i := range translate.OrphanResults(msgs) {
		orphans[i] = true
		r.log.Warn().Str("session", r.sess.ID).Str("tool_call_id", msgs[i].(*aap.ToolMessage).ToolCallID).
			Msg("MESSAGES_SNAPSHOT: a tool message without its tool_use before it, or a second result for its call, left out of history")
	}
	entries := make([]store.Entry, 0, len(msgs))
	for i, m := range msgs {
		if orphans[i] {
			continue
		}
		id := ""
		if i < len(ids) {
			id = ids[i]
		}
		if id == "" {
			id = ident.Random("msg-")
		}
		var agui json.RawMessage
		if i < len(extras) {
			agui = extras[i]
		}
		entries = append(entries, store.Entry{Message: m, AGUIID: id, AGUI: agui})
	}
	if base, err := r.base(ctx); err != nil {
		r.log.Warn().Err(err).Str("session", r.sess.ID).Msg("MESSAGES_SNAPSHOT: the history it replaces could not be read; the interrupt calls and the turn's messages in it are not kept")
	} else {
		entries = keepOwnEntries(append(base[:len(base):len(base)], r.entries...), entries, r.own, r.tr.Messages(), r.tr.MessageIDs())
	}
	if err := r.s.cfg.Store.ReplaceHistory(ctx, r.sess.ID, entries); err != nil {
		r.uncertain = true // it may have been stored: the turn's end writes the history whole
		r.log.Error().Err(err).Msg("storing MESSAGES_SNAPSHOT")
		return
	}
	// The snapshot is the history the run's later messages follow.
	r.baseHist, r.baseLen, r.entries = entries, len(entries), nil
	// What the run said so far is in the snapshot, and so may be the
	// message it is still building: skip it (by id) when it settles.
	r.saved = len(r.tr.Settled())
	r.replaced = true
	r.draft = false // the snapshot replaced any draft
	r.snapIDs = make(map[string]bool, len(entries))
	for _, e := range entries {
		r.snapIDs[e.AGUIID] = true
	}
}

// snapshotIDs gives the AG-UI id of each AAP message MessagesToAAP makes
// from msgs: reasoning folds into the next assistant, activity is skipped.
func snapshotIDs(msgs []types.Message) []string {
	var ids []string
	pendingReasoning := ""
	for _, m := range msgs {
		switch m.Role {
		case types.RoleActivity:
		case types.RoleReasoning:
			if pendingReasoning == "" {
				pendingReasoning = m.ID
			}
		case types.RoleAssistant:
			ids = append(ids, m.ID)
			pendingReasoning = ""
		default:
			if pendingReasoning != "" {
				ids = append(ids, pendingReasoning)
				pendingReasoning = ""
			}
			ids = append(ids, m.ID)
		}
	}
	if pendingReasoning != "" {
		ids = append(ids, pendingReasoning)
	}
	return ids
}

// saveBeforeRead calls save before each read of r.
type saveBeforeRead struct {
	r    io.Reader
	save func()
}

func (s saveBeforeRead) Read(p []byte) (int, error) {
	s.save()
	return s.r.Read(p)
}

// saveSettled stores the run's messages that have become final.
func (r *turnRun) saveSettled(ctx context.Context) {
	settled := r.tr.Settled()
	if len(settled) <= r.saved {
		return
	}
	r.append(ctx, settled, r.tr.MessageIDs())
}

// unsaved are the history entries of msgs not saved yet, with their
// AG-UI ids (ids[i] is msgs[i]'s; a message without one gets a new id).
func (r *turnRun) unsaved(msgs []aap.Message, ids []string) []store.Entry {
	entries := make([]store.Entry, 0, len(msgs)-r.saved)
	for i := r.saved; i < len(msgs); i++ {
		id := ""
		if i < len(ids) {
			id = ids[i]
		}
		if id != "" && r.snapIDs[id] {
			// The snapshot holds it already, but for the interrupt calls
			// the run's end added to it.
			if calls := interruptCalls(msgs[i]); calls != nil {
				entries = append(entries, store.Entry{Message: calls, AGUIID: id + "-interrupts"})
			}
			continue
		}
		agui := r.enc.extras(msgs, i, id)
		if id == "" {
			id = ident.Random("msg-")
		}
		entries = append(entries, store.Entry{Message: msgs[i], AGUIID: id, AGUI: agui})
	}
	return entries
}

func (r *turnRun) append(ctx context.Context, msgs []aap.Message, ids []string) {
	entries := r.unsaved(msgs, ids)
	if r.draft {
		r.entries = append(r.entries, entries...)
		if err := r.replaceDraft(ctx); err != nil {
			r.entries = r.entries[:len(r.entries)-len(entries)]
			r.uncertain = true
			r.log.Error().Err(err).Str("session", r.sess.ID).Msg("storing history")
			return
		}
		r.saved = len(msgs)
		return
	}
	if err := r.s.cfg.Store.AppendHistory(ctx, r.sess.ID, entries); err != nil {
		// Left for the turn's end, which writes the whole history: this
		// append may have been stored all the same.
		r.uncertain = true
		r.log.Error().Err(err).Str("session", r.sess.ID).Msg("storing history")
		return
	}
	r.entries = append(r.entries, entries...)
	r.saved = len(msgs)
}

// finish stores the rest of the run: the last messages, the open
// interrupts and the state; the same write frees the turn's lock. It uses
// a context of its own, not cancelled with the request's (ctx lends it
// only its values: the trace), so that what was received is saved even
// when the client has gone. A write that fails is tried again while the
// lease holds (Lease.ReleaseWith); the error it returns means the run is
// not stored, and the turn must not be acknowledged.
func (r *turnRun) finish(ctx context.Context) error {
	ctx = context.WithoutCancel(ctx)
	msgs := r.tr.Messages()
	ids := r.tr.MessageIDs()
	// The agent refused the run outright (e.g. it did not accept the
	// resume): what it was waiting for is still open.
	refused := r.tr.StopReason() == aap.StopError && len(msgs) == 0
	r.sess.Interrupts = r.tr.Interrupts()
	if refused {
		r.sess.Interrupts = r.prevInterrupts
	}
	if r.stateChanged {
		r.sess.State = r.state
	}
	st := r.s.cfg.Store
	if r.refreshEncrypted(msgs, ids) {
		// Values that came after their messages were stored: the run's
		// entries are written again.
		r.uncertain = true
	}
	if !r.draft && !r.uncertain && len(r.perms) == 0 {
		// The usual end: the last messages and the session in one write.
		// A try whose outcome is unknown may have stored them: a retry
		// first looks.
		entries := r.unsaved(msgs, ids)
		tries := 0
		err := r.lease.ReleaseWith(func(holder string) error {
			wctx, cancel := context.WithTimeout(ctx, writeTimeout)
			defer cancel()
			if tries++; tries > 1 {
				if done, err := r.stored(wctx, entries); err != nil || done {
					return err
				}
			}
			return st.SaveSessionUnlock(wctx, r.sess, entries, holder)
		})
		if err == nil {
			r.entries = append(r.entries, entries...)
			r.saved = len(msgs)
		}
		return err
	}
	// A draft to take out, answered permissions to record, or a write of
	// unknown outcome: the run's entries written as they must be (the
	// whole history when answered permissions go before later messages),
	// then the session, both safe to repeat.
	return r.lease.ReleaseWith(func(holder string) error {
		wctx, cancel := context.WithTimeout(ctx, writeTimeout)
		defer cancel()
		run := append(r.entries[:len(r.entries):len(r.entries)], r.unsaved(msgs, ids)...)
		if err := r.storeRun(wctx, run, refused); err != nil {
			return err
		}
		return st.SaveSessionUnlock(wctx, r.sess, nil, holder)
	})
}

// storeRun makes run the history after the turn's base, with the results
// of the calls this turn answered with a tool_permission and the agent did
// not report placed after their calls: when one goes before a later
// message, the whole history is written.
func (r *turnRun) storeRun(ctx context.Context, run []store.Entry, refused bool) error {
	var results []store.Entry
	if !refused {
		results = r.permissionResults()
	}
	if len(results) == 0 {
		return r.s.cfg.Store.ReplaceTail(ctx, r.sess.ID, r.baseLen, run)
	}
	base, err := r.base(ctx)
	if err != nil {
		return err
	}
	hist := append(base[:len(base):len(base)], run...)
	hist, _ = placeResults(hist, missingResults(hist, results))
	return r.s.cfg.Store.ReplaceHistory(ctx, r.sess.ID, hist)
}

// writeTimeout bounds one try of a turn's last write.
const writeTimeout = 5 * time.Second

// stored reports whether entries (the run's last, each with an AG-UI id
// of its own) are in the session's history: a write whose outcome was
// unknown went through.
func (r *turnRun) stored(ctx context.Context, entries []store.Entry) (bool, error) {
	if len(entries) == 0 {
		return false, nil // writing the session again changes nothing
	}
	hist, err := r.s.cfg.Store.History(ctx, r.sess.ID)
	if err != nil {
		return false, err
	}
	// The turn holds the session's lock: nothing is written after its
	// entries, so they end the history when they were stored.
	return len(hist) > 0 && hist[len(hist)-1].AGUIID == entries[len(entries)-1].AGUIID, nil
}

// permissionResults gives each call this turn answered with a
// tool_permission, and the agent reported no result for, a tool message,
// so that the history stays valid and no later turn takes the call for an
// open one: for a denial the message AAP prescribes ("Tool call denied:
// <reason>"), for a grant grantedText. finish places them right after
// their calls.
func (r *turnRun) permissionResults() []store.Entry {
	if len(r.perms) == 0 {
		return nil
	}
	got := map[string]bool{}
	for _, m := range r.tr.Messages() {
		if tm, ok := m.(*aap.ToolMessage); ok {
			got[tm.ToolCallID] = true
		}
	}
	var missing []store.Entry
	for _, pm := range r.perms {
		if got[pm.ToolCallID] {
			continue
		}
		text := grantedText
		if !pm.Granted {
			text = deniedText(pm.Reason)
		}
		missing = append(missing, store.Entry{
			Message: &aap.ToolMessage{ToolCallID: pm.ToolCallID, Content: aap.TextContent(text)},
			AGUIID:  ident.ToolResultMessage(pm.ToolCallID),
		})
	}
	return missing
}
