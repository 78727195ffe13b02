package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/aapagui/aapagui/cmd/agentcheck/internal/agentcheck"
)

func main() {
	code, err := run(context.Background(), os.Args[1:], os.Stdout, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "agentcheck:", err)
	}
	os.Exit(code)
}

type headers http.Header

func (h headers) String() string { return "" }

func (h headers) Set(v string) error {
	name, value, ok := strings.Cut(v, ":")
	if !ok || strings.TrimSpace(name) == "" {
		return fmt.Errorf("%q: want 'Name: value'", v)
	}
	http.Header(h).Add(strings.TrimSpace(name), strings.TrimSpace(value))
	return nil
}

const usage = `usage:
  agentcheck aap BASE_URL [flags]    check an AAP server (version 1, 2 or 3)
                                     and each agent it lists (--agent: one)
  agentcheck agui URL [flags]        check an AG-UI agent endpoint
  agentcheck [aap|agui] --help       this text

exit status: 0 every check passed or was skipped, 1 a check failed,
2 a wrong command line or prompts file

flags:
`

// options are agentcheck's flags, for both modes.
type options struct {
	key, key2, agent, prompts string
	header                    headers
	json                      bool
	timeout                   time.Duration
}

func newFlags(out io.Writer, mode string) (*flag.FlagSet, *options) {
	fs := flag.NewFlagSet(strings.TrimSpace("agentcheck "+mode), flag.ContinueOnError)
	fs.SetOutput(out)
	o := &options{header: headers{}}
	// The keys' environment variables are read after parsing, so that the
	// usage never prints a key as a default.
	fs.StringVar(&o.key, "key", "", "API key (aap; env AGENTCHECK_KEY)")
	fs.StringVar(&o.key2, "key2", "", "a second caller's API key, for the isolation checks (aap; env AGENTCHECK_KEY2)")
	fs.StringVar(&o.agent, "agent", "", "the one agent to check (aap; default: each agent GET /meta lists, in turn)")
	fs.Var(o.header, "header", "a header sent with every run, 'Name: value' (agui; repeatable)")
	fs.StringVar(&o.prompts, "prompts", "", "YAML or JSON file of prompts (text, think, clientTool, tool, permission, serverTool, forwardedProps, fail)")
	fs.BoolVar(&o.json, "json", false, "print the report as JSON")
	fs.DurationVar(&o.timeout, "timeout", 60*time.Second, "limit for each request, a whole turn included")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), usage)
		fs.PrintDefaults()
	}
	return fs, o
}

func isHelp(arg string) bool {
	return arg == "-h" || arg == "-help" || arg == "--help"
}

// run returns the exit status: 0 all checks passed (or were skipped), 1 a
// check failed, 2 the command line or the prompts file was wrong. --help,
// before or after the mode, prints the usage with every flag on stdout
// and returns 0.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) (int, error) {
	if (len(args) > 0 && isHelp(args[0])) || (len(args) > 1 && isHelp(args[1]) && (args[0] == "aap" || args[0] == "agui")) {
		fs, _ := newFlags(stdout, "")
		fs.Usage()
		return 0, nil
	}
	if len(args) < 2 || (args[0] != "aap" && args[0] != "agui") {
		fs, _ := newFlags(stderr, "")
		fs.Usage()
		return 2, errors.New("give a mode (aap or agui) and a URL")
	}
	mode, target := args[0], args[1]
	fs, o := newFlags(stderr, mode)
	printUsage := fs.Usage
	fs.Usage = func() {} // printed below: on stdout for --help
	if err := fs.Parse(args[2:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(stdout)
			printUsage()
			return 0, nil
		}
		printUsage()
		return 2, err
	}
	if fs.NArg() > 0 {
		return 2, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if o.key == "" {
		o.key = os.Getenv("AGENTCHECK_KEY")
	}
	if o.key2 == "" {
		o.key2 = os.Getenv("AGENTCHECK_KEY2")
	}
	if u, err := url.Parse(target); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return 2, fmt.Errorf("%q is not an http(s) URL", target)
	}
	p := agentcheck.DefaultPrompts()
	if o.prompts != "" {
		var err error
		if p, err = agentcheck.LoadPrompts(o.prompts); err != nil {
			return 2, err
		}
	}
	var report *agentcheck.Report
	if mode == "aap" {
		report = agentcheck.RunAAP(ctx, target, agentcheck.AAPOptions{Key: o.key, Key2: o.key2, Agent: o.agent, Prompts: p, Timeout: o.timeout})
	} else {
		report = agentcheck.RunAGUI(ctx, target, agentcheck.AGUIOptions{Header: http.Header(o.header), Prompts: p, Timeout: o.timeout})
	}
	var err error
	if o.json {
		err = report.WriteJSON(stdout)
	} else {
		err = report.WriteText(stdout)
	}
	if err != nil {
		return 2, err
	}
	if !report.OK() {
		return 1, nil
	}
	return 0, nil
}
