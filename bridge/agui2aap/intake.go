package agui2aap

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"
	"github.com/gin-gonic/gin"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/agui"
	"github.com/aapagui/aapagui/bridge/internal/edge"
	"github.com/aapagui/aapagui/bridge/internal/fault"
	"github.com/aapagui/aapagui/bridge/internal/ssestream"
	"github.com/aapagui/aapagui/bridge/internal/turns"
	"github.com/aapagui/aapagui/internal/aside"
	"github.com/aapagui/aapagui/internal/ident"
	"github.com/aapagui/aapagui/store"
	"github.com/aapagui/aapagui/translate"
)

// A run's intake: the handler reads and checks the RunAgentInput, finds
// the agent, takes the thread's lock and begins the run (turns.Base.Run)
// (turns.Turn), reads the thread and plans the run (plan.go), then hands it
// to the runner (run.go). What fails before the stream begins is answered
// here, as JSON or, for a refusal, as RUN_STARTED then RUN_ERROR.

// run answers POST /agents/:name: a run of the thread, streamed as AG-UI
// events. A run that fails before its stream begins is answered with a
// JSON error (returned); one the AG-UI interrupt rules refuse, with
// RUN_STARTED then RUN_ERROR (serveInput).
func (s *Server) run(c *gin.Context) error {
	var in *types.RunAgentInput
	var meta agui.Metadata
	err := aside.Do(func() (err error) { // decoding goes deep: see internal/aside
		in, meta, err = readRunInput(c.Request)
		return err
	})
	if err != nil {
		return err
	}
	return s.serveInput(c, in, meta)
}

// serveInput finds the run's agent, then runs it on its thread (or reads
// the thread, for a hydration: no run lock); an error is returned before
// the stream began.
func (s *Server) serveInput(c *gin.Context, in *types.RunAgentInput, meta agui.Metadata) error {
	log := edge.Logger(c)
	name := c.Param("name")
	var ua upstreamAgent
	err := aside.Do(func() (err error) {
		ua, err = s.agent(c.Request.Context(), c.Request, name)
		return err
	})
	if err != nil {
		return err
	}
	if isHydration(in) {
		return s.hydrate(c, ua, in)
	}
	r := &runner{env: s.env(), log: log, runStream: runStream{w: aguiWriter},
		runIntake: runIntake{cl: ua.cl, version: ua.version, carry: ua.carry, in: in, pageMeta: meta, info: ua.info, owner: edge.Owner(c), agentName: name}}
	r.openSession = r.openerFor(ua.version)
	if r.clientTools, r.fwd, err = runOptions(in); err != nil {
		return err
	}
	err = s.base.Run(c.Request.Context(), c.Writer, turns.LogLine{What: "run", IDKey: "thread", ID: in.ThreadID}, r)
	var ref *translate.Refusal
	if errors.As(err, &ref) {
		log.Info().Str("code", ref.Code).Str("thread", in.ThreadID).Msg("run refused")
		s.refuse(c, in, ref)
		return nil
	}
	return err
}

// runBusy is the message of a run that finds its thread held by another.
func runBusy(left time.Duration) string {
	return fmt.Sprintf("a run is already in progress on this thread; wait for it to finish (its lock runs out in %.1f s unless the run is still alive)", left.Seconds())
}

// readRunInput reads and checks the request's RunAgentInput; a run
// without an id gets one.
func readRunInput(r *http.Request) (*types.RunAgentInput, agui.Metadata, error) {
	data, err := edge.ReadBody(r)
	if err != nil {
		return nil, agui.Metadata{}, err
	}
	in, err := agui.DecodeRunAgentInputLazy(data)
	if err != nil {
		return nil, agui.Metadata{}, fault.Fail(fault.KindInvalid, "invalid_body", "the body is not a RunAgentInput: "+err.Error())
	}
	if strings.TrimSpace(in.ThreadID) == "" {
		return nil, agui.Metadata{}, badInput("threadId is required")
	}
	if err := checkInput(in); err != nil {
		return nil, agui.Metadata{}, badInput("%s", err.Error())
	}
	if in.RunID == "" {
		in.RunID = ident.Random("run-")
	}
	// The messages' metadata, which the SDK's types have no field for:
	// the AG-UI extension carries it (extension.go).
	return in, translate.PageMetadata(data), nil
}

