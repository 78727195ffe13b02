package agui2aap

import (
	"context"
	"errors"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/events"
	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"

	"github.com/aapagui/aapagui/bridge/internal/turns"
	"github.com/aapagui/aapagui/store"
	"github.com/aapagui/aapagui/translate"
)

// The run's end: the thread saved and freed in one write, and only then
// RUN_FINISHED (or RUN_ERROR when the thread could not be saved).

// Acknowledge sends the run's end once the thread is saved and free: the
// RUN_FINISHED withheld, or RUN_ERROR when the thread could not be saved
// (stored). A client that starts its next run at once (CopilotKit does,
// after a frontend tool) finds the thread saved and free.
func (r *runner) Acknowledge(turn *turns.Turn, stored error) error {
	if stored != nil {
		r.log.Error().Err(stored).Str("thread", r.th.ID).Msg("store: save thread: the run ends with RUN_ERROR")
	} else {
		r.env.met.InterruptsChanged(len(r.th.Interrupts) - int(r.openBefore))
	}
	fin, ok := r.w.Withheld()
	if !ok {
		turn.Out.Flush()
		return nil
	}
	end := fin
	if stored != nil {
		turn.Line.Upstream = "store_error"
		named := errRunNotStored
		if errors.Is(stored, store.ErrLeaseLost) {
			// Another holder took the thread: the run stopped rather
			// than finish over it.
			turn.Line.Upstream, named = "lease_lost", stored
		}
		message, code := inBand(named)
		end = &events.RunErrorEvent{BaseEvent: events.NewBaseEvent(events.EventTypeRunError), Message: message, Code: &code}
	}
	r.w.Send(turn, end)
	return nil
}

// prepareSave makes the thread what the run leaves it: what the session
// has now seen (the client's messages this run delivered and the messages
// the run produced, by the ids the client will send them back under), the
// record's new tail, the calls still waiting and the open interrupts.
func (r *runner) prepareSave() {
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
	client, server := r.toolOwners().Waiting(r.a2g.PendingCalls())
	for _, call := range client {
		th.ClientCalls = append(th.ClientCalls, call.ToolCallID)
	}
	for _, call := range server {
		th.Interrupts = append(th.Interrupts, translate.PermissionInterrupt(call))
	}
	th.RunID = r.in.RunID
}

// Store saves the thread and frees it, in one write (a thread's save is
// the same whether an earlier try was stored or not).
func (r *runner) Store(ctx context.Context, holder string) error {
	return r.env.cfg.Store.SaveThread(ctx, r.th, holder)
}
