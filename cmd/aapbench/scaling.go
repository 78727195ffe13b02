package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"regexp"

	"github.com/aapagui/aapagui/cmd/aapbench/internal/bench"
)

// scalingOptions are the flags of -scaling.
type scalingOptions struct {
	on          bool
	only, store string
	profiles    string
	scale       float64
}

// scalingFlags defines the flags of -scaling.
func scalingFlags() *scalingOptions {
	s := &scalingOptions{}
	flag.BoolVar(&s.on, "scaling", false, "measure how each bridge's CPU grows with every dimension of its inputs instead: each dimension at n and 10n, one request through a bridge in a process of its own, the ratio of its CPU beside the ratio of the input's bytes (at most 12 is linear); with -reps (default 3, the least kept); exits 3 when a ratio is past 40")
	flag.StringVar(&s.only, "scaling-only", "", "with -scaling: only the dimensions whose key (program/name, e.g. aap2agui/seed-calls) matches this regular expression")
	flag.StringVar(&s.store, "scaling-store", "memory", "with -scaling: the bridges' store, memory or sqlite")
	flag.Float64Var(&s.scale, "scaling-scale", 1, "with -scaling: multiply every dimension's sizes by this")
	flag.StringVar(&s.profiles, "scaling-profile", "", "with -scaling: write a CPU profile of each dimension's bridge process at 10n into this folder (program-name.pprof)")
	return s
}

// run runs -scaling and returns the exit code: 3 when a row is far past
// linear.
func (s *scalingOptions) run(reps int) int {
	fail := func(code int, err error) int {
		fmt.Fprintln(os.Stderr, "aapbench:", err)
		return code
	}
	self, err := os.Executable()
	if err != nil {
		return fail(1, err)
	}
	o := bench.ScalingOptions{Command: []string{self}, Reps: reps, Scale: s.scale, Store: s.store, Profiles: s.profiles}
	if s.only != "" {
		if o.Only, err = regexp.Compile(s.only); err != nil {
			return fail(2, err)
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	rows, err := bench.Scaling(ctx, o)
	if err != nil {
		return fail(1, err)
	}
	for _, r := range rows {
		if r.Far() {
			fmt.Fprintf(os.Stderr, "aapbench: %s grows %.0f× in CPU for 10× the %s\n", r.Key, r.CPURatio(), r.Dimension)
			return 3
		}
	}
	return 0
}
