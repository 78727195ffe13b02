package edge

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/aapagui/aapagui/bridge/internal/fault"
)

// corsHeaders are the request headers a page on an allowed origin may
// send: the API key, the JSON body's type, what it accepts, and a request
// id of its own.
const corsHeaders = "Authorization, Content-Type, Accept, X-Request-Id"

// corsExposed are the response headers such a page may read: the request
// id (to quote in a report) and Retry-After of a 409.
const corsExposed = "X-Request-Id, Retry-After"

// CheckOrigins validates CORS origins: "*" or a scheme://host[:port] with
// no path, as a browser sends it in Origin. An origin is matched exactly,
// so one holding a wildcard (http://*.example.com), which would match no
// browser's Origin, is refused, naming why.
func CheckOrigins(origins []string) error {
	for _, o := range origins {
		if o == "*" {
			continue
		}
		if strings.Contains(o, "*") {
			return fmt.Errorf("CORS origin %q holds a wildcard, which origins do not take: each origin is matched exactly, so list every one (scheme://host[:port]), or give * alone for any origin", o)
		}
		u, err := url.Parse(o)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" ||
			(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
			return fmt.Errorf("CORS origin %q is not * or scheme://host[:port] (as a browser sends it in Origin)", o)
		}
	}
	return nil
}

// CORS lets browser pages on origins call the API directly. A listed
// origin is echoed in Access-Control-Allow-Origin with
// Access-Control-Allow-Credentials; "*" lets any origin in, but never with
// credentials (a browser would refuse the pair, and it would hand every
// site the user's cookies). A preflight (OPTIONS with
// Access-Control-Request-Method) from an allowed origin is answered 204
// with the allowed methods and the headers Authorization, Content-Type,
// Accept and X-Request-Id; from any other origin, or when no origin is
// configured, it is refused with 403 origin_not_allowed. Requests without
// Origin (same-origin pages, curl, servers) are untouched.
func CORS(origins []string, methods string) gin.HandlerFunc {
	anyOrigin := slices.Contains(origins, "*")
	listed := map[string]bool{}
	for _, o := range origins {
		if o != "*" {
			listed[strings.TrimSuffix(o, "/")] = true
		}
	}
	return func(c *gin.Context) {
		origin := c.GetHeader("Origin")
		if origin == "" {
			return
		}
		h := c.Writer.Header()
		allowed := false
		if len(origins) > 0 {
			h.Add("Vary", "Origin")
			switch {
			case listed[origin]:
				// A listed origin may send credentials (cookies, Authorization).
				h.Set("Access-Control-Allow-Origin", origin)
				h.Set("Access-Control-Allow-Credentials", "true")
				allowed = true
			case anyOrigin:
				h.Set("Access-Control-Allow-Origin", "*")
				allowed = true
			}
			if allowed {
				h.Set("Access-Control-Expose-Headers", corsExposed)
			}
		}
		if c.Request.Method != http.MethodOptions || c.GetHeader("Access-Control-Request-Method") == "" {
			return
		}
		if !allowed {
			Reply(c, fault.Fail(fault.KindForbidden, "origin_not_allowed", "origin "+quote(origin)+" may not call this server from a browser (see --cors-origin)"))
			return
		}
		h.Set("Access-Control-Allow-Methods", methods)
		h.Set("Access-Control-Allow-Headers", corsHeaders)
		h.Set("Access-Control-Max-Age", "600")
		c.AbortWithStatus(http.StatusNoContent)
	}
}
