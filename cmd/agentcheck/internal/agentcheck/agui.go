package agentcheck

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/events"
	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/agui"
	"github.com/aapagui/aapagui/internal/ident"
	"github.com/aapagui/aapagui/internal/sse"
	"github.com/aapagui/aapagui/translate"
)

// AGUIOptions configure RunAGUI.
type AGUIOptions struct {
	// Header is sent with every run (an API key, for instance).
	Header  http.Header
	Prompts Prompts
	// HTTPClient sends the runs; nil means http.DefaultClient.
	HTTPClient *http.Client
	// Timeout bounds each run; zero means 60 s.
	Timeout time.Duration
	// HistoryLength is the number of messages of the long-history run;
	// zero means 200.
	HistoryLength int
}

// The sections of the AG-UI documents the checks rest on.
const (
	secSSE        = "serialization.mdx; events.mdx (SSE framing)"
	secLifecycle  = "events.mdx § Lifecycle Events (RUN_STARTED … RUN_FINISHED)"
	secText       = "events.mdx § Text Message Events (start, content, end)"
	secTools      = "tools.mdx; events.mdx § Tool Call Events"
	secInterrupts = "interrupts.mdx"
	secMessages   = "messages.mdx"
	secBridge     = "aapagui docs/MAPPING.md (what aap2agui does with each event)"
)

type aguiRun struct {
	opts AGUIOptions
	url  string
	http *http.Client
	*Report
}

// RunAGUI checks the AG-UI agent at url (the endpoint a RunAgentInput is
// posted to).
func RunAGUI(ctx context.Context, url string, opts AGUIOptions) *Report {
	defaults(&opts.HTTPClient, &opts.Timeout)
	if opts.HistoryLength <= 0 {
		opts.HistoryLength = 200
	}
	r := &aguiRun{opts: opts, url: url, http: opts.HTTPClient, Report: &Report{Mode: "agui", Target: url}}
	r.checkPlain(ctx)
	r.checkClientTool(ctx)
	r.checkInterrupt(ctx)
	r.checkLongHistory(ctx)
	return r.Report
}

// aguiResult is one run as it came back.
type aguiResult struct {
	status int
	body   string // a failed request's body
	events []events.Event
	raw    []string // each event's JSON, for reports
	// framing: an SSE or JSON problem (the stream stopped there).
	framing string
	// order: the first AG-UI rule the stream broke (agui.Verifier).
	order string
	// bridge: what aap2agui could not do with the stream.
	bridge string
}

func (a *aguiResult) names() string {
	var out []string
	for _, ev := range a.events {
		out = append(out, string(ev.Type()))
	}
	return strings.Join(out, " ")
}

func (a *aguiResult) finished() *events.RunFinishedEvent {
	if n := len(a.events); n > 0 {
		if f, ok := a.events[n-1].(*events.RunFinishedEvent); ok {
			return f
		}
	}
	return nil
}

func (a *aguiResult) text() string {
	var b strings.Builder
	for _, ev := range a.events {
		if c, ok := ev.(*events.TextMessageContentEvent); ok {
			b.WriteString(c.Delta)
		}
	}
	return b.String()
}

