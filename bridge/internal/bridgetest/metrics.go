package bridgetest

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/aapagui/aapagui/internal/testkit/metricstest"
)

// NoLabelHolds checks that no label of any metric in m carries one of
// values (the ids and keys of a test's requests).
func NoLabelHolds(t *testing.T, m metricstest.Snapshot, values ...string) {
	t.Helper()
	for name, f := range m {
		for _, s := range f.GetMetric() {
			for _, l := range s.GetLabel() {
				for _, v := range values {
					assert.NotContains(t, l.GetValue(), v, name)
				}
			}
		}
	}
}
