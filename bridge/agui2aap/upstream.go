package agui2aap

import (
	"context"
	"fmt"
	"io"
	"iter"
	"net/http"
	"time"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/internal/metrics"
	"github.com/aapagui/aapagui/bridge/internal/ssestream"
	"github.com/aapagui/aapagui/bridge/internal/upstream"
	"github.com/aapagui/aapagui/translate"
)

// The AAP server: the client of a request, its /meta (cached), and the
// turn call itself, streamed through upstream.Dial's connect and idle bounds.

type metaEntry struct {
	meta *aap.GetMetaResponse
	at   time.Time
}

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
	return aap.NewClient(s.cfg.Upstream, aap.ClientOptions{HTTPClient: s.cfg.HTTPClient, APIKey: key, Header: h, MaxEventSize: s.cfg.MaxEventSize, Version: s.cfg.UpstreamVersion}), key
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

// upstream returns the upstream's /meta (cached, see upstreamMeta) and the
// client speaking the upstream's protocol version: Config.UpstreamVersion,
// else the one /meta names.
func (s *Server) upstream(ctx context.Context, cl *aap.Client, key string) (*aap.Client, *aap.GetMetaResponse, error) {
	meta, err := s.upstreamMeta(ctx, cl, key)
	if err != nil {
		return nil, nil, err
	}
	if s.cfg.UpstreamVersion != 0 {
		return cl, meta, nil
	}
	v := meta.Version
	if v == 0 {
		v = aap.Version3 // a /meta without a version: the current protocol
	}
	if !aap.KnownVersion(v) {
		return nil, nil, fmt.Errorf("%w %d: agui2aap speaks 1, 2 and 3 (--upstream-aap-version forces one)", aap.ErrUnsupportedVersion, v)
	}
	return cl.WithVersion(v), meta, nil
}

// maxMetaEntries bounds the /meta cache (one entry per upstream credential).
const maxMetaEntries = 1024

// upstreamMeta returns the upstream's /meta, cached for MetaTTL per
// credential (keyed by a hash, never the key itself). When the cache is
// full of fresh entries a new credential's is not kept (dropMetaStale);
// a forwarded key the AAP server refuses is remembered (noteRefused).
func (s *Server) upstreamMeta(ctx context.Context, cl *aap.Client, key string) (*aap.GetMetaResponse, error) {
	key = credentialKey(key)
	s.metaMu.Lock()
	e, ok := s.meta[key]
	s.metaMu.Unlock()
	if ok && s.cfg.Clock().Sub(e.at) < s.cfg.MetaTTL {
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
func (r *runner) open(ctx context.Context, session string, req *aap.PostSessionTurnRequest) (iter.Seq2[aap.Event, error], error) {
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
			r.life.Line.Upstream = r.env.upstreamCall(ctx, "turn", r.info.Name, err)
			return nil, err
		}
		evs = append(evs, translate.EventsFromResponse(resp)...)
		return func(yield func(aap.Event, error) bool) {
			for _, ev := range evs {
				if !yield(ev, nil) {
					return
				}
			}
		}, nil
	}
	// The response headers are waited for ConnectTimeout at most; then the
	// stream may run as long as it keeps sending within IdleTimeout.
	idle, err := upstream.Dial(ctx, r.env.cfg.ConnectTimeout, r.env.cfg.IdleTimeout, func(ctx context.Context) (io.ReadCloser, error) {
		if put != nil {
			return r.cl.OpenPutSession(ctx, put)
		}
		return r.cl.OpenTurn(ctx, session, req)
	})
	if err != nil {
		r.life.Line.Upstream = r.env.upstreamCall(ctx, "turn", r.info.Name, err)
		return nil, err
	}
	return func(yield func(aap.Event, error) bool) {
		defer idle.Close()
		for ev, err := range aap.ReadEvents(ssestream.FlushBeforeRead(idle, r.life.Out), r.env.cfg.MaxEventSize) {
			if err == nil {
				idle.Touch()
			}
			if !yield(ev, err) || err != nil {
				return
			}
		}
	}, nil
}
