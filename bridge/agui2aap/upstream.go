package agui2aap

import (
	"context"
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/internal/metrics"
	"github.com/aapagui/aapagui/bridge/internal/upstream"
	"github.com/aapagui/aapagui/translate"
)

// The AAP server: the client of a request, its /meta (cached), and the
// turn call itself, streamed through upstream.Dial's connect and idle bounds.

// client returns the AAP client for a request: with the caller's key when
// forwarding, else with the configured one, and the user the request is
// scoped to in the ForwardUser header (withUser).
func (s *Server) client(r *http.Request) (*aap.Client, string) {
	key := s.cfg.UpstreamAPIKey
	if s.cfg.ForwardAuth {
		key = bearer(r)
	}
	var h http.Header
	if u, ok := r.Context().Value(forwardUserKey{}).(string); ok {
		h = http.Header{http.CanonicalHeaderKey(s.cfg.ForwardUser): {u}}
	}
	if s.shared != nil && h == nil {
		return s.shared, key
	}
	return s.newClient(key, h), key
}

func (s *Server) newClient(key string, h http.Header) *aap.Client {
	// Every request asks for the AG-UI extension: an AAP server that
	// grants it (aap2agui) then carries what AAP has no field for, one
	// that does not ignores the header (extension.go).
	h = h.Clone()
	if h == nil {
		h = http.Header{}
	}
	h.Set(aap.ExtensionsHeader, aap.ExtensionAGUI)
	return aap.NewClient(s.cfg.Upstream, aap.ClientOptions{HTTPClient: s.cfg.HTTPClient, APIKey: key, Header: h, MaxEventSize: s.cfg.MaxEventSize, Version: s.cfg.UpstreamVersion})
}

// sharedVersion is the shared client speaking version v (versions[v]),
// made once.
func (s *Server) sharedVersion(v int) *aap.Client {
	if cl := s.versions[v].Load(); cl != nil {
		return cl
	}
	s.versions[v].CompareAndSwap(nil, s.shared.WithVersion(v))
	return s.versions[v].Load()
}

// forwardUserKey keys the user a request is scoped to, for the AAP server
// (Config.ForwardUser), in its context.
type forwardUserKey struct{}

// withUser returns r carrying owner, the (key, user) it is scoped to, for
// client's ForwardUser header; r itself without ForwardUser.
func (s *Server) withUser(r *http.Request, owner string) *http.Request {
	if s.cfg.ForwardUser == "" {
		return r
	}
	return r.WithContext(context.WithValue(r.Context(), forwardUserKey{}, owner))
}

// maxMetaEntries bounds the /meta cache (one entry per upstream credential).
const maxMetaEntries = 1024

// metaTTL is how long the upstream's /meta is cached.
const metaTTL = 30 * time.Second

