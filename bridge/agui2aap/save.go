package agui2aap

import (
	"context"
	"errors"

	"github.com/aapagui/aapagui/bridge/internal/turns"
	"github.com/aapagui/aapagui/store"
	"github.com/aapagui/aapagui/translate"
	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/events"
	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"
)

// The run's end: the thread saved and freed in one write, and only then
// RUN_FINISHED (or RUN_ERROR when the thread could not be saved).

// finish saves and frees the thread, in one write, before the client sees
// the end of the run: a client that starts its next run at once
// (CopilotKit does, after a frontend tool) must find the thread saved and
// free; and a run whose thread could not be saved does not finish
// (RUN_ERROR STORE_ERROR instead of RUN_FINISHED).
func (r *runner) finish(ctx context.Context) {
	err := r.save(ctx)
	r.life.Free()
	if fin, ok := r.w.Held(); ok {
		end := fin
		if err != nil {
			r.life.Line.Upstream = "store_error"
			named := errRunNotStored
			if errors.Is(err, store.ErrLeaseLost) {
				// Another holder took the thread: the run stopped
				// rather than finish over it.
				r.life.Line.Upstream, named = "lease_lost", err
			}
			message, code := inBand(named)
			end = &events.RunErrorEvent{BaseEvent: events.NewBaseEvent(events.EventTypeRunError), Message: message, Code: &code}
		}
		r.w.Send(r.life, end)
		return
	}
	r.life.Out.Flush()
}

// threadMessages is the whole thread as the client should now hold it:
// its messages (activity aside) and those the run produced, a produced
// result for a call the client answered itself left out.
func (r *runner) threadMessages() []types.Message {
	out := make([]types.Message, 0, len(r.in.Messages)+8)
	answered := map[string]bool{}
	for _, m := range r.in.Messages {
		if m.Role == types.RoleActivity {
			continue
		}
		if m.Role == types.RoleTool {
			answered[m.ToolCallID] = true
		}
		out = append(out, m)
	}
	for _, m := range r.a2g.Messages() {
		if m.Role == types.RoleTool && answered[m.ToolCallID] {
			continue
		}
		out = append(out, m)
	}
	return out
}

// save records what the session has now seen: the client's messages this
// run delivered and the messages the run produced (by the ids the client
// will send them back under), the calls still waiting, and the open
// interrupts.
//
// The save is tried again while the run's lease holds (a thread's save is
// the same whether an earlier try was stored or not); the error it returns
// means the thread is not saved and the run must not finish.
func (r *runner) save(ctx context.Context) error {
	th := r.th
	before := len(th.Delivered)
	th.DeliveredFrom = before // the ids as read: the save writes the run's
	th.Delivered = append(th.Delivered, r.p.Delivered...)
	produced := r.a2g.Messages()
	for _, m := range produced {
		if m.Role != types.RoleReasoning {
			th.Delivered = append(th.Delivered, m.ID)
		}
	}
	th.RecordTail = r.recordTail(before, produced)
	th.ClientCalls, th.Interrupts = nil, nil
	for _, call := range r.a2g.PendingCalls() {
		if r.clients[call.Name] {
			th.ClientCalls = append(th.ClientCalls, call.ToolCallID)
		} else {
			th.Interrupts = append(th.Interrupts, translate.PermissionInterrupt(call))
		}
	}
	th.RunID = r.in.RunID
	if th.Title == "" {
		th.Title = threadTitle(r.in.Messages)
	}
	// Saved even when the client has gone: a context not cancelled with
	// the request's, which lends it only its values (the trace).
	ctx = context.WithoutCancel(ctx)
	err := r.life.Lease.ReleaseWith(func(holder string) error {
		ctx, cancel := context.WithTimeout(ctx, turns.WriteTimeout)
		defer cancel()
		return r.s.cfg.Store.SaveThreadUnlock(ctx, th, holder)
	})
	if err != nil {
		r.log.Error().Err(err).Str("thread", th.ID).Msg("store: save thread: the run ends with RUN_ERROR")
		return err
	}
	r.s.base.Metrics.InterruptsChanged(len(th.Interrupts) - r.openBefore)
	return nil
}