// upstreamAgent is the agent a request names on the AAP server, and how
// to reach it.
type upstreamAgent struct {
	cl      *aap.Client // speaking the server's version
	info    *aap.AgentInfo
	version int  // the server's protocol version (chosen once: the run never asks again)
	carry   bool // the server grants the AG-UI extension (extension.go)
}

// agent returns the agent name names on the AAP server, for the request.
func (s *Server) agent(ctx context.Context, r *http.Request, name string) (upstreamAgent, error) {
	cl, key := s.client(r)
	cl, meta, err := s.upstream(ctx, cl, key)
	if err != nil {
		return upstreamAgent{}, &upstreamError{err}
	}
	info, ok := meta.Agent(name)
	if !ok {
		return upstreamAgent{}, fault.Fail(fault.KindNotFound, "unknown_agent", "no agent "+name+" on the AAP server")
	}
	v, err := cl.Version(ctx) // known: s.upstream gave cl its version
	if err != nil {
		return upstreamAgent{}, &upstreamError{err}
	}
	return upstreamAgent{cl: cl, info: info, version: v, carry: v == aap.Version3 && meta.Grants(aap.ExtensionAGUI)}, nil
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

// refuse answers a run that breaks the AG-UI interrupt rules: RUN_STARTED
// then RUN_ERROR with the rule's code.
func (s *Server) refuse(c *gin.Context, in *types.RunAgentInput, ref *translate.Refusal) {
	t := translate.NewAAPToAGUI(translate.AAPToAGUIOptions{ThreadID: in.ThreadID, RunID: in.RunID})
	out := ssestream.New(c.Writer)
	out.Start()
	writeAGUI(out, t.Fail(inBand(ref)), edge.Logger(c))
	out.Flush()
}

// Take takes the thread's run lock and reads the thread (nil for a new
// one). A thread a run holds is 409 run_in_progress.
func (r *runner) Take(start context.Context, lo store.LeaseOptions) (*store.Lease, error) {
	lease, err := takeThread(start, r.env.cfg.Store, r.owner, r.in.ThreadID, lo, runBusy)
	if err != nil {
		return nil, err
	}
	if r.th, err = r.env.cfg.loadThread(start, r.owner, r.in.ThreadID); err != nil {
		lease.Release()
		return nil, err
	}
	if r.th != nil {
		r.storedAgent = r.th.Agent
	}
	return lease, nil
}

// Prepare plans the run against what the thread's session has seen
// (plan.go): a new thread needs room under the key's limit, and a run the
// interrupt rules refuse is a *translate.Refusal. The plan names the
// agent, the stream mode and the thread's run log, with the client's
// messages the thread's record will get (copyForRecord).
func (r *runner) Prepare(ctx context.Context, turn *turns.Turn) (turns.Plan, error) {
	plan := turns.Plan{Agent: r.info.Name, Mode: string(r.mode())}
	r.turn = turn
	if r.th == nil {
		if err := r.env.cfg.roomForThread(ctx, r.log, r.owner); err != nil {
			return plan, err
		}
	}
	var err error
	if r.p, err = r.env.cfg.makePlan(r.th, r.in, r.agentName); err != nil {
		return plan, err
	}
	if r.th == nil {
		r.th = &store.Thread{Owner: r.owner, ID: r.in.ThreadID}
	}
	r.size.Max = r.env.cfg.MaxMessageSize
	r.copyForRecord()
	plan.RunLog = r.runLog()
	return plan, nil
}
