package aap2agui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"
	"github.com/rs/zerolog"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/internal/upstream"
	"github.com/aapagui/aapagui/internal/ident"
	"github.com/aapagui/aapagui/store"
	"github.com/aapagui/aapagui/translate"
)

// mergeAgent applies a turn's overrides to the session: server tools
// replace, options merge by key, client tools replace.
func mergeAgent(sess *store.Session, req *aap.PostSessionTurnRequest) {
	sess.Agent.Override(req.Agent)
	if req.Tools != nil {
		sess.Tools = req.Tools
	}
}

// admission is what a turn brings to its session, decided before the
// agent is called.
type admission struct {
	hist  []store.Entry // the history, closing results placed in it when moved
	added []store.Entry // the turn's new entries: closing results (unless moved), then its messages
	moved bool          // closing results went before later messages: hist is rewritten
	run   *types.RunAgentInput
	calls *runExtras // what the run's messages hold that the SDK's types cannot carry (post)
	// movedOn are the calls a new user message left to their tool-bound
	// interrupts' cancelled resume entries (translate.MovedOnCalls): the
	// agent writes their results; the run's end stores
	// translate.UnansweredCall for one it wrote none for.
	movedOn []string
}

// admit checks a turn against what the session waits for and works out
// its history entries and its run; the error is a *fault.Failure (400).
func (a *agent) admit(log *zerolog.Logger, sess *store.Session, hist []store.Entry, req *aap.PostSessionTurnRequest) (*admission, error) {
	if req.Agent != nil && req.Agent.Name != "" && req.Agent.Name != sess.Agent.Name {
		return nil, invalid("invalid_request", fmt.Sprintf("agent.name: a session's agent cannot change (it is %q)", sess.Agent.Name))
	}
	// Whose the open calls are is read as the turn that made them saw it:
	// the session's tools before this turn's.
	own := a.toolOwners(sess.Tools).Agents
	if msgs, dropped := translate.WithoutOwnPermissions(store.Messages(hist), sess.Interrupts, req.Messages, own); len(dropped) > 0 {
		log.Info().Str("session", sess.ID).Strs("tool_call_ids", dropped).
			Msg("tool_permission for calls of the agent's own left out: the agent runs its own tools, a permission changes nothing")
		req.Messages = msgs
	}
	closing, cancelled, err := translate.CheckTurn(store.Messages(hist), sess.Interrupts, req.Messages, own)
	if err != nil {
		return nil, invalid("invalid_turn", err.Error())
	}
	var movedOn []string
	if len(cancelled) > 0 {
		movedOn = translate.MovedOnCalls(store.Messages(hist), sess.Interrupts)
	}
	mergeAgent(sess, req)
	if req.AGUI != nil && req.AGUI.State != nil {
		sess.State = req.AGUI.State // the page's state is the run's (AG-UI extension)
	}

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
	input, err := translate.TurnToAGUI(req.Messages, nonNil(sess.Interrupts), func() string { return ident.Random("msg-") })
	var schema *translate.SchemaError
	if errors.As(err, &schema) {
		log.Warn().Str("session", sess.ID).Str("interrupt_id", schema.InterruptID).Str("problem", schema.Reason).
			Msg("a tool_permission cannot answer the interrupt in the shape its responseSchema asks for: the turn is refused, the interrupt stays open")
	}
	if err != nil {
		return nil, invalid("invalid_turn", err.Error())
	}
	for _, u := range input.Unsent {
		log.Info().Str("session", sess.ID).Str("interrupt_id", u.InterruptID).Str("tool_call_id", u.ToolCallID).
			Msg("the interrupt's responseSchema has no room for the denial's reason: the agent gets the denial without it; history keeps it in the call's result unless the agent writes one")
	}
	// Each message under the AG-UI id translate gave it (tool permissions,
	// answers, have none); the answer to an interrupt presented as a tool
	// call goes in resume, and in history as the call's result.
	meta := metadataAt(req.AGUI) // the page's metadata of the messages, under the AG-UI extension
	for i, m := range req.Messages {
		if id := input.IDs[i]; id != "" {
			added = append(added, store.Entry{Message: m, AGUIID: id, AGUI: meta.extras(i)})
		}
	}

	run, err := a.runInput(sess, append(hist[:len(hist):len(hist)], added...), append(cancelled, input.Resume...))
	if err == nil {
		err = translate.WithAGUIInput(run, req.AGUI)
	}
	if err != nil {
		return nil, invalid("invalid_turn", err.Error())
	}
	calls := storedExtras(hist, added)
	return &admission{hist: hist, added: added, moved: moved, run: run, calls: calls, movedOn: movedOn}, nil
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

// placeResults returns hist with each entry of results (tool messages)
// placed right after the assistant message holding its call, after the
// tool messages already there; a result whose call is not in hist goes at
// the end. moved reports that some result went before a later message
// (otherwise the results are simply appended, in order).
func placeResults(hist, results []store.Entry) (out []store.Entry, moved bool) {
	if len(results) == 0 {
		return hist, false
	}
	after, n := translate.ResultPlaces(store.Messages(hist), slices.Collect(store.Messages(results)))
	at := map[int][]store.Entry{} // index of the entry to go after → results
	var atEnd []store.Entry
	for k, r := range results {
		if after[k] == n-1 {
			atEnd = append(atEnd, r)
			continue
		}
		at[after[k]] = append(at[after[k]], r)
		moved = true
	}
	out = make([]store.Entry, 0, len(hist)+len(results))
	for i, e := range hist {
		out = append(out, e)
		out = append(out, at[i]...)
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
func (a *agent) runInput(sess *store.Session, hist []store.Entry, resume []types.ResumeEntry) (*types.RunAgentInput, error) {
	msgs := make([]types.Message, 0, len(hist))
	synthetic := map[string]bool{}
	// The session's activity messages, at their places (activities.go);
	// a list that cannot be read places none (the run that changes it
	// says so, and starts it anew).
	acts, _ := translate.ParseActivities(sess.Activities)
	place := acts.Placer()
	for i, e := range hist {
		msgs = place.Before(msgs, i)
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
		a.toolResultParts(msgs[from:], m)
	}
	msgs = place.Rest(msgs)
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
		ThreadID:       a.threadID(sess.ID),
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
		var rest []aap.ContentBlock
		for _, b := range m.Content.Blocks {
			if tu, ok := b.(*aap.ToolUseBlock); ok && (tu.Name == translate.InterruptToolName || tu.Name == translate.SubagentToolName) {
				seen[tu.ToolCallID] = true
				continue
			}
			rest = append(rest, b)
		}
		switch {
		case len(rest) == len(m.Content.Blocks):
			return m
		case len(rest) == 0:
			return nil
		}
		return &aap.AssistantMessage{Content: aap.BlockContent(rest...)}
	case *aap.ToolMessage:
		if seen[m.ToolCallID] {
			return nil
		}
	}
	return m
}

// postTurn sends a turn's run to the agent (calls: the encrypted values of
// its tool calls, see post) and returns the SSE body whose events answer
// the turn. A run that carries a new user message together with cancelled
// resume entries (the user moved on while interrupts were open) goes as
// Config.CancelRun says: by default as itself, followed within the turn by
// a run of the message alone when the agent did not read it (followUp,
// which the turn's reader keeps).
func (a *agent) postTurn(ctx context.Context, adm *admission) (*upstream.IdleBody, error) {
	in, calls := adm.run, adm.calls
	if a.cfg.CancelRun == CancelRunSeparate && cancelsWithMessage(in) {
		return a.postSeparate(ctx, in, calls, adm.movedOn)
	}
	return a.post(ctx, in, calls)
}
