package aap2agui

import (
	"context"
	"errors"
	"time"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"
	"github.com/gin-gonic/gin"
	"github.com/rs/zerolog"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/internal/edge"
	"github.com/aapagui/aapagui/bridge/internal/fault"
	"github.com/aapagui/aapagui/bridge/internal/metrics"
	"github.com/aapagui/aapagui/bridge/internal/turns"
	"github.com/aapagui/aapagui/bridge/internal/upstream"
	"github.com/aapagui/aapagui/store"
	"github.com/aapagui/aapagui/translate"
)

// turnV3 answers POST /sessions/:id/turns (version 3).
func (s *Server) turnV3(c *gin.Context) error {
	var req aap.PostSessionTurnRequest
	if err := readBody(c, &req); err != nil {
		return err
	}
	if err := checkCarried(c, req.AGUI); err != nil {
		return err
	}
	_, err := s.runTurn(c, c.Param("id"), &req, turnForm)
	return err
}

// turnV1 answers POST /session/:id (versions 1 and 2): a turn whose tool
// specs come with inputSchema.
func (s *Server) turnV1(c *gin.Context) error {
	var req aap.SessionTurnRequestV1
	if err := readBody(c, &req); err != nil {
		return err
	}
	_, err := s.runTurn(c, c.Param("id"), req.V3(), turnForm)
	return err
}

// putSession answers PUT /session (versions 1 and 2): it creates the
// session from the messages before the last, then runs the last (a user
// message) as the first turn, whose stream opens with session_start (a
// none answer carries sessionId). A first turn that cannot start (the
// agent cannot be called) takes the session back: the client never
// learned its id.
func (s *Server) putSession(c *gin.Context) error {
	var req aap.PutSessionRequest
	if err := readBody(c, &req); err != nil {
		return err
	}
	create := aap.PostSessionsRequest{Agent: req.Agent, Messages: req.Seed(), Tools: aap.ToolSpecsFromV1(req.Tools)}
	sess, err := s.newSession(c, &create, req.Turn())
	if err != nil {
		return err
	}
	started, err := s.runTurn(c, sess.ID, &aap.PostSessionTurnRequest{Stream: req.Stream, Messages: req.Turn()}, startForm(sess.ID))
	if !started {
		s.takeBack(c, sess)
	}
	return err
}

// takeBack deletes the session of a PUT /session whose first turn did not
// start.
func (s *Server) takeBack(c *gin.Context, sess *store.Session) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(c.Request.Context()), 10*time.Second)
	defer cancel()
	if err := s.cfg.Store.DeleteSession(ctx, sess.Owner, sess.ID); err != nil {
		edge.Logger(c).Error().Err(err).Str("session", sess.ID).Msg("taking back the session of a PUT /session whose first turn did not start")
		return
	}
	s.base.Metrics.InterruptsChanged(-len(sess.Interrupts))
}

// turn is one turn of a session, from its admission to its stored end:
// the request and the form of its answer, the session (held by lease) and
// its history, what admission decided (the run, the entries to store). It
// is the protocol aap2agui gives the turn's sequence (turns.Base.Run):
// its steps are the methods below, in the order Run calls them; once the
// agent took the run, its stream is a turnRun (stream.go).
type sessionTurn struct {
	env   *turnEnv
	log   *zerolog.Logger
	owner string
	id    string // the session's
	req   *aap.PostSessionTurnRequest
	form  answerForm
	rw    gin.ResponseWriter
	carry bool // granted the AG-UI extension (extension.go)

	sess  *store.Session
	agent *agent        // the session's agent
	hist  []store.Entry // the history read under the lock (or cached from the session's last turn here)
	st    *historyCopy  // the store, as the turn writes to it
	adm   *admission
	// prevInterrupts were open before this turn.
	prevInterrupts []types.Interrupt

	body    *upstream.IdleBody // the agent's stream, once it took the run
	saving  <-chan error       // the save of the turn's own messages (save)
	started bool               // the agent took the run: the turn is part of the session
	run     *turnRun
}

