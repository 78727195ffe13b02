package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"

	"github.com/aapagui/aapagui/demo"
)

// ConversationOptions configure Conversation.
type ConversationOptions struct {
	Command []string // the command of this build's bridge processes (required)
	Turns   int      // turns of the conversation [500]
	Bytes   int      // bytes of each user message [2000]
	Window  int      // turns a row of the table sums [50]
	// CopilotKit is the command of the CopilotKit runtime relaying to an
	// AG-UI agent (see HistoryOptions.CopilotKit); nil leaves its column
	// out.
	CopilotKit []string
	Out        io.Writer // [os.Stdout]
}

// Conversation holds one conversation of o.Turns turns through each
// bridge, and through the CopilotKit runtime, turn by turn in one run:
// each user message of o.Bytes is echoed back by the agent (the demo
// agents' "You said: …"), so the
// conversation grows by twice that a turn. aap2agui is given each new
// message (its session keeps the rest); agui2aap and the runtime are given
// the whole conversation each time, as AG-UI clients send it. It prints
// each process's own CPU per turn over windows of o.Window turns, with the
// conversation's size at the window's end.
func Conversation(ctx context.Context, o ConversationOptions) error {
	if len(o.Command) == 0 {
		return errors.New("conversation: a command is required")
	}
	o.Turns, o.Bytes, o.Window = cmpOr(o.Turns, 500), cmpOr(o.Bytes, 2000), cmpOr(o.Window, 50)
	if o.Out == nil {
		o.Out = os.Stdout
	}
	c, cleanup, err := startConversation(o)
	defer cleanup()
	if err != nil {
		return err
	}
	fmt.Fprintf(o.Out, "aapbench conversation: %d turns, user messages of %d bytes echoed back, load average %s\n", o.Turns, o.Bytes, loadavg())
	w := tabwriter.NewWriter(o.Out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(w, "\nturns\tconversation\taap2agui CPU/turn\tagui2aap CPU/run\t%s\t\n", c.ckHeader())
	for from := 1; from <= o.Turns; from += o.Window {
		to := min(from+o.Window-1, o.Turns)
		var a2g time.Duration
		g2a0, ck0 := c.g2a.spent, c.ck.spentSoFar()
		for turn := from; turn <= to; turn++ {
			d, err := c.turn(ctx, turn)
			if err != nil {
				return fmt.Errorf("turn %d: %w", turn, err)
			}
			a2g += d
		}
		n := time.Duration(to - from + 1)
		fmt.Fprintf(w, "%d–%d\t%.3f MB\t%.1f ms\t%.1f ms\t%s\t\n", from, to, float64(c.size)/1e6,
			ms(a2g/n), ms((c.g2a.spent-g2a0)/n), c.ckCell((c.ck.spentSoFar()-ck0)/n))
	}
	if err := w.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(o.Out, "load average at the end %s\n", loadavg())
	return nil
}

func cmpOr(v, def int) int {
	if v <= 0 {
		return def
	}
	return v
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

// conversation is the processes of one Conversation run and what each
// client holds of it.
type conversation struct {
	o       ConversationOptions
	hc      *http.Client
	a2g     *bridgeProcess
	session string      // aap2agui's
	g2a, ck *aguiClient // agui2aap's client, the runtime's (nil: not measured)
	size    int         // the conversation's bytes of text
}

// aguiClient is an AG-UI client of one process: the conversation it holds,
// sent whole each run, and the process's CPU for its runs so far.
type aguiClient struct {
	p      *bridgeProcess
	thread string
	msgs   []types.Message
	spent  time.Duration
}

func startConversation(o ConversationOptions) (*conversation, func(), error) {
	c := &conversation{o: o, hc: transport()}
	set, err := newSetUp("aapbench-conversation-")
	if err != nil {
		return c, set.close, err
	}
	aguiAgent := set.server(demo.AGUIAgent{}) // answers "You said: <message>", as the AAP demo agent does
	aapAgent := set.server(demo.NewAAPAgent(demo.AAPAgentOptions{Name: "bench"}))
	if c.a2g, err = set.process(bridge(o.Command, "sqlite:"+filepath.Join(set.dir, "aap2agui.db")), bridgeAAP2AGUI, aguiAgent.URL); err != nil {
		return c, set.close, err
	}
	g2a, err := set.process(bridge(o.Command, "sqlite:"+filepath.Join(set.dir, "agui2aap.db")), bridgeAGUI2AAP, aapAgent.URL)
	if err != nil {
		return c, set.close, err
	}
	c.g2a = &aguiClient{p: g2a, thread: "agui2aap"}
	if o.CopilotKit != nil {
		ck, err := set.process(o.CopilotKit, "copilotkit", aguiAgent.URL)
		if err != nil {
			return c, set.close, err
		}
		c.ck = &aguiClient{p: ck, thread: "copilotkit"}
	}
	var created struct {
		SessionID string `json:"sessionId"`
	}
	err = c.post(context.Background(), c.a2g.url+"/sessions", []byte(`{"agent":{"name":"bench"}}`), func(r io.Reader) error {
		return json.NewDecoder(r).Decode(&created)
	})
	c.session = created.SessionID
	return c, set.close, err
}

func (c *conversation) ckHeader() string {
	if c.ck == nil {
		return ""
	}
	return "CopilotKit runtime CPU/run"
}

func (c *conversation) ckCell(d time.Duration) string {
	if c.ck == nil {
		return ""
	}
	return fmt.Sprintf("%.1f ms", ms(d))
}

// turn sends turn n's user message through each path and returns
// aap2agui's CPU for it (each AG-UI client adds up its process's own).
func (c *conversation) turn(ctx context.Context, n int) (time.Duration, error) {
	text := fmt.Sprintf("%05d ", n) + strings.Repeat("x", max(c.o.Bytes-6, 0))
	turn, _ := json.Marshal(map[string]any{"stream": "delta", "messages": []map[string]string{{"role": "user", "content": text}}})
	d, err := timed([]*bridgeProcess{c.a2g}, func() error {
		return c.post(ctx, c.a2g.url+"/sessions/"+c.session+"/turns", turn, drain)
	})
	if err != nil {
		return 0, fmt.Errorf("aap2agui: %w", err)
	}
	user := types.Message{ID: "u" + strconv.Itoa(n), Role: types.RoleUser, Content: text}
	for _, cl := range []*aguiClient{c.g2a, c.ck} {
		if cl != nil {
			if err := cl.run(ctx, c, n, user); err != nil {
				return 0, err
			}
		}
	}
	c.size += 2 * len(text)
	return d.cpu, nil
}

// run sends the conversation and user to the client's process as an
// AG-UI client does, and adds the answer to the conversation and the
// process's CPU for the run to spent.
func (cl *aguiClient) run(ctx context.Context, c *conversation, n int, user types.Message) error {
	cl.msgs = append(cl.msgs, user)
	body, err := json.Marshal(runInput(cl.thread, "r"+strconv.Itoa(n), cl.msgs))
	if err != nil {
		return err
	}
	var answer types.Message
	d, err := timed([]*bridgeProcess{cl.p}, func() error {
		return c.post(ctx, cl.p.url, body, func(r io.Reader) error {
			answer, err = readAnswer(r)
			return err
		})
	})
	if err != nil {
		return fmt.Errorf("%s: %w", cl.thread, err)
	}
	cl.msgs, cl.spent = append(cl.msgs, answer), cl.spent+d.cpu
	return nil
}

// spentSoFar is the client's CPU so far; 0 for none (nil).
func (cl *aguiClient) spentSoFar() time.Duration {
	if cl == nil {
		return 0
	}
	return cl.spent
}

// readAnswer reads an AG-UI run's stream and returns the assistant
// message it streamed.
func readAnswer(r io.Reader) (types.Message, error) {
	var id string
	var text strings.Builder
	_, err := readAGUI(r, onEvent{start: func(m string) { id = m }, delta: func(d string) { text.WriteString(d) }})
	if err == nil && id == "" {
		err = errors.New("no text message in the run")
	}
	return types.Message{ID: id, Role: types.RoleAssistant, Content: text.String()}, err
}

// post sends body to url and hands the response's body to read.
func (c *conversation) post(ctx context.Context, url string, body []byte, read func(io.Reader) error) error {
	var b bytes.Buffer
	if err := request(ctx, c.hc, http.MethodPost, url, body, &b); err != nil {
		return err
	}
	return read(&b)
}

func drain(r io.Reader) error {
	_, err := io.Copy(io.Discard, r)
	return err
}
