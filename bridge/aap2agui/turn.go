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
	"github.com/aapagui/aapagui/bridge/internal/tracing"
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
	_, err := s.runTurn(c, c.Param("id"), &req, sessionTurn)
	return err
}

// turnV1 answers POST /session/:id (versions 1 and 2): a turn whose tool
// specs come with inputSchema.
func (s *Server) turnV1(c *gin.Context) error {
	var req aap.SessionTurnRequestV1
	if err := readBody(c, &req); err != nil {
		return err
	}
	_, err := s.runTurn(c, c.Param("id"), req.V3(), sessionTurn)
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
	started, err := s.runTurn(c, sess.ID, &aap.PostSessionTurnRequest{Stream: req.Stream, Messages: req.Turn()}, sessionStart(sess.ID))
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

// answerForm is what differs between the answer to a turn of a session
// and the answer to PUT /session (versions 1 and 2), chosen once, by the
// handler: the turn itself never asks which route it serves.
type answerForm struct {
	// opening are events the stream opens with, before the agent has
	// said anything. A turn with an opening saves its own messages before
	// the agent is called, not beside it (turn.save): the session the
	// events name is stored when they go out.
	opening []aap.Event
	// none makes the body of the answer in mode none.
	none func(*aap.PostSessionTurnResponse) any
}

// sessionTurn is the answer to a turn of a session.
var sessionTurn = answerForm{none: func(r *aap.PostSessionTurnResponse) any { return r }}

// sessionStart is the answer to PUT /session, which created the session
// with the given id: its stream opens with session_start, its none answer
// carries sessionId.
func sessionStart(id string) answerForm {
	return answerForm{
		opening: []aap.Event{&aap.SessionStart{SessionID: id}},
		none: func(r *aap.PostSessionTurnResponse) any {
			return aap.PutSessionResponse{SessionID: id, StopReason: r.StopReason, Messages: r.Messages}
		},
	}
}

// turn is one turn of a session, from its admission to its stored end:
// the request and the form of its answer, the session (held by lease) and
// its history, what admission decided (the run, the entries to store), the
// log. Its methods are the steps runTurn takes; its stream is a turnRun
// (stream.go).
type turn struct {
	s    *Server
	log  *zerolog.Logger
	req  *aap.PostSessionTurnRequest
	form answerForm

	sess  *store.Session
	agent *agent        // the session's agent
	hist  []store.Entry // the history read under the lock (or kept from the session's last turn here)
	st    *tally        // the store, as the turn writes to it
	life  *turns.Turn   // the session's lease, the turn's stream, metrics and log line
	adm   *admission
	// prevInterrupts were open before this turn.
	prevInterrupts []types.Interrupt
}

// runTurn runs a turn of the session with the given id and answers the
// client, but for an error before its answer began, which it returns. It
// reports whether the agent took the turn: from then on the turn is part
// of the session, whatever happens to the stream.
func (s *Server) runTurn(c *gin.Context, id string, req *aap.PostSessionTurnRequest, form answerForm) (started bool, err error) {
	t := &turn{s: s, log: edge.Logger(c), req: req, form: form}
	ctx, err := t.lock(c.Request.Context(), owner(c), id)
	if err != nil {
		return false, err
	}
	// The history the turn leaves is kept for the next (a streamed turn
	// keeps it before the client sees its end: see turnRun.stream).
	defer func() { s.kept.keep(id, t.st) }()
	defer t.life.Release()
	if t.agent, err = s.agentOf(t.sess); err != nil {
		return false, err
	}
	tracing.Agent(ctx, t.agent.name())
	if err := t.agent.check(req.Agent, req.Tools); err != nil {
		return false, invalid("invalid_request", err.Error())
	}
	// The turn's context is the request's until the turn ends; an error it
	// returns is answered on the request's own (edge.Left asks it whether
	// the client went away: the turn's ends with the turn).
	outer := c.Request
	c.Request = c.Request.WithContext(ctx)
	defer func() { c.Request = outer }()
	if t.adm, err = t.agent.admit(t.log, t.sess, t.hist, req); err != nil {
		return false, err
	}
	// From here on the turn is in flight: it ends with its metrics and
	// its log line, whatever happens.
	t.life.Count(s.base.Metrics, metrics.RequestStart(c), t.agent.name(), string(req.Mode()))
	defer t.ended()
	body, err := t.call(ctx)
	if err != nil {
		return false, err
	}
	defer body.Close()
	saving, err := t.save(ctx)
	if err != nil {
		return false, fault.CauseOf(ctx, err) // cut short by the lease, say: not a bare "context canceled"
	}
	// The agent took the run: from here on the turn is part of the session.
	return true, t.stream(ctx, c.Writer, body, saving)
}

// lock takes the session's turn lock, then reads the session and its
// history under it (a turn that just finished may have changed them): one
// round trip on PostgreSQL. It returns the turn's context (see
// turns.Serving.BeginTurn); t.life.Release frees it all.
//
// The store work is bounded by Config.StartTimeout: a start the store does
// not take in time ends with fault.ErrStoreBusy (503 store_busy), before
// anything of the turn ran.
func (t *turn) lock(ctx context.Context, owner, id string) (context.Context, error) {
	start, cancel := fault.StartContext(ctx, t.s.cfg.StartTimeout)
	defer cancel()
	if err := t.s.base.Load.Admit(start); err != nil {
		return nil, err // 503 overloaded, before the store is asked
	}
	st := t.s.cfg.Store
	kept, known := t.s.kept.lookup(id)
	lease, sess, hist, err := store.TakeAndLoadSession(start, st, owner, id, known, t.s.cfg.LeaseOptions(t.s.base, t.log, "session", id))
	if err == nil && sess.KnownHistory(known) {
		hist = kept
	}
	err = fault.CauseOf(start, err)
	t.s.base.Load.Started(err)
	if err != nil {
		return nil, err // *store.HeldError: 409 turn_in_progress (failure)
	}
	t.sess, t.hist, t.st = sess, hist, newTally(st, id, sess.HistoryVersion, hist)
	ctx, t.life = t.s.cfg.BeginTurn(ctx, lease, t.log, turns.TurnEnd{What: "turn", IDKey: "session", ID: id})
	return ctx, nil
}

// call sends the turn's run to the agent. A failure is logged here, with
// the session, and is the turn's upstream result.
func (t *turn) call(ctx context.Context) (*upstream.IdleBody, error) {
	body, err := t.agent.postTurn(ctx, t.adm)
	if err == nil {
		return body, nil
	}
	if err := fault.CauseOf(ctx, err); errors.Is(err, store.ErrLeaseLost) {
		// The call was cut short by the turn's lock given up, not by
		// the agent: 503 lease_lost (failure), logged by the lease.
		t.life.Line.Upstream = "lease_lost"
		return nil, err
	}
	ue := &upstreamError{fault.KindUpstream, "upstream_error", "the agent could not be called", err}
	errors.As(err, &ue)
	if t.life.Line.Upstream = ue.code; ctx.Err() != nil {
		t.life.Line.Upstream = metrics.OutcomeCancelled
	}
	ev := t.log.Warn()
	if edge.Gone(ctx) {
		// No upstream failure: the client went away (answered 499).
		ev = t.log.Debug().Bool("client_left", true)
	}
	ev.Err(ue.detail).Str("session", t.sess.ID).Str("code", ue.code).Msg("upstream failed before the stream")
	return nil, ue
}

// save stores what admission decided, once the agent took the run:
// closing results placed before later messages (the history rewritten),
// then the session with the turn's own messages. Those are saved while
// the agent works on its first event, so that the write and the agent's
// time to first token overlap: the channel delivers the outcome, which
// the stream awaits before anything of the answer reaches the client or
// the store. An answer with an opening of its own saves first (the
// channel is nil).
func (t *turn) save(ctx context.Context) (<-chan error, error) {
	st, sess := t.st, t.sess
	if t.adm.moved {
		if err := st.ReplaceHistory(ctx, sess.ID, t.adm.hist); err != nil {
			return nil, err
		}
	}
	t.prevInterrupts, sess.Interrupts = sess.Interrupts, nil
	if t.form.opening != nil {
		return nil, st.SaveSession(ctx, sess, t.adm.added)
	}
	saved := make(chan error, 1)
	go func() { saved <- st.SaveSession(ctx, sess, t.adm.added) }()
	return saved, nil
}

// stream answers the turn with the agent's events (body), storing what
// the run produces (turnRun); saving, when not nil, delivers the outcome
// of saving the turn's own messages (save).
func (t *turn) stream(ctx context.Context, rw gin.ResponseWriter, body *upstream.IdleBody, saving <-chan error) error {
	hist, added := t.adm.hist, t.adm.added
	t.record()
	tr := translate.NewAGUIToAAP(translate.AGUIToAAPOptions{Mode: t.req.Mode(), Prior: translate.PriorCallsOf(historyMessages(hist, added)),
		Spill: turns.SpillTo(ctx, t.log, "session", t.sess.ID, func(ctx context.Context, p store.TextPart) error {
			return t.st.AddHistoryPart(ctx, t.sess.ID, p)
		})})
	r := &turnRun{s: t.s, log: t.log, sess: t.sess, agent: t.agent, life: t.life, prevInterrupts: t.prevInterrupts,
		tr: tr, follow: newFollowUp(t.agent.cfg.CancelRun, t.adm.run, t.adm.calls, t.adm.movedOn), saving: saving,
		movingOn: cancelsWithMessage(t.adm.run),
		ans:      answer{life: t.life, rw: rw, mode: t.req.Mode(), form: t.form, w: aapWriter}}
	r.rec = record{st: t.st, sessID: t.sess.ID, log: t.log, tr: tr,
		own: entryIDs(added), perms: permissionsOf(t.req.Messages), movedOn: t.adm.movedOn, baseLen: len(hist) + len(added)}
	return r.stream(ctx, body)
}

// ended counts the upstream's result, ends the turn's metrics and writes
// its log line.
func (t *turn) ended() {
	t.s.base.Metrics.Upstream("turn", t.agent.name(), t.life.Line.Upstream)
	t.life.End()
}
