package agentcheck

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
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

// Report is the outcome of a run of checks against one agent.
type Report struct {
	Mode    string   `json:"mode"` // "aap" or "agui"
	Target  string   `json:"target"`
	Results []Result `json:"results"`
	Passed  int      `json:"passed"`
	Failed  int      `json:"failed"`
	Skipped int      `json:"skipped"`
}

// OK reports whether no check failed.
func (r *Report) OK() bool { return r.Failed == 0 }

// Find returns the result of the check with the given id.
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
	r.add(Result{ID: id, Title: title, Section: section, Status: Fail, Detail: f.detail, Sent: f.sent, Got: f.got, Want: f.want})
}

func (r *Report) add(res Result) {
	switch res.Status {
	case Pass:
		r.Passed++
	case Fail:
		r.Failed++
	default:
		r.Skipped++
	}
	r.Results = append(r.Results, res)
}

// WriteText writes one line per check, the details of each failure, and a
// summary.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "agentcheck %s %s\n\n", r.Mode, r.Target)
	for _, res := range r.Results {
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
	fmt.Fprintf(&b, "\n%d passed, %d failed, %d skipped\n", r.Passed, r.Failed, r.Skipped)
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
