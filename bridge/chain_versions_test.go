package bridge_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/internal/bridgetest"
	"github.com/aapagui/aapagui/demo"
)

// TestChainVersions is the chain test in every combination of the AAP
// client's protocol version (the one aap2agui serves) and the upstream's
// (the demo agent behind agui2aap), version 3 to version 3 being
// TestChain: each conversation, in each stream mode, through the chain
// must be what the upstream answers directly, in one session of it. A
// conversation that begins with tool results or a permission has no
// counterpart where a session starts with PUT /session (its first turn is
// a user message), on either side: it is left out there.
func TestChainVersions(t *testing.T) {
	cases := append(chainCases[:len(chainCases):len(chainCases)], wholeSession)
	for _, client := range []int{1, 2, 3} {
		for _, upstream := range []int{1, 2, 3} {
			if client == aap.Version3 && upstream == aap.Version3 {
				continue // TestChain
			}
			for _, quiet := range []bool{false, true} {
				opts := demo.AAPAgentOptions{QuietPermissionResults: quiet}
				name := fmt.Sprintf("client v%d/upstream v%d", client, upstream)
				if quiet {
					name += "/quiet permission results"
				}
				t.Run(name, func(t *testing.T) {
					t.Parallel()
					t.Run("meta", func(t *testing.T) {
						c := newVersionChain(t, opts, client, upstream)
						ctx, cancel := context.WithTimeout(context.Background(), bridgetest.Timeout)
						defer cancel()
						direct, err := c.Direct.Meta(ctx)
						require.NoError(t, err)
						chained, err := c.Chained.Meta(ctx)
						require.NoError(t, err)
						require.Equal(t, upstream, direct.Version)
						require.Equal(t, client, chained.Version, "aap2agui's /meta names the version it serves")
						require.Equal(t, direct.Agents, chained.Agents)
					})
					for _, tc := range cases {
						if !startsWithUser(tc.turns) {
							continue
						}
						for _, mode := range []aap.StreamMode{aap.StreamDelta, aap.StreamMessage, aap.StreamNone} {
							t.Run(tc.name+"/"+string(mode), func(t *testing.T) {
								t.Parallel()
								if tc.skip != "" {
									t.Skip(tc.skip)
								}
								checkChain(t, newVersionChain(t, opts, client, upstream), quiet, tc, mode)
							})
						}
					}
				})
			}
		}
	}
}
