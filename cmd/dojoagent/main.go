package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"path"
	"time"

	"github.com/rs/zerolog"

	"github.com/aapagui/aapagui/cmd/internal/cli"
	"github.com/aapagui/aapagui/demo"
	"github.com/aapagui/aapagui/internal/buildinfo"
)

func main() { cli.Main("dojoagent", run) }

// maxInput bounds the body of a run that is logged.
const maxInput = 32 << 20

func run(args []string) error {
	f := cli.NewFlags("dojoagent", "DOJOAGENT")
	listen := f.String("listen", "127.0.0.1:8000", "address to serve the starter's features on")
	pause := f.Duration("pause", time.Second, "how long the starter's longest pause lasts (1s, between the agentic generative UI's steps); its other pauses are scaled alike (0: none)")
	logInputs := f.Bool("log-inputs", false, "log each run's whole RunAgentInput (its state, context, tools and messages)")
	level := f.String("log-level", "info", "debug, info, warn or error")
	version := f.FlagSet.Bool("version", false, "print the version and exit")
	if err := f.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return cli.ErrUsage
	}
	if *version {
		fmt.Println("dojoagent " + buildinfo.Read().String())
		return nil
	}
	if *pause < 0 || *pause > time.Minute {
		return fmt.Errorf("--pause %s: want 0 to 1m", *pause)
	}
	log, err := cli.Logger(*level)
	if err != nil {
		return err
	}
	h := handler(log, &demo.Starter{Pause: *pause}, *logInputs)
	return cli.Serve(context.Background(), log, cli.ServeOptions{Addr: *listen, Handler: h, Grace: 5 * time.Second, Ready: func(a net.Addr) {
		log.Info().Str("listen", a.String()).Strs("features", demo.StarterFeatures).Str("pause", pause.String()).Msg("dojoagent serving")
	}})
}

// handler serves the starter, answers GET /healthz, and logs each run.
func handler(log zerolog.Logger, starter http.Handler, logInputs bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/healthz" {
			w.Header().Set("Content-Type", "text/plain")
			_, _ = io.WriteString(w, "ok\n")
			return
		}
		if r.Method == http.MethodPost {
			body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxInput))
			if err != nil {
				http.Error(w, `{"error":{"code":"invalid_body","message":"the body could not be read"}}`, http.StatusBadRequest)
				return
			}
			logRun(log, path.Base(r.URL.Path), body, logInputs)
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		starter.ServeHTTP(w, r)
	})
}

// logRun logs one run: its feature, thread, run and messages' count, and
// its whole input when asked.
func logRun(log zerolog.Logger, feature string, body []byte, whole bool) {
	var in struct {
		ThreadID string            `json:"threadId"`
		RunID    string            `json:"runId"`
		Messages []json.RawMessage `json:"messages"`
	}
	ev := log.Info().Str("feature", feature)
	if err := json.Unmarshal(body, &in); err == nil {
		ev = ev.Str("thread", in.ThreadID).Str("run", in.RunID).Int("messages", len(in.Messages))
		var compact bytes.Buffer
		if whole && json.Compact(&compact, body) == nil {
			ev = ev.RawJSON("input", compact.Bytes())
		}
	}
	ev.Msg("run")
}
