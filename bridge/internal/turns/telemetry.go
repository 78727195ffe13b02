package turns

import (
	"context"
	"net/http"

	"github.com/gin-gonic/gin"
	"github.com/rs/zerolog"
	"go.opentelemetry.io/otel/trace"

	"github.com/aapagui/aapagui/bridge/internal/metrics"
	"github.com/aapagui/aapagui/bridge/internal/tracing"
	"github.com/aapagui/aapagui/store"
)

// Telemetry wires a bridge's metrics and, when tp is not nil, its tracing:
// it returns the observer of store operations (each timed, and traced),
// the upstream client to use instead of hc, and the middleware that goes
// first on the engine (NewEngine's outer).
func Telemetry(service string, m *metrics.Metrics, tp trace.TracerProvider, hc *http.Client) (store.Observer, *http.Client, []gin.HandlerFunc) {
	if tp == nil {
		return m.ObserveStore, hc, []gin.HandlerFunc{m.Middleware()}
	}
	span := tracing.StoreObserver(tp)
	observe := func(ctx context.Context, op string) (context.Context, func(error)) {
		ctx, endSpan := span(ctx, op)
		ctx, endTimer := m.ObserveStore(ctx, op)
		return ctx, func(err error) { endTimer(err); endSpan(err) }
	}
	return observe, tracing.Client(hc, tp), []gin.HandlerFunc{tracing.Middleware(service, tp), m.Middleware()}
}

// LogLine is what the one info line of a turn (aap2agui) or run
// (agui2aap) says of it besides its metrics (see WriteLogLine).
type LogLine struct {
	What     string // "turn" or "run"
	IDKey    string // the conversation's log key: "session" or "thread"
	ID       string // the conversation's id
	Stop     string // the stop reason of the last upstream turn
	Upstream string // the upstream's result: ok, cancelled or an error code
}

// WriteLogLine ends a turn's (aap2agui) or run's (agui2aap) metrics and writes
// its one info line: what (turn or run), the conversation (idKey: session
// or thread), the upstream stream mode, the stop reason, the events read
// from the upstream and written to the client, the duration and the
// upstream's result (ok, cancelled when the client left, or the error
// code), and the input and output tokens the agent reported, if any. The
// line holds ids only: no content, no key, no option value.
func WriteLogLine(log *zerolog.Logger, t *metrics.Turn, end LogLine) {
	d := t.End()
	in, out := t.Events()
	ev := log.Info().Str(end.IDKey, end.ID).Str("mode", t.Mode()).Str("stop", end.Stop).Int("events_in", in).Int("events_out", out).
		Dur("duration", d).Str("upstream", end.Upstream)
	if tin, tout := t.TokensUsed(); tin+tout > 0 {
		ev = ev.Int64("tokens_in", tin).Int64("tokens_out", tout)
	}
	ev.Msg(end.What + " finished")
}
