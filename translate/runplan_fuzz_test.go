package translate_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/aapagui/aapagui/agui"
	"github.com/aapagui/aapagui/translate"
)

// FuzzPlanRun: whatever the client sends and whatever the thread's
// session has seen, PlanRun either refuses the run with a Refusal, or
// names the input it cannot run with an InputError, or plans a turn that
// carries something, delivering only messages the client sent.
func FuzzPlanRun(f *testing.F) {
	for _, in := range []string{
		`{"threadId":"t","runId":"r","messages":[{"id":"u1","role":"user","content":"hi"}]}`,
		`{"threadId":"t","runId":"r","messages":[{"id":"u1","role":"user","content":"hi"},{"id":"a1","role":"assistant","toolCalls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},{"id":"t1","role":"tool","toolCallId":"c1","content":"ok"}],"tools":[{"name":"f","description":"","parameters":{}}]}`,
		`{"threadId":"t","runId":"r","messages":[{"id":"u1","role":"user","content":"hi"},{"id":"a1","role":"assistant","content":"yes"},{"id":"u2","role":"user","content":"again"}]}`,
		`{"threadId":"t","runId":"r","messages":[],"resume":[{"interruptId":"i1","status":"resolved","payload":{"granted":true}}]}`,
	} {
		f.Add(in, "u1", "", byte(0))
		f.Add(in, "u1,a1", "c1", byte(1))
		f.Add(in, "", "", byte(2))
	}
	policies := []translate.Policy{translate.PolicyInterrupt, translate.PolicyGrant, translate.PolicyDeny}
	f.Fuzz(func(t *testing.T, input, delivered, clientCalls string, policy byte) {
		in, err := agui.DecodeRunAgentInputLazy([]byte(input))
		if err != nil {
			return
		}
		th := &translate.ThreadState{SessionID: "s1", Agent: "a", Delivered: split(delivered), ClientCalls: split(clientCalls)}
		p, err := translate.PlanRun(th, in, "a", policies[int(policy)%len(policies)])
		var ref *translate.Refusal
		var ie *translate.InputError
		switch {
		case errors.As(err, &ref):
			if ref.Code == "" || ref.Message == "" {
				t.Fatalf("a refusal without code or message: %#v", ref)
			}
			return
		case errors.As(err, &ie):
			return
		case err != nil:
			t.Fatalf("an error of no known kind: %v", err)
		}
		if len(p.Turn) == 0 {
			t.Fatalf("a plan with an empty turn: %#v", p)
		}
		var sent []string
		for _, m := range in.Messages {
			sent = append(sent, m.ID)
		}
		for _, id := range p.Delivered {
			if !slices.Contains(sent, id) {
				t.Fatalf("delivered %q, which the client did not send", id)
			}
		}
	})
}

func split(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}