// upstreamMeta returns the upstream's /meta, cached for metaTTL per
// credential (keyed by a hash, never the key itself). When the cache is
// full of fresh entries a new credential's is not kept (dropMetaStale);
// a forwarded key the AAP server refuses is remembered (noteRefused).
func (s *Server) upstreamMeta(ctx context.Context, cl *aap.Client, key string) (*aap.GetMetaResponse, error) {
	key = credentialKey(key)
	s.metaMu.Lock()
	e, ok := s.meta[key]
	s.metaMu.Unlock()
	if ok && s.cfg.Clock().Sub(e.at) < metaTTL {
		return e.meta, nil
	}
	// The call is shared, so no one caller's cancellation ends it; each
	// caller still stops waiting when its own context ends.
	ch := s.metaCalls.DoChan(key, func() (any, error) {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), metaTimeout)
		defer cancel()
		m, err := cl.Meta(ctx)
		s.env().upstreamCall(ctx, "meta", "", err)
		if err != nil {
			return nil, s.noteRefused(key, err)
		}
		now := s.cfg.Clock()
		s.metaMu.Lock()
		if _, held := s.meta[key]; held || s.dropMetaStale(now) {
			s.meta[key] = metaEntry{meta: m, at: now}
		}
		s.metaMu.Unlock()
		return m, nil
	})
	select {
	case r := <-ch:
		if r.Err != nil {
			return nil, r.Err
		}
		return r.Val.(*aap.GetMetaResponse), nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// metaTimeout bounds a shared GET /meta.
const metaTimeout = 30 * time.Second

// upstreamCall counts an upstream call (metrics.Upstream) that ended with
// err, and returns its result: ok, cancelled (the client went away) or
// the failure's code.
func (e runEnv) upstreamCall(ctx context.Context, call, agent string, err error) string {
	result := metrics.OutcomeOK
	switch {
	case err == nil:
	case ctx.Err() != nil:
		result = metrics.OutcomeCancelled
	default:
		result = e.cfg.upstreamFailure(err).Code
	}
	e.met.Upstream(call, agent, result)
	return result
}

// open starts a turn and returns its events; an error before any event is
// the upstream refusing the turn.
func (r *runner) open(ctx context.Context, session string, req *aap.PostSessionTurnRequest) (*turnEvents, error) {
	put := r.put // the turn starts a session on a version 1 or 2 server
	r.put = nil
	if req.Stream == aap.StreamNone {
		var resp *aap.PostSessionTurnResponse
		var err error
		var evs []aap.Event
		if put != nil {
			var pr *aap.PutSessionResponse
			if pr, err = r.cl.PutSession(ctx, put); err == nil {
				resp, evs = pr.Turn(), []aap.Event{&aap.SessionStart{SessionID: pr.SessionID}}
			}
		} else {
			resp, err = r.cl.Turn(ctx, session, req)
		}
		if err != nil {
			r.turn.Line.Upstream = r.env.upstreamCall(ctx, "turn", r.info.Name, err)
			return nil, err
		}
		evs = append(evs, translate.EventsFromResponse(resp)...)
		return &turnEvents{list: evs}, nil
	}
	// The response headers are waited for HeaderTimeout at most; then the
	// stream may run as long as it keeps sending within IdleTimeout.
	idle, err := upstream.Dial(ctx, r.env.cfg.HeaderTimeout, r.env.cfg.IdleTimeout, func(ctx context.Context) (io.ReadCloser, error) {
		if put != nil {
			return r.cl.OpenPutSession(ctx, put)
		}
		return r.cl.OpenTurn(ctx, session, req)
	})
	if err != nil {
		r.turn.Line.Upstream = r.env.upstreamCall(ctx, "turn", r.info.Name, err)
		return nil, err
	}
	return &turnEvents{body: idle}, nil
}

// turnEvents are a turn's events: a list (a turn answered in one JSON
// body), or its stream, read by the pump (runner.read).
type turnEvents struct {
	list []aap.Event        // a turn answered in one JSON body, or
	body *upstream.IdleBody // its stream, closed once read
}

// close ends the turn's stream, read or not.
func (e *turnEvents) close() {
	if e.body != nil {
		e.body.Close()
		e.body = nil
	}
}

// env is what a run uses of the server (runEnv).
func (s *Server) env() runEnv { return runEnv{cfg: &s.cfg, met: s.base.Metrics} }

// noteRefused remembers that the AAP server refused the key cred names,
// when err says so; it returns err.
func (s *Server) noteRefused(cred string, err error) error {
	var he *aap.HTTPError
	if !s.forwardOnly() || !errors.As(err, &he) || (he.StatusCode != http.StatusUnauthorized && he.StatusCode != http.StatusForbidden) {
		return err
	}
	now := s.cfg.Clock()
	f := s.forwarded
	f.mu.Lock()
	if len(f.refused) >= maxRefused {
		for k, at := range f.refused {
			if now.Sub(at) >= refusedTTL {
				delete(f.refused, k)
			}
		}
		if len(f.refused) >= maxRefused {
			clear(f.refused)
		}
	}
	f.refused[cred] = now
	f.mu.Unlock()
	s.metaMu.Lock()
	delete(s.meta, cred) // accepted once, refused now: it starts over
	s.metaMu.Unlock()
	return err
}

// dropMetaStale makes room in the /meta cache, whose lock is held: it
// forgets the entries older than metaTTL, never a fresh one, so that keys
// made up in numbers cannot push out those in use. It reports whether
// there is room.
func (s *Server) dropMetaStale(now time.Time) bool {
	if len(s.meta) < maxMetaEntries {
		return true
	}
	for k, e := range s.meta {
		if now.Sub(e.at) >= metaTTL {
			delete(s.meta, k)
		}
	}
	return len(s.meta) < maxMetaEntries
}

// refusedTTL is how long a key the AAP server refused is refused here.
const refusedTTL = 10 * time.Second

// maxRefused bounds the refused keys remembered; past it the expired are
// forgotten, then all (which costs only GET /meta calls, themselves
// bounded by the shared rate).
const maxRefused = 4096

// forwardOnly reports whether callers' keys are forwarded and checked by
// the AAP server alone (ForwardAuth without API keys).
func (s *Server) forwardOnly() bool { return s.cfg.ForwardAuth && s.base.Keys.Open() }
