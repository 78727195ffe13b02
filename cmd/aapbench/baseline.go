package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"

	"github.com/aapagui/aapagui/cmd/aapbench/internal/bench"
)

// compare runs bench.Compare against baseline (a binary, or a git
// revision to build one from) and returns the exit code.
func compare(baseline, sizes string, reps int, chain bool) int {
	fail := func(err error) int {
		fmt.Fprintln(os.Stderr, "aapbench:", err)
		return 1
	}
	self, err := os.Executable()
	if err != nil {
		return fail(err)
	}
	bin, cleanup, err := baselineBinary(baseline)
	if err != nil {
		return fail(err)
	}
	defer cleanup()
	o := bench.CompareOptions{Current: []string{self}, Baseline: []string{bin}, Reps: reps, Chain: chain}
	if sizes != "" {
		if o.Sizes, err = ints(sizes); err != nil {
			fmt.Fprintln(os.Stderr, "aapbench:", err)
			return 2
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := bench.Compare(ctx, o); err != nil {
		return fail(err)
	}
	return 0
}

// baselineBinary is baseline itself when it is a file, else an aapbench
// built from the git revision it names (in a temporary worktree, removed
// by cleanup).
func baselineBinary(baseline string) (bin string, cleanup func(), err error) {
	if st, err := os.Stat(baseline); err == nil && !st.IsDir() {
		return baseline, func() {}, nil
	}
	dir, err := os.MkdirTemp("", "aapbench-baseline-")
	if err != nil {
		return "", nil, err
	}
	tree := filepath.Join(dir, "src")
	cleanup = func() {
		_ = exec.Command("git", "worktree", "remove", "--force", tree).Run()
		_ = os.RemoveAll(dir)
	}
	run := func(wd string, args ...string) error {
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Dir, cmd.Stdout, cmd.Stderr = wd, os.Stderr, os.Stderr
		return cmd.Run()
	}
	if err := run("", "git", "worktree", "add", "--detach", tree, baseline); err != nil {
		cleanup()
		return "", nil, fmt.Errorf("baseline %q is neither a file nor a git revision: %w", baseline, err)
	}
	bin = filepath.Join(dir, "aapbench")
	if err := run(tree, "go", "build", "-o", bin, "./cmd/aapbench"); err != nil {
		cleanup()
		return "", nil, fmt.Errorf("building the baseline %s: %w", baseline, err)
	}
	return bin, cleanup, nil
}

// historyRun runs bench.History and returns the exit code.
func historyRun(messages, size, reps int, copilotKit string) int {
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, "aapbench:", err)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	o := bench.HistoryOptions{Command: []string{self}, Messages: messages, Bytes: size, Reps: reps}
	if copilotKit != "" {
		o.CopilotKit = []string{"node", copilotKit}
	}
	if err := bench.History(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "aapbench:", err)
		return 1
	}
	return 0
}

// conversationRun runs bench.Conversation and returns the exit code.
func conversationRun(o bench.ConversationOptions, copilotKit string) int {
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, "aapbench:", err)
		return 1
	}
	if o.Command == nil {
		o.Command = []string{self}
	}
	if copilotKit != "" {
		o.CopilotKit = []string{"node", copilotKit}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := bench.Conversation(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "aapbench:", err)
		return 1
	}
	return 0
}

// memoryRun runs bench.Memory, against baseline too when it is set (a
// binary, or a git revision to build one from), and returns the exit
// code: 3 when a row is past the bound.
func memoryRun(o bench.MemoryOptions, baseline string) int {
	fail := func(err error) int {
		fmt.Fprintln(os.Stderr, "aapbench:", err)
		return 1
	}
	self, err := os.Executable()
	if err != nil {
		return fail(err)
	}
	o.Command = []string{self}
	if baseline != "" {
		bin, cleanup, err := baselineBinary(baseline)
		if err != nil {
			return fail(err)
		}
		defer cleanup()
		o.Baseline = []string{bin}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	rows, err := bench.Memory(ctx, o)
	if err != nil {
		return fail(err)
	}
	for _, r := range rows {
		if r.Build == "this" && r.Over(o.Bound) {
			fmt.Fprintln(os.Stderr, "aapbench:", r.Verdict(o.Bound))
			return 3
		}
	}
	return 0
}