// runTurn runs a turn of the session with the given id and answers the
// client, but for an error before its answer began, which it returns. It
// reports whether the agent took the turn: from then on the turn is part
// of the session, whatever happens to the stream.
func (s *Server) runTurn(c *gin.Context, id string, req *aap.PostSessionTurnRequest, form answerForm) (started bool, err error) {
	env := &turnEnv{cfg: &s.cfg, roster: s.roster.Load(), met: s.base.Metrics, cache: s.cache, streaming: &s.streaming}
	t := &sessionTurn{env: env, log: edge.Logger(c), owner: edge.Owner(c), id: id, req: req, form: form, rw: c.Writer, carry: carries(c)}
	err = s.base.Run(c.Request.Context(), c.Writer, turns.LogLine{What: "turn", IDKey: "session", ID: id}, t)
	if t.st != nil {
		// The history the turn leaves is cached for the next (a turn that
		// was stored caches it before the client sees its end: Store).
		env.cache.update(id, t.st)
	}
	return t.started, err
}

// Take takes the session's turn lock, then reads the session and its
// history under it (a turn that just finished may have changed them): one
// round trip on PostgreSQL. A session held by another turn is
// *store.HeldError: 409 turn_in_progress (failure).
func (t *sessionTurn) Take(start context.Context, lo store.LeaseOptions) (*store.Lease, error) {
	st := t.env.cfg.Store
	cached, known := t.env.cache.lookup(t.id)
	lease, sess, hist, err := store.TakeAndLoadSession(start, st, t.owner, t.id, known, lo)
	if err != nil {
		return nil, err
	}
	if sess.KnownHistory(known) {
		hist = cached
	}
	t.sess, t.hist, t.st = sess, hist, newHistoryCopy(st, t.id, sess.HistoryVersion, hist)
	return lease, nil
}

// Prepare checks the turn against the session's agent and admits it
// against the history (admission.go); the plan names the agent, the
// stream mode and, for a turn that streams, the session's run log
// (rejoin.go).
func (t *sessionTurn) Prepare(ctx context.Context, turn *turns.Turn) (turns.Plan, error) {
	plan := turns.Plan{Mode: string(t.req.Mode())}
	var err error
	if t.agent, err = t.env.roster.agentOf(t.sess); err != nil {
		return plan, err
	}
	plan.Agent = t.agent.name()
	if err := t.agent.check(t.req.Agent, t.req.Tools); err != nil {
		return plan, invalid("invalid_request", err.Error())
	}
	if t.adm, err = t.agent.admit(t.log, t.sess, t.hist, t.req); err != nil {
		return plan, err
	}
	turn.OnReport(func() { t.env.met.Upstream("turn", t.agent.name(), turn.Line.Upstream) })
	if t.req.Mode() != aap.StreamNone {
		plan.RunLog = &turns.RunLog{Store: t.env.cfg.Store,
			Log: store.RunLog{Owner: t.sess.Owner, Key: runKey(t.sess.ID), RunID: t.adm.run.RunID, Form: logForm(t.req.Mode(), t.carry)}}
	}
	return plan, nil
}

// Call sends the turn's run to the agent, then stores what admission
// decided (save). A failure of the call is logged here, with the
// session, and is the turn's upstream result.
func (t *sessionTurn) Call(ctx context.Context, turn *turns.Turn) error {
	body, err := t.agent.postTurn(ctx, t.adm)
	if err != nil {
		return t.callFailed(ctx, turn, err)
	}
	if t.saving, err = t.save(ctx); err != nil {
		body.Close()
		return err
	}
	// The agent took the run: from here on the turn is part of the session.
	t.body, t.started = body, true
	return nil
}

// callFailed names a call the agent did not take.
func (t *sessionTurn) callFailed(ctx context.Context, turn *turns.Turn, err error) error {
	if err := fault.CauseOf(ctx, err); errors.Is(err, store.ErrLeaseLost) {
		// The call was cut short by the turn's lock given up, not by
		// the agent: 503 lease_lost (failure), logged by the lease.
		turn.Line.Upstream = "lease_lost"
		return err
	}
	ue := &upstreamError{fault.KindUpstream, "upstream_error", "the agent could not be called", err}
	errors.As(err, &ue)
	if turn.Line.Upstream = ue.code; ctx.Err() != nil {
		turn.Line.Upstream = metrics.OutcomeCancelled
	}
	ev := t.log.Warn()
	if edge.ClientGone(ctx) {
		// No upstream failure: the client went away (answered 499).
		ev = t.log.Debug().Bool("client_left", true)
	}
	ev.Err(ue.detail).Str("session", t.sess.ID).Str("code", ue.code).Msg("upstream failed before the stream")
	return ue
}