// run posts input and reads the whole answer, checking it as it goes.
func (r *aguiRun) run(ctx context.Context, input *types.RunAgentInput) (*aguiResult, string) {
	body, _ := json.Marshal(input)
	sent := "POST " + r.url + "\n" + string(body)
	ctx, cancel := context.WithTimeout(ctx, r.opts.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.url, bytes.NewReader(body))
	if err != nil {
		return &aguiResult{framing: err.Error()}, sent
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	for k, vs := range r.opts.Header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	resp, err := r.http.Do(req)
	if err != nil {
		return &aguiResult{framing: err.Error()}, sent
	}
	defer resp.Body.Close()
	out := &aguiResult{status: resp.StatusCode}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		out.body = string(b)
		return out, sent
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "text/event-stream" {
		out.framing = fmt.Sprintf("Content-Type %q, not text/event-stream", resp.Header.Get("Content-Type"))
		return out, sent
	}
	var v agui.Verifier
	// What aap2agui does with the stream: translate it into an AAP turn.
	tr := translate.NewAGUIToAAP(translate.AGUIToAAPOptions{Mode: aap.StreamDelta})
	for ev, err := range sse.Read(resp.Body, sse.ReadOptions{}) {
		if err != nil {
			out.framing = "reading the stream: " + err.Error()
			break
		}
		if ev.Name != "" && ev.Name != "message" {
			// AG-UI's SSE encoding sends every event as a data line only;
			// the type is in the JSON.
			out.framing = fmt.Sprintf("an SSE event named %q: AG-UI events carry their type in the JSON, with no event: field", ev.Name)
			break
		}
		out.raw = append(out.raw, string(ev.Data))
		decoded, err := agui.DecodeEvent(ev.Data)
		if err != nil {
			out.framing = fmt.Sprintf("event %d is not an AG-UI event: %v: %s", len(out.events)+1, err, ev.Data)
			break
		}
		out.events = append(out.events, decoded)
		if out.order == "" {
			if err := v.Check(decoded); err != nil {
				out.order = err.Error()
			}
		}
		if out.bridge == "" {
			if _, err := tr.Feed(decoded); err != nil {
				var dropped *translate.DroppedResultError
				if !errors.As(err, &dropped) {
					out.bridge = err.Error()
				}
			}
		}
	}
	if out.order == "" && out.framing == "" {
		if err := v.Finish(); err != nil {
			out.order = err.Error()
		}
	}
	if !tr.Done() {
		tr.Finish()
	}
	if out.bridge == "" && out.framing == "" && tr.Incomplete() {
		out.bridge = "the stream ended without RUN_FINISHED or RUN_ERROR: aap2agui ends such a turn with turn_stop(error)"
	}
	return out, sent
}

// problem is the first thing wrong with a run, for the checks that need
// a good stream; "" when there is none.
func (a *aguiResult) problem() string {
	switch {
	case a.status != http.StatusOK && a.status != 0:
		return fmt.Sprintf("HTTP %d: %s", a.status, a.body)
	case a.framing != "":
		return a.framing
	case a.order != "":
		return a.order
	case a.bridge != "":
		return a.bridge
	}
	return ""
}

func newInput(thread string, msgs []types.Message) *types.RunAgentInput {
	return &types.RunAgentInput{
		ThreadID:       thread,
		RunID:          ident.Random("run-"),
		State:          map[string]any{},
		Messages:       msgs,
		Tools:          []types.Tool{},
		Context:        []types.Context{},
		ForwardedProps: map[string]any{},
	}
}

func userMsg(text string) types.Message {
	return types.Message{ID: ident.Random("msg-"), Role: types.RoleUser, Content: text}
}

// checkPlain runs Prompts.Text and checks the stream's framing, its event
// order, its run ids and its text.
func (r *aguiRun) checkPlain(ctx context.Context) {
	p := r.opts.Prompts
	in := newInput(ident.Random("agentcheck-"), []types.Message{userMsg(p.Text)})
	res, sent := r.run(ctx, in)
	const (
		framing = "agui.framing"
		order   = "agui.order"
		ids     = "agui.run-ids"
		text    = "agui.text"
		bridge  = "agui.bridge"
	)
	switch {
	case res.status != http.StatusOK:
		r.fail(framing, "a run answers 200 with an SSE stream of JSON events", secSSE, failure{sent: sent, got: fmt.Sprintf("HTTP %d %s", res.status, res.body), want: "200, text/event-stream"})
	case res.framing != "":
		r.fail(framing, "a run answers 200 with an SSE stream of JSON events", secSSE, failure{detail: res.framing, sent: sent, got: strings.Join(res.raw, "\n")})
	default:
		r.pass(framing, "a run answers 200 with an SSE stream of JSON events", secSSE)
	}
	if res.order != "" {
		r.fail(order, "events come in AG-UI's order: RUN_STARTED first, messages started before their content and ended, one terminal event", secLifecycle+"; "+secText,
			failure{detail: res.order, sent: sent, got: res.names()})
	} else if res.framing == "" && res.status == http.StatusOK {
		r.pass(order, "events come in AG-UI's order: RUN_STARTED first, messages started before their content and ended, one terminal event", secLifecycle+"; "+secText)
	} else {
		r.skip(order, "events come in AG-UI's order", secLifecycle, "no stream to check")
	}
	const idsTitle = "RUN_STARTED and RUN_FINISHED carry the input's threadId and runId"
	if res.problem() != "" {
		r.skip(ids, idsTitle, secLifecycle, "the stream failed above")
		r.skip(text, "a plain message gets a text answer", secText, "the stream failed above")
	} else {
		st, _ := res.events[0].(*events.RunStartedEvent)
		fin := res.finished()
		switch {
		case st == nil || st.ThreadID() != in.ThreadID || st.RunID() != in.RunID:
			r.fail(ids, idsTitle, secLifecycle, failure{sent: sent, got: res.raw[0], want: fmt.Sprintf("threadId %q, runId %q", in.ThreadID, in.RunID)})
		case fin == nil:
			r.fail(ids, idsTitle, secLifecycle, failure{sent: sent, got: res.names(), want: "RUN_FINISHED last"})
		case fin.ThreadID() != in.ThreadID || fin.RunID() != in.RunID:
			r.fail(ids, idsTitle, secLifecycle, failure{sent: sent, got: res.raw[len(res.raw)-1], want: fmt.Sprintf("threadId %q, runId %q", in.ThreadID, in.RunID)})
		default:
			r.pass(ids, idsTitle, secLifecycle)
		}
		if res.text() == "" {
			r.fail(text, "a plain message gets a text answer", secText, failure{sent: sent, got: res.names(), want: "TEXT_MESSAGE_CONTENT"})
		} else {
			r.pass(text, "a plain message gets a text answer", secText)
		}
	}
	const bridgeTitle = "aap2agui can turn the stream into an AAP turn"
	if res.bridge != "" {
		r.fail(bridge, bridgeTitle, secBridge, failure{detail: res.bridge, sent: sent, got: res.names()})
	} else if res.status == http.StatusOK && res.framing == "" {
		r.pass(bridge, bridgeTitle, secBridge)
	} else {
		r.skip(bridge, bridgeTitle, secBridge, "no stream to check")
	}
}

// checkClientTool: a declared client tool is called with a JSON object of
// arguments, and the result sent back gets an answer.
func (r *aguiRun) checkClientTool(ctx context.Context) {
	const id, title = "agui.client-tool", "a client tool is called with JSON arguments, and its result answered"
	p := r.opts.Prompts
	if p.ClientTool == "" || p.Tool.Name == "" {
		r.skip(id, title, secTools, "no client-tool prompt")
		return
	}
	var params any = map[string]any{"type": "object"}
	if len(p.Tool.Parameters) > 0 {
		_ = json.Unmarshal(p.Tool.Parameters, &params)
	}
	tool := types.Tool{Name: p.Tool.Name, Description: p.Tool.Description, Parameters: params}
	thread := ident.Random("agentcheck-")
	msgs := []types.Message{userMsg(p.ClientTool)}
	in := newInput(thread, msgs)
	in.Tools = []types.Tool{tool}
	res, sent := r.run(ctx, in)
	if problem := res.problem(); problem != "" {
		r.fail(id, title, secTools, failure{detail: problem, sent: sent, got: res.names()})
		return
	}
	var callID string
	var args strings.Builder
	for _, ev := range res.events {
		switch ev := ev.(type) {
		case *events.ToolCallStartEvent:
			if ev.ToolCallName == p.Tool.Name {
				callID = ev.ToolCallID
			}
		case *events.ToolCallArgsEvent:
			if ev.ToolCallID == callID {
				args.WriteString(ev.Delta)
			}
		}
	}
	if callID == "" {
		r.skip(id, title, secTools, fmt.Sprintf("the agent did not call %s on %q", p.Tool.Name, p.ClientTool))
		return
	}
	var obj map[string]any
	if err := json.Unmarshal([]byte(args.String()), &obj); err != nil {
		r.fail(id, title, secTools, failure{detail: "the arguments, joined, are not a JSON object: " + err.Error(), sent: sent, got: args.String(), want: "TOOL_CALL_ARGS deltas that join into a JSON object"})
		return
	}
	msgs = append(msgs,
		types.Message{ID: ident.Random("msg-"), Role: types.RoleAssistant, ToolCalls: []types.ToolCall{{ID: callID, Type: "function", Function: types.FunctionCall{Name: p.Tool.Name, Arguments: args.String()}}}},
		types.Message{ID: ident.Random("msg-"), Role: types.RoleTool, ToolCallID: callID, Content: p.Tool.Result})
	in2 := newInput(thread, msgs)
	in2.Tools = []types.Tool{tool}
	res2, sent2 := r.run(ctx, in2)
	if problem := res2.problem(); problem != "" || res2.text() == "" {
		if problem == "" {
			problem = "no text answer to the tool's result"
		}
		r.fail(id, title, secTools+"; "+secMessages, failure{detail: problem, sent: sent2, got: res2.names()})
		return
	}
	r.pass(id, title, secTools)
}

// checkInterrupt: a run that ends with an interrupt is resumed, and the
// resumed run finishes.
func (r *aguiRun) checkInterrupt(ctx context.Context) {
	const id, title = "agui.interrupt-resume", "a run that ends with an interrupt goes on when resumed"
	p := r.opts.Prompts
	if p.Permission == "" {
		r.skip(id, title, secInterrupts, "no permission prompt")
		return
	}
	thread := ident.Random("agentcheck-")
	msgs := []types.Message{userMsg(p.Permission)}
	in := newInput(thread, msgs)
	if len(p.ForwardedProps) > 0 {
		var fp any
		if err := json.Unmarshal(p.ForwardedProps, &fp); err == nil {
			in.ForwardedProps = fp
		}
	}
	res, sent := r.run(ctx, in)
	if problem := res.problem(); problem != "" {
		r.fail(id, title, secInterrupts, failure{detail: problem, sent: sent, got: res.names()})
		return
	}
	fin := res.finished()
	if fin == nil || fin.Outcome == nil || fin.Outcome.Type != events.RunFinishedOutcomeTypeInterrupt || len(fin.Outcome.Interrupts) == 0 {
		r.skip(id, title, secInterrupts, fmt.Sprintf("the agent did not interrupt on %q", p.Permission))
		return
	}
	for _, ir := range fin.Outcome.Interrupts {
		if ir.ID == "" {
			r.fail(id, title, secInterrupts, failure{sent: sent, got: res.raw[len(res.raw)-1], want: "every interrupt has an id"})
			return
		}
	}
	// The messages the client now holds, then the resume.
	held := append([]types.Message{}, msgs...)
	var callID, name string
	var args strings.Builder
	for _, ev := range res.events {
		switch ev := ev.(type) {
		case *events.ToolCallStartEvent:
			callID, name = ev.ToolCallID, ev.ToolCallName
		case *events.ToolCallArgsEvent:
			args.WriteString(ev.Delta)
		}
	}
	if callID != "" {
		held = append(held, types.Message{ID: ident.Random("msg-"), Role: types.RoleAssistant, ToolCalls: []types.ToolCall{{ID: callID, Type: "function", Function: types.FunctionCall{Name: name, Arguments: args.String()}}}})
	}
	in2 := newInput(thread, held)
	in2.ForwardedProps = in.ForwardedProps
	for _, ir := range fin.Outcome.Interrupts {
		in2.Resume = append(in2.Resume, types.ResumeEntry{InterruptID: ir.ID, Status: types.ResumeStatusResolved, Payload: map[string]any{"approved": true}})
	}
	res2, sent2 := r.run(ctx, in2)
	if problem := res2.problem(); problem != "" || res2.finished() == nil {
		if problem == "" {
			problem = "the resumed run did not finish"
		}
		r.fail(id, title, secInterrupts, failure{detail: problem, sent: sent2, got: res2.names()})
		return
	}
	r.pass(id, title, secInterrupts)
}

// checkLongHistory: a run with a long history is answered like a short one.
func (r *aguiRun) checkLongHistory(ctx context.Context) {
	const id, title = "agui.long-history", "a run with a long history is answered"
	p := r.opts.Prompts
	var msgs []types.Message
	for i := range r.opts.HistoryLength - 1 {
		if i%2 == 0 {
			msgs = append(msgs, userMsg(fmt.Sprintf("message %d", i)))
		} else {
			msgs = append(msgs, types.Message{ID: ident.Random("msg-"), Role: types.RoleAssistant, Content: fmt.Sprintf("answer %d", i)})
		}
	}
	msgs = append(msgs, userMsg(p.Text))
	res, sent := r.run(ctx, newInput(ident.Random("agentcheck-"), msgs))
	if len(sent) > 600 {
		sent = sent[:600] + fmt.Sprintf("… (%d messages)", len(msgs))
	}
	if problem := res.problem(); problem != "" || res.text() == "" {
		if problem == "" {
			problem = "no text answer"
		}
		r.fail(id, title, secMessages, failure{detail: problem, sent: sent, got: res.names()})
		return
	}
	r.pass(id, title, secMessages)
}
