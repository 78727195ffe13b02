package store_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/store"
	_ "github.com/aapagui/aapagui/store/sqlite" // registers "sqlite:"
)

// A session and its history written through one Store and read back
// through another opened on the same file, as a restarted program (or
// another replica) reads them; another owner's session is not found.
func Example() {
	dir, err := os.MkdirTemp("", "store-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	spec := "sqlite:" + filepath.Join(dir, "aap2agui.db")
	ctx := context.Background()

	st, err := store.Open(spec)
	if err != nil {
		fmt.Println(err)
		return
	}
	s := &store.Session{ID: "sess-1", Owner: "key-a", Agent: aap.AgentConfig{Name: "demo"},
		CreatedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	seed := []store.Entry{{Message: aap.UserText("Hello, agent!"), AGUIID: "u-1"}}
	if err := st.CreateSession(ctx, s, seed, 0); err != nil {
		fmt.Println(err)
		return
	}
	answer := &aap.AssistantMessage{Content: aap.TextContent("You said: Hello, agent!")}
	if err := st.AppendHistory(ctx, s.ID, []store.Entry{{Message: answer, AGUIID: "a-1"}}); err != nil {
		fmt.Println(err)
		return
	}
	if err := st.Close(); err != nil {
		fmt.Println(err)
		return
	}

	st, err = store.Open(spec)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer st.Close()
	got, err := st.GetSession(ctx, "key-a", "sess-1")
	if err != nil {
		fmt.Println(err)
		return
	}
	history, err := st.History(ctx, got.ID)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(got.ID, got.Agent.Name, got.CreatedAt.Format(time.RFC3339))
	for _, e := range history {
		switch m := e.Message.(type) {
		case *aap.UserMessage:
			fmt.Printf("%s user: %s\n", e.AGUIID, m.Content.PlainText())
		case *aap.AssistantMessage:
			fmt.Printf("%s assistant: %s\n", e.AGUIID, m.Content.PlainText())
		}
	}
	_, err = st.GetSession(ctx, "key-b", "sess-1")
	fmt.Println("another owner:", errors.Is(err, store.ErrNotFound))
	// Output:
	// sess-1 demo 2026-01-02T03:04:05Z
	// u-1 user: Hello, agent!
	// a-1 assistant: You said: Hello, agent!
	// another owner: true
}

// Open picks the driver by the spec's scheme; memory: is always there.
func ExampleOpen() {
	st, err := store.Open("memory:")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer st.Close()
	fmt.Println(st.Ping(context.Background()))
	_, err = store.Open("mysql://db/aap")
	fmt.Println(err)
	// Output:
	// <nil>
	// store "mysql://db/aap": unknown kind (want memory:, sqlite:<path> or postgres://…)
}
