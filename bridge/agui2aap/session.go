package agui2aap

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/translate"
)

// The thread's AAP session: a plan that starts one creates it (version 3)
// or makes its first turn a PUT /session (versions 1 and 2), chosen once
// by the version the AAP server speaks; a session the AAP server lost is
// replaced by a new one seeded with the client's history.

// openFirst opens the run's first turn. When the AAP server forgot the
// thread's session (an in-memory server restarted, expiry, deletion), the
// thread moves to a new session seeded with the client's history, as for
// a rewritten history.
func (r *runner) openFirst(ctx context.Context, req *aap.PostSessionTurnRequest) (*turnEvents, error) {
	evs, err := r.open(ctx, r.th.SessionID, req)
	if err != nil && !r.p.Fresh && sessionGone(err) {
		r.log.Warn().Str("thread", r.in.ThreadID).Str("session", r.th.SessionID).
			Msg("the AAP server no longer has the thread's session; moving the thread to a new one seeded with the client's history")
		if r.p, err = translate.PlanLostSession(r.in, r.env.cfg.Policy); err != nil {
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

// begin builds the plan's turn request, creating the new session first
// when the plan starts one.
func (r *runner) begin(ctx context.Context) (*aap.PostSessionTurnRequest, error) {
	in, th, p := r.in, r.th, r.p
	toolsDigest := digest(in.Tools)
	contextDigest := ""
	if len(in.Context) > 0 {
		contextDigest = digest(in.Context)
	}
	req := &aap.PostSessionTurnRequest{Stream: r.mode(), Messages: p.Turn}
	var seedMeta json.RawMessage // the metadata of the seed's messages, under the AG-UI extension
	if r.carry {
		// The context goes to the agent as context (extension.go).
		req.AGUI, contextDigest = carriedInput(in), ""
		var turnMeta json.RawMessage
		seedMeta, turnMeta = translate.RequestMetadata(slices.Concat(p.Seed, p.Turn), len(p.Seed), in.Messages, r.pageMeta)
		if turnMeta != nil {
			if req.AGUI == nil {
				req.AGUI = &aap.AGUIInput{}
			}
			req.AGUI.Metadata = turnMeta
		}
	} else {
		noteNotCarried(r.log, r.env.met, in)
	}
	if u, ok := p.Turn[0].(*aap.UserMessage); ok {
		if contextDigest != "" && (p.Fresh || contextDigest != th.ContextDigest) {
			req.Messages = []aap.Message{translate.WithContext(u, in.Context)}
		}
		// Remember what the session has seen, so that context that goes
		// away and comes back is sent again.
		th.ContextDigest = contextDigest
	}
	if p.Fresh {
		agent := aap.AgentConfig{Name: r.info.Name, Tools: r.env.cfg.serverTools(r.info)}
		if r.fwd != nil && r.fwd.Agent != nil {
			if r.fwd.Agent.Tools != nil {
				agent.Tools = r.fwd.Agent.Tools
			}
			agent.Options = r.fwd.Agent.Options
		}
		return r.openSession(ctx, newSession{req: req, agent: agent, contextDigest: contextDigest, toolsDigest: toolsDigest, seedMeta: seedMeta})
	}
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
	return req, nil
}

// openerFor is the session opener of an AAP protocol version.
func (r *runner) openerFor(version int) func(context.Context, newSession) (*aap.PostSessionTurnRequest, error) {
	if version != aap.Version3 {
		return r.beginPut
	}
	return r.createSession
}

// createSession creates the new session (version 3: POST /sessions with
// the seed), to which the first turn then goes.
func (r *runner) createSession(ctx context.Context, n newSession) (*aap.PostSessionTurnRequest, error) {
	th := r.th
	sr := &aap.PostSessionsRequest{Agent: n.agent, Messages: r.p.Seed, Tools: r.clientTools}
	if n.seedMeta != nil {
		sr.AGUI = &aap.AGUIInput{Metadata: n.seedMeta}
	}
	created, err := r.cl.CreateSession(ctx, sr)
	r.turn.Line.Upstream = r.env.upstreamCall(ctx, "create_session", r.info.Name, err)
	if err != nil {
		return nil, &upstreamError{err}
	}
	r.sessionLog(th.SessionID, created.SessionID)
	th.SessionID, th.Agent, th.Delivered, th.ClientCalls, th.Interrupts = created.SessionID, r.info.Name, nil, nil, nil
	th.ToolsDigest = n.toolsDigest
	return n.req, nil
}

// beginPut prepares the first turn of a new session on a version 1 or 2
// server: PUT /session with the seed and a user message, the session's id
// coming with the answer (session_start). A plan whose turn is tool
// results or permissions cannot start a session there: the last user
// message of the seed is asked again, as a fresh session of a history
// ending with the agent's own tool results is (see MAPPING).
func (r *runner) beginPut(_ context.Context, n newSession) (*aap.PostSessionTurnRequest, error) {
	req, agent, contextDigest, toolsDigest := n.req, n.agent, n.contextDigest, n.toolsDigest
	in, th, p := r.in, r.th, r.p
	seed := p.Seed
	if _, ok := req.Messages[0].(*aap.UserMessage); !ok {
		u := len(seed) - 1
		for u >= 0 && seed[u].Role() != aap.RoleUser {
			u--
		}
		if u < 0 {
			return nil, badInput("the AAP server (protocol version %d) starts a session with a user message, and the history has none to start from", r.version)
		}
		r.log.Warn().Str("thread", in.ThreadID).Int("version", r.version).Int("answers", len(req.Messages)).
			Msg("a new session on a version 1 or 2 AAP server starts with a user message: the last one is asked again, without the tool results or permissions this run brought")
		msg := seed[u]
		if um, ok := msg.(*aap.UserMessage); ok && contextDigest != "" {
			msg = translate.WithContext(um, in.Context)
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
		r.log.Info().Str("thread", r.in.ThreadID).Str("session", id).Int("seed", len(r.p.Seed)).Msg("thread started on a new AAP session")
		return
	}
	r.log.Info().Str("thread", r.in.ThreadID).Str("session", id).Str("from", from).Int("seed", len(r.p.Seed)).Msg("thread moved to a new AAP session")
}

// sessionGone reports an AAP server's 404 for the thread's session.
func sessionGone(err error) bool {
	var he *aap.HTTPError
	return errors.As(err, &he) && he.StatusCode == http.StatusNotFound
}
