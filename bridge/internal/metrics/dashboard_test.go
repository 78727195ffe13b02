package metrics_test

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/bridge/internal/metrics"
)

// The chart's files, as its metricsFile helper writes them for a program.
const chartFiles = "../../../deploy/helm/aapagui/files/"

func forProgram(t *testing.T, file, program, unit string) string {
	t.Helper()
	b, err := os.ReadFile(chartFiles + file)
	require.NoError(t, err)
	s := strings.ReplaceAll(string(b), "AAPAGUI_UNIT", program+"_"+unit)
	return strings.ReplaceAll(s, "AAPAGUI_", program+"_")
}

// exprs are the PromQL expressions of the dashboard's panels and of the
// alert rules.
func exprs(t *testing.T, program, unit string) []string {
	var dash struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	require.NoError(t, json.Unmarshal([]byte(forProgram(t, "dashboard.json", program, unit)), &dash))
	var out []string
	for _, p := range dash.Panels {
		require.NotEmpty(t, p.Targets, "panel %q queries nothing", p.Title)
		for _, tg := range p.Targets {
			out = append(out, tg.Expr)
		}
	}
	rules := 0
	for line := range strings.Lines(forProgram(t, "alerts.yaml", program, unit)) {
		if e, ok := strings.CutPrefix(strings.TrimSpace(line), "expr: "); ok {
			out = append(out, e)
			rules++
		}
	}
	require.Positive(t, rules, "the alert rules")
	return out
}

// exported reports whether the registry has a metric of that name: a
// probe of the same name is refused when it does.
func exported(reg *prometheus.Registry, name string) bool {
	g := prometheus.NewGauge(prometheus.GaugeOpts{Name: name, Help: "probe"})
	if err := reg.Register(g); err != nil {
		return true
	}
	reg.Unregister(g)
	return false
}

var metricName = regexp.MustCompile(`\b[a-z][a-z0-9_]*_[a-z0-9_]+\b`)

// Every metric the chart's Grafana dashboard and Prometheus alert rules
// query is one each program exports, under its own prefix and unit: a
// renamed metric fails here, not on an operator's empty panel during a
// burst.
func TestDashboardAndAlertsQueryExportedMetrics(t *testing.T) {
	for _, p := range []struct{ program, unit string }{{"aap2agui", "turn"}, {"agui2aap", "run"}} {
		t.Run(p.program, func(t *testing.T) {
			reg := metrics.New(metrics.Options{Namespace: p.program, Unit: p.unit}).Registry()
			seen := map[string]bool{}
			for _, e := range exprs(t, p.program, p.unit) {
				assert.NotContains(t, e, "AAPAGUI", "a placeholder left: %s", e)
				for _, name := range metricName.FindAllString(e, -1) {
					if !strings.HasPrefix(name, p.program+"_") && !strings.HasPrefix(name, "process_") && !strings.HasPrefix(name, "go_") {
						continue // a function or a label (histogram_quantile, status)
					}
					seen[name] = true
					base := name
					for _, suffix := range []string{"_bucket", "_sum", "_count"} {
						if b, ok := strings.CutSuffix(name, suffix); ok && exported(reg, b) {
							base = b
						}
					}
					assert.True(t, exported(reg, base), "%s queries %s, which %s does not export", e, name, p.program)
				}
			}
			for _, want := range []string{"admission_total", "lease_renewal_lag_seconds_bucket", "scheduling_delay_seconds_bucket", "leases_lost_total", "http_requests_total", p.unit + "s_in_flight"} {
				assert.True(t, seen[p.program+"_"+want], "nothing queries %s_%s", p.program, want)
			}
		})
	}
}
