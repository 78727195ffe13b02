package metrics

import "github.com/prometheus/client_golang/prometheus"

// Token kinds counted by Tokens, as AG-UI 1.0's usage names them: input
// and output are the totals; reasoning is part of output, cached_input
// and cache_write_input parts of input.
var tokenKinds = []string{"input", "output", "reasoning", "cached_input", "cache_write_input"}

// tokenVec returns the tokens counter of m's registry, registering it on
// first use.
func (m *Metrics) tokenVec() *prometheus.CounterVec {
	m.tokensOnce.Do(func() {
		m.tokens = factory{m.reg}.counterVec(prometheus.CounterOpts{Namespace: m.ns, Name: "tokens_total",
			Help: "Tokens the agent reported using (AG-UI usage on RUN_FINISHED or RUN_ERROR), by agent (its configured name) and kind: input and output are totals, reasoning is part of output, cached_input and cache_write_input parts of input."},
			"agent", "kind")
	})
	return m.tokens
}

// Tokens counts a turn's reported usage, under the turn's agent; counts
// holds one number per kind of tokenKinds, in that order. The turn's log
// line says the input and output totals.
func (t *Turn) Tokens(counts [5]int64) {
	vec := t.m.tokenVec()
	for i, n := range counts {
		if n > 0 {
			vec.WithLabelValues(t.agent, tokenKinds[i]).Add(float64(n))
		}
	}
	t.tokensIn += counts[0]
	t.tokensOut += counts[1]
}

// TokensUsed are the input and output tokens counted for the turn.
func (t *Turn) TokensUsed() (in, out int64) { return t.tokensIn, t.tokensOut }
