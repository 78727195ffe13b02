package agui2aap

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/agui"
	"github.com/aapagui/aapagui/bridge/internal/edge"
	"github.com/aapagui/aapagui/bridge/internal/fault"
	"github.com/aapagui/aapagui/bridge/internal/metrics"
	"github.com/aapagui/aapagui/bridge/internal/ssestream"
	"github.com/aapagui/aapagui/bridge/internal/turns"
	"github.com/aapagui/aapagui/internal/ident"
	"github.com/aapagui/aapagui/store"
	"github.com/aapagui/aapagui/translate"
	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"
	"github.com/gin-gonic/gin"
)

// A run's intake: the handler reads and checks the RunAgentInput, finds
// the agent, takes the thread's lock and begins the run's life
// (turns.Turn), reads the thread and plans the run (plan.go), then hands it
// to the runner (run.go). What fails before the stream begins is answered
// here, as JSON or, for a refusal, as RUN_STARTED then RUN_ERROR.

// run answers POST /agents/:name: a run of the thread, streamed as AG-UI
// events. A run that fails before its stream begins is answered with a
// JSON error (fail); one the AG-UI interrupt rules refuse, with RUN_STARTED
// then RUN_ERROR (refuse).
func (s *Server) run(c *gin.Context) {
	in, err := s.serveRun(c)
	var ref *translate.Refusal
	switch {
	case errors.As(err, &ref):
		edge.Logger(c).Info().Str("code", ref.Code).Str("thread", in.ThreadID).Msg("run refused")
		s.refuse(c, in, ref)
	case err != nil:
		s.fail(c, err)
	}
}

// serveRun reads the run's input, takes its thread and runs it; an error
// is returned before the stream began (with the input as far as it was
// read).
func (s *Server) serveRun(c *gin.Context) (*types.RunAgentInput, error) {
	in, err := readRunInput(c.Request)
	if err != nil {
		return nil, err
	}
	return s.serveInput(c, in)
}

// serveInput takes the thread of a run's input and runs it (serveRun).
func (s *Server) serveInput(c *gin.Context, in *types.RunAgentInput) (*types.RunAgentInput, error) {
	log := edge.Logger(c)
	ctx := c.Request.Context()
	name := c.Param("name")
	cl, info, version, err := s.agent(ctx, c.Request, name)
	if err != nil {
		return in, err
	}
	r := &runner{s: s, rw: c.Writer, w: aguiWriter, start: metrics.RequestStart(c), cl: cl, version: version, in: in, info: info, log: log}
	r.openSession = r.openerFor(version)
	if r.clientTools, r.fwd, err = runOptions(in); err != nil {
		return in, err
	}

	if isHydration(in) {
		// A read of the thread: no run lock (hydrate).
		return in, s.hydrate(c, cl, info, in)
	}
	// The start's store work (the thread's lock, the thread) is bounded
	// by StartTimeout: past it the run is refused, 503 store_busy, before
	// its turn is sent.
	owner := c.GetString(ownerKey)
	start, endStart := fault.StartContext(ctx, s.cfg.StartTimeout)
	defer endStart()
	if err := s.base.Load.Admit(start); err != nil {
		return in, err // 503 overloaded, before the store is asked
	}
	lease, err := s.takeThread(start, log, owner, in.ThreadID, runBusy)
	s.base.Load.Started(fault.CauseOf(start, err))
	if err != nil {
		return in, fault.CauseOf(start, err)
	}
	ctx, r.life = s.cfg.BeginTurn(ctx, lease, log, turns.TurnEnd{What: "run", IDKey: "thread", ID: in.ThreadID})
	defer r.life.Release()
	// The request carries the run's context while the run goes on; the
	// error returned is answered under the request's own, which tells
	// whether its client left (edge.Left), not that the run ended.
	req := c.Request
	c.Request = req.WithContext(ctx)
	defer func() { c.Request = req }()

	if r.th, err = s.loadThread(start, owner, in.ThreadID); err != nil {
		return in, fault.CauseOf(start, fault.CauseOf(ctx, err))
	}
	endStart()
	if r.th == nil {
		if err := s.roomForThread(ctx, log, owner); err != nil {
			return in, fault.CauseOf(ctx, err)
		}
	}
	if r.p, err = s.makePlan(r.th, in, name); err != nil {
		return in, fault.CauseOf(ctx, err)
	}
	if r.th == nil {
		r.th = &store.Thread{Owner: owner, ID: in.ThreadID}
	}
	// An error cut short by the run's lease or its longest duration is
	// named by its cause (fault.CauseOf), not as the call it interrupted.
	return in, fault.CauseOf(ctx, r.execute(ctx))
}

// runBusy is the message of a run that finds its thread held by another.
func runBusy(left time.Duration) string {
	return fmt.Sprintf("a run is already in progress on this thread; wait for it to finish (its lock runs out in %.1f s unless the run is still alive)", left.Seconds())
}

// readRunInput reads and checks the request's RunAgentInput; a run
// without an id gets one.
func readRunInput(r *http.Request) (*types.RunAgentInput, error) {
	data, err := edge.ReadBody(r)
	if err != nil {
		return nil, err
	}
	in, err := agui.DecodeRunAgentInputLazy(data)
	if err != nil {
		return nil, fault.Fail(fault.KindInvalid, "invalid_body", "the body is not a RunAgentInput: "+err.Error())
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
// request, that version (chosen here, once: the run never asks again)
// and the agent name names there.
func (s *Server) agent(ctx context.Context, r *http.Request, name string) (*aap.Client, *aap.AgentInfo, int, error) {
	cl, key := s.client(r)
	cl, meta, err := s.upstream(ctx, cl, key)
	if err != nil {
		return nil, nil, 0, &upstreamError{err}
	}
	info, ok := meta.Agent(name)
	if !ok {
		return nil, nil, 0, fault.Fail(fault.KindNotFound, "unknown_agent", "no agent "+name+" on the AAP server")
	}
	v, err := cl.Version(ctx) // known: s.upstream gave cl its version
	if err != nil {
		return nil, nil, 0, &upstreamError{err}
	}
	return cl, info, v, nil
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
func (s *Server) refuse(c *gin.Context, in *types.RunAgentInput, ref *translate.Refusal) {
	t := translate.NewAAPToAGUI(translate.AAPToAGUIOptions{ThreadID: in.ThreadID, RunID: in.RunID})
	out := ssestream.New(c.Writer)
	out.Start()
	writeAGUI(out, t.Fail(inBand(ref)), edge.Logger(c))
	out.Flush()
}
