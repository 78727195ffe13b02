package aap2agui

import (
	"net/http"
	"time"

	"github.com/aapagui/aapagui/aap"
)

// AgentConfig is one of the agents a Server serves (Config.Agents): its
// description in GET /meta and the AG-UI endpoint that runs it. Its zero
// timeouts and modes take the Server's (Config).
type AgentConfig struct {
	// Agent describes the agent in GET /meta; its name routes sessions.
	Agent aap.AgentInfo
	// OwnTools are the server tools the agent runs on its own (see
	// Config.OwnTools).
	OwnTools []aap.ToolSpec
	// Upstream is the URL of the agent's AG-UI endpoint. Required.
	Upstream string
	// UpstreamHeader is sent with every request to Upstream.
	UpstreamHeader http.Header
	// HeaderTimeout is Config.HeaderTimeout for this agent; zero:
	// Config's.
	HeaderTimeout time.Duration
	// IdleTimeout is Config.IdleTimeout for this agent; zero: Config's.
	IdleTimeout time.Duration
	// ThreadIDs is Config.ThreadIDs for this agent; empty: Config's.
	ThreadIDs ThreadIDs
	// CancelRun is Config.CancelRun for this agent; empty: Config's.
	CancelRun CancelRun
	// ToolResultParts is Config.ToolResultParts for this agent: either
	// one turns it on.
	ToolResultParts bool
}
