package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// What the process can carry (admit.Load): how late its own timers fire,
// how late its lock renewals answer, and what became of the turns it was
// asked to start.

// Admission results and the causes of a refusal.
const (
	Admitted        = "admitted"
	Refused         = "refused"
	CauseSchedDelay = "scheduling_delay" // the process's timers fire late: its CPU is taken
	CauseRenewalLag = "renewal_lag"      // its lock renewals answer late
	CauseStoreBusy  = "store_busy"       // the store did not take the start in time (StartTimeout)
)

var loadBuckets = []float64{.001, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}

type loadMetrics struct {
	admission  *prometheus.CounterVec
	schedDelay prometheus.Histogram
	renewalLag prometheus.Histogram
	late       prometheus.Counter
	lost       prometheus.Counter
}

func newLoadMetrics(f factory, ns, u string) loadMetrics {
	return loadMetrics{
		admission: f.counterVec(prometheus.CounterOpts{Namespace: ns, Name: "admission_total",
			Help: "Starts of " + u + "s, by result (admitted, refused) and, for a refusal (503 with Retry-After, before anything streamed), its cause (scheduling_delay, renewal_lag, store_busy)."}, "result", "cause"),
		schedDelay: f.histogram(prometheus.HistogramOpts{Namespace: ns, Name: "scheduling_delay_seconds",
			Help: "How late the process's own 50 ms ticker fires while it serves " + u + "s: the CPU it does not get.", Buckets: loadBuckets}),
		renewalLag: f.histogram(prometheus.HistogramOpts{Namespace: ns, Name: "lease_renewal_lag_seconds",
			Help: "Time from when a " + u + "'s lock renewal was due to when the store confirmed it (its timer's lateness, its wait for the store, the store's answer).", Buckets: loadBuckets}),
		late: f.counter(prometheus.CounterOpts{Namespace: ns, Name: "lease_renewals_late_total",
			Help: "Lock renewals that had not succeeded by shortly before the store could let the lock go (the lease renews at once, and keeps a lock nobody took)."}),
		lost: f.counter(prometheus.CounterOpts{Namespace: ns, Name: "leases_lost_total",
			Help: "Locks of " + u + "s found taken by another holder: the " + u + " stopped with lease_lost."}),
	}
}

// Admission counts a start admitted (cause "") or refused for cause.
func (m *Metrics) Admission(cause string) {
	if cause == "" {
		m.load.admission.WithLabelValues(Admitted, "").Inc()
		return
	}
	m.load.admission.WithLabelValues(Refused, cause).Inc()
}

// SchedulingDelay observes how late the process's ticker fired.
func (m *Metrics) SchedulingDelay(d time.Duration) { m.load.schedDelay.Observe(d.Seconds()) }

// RenewalLag observes a lock renewal's lag.
func (m *Metrics) RenewalLag(d time.Duration) { m.load.renewalLag.Observe(d.Seconds()) }

// LeaseEvent counts a lease's late renewal (op "late") or its loss (op
// "lost"); other ops are not counted.
func (m *Metrics) LeaseEvent(op string) {
	switch op {
	case "late":
		m.load.late.Inc()
	case "lost":
		m.load.lost.Inc()
	}
}

func (f factory) histogram(o prometheus.HistogramOpts) prometheus.Histogram {
	h := prometheus.NewHistogram(o)
	f.reg.MustRegister(h)
	return h
}
