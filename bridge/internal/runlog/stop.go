package runlog

import (
	"context"
	"time"

	"github.com/rs/zerolog"

	"github.com/aapagui/aapagui/store"
)

// A run is stopped on purpose by marking its log in the store
// (store.RunLogStore.StopRunLog), from any replica. The process that runs
// it learns of it at once when the mark was made there (Hub.Stop), and
// otherwise by one poll of the store per process, not per run (the
// store's StoppingRunLogs, about once a second), made only while the
// process runs stoppable runs: an idle process holds no goroutine and no
// timer for it.

// DefaultStopPoll is Hub.StopPoll's default: about how long a run asked to
// stop on another replica goes on.
const DefaultStopPoll = time.Second

// Stoppable makes run log id's run stoppable (Stop, or a mark in st seen
// by the hub's poll): stop ends the run, and is called at most once. done
// takes it back, as the run ends. A hub polls one store: the one of the
// run that starts its poll.
func (h *Hub) Stoppable(st store.RunLogStore, id string, stop func()) (done func()) {
	h.mu.Lock()
	if h.stops == nil {
		h.stops = map[string]func(){}
	}
	h.stops[id] = stop
	start := !h.polling
	h.polling = true
	h.mu.Unlock()
	if start {
		go h.pollStops(st)
	}
	return func() {
		h.mu.Lock()
		delete(h.stops, id)
		h.mu.Unlock()
	}
}

// Stop ends run log id's run at once when this process runs it (and made
// it Stoppable); it reports whether it did.
func (h *Hub) Stop(id string) bool {
	h.mu.Lock()
	stop, ok := h.stops[id]
	delete(h.stops, id)
	h.mu.Unlock()
	if ok {
		stop()
	}
	return ok
}

func (h *Hub) stopPoll() time.Duration {
	if h.StopPoll > 0 {
		return h.StopPoll
	}
	return DefaultStopPoll
}

// pollStops asks st, every StopPoll, which running logs were asked to
// stop, and stops those this process runs; it ends when the process runs
// none. A failed poll is logged (at most once a minute) and tried again
// at the next tick.
func (h *Hub) pollStops(st store.RunLogStore) {
	every := h.stopPoll()
	t := time.NewTicker(every)
	defer t.Stop()
	var warned time.Time
	for range t.C {
		h.mu.Lock()
		if len(h.stops) == 0 {
			h.polling = false
			h.mu.Unlock()
			return
		}
		h.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), 10*every)
		ids, err := st.StoppingRunLogs(ctx)
		cancel()
		if err != nil {
			if time.Since(warned) > time.Minute {
				warned = time.Now()
				h.logger().Warn().Err(err).Msg("run logs: the runs asked to stop could not be read; runs stopped on another replica go on until it can")
			}
			continue
		}
		for _, id := range ids {
			if h.Stop(id) {
				h.logger().Info().Str("run_log", id).Msg("run log: the run was asked to stop on another replica")
			}
		}
	}
}

func (h *Hub) logger() *zerolog.Logger {
	if h.Log == nil {
		nop := zerolog.Nop()
		return &nop
	}
	return h.Log
}
