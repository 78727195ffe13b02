package translate

import (
	"iter"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"

	"github.com/aapagui/aapagui/aap"
)

// Whose a tool call is. A call that has no result waits on whoever owns
// its tool, and both bridges read it the same way, from the tool's name:
// aap2agui (the session's client tools, the server tools its agent
// configuration declares) and agui2aap (RunAgentInput.tools, the server
// tools GET /meta declares) reach the same owner for a call, so that what
// one leaves open the other does not wait on.

// CallOwner is who a tool call without a result waits on.
type CallOwner uint8

const (
	// OwnerAgent (the zero value): nobody. The tool is neither the
	// client's nor a server tool the agent declares: the call is the
	// agent's own business (a tool it runs without reporting, a
	// predictive-state tool that only streams its arguments, a tool an
	// aap2agui agent configuration declares "permissions: none"). It is
	// shown as it came (AAP's unexposed server-side tools) and waits for
	// nothing: it is no pending call, asks no permission, raises no
	// interrupt and does not stop a turn for tool_use.
	OwnerAgent CallOwner = iota
	// OwnerClient: the client, which runs its own tool and sends the
	// result.
	OwnerClient
	// OwnerServer: the client's permission (an untrusted server tool of
	// AAP) or, for a call of InterruptToolName, its answer.
	OwnerServer
)

// ToolOwners tells whose a tool is by its name.
type ToolOwners struct {
	// Client reports a tool of the client's: an AAP session's or turn's
	// tools, RunAgentInput.tools. nil: none.
	Client func(name string) bool
	// Server reports a server tool the agent declares (the tools of its
	// AgentInfo in GET /meta). nil: none.
	Server func(name string) bool
}

// Of returns whose a call of the named tool is: the client's when it is
// one of the client's tools, else the server's when it is a declared
// server tool or InterruptToolName (an agent's interrupt presented as a
// call, which waits for its answer), else the agent's.
func (o ToolOwners) Of(name string) CallOwner {
	switch {
	case o.Client != nil && o.Client(name):
		return OwnerClient
	case name == InterruptToolName, o.Server != nil && o.Server(name):
		return OwnerServer
	}
	return OwnerAgent
}

// Agents reports whether a call of the named tool is the agent's own
// business (Of is OwnerAgent).
func (o ToolOwners) Agents(name string) bool { return o.Of(name) == OwnerAgent }

// Waiting splits calls (calls without a result) by what each waits for:
// the client's result (client) or the client's permission (server). The
// agent's own calls are in neither: nothing waits on them.
func (o ToolOwners) Waiting(calls []*aap.ToolCall) (client, server []*aap.ToolCall) {
	for _, c := range calls {
		switch o.Of(c.Name) {
		case OwnerClient:
			client = append(client, c)
		case OwnerServer:
			server = append(server, c)
		}
	}
	return client, server
}

// ToolNamed returns a Client or Server function that knows the names of
// specs: a look through them while they are few, a set made once when
// they are many (a call's lookup then costs the same for 1,000 tools as
// for 16).
func ToolNamed(specs []aap.ToolSpec) func(name string) bool {
	if len(specs) > manyTools {
		set := make(map[string]bool, len(specs))
		for _, s := range specs {
			set[s.Name] = true
		}
		return func(name string) bool { return set[name] }
	}
	return func(name string) bool {
		for _, s := range specs {
			if s.Name == name {
				return true
			}
		}
		return false
	}
}

// manyTools is where ToolNamed makes a set rather than look through.
const manyTools = 16

// WithoutOwnPermissions returns msgs (an AAP turn's messages) without the
// tool_permissions for calls of the agent's own (own: ToolOwners.Agents)
// that hist leaves open and no open interrupt waits on, and the ids of
// those calls. A client that follows AAP's tool call resolving asks
// permission for every pending call that is not its own, and the agent
// runs its own tools whatever a session says: such a permission changes
// nothing. A turn of nothing else is left whole (CheckTurn says what is
// wrong with it). History is read only when msgs hold a tool_permission
// no open interrupt waits for.
func WithoutOwnPermissions(hist iter.Seq[aap.Message], open []types.Interrupt, msgs []aap.Message, own func(name string) bool) (kept []aap.Message, dropped []string) {
	interrupts := indexInterrupts(open)
	unbound := func(m aap.Message) (string, bool) {
		p, ok := m.(*aap.ToolPermissionMessage)
		if !ok {
			return "", false
		}
		_, waiting := interrupts.forCall(p.ToolCallID)
		return p.ToolCallID, !waiting
	}
	stray := false
	for _, m := range msgs {
		if _, ok := unbound(m); ok {
			stray = true
			break
		}
	}
	if !stray || own == nil {
		return msgs, nil
	}
	agents := map[string]bool{}
	for _, tu := range OpenCalls(hist) {
		if own(tu.Name) {
			agents[tu.ToolCallID] = true
		}
	}
	kept = make([]aap.Message, 0, len(msgs))
	for _, m := range msgs {
		if id, ok := unbound(m); ok && agents[id] {
			dropped = append(dropped, id)
			continue
		}
		kept = append(kept, m)
	}
	if len(kept) == 0 {
		return msgs, nil
	}
	return kept, dropped
}