// save stores what admission decided, once the agent took the run:
// closing results placed before later messages (the history rewritten),
// then the session with the turn's own messages. Those are saved while
// the agent works on its first event, so that the write and the agent's
// time to first token overlap: the channel delivers the outcome, which
// the stream awaits before anything of the answer reaches the client or
// the store. An answer with an opening of its own saves first (the
// channel is nil).
func (t *sessionTurn) save(ctx context.Context) (<-chan error, error) {
	st, sess := t.st, t.sess
	if t.adm.moved {
		if err := st.ReplaceTail(ctx, sess.ID, 0, t.adm.hist); err != nil {
			return nil, err
		}
	}
	t.prevInterrupts, sess.Interrupts = sess.Interrupts, nil
	if t.form.opening != nil {
		return nil, st.SaveSession(ctx, sess, t.adm.added, "")
	}
	saved, added := make(chan error, 1), t.adm.added
	go func() { saved <- st.SaveSession(ctx, sess, added, "") }()
	return saved, nil
}

// Stream answers the turn with the agent's events, storing what the run
// produces as it goes (turnRun, stream.go).
func (t *sessionTurn) Stream(ctx context.Context, turn *turns.Turn) error {
	defer t.body.Close()
	t.newRun(ctx, turn) // (its frame is large: not kept below the stream's wait)
	if err := t.run.stream(ctx, t.body); err != nil {
		return err
	}
	t.agent.warnUndeclaredApprovals(t.log, t.sess, t.run.obs.callNames)
	return nil
}

// newRun makes the turn's run (turnRun) once the agent took it.
func (t *sessionTurn) newRun(ctx context.Context, turn *turns.Turn) {
	hist, added := t.adm.hist, t.adm.added
	tr := translate.NewAGUIToAAP(translate.AGUIToAAPOptions{Mode: t.req.Mode(), Prior: translate.PriorCallsOf(historyMessages(hist, added)),
		IsAgentTool: t.agent.toolOwners(t.sess.Tools).Agents, PreviewCalls: t.carry,
		Spill: turns.SpillTo(ctx, t.log, "session", t.sess.ID, func(ctx context.Context, p store.TextPart) error {
			return t.st.AddHistoryPart(ctx, t.sess.ID, p)
		})})
	t.run = &turnRun{env: t.env, log: t.log, sess: t.sess, agent: t.agent, turn: turn, prevInterrupts: t.prevInterrupts,
		tr: tr, followUp: newFollowUp(t.agent.cfg.CancelRun, t.adm.run, t.adm.calls, t.adm.movedOn), saving: t.saving,
		movingOn: cancelsWithMessage(t.adm.run), size: turns.MessageSize{Max: t.env.cfg.MaxMessageSize},
		ans: answer{turn: turn, rw: t.rw, mode: t.req.Mode(), form: t.form, w: aapWriter, carry: t.carry && t.req.Mode() != aap.StreamNone}}
	t.run.history = historyWriter{st: t.st, sessID: t.sess.ID, log: t.log, tr: tr,
		own: entryIDs(added), perms: permissionsOf(t.req.Messages), movedOn: t.adm.movedOn, baseLen: len(hist) + len(added)}
	t.run.obs = observer{log: t.log, sess: t.sess, agent: t.agent, tr: tr, met: t.env.met, history: &t.run.history, state: t.sess.State, carry: t.run.ans.carry}
	// What the run took over is not held twice while the stream is open:
	// the run the agent took (its messages, its forwarded props) and the
	// save of the turn's messages, which the run awaits.
	t.adm, t.saving = nil, nil
}

// Store stores the rest of the run (turnRun.store).
func (t *sessionTurn) Store(ctx context.Context, holder string) error {
	return t.run.store(ctx, holder)
}

// Acknowledge sends the turn's stop (turnRun.acknowledge).
func (t *sessionTurn) Acknowledge(_ *turns.Turn, stored error) error {
	return t.run.acknowledge(stored)
}
