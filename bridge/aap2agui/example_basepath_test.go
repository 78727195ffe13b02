package aap2agui_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/aapagui/aapagui/bridge/aap2agui"
	"github.com/aapagui/aapagui/demo"
	"github.com/aapagui/aapagui/store"
)

// aap2agui embedded in a program of its own under a prefix, as
// docs/LIBRARY.md shows: Config.BasePath moves the AAP API; /healthz,
// /readyz and /metrics stay at the handler's root, so the program routes
// them to it too (or leaves them out).
func Example_basePath() {
	agent := httptest.NewServer(demo.AGUIAgent{})
	defer agent.Close()

	srv, err := aap2agui.New(aap2agui.Config{Upstream: agent.URL, Store: store.NewMemory(), BasePath: "/aap"})
	if err != nil {
		fmt.Println(err)
		return
	}
	mux := http.NewServeMux()
	mux.Handle("/aap/", srv)    // the AAP API: /aap/meta, /aap/sessions, …
	mux.Handle("/healthz", srv) // health, readiness and metrics stay at the root
	mux.Handle("/readyz", srv)
	mux.Handle("/metrics", srv)

	app := httptest.NewServer(mux)
	defer app.Close()
	for _, path := range []string{"/aap/meta", "/healthz", "/readyz", "/metrics", "/aap/healthz"} {
		resp, err := http.Get(app.URL + path)
		if err != nil {
			fmt.Println(err)
			return
		}
		resp.Body.Close()
		fmt.Println(path, resp.StatusCode)
	}
	// Output:
	// /aap/meta 200
	// /healthz 200
	// /readyz 200
	// /metrics 200
	// /aap/healthz 404
}
