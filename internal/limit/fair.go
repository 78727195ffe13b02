package limit

import (
	"net"
	"net/netip"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Fair is one rate shared by every client, of which no client can take
// it all for long: each client (an address, see Client) has a share of
// its own, a quarter of the rate with the whole burst, and a client past
// its share may take only the tokens above a reserve of half the burst.
// A client alone gets the whole rate (its share, then what is above the
// reserve); while one floods, the bucket refills to the reserve, which
// the others' shares take. However many clients there are, the tokens
// taken are at most the shared rate and burst. Its limits: many clients
// at once (four flooding take the reserve with their shares), and clients
// past fairClients remembered, which get no share of their own until
// idle ones are forgotten.
type Fair struct {
	mu      sync.Mutex
	all     *rate.Limiter
	share   rate.Limit // a client's own rate
	burst   int
	reserve float64 // the tokens a client past its share leaves to the others
	clients map[string]*rate.Limiter
	swept   time.Time
}

const (
	// fairShare divides the shared rate into a client's own.
	fairShare = 4
	// fairClients is how many clients a Fair remembers at most.
	fairClients = 4096
)

// NewFair returns a shared rate of perSecond tokens a second with bursts
// of burst (at least 1).
func NewFair(perSecond float64, burst int) *Fair {
	burst = max(burst, 1)
	return &Fair{
		all:     rate.NewLimiter(rate.Limit(perSecond), burst),
		share:   rate.Limit(perSecond / fairShare),
		burst:   burst,
		reserve: float64(burst / 2),
		clients: map[string]*rate.Limiter{},
	}
}

// Take takes one token for client at now. When none may be taken it
// returns false and about how long until one may.
func (f *Fair) Take(client string, now time.Time) (bool, time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	own := f.client(client, now)
	all := f.all.TokensAt(now)
	if own != nil && own.TokensAt(now) >= 1 {
		if all >= 1 {
			own.AllowN(now, 1)
			f.all.AllowN(now, 1)
			return true, 0
		}
		return false, f.until(1-all, f.all.Limit())
	}
	if all >= f.reserve+1 {
		f.all.AllowN(now, 1)
		return true, 0
	}
	wait := f.until(f.reserve+1-all, f.all.Limit())
	if own != nil {
		wait = min(wait, f.until(1-own.TokensAt(now), f.share))
	}
	return false, wait
}

// until is how long r takes to add tokens, at least a millisecond.
func (f *Fair) until(tokens float64, r rate.Limit) time.Duration {
	if r <= 0 {
		return time.Second
	}
	return max(time.Duration(tokens/float64(r)*float64(time.Second)), time.Millisecond)
}

// client returns client's own share, made when first seen; nil when
// fairClients are remembered and none of them is idle. f.mu is held.
func (f *Fair) client(client string, now time.Time) *rate.Limiter {
	if l, ok := f.clients[client]; ok {
		return l
	}
	if len(f.clients) >= fairClients && now.Sub(f.swept) >= time.Second || now.Sub(f.swept) >= sweepEvery {
		f.sweep(now)
	}
	if len(f.clients) >= fairClients {
		return nil
	}
	l := rate.NewLimiter(f.share, f.burst)
	f.clients[client] = l
	return l
}

// sweep forgets the clients whose share is full again: the same as a
// client never seen. f.mu is held.
func (f *Fair) sweep(now time.Time) {
	f.swept = now
	for c, l := range f.clients {
		if l.TokensAt(now) >= float64(f.burst) {
			delete(f.clients, c)
		}
	}
}

// Clients is the number of clients remembered (for tests).
func (f *Fair) Clients() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.clients)
}

// Client names the client of a request from remoteAddr (an
// http.Request's RemoteAddr) for Fair: its IPv4 address, or the /64 of
// an IPv6 one (what one host is usually given); remoteAddr itself when it
// is neither.
func Client(remoteAddr string) string {
	host, _, err := net.SplitHostPort(remoteAddr)
	if err != nil {
		host = remoteAddr
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return remoteAddr
	}
	ip = ip.Unmap()
	if ip.Is4() {
		return ip.String()
	}
	p, _ := ip.WithZone("").Prefix(64)
	return p.String()
}
