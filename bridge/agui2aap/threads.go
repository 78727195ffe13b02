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
	"unicode/utf8"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"
	"github.com/gin-gonic/gin"

	"github.com/aapagui/aapagui/bridge/internal/web"
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
	limit := threadPageDefault
	if v := c.Query("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > threadPageMax {
			web.Error(c, http.StatusBadRequest, "invalid_request", "limit must be a whole number from 1 to 100")
			return
		}
		limit = n
	}
	after, err := decodeCursor(c.Query("cursor"))
	if err != nil {
		web.Error(c, http.StatusBadRequest, "invalid_request", "cursor is not one this server gave")
		return
	}
	agent, owner := c.Param("name"), c.GetString(ownerKey)
	out := threadList{Threads: []threadInfo{}}
	// Threads of other agents are skipped: read on until a page is full.
	// A thread left over once it is full means there is a next page (it
	// may hold only other agents' threads, and come back empty).
pages:
	for {
		page, err := s.cfg.Store.ListThreads(c.Request.Context(), owner, after, limit+1)
		if err != nil {
			web.FailureLog(c, web.Logger(c)).Err(err).Msg("store: list threads")
			web.Error(c, http.StatusInternalServerError, "store_error", "the thread store failed")
			return
		}
		for _, th := range page {
			if len(out.Threads) == limit {
				out.NextCursor = encodeCursor(after)
				break pages
			}
			after = th.Next()
			if th.Agent == agent {
				out.Threads = append(out.Threads, threadInfo{ThreadID: th.ID, Title: th.Title, CreatedAt: th.CreatedAt,
					LastActiveAt: th.UpdatedAt, Messages: len(th.Delivered), InterruptsOpen: len(th.Interrupts) > 0})
			}
		}
		if len(page) <= limit {
			break
		}
	}
	c.JSON(http.StatusOK, out)
}

// deleteThread answers DELETE /agents/:name/threads/:threadId: the thread
// is forgotten and its AAP session deleted upstream (one the server no
// longer has is no error). 404 for a thread the caller does not have, 409
// while a run holds it.
func (s *Server) deleteThread(c *gin.Context) {
	ctx := c.Request.Context()
	owner, id := c.GetString(ownerKey), c.Param("threadId")
	log := web.Logger(c)
	if err := checkThreadID(id); err != nil {
		web.Error(c, http.StatusBadRequest, "invalid_request", err.Error())
		return
	}
	lease, err := store.TakeThread(ctx, s.cfg.Store, owner, id, store.LeaseOptions{OnError: web.LeaseLog(log, "thread", id)})
	var held *store.HeldError
	if errors.As(err, &held) {
		web.Held(c, "run_in_progress", "a run is in progress on this thread; delete it once the run has finished", held.Left)
		return
	}
	if err != nil {
		web.FailureLog(c, log).Err(err).Msg("store: lock thread")
		web.Error(c, http.StatusInternalServerError, "store_error", "the thread store failed")
		return
	}
	defer lease.Release()
	th, err := s.cfg.Store.GetThread(ctx, owner, id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && th.Agent != "" && th.Agent != c.Param("name")) {
		web.Error(c, http.StatusNotFound, "thread_not_found", "no thread "+id+" with agent "+c.Param("name"))
		return
	}
	if err != nil {
		web.FailureLog(c, log).Err(err).Msg("store: get thread")
		web.Error(c, http.StatusInternalServerError, "store_error", "the thread store failed")
		return
	}
	if th.SessionID != "" {
		cl, key := s.client(c.Request)
		uctx, cancel := context.WithTimeout(ctx, historyTimeout)
		cl, _, err := s.upstream(uctx, cl, key)
		if err == nil {
			err = cl.DeleteSession(uctx, th.SessionID)
		}
		cancel()
		s.upstreamCall(ctx, "delete_session", err)
		if err != nil && !sessionGone(err) {
			s.upstreamError(c, err)
			return
		}
	}
	if err := s.cfg.Store.DeleteThread(ctx, owner, id); err != nil && !errors.Is(err, store.ErrNotFound) {
		web.FailureLog(c, log).Err(err).Msg("store: delete thread")
		web.Error(c, http.StatusInternalServerError, "store_error", "the thread store failed")
		return
	}
	log.Info().Str("thread", id).Str("session", th.SessionID).Msg("thread deleted")
	c.Status(http.StatusNoContent)
}

// threadTitle is the first user message's text, on one line, cut to
// titleRunes runes.
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
		text, ok := content.(string)
		if !ok {
			if parts, isList := content.([]any); isList {
				for _, p := range parts {
					if mp, isMap := p.(map[string]any); isMap && mp["type"] == "text" {
						if s, isString := mp["text"].(string); isString {
							text += s + " "
						}
					}
				}
			}
		}
		text = strings.Join(strings.Fields(text), " ")
		if utf8.RuneCountInString(text) > titleRunes {
			r := []rune(text)
			text = strings.TrimSpace(string(r[:titleRunes-1])) + "…"
		}
		return text
	}
	return ""
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
