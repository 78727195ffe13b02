package agui2aap

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"
	"github.com/gin-gonic/gin"

	"github.com/aapagui/aapagui/bridge/internal/edge"
	"github.com/aapagui/aapagui/bridge/internal/fault"
	"github.com/aapagui/aapagui/store"
)

// Thread listing defaults.
const (
	threadPageDefault = 20
	threadPageMax     = 100
	titleRunes        = 80
)

// threadInfo is one thread in GET /agents/:name/threads.
type threadInfo struct {
	ThreadID       string    `json:"threadId"`
	Title          string    `json:"title"`
	CreatedAt      time.Time `json:"createdAt"`
	LastActiveAt   time.Time `json:"lastActiveAt"`
	Messages       int       `json:"messages"`
	InterruptsOpen bool      `json:"interruptsOpen"`
}

type threadList struct {
	Threads    []threadInfo `json:"threads"`
	NextCursor string       `json:"nextCursor,omitempty"`
}

// listThreads answers GET /agents/:name/threads: the caller's threads with
// that agent, the most recently active first, paged with an opaque cursor
// (?limit=, default 20, at most 100; ?cursor= from the last page).
func (s *Server) listThreads(c *gin.Context) {
	out, err := s.threadPage(c.Request.Context(), edge.Owner(c), c.Param("name"), c.Query("limit"), c.Query("cursor"))
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}

// threadPage is one page of owner's threads with agent, the page's size
// and its cursor as the query gave them.
func (s *Server) threadPage(ctx context.Context, owner, agent, limitQuery, cursor string) (*threadList, error) {
	limit := threadPageDefault
	if limitQuery != "" {
		n, err := strconv.Atoi(limitQuery)
		if err != nil || n < 1 || n > threadPageMax {
			return nil, fault.Fail(fault.KindInvalid, "invalid_request", "limit must be a whole number from 1 to 100")
		}
		limit = n
	}
	after, err := decodeCursor(cursor)
	if err != nil {
		return nil, fault.Fail(fault.KindInvalid, "invalid_request", "cursor is not one this server gave")
	}
	out := &threadList{Threads: []threadInfo{}}
	// Threads of other agents are skipped: read on until a page is full.
	// A thread left over once it is full means there is a next page (it
	// may hold only other agents' threads, and come back empty).
	for {
		page, err := s.cfg.Store.ListThreads(ctx, owner, after, limit+1)
		if err != nil {
			return nil, &storeError{"list threads", err}
		}
		for _, th := range page {
			if len(out.Threads) == limit {
				out.NextCursor = encodeCursor(after)
				return out, nil
			}
			after = th.Next()
			if th.Agent == agent {
				out.Threads = append(out.Threads, threadInfo{ThreadID: th.ID, Title: th.Title, CreatedAt: th.CreatedAt,
					LastActiveAt: th.UpdatedAt, Messages: len(th.Delivered), InterruptsOpen: len(th.Interrupts) > 0})
			}
		}
		if len(page) <= limit {
			return out, nil
		}
	}
}

