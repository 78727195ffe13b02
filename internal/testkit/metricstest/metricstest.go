package metricstest

import (
	"io"
	"net/http"
	"sort"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Snapshot is one scrape: the metric families by name.
type Snapshot map[string]*dto.MetricFamily

// Scrape GETs url (with "Authorization: Bearer key" unless key is empty),
// checks that it answered 200 in the text format, and parses it.
func Scrape(t testing.TB, url, key string) Snapshot {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		t.Fatalf("GET %s: %d %s", url, resp.StatusCode, body)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
		t.Fatalf("GET %s: Content-Type %q is not the Prometheus text format", url, ct)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	return fams
}

// Value is the value of the series of name whose labels include every
// pair of labels ("route", "/sessions", "status", "201", …): a counter's
// or gauge's value, a histogram's sample count; summed when several series
// match, 0 when none does.
func (s Snapshot) Value(name string, labels ...string) float64 {
	f, ok := s[name]
	if !ok {
		return 0
	}
	sum := 0.0
	for _, m := range f.GetMetric() {
		if !matches(m, labels) {
			continue
		}
		switch {
		case m.Counter != nil:
			sum += m.GetCounter().GetValue()
		case m.Gauge != nil:
			sum += m.GetGauge().GetValue()
		case m.Histogram != nil:
			sum += float64(m.GetHistogram().GetSampleCount())
		case m.Untyped != nil:
			sum += m.GetUntyped().GetValue()
		}
	}
	return sum
}

// Has reports whether name has a series with these labels.
func (s Snapshot) Has(name string, labels ...string) bool {
	f, ok := s[name]
	if !ok {
		return false
	}
	for _, m := range f.GetMetric() {
		if matches(m, labels) {
			return true
		}
	}
	return false
}

// LabelValues lists the values label takes in the series of name.
func (s Snapshot) LabelValues(name, label string) []string {
	seen := map[string]bool{}
	for _, m := range s[name].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == label {
				seen[l.GetValue()] = true
			}
		}
	}
	out := make([]string, 0, len(seen))
	for v := range seen {
		out = append(out, v)
	}
	sort.Strings(out)
	return out
}

func matches(m *dto.Metric, labels []string) bool {
	for i := 0; i+1 < len(labels); i += 2 {
		found := false
		for _, l := range m.GetLabel() {
			if l.GetName() == labels[i] && l.GetValue() == labels[i+1] {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}
