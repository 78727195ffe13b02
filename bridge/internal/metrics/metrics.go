package metrics

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/aapagui/aapagui/internal/buildinfo"
	"github.com/aapagui/aapagui/store"
)

// Options names a program's metrics.
type Options struct {
	// Namespace prefixes every metric: the program's name ("aap2agui").
	Namespace string
	// Unit is what the program streams: "turn" (aap2agui) or "run"
	// (agui2aap); it names the in-flight, duration, first-event and
	// conflict metrics.
	Unit string
}

// Metrics are one server's collectors and the registry that holds them.
type Metrics struct {
	reg *prometheus.Registry

	requests        *prometheus.CounterVec
	requestDuration *prometheus.HistogramVec
	inFlight        prometheus.Gauge
	duration        *prometheus.HistogramVec
	firstEvent      *prometheus.HistogramVec
	eventsIn        eventCounters
	eventsOut       eventCounters
	upstream        *prometheus.CounterVec
	conflicts       prometheus.Counter
	storeDuration   *prometheus.HistogramVec
	storeErrors     *prometheus.CounterVec
	sseBytes        prometheus.Counter
	interrupts      prometheus.Gauge
	toolsAgainst    *prometheus.CounterVec
	notCarried      *prometheus.CounterVec
	ns              string
	tokensOnce      sync.Once
	tokens          *prometheus.CounterVec
	load            loadMetrics
}

// Upstream call outcomes.
const (
	OutcomeOK        = "ok"
	OutcomeError     = "error"
	OutcomeCancelled = "cancelled" // the client went away first
	OutcomeStopped   = "stopped"   // the run was stopped on request (a DELETE of it)
)

// Event directions.
const (
	In  = "in"  // read from the upstream
	Out = "out" // written to the client
)

// Buckets (seconds). Streams run for as long as the agent takes, so the
// request and turn buckets reach ten minutes.
var (
	requestBuckets = []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300, 600}
	firstBuckets   = []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60}
	storeBuckets   = []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5}
)

// New returns a program's collectors in a registry of their own, with the
// Go runtime and process collectors and a build_info gauge.
func New(o Options) *Metrics {
	ns, u := o.Namespace, o.Unit
	m := &Metrics{reg: prometheus.NewRegistry(), ns: ns}
	f := factory{m.reg}
	m.requests = f.counterVec(prometheus.CounterOpts{Namespace: ns, Name: "http_requests_total",
		Help: "HTTP requests answered, by route template, method and status."}, "route", "method", "status")
	m.requestDuration = f.histogramVec(prometheus.HistogramOpts{Namespace: ns, Name: "http_request_duration_seconds",
		Help: "Time from a request's arrival to the end of its response (a stream's whole length), by route template and method.", Buckets: requestBuckets}, "route", "method")
	m.inFlight = f.gauge(prometheus.GaugeOpts{Namespace: ns, Name: u + "s_in_flight",
		Help: "The " + u + "s streaming now."})
	m.duration = f.histogramVec(prometheus.HistogramOpts{Namespace: ns, Name: u + "_duration_seconds",
		Help: "Time from a " + u + " request's arrival to the " + u + "'s end, by agent and upstream stream mode.", Buckets: requestBuckets}, "agent", "mode")
	m.firstEvent = f.histogramVec(prometheus.HistogramOpts{Namespace: ns, Name: u + "_first_event_seconds",
		Help: "Time from a " + u + " request's arrival to the first event from the upstream, by agent and upstream stream mode.", Buckets: firstBuckets}, "agent", "mode")
	events := f.counterVec(prometheus.CounterOpts{Namespace: ns, Name: "events_total",
		Help: "Events translated, by direction (in: read from the upstream, out: written to the client) and event type."}, "direction", "type")
	m.eventsIn = eventCounters{vec: events, dir: In}
	m.eventsOut = eventCounters{vec: events, dir: Out}
	m.upstream = f.counterVec(prometheus.CounterOpts{Namespace: ns, Name: "upstream_requests_total",
		Help: "Calls to the upstream, by call, agent (empty for a call of no one agent), outcome (ok, error, cancelled) and error code (none when there is no error)."}, "call", "agent", "outcome", "code")
	m.conflicts = f.counter(prometheus.CounterOpts{Namespace: ns, Name: u + "_conflicts_total",
		Help: "Requests answered 409 because a " + u + " was already running on the same conversation."})
	m.storeDuration = f.histogramVec(prometheus.HistogramOpts{Namespace: ns, Name: "store_operation_duration_seconds",
		Help: "Latency of store operations, by operation.", Buckets: storeBuckets}, "op")
	m.storeErrors = f.counterVec(prometheus.CounterOpts{Namespace: ns, Name: "store_errors_total",
		Help: "Store operations that failed (not counting a conversation that does not exist), by operation."}, "op")
	m.sseBytes = f.counter(prometheus.CounterOpts{Namespace: ns, Name: "sse_bytes_written_total",
		Help: "Bytes written to clients on event streams."})
	m.interrupts = f.gauge(prometheus.GaugeOpts{Namespace: ns, Name: "interrupts_open",
		Help: "Tool permissions waiting for an answer: those this process opened minus those it closed since it started."})
	m.toolsAgainst = f.counterVec(prometheus.CounterOpts{Namespace: ns, Name: "tools_run_against_settings_total",
		Help: "Server tools declared with permissions: aap that the agent ran although the session had not enabled them with trust, by tool (declared in the agent config) and session setting (not_enabled, untrusted)."}, "tool", "setting")
	m.notCarried = f.counterVec(prometheus.CounterOpts{Namespace: ns, Name: "events_not_carried_total",
		Help: "What one side sent that the other side's protocol has no room for, so that it was not sent on (aap2agui: AG-UI events an AAP client gets nothing of; agui2aap: what of a page's run an AAP server without the AG-UI extension gets nothing of), by type; counted once per " + u + "."}, "type")
	m.load = newLoadMetrics(f, ns, u)
	b := buildinfo.Read()
	f.gauge(prometheus.GaugeOpts{Namespace: ns, Name: "build_info",
		Help:        "The program's build: module version, VCS revision and Go version; always 1.",
		ConstLabels: prometheus.Labels{"version": b.Version, "revision": b.Revision, "goversion": b.GoVersion}}).Set(1)
	m.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

type factory struct{ reg prometheus.Registerer }

func (f factory) counterVec(o prometheus.CounterOpts, labels ...string) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(o, labels)
	f.reg.MustRegister(c)
	return c
}