// deleteThread answers DELETE /agents/:name/threads/:threadId: the thread
// is forgotten and its AAP session deleted upstream (one the server no
// longer has is no error). 404 for a thread the caller does not have, 409
// while a run holds it.
func (s *Server) deleteThread(c *gin.Context) {
	if err := s.removeThread(c); err != nil {
		s.fail(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}

// removeThread is deleteThread's work, under the thread's lock.
func (s *Server) removeThread(c *gin.Context) error {
	ctx := c.Request.Context()
	owner, id, agent := edge.Owner(c), c.Param("threadId"), c.Param("name")
	log := edge.Logger(c)
	if err := checkThreadID(id); err != nil {
		return fault.Fail(fault.KindInvalid, "invalid_request", err.Error())
	}
	lease, err := takeThread(ctx, s.cfg.Store, owner, id, s.base.LeaseOptions(log, "thread", id), func(time.Duration) string {
		return "a run is in progress on this thread; delete it once the run has finished"
	})
	if err != nil {
		return err
	}
	defer lease.Release()
	th, err := s.cfg.Store.GetThread(ctx, owner, id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && th.Agent != "" && th.Agent != agent) {
		return fault.Fail(fault.KindNotFound, "thread_not_found", "no thread "+id+" with agent "+agent)
	}
	if err != nil {
		return &storeError{"get thread", err}
	}
	if th.SessionID != "" {
		if err := s.deleteSession(ctx, c.Request, th.SessionID); err != nil {
			return err
		}
	}
	if err := s.cfg.Store.DeleteThread(ctx, owner, id); err != nil && !errors.Is(err, store.ErrNotFound) {
		return &storeError{"delete thread", err}
	}
	s.cfg.dropRunLogs(ctx, log, owner, agent, id)
	log.Info().Str("thread", id).Str("session", th.SessionID).Msg("thread deleted")
	return nil
}

// deleteSession deletes a thread's AAP session; one the AAP server no
// longer has is no error.
func (s *Server) deleteSession(ctx context.Context, r *http.Request, session string) error {
	cl, key := s.client(r)
	uctx, cancel := context.WithTimeout(ctx, historyTimeout)
	cl, _, err := s.upstream(uctx, cl, key)
	if err == nil {
		err = cl.DeleteSession(uctx, session)
	}
	cancel()
	s.env().upstreamCall(ctx, "delete_session", "", err)
	if err != nil && !sessionGone(err) {
		return &upstreamError{err}
	}
	return nil
}

// threadTitle is the first user message's text, on one line, cut to
// titleRunes runes. It reads no more of the message than the title takes:
// a message of thousands of text parts costs what its first runes do.
func threadTitle(msgs []types.Message) string {
	for _, m := range msgs {
		if m.Role != types.RoleUser {
			continue
		}
		content := m.Content
		if raw, isRaw := content.(json.RawMessage); isRaw {
			// Content DecodeRunAgentInputLazy left undecoded.
			if json.Unmarshal(raw, &content) != nil {
				content = nil
			}
		}
		var t titleText
		switch c := content.(type) {
		case string:
			t.add(c)
		case []any:
			for _, p := range c {
				if mp, isMap := p.(map[string]any); isMap && mp["type"] == "text" {
					if s, isString := mp["text"].(string); isString && !t.add(s) {
						t.add(" ") // parts are joined by a space
					}
				}
				if t.full() {
					break
				}
			}
		}
		return t.String()
	}
	return ""
}

// titleText gathers a title: the words of what it is given, one space
// between them, until it holds more than titleRunes runes.
type titleText struct {
	b     strings.Builder
	runes int
	space bool // a space is due before the next word
}

// add takes s and reports whether the title is full.
func (t *titleText) add(s string) bool {
	for _, r := range s {
		if t.full() {
			break
		}
		if unicode.IsSpace(r) {
			t.space = t.runes > 0
			continue
		}
		if t.space {
			t.b.WriteByte(' ')
			t.runes++
			t.space = false
		}
		t.b.WriteRune(r)
		t.runes++
	}
	return t.full()
}

func (t *titleText) full() bool { return t.runes > titleRunes }

// String returns the title, cut to titleRunes-1 runes and an ellipsis
// when the text was longer.
func (t *titleText) String() string {
	text := t.b.String()
	if !t.full() {
		return text
	}
	r := []rune(text)
	return strings.TrimSpace(string(r[:titleRunes-1])) + "…"
}

func encodeCursor(p store.ThreadPage) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(p.UpdatedAt.UnixMicro(), 10) + ":" + p.ID))
}

// maxCursorMicros is 9999-12-31T23:59:59Z in microseconds since 1970.
const maxCursorMicros = 253402300799 * 1_000_000

func decodeCursor(s string) (store.ThreadPage, error) {
	if s == "" {
		return store.ThreadPage{}, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return store.ThreadPage{}, err
	}
	us, id, ok := strings.Cut(string(b), ":")
	n, err := strconv.ParseInt(us, 10, 64)
	// A cursor this server gave holds a thread's last activity (after 1970,
	// before 10000) and a thread id a run accepted.
	if !ok || err != nil || n < 0 || n > maxCursorMicros || checkThreadID(id) != nil {
		return store.ThreadPage{}, errors.New("bad cursor")
	}
	return store.ThreadPage{UpdatedAt: time.UnixMicro(n).UTC(), ID: id}, nil
}
