package agentcheck

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"
)

// Status is the outcome of one check.
type Status string

// The outcomes of a check.
const (
	Pass Status = "pass"
	Fail Status = "fail"
	// Skip: the check could not run (the agent does not declare what it
	// needs, or an earlier step failed); Detail says why.
	Skip Status = "skip"
)

// Result is one check's outcome.
type Result struct {
	// Agent is the agent the check was about (aap: each agent /meta
	// lists is checked on its own); empty for a check of the whole server
	// (/meta, error statuses, paging) and for an AG-UI endpoint.
	Agent   string `json:"agent,omitempty"`
	ID      string `json:"id"`
	Title   string `json:"title"`
	Section string `json:"section"`
	Status  Status `json:"status"`
	// Detail says why a check failed or was skipped.
	Detail string `json:"detail,omitempty"`
	// Sent, Got and Want describe a failure: the request, what came back
	// and what the section asks for.
	Sent string `json:"sent,omitempty"`
	Got  string `json:"got,omitempty"`
	Want string `json:"want,omitempty"`
}

// Report is the outcome of a run of checks against one server: an AG-UI
// endpoint, or an AAP server and the agents it lists.
type Report struct {
	Mode   string `json:"mode"` // "aap" or "agui"
	Target string `json:"target"`
	// Agents are the AAP agents checked, in order, each with its counts.
	Agents  []AgentCounts `json:"agents,omitempty"`
	Results []Result      `json:"results"`
	Counts
}

// Counts are how many checks passed, failed and were skipped.
type Counts struct {
	Passed  int `json:"passed"`
	Failed  int `json:"failed"`
	Skipped int `json:"skipped"`
}

func (c *Counts) count(s Status) {
	switch s {
	case Pass:
		c.Passed++
	case Fail:
		c.Failed++
	default:
		c.Skipped++
	}
}

// AgentCounts are the outcomes of the checks about one agent.
type AgentCounts struct {
	Name string `json:"name"`
	Counts
}

// OK reports whether no check failed.
func (r *Report) OK() bool { return r.Failed == 0 }

// Only is the part of the report about one agent: its checks and counts
// (the server's checks, with an empty name).
func (r *Report) Only(agent string) *Report {
	out := &Report{Mode: r.Mode, Target: r.Target}
	for _, res := range r.Results {
		if res.Agent == agent {
			out.add(res)
		}
	}
	return out
}

// Find returns the result of the check with the given id (the first, when
// several agents were checked; see Only).
func (r *Report) Find(id string) (Result, bool) {
	for _, res := range r.Results {
		if res.ID == id {
			return res, true
		}
	}
	return Result{}, false
}

// Failures lists the ids of the checks that failed.
func (r *Report) Failures() []string {
	var out []string
	for _, res := range r.Results {
		if res.Status == Fail {
			out = append(out, res.ID)
		}
	}
	return out
}

func (r *Report) pass(id, title, section string) {
	r.add(Result{ID: id, Title: title, Section: section, Status: Pass})
}

func (r *Report) skip(id, title, section, why string) {
	r.add(Result{ID: id, Title: title, Section: section, Status: Skip, Detail: why})
}

// failure is what a failed check reports.
type failure struct{ detail, sent, got, want string }

func (r *Report) fail(id, title, section string, f failure) {
	r.add(failed(Result{ID: id, Title: title, Section: section}, f))
}

// failed is res as a failure.
func failed(res Result, f failure) Result {
	res.Status, res.Detail, res.Sent, res.Got, res.Want = Fail, f.detail, f.sent, f.got, f.want
	return res
}

// add counts res, in the report and in its agent's counts.
func (r *Report) add(res Result) {
	r.count(res.Status)
	if res.Agent != "" {
		i := slices.IndexFunc(r.Agents, func(a AgentCounts) bool { return a.Name == res.Agent })
		if i < 0 {
			r.Agents = append(r.Agents, AgentCounts{Name: res.Agent})
			i = len(r.Agents) - 1
		}
		r.Agents[i].count(res.Status)
	}
	r.Results = append(r.Results, res)
}

// WriteText writes one line per check, the details of each failure, and a
// summary. The checks about an agent follow a line that names it ("agent
// NAME"); when several agents were checked, the summary counts each.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "agentcheck %s %s\n\n", r.Mode, r.Target)
	for i, res := range r.Results {
		if len(r.Agents) > 0 && (i == 0 || res.Agent != r.Results[i-1].Agent) {
			if i > 0 {
				b.WriteString("\n")
			}
			if res.Agent == "" {
				b.WriteString("the server\n")
			} else {
				fmt.Fprintf(&b, "agent %s\n", res.Agent)
			}
		}
		fmt.Fprintf(&b, "%-4s  %-28s %s  [%s]\n", strings.ToUpper(string(res.Status)), res.ID, res.Title, res.Section)
		if res.Status == Pass {
			continue
		}
		if res.Detail != "" {
			fmt.Fprintf(&b, "      %s\n", res.Detail)
		}
		for _, f := range []struct{ name, v string }{{"sent", res.Sent}, {"got", res.Got}, {"want", res.Want}} {
			if f.v != "" {
				fmt.Fprintf(&b, "      %-5s %s\n", f.name+":", indent(f.v))
			}
		}
	}
	b.WriteString("\n")
	if len(r.Agents) > 1 {
		for _, a := range r.Agents {
			fmt.Fprintf(&b, "agent %s: %d passed, %d failed, %d skipped\n", a.Name, a.Passed, a.Failed, a.Skipped)
		}
	}
	fmt.Fprintf(&b, "%d passed, %d failed, %d skipped\n", r.Passed, r.Failed, r.Skipped)
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteJSON writes the report as one JSON object.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(r)
}

// defaults fills in the HTTP client and the per-request timeout.
func defaults(c **http.Client, timeout *time.Duration) {
	if *c == nil {
		*c = http.DefaultClient
	}
	if *timeout <= 0 {
		*timeout = 60 * time.Second
	}
}

func indent(s string) string {
	const max = 2000
	if len(s) > max {
		s = s[:max] + fmt.Sprintf("… (%d bytes more)", len(s)-max)
	}
	return strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n            ")
}