func (f factory) histogramVec(o prometheus.HistogramOpts, labels ...string) *prometheus.HistogramVec {
	h := prometheus.NewHistogramVec(o, labels)
	f.reg.MustRegister(h)
	return h
}

func (f factory) counter(o prometheus.CounterOpts) prometheus.Counter {
	c := prometheus.NewCounter(o)
	f.reg.MustRegister(c)
	return c
}

func (f factory) gauge(o prometheus.GaugeOpts) prometheus.Gauge {
	g := prometheus.NewGauge(o)
	f.reg.MustRegister(g)
	return g
}

// Registry is the server's registry.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the registry in the Prometheus text format (or
// OpenMetrics when asked).
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg, EnableOpenMetrics: true})
}

// Upstream counts one upstream call of the named kind ("turn", "meta",
// "create_session") for an agent ("" for a call of no one agent) by its
// result: OutcomeOK, OutcomeCancelled, OutcomeStopped, or the stable
// error code of a failure.
func (m *Metrics) Upstream(call, agent, result string) {
	outcome, code := result, "none"
	if result != OutcomeOK && result != OutcomeCancelled && result != OutcomeStopped {
		outcome, code = OutcomeError, result
	}
	m.upstream.WithLabelValues(call, agent, outcome, code).Inc()
}

// ToolRanAgainstSettings counts a declared server tool that the agent ran
// against the session's settings; tool is a name from the agent config
// (a bounded set), setting "not_enabled" or "untrusted".
func (m *Metrics) ToolRanAgainstSettings(tool, setting string) {
	m.toolsAgainst.WithLabelValues(tool, setting).Inc()
}

// NotCarried counts n of what the upstream sent, of type typ (one of a
// fixed set the program names), that the client was not sent.
func (m *Metrics) NotCarried(typ string, n int) {
	m.notCarried.WithLabelValues(typ).Add(float64(n))
}

// InterruptsChanged adds delta (negative when interrupts were answered)
// to the open interrupts.
func (m *Metrics) InterruptsChanged(delta int) {
	if delta != 0 {
		m.interrupts.Add(float64(delta))
	}
}

// ObserveStore is a store.Observer timing each operation and counting
// its failures (store.ErrNotFound is an answer, not a failure).
func (m *Metrics) ObserveStore(ctx context.Context, op string) (context.Context, func(error)) {
	start := time.Now()
	return ctx, func(err error) {
		m.storeDuration.WithLabelValues(op).Observe(time.Since(start).Seconds())
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			m.storeErrors.WithLabelValues(op).Inc()
		}
	}
}

// Turn follows one turn (or run) from its start to its end.
type Turn struct {
	m             *Metrics
	start         time.Time
	agent, mode   string
	in, out       int
	lastIn, lastO lastCounter
	ended         bool
	tokensIn      int64
	tokensOut     int64
}

// StartTurn counts a turn of the named agent in flight from now on. start
// is the arrival of its request (edge.Start), mode its upstream stream
// mode.
func (m *Metrics) StartTurn(start time.Time, agent, mode string) *Turn {
	m.inFlight.Inc()
	return &Turn{m: m, start: start, agent: agent, mode: mode}
}

// In counts an event read from the upstream; the first one also records
// the time to first event.
func (t *Turn) In(typ string) {
	if t.in == 0 {
		t.m.firstEvent.WithLabelValues(t.agent, t.mode).Observe(time.Since(t.start).Seconds())
	}
	t.in++
	t.m.eventsIn.inc(&t.lastIn, typ)
}

// Out counts an event written to the client.
func (t *Turn) Out(typ string) {
	t.out++
	t.m.eventsOut.inc(&t.lastO, typ)
}

// Mode is the turn's upstream stream mode.
func (t *Turn) Mode() string { return t.mode }

// Events are the events read from the upstream and written to the client
// so far.
func (t *Turn) Events() (in, out int) { return t.in, t.out }

// End records the turn's duration and takes it out of flight; only the
// first call counts. It returns the duration.
func (t *Turn) End() time.Duration {
	d := time.Since(t.start)
	if !t.ended {
		t.ended = true
		t.m.inFlight.Dec()
		t.m.duration.WithLabelValues(t.agent, t.mode).Observe(d.Seconds())
	}
	return d
}

// eventCounters caches the counter of each event type of one direction:
// an event is counted with a map read, not a label hash. Types are those
// the bridges' decoders know (unknown events are counted as "unknown"),
// so the cache is bounded.
type eventCounters struct {
	vec *prometheus.CounterVec
	dir string
	m   sync.Map // type → prometheus.Counter
}

// inc counts an event of typ. last keeps the counter of the turn's
// previous event: a run of one type (text deltas) costs no lookup at all.
func (e *eventCounters) inc(last *lastCounter, typ string) {
	if last.c == nil || last.typ != typ {
		c, ok := e.m.Load(typ)
		if !ok {
			c, _ = e.m.LoadOrStore(typ, e.vec.WithLabelValues(e.dir, typ))
		}
		last.typ, last.c = typ, c.(prometheus.Counter)
	}
	last.c.Inc()
}

type lastCounter struct {
	typ string
	c   prometheus.Counter
}

// Middleware counts and times every request (by route template, never
// the path), counts 409s as conflicts, and counts the bytes of event
// streams as they are written. It runs before everything else, so that
// requests refused by a guard are counted too.
func (m *Metrics) Middleware() gin.HandlerFunc {
	return func(c *gin.Context) {
		start := time.Now()
		c.Writer = &countingWriter{ResponseWriter: c.Writer, bytes: m.sseBytes}
		c.Next() // (what the route does runs below this frame: keep it small)
		m.counted(c, start)
	}
}

// counted counts a request once it is answered.
func (m *Metrics) counted(c *gin.Context, start time.Time) {
	route := c.FullPath()
	if route == "" {
		route = "unmatched"
	}
	method := boundedMethod(c.Request.Method)
	status := c.Writer.Status()
	m.requests.WithLabelValues(route, method, statusText(status)).Inc()
	m.requestDuration.WithLabelValues(route, method).Observe(time.Since(start).Seconds())
	if status == http.StatusConflict {
		m.conflicts.Inc()
	}
}

// boundedMethod keeps a method label to the standard methods.
func boundedMethod(m string) string {
	switch m {
	case http.MethodGet, http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodPatch,
		http.MethodHead, http.MethodOptions, http.MethodConnect, http.MethodTrace:
		return m
	}
	return "OTHER"
}

var statusTexts = func() (s [600]string) {
	for i := range s {
		s[i] = strconv.Itoa(i)
	}
	return s
}()

func statusText(code int) string {
	if code >= 0 && code < len(statusTexts) {
		return statusTexts[code]
	}
	return "other"
}

// countingWriter counts what is written to an event stream. Whether the
// response is one is decided at its first write, when its headers are
// final.
type countingWriter struct {
	gin.ResponseWriter
	bytes   prometheus.Counter
	checked bool
	sse     bool
}

func (w *countingWriter) count(n int) {
	if !w.checked {
		w.checked = true
		w.sse = strings.HasPrefix(w.Header().Get("Content-Type"), "text/event-stream")
	}
	if w.sse && n > 0 {
		w.bytes.Add(float64(n))
	}
}

func (w *countingWriter) Write(b []byte) (int, error) {
	n, err := w.ResponseWriter.Write(b)
	w.count(n)
	return n, err
}

func (w *countingWriter) WriteString(s string) (int, error) {
	n, err := w.ResponseWriter.WriteString(s)
	w.count(n)
	return n, err
}

// Unwrap gives http.ResponseController the writer underneath (read
// deadlines, flushing).
func (w *countingWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
